// Sink: receives packets and records them; the end of a pipeline.
#include "scabench/registry.hpp"

namespace scabench {

template <class T>
class Sink final : public Component {
 public:
  explicit Sink(const ComponentContext& ctx) : Component(ctx) {
    addInPort<T>("in", [](const PacketView<T>&) {});
  }
};

SCABENCH_REGISTER_TYPED_COMPONENT("sink", Sink);

}  // namespace scabench

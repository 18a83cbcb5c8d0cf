// Sink: receives packets and records them; the end of a pipeline. With
// `checksum` it also sums every sample it receives (in double, in arrival
// order) and reports the sum at end of stream ("stat NAME checksum VALUE"),
// which is how a run's output is checked against the standalone program's.
#include <cstdio>

#include "scabench/runtime/registry.hpp"

namespace scabench {

template <class T>
class Sink final : public Component {
 public:
  explicit Sink(const ComponentContext& ctx) : Component(ctx) {
    properties().declare("checksum", false, "sum every sample received and report it at end of stream");
    addInPort<T>("in", [this](const PacketView<T>& p) {
      if (!checksum_) return;
      for (std::size_t i = 0; i < p.count; ++i) sum_ += double(p.samples[i]);
    });
  }

 protected:
  void onStart() override { checksum_ = properties().flag("checksum"); }
  void onEndOfStream() override {
    if (checksum_) {
      char value[64];
      std::snprintf(value, sizeof value, "%.17g", sum_);
      host().notify("stat " + name() + " checksum " + value);
    }
    Component::onEndOfStream();
  }

 private:
  bool checksum_ = false;
  double sum_ = 0;
};

SCABENCH_REGISTER_TYPED_COMPONENT("sink", Sink);

}  // namespace scabench

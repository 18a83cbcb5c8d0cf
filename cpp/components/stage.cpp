// Stage: does a fixed amount of work on each packet, then forwards it. The
// work is CPU time on the thread's own clock (so 5 ms is 5 ms of CPU even on
// a shared core) or a sleep (work done by another device): packet_work.hpp.
#include "packet_work.hpp"
#include "scabench/runtime/registry.hpp"

namespace scabench {

template <class T>
class Stage final : public Component {
 public:
  explicit Stage(const ComponentContext& ctx) : Component(ctx), work_(properties(), "", 5000) {
    out_ = &addOutPort<T>("out", "every packet taken in, after its work");
    addInPort<T>(
        "in",
        [this](const PacketView<T>& p) {
          work_.run(p.header.sequence_number);
          out_->push(p.header, p.samples, p.count);
        },
        "the packets to work on");
  }

 protected:
  void onStart() override { work_.read(properties()); }
  void onConfigure() override { work_.read(properties()); }

 private:
  PacketWork work_;
  OutPort<T>* out_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("stage", Stage);

}  // namespace scabench

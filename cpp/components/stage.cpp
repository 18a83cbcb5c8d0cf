// Stage: does a fixed amount of work on each packet, then forwards it. The
// work is CPU time on the thread's own clock (so 5 ms is 5 ms of CPU even on
// a shared core) or a sleep (work done by another device).
#include "scabench/registry.hpp"
#include "scabench/work.hpp"

namespace scabench {

template <class T>
class Stage final : public Component {
 public:
  explicit Stage(const ComponentContext& ctx) : Component(ctx) {
    properties().declare("work", std::string("cpu"), "none, cpu or sleep");
    properties().declare("work_us", int64_t{5000}, "work per packet, microseconds");
    out_ = &addOutPort<T>("out");
    addInPort<T>("in", [this](const PacketView<T>& p) {
      work_.run();
      out_->push(p.header, p.samples, p.count);
    });
  }

 protected:
  void onStart() override {
    work_.kind = parseWorkKind(properties().text("work"));
    const int64_t us = properties().integer("work_us");
    if (us < 0) throw std::invalid_argument("work_us must be >= 0");
    work_.durationNs = us * 1000;
  }

 private:
  OutPort<T>* out_;
  Work work_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("stage", Stage);

}  // namespace scabench

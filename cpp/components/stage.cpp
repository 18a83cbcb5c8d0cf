// Stage: does a fixed amount of work on each packet, then forwards it. The
// work is CPU time on the thread's own clock (so 5 ms is 5 ms of CPU even on
// a shared core) or a sleep (work done by another device).
#include <algorithm>

#include "scabench/runtime/registry.hpp"
#include "scabench/core/work.hpp"

namespace scabench {

template <class T>
class Stage final : public Component {
 public:
  explicit Stage(const ComponentContext& ctx) : Component(ctx) {
    properties().declare("work", std::string("cpu"), "none, cpu or sleep");
    properties().declare("work_us", int64_t{5000}, "work per packet, microseconds");
    properties().declare("work_jitter_us", int64_t{0},
                         "data-dependent work: each packet takes work_us +- up to this much, fixed by its "
                         "sequence number (like a coder whose time depends on its input)");
    out_ = &addOutPort<T>("out");
    addInPort<T>("in", [this](const PacketView<T>& p) {
      Work work = work_;
      if (jitterNs_ > 0) work.durationNs = std::max<int64_t>(0, work_.durationNs + jitterFor(p.header.sequence_number));
      work.run();
      out_->push(p.header, p.samples, p.count);
    });
  }

 protected:
  void onStart() override {
    work_.kind = parseWorkKind(properties().text("work"));
    const int64_t us = properties().integer("work_us");
    if (us < 0) throw std::invalid_argument("work_us must be >= 0");
    work_.durationNs = us * 1000;
    const int64_t jitter = properties().integer("work_jitter_us");
    if (jitter < 0) throw std::invalid_argument("work_jitter_us must be >= 0");
    jitterNs_ = jitter * 1000;
  }

 private:
  // A fixed pseudo-random offset in [-jitter, +jitter] per sequence number
  // (splitmix64), so every run and every stage sees the same "data".
  int64_t jitterFor(uint64_t sequence) const {
    uint64_t z = sequence + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return int64_t(z % uint64_t(2 * jitterNs_ + 1)) - jitterNs_;
  }
  int64_t jitterNs_ = 0;
  OutPort<T>* out_;
  Work work_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("stage", Stage);

}  // namespace scabench

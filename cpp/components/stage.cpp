// Stage: does a fixed amount of work on each packet, then forwards it. The
// work is CPU time on the thread's own clock (so 5 ms is 5 ms of CPU even on
// a shared core) or a sleep (work done by another device).
#include <algorithm>
#include <atomic>

#include "scabench/runtime/registry.hpp"
#include "scabench/core/splitmix.hpp"
#include "scabench/core/work.hpp"

namespace scabench {

template <class T>
class Stage final : public Component {
 public:
  explicit Stage(const ComponentContext& ctx) : Component(ctx) {
    // The work may change while the stage runs (a coder switching rate, say):
    // it takes effect from the next packet.
    properties()
        .declare("work", PropertyType::String, std::string("cpu"), "none, cpu or sleep")
        .oneOf(workKindNames())
        .whileStarted();
    properties().declare("work_us", PropertyType::ULong, int64_t{5000}, "work per packet, microseconds").whileStarted();
    properties()
        .declare("work_jitter_us", PropertyType::ULong, int64_t{0},
                 "data-dependent work: each packet takes work_us +- up to this much, fixed by its sequence number "
                 "(like a coder whose time depends on its input)")
        .whileStarted();
    out_ = &addOutPort<T>("out", "every packet taken in, after its work");
    addInPort<T>(
        "in",
        [this](const PacketView<T>& p) {
          Work work{WorkKind(kind_.load(std::memory_order_relaxed)), workNs_.load(std::memory_order_relaxed)};
          const int64_t jitterNs = jitterNs_.load(std::memory_order_relaxed);
          if (jitterNs > 0)
            work.durationNs = std::max<int64_t>(0, work.durationNs + jitterFor(p.header.sequence_number, jitterNs));
          work.run();
          out_->push(p.header, p.samples, p.count);
        },
        "the packets to work on");
  }

 protected:
  void onStart() override { readWork(); }
  void onConfigure() override { readWork(); }

 private:
  // Where the packet threads read the work: the properties may change under
  // them (configure while started), these change atomically.
  void readWork() {
    kind_.store(int(parseWorkKind(properties().text("work"))), std::memory_order_relaxed);
    workNs_.store(properties().integer("work_us") * 1000, std::memory_order_relaxed);
    jitterNs_.store(properties().integer("work_jitter_us") * 1000, std::memory_order_relaxed);
  }

  // A fixed pseudo-random offset in [-jitter, +jitter] per sequence number
  // (splitmix64), so every run and every stage sees the same "data".
  static int64_t jitterFor(uint64_t sequence, int64_t jitterNs) {
    return int64_t(splitmix64(sequence) % uint64_t(2 * jitterNs + 1)) - jitterNs;
  }
  std::atomic<int> kind_{int(WorkKind::Cpu)};
  std::atomic<int64_t> workNs_{0}, jitterNs_{0};
  OutPort<T>* out_;
};

SCABENCH_REGISTER_TYPED_COMPONENT("stage", Stage);

}  // namespace scabench

// The work a component does on each packet, declared as its properties: the
// stage's, the tee's and the merge's (`work`, `work_us`, `work_jitter_us`),
// and each path of the duplex under its own prefix (`tx_work_us`, ...).
//
// The work may change while the component runs (a coder switching rate,
// say): the properties are declared changeable while started, and take
// effect from the next packet once read() has copied them where the packet
// threads read them (atomics: configure may change them under those threads).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

#include "scabench/core/splitmix.hpp"
#include "scabench/core/work.hpp"
#include "scabench/runtime/properties.hpp"

namespace scabench {

class PacketWork {
 public:
  // Declares `<prefix>work`, `<prefix>work_us` (default `defaultUs`) and
  // `<prefix>work_jitter_us`; `whose` opens each description ("work per
  // packet", "TX path: work per packet").
  PacketWork(PropertyBag& properties, std::string prefix, int64_t defaultUs, const std::string& whose = "")
      : prefix_(std::move(prefix)) {
    properties.declare(prefix_ + "work", PropertyType::String, std::string("cpu"), whose + "none, cpu or sleep")
        .oneOf(workKindNames())
        .whileStarted();
    properties.declare(prefix_ + "work_us", PropertyType::ULong, defaultUs, whose + "work per packet, microseconds")
        .whileStarted();
    properties
        .declare(prefix_ + "work_jitter_us", PropertyType::ULong, int64_t{0},
                 whose + "data-dependent work: each packet takes " + prefix_ +
                     "work_us +- up to this much, fixed by its sequence number (like a coder whose time depends on "
                     "its input)")
        .whileStarted();
  }

  // Copies the properties where the packet threads read them: in onStart,
  // and in onConfigure for a change while started.
  void read(const PropertyBag& properties) {
    kind_.store(int(parseWorkKind(properties.text(prefix_ + "work"))), std::memory_order_relaxed);
    workNs_.store(properties.integer(prefix_ + "work_us") * 1000, std::memory_order_relaxed);
    jitterNs_.store(properties.integer(prefix_ + "work_jitter_us") * 1000, std::memory_order_relaxed);
  }

  // Does the work for the packet with this sequence number, on the calling thread.
  void run(uint64_t sequence) const {
    Work work{WorkKind(kind_.load(std::memory_order_relaxed)), workNs_.load(std::memory_order_relaxed)};
    const int64_t jitterNs = jitterNs_.load(std::memory_order_relaxed);
    if (jitterNs > 0) work.durationNs = std::max<int64_t>(0, work.durationNs + jitterFor(sequence, jitterNs));
    work.run();
  }

 private:
  // A fixed pseudo-random offset in [-jitter, +jitter] per sequence number
  // (splitmix64), so every run and every component sees the same "data".
  static int64_t jitterFor(uint64_t sequence, int64_t jitterNs) {
    return int64_t(splitmix64(sequence) % uint64_t(2 * jitterNs + 1)) - jitterNs;
  }

  const std::string prefix_;
  std::atomic<int> kind_{int(WorkKind::Cpu)};
  std::atomic<int64_t> workNs_{0}, jitterNs_{0};
};

}  // namespace scabench

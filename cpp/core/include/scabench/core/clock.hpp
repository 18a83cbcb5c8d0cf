// Clocks shared by every scabench process.
//
// All timestamps are CLOCK_MONOTONIC nanoseconds: every process on one machine
// reads the same clock, so a producer's send and a stage's completion can be
// compared directly. Work is measured on the thread's own CPU clock so that
// "5 ms of work" means 5 ms of CPU even when the core is shared.
#pragma once

#include <cstdint>
#include <ctime>

namespace scabench {

inline int64_t readClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

inline int64_t monotonicNs() { return readClockNs(CLOCK_MONOTONIC); }
inline int64_t threadCpuNs() { return readClockNs(CLOCK_THREAD_CPUTIME_ID); }

// Sleeps until an absolute CLOCK_MONOTONIC time; used to hold a producer to
// a fixed schedule so that a late packet does not shift all the later ones.
void sleepUntilNs(int64_t deadlineNs);

// A deterministic offset in [0, ditherNs) for slot `i` of an absolute
// schedule (splitmix64 of i). The granularity lab dithers each packet's time
// within one scheduler tick so that the kernel's tick-sampled user/system
// accounting does not alias with a periodic source (docs/architecture.md).
inline int64_t ditherNs(uint64_t i, int64_t ditherNs) {
  if (ditherNs <= 0) return 0;
  uint64_t z = i + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return int64_t(z % uint64_t(ditherNs));
}

// The packet-rate regulator: packet i is due at start + i * period (+ its
// dither), whatever happened to the packets before it, so a late packet
// never shifts the ones after it and the rate holds over any run length.
struct PacketSchedule {
  int64_t startNs = 0;
  int64_t periodNs = 0;  // 0: no wait
  int64_t ditherNs = 0;

  int64_t dueNs(uint64_t i) const { return startNs + int64_t(i) * periodNs + scabench::ditherNs(i, ditherNs); }
  // Sleeps until packet i is due (at once if it is late, or with no period).
  void waitFor(uint64_t i) const {
    if (periodNs > 0) sleepUntilNs(dueNs(i));
  }
};

}  // namespace scabench

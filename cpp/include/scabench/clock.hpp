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

}  // namespace scabench

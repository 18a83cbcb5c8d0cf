#include "scabench/core/clock.hpp"

#include <cerrno>

namespace scabench {

void sleepUntilNs(int64_t deadlineNs) {
  timespec ts{time_t(deadlineNs / 1'000'000'000), long(deadlineNs % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace scabench

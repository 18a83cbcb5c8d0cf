#include "scabench/core/work.hpp"

#include <stdexcept>

#include "scabench/core/clock.hpp"

namespace scabench {

const std::vector<std::string>& workKindNames() {
  static const std::vector<std::string> names{"none", "cpu", "sleep"};
  return names;
}

WorkKind parseWorkKind(const std::string& text) {
  const auto& names = workKindNames();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (text == names[i]) return WorkKind(i);
  throw std::invalid_argument("work '" + text + "' is not one of: none, cpu, sleep");
}

void spinThreadCpu(int64_t ns) {
  // Reading the thread CPU clock is a system call. Checking it only between
  // chunks of arithmetic (~10 us each) keeps the work user time, as real DSP
  // would be, at the price of overshooting by less than one chunk.
  constexpr int kChunk = 4000;
  const int64_t end = threadCpuNs() + ns;
  volatile double sink = 0;
  double acc = 1.0;
  while (threadCpuNs() < end) {
    for (int i = 0; i < kChunk; ++i) acc = acc * 0.999999 + 1e-9;
    sink = acc;
  }
  (void)sink;
}

void Work::run() const {
  switch (kind) {
    case WorkKind::None: break;
    case WorkKind::Cpu: spinThreadCpu(durationNs); break;
    case WorkKind::Sleep: sleepUntilNs(monotonicNs() + durationNs); break;
  }
}

}  // namespace scabench

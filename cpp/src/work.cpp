#include "scabench/work.hpp"

#include <stdexcept>

#include "scabench/clock.hpp"

namespace scabench {

WorkKind parseWorkKind(const std::string& text) {
  if (text == "none") return WorkKind::None;
  if (text == "cpu") return WorkKind::Cpu;
  if (text == "sleep") return WorkKind::Sleep;
  throw std::invalid_argument("work '" + text + "' is not one of: none, cpu, sleep");
}

void spinThreadCpu(int64_t ns) {
  const int64_t end = threadCpuNs() + ns;
  while (threadCpuNs() < end) {
  }
}

void Work::run() const {
  switch (kind) {
    case WorkKind::None:
      break;
    case WorkKind::Cpu:
      spinThreadCpu(durationNs);
      break;
    case WorkKind::Sleep:
      sleepUntilNs(monotonicNs() + durationNs);
      break;
  }
}

}  // namespace scabench

// What a stage does with each packet.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scabench {

enum class WorkKind {
  None,   // forward at once
  Cpu,    // spin until the thread's CPU clock has advanced by the duration
  Sleep,  // wait the duration without using CPU (work done on another device)
};

// Parses "none", "cpu" or "sleep"; throws std::invalid_argument otherwise.
WorkKind parseWorkKind(const std::string& text);
// The names parseWorkKind takes, in WorkKind's order: what a stage's `work` is one of.
const std::vector<std::string>& workKindNames();

struct Work {
  WorkKind kind = WorkKind::None;
  int64_t durationNs = 0;

  // Performs one unit of work on the calling thread.
  void run() const;
};

// Spins until the calling thread has consumed `ns` of CPU time. Wall-clock
// spinning would finish early on a shared core and hide the single-core floor.
void spinThreadCpu(int64_t ns);

}  // namespace scabench

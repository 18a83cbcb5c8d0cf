// Names the calling thread (15 characters at most, the kernel's limit), so
// that /proc/PID/task/TID/comm tells the runtime's threads apart: a
// measurement can then charge each context switch to the thread that made
// it (the ring's receiving thread, a reorder buffer's releaser, a worker),
// as docs/findings/handoff.md does. Costs one system call per thread start.
#pragma once

#include <pthread.h>

namespace scabench {

inline void nameThisThread(const char* name) { pthread_setname_np(pthread_self(), name); }

}  // namespace scabench

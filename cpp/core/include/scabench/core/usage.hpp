// How every scabench program answers its command line: --help (or -h)
// anywhere on it prints the program's usage on stdout and exits 0; a command
// line it cannot use gets one line on stderr saying why, then the usage, and
// exit status 2.
#pragma once

#include <cstring>

namespace scabench {

inline bool askedForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

}  // namespace scabench

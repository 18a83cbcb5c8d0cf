// How every scabench program answers its command line: --help (or -h)
// anywhere on it prints the program's usage on stdout and exits 0; a command
// line it cannot use gets one line on stderr saying why, then the usage, and
// exit status 2. A program declares its Usage once and answers through it.
#pragma once

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

namespace scabench {

inline bool askedForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return true;
  return false;
}

class Usage {
 public:
  // `program`: the name a refusal starts with; `text`: the usage, "usage: ..." and what the program does.
  constexpr Usage(const char* program, const char* text) : program_(program), text_(text) {}

  // --help or -h anywhere: prints the usage on stdout. True: the program
  // has answered and exits 0.
  bool answersHelp(int argc, char** argv) const {
    if (!askedForHelp(argc, argv)) return false;
    std::cout << text_;
    return true;
  }
  // A command line the program cannot use: one line of why, then the usage,
  // on stderr. Returns 2, the exit status.
  int refuse(const std::string& why) const {
    std::cerr << program_ << ": " << why << "\n" << text_;
    return 2;
  }
  // refuse() and exit, for a check deep inside the parsing.
  [[noreturn]] void exitRefusing(const std::string& why) const { std::exit(refuse(why)); }

  const char* program() const { return program_; }
  const char* text() const { return text_; }

 private:
  const char* program_;
  const char* text_;
};

}  // namespace scabench

// The host the runtime's tests give their components (runtime_test,
// connections_test): one real in-process omniORB for the whole test program,
// the port POAs under its root POA, and every line a component tells the
// launcher kept for the tests to read. One host, since a process has one ORB
// and one set of port POAs under a POA.
#pragma once

#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "scabench/runtime/component.hpp"

class TestHost final : public scabench::HostServices {
 public:
  TestHost();
  void notify(const std::string& line) override;
  PortableServer::POA_ptr portPoa(bool singleThread) override;
  void componentReleased(const std::string&) override {}

  // How many times `name` told the launcher its stream ended.
  int ends(const std::string& name);
  // Waits until `name` has reported `n` ends of stream; false if it has not
  // within 20 s (the test fails instead of hanging; nothing here is timed).
  bool waitForEnds(const std::string& name, int n);

  CORBA::ORB_var orb;
  PortableServer::POA_var root, shared, single;
  std::mutex mutex;  // held to read `lines`
  std::vector<std::string> lines;
};

// The test program's host, started on first use.
TestHost& host();

CF::Properties props(std::initializer_list<std::pair<const char*, CORBA::Any>> items);
CORBA::Any text(const char* s);
CORBA::Any integer(long long v);
CORBA::Any real(double v);

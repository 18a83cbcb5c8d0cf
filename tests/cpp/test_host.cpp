#include "test_host.hpp"

#include <unistd.h>

TestHost::TestHost() {
  int argc = 0;
  orb = CORBA::ORB_init(argc, nullptr);
  CORBA::Object_var obj = orb->resolve_initial_references("RootPOA");
  root = PortableServer::POA::_narrow(obj);
  PortableServer::POAManager_var m = root->the_POAManager();
  m->activate();
}

void TestHost::notify(const std::string& line) {
  std::lock_guard lock(mutex);
  lines.push_back(line);
}

PortableServer::POA_ptr TestHost::portPoa(bool singleThread) {
  std::lock_guard lock(mutex);
  PortableServer::POA_var& poa = singleThread ? single : shared;
  if (CORBA::is_nil(poa)) poa = scabench::createPortPoa(root, singleThread);
  return poa;
}

int TestHost::ends(const std::string& name) {
  std::lock_guard lock(mutex);
  int n = 0;
  for (const auto& line : lines) n += line.rfind("eos " + name + " ", 0) == 0;
  return n;
}

bool TestHost::waitForEnds(const std::string& name, int n) {
  for (int i = 0; i < 2000; ++i) {
    if (ends(name) >= n) return true;
    usleep(10'000);
  }
  return false;
}

TestHost& host() {
  static TestHost h;
  return h;
}

CF::Properties props(std::initializer_list<std::pair<const char*, CORBA::Any>> items) {
  CF::Properties p;
  p.length(CORBA::ULong(items.size()));
  CORBA::ULong i = 0;
  for (const auto& [id, value] : items) p[i].id = id, p[i++].value = value;
  return p;
}

CORBA::Any text(const char* s) {
  host();  // a string in an Any needs the ORB, which the first test to run may not have started yet
  CORBA::Any a;
  a <<= s;
  return a;
}

CORBA::Any integer(long long v) {
  CORBA::Any a;
  a <<= CORBA::LongLong(v);
  return a;
}

CORBA::Any real(double v) {
  CORBA::Any a;
  a <<= CORBA::Double(v);
  return a;
}

// scabench-hostile: a hostile or broken peer of a data port, for tests.
//
//   scabench-hostile --ior FILE --port NAME --sample-type TYPE --samples N ATTACK...
//
// Reads a component's reference from FILE (the `<component>.ior` a host
// writes into its record directory), asks it for its provides port NAME, and
// sends what a well-behaved sending port never would:
//   far-future       one packet whose link sequence is a million ahead
//   near-wrap        one packet whose link sequence is just below 2^64
//   spoof-eos        an end of stream announcing 0 packets, link sequence 0
//   flood:K          K empty one-way packets as fast as it can, each a replay
//                    of the first packet's numbers
//   wrong-length     one packet of N + 1 samples
//   oversize:K       one packet of K samples
//   stranger         one well-formed packet of N samples, link sequence 3
//   attach           attachSender with its own token: taking the connection over
// All one-way, like a sender that does not wait for an answer. It prints one
// line per attack ("ATTACK sent K") and exits 0, or 1 if a call failed
// (the peer was gone, say). It does not know the connection's token; it puts
// in a guess, as a stranger would. ORB options (-ORBgiopMaxMsgSize for a big
// oversize packet) go before the rest.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "scabench.hh"
#include "scabench/core/usage.hpp"
#include "scabench/runtime/port_types.hpp"  // the element type -> interface map, header only

namespace {

// The guess a stranger puts in the connection field: any fixed value.
constexpr uint64_t kGuessedToken = 0x5ca1ab1e;

scabench::PacketHeader header(uint64_t link, uint64_t sequence, bool eos = false) {
  scabench::PacketHeader h{};
  h.sequence_number = sequence;
  h.link_sequence = link;
  h.end_of_stream = eos;
  h.connection_token = kGuessedToken;
  return h;
}

template <class T>
int attack(CORBA::Object_ptr portObj, std::size_t samples, const std::vector<std::string>& attacks) {
  typename scabench::PortTraits<T>::Ref::_var_type port = scabench::PortTraits<T>::Ref::_narrow(portObj);
  if (CORBA::is_nil(port)) {
    std::cerr << "scabench-hostile: the port is not a data port of this sample type\n";
    return 2;
  }
  auto packet = [](std::size_t n) {
    typename scabench::PortTraits<T>::Seq seq;
    seq.length(CORBA::ULong(n));
    for (CORBA::ULong i = 0; i < seq.length(); ++i) seq[i] = T(1);
    return seq;
  };
  const typename scabench::PortTraits<T>::Seq right = packet(samples), empty;
  for (const auto& a : attacks) {
    uint64_t sent = 0;
    if (a == "far-future") {
      port->pushPacketOneway(header(1'000'000, 1'000'000), right), sent = 1;
    } else if (a == "near-wrap") {
      port->pushPacketOneway(header(UINT64_MAX - 16, UINT64_MAX - 16), right), sent = 1;
    } else if (a == "spoof-eos") {
      port->pushPacketOneway(header(0, 0, true), empty), sent = 1;
    } else if (a.rfind("flood:", 0) == 0) {
      const uint64_t k = std::stoull(a.substr(6));
      for (; sent < k; ++sent) port->pushPacketOneway(header(0, 0), empty);
    } else if (a == "wrong-length") {
      port->pushPacketOneway(header(1, 1), packet(samples + 1)), sent = 1;
    } else if (a.rfind("oversize:", 0) == 0) {
      port->pushPacketOneway(header(2, 2), packet(std::stoull(a.substr(9)))), sent = 1;
    } else if (a == "stranger") {
      port->pushPacketOneway(header(3, 3), right), sent = 1;
    } else if (a == "attach") {
      try {
        port->attachSender(kGuessedToken, scabench::FlowControl::_nil());
        std::cout << "attach taken" << std::endl;
      } catch (const CF::Port::OccupiedPort&) {
        std::cout << "attach refused" << std::endl;
      }
      sent = 1;
    } else {
      std::cerr << "scabench-hostile: unknown attack " << a << "\n";
      return 2;
    }
    std::cout << a << " sent " << sent << std::endl;
  }
  // A two-way marker on the same connection: its reply means the server ORB
  // has read every one-way sent before it, so they all reached the port.
  port->syncMarker();
  return 0;
}

const scabench::Usage kUsage{
    "scabench-hostile",
    "usage: scabench-hostile --ior FILE --port NAME --sample-type octet|short|float|double --samples N ATTACK...\n"
    "       [-ORBoption value ...]\n"
    "A hostile peer of a component's provides port NAME (its reference in FILE), for the tests. ATTACK:\n"
    "far-future, near-wrap, spoof-eos, flood:K, wrong-length, oversize:K, stranger, attach.\n"};

}  // namespace

int main(int argc, char** argv) {
  if (kUsage.answersHelp(argc, argv)) return 0;
  CORBA::ORB_var orb = CORBA::ORB_init(argc, argv);
  std::string iorFile, portName, type;
  std::size_t samples = 0;
  std::vector<std::string> attacks;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--ior")
      iorFile = value();
    else if (arg == "--port")
      portName = value();
    else if (arg == "--sample-type")
      type = value();
    else if (arg == "--samples")
      samples = std::stoul(value());
    else
      attacks.push_back(arg);
  }
  if (iorFile.empty() || portName.empty() || type.empty() || attacks.empty()) return kUsage.refuse("missing arguments");
  std::ifstream in(iorFile);
  std::string ior;
  if (!std::getline(in, ior) || ior.empty()) return kUsage.refuse("cannot read a reference from " + iorFile);
  try {
    CORBA::Object_var obj = orb->string_to_object(ior.c_str());
    CF::Resource_var component = CF::Resource::_narrow(obj);
    CORBA::Object_var port = component->getPort(portName.c_str());
    int rc;
    if (type == "octet")
      rc = attack<CORBA::Octet>(port, samples, attacks);
    else if (type == "short")
      rc = attack<CORBA::Short>(port, samples, attacks);
    else if (type == "float")
      rc = attack<CORBA::Float>(port, samples, attacks);
    else if (type == "double")
      rc = attack<CORBA::Double>(port, samples, attacks);
    else
      rc = kUsage.refuse("unknown sample type " + type);
    orb->destroy();
    return rc;
  } catch (const CORBA::Exception& ex) {
    std::cerr << "scabench-hostile: " << ex._name() << "\n";
    return 1;
  }
}

// scabench-profile: what omniORB costs per call and per byte.
//
//   scabench-profile serve --endpoint giop:unix:/run/p.sock
//       Serves the empty profile target under the fixed object key "profile"
//       (so that a corbaloc through a byte-counting relay reaches it) and
//       prints "ready IOR". Ends on Target::shutdown or SIGTERM.
//   scabench-profile drive (--ior REF | --collocated)
//       Reads one command a line on stdin and answers one line on stdout:
//         tsc                         -> "tsc_hz HZ overhead_cycles N": the cycle counter's
//                                        rate against CLOCK_MONOTONIC, and the cost of timing nothing
//         time CASE ELEMENTS CALLS    -> "cycles C1 C2 ..." (one duration per call)
//         quit
//   scabench-profile first (--ior REF | --collocated) [--follow N]
//       The first call on a new reference, then N more: "first C next C1 ... CN".
//   scabench-profile memcpy --bytes B1,B2,... [--seconds S]
//       This machine's memcpy bandwidth at each buffer size: the limit of
//       any hop that copies its packets (`scabench bulk`). One line a size:
//       "memcpy BYTES BYTES_PER_S COPIES", the best of 10 batches of about
//       S/10 seconds each (default S 0.5): others' load can only slow a
//       batch, and a limit is what the machine can do.
//
// Rounds, warm-up, statistics and foreign-load guarding live in the Python
// driver (python/scabench/profile.py); this program only makes calls and
// times each one, so nothing else runs between the two cycle-counter reads.
#include <sys/prctl.h>
#include <x86intrin.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "profile.hh"
#include "scabench/core/clock.hpp"
#include "scabench/core/usage.hpp"

namespace sp = scabench::profile;

namespace {

// The cycle counter, fenced so that the call being timed can neither start
// before the first read nor finish after the second.
inline uint64_t cycleCount() {
  _mm_lfence();
  uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}

// What timing nothing costs: the median of back-to-back fenced reads. It is
// reported beside the results, not subtracted from them.
uint64_t measureTimerOverhead() {
  std::vector<uint64_t> d(10001);
  for (auto& x : d) {
    uint64_t t0 = cycleCount();
    x = cycleCount() - t0;
  }
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

// The counter's rate: cycles elapsed over CLOCK_MONOTONIC time, over 200 ms.
double measureTscHz() {
  int64_t t0 = scabench::monotonicNs();
  uint64_t c0 = cycleCount();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int64_t t1 = scabench::monotonicNs();
  uint64_t c1 = cycleCount();
  return double(c1 - c0) * 1e9 / double(t1 - t0);
}

class EmptyTarget : public POA_scabench::profile::Target {
 public:
  explicit EmptyTarget(CORBA::ORB_ptr orb) : orb_(CORBA::ORB::_duplicate(orb)) {}
  void nullCall() override {}
  void nullOneway() override {}
  void basicOctet(CORBA::Octet) override {}
  void basicShort(CORBA::Short) override {}
  void basicFloat(CORBA::Float) override {}
  void basicDouble(CORBA::Double) override {}
  void arrayOctet(const sp::OctetArray) override {}
  void arrayShort(const sp::ShortArray) override {}
  void arrayFloat(const sp::FloatArray) override {}
  void arrayDouble(const sp::DoubleArray) override {}
  void sequenceOctet(const CORBA::OctetSeq&) override {}
  void sequenceShort(const CORBA::ShortSeq&) override {}
  void sequenceFloat(const CORBA::FloatSeq&) override {}
  void sequenceDouble(const CORBA::DoubleSeq&) override {}
  void sequenceDoubleOneway(const CORBA::DoubleSeq&) override {}
  void shutdown() override { orb_->shutdown(false); }

 private:
  CORBA::ORB_var orb_;
};

const scabench::Usage kUsage{
    "scabench-profile",
    "usage: scabench-profile serve --endpoint ENDPOINT\n"
    "       scabench-profile drive (--ior REF | --collocated)\n"
    "       scabench-profile first (--ior REF | --collocated) [--follow N]\n"
    "       scabench-profile memcpy --bytes B1,B2,... [--seconds S]\n"
    "What omniORB costs per call and per byte: serve the empty target, time calls on it (drive: one command\n"
    "a line on stdin, \"tsc\", \"time CASE ELEMENTS CALLS\" or \"quit\"), or time a reference's first call;\n"
    "and the memcpy bandwidth at each buffer size, the limit of a hop that copies.\n"};

struct Options {
  std::string mode, endpoint, ior;
  bool collocated = false;
  int follow = 20;
  std::vector<std::size_t> bytes;  // memcpy: the buffer sizes
  double seconds = 0.5;            // memcpy: time spent on each size
};

// "B1,B2,...": whole numbers of bytes from 1 to 1 GiB.
std::vector<std::size_t> parseSizes(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 1 || v > (1ull << 30))
      kUsage.exitRefusing("--bytes: '" + item + "' is not a whole number of bytes from 1 to 1073741824");
    out.push_back(std::size_t(v));
  }
  if (out.empty()) kUsage.exitRefusing("--bytes: give at least one size");
  return out;
}

Options parseOptions(int argc, char** argv) {
  if (kUsage.answersHelp(argc, argv)) std::exit(0);
  if (argc < 2) kUsage.exitRefusing("missing mode (serve, drive, first or memcpy)");
  Options o;
  o.mode = argv[1];
  if (o.mode != "serve" && o.mode != "drive" && o.mode != "first" && o.mode != "memcpy")
    kUsage.exitRefusing("unknown mode '" + o.mode + "' (valid: serve, drive, first, memcpy)");
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) kUsage.exitRefusing(a + " needs a value");
      return argv[++i];
    };
    if (a == "--endpoint")
      o.endpoint = value();
    else if (a == "--ior")
      o.ior = value();
    else if (a == "--collocated")
      o.collocated = true;
    else if (a == "--follow") {
      std::string v = value();
      try {
        o.follow = std::stoi(v);
      } catch (const std::exception&) {
        kUsage.exitRefusing("--follow: '" + v + "' is not a whole number");
      }
      if (o.follow < 1) kUsage.exitRefusing("--follow: must be at least 1");
    } else if (a == "--bytes")
      o.bytes = parseSizes(value());
    else if (a == "--seconds") {
      std::string v = value();
      try {
        o.seconds = std::stod(v);
      } catch (const std::exception&) {
        o.seconds = -1;
      }
      if (!(o.seconds > 0 && o.seconds <= 60)) kUsage.exitRefusing("--seconds: '" + v + "' is not from 0 to 60");
    } else
      kUsage.exitRefusing("unknown option '" + a + "'");
  }
  if (o.mode == "serve" && o.endpoint.empty()) kUsage.exitRefusing("serve needs --endpoint");
  if (o.mode == "memcpy") {
    if (o.bytes.empty()) kUsage.exitRefusing("memcpy needs --bytes");
    return o;
  }
  if (o.mode != "serve" && o.ior.empty() == !o.collocated)
    kUsage.exitRefusing(o.mode + " needs exactly one of --ior REF and --collocated");
  return o;
}

CORBA::ORB_ptr initOrb(const std::vector<std::string>& extra) {
  // The size sweep sends up to 8 MB in one request; omniORB refuses more than
  // 2 MB by default.
  std::vector<std::string> args = {"scabench-profile", "-ORBgiopMaxMsgSize", "67108864"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = int(argv.size());
  return CORBA::ORB_init(argc, argv.data());
}

// Activates the empty target under the fixed key "profile" in omniORB's INS
// POA, so that it can be named by corbaloc as well as by its IOR.
sp::Target_ptr activateTarget(CORBA::ORB_ptr orb) {
  CORBA::Object_var poaObj = orb->resolve_initial_references("omniINSPOA");
  PortableServer::POA_var poa = PortableServer::POA::_narrow(poaObj);
  PortableServer::ObjectId_var oid = PortableServer::string_to_ObjectId("profile");
  auto* servant = new EmptyTarget(orb);
  poa->activate_object_with_id(oid, servant);
  servant->_remove_ref();
  poa->the_POAManager()->activate();
  CORBA::Object_var obj = poa->id_to_reference(oid);
  return sp::Target::_narrow(obj);
}

// The data every case sends: non-zero, so that nothing can be elided.
struct Payloads {
  sp::OctetArray octets;
  sp::ShortArray shorts;
  sp::FloatArray floats;
  sp::DoubleArray doubles;
  Payloads() {
    for (CORBA::ULong i = 0; i < sp::ARRAY_LENGTH; ++i) {
      octets[i] = CORBA::Octet(i * 7 + 1);
      shorts[i] = CORBA::Short(i * 3 + 1);
      floats[i] = CORBA::Float(i) + 0.5f;
      doubles[i] = CORBA::Double(i) + 0.25;
    }
  }
};

template <class Seq>
Seq filledSequence(CORBA::ULong length) {
  using Element = std::remove_reference_t<decltype(std::declval<Seq&>()[0])>;
  Seq s;
  s.length(length);
  for (CORBA::ULong i = 0; i < length; ++i) s[i] = Element(i % 251 + 1);
  return s;
}

// One call of a case, ready to be timed; the argument is built beforehand so
// that only the invocation is timed. After a round of oneways one two-way
// call makes sure the server has read every request before the next round.
struct Call {
  std::function<void()> invoke;
  bool oneway = false;
};

Call makeCall(sp::Target_ptr target, const std::string& name, CORBA::ULong elements, const Payloads& p) {
  sp::Target_ptr ref = target;  // owned by the caller, which outlives the call
  if (name == "null") return {[ref] { ref->nullCall(); }};
  if (name == "oneway") return {[ref] { ref->nullOneway(); }, true};
  if (name == "basic-octet") return {[ref] { ref->basicOctet(0x5a); }};
  if (name == "basic-short") return {[ref] { ref->basicShort(0x5a5a); }};
  if (name == "basic-float") return {[ref] { ref->basicFloat(1.5f); }};
  if (name == "basic-double") return {[ref] { ref->basicDouble(1.5); }};
  if (name == "array-octet") return {[ref, &p] { ref->arrayOctet(p.octets); }};
  if (name == "array-short") return {[ref, &p] { ref->arrayShort(p.shorts); }};
  if (name == "array-float") return {[ref, &p] { ref->arrayFloat(p.floats); }};
  if (name == "array-double") return {[ref, &p] { ref->arrayDouble(p.doubles); }};
  if (name == "sequence-octet") {
    auto s = std::make_shared<CORBA::OctetSeq>(filledSequence<CORBA::OctetSeq>(elements));
    return {[ref, s] { ref->sequenceOctet(*s); }};
  }
  if (name == "sequence-short") {
    auto s = std::make_shared<CORBA::ShortSeq>(filledSequence<CORBA::ShortSeq>(elements));
    return {[ref, s] { ref->sequenceShort(*s); }};
  }
  if (name == "sequence-float") {
    auto s = std::make_shared<CORBA::FloatSeq>(filledSequence<CORBA::FloatSeq>(elements));
    return {[ref, s] { ref->sequenceFloat(*s); }};
  }
  if (name == "sequence-double") {
    auto s = std::make_shared<CORBA::DoubleSeq>(filledSequence<CORBA::DoubleSeq>(elements));
    return {[ref, s] { ref->sequenceDouble(*s); }};
  }
  if (name == "sequence-double-oneway") {
    auto s = std::make_shared<CORBA::DoubleSeq>(filledSequence<CORBA::DoubleSeq>(elements));
    return {[ref, s] { ref->sequenceDoubleOneway(*s); }, true};
  }
  return {};
}

std::string timeCalls(sp::Target_ptr target, const std::string& name, CORBA::ULong elements, long calls,
                      const Payloads& payloads) {
  Call call = makeCall(target, name, elements, payloads);
  if (!call.invoke) return "error unknown case '" + name + "'";
  std::vector<uint64_t> cycles(static_cast<size_t>(calls));
  for (auto& c : cycles) {
    uint64_t t0 = cycleCount();
    call.invoke();
    c = cycleCount() - t0;
  }
  if (call.oneway) target->nullCall();
  std::string out = "cycles";
  out.reserve(size_t(calls) * 8);
  for (auto c : cycles) out += " " + std::to_string(c);
  return out;
}

sp::Target_ptr resolveTarget(CORBA::ORB_ptr orb, const Options& o) {
  if (o.collocated) return activateTarget(orb);
  CORBA::Object_var obj = orb->string_to_object(o.ior.c_str());
  return sp::Target::_unchecked_narrow(obj);
}

int drive(const Options& o) {
  CORBA::ORB_var orb = initOrb(o.collocated ? std::vector<std::string>{"-ORBendPoint", "giop:tcp:127.0.0.1:"}
                                            : std::vector<std::string>{});
  sp::Target_var target = resolveTarget(orb, o);
  Payloads payloads;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string command;
    in >> command;
    std::string reply;
    if (command == "quit") break;
    if (command == "tsc") {
      char buf[96];
      std::snprintf(buf, sizeof buf, "tsc_hz %.0f overhead_cycles %llu", measureTscHz(),
                    static_cast<unsigned long long>(measureTimerOverhead()));
      reply = buf;
    } else if (command == "time") {
      std::string name;
      long elements = -1, calls = -1;
      in >> name >> elements >> calls;
      if (!in || elements < 0 || calls < 1) {
        reply = "error usage: time CASE ELEMENTS CALLS";
      } else {
        try {
          reply = timeCalls(target, name, CORBA::ULong(elements), calls, payloads);
        } catch (const CORBA::Exception& e) {
          reply = std::string("error CORBA::") + e._name() + " in case " + name;
        }
      }
    } else {
      reply = "error unknown command '" + command + "' (valid: tsc, time, quit)";
    }
    std::cout << reply << '\n' << std::flush;
  }
  orb->destroy();
  return 0;
}

int first(const Options& o) {
  CORBA::ORB_var orb = initOrb(o.collocated ? std::vector<std::string>{"-ORBendPoint", "giop:tcp:127.0.0.1:"}
                                            : std::vector<std::string>{});
  try {
    sp::Target_var target;
    if (o.collocated) {
      // A new reference to a servant of this process, as a remote client would get it.
      sp::Target_var served = activateTarget(orb);
      CORBA::String_var ior = orb->object_to_string(served);
      CORBA::Object_var obj = orb->string_to_object(ior);
      target = sp::Target::_unchecked_narrow(obj);
    } else {
      CORBA::Object_var obj = orb->string_to_object(o.ior.c_str());
      target = sp::Target::_unchecked_narrow(obj);
    }
    uint64_t t0 = cycleCount();
    target->nullCall();
    std::string out = "first " + std::to_string(cycleCount() - t0) + " next";
    for (int i = 0; i < o.follow; ++i) {
      t0 = cycleCount();
      target->nullCall();
      out += " " + std::to_string(cycleCount() - t0);
    }
    std::cout << out << std::endl;
  } catch (const CORBA::Exception& e) {
    std::cout << "error CORBA::" << e._name() << std::endl;
    orb->destroy();
    return 1;
  }
  orb->destroy();
  return 0;
}

int serve(const Options& o) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);  // never outlive the driver
  CORBA::ORB_var orb = initOrb({"-ORBendPoint", o.endpoint});
  sp::Target_var target = activateTarget(orb);
  CORBA::String_var ior = orb->object_to_string(target);
  std::cout << "ready " << ior.in() << std::endl;
  orb->run();
  orb->destroy();
  return 0;
}

// memcpy's bandwidth for one buffer size: source and destination touched
// first (no page faults in the timing), then batches of copies timed on the
// monotonic clock; the fastest batch is the figure. A copy reads B and
// writes B bytes; the bandwidth counts B, as a hop's throughput counts the
// packet's bytes once.
void measureMemcpy(std::size_t bytes, double seconds) {
  std::vector<unsigned char> from(bytes), to(bytes);
  for (std::size_t i = 0; i < bytes; ++i) from[i] = static_cast<unsigned char>(i * 31 + 7);
  std::memset(to.data(), 1, bytes);
  // Copies a batch takes: about seconds/10, judged from a first timed copy.
  const int64_t t0 = scabench::monotonicNs();
  std::memcpy(to.data(), from.data(), bytes);
  const double once = double(std::max<int64_t>(scabench::monotonicNs() - t0, 1));
  const int batches = 10;
  const long copies = std::max(1L, long(seconds / batches * 1e9 / once));
  std::vector<double> rates;
  for (int batch = 0; batch < batches; ++batch) {
    const int64_t start = scabench::monotonicNs();
    for (long c = 0; c < copies; ++c) {
      std::memcpy(to.data(), from.data(), bytes);
      // The compiler must not drop copies whose result nobody reads.
      asm volatile("" : : "r"(to.data()) : "memory");
    }
    rates.push_back(double(bytes) * double(copies) * 1e9 /
                    double(std::max<int64_t>(scabench::monotonicNs() - start, 1)));
  }
  std::printf("memcpy %zu %.0f %ld\n", bytes, *std::max_element(rates.begin(), rates.end()), copies * batches);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parseOptions(argc, argv);
  if (o.mode == "memcpy") {
    for (std::size_t bytes : o.bytes) measureMemcpy(bytes, o.seconds);
    return 0;
  }
  try {
    if (o.mode == "serve") return serve(o);
    if (o.mode == "drive") return drive(o);
    return first(o);
  } catch (const CORBA::Exception& e) {
    std::fprintf(stderr, "scabench-profile %s: CORBA::%s\n", o.mode.c_str(), e._name());
    return 1;
  }
}

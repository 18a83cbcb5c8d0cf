// What every peer program shares: the paper's pipeline (a producer and
// `stages` stages, each doing `work_us` of CPU work per packet on the thread
// CPU clock, as scabench's stage does), its command line, the packet's
// sequence number, the order check, and the one JSON line it prints.
//
// The peers run the same pipeline on other frameworks (plain threads,
// ZeroMQ, GNU Radio) so that `scabench peers` can set scabench's strategies
// beside them; only the way packets move differs.
//
// A packet is `samples` doubles; its first sample carries the sequence
// number (exact in a double below 2^53), so a packet is data alone and no
// framework needs a header of ours.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scabench/core/clock.hpp"
#include "scabench/core/work.hpp"

namespace scabench::peers {

struct Options {
  long long packets = 1000;
  long long samples = 1024;
  long long stages = 3;
  long long workUs = 5000;
  long long depth = 16;     // packets a link holds (queue depth, high-water mark, buffer), where the peer has one
  long long misorder = -1;  // testing aid: the producer sends packet k+1 before packet k
  std::string transport;    // the peer's own choice (ZeroMQ: inproc or ipc)
};

// Parses --key value pairs. `transports`, if not empty, are the values
// --transport takes (and then it is required). Bad input: one line naming the
// argument and what is valid, exit 2.
inline Options parseOptions(int argc, char** argv, const std::string& prog,
                            const std::vector<std::string>& transports = {}) {
  Options o;
  std::map<std::string, long long*> numbers{{"--packets", &o.packets}, {"--samples", &o.samples},
                                            {"--stages", &o.stages},   {"--work-us", &o.workUs},
                                            {"--depth", &o.depth},     {"--misorder", &o.misorder}};
  auto usage = [&](const std::string& why) {
    std::cerr << prog << ": " << why << "; usage: " << prog << (transports.empty() ? "" : " --transport T")
              << " [--packets N>=1] [--samples S>=1] [--stages K>=1] [--work-us W>=0] [--depth D>=1] [--misorder I]\n";
    std::exit(2);
  };
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) usage(key + " needs a value");
    const std::string value = argv[i + 1];
    if (key == "--transport" && !transports.empty()) {
      o.transport = value;
      continue;
    }
    auto it = numbers.find(key);
    if (it == numbers.end()) usage("unknown argument " + key);
    char* end = nullptr;
    *it->second = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0') usage(key + " must be a whole number, not '" + value + "'");
  }
  if (o.packets < 1 || o.samples < 1 || o.stages < 1 || o.workUs < 0 || o.depth < 1) usage("a value is out of range");
  if (o.misorder >= o.packets - 1) usage("--misorder must be below packets - 1");
  if (!transports.empty()) {
    bool known = false;
    std::string valid;
    for (const auto& t : transports) {
      known = known || t == o.transport;
      valid += (valid.empty() ? "" : ", ") + t;
    }
    if (!known) usage("--transport must be one of: " + valid);
  }
  return o;
}

// The sequence number the producer sends at position i: i, except that the
// testing aid swaps packets `misorder` and `misorder` + 1, so that every
// peer's order check can be seen to fail.
inline uint64_t sendOrder(uint64_t i, const Options& o) {
  if (o.misorder < 0) return i;
  const auto k = uint64_t(o.misorder);
  return i == k ? k + 1 : i == k + 1 ? k : i;
}

inline void fillPacket(double* samples, std::size_t count, uint64_t sequence) {
  samples[0] = double(sequence);
  for (std::size_t j = 1; j < count; ++j) samples[j] = double(j);
}

inline uint64_t sequenceOf(const double* samples) { return uint64_t(samples[0]); }

// What one stage saw, in the order it processed: packets received, those
// that followed their predecessor (scabench's "reordered from previous"
// counted the other way: the first is compared with -1), and when it
// finished its last one.
struct StageReport {
  uint64_t received = 0;
  uint64_t inOrder = 0;
  int64_t lastDoneNs = 0;
  int64_t previous = -1;

  void see(uint64_t sequence) {
    ++received;
    if (int64_t(sequence) == previous + 1) ++inOrder;
    previous = int64_t(sequence);
  }
  void done() { lastDoneNs = monotonicNs(); }
};

// The stage's work: the same spin as scabench's stage (work.hpp).
inline Work stageWork(const Options& o) { return Work{WorkKind::Cpu, o.workUs * 1000}; }

// Prints the one JSON line. t0Ns: the producer's first send; the time of the
// last packet is the last stage's last completion after it, as scabench
// measures. CPU: this process and its reaped children (getrusage).
inline void printResult(const std::string& peer, const Options& o, int64_t t0Ns, const std::vector<StageReport>& stages,
                        const nlohmann::json& extra = nlohmann::json::object()) {
  rusage self{}, children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  auto seconds = [](const timeval& a, const timeval& b) {
    return double(a.tv_sec + b.tv_sec) + double(a.tv_usec + b.tv_usec) / 1e6;
  };
  nlohmann::json out = {
      {"peer", peer},
      {"packets", o.packets},
      {"samples", o.samples},
      {"stages", o.stages},
      {"work_us", o.workUs},
      {"depth", o.depth},
      {"last_packet_ms", stages.empty() ? 0.0 : double(stages.back().lastDoneNs - t0Ns) / 1e6},
      {"user_s", seconds(self.ru_utime, children.ru_utime)},
      {"system_s", seconds(self.ru_stime, children.ru_stime)},
      {"voluntary_ctxsw", self.ru_nvcsw + children.ru_nvcsw},
      {"involuntary_ctxsw", self.ru_nivcsw + children.ru_nivcsw},
      {"received", nlohmann::json::array()},
      {"in_order", nlohmann::json::array()},
  };
  if (!o.transport.empty()) out["transport"] = o.transport;
  if (o.misorder >= 0) out["misorder"] = o.misorder;
  for (const auto& s : stages) {
    out["received"].push_back(s.received);
    out["in_order"].push_back(s.inOrder);
  }
  out.update(extra);
  std::cout << out.dump() << std::endl;
}

}  // namespace scabench::peers

// scabench-calibrate: in-process measurements of the parameters of the
// seed's models that need no middleware run (docs/architecture.md,
// "Granularity"). Each prints one JSON object. Times are the thread's own
// CPU clock, best of several batches, unless said otherwise.
//
//   fir --filters K --taps N --samples B   one cascade of K filters per packet (C_CL is K = 1)
//   sink --samples B                       the checksum sink's work per packet (C_SNK)
//   convert --samples B                    float array -> FloatSequence and back, element by
//                                          element as OSSIE's components did (C_toSeq, C_fromSeq)
//   ctxsw [--core C]                       direct cost of a context switch: two processes on one
//                                          core pass a byte through pipes (lmbench's lat_ctx, size 0)
//                                          minus the same pipe traffic in one process
//   membw                                  memory read and write bandwidth, 256 MiB buffers (wall clock)
//   wake [--core C] [--rate R] [--wakes N] the CPU a process pays to be woken once every 1/R s
//                                          (a futex in shared memory, the shared-memory transport's
//                                          wake-up) and to go back to sleep, and its waker's: the floor
//                                          of a hop that runs the receiving process once per packet
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <climits>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "scabench.hh"
#include "scabench/core/clock.hpp"
#include "scabench/core/usage.hpp"
#include "scabench/dsp/fir.hpp"

namespace {

std::map<std::string, long long> options(int argc, char** argv, int from) {
  std::map<std::string, long long> o;
  for (int i = from; i + 1 < argc; i += 2) o[argv[i]] = std::atoll(argv[i + 1]);
  return o;
}

long long get(const std::map<std::string, long long>& o, const std::string& key, long long fallback) {
  const auto it = o.find(key);
  return it == o.end() ? fallback : it->second;
}

// Nanoseconds of thread CPU per call of `body`: batches of at least 20 ms,
// the best of five (the least disturbed).
double perCall(const std::function<void()>& body) {
  for (int i = 0; i < 3; ++i) body();  // warm caches and the branch predictor
  long long reps = 1;
  while (true) {
    const int64_t t0 = scabench::threadCpuNs();
    for (long long r = 0; r < reps; ++r) body();
    if (scabench::threadCpuNs() - t0 >= 20'000'000 || reps >= (1LL << 30)) break;
    reps *= 2;
  }
  double best = 1e300;
  for (int trial = 0; trial < 5; ++trial) {
    const int64_t t0 = scabench::threadCpuNs();
    for (long long r = 0; r < reps; ++r) body();
    best = std::min(best, double(scabench::threadCpuNs() - t0) / double(reps));
  }
  return best;
}

volatile float gSink;

int fir(const std::map<std::string, long long>& o) {
  const long long filters = get(o, "--filters", 1), taps = get(o, "--taps", 10), samples = get(o, "--samples", 2000);
  std::vector<float> in(static_cast<std::size_t>(samples)), out(static_cast<std::size_t>(samples));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = scabench::sourceSample(i);
  scabench::FirChain chain{std::size_t(filters), std::size_t(taps)};
  const double ns = perCall([&] {
    chain.process(in.data(), out.data(), out.size());
    gSink = out[0];
  });
  std::printf("{\"filters\": %lld, \"taps\": %lld, \"samples\": %lld, \"ns_per_packet\": %.2f, \"ns_per_mac\": %.5f}\n",
              filters, taps, samples, ns, ns / double(std::max(1LL, filters * taps * samples)));
  return 0;
}

int sink(const std::map<std::string, long long>& o) {
  const long long samples = get(o, "--samples", 2000);
  std::vector<float> in(static_cast<std::size_t>(samples));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = scabench::sourceSample(i);
  double sum = 0;
  const double ns = perCall([&] { sum = scabench::accumulate(sum, in.data(), in.size()); });
  gSink = float(sum);
  std::printf("{\"samples\": %lld, \"ns_per_packet\": %.2f}\n", samples, ns);
  return 0;
}

int convert(const std::map<std::string, long long>& o) {
  const auto samples = CORBA::ULong(get(o, "--samples", 2000));
  std::vector<float> array(samples);
  for (std::size_t i = 0; i < array.size(); ++i) array[i] = scabench::sourceSample(i);
  // To the sequence: a fresh sequence per packet, filled element by element.
  const double toNs = perCall([&] {
    CORBA::FloatSeq seq;
    seq.length(samples);
    for (CORBA::ULong i = 0; i < samples; ++i) seq[i] = array[i];
    gSink = seq[samples ? samples - 1 : 0];
  });
  CORBA::FloatSeq seq;
  seq.length(samples);
  for (CORBA::ULong i = 0; i < samples; ++i) seq[i] = array[i];
  // From the sequence: into a fresh array, element by element.
  const double fromNs = perCall([&] {
    std::vector<float> back(seq.length());
    for (CORBA::ULong i = 0; i < seq.length(); ++i) back[i] = seq[i];
    gSink = back.empty() ? 0.f : back.back();
  });
  std::printf("{\"samples\": %u, \"to_seq_ns\": %.2f, \"from_seq_ns\": %.2f}\n", samples, toNs, fromNs);
  return 0;
}

void pin(int core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(core, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("sched_setaffinity");
    std::exit(1);
  }
}

int ctxsw(const std::map<std::string, long long>& o) {
  const int core = int(get(o, "--core", 0));
  const long long rounds = get(o, "--rounds", 20000);
  pin(core);
  char byte = 0;
  // The best of 5 trials of `rounds` one-byte writes then reads, ns a round;
  // negative if a write or read failed.
  auto bestRoundNs = [&](int writeFd, int readFd) {
    double best = 1e300;
    for (int trial = 0; trial < 5; ++trial) {
      const int64_t t0 = scabench::monotonicNs();
      for (long long i = 0; i < rounds; ++i) {
        if (write(writeFd, &byte, 1) != 1 || read(readFd, &byte, 1) != 1) return -1.0;
      }
      best = std::min(best, double(scabench::monotonicNs() - t0) / double(rounds));
    }
    return best;
  };
  // One process: the same writes and reads, no switch.
  int self[2];
  if (pipe(self) != 0) return 1;
  const double selfNs = bestRoundNs(self[1], self[0]);
  if (selfNs < 0) return 1;
  // Two processes on the core: each round trip is two switches.
  int there[2], back[2];
  if (pipe(there) != 0 || pipe(back) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    close(there[1]);  // so that the parent's close ends the loop
    close(back[0]);
    for (;;) {
      if (read(there[0], &byte, 1) != 1) _exit(0);
      if (write(back[1], &byte, 1) != 1) _exit(0);
    }
  }
  close(there[0]);
  close(back[1]);
  const double pairNs = bestRoundNs(there[1], back[0]);
  if (pairNs < 0) return 1;
  close(there[1]);
  waitpid(child, nullptr, 0);
  std::printf("{\"core\": %d, \"round_trip_ns\": %.1f, \"same_process_ns\": %.1f, \"direct_ns\": %.1f}\n", core, pairNs,
              selfNs, std::max(0.0, pairNs / 2 - selfNs));
  return 0;
}

int membw(const std::map<std::string, long long>& o) {
  const std::size_t bytes = std::size_t(get(o, "--mib", 256)) << 20;
  std::vector<uint64_t> buffer(bytes / 8, 1);
  double readBest = 1e300, writeBest = 1e300;
  for (int trial = 0; trial < 4; ++trial) {
    int64_t t0 = scabench::monotonicNs();
    uint64_t sum = 0;
    for (uint64_t v : buffer) sum += v;
    readBest = std::min(readBest, double(scabench::monotonicNs() - t0));
    gSink = float(sum);
    t0 = scabench::monotonicNs();
    std::memset(buffer.data(), trial, bytes);
    writeBest = std::min(writeBest, double(scabench::monotonicNs() - t0));
  }
  std::printf("{\"bytes\": %zu, \"read_bytes_per_s\": %.4g, \"write_bytes_per_s\": %.4g}\n", bytes,
              double(bytes) / readBest * 1e9, double(bytes) / writeBest * 1e9);
  return 0;
}

int wake(const std::map<std::string, long long>& o) {
  const int core = int(get(o, "--core", 0));
  const long long rate = std::max(1LL, get(o, "--rate", 40));
  const long long wakes = std::max(1LL, get(o, "--wakes", 200));
  pin(core);
  auto* word = static_cast<std::atomic<uint32_t>*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (word == MAP_FAILED) return 1;
  auto futex = [&](int op, uint32_t value) {
    return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, nullptr, nullptr, 0);
  };
  constexpr uint32_t kEnd = UINT32_MAX;
  const pid_t child = fork();
  if (child == 0) {
    // Woken once per period, it does nothing but sleep again.
    uint32_t seen = 0;
    for (;;) {
      while (word->load() == seen) futex(FUTEX_WAIT, seen);
      seen = word->load();
      if (seen == kEnd) _exit(0);
    }
  }
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  const int64_t period = 1'000'000'000 / rate, t0 = scabench::monotonicNs() + period;
  for (long long i = 0; i < wakes; ++i) {
    scabench::sleepUntilNs(t0 + i * period);
    word->fetch_add(1);
    futex(FUTEX_WAKE, 1);
  }
  getrusage(RUSAGE_SELF, &after);
  word->store(kEnd);
  futex(FUTEX_WAKE, INT_MAX);
  rusage woken{};
  int status = 0;
  wait4(child, &status, 0, &woken);
  auto ns = [](const rusage& r) {
    return (double(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e9 +
            double(r.ru_utime.tv_usec + r.ru_stime.tv_usec) * 1e3);
  };
  std::printf(
      "{\"core\": %d, \"rate\": %lld, \"wakes\": %lld, \"woken_cpu_ns\": %.0f, \"waker_cpu_ns\": %.0f, "
      "\"woken_switches\": %.2f}\n",
      core, rate, wakes, ns(woken) / double(wakes), (ns(after) - ns(before)) / double(wakes),
      double(woken.ru_nvcsw + woken.ru_nivcsw) / double(wakes));
  return 0;
}

}  // namespace

const scabench::Usage kUsage{
    "scabench-calibrate",
    "usage: scabench-calibrate fir --filters K --taps N --samples B\n"
    "       scabench-calibrate sink --samples B\n"
    "       scabench-calibrate convert --samples B\n"
    "       scabench-calibrate ctxsw [--core C]\n"
    "       scabench-calibrate membw\n"
    "       scabench-calibrate wake [--core C] [--rate R] [--wakes N]\n"
    "In-process costs for the granularity models, one JSON object each: a FIR cascade per packet, the checksum\n"
    "sink, float array <-> FloatSequence, a context switch, memory bandwidth; and the CPU a process pays to be\n"
    "woken R times a second (the floor of a hop between processes).\n"};

int main(int argc, char** argv) {
  if (kUsage.answersHelp(argc, argv)) return 0;
  if (argc < 2) return kUsage.refuse("which measurement?");
  const std::string what = argv[1];
  const auto o = options(argc, argv, 2);
  if (what == "fir") return fir(o);
  if (what == "sink") return sink(o);
  if (what == "convert") return convert(o);
  if (what == "ctxsw") return ctxsw(o);
  if (what == "membw") return membw(o);
  if (what == "wake") return wake(o);
  return kUsage.refuse("unknown measurement " + what);
}

// scabench-func: the seed's FUNC, the synthetic load as one standalone
// program with no middleware. Every `period_us` on an absolute schedule it
// takes a packet of `samples` floats from the source signal, runs `filters`
// FIR filters of `taps` taps in cascade over it, and sums the output the way
// the checksum sink does, so its output can be compared with a component
// run's bit for bit.
//
//   scabench-func --filters 9 --taps 10 --samples 2000 --period-us 25000 --packets 200 [--dither-us 4000]
//
// --dither-us delays each packet by the same pseudo-random offset as the
// producer's dither_us property does (clock.hpp).
//
// It prints "started PID" when the first packet is due (the lab measures a
// steady window from there), then one JSON line: packets, checksum, and the
// thread CPU it spent in the filters and in the sink, per packet (the seed
// measured C_CL with OProfile in its standalone program; this is the same
// attribution by the thread CPU clock).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "scabench/core/clock.hpp"
#include "scabench/core/usage.hpp"
#include "scabench/dsp/fir.hpp"

namespace {
const scabench::Usage kUsage{
    "scabench-func",
    "usage: scabench-func --filters K --taps N --samples B --period-us P --packets COUNT [--dither-us D]\n"
    "The synthetic load without middleware: every P us a packet of B floats through K FIR filters of N taps,\n"
    "summed as the checksum sink does. Prints \"started PID\", then one JSON line.\n"};
}  // namespace

int main(int argc, char** argv) {
  if (kUsage.answersHelp(argc, argv)) return 0;
  long long filters = 9, taps = 10, samples = 2000, periodUs = 25000, packets = 100, ditherUs = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (arg == "--filters")
      filters = v;
    else if (arg == "--taps")
      taps = v;
    else if (arg == "--samples")
      samples = v;
    else if (arg == "--period-us")
      periodUs = v;
    else if (arg == "--packets")
      packets = v;
    else if (arg == "--dither-us")
      ditherUs = v;
    else {
      return kUsage.refuse("unknown argument " + arg);
    }
  }
  if (argc % 2 == 0 || filters < 0 || taps < 1 || samples < 1 || periodUs < 0 || packets < 0 || ditherUs < 0) {
    return kUsage.refuse("every option takes a value, counts >= 0 (taps and samples >= 1)");
  }
  std::vector<float> source(static_cast<std::size_t>(samples)), output(static_cast<std::size_t>(samples));
  for (std::size_t i = 0; i < source.size(); ++i) source[i] = scabench::sourceSample(i);
  scabench::FirChain chain{std::size_t(filters), std::size_t(taps)};
  double checksum = 0;
  int64_t firNs = 0, sinkNs = 0;
  std::cout << "started " << getpid() << std::endl;
  const scabench::PacketSchedule schedule{scabench::monotonicNs(), periodUs * 1000, ditherUs * 1000};
  for (long long i = 0; i < packets; ++i) {
    schedule.waitFor(uint64_t(i));
    const int64_t t0 = scabench::threadCpuNs();
    chain.process(source.data(), output.data(), output.size());
    const int64_t t1 = scabench::threadCpuNs();
    checksum = scabench::accumulate(checksum, output.data(), output.size());
    sinkNs += scabench::threadCpuNs() - t1;
    firNs += t1 - t0;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "{\"packets\": %lld, \"checksum\": %.17g, \"work_ns_per_packet\": %.1f, "
                "\"sink_ns_per_packet\": %.1f}",
                packets, checksum, packets ? double(firNs) / double(packets) : 0.0,
                packets ? double(sinkNs) / double(packets) : 0.0);
  std::cout << line << std::endl;
  return 0;
}

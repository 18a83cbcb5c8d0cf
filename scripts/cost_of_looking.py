"""What looking at a run costs (docs/findings/cost-of-looking.md):

1. the per-packet records every port writes, always (record_log.hpp): a
   small C++ program, compiled here against the runtime's headers and
   library, times RecordLog's arrive and done with the two clock reads a
   port takes around them, the way a port's hot path calls them; then the
   port's statistics counters, the header's gauges (one in and out), a
   worker queue's push and pop without and with its gauge, and the latency
   histogram's update;
2. the journeys and the timeline every run's analysis now works out
   (run/journeys.py), and the trace a run writes with --trace
   (run/trace.py): each timed inside the runner's analysis, with the trace
   file's size;
3. a whole run's wall time with and without a trace.

Runs go through the library (run_spec), as `scabench run` does, on a spec
with little work per packet, so that many packets fit in a short run. Each
packet count runs --repeats times without and with a trace, alternately,
and the medians are printed (the machine may be shared: each run's foreign
load is printed too).

    .venv/bin/python scripts/cost_of_looking.py                       # 100, 2000 and 10000 packets, 3 repeats
    .venv/bin/python scripts/cost_of_looking.py --packets 100 --repeats 1 --records 0
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from scabench.model.load import find_spec, load_spec
from scabench.model.overrides import Overrides, apply_overrides
from scabench.paths import REPO_ROOT, bin_dir
from scabench.run import journeys, runner, trace

RECORD_BENCH = r"""
#include <scabench/core/bounded_queue.hpp>
#include <scabench/core/clock.hpp>
#include <scabench/core/record_log.hpp>
#include <scabench/runtime/latency_histogram.hpp>
#include <scabench/runtime/port_traffic.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
using namespace scabench;
int main(int argc, char** argv) {
  const uint64_t n = std::strtoull(argv[2], nullptr, 10);
  RecordLog log(argv[1], n);
  volatile int64_t sink = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) sink = sink + monotonicNs() + monotonicNs();  // the two clock reads alone
  auto t1 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) {  // what a port does per packet: the clock reads and the record
    log.enterUpcall();
    const uint64_t slot = log.arrive(i, monotonicNs(), 0);
    log.done(slot, monotonicNs());
    log.leaveUpcall();
  }
  auto t2 = std::chrono::steady_clock::now();
  // The always-on statistics every port keeps per call (InPortBase::countCall):
  // the counters on the arrival time the record has read, and the worker
  // queue's fill as the queue published it (no lock, no clock read).
  BoundedQueue<int> queue(64);
  PortTraffic traffic;
  for (uint64_t i = 0; i < n; ++i) traffic.count(1024, 64, int64_t(i) + 1, 100 * queue.fill() / queue.capacity());
  auto t3 = std::chrono::steady_clock::now();
  // As the port counted before: a clock read of its own and the fill read under the queue's lock.
  PortTraffic before;
  for (uint64_t i = 0; i < n; ++i) before.count(1024, 64, monotonicNs(), 100 * queue.size() / queue.capacity());
  auto t4 = std::chrono::steady_clock::now();
  // The header's gauges: a packet through a worker queue and a reorder
  // buffer changes each twice (in, out), one relaxed add a change.
  for (uint64_t i = 0; i < n; ++i) {
    RecordLog::add(log.header().workerQueued, +1);
    RecordLog::add(log.header().workerQueued, -1);
  }
  auto t5 = std::chrono::steady_clock::now();
  // A worker queue's push and pop, as a port's packet makes them, without
  // and with the gauge kept (BoundedQueue::countInto).
  BoundedQueue<uint64_t> plain(1024), counted(1024);
  counted.countInto(&log.header().workerQueued);
  for (uint64_t i = 0; i < n; ++i) {
    plain.push(i);
    sink = sink + int64_t(*plain.pop());
  }
  auto t6 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < n; ++i) {
    counted.push(i);
    sink = sink + int64_t(*counted.pop());
  }
  auto t7 = std::chrono::steady_clock::now();
  // The latency so far every provides port keeps (InPortBase::countLatency):
  // the bin of arrival - send (the arrival time read already) and one
  // relaxed add. Latencies spread over four decades, so that the bin differs
  // from packet to packet.
  LatencyHistogram latency;
  for (uint64_t i = 0; i < n; ++i) latency.add(int64_t(1000 + (i * 7919) % 10'000'000));
  auto t8 = std::chrono::steady_clock::now();
  sink = sink + int64_t(latency.summary().count);
  auto ns = [](auto a, auto b) { return std::chrono::duration<double, std::nano>(b - a).count(); };
  std::printf("%.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f\n", ns(t0, t1) / n, ns(t1, t2) / n, ns(t2, t3) / n,
              ns(t3, t4) / n, ns(t4, t5) / n, ns(t5, t6) / n, ns(t6, t7) / n, ns(t7, t8) / n);
}
"""


def record_cost_ns(count: int, build: Path) -> dict[str, float]:
    """ns per packet at one port, each the least of 5 runs: `clocks` (the two
    clock reads alone), `record` (the clock reads and the record),
    `counters` (the port's statistics counters, on the record's arrival
    time, the queue's fill read without a lock), `counted_before` (the
    counters as they were counted before: a clock read of their own, the
    fill under the queue's lock), `gauge` (one gauge in and out: two relaxed
    adds), `queue` and `queue_counted` (a worker queue's push and pop,
    without and with its gauge), `latency` (the latency histogram's update:
    the bin of a latency and one relaxed add)."""
    with tempfile.TemporaryDirectory(prefix="cost-of-looking-") as tmp:
        source, program = Path(tmp) / "records.cpp", Path(tmp) / "records"
        source.write_text(RECORD_BENCH)
        include = [f"-I{REPO_ROOT / 'cpp/core/include'}", f"-I{REPO_ROOT / 'cpp/runtime/include'}"]
        subprocess.run(
            ["g++", "-O2", "-std=c++20", *include, str(source), "-o", str(program), f"-L{build / 'lib'}"]
            + [f"-Wl,-rpath,{build / 'lib'}", "-lscabench_runtime"],
            check=True,
        )
        names = ("clocks", "record", "counters", "counted_before", "gauge", "queue", "queue_counted", "latency")
        runs = []
        for _ in range(5):
            out = subprocess.run([str(program), str(Path(tmp) / "r.rec"), str(count)], capture_output=True, text=True)
            runs.append(dict(zip(names, map(float, out.stdout.split()), strict=True)))
        return {name: min(r[name] for r in runs) for name in names}


class Timed:
    """Wraps a function of a module and adds each call's time to `seconds`."""

    def __init__(self, module, name):
        self.module, self.name, self.seconds = module, name, 0.0
        self.original = getattr(module, name)

    def __enter__(self):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return self.original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        setattr(self.module, self.name, timed)
        return self

    def __exit__(self, *exc):
        setattr(self.module, self.name, self.original)


def one_run(spec, traced: bool, out: Path):
    """(run wall s, journeys + timeline s, trace s, trace bytes, foreign load %)."""
    with Timed(journeys, "journeys") as j, Timed(journeys, "timeline") as t, Timed(trace, "write_requested") as w:
        request = trace.TraceRequest(out / "run.trace.json") if traced else None
        start = time.perf_counter()
        if request is not None:
            with trace.tracing(request):
                result = runner.run_spec(spec)
        else:
            result = runner.run_spec(spec)
        wall = time.perf_counter() - start
    size = request.written[0].stat().st_size if request is not None and request.written else 0
    return wall, j.seconds + t.seconds, w.seconds, size, result.foreign_cpu_pct or 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default="exp6", help="the spec (default exp6, its work cut to --work-us)")
    parser.add_argument("--work-us", type=int, default=200, help="every stage's work per packet (µs)")
    parser.add_argument("--packets", default="100,2000,10000", help="packet counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--records", type=int, default=1_000_000, help="records timed in the C++ loop (0: skip)")
    args = parser.parse_args()
    if args.records:
        ns = record_cost_ns(args.records, bin_dir().parent)
        print(
            f"per packet at one port: clock reads {ns['clocks']:.1f} ns, clock reads and record {ns['record']:.1f} ns, "
            f"statistics counters {ns['counters']:.1f} ns (as counted before: {ns['counted_before']:.1f} ns), "
            f"a gauge in and out {ns['gauge']:.1f} ns, "
            f"worker queue push+pop {ns['queue']:.1f} ns without its gauge / {ns['queue_counted']:.1f} ns with, "
            f"latency histogram update {ns['latency']:.1f} ns"
        )
    base = load_spec(find_spec(args.spec))
    stages = [c.name for c in base.components if "work_us" in c.properties]
    print("packets | run s without / with trace | journeys+timeline ms | trace ms | trace MB | foreign %")
    with tempfile.TemporaryDirectory(prefix="cost-of-looking-") as tmp:
        for packets in (int(p) for p in args.packets.split(",")):
            spec = apply_overrides(
                base,
                Overrides(packets=packets, properties={s: {"work_us": args.work_us} for s in stages}),
                {"packets": "--packets", "properties": "--set"},
            )
            rows = {False: [], True: []}
            for _ in range(args.repeats):
                for traced in (False, True):
                    rows[traced].append(one_run(spec, traced, Path(tmp)))
            med = lambda traced, i: statistics.median(r[i] for r in rows[traced])  # noqa: E731
            print(
                f"{packets} | {med(False, 0):.2f} / {med(True, 0):.2f} | {1e3 * med(False, 1):.1f} | "
                f"{1e3 * med(True, 2):.1f} | {med(True, 3) / 1e6:.2f} | "
                f"{max(r[4] for r in rows[False] + rows[True]):.0f}"
            )


if __name__ == "__main__":
    main()

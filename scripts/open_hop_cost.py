"""What a Python hop costs inside a pipeline: experiments/open/pyline.toml
(producer -> C++ stage1 -> Python stage2 -> C++ stage3 -> sink, two-way,
work none) against pyline-cpp.toml, the same with a C++ stage2, run in
turn, `--runs` times per packet size, each run under the measurement guard
(it waits for a quiet machine and redoes a run that others disturbed).

Per variant and packet size: the CPU per packet of each stage's process over
the measured window (stage2's is the Python program's in pyline), and the
time of the last packet at the sink, both as the median and the range of the
runs; then what the Python stage2 adds, paired run by run with the C++ run
beside it (the two share whatever the machine was doing then). Prints
Markdown tables, and with --json writes every run's figures.

    .venv/bin/python scripts/open_hop_cost.py [--runs 5] [--packets 5000] [--samples 16,1024] [--cores all|0,..]
                                              [--json F]
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

from scabench.measure.guard import Guard, GuardSettings
from scabench.model.checks import parse_cores
from scabench.model.load import load_spec
from scabench.model.overrides import Overrides, apply_overrides
from scabench.run.runner import run_spec

OPEN = Path(__file__).resolve().parents[1] / "experiments" / "open"
VARIANTS = {"Python stage2": OPEN / "pyline.toml", "C++ stage2": OPEN / "pyline-cpp.toml"}
STAGES = ("stage1", "stage2", "stage3", "sink")


def once(path, packets, samples, cores):
    spec = apply_overrides(
        load_spec(path),
        Overrides(packets=packets, cores=cores, properties={"producer": {"samples": samples}}),
        {"packets": "--packets", "properties": "--samples"},
    )
    result = run_spec(spec)
    stages = {s.name: s for s in result.stages}
    assert all(stages[n].received == packets for n in STAGES), f"{path.name}: packets lost"
    return {
        "cpu_per_packet_us": {n: stages[n].cpu_per_packet_us for n in STAGES},
        "last_packet_ms": stages["sink"].last_packet_ms,
        "foreign_cpu_pct": result.foreign_cpu_pct,
    }


def spread(values, digits=1):
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--packets", type=int, default=5000)
    parser.add_argument("--samples", default="16,1024")
    parser.add_argument("--cores", default="all")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cores = parse_cores(args.cores, "--cores")
    guard = Guard(
        GuardSettings(quiet_below_pct=10.0, quiet_wait_s=60.0, redo_above_pct=10.0, max_redos=2),
        cores=cores,
        log=lambda m: print(m, file=sys.stderr),
    )
    runs = {}
    for samples in (int(s) for s in args.samples.split(",")):
        for i in range(args.runs):
            for variant, path in VARIANTS.items():  # in turn, so that a slow spell hits both
                kept = guard.measure(
                    lambda: once(path, args.packets, samples, cores),
                    foreign_of=lambda r: r["foreign_cpu_pct"],
                    label=f"{variant} {samples}",
                )
                runs.setdefault((samples, variant), []).append({**kept.value, "attempts": kept.attempts})
                print(
                    f"{variant}, {samples} samples, run {i + 1}: stage2 "
                    f"{kept.value['cpu_per_packet_us']['stage2']:.1f} µs/packet, last packet "
                    f"{kept.value['last_packet_ms']:.0f} ms",
                    file=sys.stderr,
                )
    print(f"| samples | variant | {' | '.join(f'{n} CPU/packet (µs)' for n in STAGES)} | last packet (ms) |")
    print("|---|---|" + "---|" * (len(STAGES) + 1))
    for (samples, variant), kept in runs.items():
        cpu = [spread([r["cpu_per_packet_us"][n] for r in kept]) for n in STAGES]
        print(f"| {samples} | {variant} | {' | '.join(cpu)} | {spread([r['last_packet_ms'] for r in kept], 0)} |")
    print("\n| samples | stage2 CPU/packet, Python - C++ (µs) | Python / C++ | last packet, Python - C++ (ms) |")
    print("|---|---|---|---|")
    for samples in sorted({s for s, _ in runs}):
        pairs = list(zip(runs[(samples, "Python stage2")], runs[(samples, "C++ stage2")]))
        py_cpp = [(p["cpu_per_packet_us"]["stage2"], c["cpu_per_packet_us"]["stage2"]) for p, c in pairs]
        print(
            f"| {samples} | {spread([p - c for p, c in py_cpp])} | {spread([p / c for p, c in py_cpp], 2)} | "
            f"{spread([p['last_packet_ms'] - c['last_packet_ms'] for p, c in pairs], 0)} |"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                [{"samples": s, "variant": v, "cores": cores, "runs": r} for (s, v), r in runs.items()], indent=1
            )
        )


if __name__ == "__main__":
    main()

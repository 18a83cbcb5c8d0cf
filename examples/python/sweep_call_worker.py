"""The paper's question for a pipeline: which messaging semantics keeps it
busiest without reordering packets? A sweep of call (one-way, two-way) ×
worker thread (none, depth 64) over the paper's exp6, or any spec, each
point measured K times under the measurement guard; it prints the table
and the answer: the fastest configuration whose policies guarantee order
and that kept every packet in order in every run.

    python examples/python/sweep_call_worker.py                       # exp6, 200 packets, 3 runs per point
    python examples/python/sweep_call_worker.py --spec my-spec.toml --runs 5 --out results/my-sweep
    python examples/python/sweep_call_worker.py --spec experiments/sad/waveforms/exp6/exp6.sad.xml

Exit status: 0, 1 when a run failed, 2 on bad input (one line)."""

import argparse
import json
import sys
from pathlib import Path

import scabench

GRID = {"policy.call": ["oneway", "twoway"], "policy.worker": [False, True]}


def positive(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description="A sweep of call x worker: the fastest in-order configuration.")
    parser.add_argument("--spec", default="exp6", help="a spec's name or path, or a SAD (default exp6)")
    parser.add_argument("--packets", type=positive, default=200, help="packets per run (default 200)")
    parser.add_argument("--runs", type=positive, default=3, help="runs per point (default 3)")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=120.0,
        metavar="S",
        help="how long to wait for a quiet machine before each run (s)",
    )
    parser.add_argument("--out", help="a folder for results.json; the same folder again resumes the sweep")
    parser.add_argument("--json", metavar="PATH", help="write the sweep here")
    args = parser.parse_args(argv)

    try:
        wf = scabench.load(args.spec)
        sweep = wf.sweep(
            GRID, runs=args.runs, packets=args.packets, quiet_wait_s=args.quiet_wait, out=args.out, progress=True
        )
    except scabench.RunError as exc:
        print(f"run failed: {exc}", file=sys.stderr)
        return 1
    except scabench.ScabenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(scabench.text(sweep))
    best = sweep.best
    if best is not None:
        # The answer, typed: its settings and its runs' figures.
        summary = best.summary()
        print(
            f"answer: {best.settings} (last packet median {summary['last_packet_ms'].median:.1f} ms "
            f"over {summary['last_packet_ms'].n} run(s))"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(sweep.as_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The paper's experiment 6 built in code: experiments/paper/exp6.toml as
Python. A producer that does not wait sends packets of 1024 doubles through
three stages of 5 ms of CPU work each, with two-way calls and a worker
thread on every connection.

    python examples/python/exp6.py --packets 200              # one run, its table
    python examples/python/exp6.py --runs 5 --json exp6.json  # five guarded runs and their statistics
    python examples/python/exp6.py --cores 0                  # the single-core set-up
    python examples/python/exp6.py --toml                     # the spec it builds, as TOML

Exit status: 0, 1 when the run failed, 2 on bad input (one line)."""

import argparse
import json
import sys
from pathlib import Path

import scabench


def exp6(packets=1000):
    """exp6.toml, built in code: scabench.load("exp6") gives an equal waveform."""
    wf = scabench.Waveform(
        "exp6",
        title="two-way, producer does not wait, worker thread",
        sample_type="double",
        transport="tcp",
        cores="all",
    )
    producer = wf.component("producer", "producer", packets=packets, samples=1024, period_us=0)
    stages = [wf.component(f"stage{i}", "stage", work="cpu", work_us=5000) for i in (1, 2, 3)]
    wf.chain(producer, *stages)  # out -> in, in this order
    wf.policy(call="twoway", dispatch="pool", worker=True)  # every connection
    return wf


def positive(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def cpus(text):
    return [int(c) for c in text.split(",")]


def main(argv=None):
    parser = argparse.ArgumentParser(description="The paper's experiment 6, built in code, run over real processes.")
    parser.add_argument("--packets", type=positive, default=1000, help="packets the producer sends (default 1000)")
    parser.add_argument("--cores", type=cpus, help='CPUs to run on, e.g. "0" or "0,1" (default: all)')
    parser.add_argument("--runs", type=positive, help="K runs under the measurement guard, with their statistics")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=120.0,
        metavar="S",
        help="with --runs: how long to wait for a quiet machine before each run (s)",
    )
    parser.add_argument("--json", metavar="PATH", help="write the result here")
    parser.add_argument("--toml", action="store_true", help="print the spec as TOML and run nothing")
    args = parser.parse_args(argv)

    wf = exp6(args.packets)
    if args.cores:
        wf.settings(cores=args.cores)
    if args.toml:
        print(wf.to_toml(), end="")
        return 0
    try:
        if args.runs:
            result = wf.run(args.runs, quiet_wait_s=args.quiet_wait, progress=True)
        else:
            result = wf.run()
    except scabench.RunError as exc:
        print(f"run failed: {exc}", file=sys.stderr)
        return 1
    except scabench.ScabenchError as exc:  # a bad value (--cores 9): the spec's one line
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(scabench.text(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result.as_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

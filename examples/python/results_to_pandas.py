"""A benchmark's results as tables: a row per run, a row per component of
every run, and a row per headline figure's summary. Each is a list of flat
dicts, which pandas.DataFrame takes as it is; with pandas installed this
prints the DataFrames and the median latency per component, and without it
the tables are written as CSV all the same (--out).

    python examples/python/results_to_pandas.py --runs 5 --out results/tables

Exit status: 0, 1 when a run failed, 2 on bad input (one line)."""

import argparse
import csv
import sys
from pathlib import Path

import scabench


def pipeline():
    """A producer and two stages of 1 ms, one-way calls resequenced under credits."""
    wf = scabench.Waveform("two-stages", cores="all")
    producer = wf.component("producer", "producer", packets=200, samples=256, period_us=0)
    first = wf.component("stage1", "stage", work="cpu", work_us=1000)
    second = wf.component("stage2", "stage", work="cpu", work_us=1000)
    wf.chain(producer, first, second)
    wf.policy(call="oneway", ordering="resequence", flow="credits(16)")
    return wf


def write_csv(rows, path):
    """Rows that may not all have the same keys (a producer's and a stage's): every key a column."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def positive(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description="A benchmark's results as tables (pandas if installed, CSV).")
    parser.add_argument("--packets", type=positive, default=200, help="packets per run (default 200)")
    parser.add_argument("--runs", type=positive, default=3, help="runs (default 3)")
    parser.add_argument(
        "--quiet-wait",
        type=float,
        default=120.0,
        metavar="S",
        help="how long to wait for a quiet machine before each run (s)",
    )
    parser.add_argument("--out", default="results/tables", help="folder for runs.csv, stages.csv, summary.csv")
    args = parser.parse_args(argv)

    try:
        bench = pipeline().run(args.runs, packets=args.packets, quiet_wait_s=args.quiet_wait, progress=True)
    except scabench.RunError as exc:
        print(f"run failed: {exc}", file=sys.stderr)
        return 1
    except scabench.ScabenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    tables = {"runs": bench.rows(), "stages": bench.stage_rows(), "summary": bench.summary_rows()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        print(f"{name}: {len(rows)} rows -> {write_csv(rows, out / f'{name}.csv')}")
    try:
        import pandas
    except ImportError:
        print("pandas is not installed: the tables are the CSV files above")
        return 0
    frames = {name: pandas.DataFrame(rows) for name, rows in tables.items()}
    print(frames["summary"].to_string(index=False))
    stages = frames["stages"][frames["stages"]["role"] == "stage"]
    print(
        stages.groupby("component")[["last_packet_ms", "latency_in_stage_us_p50", "latency_in_stage_us_p99"]]
        .median()
        .to_string()
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

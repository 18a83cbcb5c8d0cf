"""What the live view (`scabench run --live`, run/live.py) costs the
command's process per sample, by how many new packets each component wrote
since the last: record files of four components written into a temporary
folder as a run's grow, their headers advanced step by step, and
LiveSampler.sample() timed on the process's CPU clock. The components pay
nothing for the view (it reads the records they write anyway), so this is
the whole cost of looking (docs/findings/cost-of-looking.md).

    .venv/bin/python scripts/live_view_cost.py
    .venv/bin/python scripts/live_view_cost.py --steps 100,1000,10000 --samples 50
"""

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from scabench.model.policy import parse_policy
from scabench.model.spec import Component, Connection, Spec
from scabench.run.live import LiveSampler
from scabench.run.records import HEADER, RECORD

NAMES = ("producer", "stage1", "stage2", "sink")


def _spec(packets: int) -> Spec:
    kinds = dict(zip(NAMES, ("producer", "stage", "stage", "sink"), strict=True))
    components = [
        Component(n, k, {"packets": packets, "samples": 1024} if k == "producer" else {}) for n, k in kinds.items()
    ]
    connections = [Connection((a, "out"), (b, "in"), parse_policy({})) for a, b in zip(NAMES, NAMES[1:], strict=False)]
    return Spec(Path("live.toml"), {}, "double", "tcp", [0], False, 60.0, components, connections, [[n] for n in NAMES])


def _write(path: Path, n: int) -> None:
    header = np.zeros(1, dtype=HEADER)
    header["magic"], header["header_size"], header["record_size"], header["capacity"] = (
        b"SCABREC2",
        HEADER.itemsize,
        RECORD.itemsize,
        n,
    )
    body = np.zeros(n, dtype=RECORD)
    t = time.monotonic_ns() + np.arange(n, dtype=np.int64) * 100_000
    body["sequence"], body["arrive_ns"], body["done_ns"], body["thread_id"] = np.arange(n), t, t + 10_000, 7
    path.write_bytes(header.tobytes() + body.tobytes())


def _advance(folder: Path, to: int) -> None:
    for name in NAMES:
        header = np.memmap(folder / f"{name}.rec", dtype=HEADER, mode="r+", shape=(1,))
        header[0]["claimed"] = header[0]["completed"] = to
        header.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="100,1000,10000", help="new packets per component per sample")
    parser.add_argument("--samples", type=int, default=50)
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    packets = max(steps) * args.samples
    with tempfile.TemporaryDirectory(prefix="scabench-live-cost-") as tmp:
        folder = Path(tmp)
        for name in NAMES:
            _write(folder / f"{name}.rec", packets)
        for step in steps:
            _advance(folder, 0)
            sampler = LiveSampler(_spec(packets), folder)
            cpu_ms = []
            for k in range(1, args.samples + 1):
                _advance(folder, k * step)
                start = time.process_time()
                sampler.sample()
                cpu_ms.append((time.process_time() - start) * 1000.0)
            print(
                f"{step:>6} new packets per component per sample: CPU per sample "
                f"median {statistics.median(cpu_ms):.2f} ms, max {max(cpu_ms):.2f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

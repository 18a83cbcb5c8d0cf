"""Fan-out over real processes: one uses port connected to two receivers in
separate hosts, one of them slow, under each fanout policy. The spec layer
does not say a fan-out yet, so the test writes the plan itself: the plan of
a spec with two producers (producer -> fast, producer2 -> slow -> end), with
producer2 taken out and its hop given to producer's port, handed to
scabench-launch as the runner would hand it."""

import json
import subprocess

import numpy as np
import pytest

from scabench.model.load import load_spec
from scabench.paths import program
from scabench.run.plan import build_assembly
from scabench.run.records import read_records

PACKETS = 30

SPEC = f"""chain = ["producer", "fast"]
[run]
transport = "tcp"
[[component]]
name = "producer"
kind = "producer"
packets = {PACKETS}
samples = 64
period_us = 2000
[[component]]
name = "producer2"
kind = "producer"
packets = {PACKETS}
samples = 64
[[component]]
name = "fast"
kind = "sink"
[[component]]
name = "slow"
kind = "stage"
work = "sleep"
work_us = 50000
[[component]]
name = "end"
kind = "sink"
[[connection]]
from = "producer2.out"
to = "slow.in"
[[connection]]
from = "slow.out"
to = "end.in"
"""


def run_fanout(write_spec, tmp_path, fanout, depth):
    """Runs producer.out -> {fast.in, slow.in} with `fanout`; the run
    directory, with its records and connection files."""
    spec = load_spec(write_spec(SPEC))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    plan = build_assembly(spec, run_dir, 60)
    plan["hosts"] = [h for h in plan["hosts"] if h["components"][0]["name"] != "producer2"]
    keys = {"out.fanout": fanout, "out.fanout_depth": depth}
    for host in plan["hosts"]:
        for c in host["components"]:
            if c["name"] == "producer":
                c["properties"].update(keys)
    first = plan["connections"][0]
    assert first["id"] == "producer.out->fast.in"
    first["uses"]["properties"].update(keys)
    hop = next(h for h in plan["connections"] if h["uses"]["component"] == "producer2")
    hop["id"] = "producer.out->slow.in"
    hop["uses"] = json.loads(json.dumps(first["uses"]))  # the same port, the same keys
    (run_dir / "assembly.json").write_text(json.dumps(plan, indent=2))
    proc = subprocess.run(
        [str(program("scabench-launch")), str(run_dir / "assembly.json"), str(run_dir / "manifest.json")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return run_dir


def uses_counts(run_dir):
    doc = json.loads((run_dir / "producer.connections.json").read_text())
    return {c["connection_id"]: c for c in doc["uses"]}


def in_order(seq):
    return bool(np.all(np.diff(seq.astype(np.int64)) > 0))


@pytest.mark.parametrize("fanout", ["sequential", "parallel"])
def test_every_receiver_gets_every_packet_in_order(write_spec, tmp_path, fanout):
    run_dir = run_fanout(write_spec, tmp_path, fanout, depth=4)
    for name in ("fast", "slow", "end"):
        r = read_records(run_dir / f"{name}.rec")
        assert r.sequence.size == PACKETS and in_order(r.sequence), name
    counts = uses_counts(run_dir)
    assert list(counts) == ["producer.out->fast.in", "producer.out->slow.in"]
    for c in counts.values():
        assert (c["fanout"], c["sent"], c["dropped"], c["unsent"]) == (fanout, PACKETS, 0, 0), c
    if fanout == "parallel":
        assert counts["producer.out->slow.in"]["queue_peak"] <= 4
    provides = json.loads((run_dir / "slow.connections.json").read_text())["provides"]
    assert provides == [{"port": "in", "number": 0}]


def test_drop_loses_packets_only_for_the_slow_receiver(write_spec, tmp_path):
    # The producer offers a packet every 2 ms; the slow stage takes 50 ms a
    # packet, so its queue of 8 overflows, while the fast sink keeps up. What
    # each connection's queue dropped is counted, the rest arrives in order,
    # and the slow chain still ends its stream.
    run_dir = run_fanout(write_spec, tmp_path, "drop", depth=8)
    fast, slow, end = (read_records(run_dir / f"{n}.rec") for n in ("fast", "slow", "end"))
    counts = uses_counts(run_dir)
    to_slow, to_fast = counts["producer.out->slow.in"], counts["producer.out->fast.in"]
    for c, r in ((to_fast, fast), (to_slow, slow)):
        assert c["fanout"] == "drop" and c["sent"] + c["dropped"] == PACKETS and c["queue_peak"] <= 8, c
        assert r.sequence.size == c["sent"] and in_order(r.sequence)
    assert to_slow["dropped"] > to_fast["dropped"]
    assert end.sequence.size == slow.sequence.size and in_order(end.sequence)

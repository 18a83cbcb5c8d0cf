"""Fan-out over real processes: one uses port connected to two receivers in
separate hosts, one of them slow, under each fanout policy, run as any spec
is run (producer -> fast, producer -> slow -> end), over every transport a
policy's semantics must hold over and collocated, and judged by the run's
figures: each connection's counts and what came in on it, each stage's
packets and order, and whether the run is clean."""

import pytest

from scabench.model.load import load_spec
from scabench.run.runner import run_spec

PACKETS = 30

SPEC = f"""[run]
transport = "tcp"
[[component]]
name = "producer"
kind = "producer"
packets = {PACKETS}
samples = 64
period_us = 2000
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
from = "producer.out"
to = "fast.in"
[[connection]]
from = "producer.out"
to = "slow.in"
[[connection]]
from = "slow.out"
to = "end.in"
"""


# Where the hops go: each transport between processes, and collocated (None).
PLACES = pytest.mark.parametrize("where", ["tcp", "shm", None], ids=["tcp", "shm", "collocated"])


def run_fanout(write_spec, fanout, depth, where):
    """Runs producer.out -> {fast.in, slow.in} with `fanout`, over the
    transport `where` or collocated (None): the result, as a dict."""
    spec = load_spec(write_spec(SPEC + f'[policy]\nfanout = "{fanout}"\nfanout_depth = {depth}\n'))
    spec = spec.with_collocated(where="test") if where is None else spec.with_transport(where, where="test")
    doc = run_spec(spec).as_dict()
    assert doc["status"] == "ok", doc.get("error")
    return doc


def hops(doc):
    return {c["id"]: c for c in doc["connections"]}


def stage(doc, name):
    return next(s for s in doc["stages"] if s["name"] == name)


@PLACES
@pytest.mark.parametrize("fanout", ["sequential", "parallel"])
def test_every_receiver_gets_every_packet_in_order(write_spec, fanout, where):
    doc = run_fanout(write_spec, fanout, depth=4, where=where)
    assert doc["clean"] is True, doc.get("missing")
    for name in ("fast", "slow", "end"):
        assert stage(doc, name)["received"] == PACKETS and stage(doc, name)["reordered_from_previous"] == 0, name
    counts = hops(doc)
    assert list(counts) == ["producer.out->fast.in", "producer.out->slow.in", "slow.out->end.in"]
    for c in list(counts.values())[:2]:
        assert (c["fanout"], c["sent"], c["dropped"], c["unsent"], c["received"]) == (fanout, PACKETS, 0, 0, PACKETS)
    if fanout == "parallel":
        assert counts["producer.out->slow.in"]["queue_peak"] <= 4


@PLACES
def test_drop_loses_packets_only_for_the_slow_receiver_and_the_run_is_clean(write_spec, where):
    # The producer offers a packet every 2 ms; the slow stage takes 50 ms a
    # packet, so its queue of 8 overflows, while the fast sink keeps up. What
    # each connection's queue dropped is counted, the rest arrives in order,
    # and the slow chain still ends its stream (in order: no packet before
    # one that came before it; the dropped leave gaps). The dropped packets were
    # dropped on purpose: reported as dropped, not missing.
    doc = run_fanout(write_spec, "drop", depth=8, where=where)
    counts = hops(doc)
    to_slow, to_fast = counts["producer.out->slow.in"], counts["producer.out->fast.in"]
    for c, name in ((to_fast, "fast"), (to_slow, "slow")):
        assert c["fanout"] == "drop" and c["sent"] + c["dropped"] == PACKETS and c["queue_peak"] <= 8, c
        assert stage(doc, name)["received"] == c["received"] == c["sent"]
        assert stage(doc, name)["reordered_from_original"] == 0
    assert to_slow["dropped"] > to_fast["dropped"]
    assert stage(doc, "end")["received"] == stage(doc, "slow")["received"]
    assert stage(doc, "end")["reordered_from_original"] == 0
    assert doc["clean"] is True and doc.get("missing") is None
    dropped = {p["sink"]: p["dropped"] for p in doc["paths"]}
    assert dropped["end"] == to_slow["dropped"] and dropped["fast"] == to_fast["dropped"]

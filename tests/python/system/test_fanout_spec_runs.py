"""Fan-out written as a spec (one uses port, two [[connection]] tables) and
run like any other: over every transport a policy's semantics must hold
over, and collocated. What each fanout guarantees, whatever the timing: no
packet lost, each connection in order, and with drop every packet either
delivered or counted dropped on its own connection. (Which packets a slow
consumer misses is timing; that it misses some is
tests/cpp/fanout_test.cpp's, where the consumer is held on a latch.)"""

from pathlib import Path

import pytest

from scabench.model.load import load_spec
from scabench.run.runner import run_spec

SPEC = Path(__file__).resolve().parents[3] / "experiments" / "graphs" / "slow-consumer.toml"
PACKETS = 40
DEPTH = 4


def fanout_run(transport: str | None, fanout: str) -> dict:
    """slow-consumer.toml with few packets, sent flat out, the slow stage
    sleeping 20 ms a packet; over `transport`, or collocated if None."""
    spec = load_spec(SPEC).with_packets(PACKETS, where="test")
    spec = spec.with_properties("producer", {"period_us": 0}, where="test")
    spec = spec.with_properties("slow", {"work_us": 20000}, where="test")
    spec = spec.with_policy({"fanout": fanout, "fanout_depth": DEPTH}, where="test")
    spec = spec.with_collocated(where="test") if transport is None else spec.with_transport(transport, where="test")
    return run_spec(spec).as_dict()


def by(items: list[dict], key: str, value: str) -> dict:
    return next(item for item in items if item[key] == value)


def path(doc: dict, sink: str) -> dict:
    return next(p for p in doc["paths"] if p["source"] == "producer" and p["sink"] == sink)


@pytest.mark.parametrize("fanout", ["sequential", "parallel"])
def test_sequential_and_parallel_deliver_every_packet_in_order(transport, fanout):
    doc = fanout_run(transport, fanout)
    assert doc["status"] == "ok" and doc["clean"] is True, doc.get("problems")
    for sink in ("fast", "slow"):
        p = path(doc, sink)
        assert (p["delivered"], p["dropped"], p["lost"], p["reordered"]) == (PACKETS, 0, 0, 0), p
        conn = by(doc["connections"], "id", f"producer.out->{sink}.in")
        assert (conn["sent"], conn["dropped"], conn["received"]) == (PACKETS, 0, PACKETS), conn
        assert conn["fanout"] == fanout
        if fanout == "parallel":
            assert conn["queue_peak"] <= DEPTH, conn


@pytest.mark.parametrize("where", ["tcp", "shm", None], ids=["tcp", "shm", "collocated"])
def test_drop_delivers_or_counts_every_packet_on_each_connection(where):
    doc = fanout_run(where, "drop")
    assert doc["status"] == "ok", doc.get("problems")
    # Sent flat out, even the fast stage may fall a queue behind and drop.
    for sink in ("fast", "slow"):
        p = path(doc, sink)
        assert p["lost"] == 0 and p["reordered"] == 0, p
        assert p["delivered"] + p["dropped"] == PACKETS, p
        conn = by(doc["connections"], "id", f"producer.out->{sink}.in")
        assert conn["dropped"] == p["dropped"] and conn["sent"] == conn["received"] == p["delivered"], conn
        assert conn["queue_peak"] <= DEPTH, conn

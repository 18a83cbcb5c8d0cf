"""Fan-in: several uses ports connected to one provides port, each
connection a sequence space of its own. Specs say it with [[connection]]
tables; runs over real processes count and order per connection."""

import json

import pytest
from conftest import scabench

from scabench.errors import SpecError
from scabench.model.load import load_spec
from scabench.model.pipeline import floor_of, packets_through
from scabench.report.tables import format_run
from scabench.run.results import RunResult
from scabench.run.runner import build_assembly, run_spec


def fan_in_toml(policy, first=30, second=20, connection="", work="none", work_us=0, transport="tcp"):
    """Two producers into stage1, then stage2: a merge, and a stage after it."""
    return f"""chain = ["producer", "stage1", "stage2"]
[run]
transport = "{transport}"
[[component]]
name = "producer"
kind = "producer"
packets = {first}
samples = 64
[[component]]
name = "producer2"
kind = "producer"
packets = {second}
samples = 64
[[component]]
name = "stage1"
kind = "stage"
work = "{work}"
work_us = {work_us}
[[component]]
name = "stage2"
kind = "stage"
work = "none"
[[connection]]
from = "producer2.out"
to = "stage1.in"
{connection}
[policy]
{policy}
"""


def test_fan_in_into_a_single_dispatch_port_over_shared_memory(write_spec):
    # Two rings into one port with dispatch single: their threads take turns
    # (the host's single-thread lock), as the single-thread POA's callers do.
    policy = 'call = "oneway"\ndispatch = "single"\n'
    result = run_spec(
        load_spec(write_spec(fan_in_toml(policy, first=40, second=40, work="cpu", work_us=300, transport="shm")))
    )
    s1 = stage(result.as_dict(), "stage1")
    assert s1["received"] == 80 and s1["max_server_threads"] == 1, s1
    for c in s1["connections"]:
        assert c["reordered_from_previous"] == 0 and c["transport"] == "shm", c


def stage(doc, name):
    return next(s for s in doc["stages"] if s["name"] == name)


def test_two_producers_are_counted_and_ordered_per_connection(write_spec, transport):
    # Two-way keeps each connection's order; the two streams interleave at
    # stage1 and after it, which is not reordering: each stream is counted
    # on its own (by the stream id each producer stamps).
    result = run_spec(load_spec(write_spec(fan_in_toml('call = "twoway"\n', transport=transport))))
    doc = result.as_dict()
    assert doc["status"] == "ok" and doc["clean"] is True
    s1, s2 = stage(doc, "stage1"), stage(doc, "stage2")
    assert s1["received"] == s2["received"] == 50
    assert [(c["id"], c["sent"], c["received"]) for c in s1["connections"]] == [
        ("producer.out->stage1.in", 30, 30),
        ("producer2.out->stage1.in", 20, 20),
    ]
    for c in s1["connections"]:
        assert c["reordered_from_previous"] == c["reordered_from_original"] == 0, c
        assert c["transport"] == transport
    for s in (s1, s2):
        assert s["reordered_from_previous"] == s["reordered_from_original"] == 0, s
        assert s["output_reordered_from_previous"] == 0, s
    assert "connections" not in s2  # one connection: nothing to break down
    table = format_run(result)
    assert "stage1, per connection" in table
    assert table.count("producer2.out->stage1.in") == 2  # its policy line, and its row
    # The typed result reads back as it was written.
    assert RunResult.from_dict(json.loads(json.dumps(doc))).as_dict() == doc


def test_each_connection_has_its_own_reorder_buffer_and_credits(write_spec, transport):
    # One-way into a pool: the stage's ORB may reorder either connection's
    # packets; each connection's own reorder buffer puts its packets back in
    # its order, and each producer's credits are its own.
    policy = 'call = "oneway"\nordering = "resequence"\nflow = "credits(8)"\n'
    result = run_spec(
        load_spec(write_spec(fan_in_toml(policy, first=40, second=40, work="cpu", work_us=500, transport=transport)))
    )
    doc = result.as_dict()
    assert doc["status"] == "ok" and doc["clean"] is True
    s1 = stage(doc, "stage1")
    assert [c["received"] for c in s1["connections"]] == [40, 40]
    assert s1["skipped"] == s1["late"] == s1["duplicates"] == 0
    assert s1["output_reordered_from_previous"] == 0, s1
    assert stage(doc, "stage2")["received"] == 80


def test_a_fan_in_spec_gives_each_source_its_stream_and_the_merge_its_packets(write_spec, tmp_path):
    spec = load_spec(write_spec(fan_in_toml('call = "oneway"\n', work="cpu", work_us=5000)))
    assert [spec.component(n).properties["stream_id"] for n in ("producer", "producer2")] == [0, 1]
    assert packets_through(spec) == {"producer": 30, "producer2": 20, "stage1": 50, "stage2": 50}
    # stage1 handles 50 packets of 5 ms: 49 x 5 + 5 ms on the pipeline bound; 50 x 5 / cores on the CPU bound.
    assert floor_of(spec) == pytest.approx(max(49 * 5.0 + 5.0, 50 * 5.0 / len(spec.cores)))
    capacity = {
        c["name"]: c["properties"]["record_capacity"]
        for h in build_assembly(spec, tmp_path, 60)["hosts"]
        for c in h["components"]
    }
    assert capacity == {"producer": 46, "producer2": 36, "stage1": 66, "stage2": 66}


def test_connections_into_one_port_must_agree_on_its_keys(write_spec):
    path = write_spec(fan_in_toml('call = "oneway"\n', connection="worker = 8\n"))
    with pytest.raises(SpecError) as refused:
        load_spec(path)
    assert "producer.out->stage1.in and producer2.out->stage1.in reach one port with different worker" in str(
        refused.value
    )
    proc = scabench("run", path)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "different worker" in proc.stderr
    # Keys of the sending side may differ: each uses port has its own.
    load_spec(write_spec(fan_in_toml('call = "oneway"\n', connection='call = "twoway"\n'), name="ok.toml"))


def test_a_merge_of_two_sources_is_measured_per_path_per_stream_and_per_connection(write_spec):
    """Over real processes: each source's stream at the sink is a path of
    its own, each stream's order is counted apart at every stage, and each
    connection's packets are those its number names at the receiver."""
    result = run_spec(load_spec(write_spec(fan_in_toml('call = "twoway"\n', first=30, second=20))))
    paths = {(p.source, p.sink): p for p in result.paths}
    assert list(paths) == [("producer", "stage2"), ("producer2", "stage2")]
    for (source, _), sent in zip(paths, (30, 20)):
        p = paths[(source, "stage2")]
        assert (p.sent, p.arrivals, p.delivered, p.dropped, p.lost, p.reordered) == (sent, sent, sent, 0, 0, 0)
        assert p.latency_us.count == sent and p.latency_us.p50 > 0
    assert [(o.component, o.stream, o.received, o.reordered_from_original) for o in result.streams] == [
        ("stage1", 0, 30, 0),
        ("stage1", 1, 20, 0),
        ("stage2", 0, 30, 0),
        ("stage2", 1, 20, 0),
    ]
    hops = {h.id: h for h in result.connections}
    assert [hops[i].received for i in ("producer.out->stage1.in", "producer2.out->stage1.in")] == [30, 20]
    assert hops["stage1.out->stage2.in"].received == 50
    assert all(h.policy == "twoway" and h.rate_pps and h.latency_us_mean is not None for h in hops.values())

"""Every packet's journey (run/journeys.py), its trace file (run/trace.py)
and its timeline (report/timeline.py), on known records: a producer, a
stage with a worker, a stage without, whose times are chosen so that the
worked-out ones (work start, time queued, sending, order) are known."""

import json
from pathlib import Path

import numpy as np
import pytest
from trace_check import check_trace

from scabench.model.policy import parse_policy
from scabench.model.spec import Component, Connection, Spec
from scabench.report.timeline import draw_timeline, timeline_title
from scabench.run.journeys import journeys, timeline
from scabench.run.records import Records
from scabench.run.results import RunResult, Timeline
from scabench.run.trace import TraceRequest, chrome_trace, tracing, write_requested

US = 1000  # ns
BASE = 10_000_000_000  # the clock's value at the first send: times are taken from it


def records(sequence, arrive_us, done_us, thread, connection=None, stream=None):
    n = len(sequence)
    return Records(
        np.asarray(sequence, np.int64),
        BASE + np.asarray(arrive_us, np.int64) * US,
        BASE + np.asarray(done_us, np.int64) * US,
        np.asarray(thread, np.uint32),
        1,
        0,
        {},
        {},
        np.zeros(n, np.int64) if connection is None else np.asarray(connection, np.int64),
        np.zeros(n, np.int64) if stream is None else np.asarray(stream, np.int64),
    )


def chain_spec(policies):
    """producer -> a -> b, each connection with its policy table."""
    names = ["producer", "a", "b"]
    kinds = {"producer": "producer", "a": "stage", "b": "stage"}
    connections = [
        Connection((names[i], "out"), (names[i + 1], "in"), parse_policy(policy)) for i, policy in enumerate(policies)
    ]
    components = [Component(n, kinds[n], {}) for n in names]
    return Spec(Path("chain.toml"), {}, "float", "tcp", [0], False, 60.0, components, connections, [[n] for n in names])


def known_run():
    """Four packets. The producer sends one every 100 µs. `a` has a worker
    that works each packet 1000 µs, one at a time, so packets 1 to 3 wait
    in its queue; it sends each on 900 µs into its work. `b` (one-way, no
    worker) works on the threads that took them, and packet 1 reaches it
    late, after packet 2 and after `a` was done with it (the one-way call
    returned before b's upcall began: no sending seen)."""
    spec = chain_spec([{"call": "twoway", "worker": 8}, {"call": "oneway", "worker": False}])
    producer = records([0, 1, 2, 3], [0, 100, 200, 300], [10, 110, 210, 310], [7] * 4)
    a_start = [20, 1020, 2020, 3020]
    a = records([0, 1, 2, 3], [20, 120, 220, 320], [s + 1000 for s in a_start], [11, 11, 12, 11])
    # Records are in arrival order: 0, 2, 1, 3.
    b = records([0, 2, 1, 3], [920, 2930, 2940, 3920], [1500, 3500, 3600, 4500], [21, 22, 21, 21])
    return spec, {"producer": producer, "a": a, "b": b}, a_start


def test_work_start_where_a_worker_works_packets_in_turn_and_on_arrival_where_the_thread_does():
    spec, recs, a_start = known_run()
    j = journeys(spec, recs)
    a, b = j.of("a"), j.of("b")
    assert j.t0_ns == BASE
    assert list(a.packets.start_ns - BASE) == [s * US for s in a_start]
    assert a.tracks == ["worker (in)"] and a.deferred == {0}
    assert list(a.packets.queued) == [False, True, True, True]
    # b works each packet on the thread that took it, from its arrival.
    assert list(b.packets.start_ns) == list(b.packets.arrive_ns)
    assert sorted(b.tracks) == ["thread 21", "thread 22"] and not b.deferred
    # Out of order on arrival at b: 2 after 0, then 1 after 2 (not 2 + 1).
    assert list(b.packets.reordered) == [False, True, True, True]
    # a's sending starts where b took the packet, within a's work.
    assert [int(t - BASE) // US if t >= 0 else None for t in a.packets.send_ns] == [920, None, 2930, 3920]
    # The producer's records are its sends: sending from start to return.
    assert list(j.of("producer").packets.send_ns) == list(j.of("producer").packets.arrive_ns)


def test_trace_holds_every_packet_nested_and_linked_with_its_window():
    spec, recs, _ = known_run()
    doc = json.loads(json.dumps(chrome_trace(journeys(spec, recs), 2000, {"spec": "chain.toml"})))
    events, flows = check_trace(doc, 2000)
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {"producer", "a (stage)", "b (stage)"}
    packets = [e for e in events if e["ph"] == "X" and e["cat"] == "packet"]
    assert len(packets) == 12  # four packets at three components
    queued = [e for e in events if e["ph"] == "X" and e["cat"] == "queued"]
    assert sorted(e["args"]["sequence"] for e in queued) == [1, 2, 3]
    assert sorted(e["dur"] for e in queued) == [900, 1800, 2700]
    # A flow per packet and hop (producer->a, a->b: 8), and one per queued packet from its queue to its work.
    assert len(flows) == 8 + 3
    assert [e for e in packets if e["pid"] == 3 and e["args"]["reordered"]]
    # Counters: a's queue filled to 3 at once (packets 1, 2 and 3 all waited by 320 µs).
    queue = [e["args"]["queued"] for e in events if e["ph"] == "C" and e["name"] == "queued"]
    assert max(queue) == 3 and queue[-1] == 0
    assert doc["otherData"]["spec"] == "chain.toml"


def test_a_window_keeps_the_first_packets_and_says_so():
    spec, recs, _ = known_run()
    doc = chrome_trace(journeys(spec, recs), 2, {})
    events, _ = check_trace(doc, 2)
    assert {e["args"]["sequence"] for e in events if e["ph"] == "X" and e["cat"] == "packet"} == {0, 1}
    assert doc["otherData"]["window"] == {
        "packets": 2,
        "of": 4,
        "rule": "the first 2 packets of each stream (numbers 0 to 1)",
    }


def test_credits_outstanding_are_counted_on_a_credits_connection():
    spec = chain_spec([{"call": "oneway", "flow": "credits(4)", "worker": 8}, {"call": "oneway"}])
    _, recs, _ = known_run()
    doc = chrome_trace(journeys(spec, recs), 100, {})
    events, _ = check_trace(doc, 100)
    credits = [e for e in events if e["ph"] == "C" and e["name"].startswith("credits outstanding")]
    assert credits and credits[0]["pid"] == 1  # on the sender
    assert max(e["args"][credits[0]["name"]] for e in credits) >= 2


def test_the_runner_writes_a_trace_only_where_asked(tmp_path):
    spec, recs, _ = known_run()
    assert write_requested(spec, journeys(spec, recs), None) is None
    with tracing(TraceRequest(tmp_path / "traces", 3, per_run=True)) as request:
        write_requested(spec, journeys(spec, recs), None)
        write_requested(spec, journeys(spec, recs), None)
    assert [p.name for p in request.written] == ["001-chain.trace.json", "002-chain.trace.json"]
    check_trace(json.loads(request.written[1].read_text()), 3)


def test_timeline_keeps_the_first_packets_reads_back_and_draws(tmp_path):
    spec, recs, a_start = known_run()
    kept = timeline(journeys(spec, recs), packets=3)
    again = Timeline.from_dict(json.loads(json.dumps(kept.as_dict())))
    assert again == kept and kept.packets == 3
    lane = {lane["component"]: lane for lane in kept.lanes}
    spans = lane["a"]["spans"]
    at = {name: i for i, name in enumerate(Timeline.SPAN_FIELDS)}
    assert [s[at["sequence"]] for s in spans] == [0, 1, 2]
    assert [s[at["start_ms"]] for s in spans] == pytest.approx([t / 1000 for t in a_start[:3]])
    assert [s[at["reordered"]] for s in lane["b"]["spans"]] == [0, 1, 1]
    png = draw_timeline(kept, tmp_path / "timeline.png", timeline_title("chain", kept))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_result_without_a_timeline_reads_and_writes_unchanged():
    doc = {"status": "failed", "spec": {}, "environment": {}, "floor_ms": 1.0, "started_at": 0.0}
    result = RunResult.from_dict(doc)
    assert result.timeline is None and "timeline" not in result.as_dict()


def test_two_streams_into_a_merge_keep_their_own_packets_and_arrows():
    """Two producers (streams 1 and 2, each numbering from 0) into a merge's
    two inputs: each packet's span names its stream, and each arrow goes
    from the producer that sent it, on the connection it came in on."""
    p1, p2, m = ("p1", "out"), ("p2", "out"), "m"
    connections = [
        Connection(p1, (m, "in_a"), parse_policy({"call": "oneway"})),
        Connection(p2, (m, "in_b"), parse_policy({"call": "oneway"})),
    ]
    components = [
        Component("p1", "producer", {"stream_id": 1}),
        Component("p2", "producer", {"stream_id": 2}),
        Component("m", "merge", {}),
    ]
    spec = Spec(Path("merge.toml"), {}, "float", "tcp", [0], False, 60.0, components, connections, [["p1", "p2", "m"]])
    recs = {
        "p1": records([0, 1], [0, 100], [5, 105], [1, 1]),
        "p2": records([0, 1], [50, 150], [55, 155], [2, 2]),
        # Arrival order at the merge: p1's 0, p2's 0, p1's 1, p2's 1, on connections 0 and 1.
        "m": records([0, 0, 1, 1], [10, 60, 110, 160], [40, 90, 140, 190], [3, 3, 3, 3], [0, 1, 0, 1], [1, 2, 1, 2]),
    }
    doc = chrome_trace(journeys(spec, recs), 100, {})
    events, flows = check_trace(doc, 100)
    at_merge = [e for e in events if e["ph"] == "X" and e["cat"] == "packet" and e["pid"] == 3]
    assert [e["name"] for e in at_merge] == ["#0 s1", "#0 s2", "#1 s1", "#1 s2"]  # interleaved streams: no reordering
    arrows = sorted((f["s"]["pid"], f["f"]["ts"]) for f in flows.values())
    assert arrows == [(1, 10), (1, 110), (2, 60), (2, 160)]

"""Measurement on graphs (run/graph_figures.py) on known records: record
files written with records.py's layout and per-connection counts
(sidecars) into tmp_path, then read back and measured."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from scabench.console import text
from scabench.model.policy import parse_policy
from scabench.model.spec import Component, Connection, Spec
from scabench.report.graph import ACROSS_AT_MOST, waveform_graph, write_run_report
from scabench.report.tables import graph_view, spec_lines
from scabench.run import runner
from scabench.run.graph_figures import graph_figures, policy_label, read_sidecars
from scabench.run.records import HEADER, RECORD, read_records
from scabench.run.results import Latency, RunResult

US = 1000  # ns


def write_records(path, sequence, arrive_ns, done_ns, connection=None, stream=None, unsent=0):
    """A record file as a component writes it (records.py's HEADER and RECORD)."""
    n = len(sequence)
    header = np.zeros(1, dtype=HEADER)
    header["magic"], header["header_size"], header["record_size"] = (
        b"SCABREC2",
        HEADER.itemsize,
        RECORD.itemsize,
    )
    header["capacity"] = header["claimed"] = n
    header["max_concurrent"] = 1
    header["unsent"] = unsent
    body = np.zeros(n, dtype=RECORD)
    body["sequence"], body["arrive_ns"], body["done_ns"] = sequence, arrive_ns, done_ns
    conn = np.zeros(n, np.uint32) if connection is None else np.asarray(connection, np.uint32)
    strm = np.zeros(n, np.uint32) if stream is None else np.asarray(stream, np.uint32)
    body["flags"] = conn | (strm << 16)
    Path(path).write_bytes(header.tobytes() + body.tobytes())


def write_sidecar(run_dir, name, uses=(), provides=()):
    (run_dir / f"{name}.connections.json").write_text(json.dumps({"uses": list(uses), "provides": list(provides)}))


def uses_entry(conn_id, sent, dropped=0, fanout="sequential", queue_peak=0, blocked_ns=0):
    port = conn_id.split("->")[0].split(".")[1]
    return {
        "port": port,
        "connection_id": conn_id,
        "fanout": fanout,
        "sent": sent,
        "dropped": dropped,
        "unsent": 0,
        "queue_peak": queue_peak,
        "blocked_ns": blocked_ns,
    }


def graph_spec(kinds, edges, properties=None):
    """A resolved spec of `kinds` {name: kind} and connections "a.out->b.in",
    each component in a process of its own, built directly: the spec loader
    is not what is tested here."""
    properties = properties or {}
    components = [Component(name, kind, dict(properties.get(name, {}))) for name, kind in kinds.items()]
    connections = []
    for edge in edges:
        a, b = edge.split("->")
        connections.append(Connection(tuple(a.split(".")), tuple(b.split(".")), parse_policy({})))
    return Spec(
        Path("graph.toml"),
        {},
        "float",
        "tcp",
        [0],
        False,
        60.0,
        components,
        connections,
        [[n] for n in kinds],
    )


def measure(spec, run_dir):
    records = {c.name: read_records(run_dir / f"{c.name}.rec") for c in spec.components}
    return graph_figures(spec, records, read_sidecars(spec, run_dir))


def sent_at(n, period_us=100):
    """A source's records: packet k's send starts at k periods and takes 10 µs."""
    start = np.arange(n) * period_us * US
    return np.arange(n), start, start + 10 * US


def test_two_sources_into_a_merge_each_path_is_its_own_stream(tmp_path):
    spec = graph_spec(
        {"p1": "producer", "p2": "producer", "m": "stage", "s": "stage"},
        ["p1.out->m.in", "p2.out->m.in", "m.out->s.in"],
        {"p1": {"packets": 3, "stream_id": 0}, "p2": {"packets": 3, "stream_id": 1}},
    )
    write_records(tmp_path / "p1.rec", *sent_at(3))
    seq, start, done = sent_at(3)
    write_records(tmp_path / "p2.rec", seq, start + 50 * US, done + 50 * US)
    # m takes them interleaved, p1's on connection 0 and p2's on connection 1.
    m_seq = [0, 0, 1, 1, 2, 2]
    m_stream = [0, 1, 0, 1, 0, 1]
    m_arrive = np.array([20, 70, 120, 170, 220, 270]) * US
    write_records(tmp_path / "m.rec", m_seq, m_arrive, m_arrive + 5 * US, m_stream, m_stream)
    # s finishes p1's packet k at 100k + 40 µs, p2's at 100k + 50 + 60 µs.
    s_done = np.array([40, 110, 140, 210, 240, 310]) * US
    write_records(tmp_path / "s.rec", m_seq, s_done - 10 * US, s_done, None, m_stream)

    paths, hops, streams = measure(spec, tmp_path)

    assert [(p.source, p.sink, p.stream) for p in paths] == [
        ("p1", "s", 0),
        ("p2", "s", 1),
    ]
    p1, p2 = paths
    assert (p1.sent, p1.arrivals, p1.delivered, p1.lost, p1.dropped, p1.reordered) == (
        3,
        3,
        3,
        0,
        0,
        0,
    )
    assert p1.latency_us.count == 3 and p1.latency_us.max == pytest.approx(40.0)
    assert p2.latency_us.p50 == pytest.approx(60.0) and p2.latency_us.count == 3
    # The two streams interleave at m and s: no reordering in either.
    assert [(o.component, o.stream, o.received, o.reordered_from_original) for o in streams] == [
        ("m", 0, 3, 0),
        ("m", 1, 3, 0),
        ("s", 0, 3, 0),
        ("s", 1, 3, 0),
    ]
    # Each connection into m: its own packets, by number.
    assert [h.received for h in hops] == [3, 3, 6]
    assert hops[0].latency_us_mean == pytest.approx(10.0)  # arrive at m 20 µs, p1 done 10 µs
    assert hops[1].latency_us_mean == pytest.approx(10.0)


def fan_out(tmp_path, b_received, dropped):
    """p -> t, whose out feeds a and b; a drop fan-out on t's port: b is
    handed `dropped` fewer packets, and receives the first `b_received`."""
    spec = graph_spec(
        {"p": "producer", "t": "stage", "a": "stage", "b": "stage"},
        ["p.out->t.in", "t.out->a.in", "t.out->b.in"],
        {"p": {"packets": 4}},
    )
    write_records(tmp_path / "p.rec", *sent_at(4))
    seq, start, _ = sent_at(4)
    write_records(tmp_path / "t.rec", seq, start + 20 * US, start + 30 * US)
    write_records(tmp_path / "a.rec", seq, start + 40 * US, start + 50 * US)
    write_records(
        tmp_path / "b.rec",
        seq[:b_received],
        start[:b_received] + 60 * US,
        start[:b_received] + 90 * US,
    )
    write_sidecar(
        tmp_path,
        "t",
        uses=[
            uses_entry("t.out->a.in", 4, fanout="drop"),
            uses_entry(
                "t.out->b.in",
                4 - dropped,
                dropped,
                fanout="drop",
                queue_peak=3,
                blocked_ns=0,
            ),
        ],
        provides=[{"port": "in", "number": 0}],
    )
    return spec


def test_a_fan_out_to_two_sinks_tells_dropped_from_lost(tmp_path):
    spec = fan_out(tmp_path, b_received=3, dropped=1)
    paths, hops, _ = measure(spec, tmp_path)
    to_a, to_b = paths
    assert (to_a.sink, to_a.arrivals, to_a.dropped, to_a.lost) == ("a", 4, 0, 0)
    assert to_a.latency_us.max == pytest.approx(50.0)
    assert (to_b.sink, to_b.arrivals, to_b.dropped, to_b.lost) == ("b", 3, 1, 0)
    assert to_b.latency_us.p50 == pytest.approx(90.0)
    assert [(h.id, h.fanout, h.sent, h.dropped, h.queue_peak, h.received) for h in hops] == [
        ("p.out->t.in", "sequential", None, None, None, 4),  # no sidecar: the policy's fan-out
        ("t.out->a.in", "drop", 4, 0, 0, 4),
        ("t.out->b.in", "drop", 3, 1, 3, 3),
    ]
    # 3 packets 100 µs apart: 2 intervals in 200 µs.
    assert hops[2].rate_pps == pytest.approx(10_000.0)
    assert hops[2].latency_us_mean == pytest.approx(30.0)  # arrive at b (k·100 + 60) - t done (k·100 + 30)


def test_a_packet_missing_beyond_the_dropped_is_lost(tmp_path):
    spec = fan_out(tmp_path, b_received=2, dropped=1)
    to_b = measure(spec, tmp_path)[0][1]
    assert (to_b.arrivals, to_b.dropped, to_b.lost) == (2, 1, 1)


def test_a_diamond_counts_each_arrival_and_tells_the_routes_apart_by_connection(
    tmp_path,
):
    # p -> t -> x, y -> m: every packet reaches m twice, once per route,
    # on connection 0 (from x) and 1 (from y), the copies interleaved.
    spec = graph_spec(
        {"p": "producer", "t": "stage", "x": "stage", "y": "stage", "m": "stage"},
        ["p.out->t.in", "t.out_a->x.in", "t.out_b->y.in", "x.out->m.in", "y.out->m.in"],
        {"p": {"packets": 3}},
    )
    seq, start, done = sent_at(3)
    for name in ("p", "t", "x", "y"):
        write_records(tmp_path / f"{name}.rec", seq, start, done)
    m_seq = [0, 1, 0, 2, 1, 2]
    m_conn = [0, 0, 1, 0, 1, 1]
    m_done = np.array([30, 130, 150, 230, 250, 350]) * US
    write_records(tmp_path / "m.rec", m_seq, m_done - 5 * US, m_done, m_conn)
    (path,) = measure(spec, tmp_path)[0]
    assert (path.routes, path.arrivals, path.delivered, path.lost, path.reordered) == (
        2,
        6,
        3,
        0,
        0,
    )
    assert path.latency_us.count == 6 and path.latency_us.max == pytest.approx(150.0)
    # A copy reordered within its own route is counted.
    write_records(tmp_path / "m.rec", [1, 0, 0, 2, 1, 2], m_done - 5 * US, m_done, m_conn)
    assert measure(spec, tmp_path)[0][0].reordered == 2


def test_reordering_is_counted_per_stream_at_every_component(tmp_path):
    spec = graph_spec(
        {"p1": "producer", "p2": "producer", "s": "stage"},
        ["p1.out->s.in", "p2.out->s.in"],
        {"p1": {"packets": 4, "stream_id": 0}, "p2": {"packets": 4, "stream_id": 1}},
    )
    for name in ("p1", "p2"):
        write_records(tmp_path / f"{name}.rec", *sent_at(4))
    # Stream 0 in order, stream 1 with 2 and 1 swapped; finished in arrival order.
    s_seq = [0, 0, 1, 2, 2, 1, 3, 3]
    s_stream = [0, 1, 0, 1, 0, 1, 0, 1]
    t = np.arange(8) * 50 * US + 500 * US
    write_records(tmp_path / "s.rec", s_seq, t, t + US, s_stream, s_stream)
    paths, _, streams = measure(spec, tmp_path)
    assert [(o.stream, o.reordered_from_previous, o.reordered_from_original) for o in streams] == [(0, 0, 0), (1, 3, 2)]
    assert [p.reordered for p in paths] == [0, 2]


def test_a_stall_in_a_branch_is_found(tmp_path):
    # p -> t -> a, b: b holds a packet for 1 s while nothing else finishes anything.
    spec = graph_spec(
        {"p": "producer", "t": "stage", "a": "stage", "b": "stage"},
        ["p.out->t.in", "t.out->a.in", "t.out->b.in"],
        {
            "p": {"packets": 3},
            "t": {"work_us": 10},
            "a": {"work_us": 10},
            "b": {"work_us": 10},
        },
    )
    seq, start, done = sent_at(3)
    for name in ("p", "t", "a"):
        write_records(tmp_path / f"{name}.rec", seq, start + 20 * US, done + 20 * US)
    b_done = done + 20 * US
    b_done[2] += 1_000_000 * US
    write_records(tmp_path / "b.rec", seq, start + 20 * US, b_done)
    records = {c.name: read_records(tmp_path / f"{c.name}.rec") for c in spec.components}
    stalls = runner._components(spec, records)[2]
    assert [s["component"] for s in stalls] == ["b"] and stalls[0]["for_ms"] >= 999


def test_a_chains_one_path_is_its_end_to_end_latency(tmp_path):
    spec = graph_spec(
        {"p": "producer", "s1": "stage", "s2": "stage"},
        ["p.out->s1.in", "s1.out->s2.in"],
        {"p": {"packets": 5}},
    )
    seq, start, done = sent_at(5)
    write_records(tmp_path / "p.rec", seq, start, done)
    write_records(tmp_path / "s1.rec", seq, start + 20 * US, start + 40 * US)
    jitter = np.array([0, 30, 5, 70, 12]) * US
    write_records(tmp_path / "s2.rec", seq, start + 50 * US, start + 80 * US + jitter)
    records = {c.name: read_records(tmp_path / f"{c.name}.rec") for c in spec.components}
    end_to_end = runner._components(spec, records)[4]
    (path,) = measure(spec, tmp_path)[0]
    assert path.latency_us == Latency.of(end_to_end) and path.latency_us.count == 5


def test_a_result_keeps_its_graph_figures_and_reads_files_without_them(tmp_path):
    spec = fan_out(tmp_path, b_received=3, dropped=1)
    paths, hops, streams = measure(spec, tmp_path)
    result = RunResult(status="ok", spec={}, environment={}, floor_ms=1.0, started_at=0.0)
    old = result.as_dict()
    assert "paths" not in old and RunResult.from_dict(old).paths is None
    result.paths, result.connections, result.streams = paths, hops, streams
    doc = json.loads(json.dumps(result.as_dict()))
    back = RunResult.from_dict(doc)
    assert back.paths == paths and back.connections == hops and back.streams == streams


BARE = {"environment": {}, "floor_ms": 1.0, "started_at": 0.0}


def measured_result(tmp_path):
    """The fan-out's result, as a run gives it, from its known records."""
    spec = fan_out(tmp_path, b_received=3, dropped=1)
    result = RunResult(status="ok", spec=spec.describe(), environment={}, floor_ms=1.0, started_at=0.0)
    result.paths, result.connections, result.streams = measure(spec, tmp_path)
    return result


def test_the_drawing_has_every_component_and_every_connection_with_its_label(tmp_path):
    source = waveform_graph(measured_result(tmp_path)).source
    for name, kind in (("p", "producer"), ("t", "stage"), ("a", "stage"), ("b", "stage")):
        assert f'{name} [label=<{name}<BR/><FONT POINT-SIZE="10" COLOR="#5b6475">{kind}</FONT>>]' in source
    assert source.count(" -> ") == 3
    # Each edge: its ports, its policy, its counts; its SVG id the connection's.
    assert 'p -> t [label="out → in\ntwoway\n4 pkts, 10,000/s" color="#1d2433" id="p.out->t.in"' in source
    assert (
        't -> b [label="out → in\ntwoway fanout:drop\n3 pkts, 10,000/s, queue peak 3, dropped 1" color="#a4161a"'
        in source
    )
    assert 't -> a [label="out → in\ntwoway fanout:drop\n4 pkts, 10,000/s, queue peak 0" color="#1d2433"' in source
    assert "rankdir=LR" in source


def test_a_long_chain_is_drawn_top_to_bottom(tmp_path):
    spec = {
        "components": [{"name": f"c{i}", "kind": "stage"} for i in range(ACROSS_AT_MOST + 1)],
        "connections": [{"id": f"c{i}.out->c{i + 1}.in", "call": "twoway"} for i in range(ACROSS_AT_MOST)],
    }
    result = RunResult(status="ok", spec=spec, environment={}, floor_ms=1.0, started_at=0.0)
    down = waveform_graph(result).source
    assert "rankdir=TB" in down and 'label="  out → in\\l  twoway\\l"' in down  # beside its arrow
    spec["connections"].pop()  # one component fewer on the longest route
    assert "rankdir=LR" in waveform_graph(result).source


def test_the_run_report_shows_the_drawing_and_the_graphs_tables(tmp_path):
    (tmp_path / "records").mkdir()
    result = measured_result(tmp_path / "records")
    md, html = write_run_report(result, tmp_path / "report")
    assert (tmp_path / "report" / "waveform.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "report" / "waveform.png").read_bytes()[:4] == b"\x89PNG"
    text = md.read_text()
    assert '<img src="waveform.svg"' in text
    assert "| p → b | 0 | 1 | 4 | 3 | 3 | 1 | 0 | 0 |" in text
    assert "| paths | 2: 0 lost, 1 dropped, 0 reordered (Paths, below) |" in text
    assert "| t.out → b.in | twoway | tcp | drop | 3 | 3 | 1 | 0 | 3 |" in text
    assert "| p.out → t.in | twoway | tcp | – | – | 4 | – | – | – |" in text  # one connection: no fan-out
    assert 'src="data:image/svg+xml;base64,' in html.read_text()


def test_the_terminal_shows_a_graphs_paths_and_connections(tmp_path):
    result = measured_result(tmp_path)
    rows = [re.split(r"\s{2,}", line.strip()) for line in text(graph_view(result)).splitlines()]
    assert ["p → b", "0", "4", "3", "0", "1", "0", "90 µs", "90 µs"] in rows
    assert ["t.out->b.in", "scabench", "drop", "3", "3", "1", "3", "10,000"] in rows
    assert ["p.out->t.in", "scabench", "–", "–", "4", "–", "–", "10,000"] in rows  # one connection: no fan-out
    # The set-up names each fan-out port's policy and each source's packets.
    setup = text(spec_lines(result.spec, {"p": 4, "q": 2}))
    assert "packets p 4, q 2" in setup
    assert "t.out->b.in: call=twoway dispatch=pool worker=no fanout=sequential (" in setup
    assert "p.out->t.in: call=twoway dispatch=pool worker=no (" in setup
    # Several paths but no port that fans out (a fan-in): the paths alone.
    no_fan_out = RunResult(status="ok", spec={**result.spec, "connections": result.spec["connections"][:2]}, **BARE)
    no_fan_out.paths, no_fan_out.connections = result.paths, result.connections
    shown = text(graph_view(no_fan_out))
    assert "p → b" in shown and "t.out->a.in" not in shown
    # A chain has its end to end instead.
    no_fan_out.paths = result.paths[:1]
    assert graph_view(no_fan_out) == []


def test_a_policy_in_short_names_what_differs_from_the_defaults():
    assert policy_label(parse_policy({})) == "twoway"
    assert policy_label(parse_policy({"call": "oneway", "sync": "none"})) == "oneway sync:none"
    assert policy_label(parse_policy({"call": "oneway", "worker": 64, "dispatch": "serial"})) == (
        "oneway dispatch:serial worker:64"
    )
    assert policy_label(parse_policy({}), "parallel") == "twoway fanout:parallel"
    assert policy_label(parse_policy({}), "sequential") == "twoway"


def test_a_python_components_counts_come_from_its_stat_line(tmp_path):
    # A Python component started as an external program writes no sidecar:
    # it reports the same document as `stat NAME connections JSON`.
    spec = graph_spec({"p": "producer", "py": "py-stage", "s": "sink"}, ["p.out->py.in", "py.out->s.in"])
    write_sidecar(tmp_path, "p", uses=[uses_entry("p.out->py.in", 5)])
    line = {
        "uses": [uses_entry("py.out->s.in", 4, dropped=1, fanout="drop")],
        "provides": [{"port": "in", "number": 0}],
    }
    stats = {"py": {"connections": json.dumps(line), "duplicates": "0"}, "s": {"checksum": "1.5"}}
    sidecars = read_sidecars(spec, tmp_path, stats)
    assert sidecars["py"] == line and sidecars["p"]["uses"][0]["sent"] == 5 and "s" not in sidecars
    # The file wins where both are there; a line that is not JSON is no counts.
    write_sidecar(tmp_path, "py", uses=[uses_entry("py.out->s.in", 3)])
    assert read_sidecars(spec, tmp_path, stats)["py"]["uses"][0]["sent"] == 3
    assert "s" not in read_sidecars(spec, tmp_path, {"s": {"connections": "{not json"}})


def test_a_duplex_joins_each_source_to_its_own_paths_sink_only(tmp_path):
    # tx -> radio's TX path -> tx_sink, rx -> its RX path -> rx_sink: a TX
    # packet never reaches rx_sink, so (tx, rx_sink) is no path, and nothing is lost.
    spec = graph_spec(
        {"tx": "producer", "rx": "producer", "radio": "duplex", "tx_sink": "sink", "rx_sink": "sink"},
        ["tx.out->radio.tx_in", "rx.out->radio.rx_in", "radio.tx_out->tx_sink.in", "radio.rx_out->rx_sink.in"],
        {"tx": {"packets": 3, "stream_id": 0}, "rx": {"packets": 2, "stream_id": 1}},
    )
    write_records(tmp_path / "tx.rec", *sent_at(3))
    write_records(tmp_path / "rx.rec", *sent_at(2))
    seq, stream, conn = [0, 0, 1, 1, 2], [0, 1, 0, 1, 0], [0, 1, 0, 1, 0]
    arrive = np.array([20, 30, 120, 130, 220]) * US
    write_records(tmp_path / "radio.rec", seq, arrive, arrive + 5 * US, conn, stream)
    write_records(tmp_path / "tx_sink.rec", [0, 1, 2], np.array([30, 130, 230]) * US, np.array([31, 131, 231]) * US)
    write_records(tmp_path / "rx_sink.rec", [0, 1], np.array([40, 140]) * US, np.array([41, 141]) * US, None, [1, 1])

    paths, _, _ = measure(spec, tmp_path)

    assert [(p.source, p.sink, p.sent, p.arrivals, p.lost) for p in paths] == [
        ("tx", "tx_sink", 3, 3, 0),
        ("rx", "rx_sink", 2, 2, 0),
    ]


def test_a_drop_after_a_diamonds_merge_counts_each_dropped_copy_once(tmp_path):
    # p -> t -> x, y -> m -> k, and m.out also feeds z under fanout drop:
    # m takes every packet twice (once per route) and its sidecar's dropped
    # counts the copies it dropped toward k; each is one arrival fewer at k.
    spec = graph_spec(
        {"p": "producer", "t": "stage", "x": "stage", "y": "stage", "m": "stage", "k": "stage", "z": "stage"},
        ["p.out->t.in", "t.out_a->x.in", "t.out_b->y.in", "x.out->m.in", "y.out->m.in", "m.out->k.in", "m.out->z.in"],
        {"p": {"packets": 4}},
    )
    seq, start, done = sent_at(4)
    for name in ("p", "t", "x", "y"):
        write_records(tmp_path / f"{name}.rec", seq, start, done)
    both = np.repeat(seq, 2)
    write_records(tmp_path / "m.rec", both, np.repeat(start, 2), np.repeat(done, 2), [0, 1] * 4)
    write_records(tmp_path / "z.rec", both, np.repeat(start, 2), np.repeat(done, 2))
    # m dropped 2 copies toward k; k got 5 of the 6 m passed: one lost.
    write_records(tmp_path / "k.rec", both[:5], np.repeat(start, 2)[:5], np.repeat(done, 2)[:5])
    write_sidecar(
        tmp_path,
        "m",
        uses=[uses_entry("m.out->k.in", 6, 2, fanout="drop"), uses_entry("m.out->z.in", 8, fanout="drop")],
    )
    to_k, to_z = measure(spec, tmp_path)[0]
    assert (to_k.sink, to_k.routes, to_k.sent, to_k.arrivals, to_k.dropped, to_k.lost) == ("k", 2, 4, 5, 2, 1)
    assert (to_z.sink, to_z.arrivals, to_z.dropped, to_z.lost) == ("z", 8, 0, 0)


def test_a_drop_before_a_diamond_costs_an_arrival_per_route(tmp_path):
    # p -> t (drop, also to w) -> u -> x, y -> m: a packet t drops toward u
    # is missing from both routes.
    spec = graph_spec(
        {"p": "producer", "t": "stage", "w": "stage", "u": "stage", "x": "stage", "y": "stage", "m": "stage"},
        ["p.out->t.in", "t.out->u.in", "t.out->w.in", "u.out_a->x.in", "u.out_b->y.in", "x.out->m.in", "y.out->m.in"],
        {"p": {"packets": 4}},
    )
    seq, start, done = sent_at(4)
    for name in ("p", "t", "w"):
        write_records(tmp_path / f"{name}.rec", seq, start, done)
    for name in ("u", "x", "y"):
        write_records(tmp_path / f"{name}.rec", seq[:3], start[:3], done[:3])
    write_records(tmp_path / "m.rec", np.repeat(seq[:3], 2), np.repeat(start[:3], 2), np.repeat(done[:3], 2))
    write_sidecar(tmp_path, "t", uses=[uses_entry("t.out->u.in", 3, 1, fanout="drop"), uses_entry("t.out->w.in", 4)])
    to_m = next(p for p in measure(spec, tmp_path)[0] if p.sink == "m")
    assert (to_m.routes, to_m.arrivals, to_m.dropped, to_m.lost) == (2, 6, 2, 0)


def test_a_sources_packets_given_up_on_one_connection_count_on_that_path_only(tmp_path):
    # p.out feeds a and b under fanout parallel; a stop gave up 5 queued
    # packets on the connection to b only (the header's unsent: one per
    # connection). Toward a, all 10 went, and a got 8: 2 lost.
    spec = graph_spec(
        {"p": "producer", "a": "stage", "b": "stage"}, ["p.out->a.in", "p.out->b.in"], {"p": {"packets": 10}}
    )
    seq, start, done = sent_at(10)
    write_records(tmp_path / "p.rec", seq, start, done, unsent=5)
    write_records(tmp_path / "a.rec", seq[:8], start[:8], done[:8])
    write_records(tmp_path / "b.rec", seq[:5], start[:5], done[:5])
    b_entry = uses_entry("p.out->b.in", 5, fanout="parallel") | {"unsent": 5}
    write_sidecar(tmp_path, "p", uses=[uses_entry("p.out->a.in", 10, fanout="parallel"), b_entry])
    to_a, to_b = measure(spec, tmp_path)[0]
    assert (to_a.sink, to_a.sent, to_a.arrivals, to_a.lost) == ("a", 10, 8, 2)
    assert (to_b.sink, to_b.sent, to_b.arrivals, to_b.lost) == ("b", 5, 5, 0)

"""The typed run result (run/results.py) writes the result JSON's object
exactly: its keys in the file's order, optional keys only when set, a
failed run without the figures it never had; and reads one back unchanged."""

import json

import pytest

from scabench.report.results_file import write_json
from scabench.run.results import (
    CpuUsage,
    HopResult,
    Latency,
    NetworkResult,
    ProducerResult,
    RunResult,
    StageResult,
)

HEAD = ["status", "spec", "environment", "floor_ms", "started_at"]
FIGURES = ["overhead_ratio", "foreign_cpu_pct", "stages", "producer", "cpu", "window_s", "stats"]
STAGE_KEYS = [
    "name",
    "kind",
    "received",
    "last_packet_ms",
    "reordered_from_previous",
    "reordered_from_original",
    "output_reordered_from_previous",
    "max_server_threads",
    "distinct_receiving_threads",
    "reorder_buffer_peak",
    "skipped",
    "late",
    "duplicates",
    "held_peak",
    "flow_suspends",
    "send_stalls",
]


def stage(name="stage1", last=12.5, **flow):
    flow = {k: 0 for k in STAGE_KEYS[9:]} | flow
    return StageResult(
        name=name,
        kind="stage",
        received=10,
        last_packet_ms=last,
        reordered_from_previous=0,
        reordered_from_original=0,
        output_reordered_from_previous=0,
        max_server_threads=1,
        distinct_receiving_threads=1,
        **flow,
    )


def producer():
    return ProducerResult(
        name="producer",
        sent=10,
        last_sent_ms=2.0,
        send_us={"min": 1.0, "p50": 2.0},
        send_share_under_us={"10": 100.0},
        send_us_all=[1.0, 2.0],
        send_stalls=0,
    )


def ok_run(**changes):
    run = RunResult(
        status="ok",
        spec={"cores": [0, 1]},
        environment={"kernel": "6.x"},
        floor_ms=10.0,
        started_at=1.5,
        hosts=[{"name": "host0-producer"}],
        overhead_ratio=1.25,
        foreign_cpu_pct=0.5,
        stages=[stage(), stage("stage2")],
        producer=producer(),
        cpu=CpuUsage(run_cpu_s=0.2, user_s=0.1, system_s=0.05, voluntary_ctxsw=3, involuntary_ctxsw=4),
        window_s=0.02,
        stats={"sink": {"checksum": "1.5"}},
    )
    for key, value in changes.items():
        setattr(run, key, value)
    return run


def round_trips(run):
    doc = json.loads(json.dumps(run.as_dict()))
    again = RunResult.from_dict(doc)
    assert again == run and again.as_dict() == doc
    return doc


def test_an_ok_run_writes_the_keys_in_the_files_order():
    doc = round_trips(ok_run())
    assert list(doc) == HEAD + ["hosts"] + FIGURES
    assert list(doc["stages"][0]) == STAGE_KEYS
    assert list(doc["producer"]) == [
        "name",
        "sent",
        "last_sent_ms",
        "send_us",
        "send_share_under_us",
        "send_us_all",
        "send_stalls",
    ]
    assert list(doc["cpu"]) == ["run_cpu_s", "user_s", "system_s", "voluntary_ctxsw", "involuntary_ctxsw"]


def test_optional_keys_take_their_place_only_when_set():
    net = NetworkResult(
        hosts=[{"netns": "n0"}], link={"delay_ms": 2, "jitter_ms": 0}, emulator="e 1", emulator_cpu_s=0.1
    )
    doc = round_trips(
        ok_run(
            network=net,
            window={"total_pct": 3.0},
            attempt=2,
            redone_for_foreign_load_pct=[9.5],
            machine_was_quiet=False,
        )
    )
    assert list(doc) == HEAD + ["network", "hosts"] + FIGURES + [
        "window",
        "attempt",
        "redone_for_foreign_load_pct",
        "machine_was_quiet",
    ]
    assert list(doc["network"]) == ["hosts", "link", "emulator", "emulator_cpu_s"]


def test_a_figure_without_a_value_is_null_and_no_producer_is_an_empty_object():
    doc = round_trips(ok_run(overhead_ratio=None, producer=None, stages=[stage(last=None)]))
    assert doc["overhead_ratio"] is None and doc["producer"] == {} and doc["stages"][0]["last_packet_ms"] is None


def test_a_failed_run_has_no_figures():
    early = RunResult(
        status="failed",
        spec={},
        environment={},
        floor_ms=5.0,
        started_at=1.0,
        network=NetworkResult(hosts=[], link={"delay_ms": 1, "jitter_ms": 0}, emulator="e 1"),
        error="scabench-launch ended without a result: 1",
    )
    doc = round_trips(early)
    assert list(doc) == HEAD + ["network", "error"] and "emulator_cpu_s" not in doc["network"]
    late = RunResult(
        status="failed",
        spec={},
        environment={},
        floor_ms=5.0,
        started_at=1.0,
        hosts=[],
        error="component stage2 could not start",
        failed_component="stage2",
    )
    assert list(round_trips(late)) == HEAD + ["hosts", "error", "failed_component"]
    assert not late.analysed and ok_run().analysed


def test_a_stage_written_before_the_flow_counters_reads_back_without_them():
    old = {k: v for k, v in stage().as_dict().items() if k in STAGE_KEYS[:9]}
    s = StageResult.from_dict(old)
    assert s.held_peak is None and s.as_dict() == old


def test_latency_takes_its_place_and_results_written_before_it_read_back_unchanged():
    lat = Latency(count=2, p50=1.5, p90=1.9, p99=1.99, max=2.0)
    doc = round_trips(
        ok_run(
            end_to_end_latency_us=lat,
            end_to_end_latency_us_all=[1.0, 2.0],
            stages=[stage(latency_in_stage_us=lat, latency_since_send_us=lat)],
        )
    )
    assert (
        list(doc)
        == HEAD + ["hosts", "overhead_ratio", "end_to_end_latency_us", "end_to_end_latency_us_all"] + FIGURES[1:]
    )
    assert list(doc["end_to_end_latency_us"]) == ["count", "p50", "p90", "p99", "max"]
    assert list(doc["stages"][0])[-2:] == ["latency_in_stage_us", "latency_since_send_us"]
    assert isinstance(RunResult.from_dict(doc).stages[0].latency_since_send_us, Latency)
    old = ok_run().as_dict()  # as written before runs measured latency
    again = RunResult.from_dict(old)
    assert again.end_to_end_latency_us is None and again.stages[0].latency_in_stage_us is None
    assert again.as_dict() == old


def test_a_hop_written_before_hops_had_a_protocol_reads_back_as_scabench_unchanged():
    hop = HopResult(
        id="a.out->b.in",
        policy="twoway",
        transport="tcp",
        protocol="bulkio",
        fanout=None,
        sent=3,
        dropped=0,
        unsent=0,
        queue_peak=None,
        blocked_ns=None,
        received=3,
        rate_pps=None,
        latency_us_mean=None,
        latency_us_p99=None,
    )
    assert list(hop.as_dict())[3] == "protocol"
    old = {k: v for k, v in hop.as_dict().items() if k != "protocol"}
    run = ok_run().as_dict() | {"connections": [old]}
    again = RunResult.from_dict(run)
    assert again.connections is not None and again.connections[0].protocol is None
    assert again.as_dict() == run


def test_unknown_or_missing_keys_are_refused_by_name():
    doc = ok_run().as_dict()
    with pytest.raises(ValueError, match="RunResult: unknown key.*'colour'"):
        RunResult.from_dict({**doc, "colour": "blue"})
    doc["stages"][0].pop("received")
    with pytest.raises(ValueError, match="StageResult:.*received"):
        RunResult.from_dict(doc)
    with pytest.raises(ValueError, match="expected an object"):
        RunResult.from_dict([])


def test_write_json_writes_a_result_as_its_dict_anywhere_in_a_document(tmp_path):
    run = ok_run()
    typed, plain = write_json(run, tmp_path / "a.json"), write_json(run.as_dict(), tmp_path / "b.json")
    assert typed.read_bytes() == plain.read_bytes()
    entry = {"config": {"name": "x"}, "runs": [run], "failures": []}
    plain = {"config": {"name": "x"}, "runs": [run.as_dict()], "failures": []}
    assert write_json(entry, tmp_path / "c.json").read_bytes() == write_json(plain, tmp_path / "d.json").read_bytes()
    with pytest.raises(TypeError, match="object cannot be written as JSON"):
        write_json({"x": object()}, tmp_path / "e.json")


def test_the_run_table_says_what_both_reordering_counts_are():
    """The table's "reordered (previous)" and "(original)" columns were not
    explained anywhere under it."""
    from scabench.report.tables import format_run

    spec = {"file": "s.toml", "cores": [0, 1], "transport": "tcp", "hosts": [{}], "components": [{}], "connections": []}
    sender = producer()
    sender.send_us = {k: 1.0 for k in ("min", "p50", "p90", "p99", "max", "mean")}
    shown = " ".join(format_run(ok_run(spec=spec, producer=sender)).split())  # the terminal wraps long lines
    assert "reordered (previous): arrivals whose sequence number is not the previous arrival's + 1." in shown
    assert "reordered (original): arrival positions whose packet is not the one sent in that position." in shown
    assert "most ORB threads: the most of the ORB's threads in the stage's calls at once" in shown
    # The producer's row, the line of floor, ratio and foreign CPU, the latency table and the send times.
    assert "(the producer's row: when it sent its last, and how many it sent)" in shown
    for term in (
        "floor: ",
        "ratio: ",
        "foreign CPU: the share of the run's cores that other processes used",
        "pN: N % of the packets took at most this",
        "producer send: how long its send calls took",
    ):
        assert shown.count(term) == 1, term


# ---------------------------------------------------------------- packets sent that never arrived

FAN_IN = (
    '[[component]]\nname = "p1"\nkind = "producer"\n[[component]]\nname = "p2"\nkind = "producer"\n'
    '[[component]]\nname = "s"\nkind = "stage"\n[[component]]\nname = "k"\nkind = "sink"\n'
    '[[connection]]\nfrom = "p1.out"\nto = "s.in"\n[[connection]]\nfrom = "p2.out"\nto = "s.in"\n'
    '[[connection]]\nfrom = "s.out"\nto = "k.in"\n'
)


def test_a_stage_that_received_fewer_packets_than_were_sent_to_it_is_named(write_spec):
    from scabench.model.load import load_spec
    from scabench.run.runner import missing_packets

    spec = load_spec(
        write_spec(
            'chain = ["producer", "stage1", "stage2"]\n[[component]]\nname = "producer"\n'
            'kind = "producer"\n[[component]]\nname = "stage1"\nkind = "stage"\n'
            '[[component]]\nname = "stage2"\nkind = "stage"\n'
        )
    )
    whole = [stage("stage1"), stage("stage2")]
    assert missing_packets(spec, {"producer": 10, "stage1": 10, "stage2": 10}, whole) == []
    # An end of stream that came early: stage2 got 4 of stage1's 10 (the spoofed end of issue 26).
    cut = [stage("stage1"), stage("stage2")]
    cut[1].received = 4
    assert missing_packets(spec, {"producer": 10, "stage1": 10, "stage2": 4}, cut) == [
        {"component": "stage2", "sent": 10, "received": 4, "late": 0}
    ]
    # Packets a reorder buffer counted late are dropped, and said: not missing.
    late = [stage("stage1", late=2), stage("stage2")]
    late[0].received = 8
    late[1].received = 8
    assert missing_packets(spec, {"producer": 10, "stage1": 8, "stage2": 8}, late) == []
    # A component without a record file (an external program) is not judged, nor what it feeds.
    assert missing_packets(spec, {"producer": 10, "stage2": 4}, cut) == []


def test_a_stage_fed_by_several_is_owed_their_sum(write_spec):
    from scabench.model.load import load_spec
    from scabench.run.runner import missing_packets

    spec = load_spec(write_spec(FAN_IN))
    s, k = stage("s"), stage("k")
    s.received, k.received = 20, 20
    assert missing_packets(spec, {"p1": 10, "p2": 10, "s": 20, "k": 20}, [s, k]) == []
    s.received, k.received = 15, 15
    assert missing_packets(spec, {"p1": 10, "p2": 10, "s": 15, "k": 15}, [s, k]) == [
        {"component": "s", "sent": 20, "received": 15, "late": 0}
    ]


DUPLEX = (
    '[[component]]\nname = "tx"\nkind = "producer"\n[[component]]\nname = "rx"\nkind = "producer"\n'
    '[[component]]\nname = "radio"\nkind = "duplex"\n'
    '[[component]]\nname = "tx_sink"\nkind = "sink"\n[[component]]\nname = "rx_sink"\nkind = "sink"\n'
    '[[connection]]\nfrom = "tx.out"\nto = "radio.tx_in"\n[[connection]]\nfrom = "rx.out"\nto = "radio.rx_in"\n'
    '[[connection]]\nfrom = "radio.tx_out"\nto = "tx_sink.in"\n'
    '[[connection]]\nfrom = "radio.rx_out"\nto = "rx_sink.in"\n'
)


def counts(*entries):
    """A sender's per-connection counts ({"uses": [...]}), from (id, sent, dropped)."""
    return {
        "uses": [
            {"port": i.split("->")[0].split(".")[1], "connection_id": i, "sent": n, "dropped": d} for i, n, d in entries
        ]
    }


def test_a_sink_behind_one_of_a_duplexs_paths_is_owed_that_paths_packets(write_spec):
    from scabench.model.load import load_spec
    from scabench.run.runner import missing_packets

    spec = load_spec(write_spec(DUPLEX))
    radio = counts(("radio.tx_out->tx_sink.in", 20, 0), ("radio.rx_out->rx_sink.in", 8, 0))
    handled = {"tx": 20, "rx": 8, "radio": 28, "tx_sink": 20, "rx_sink": 8}
    radio_stage, tx_sink, rx_sink = stage("radio"), stage("tx_sink"), stage("rx_sink")
    radio_stage.received, tx_sink.received, rx_sink.received = 28, 20, 8
    assert missing_packets(spec, handled, [radio_stage, tx_sink, rx_sink], {"radio": radio}) == []
    rx_sink.received = 5
    assert missing_packets(spec, handled, [tx_sink, rx_sink], {"radio": radio}) == [
        {"component": "rx_sink", "sent": 8, "received": 5, "late": 0}
    ]
    # Without the radio's counts, which path carried what cannot be told: not judged.
    assert missing_packets(spec, handled, [tx_sink, rx_sink]) == []


def test_what_a_drop_fan_out_dropped_is_not_missing(write_spec):
    from scabench.model.load import load_spec
    from scabench.run.runner import missing_packets

    spec = load_spec(
        write_spec(
            '[[component]]\nname = "p"\nkind = "producer"\n[[component]]\nname = "fast"\nkind = "sink"\n'
            '[[component]]\nname = "slow"\nkind = "sink"\n[policy]\nfanout = "drop"\n'
            '[[connection]]\nfrom = "p.out"\nto = "fast.in"\n[[connection]]\nfrom = "p.out"\nto = "slow.in"\n'
        )
    )
    p = counts(("p.out->fast.in", 30, 0), ("p.out->slow.in", 12, 18))
    fast, slow = stage("fast"), stage("slow")
    fast.received, slow.received = 30, 12
    handled = {"p": 30, "fast": 30, "slow": 12}
    assert missing_packets(spec, handled, [fast, slow], {"p": p}) == []
    slow.received = 11  # one the connection carried never came
    assert missing_packets(spec, handled, [fast, slow], {"p": p}) == [
        {"component": "slow", "sent": 12, "received": 11, "late": 0}
    ]


def test_a_run_with_packets_missing_is_not_clean_says_why_and_has_no_ratio():
    from scabench.measure.repeat import flaw_of, warnings_of

    run = ok_run(
        missing=[{"component": "stage2", "sent": 3000, "received": 494, "late": 0}],
        refusals=0,
        clean=False,
        overhead_ratio=None,
    )
    assert round_trips(run)["missing"] == run.missing
    assert run.why_not_clean() == "stage2 received 494 of the 3000 packets sent to it"
    assert flaw_of(run) == run.why_not_clean()  # campaigns and --runs redo it
    assert any("packets sent never arrived in 1 of 1 runs" in w for w in warnings_of([run], {"redo_above_pct": 5.0}))
    assert ok_run(refusals=0, clean=True).why_not_clean() is None


def test_the_run_table_says_what_its_ordering_and_flow_columns_are():
    """ "most held", "skipped / late / dup." and the other flow columns were
    printed with no word on what they count."""
    from scabench.report.tables import format_run

    hop = {
        "id": "producer.out->stage1.in",
        "call": "oneway",
        "sync": "none",
        "dispatch": "pool",
        "worker_depth": 0,
        "ordering": "resequence",
        "reorder_capacity": 64,
        "reorder_timeout_ms": 50.0,
        "flow": "credits",
        "credits": 16,
        "flow_low": 0,
        "flow_high": 0,
        "placement": "separate",
        "transport": "tcp",
    }
    spec = {
        "file": "s.toml",
        "cores": [0, 1],
        "transport": "tcp",
        "hosts": [{}],
        "components": [{}],
        "connections": [hop],
    }
    sender = producer()
    sender.send_us = {k: 1.0 for k in ("min", "p50", "p90", "p99", "max", "mean")}
    shown = " ".join(format_run(ok_run(spec=spec, producer=sender)).split())
    for column in (
        "output reordered",
        "most held",
        "reorder buffer peak",
        "skipped / late / dup.",
        "sender suspended",
        "sends that waited",
    ):
        assert shown.count(f"{column}: ") == 1, column
    # Each legend under its own table: the run table's before the flow table starts.
    assert shown.index("most ORB threads: the most") < shown.index("ordering and flow") < shown.index("most held: ")
    assert "ordering=resequence(capacity 64, timeout 50 ms) flow=credits(16)" in shown
    assert (
        "skipped / late / dup.: packets given up on after the reorder timeout / arriving after being given up "
        "on / arriving twice" in shown
    )
    plain = dict(spec, connections=[dict(hop, ordering="arrival", flow="none")])
    assert "most held: " not in format_run(ok_run(spec=plain, producer=sender))  # no such table, no such legend


def test_a_plain_cf_node_says_what_its_device_is_and_where_its_cpu_was_read():
    """A node the launcher drove with CF alone (plain_nodes.cpp): its manifest
    entry says so, the table says it, and a node written before reads back
    without it."""
    from scabench.report.tables import _node_line
    from scabench.run.results import NodeResult

    process = {"pid": 7, "program": "scabench-host", "running": False, "exit_status": None}
    entry = {
        "name": "gpp",
        "same_machine": True,
        "published_host": "",
        "clock": {},
        "processes": [process | {"user_s": 0.25, "system_s": 0.05, "context_switches": 40}],
        "device": "CF::ExecutableDevice",
        "cpu_from": "/proc",
    }
    node = NodeResult.of(entry)
    assert (node.device, node.cpu_from, node.user_s, node.context_switches) == (
        "CF::ExecutableDevice",
        "/proc",
        0.25,
        40,
    )
    assert node.clock.start is None and node.clock.error_bound_ms is None  # no time was moved
    words = _node_line(node)
    assert "a plain CF::ExecutableDevice, on this machine" in words and "read in /proc" in words
    assert "clock: this machine's, the launcher's own" in words
    assert NodeResult.from_dict(node.as_dict()) == node
    before = NodeResult.of({k: v for k, v in entry.items() if k not in ("device", "cpu_from")})
    assert before.device is None and "plain" not in _node_line(before)
    assert "device" not in before.as_dict()

"""The graph kinds (tee, merge, duplex: cpp/components/) in real runs: the
shipped specs under experiments/graphs/, each with fewer packets, over real
processes. Their semantics packet by packet are tests/cpp/graph_kinds_test.cpp's."""

from pathlib import Path

from scabench.model.load import load_spec
from scabench.model.spec import Spec
from scabench.run.runner import run_spec

GRAPHS = Path(__file__).resolve().parents[3] / "experiments" / "graphs"


def small(name: str, packets: dict[str, int]) -> Spec:
    """A shipped graph spec with each source's packet count set."""
    spec = load_spec(GRAPHS / f"{name}.toml")
    for source, count in packets.items():
        spec = spec.with_properties(source, {"packets": count}, where="test")
    return spec


def stage(doc: dict, name: str) -> dict:
    return next(s for s in doc["stages"] if s["name"] == name)


def test_a_tee_gives_both_sinks_every_packet():
    doc = run_spec(small("fan-out", {"producer": 30})).as_dict()
    assert doc["status"] == "ok" and doc["clean"] is True, doc.get("problems")
    a, b = stage(doc, "sink_a"), stage(doc, "sink_b")
    assert a["received"] == b["received"] == stage(doc, "tee")["received"] == 30
    assert a["checksum"] == b["checksum"] != 0  # the same samples on both branches
    for s in (a, b):
        assert s["reordered_from_previous"] == 0, s


def test_a_merge_forwards_both_sources_and_ends_after_both():
    doc = run_spec(small("fan-in", {"producer_a": 20, "producer_b": 12})).as_dict()
    assert doc["status"] == "ok" and doc["clean"] is True, doc.get("problems")
    assert stage(doc, "merge")["received"] == stage(doc, "sink")["received"] == 32
    # Two streams interleave at the sink: each is counted in its own order.
    assert stage(doc, "sink")["reordered_from_previous"] == 0


def duplex_run() -> dict:
    return run_spec(small("duplex", {"tx_source": 20, "rx_source": 8})).as_dict()


def test_a_duplex_keeps_its_paths_apart_and_ends_each():
    # Each sink ends when its own path does: the run ends (status ok) only
    # once both have, each with its own path's packets, in order.
    doc = duplex_run()
    assert doc["status"] == "ok", doc.get("problems")
    assert stage(doc, "radio")["received"] == 28
    assert stage(doc, "tx_sink")["received"] == 20
    assert stage(doc, "rx_sink")["received"] == 8
    for name in ("tx_sink", "rx_sink"):
        assert stage(doc, name)["reordered_from_previous"] == 0


def test_a_duplex_run_is_clean():
    # Each sink is owed its own path's packets (the radio's per-connection
    # counts); a TX packet never goes to the RX sink, so no path is lost; and
    # the floor counts both paths' declared work.
    doc = duplex_run()
    assert doc["clean"] is True, doc["missing"]
    assert [(p["source"], p["sink"], p["arrivals"], p["lost"]) for p in doc["paths"]] == [
        ("tx_source", "tx_sink", 20, 0),
        ("rx_source", "rx_sink", 8, 0),
    ]
    assert doc.get("floor_caveat") is None and doc["floor_ms"] > 0

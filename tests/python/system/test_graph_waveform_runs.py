"""A waveform with fan-in, fan-out and a multi-port component, end to end:
experiments/graphs/receiver.toml (two sources -> a merge -> a stage whose
one uses port feeds two connections under a parallel fan-out -> a decoder
and a sink, and a monitor sink) runs from TOML over processes and
collocated, built in Python (examples/python/graph_waveform.py) and from its
SAD (experiments/sad/waveforms/receiver/), each clean with every path's
packets delivered in order and every connection counted; and its report
draws it. Few packets: the graph's shape is the point."""

import html
import json
import tomllib

import pytest
from conftest import REPO, scabench
from test_api import example, run_example

import scabench as api
from scabench.model.load import load_spec
from scabench.run.results import RunResult
from scabench.run.runner import run_spec

GRAPHS = REPO / "experiments" / "graphs"
SAD = REPO / "experiments" / "sad" / "waveforms" / "receiver" / "receiver.sad.xml"
DATA, CONTROL = 12, 5  # packets of each source
COMPONENTS = ["data", "control", "mux", "demod", "decoder", "output", "monitor"]
CONNECTIONS = [
    "data.out->mux.in_a",
    "control.out->mux.in_b",
    "mux.out->demod.in",
    "demod.out->decoder.in",
    "demod.out->monitor.in",
    "decoder.out->output.in",
]
# Each source's stream at each sink: every packet of both reaches both.
PATHS = {("data", "output"), ("data", "monitor"), ("control", "output"), ("control", "monitor")}


def small(name: str):
    spec = load_spec(GRAPHS / f"{name}.toml")
    return spec.with_properties("data", {"packets": DATA}, where="test").with_properties(
        "control", {"packets": CONTROL}, where="test"
    )


def check_graph_run(result: RunResult, processes: int) -> None:
    """Clean, every path delivered whole and in order, every stream in
    order everywhere, and each connection's counts from both its ends."""
    assert result.status == "ok", result.error
    assert result.clean is True, result.why_not_clean()
    assert len(result.hosts) == processes
    sent = {"data": DATA, "control": CONTROL}
    assert {(p.source, p.sink) for p in result.paths} == PATHS
    for p in result.paths:
        # Two-way calls, one thread per connection: the policy keeps order.
        assert (p.sent, p.arrivals, p.delivered) == (sent[p.source],) * 3, p
        assert (p.lost, p.dropped, p.reordered) == (0, 0, 0), p
        assert p.stream == {"data": 1, "control": 2}[p.source]
        assert p.latency_us is not None and p.latency_us.count == sent[p.source]
    streams = {(o.component, o.stream): o for o in result.streams}
    assert set(streams) == {(c, s) for c in COMPONENTS[2:] for s in (1, 2)}
    for o in streams.values():
        assert o.received == (DATA if o.stream == 1 else CONTROL), o
        assert o.reordered_from_original == o.output_reordered_from_original == 0, o
    hops = {h.id: h for h in result.connections}
    assert list(hops) == CONNECTIONS
    carried = {"data.out->mux.in_a": DATA, "control.out->mux.in_b": CONTROL}
    for h in hops.values():
        expect = carried.get(h.id, DATA + CONTROL)
        assert (h.sent, h.received, h.dropped, h.unsent) == (expect, expect, 0, 0), h
    # The fan-out port's two connections, each with its own queue.
    for conn in ("demod.out->decoder.in", "demod.out->monitor.in"):
        assert hops[conn].fanout == "parallel" and 1 <= hops[conn].queue_peak <= 16, hops[conn]
    assert hops["mux.out->demod.in"].fanout == "sequential"


@pytest.mark.parametrize(("name", "processes"), [("receiver", 7), ("receiver-collocated", 1)])
def test_the_toml_graph_runs_over_processes_and_collocated(name, processes):
    result = run_spec(small(name))
    check_graph_run(result, processes)
    transports = {h.transport for h in result.connections}
    assert transports == ({"collocated"} if processes == 1 else {"tcp"})


def test_the_graph_built_in_python_is_the_toml_and_runs():
    wf = example("graph_waveform").receiver(packets=DATA)
    wf["control"].set(packets=CONTROL)
    built, toml = wf.describe(), api.load(GRAPHS / "receiver.toml").describe()
    toml["components"][0]["properties"]["packets"] = DATA
    toml["components"][1]["properties"]["packets"] = CONTROL
    assert {**built, "file": None} == {**toml, "file": None}
    check_graph_run(wf.run(), 7)


def test_the_example_runs_collocated_and_writes_its_report(tmp_path):
    out, report = tmp_path / "result.json", tmp_path / "report"
    proc = run_example("graph_waveform", "--packets", 10, "--collocated", "--report", report, "--json", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("receiver-collocated: data and control -> mux -> demod -> decoder -> output")
    result = RunResult.from_dict(json.loads(out.read_text()))
    assert result.clean is True and len(result.hosts) == 1
    assert [(p.sent, p.lost) for p in result.paths] == [(10, 0), (10, 0), (2, 0), (2, 0)]
    assert (report / "waveform.svg").exists() and (report / "report.html").exists()
    toml = run_example("graph_waveform", "--collocated", "--toml")
    assert api.Waveform.from_dict(tomllib.loads(toml.stdout)).describe() | {"file": None} == api.load(
        GRAPHS / "receiver-collocated.toml"
    ).describe() | {"file": None}
    assert run_example("graph_waveform", "--packets", 0).returncode == 2


def test_the_sad_runs_and_its_report_draws_every_component_and_connection(tmp_path):
    out, report = tmp_path / "result.json", tmp_path / "report"
    proc = scabench(
        "run", SAD, "--set", f"data.packets={DATA}", "--set", f"control.packets={CONTROL}", "--json", out,
        "--report", report,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # The terminal names the fan-out policy, each source's packets, and the paths.
    assert f"packets data {DATA}, control {CONTROL}" in proc.stdout
    assert "demod.out->monitor.in: call=twoway dispatch=pool worker=no fanout=parallel(16)" in proc.stdout
    assert "control → monitor" in proc.stdout
    result = RunResult.from_dict(json.loads(out.read_text()))
    assert result.spec["file"].endswith("receiver.sad.xml")
    check_graph_run(result, 7)
    svg = html.unescape((report / "waveform.svg").read_text())
    for name in COMPONENTS:
        assert f"<title>{name}</title>" in svg
    for conn in CONNECTIONS:
        assert f'id="{conn}"' in svg, conn  # each connection an edge of its own, named by its id
    assert "parallel" in svg
    page = (report / "report.md").read_text()
    for source, sink in PATHS:
        assert f"| {source} → {sink} |" in page
    for conn in CONNECTIONS:
        assert conn.replace("->", " → ") in page

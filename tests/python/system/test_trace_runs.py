"""A real run's trace and timeline (run/trace.py, report/timeline.py): few
packets through real processes, the trace file's structure held to what
every trace must be (trace_check), and the report's timeline drawn."""

import json

from conftest import pipeline_toml, scabench
from trace_check import check_trace

PACKETS = 8


def test_run_writes_a_trace_of_every_packet_and_a_report_with_its_timeline(write_spec, tmp_path):
    # Two-way into a stage with a worker (its packets wait in its queue),
    # then one-way into a stage that works on the ORB's threads.
    chain = pipeline_toml(packets=PACKETS, stages=2, work_us=2000, policy='call = "oneway"')
    spec = write_spec(
        chain.split("\n", 1)[1]  # the components without their chain: the connections below
        + '[[connection]]\nfrom = "producer.out"\nto = "stage1.in"\ncall = "twoway"\nworker = 4\n'
        + '[[connection]]\nfrom = "stage1.out"\nto = "stage2.in"\n'
    )
    trace, report = tmp_path / "run.trace.json", tmp_path / "report"
    done = scabench("run", spec, "--trace", trace, "--trace-packets", 6, "--report", report, "--timeline")
    assert done.returncode == 0, done.stderr
    assert f"trace: {trace}" in done.stdout
    doc = json.loads(trace.read_text())
    events, flows = check_trace(doc, 6)
    processes = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert processes == {"producer", "stage1 (stage)", "stage2 (stage)"}
    packets = [e for e in events if e["ph"] == "X" and e["cat"] == "packet"]
    # The window: packets 0 to 5 at each of the three components, each once.
    assert sorted((e["pid"], e["args"]["sequence"]) for e in packets) == [(p, s) for p in (1, 2, 3) for s in range(6)]
    assert doc["otherData"]["window"]["of"] == PACKETS
    # The spec as it ran, as the result keeps it: a study's traces are told apart by it.
    assert doc["otherData"]["spec"] == str(spec) and doc["otherData"]["resolved"]["file"] == str(spec)
    # Each packet's hop flows: producer -> stage1 -> stage2, two per packet.
    hops = [f for f in flows.values() if f["s"]["pid"] != f["f"]["pid"]]
    assert len(hops) == 2 * 6
    assert {(f["s"]["pid"], f["f"]["pid"]) for f in hops} == {(1, 2), (2, 3)}
    # Every packet's work lies inside its packet's span at each stage.
    work = [e for e in events if e["ph"] == "X" and e["cat"] == "work"]
    assert len(work) == 2 * 6
    assert any(e["name"] == "queued" for e in events if e["ph"] == "C")
    page = (report / "report.md").read_text()
    assert "## Timeline" in page and "timeline.png" in page
    assert (report / "timeline.png").read_bytes()[:4] == b"\x89PNG"


def test_a_sweep_writes_a_trace_per_run_in_its_folder(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=4, stages=1, work_us=500))
    out = tmp_path / "sweep"
    args = ["sweep", spec, "--grid", "policy.call=oneway,twoway", "--runs", "1", "--quiet-wait", "0"]
    done = scabench(*args, "--out", out, "--trace", "--trace-packets", 3, "--timeline")
    assert done.returncode == 0, done.stderr
    # A file per run, in the order they ran, named after its point and its run
    # there: two points, one run each (and any the guard redid: its point's next run).
    traces = sorted(p.name for p in (out / "traces").iterdir())
    points = {name.split("-")[2] for name in traces}
    assert points == {"p1", "p2"} and traces[0] == "001-spec-p1-r1.trace.json", traces
    assert f"trace: {len(traces)} files in {out / 'traces'}" in done.stdout
    for name in traces:
        doc = json.loads((out / "traces" / name).read_text())
        check_trace(doc, 3)
        call = "oneway" if name.split("-")[2] == "p1" else "twoway"
        assert doc["otherData"]["point"] == {"name": name.split("-")[2], "settings": f"policy.call={call}"}
    # --timeline: the answer's first packets in the report (two-way keeps order: there is an answer).
    page = (out / "report.md").read_text()
    assert "## Timeline of the answer" in page and "![policy.call=" in page
    assert (out / "timeline.png").read_bytes()[:4] == b"\x89PNG"


def test_runs_write_a_trace_per_run_in_the_folder_trace_names(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=4, stages=1, work_us=500))
    folder = tmp_path / "traces"
    done = scabench("run", spec, "--runs", "2", "--quiet-wait", "0", "--trace", folder, "--trace-packets", 3)
    assert done.returncode == 0, done.stderr
    traces = sorted(p.name for p in folder.iterdir())
    assert len(traces) >= 2 and traces[:2] == ["001-spec.trace.json", "002-spec.trace.json"], traces
    assert f"trace: {len(traces)} files in {folder}" in done.stdout
    for name in traces:
        check_trace(json.loads((folder / name).read_text()), 3)


def test_credits_outstanding_on_a_duplex_count_only_their_own_path(write_spec, tmp_path):
    # tx and rx through one duplex component; credits(4) on its TX output
    # alone: its RX packets go out on rx_out and take none of tx_out's credits.
    block = '[[component]]\nname = "{}"\nkind = "{}"\n{}\n'
    link = '[[connection]]\nfrom = "{}"\nto = "{}"\n{}\n'
    spec = write_spec(
        block.format("tx", "producer", f"packets = {PACKETS}\nsamples = 16\nperiod_us = 200")
        + block.format("rx", "producer", f"packets = {PACKETS}\nsamples = 16\nperiod_us = 200")
        + block.format("radio", "duplex", 'tx_work = "cpu"\ntx_work_us = 500\nrx_work = "cpu"\nrx_work_us = 500')
        + block.format("tx_sink", "sink", "")
        + block.format("rx_sink", "sink", "")
        + link.format("tx.out", "radio.tx_in", "")
        + link.format("rx.out", "radio.rx_in", "")
        + link.format("radio.tx_out", "tx_sink.in", 'flow = "credits(4)"')
        + link.format("radio.rx_out", "rx_sink.in", "")
    )
    trace = tmp_path / "duplex.trace.json"
    done = scabench("run", spec, "--trace", trace)
    assert done.returncode == 0, done.stderr
    events, _ = check_trace(json.loads(trace.read_text()), 2000)
    name = "credits outstanding (radio.tx_out->tx_sink.in)"
    credits = [e["args"][name] for e in events if e["ph"] == "C" and e["name"] == name]
    assert credits and max(credits) <= 4 and credits[-1] == 0

"""Benchmarking a spec: `scabench run --runs K` over real processes, its
warnings, and `scabench compare` on samples whose verdicts are known."""

import csv
import json

import pytest
from conftest import scabench
from test_results import ok_run, stage

from scabench.measure.repeat import Benchmark, guard_dict, guard_settings, warnings_of
from scabench.measure.sweep import SweepPoint
from scabench.report.results_file import write_json
from scabench.report.tables import format_benchmark, summary_rows
from scabench.run.results import RunResult


def _runs(last_ms, **changes):
    runs = []
    for ms in last_ms:
        run = ok_run(stages=[stage("stage1", ms)], overhead_ratio=ms / 10.0, **changes)
        run.attempt, run.machine_was_quiet = 1, True
        runs.append(run)
    return runs


def _bench_file(path, last_ms):
    write_json(Benchmark("ok", {"cores": [0, 1]}, len(last_ms), 0, guard_dict(guard_settings()), _runs(last_ms)), path)
    return path


def test_compare_on_known_samples(tmp_path):
    a = _bench_file(tmp_path / "a.json", [100.0, 101.0, 99.0, 100.5])
    b = _bench_file(tmp_path / "b.json", [120.0, 121.0, 119.0, 120.5])  # 20 % slower, far beyond the noise
    c = _bench_file(tmp_path / "c.json", [100.2, 101.5, 98.9, 100.1])  # the same, within the noise
    out, table = tmp_path / "cmp.json", tmp_path / "cmp.csv"
    proc = scabench("compare", a, b, c, "--json", out, "--csv", table)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("last packet"))
    assert "(1.200×, significant)" in line and "(1.000×, not significant)" in line
    assert "Student's two-sample t-test" in proc.stdout
    doc = json.loads(out.read_text())
    figure = doc["figures"]["last_packet_ms"]
    assert figure["B"]["significant"] is True and figure["C"]["significant"] is False
    assert figure["B"]["ratio"] == pytest.approx(120.125 / 100.125)
    rows = list(csv.DictReader(table.open()))
    assert [(r["figure"], r["b"], r["significant"]) for r in rows if r["figure"] == "last_packet_ms"] == [
        ("last_packet_ms", "B", "True"),
        ("last_packet_ms", "C", "False"),
    ]


def test_compare_with_a_single_run_cannot_tell(tmp_path):
    a = _bench_file(tmp_path / "a.json", [100.0, 101.0, 99.0])
    single = tmp_path / "one.json"
    write_json(_runs([150.0])[0], single)  # what scabench run --json writes without --runs
    proc = scabench("compare", a, single)
    assert proc.returncode == 0, proc.stderr
    assert "cannot tell" in proc.stdout and "B: one run, no spread" in proc.stdout


def test_compare_warns_when_the_streams_differ(tmp_path):
    a = _bench_file(tmp_path / "a.json", [100.0, 101.0])
    runs = _runs([50.0, 51.0])
    for r in runs:
        r.producer.sent = 5
    b = tmp_path / "b.json"
    write_json(Benchmark("ok", {}, 2, 0, guard_dict(guard_settings()), runs), b)
    proc = scabench("compare", a, b)
    assert proc.returncode == 0 and "different numbers of packets" in proc.stdout


GUARD = guard_dict(guard_settings())


def test_no_warning_for_close_quiet_runs():
    assert warnings_of(_runs([100.0, 101.0, 100.5], foreign_cpu_pct=0.5), GUARD) == []


def test_warnings_name_the_spread_the_disturbance_the_redos_and_a_stall():
    runs = _runs([100.0, 130.0, 90.0], foreign_cpu_pct=0.5)
    runs[1].foreign_cpu_pct = 47.8
    runs[2].attempt, runs[2].redone_for_foreign_load_pct = 3, [12.0, 30.5]
    runs[2].machine_was_quiet = False
    runs[0].stalls = [{"component": "stage1", "for_ms": 812.0, "at_ms": 10.0, "threshold_ms": 100.0}]
    said = warnings_of(runs, GUARD, [{"run": 3, "flaw": "stage1 stalled 900 ms"}], runs_asked=4)
    text = "\n".join(said)
    assert "only 3 of the 4 runs" in text
    assert "spread by more than 5 %" in text and "last packet" in text
    assert "up to 47.8 % of the run's cores during 1 of 3 runs" in text
    assert "1 of 3 runs were redone: 2 attempt(s) thrown away, during which others used 12–30.5 %" in text
    assert "still busy" in text and "before 1 run(s)" in text
    assert "1 of 3 runs stalled 1 time(s)" in text and "the longest: stage1, 812 ms, in run 1" in text
    assert "1 attempt(s) thrown away for what was seen in them (run 3: stage1 stalled 900 ms)" in text


def test_a_single_disturbed_run_says_how_to_do_better():
    said = warnings_of(_runs([100.0], foreign_cpu_pct=47.8), {})
    assert len(said) == 1 and "47.8 %" in said[0] and "--runs K" in said[0]


# The hop cost: each process's CPU per packet, in the summary and in compare.


def _costly_runs(stage_cpu_s, floor_ms=10.0):
    """Runs of producer -> stage1 (10 packets), each process's window CPU
    known: the producer's 1 ms, stage1's from the list."""
    runs = _runs([100.0 + i for i in range(len(stage_cpu_s))])
    for run, cpu in zip(runs, stage_cpu_s):
        run.hosts = [
            {"name": "host0-producer", "components": ["producer"], "window_cpu_s": 0.001},
            {"name": "host1-stage1", "components": ["stage1"], "window_cpu_s": cpu},
        ]
        run.floor_ms = floor_ms
        if not floor_ms:
            run.overhead_ratio = None
    return runs


def test_a_process_cpu_per_packet_is_its_window_cpu_over_its_packets():
    run = _costly_runs([0.004])[0]
    run.hosts.append({"name": "exec-theirs", "components": ["theirs"]})  # not measured: left out
    assert run.process_cpu_per_packet_ms() == pytest.approx({"producer": 0.1, "stage1": 0.4})
    # Collocated, one process: its CPU over the most packets any of its components handled.
    run.hosts = [{"components": ["producer", "stage1"], "window_cpu_s": 0.005}]
    assert run.process_cpu_per_packet_ms() == pytest.approx({"producer+stage1": 0.5})


def test_the_whole_run_cpu_per_packet_is_every_process_cpu_over_the_packets_sent():
    """One definition beside each process's: the sweep weighs a tie by it."""
    run = _costly_runs([0.004])[0]
    assert run.cpu_per_packet_ms() == pytest.approx(0.5)  # (1 ms + 4 ms) / 10 packets sent
    point = SweepPoint("p", {}, 1, 10, "ok", ["stage1"], [0], Benchmark("ok", {}, 1, 0, GUARD, [run]))
    assert point.per_run()["cpu_per_packet_us"] == pytest.approx([1e3 * run.cpu_per_packet_ms()])
    run.hosts.append({"name": "exec-theirs", "components": ["theirs"]})  # a process whose CPU is unknown
    assert run.cpu_per_packet_ms() is None and point.per_run()["cpu_per_packet_us"] == [None]


def test_the_benchmark_summary_gives_each_process_cpu_per_packet():
    bench = Benchmark("ok", {}, 3, 0, GUARD, _costly_runs([0.004, 0.005, 0.006]))
    summary = bench.summary()
    assert summary["cpu_per_packet_ms_stage1"].median == pytest.approx(0.5)
    assert summary["cpu_per_packet_ms_producer"].n == 3
    assert bench.rows()[0]["cpu_per_packet_ms_stage1"] == pytest.approx(0.4)
    assert [r["figure"] for r in bench.summary_rows()][-2:] == [
        "cpu_per_packet_ms_producer",
        "cpu_per_packet_ms_stage1",
    ]
    assert bench.as_dict()["summary"]["cpu_per_packet_ms_stage1"]["max"] == pytest.approx(0.6)
    header, rows = summary_rows(summary, bench.figures())
    assert rows[-1][:2] == ["CPU per packet: stage1", "500 µs"]


SPEC = {
    "file": "s.toml",
    "cores": [0, 1],
    "transport": "tcp",
    "hosts": [{}, {}],
    "components": [{}, {}],
    "connections": [],
}


def test_the_summary_and_compare_define_every_term_they_show(tmp_path):
    """The --runs summary and compare printed "latency p99", "packets
    reordered", "σ" and each process's "CPU per packet" without a word on
    what they are."""
    bench = Benchmark("ok", SPEC, 3, 0, GUARD, _costly_runs([0.004, 0.005, 0.006]))
    a, b = write_json(bench, tmp_path / "a.json"), write_json(bench, tmp_path / "b.json")
    compared = scabench("compare", a, b)
    assert compared.returncode == 0, compared.stderr
    for shown in (" ".join(format_benchmark(bench).split()), " ".join(compared.stdout.split())):
        for f in bench.figures():
            assert f.label in shown and f"{f.term}: {f.means}" in shown, f.term
        assert shown.count("CPU per packet: a process's CPU") == 1  # one definition for every process's
        assert shown.count("ratio: last packet / floor (1: ideal)") == 1
        assert "floor: least time the hardware allows for the last packet" in shown
        assert shown.count("σ: the runs' sample standard deviation") == 1
    single = scabench(
        "compare", a, write_json(Benchmark("ok", SPEC, 1, 0, GUARD, _costly_runs([0.004])), tmp_path / "one.json")
    )
    assert "(1.000×, cannot tell)" in single.stdout
    assert "cannot tell: a side has one run (no spread to judge by) or no value" in " ".join(single.stdout.split())


def test_compare_gives_each_process_cpu_per_packet(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_json(Benchmark("ok", {}, 4, 0, GUARD, _costly_runs([0.004, 0.0041, 0.0039, 0.004])), a)
    write_json(Benchmark("ok", {}, 4, 0, GUARD, _costly_runs([0.008, 0.0081, 0.0079, 0.008])), b)
    out = tmp_path / "cmp.json"
    proc = scabench("compare", a, b, "--json", out)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("CPU per packet: stage1"))
    assert "(2.000×, significant)" in line
    assert json.loads(out.read_text())["figures"]["cpu_per_packet_ms_stage1"]["B"]["significant"] is True


def test_compare_without_a_floor_says_so_instead_of_cannot_tell(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_json(Benchmark("ok", {}, 2, 0, GUARD, _costly_runs([0.004, 0.005], floor_ms=0.0)), a)
    write_json(Benchmark("ok", {}, 2, 0, GUARD, _costly_runs([0.004, 0.005], floor_ms=0.0)), b)
    out = tmp_path / "cmp.json"
    proc = scabench("compare", a, b, "--json", out)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("ratio"))
    assert "no floor (no declared work)" in line and "cannot tell" not in line
    assert json.loads(out.read_text())["figures"]["overhead_ratio"]["B"]["why"] == "no floor (no declared work)"


# compare's inputs: a figure written as a string, a run that did not finish.


def test_compare_refuses_a_figure_written_as_a_string(tmp_path):
    a = _bench_file(tmp_path / "a.json", [100.0, 101.0])
    doc = _runs([150.0])[0].as_dict()
    doc["stages"][-1]["last_packet_ms"] = "fast"
    (tmp_path / "s.json").write_text(json.dumps(doc))
    proc = scabench("compare", a, tmp_path / "s.json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: B: {tmp_path / 's.json'} is not a result of scabench run --json (StageResult: last_packet_ms is a "
        "string ('fast'), where a number or null is due)"
    ]


def test_compare_refuses_a_run_that_did_not_finish(tmp_path):
    a = _bench_file(tmp_path / "a.json", [100.0, 101.0])
    failed = RunResult(status="failed", spec={}, environment={}, floor_ms=10.0, started_at=1.0, error="stage1 died")
    write_json(failed, tmp_path / "f.json")
    proc = scabench("compare", a, tmp_path / "f.json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        f"error: B: {tmp_path / 'f.json'} holds a run that did not finish (status failed: stage1 died); "
        "only runs that finished compare"
    ]


def test_a_result_refuses_values_of_the_wrong_json_type():
    doc = _runs([150.0])[0].as_dict()
    assert RunResult.from_dict({**doc, "overhead_ratio": 2}).overhead_ratio == 2  # an integer is a number
    for bad in ("1.5", True, [1.5]):
        with pytest.raises(ValueError, match="overhead_ratio is"):
            RunResult.from_dict({**doc, "overhead_ratio": bad})
    with pytest.raises(ValueError, match="received is a number"):
        RunResult.from_dict({**doc, "stages": [{**doc["stages"][0], "received": 10.5}]})


def test_processes_come_in_pipeline_order():
    run = _costly_runs([0.004])[0]
    run.hosts = run.hosts[::-1]  # the launcher lists an external program after the hosts
    assert list(run.process_cpu_per_packet_ms()) == ["producer", "stage1"]

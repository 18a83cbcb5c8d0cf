"""scabench as a library, over real processes: `import scabench` in a fresh
interpreter loads nothing else; exp6 as Python, TOML and SAD XML runs
alike; a run, a benchmark and a sweep come back typed; the examples run
(the library without running anything: unit/test_api.py)."""

import csv
import importlib.util
import json
import os
import subprocess
import sys
import tomllib

import pytest
from test_api import SAD_EXP6, TOML_EXP6, example, run_example, same, tiny

import scabench
from scabench.model.load import load_spec
from scabench.report.tables import benchmark_csv


def test_import_scabench_loads_nothing_else():
    """The command line and the component programs import the package first:
    it must not pull numpy, rich, omniORB or the layers in; a name pulls its
    module in on first use, and not matplotlib."""
    code = (
        "import sys, scabench\n"
        "heavy = lambda: sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'rich', 'omniORB', "
        "'matplotlib', 'scipy') or m.startswith('scabench.'))\n"
        "print(heavy())\n"
        "scabench.Waveform, scabench.RunResult, scabench.SweepResult\n"
        "print('matplotlib' in sys.modules, 'scabench.api' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "False True"]


def test_python_toml_and_sad_run_the_same_pipeline():
    """exp6 as Python, TOML and SAD XML: one resolved spec, and each runs it
    over real processes to the same shape of result."""
    ways = {"python": example("exp6").exp6(), "toml": scabench.load(TOML_EXP6), "sad": scabench.load(SAD_EXP6)}
    results = {}
    for way, wf in ways.items():
        wf["stage1"].set(work_us=1000)  # few, short packets: the pipeline's shape is the point
        results[way] = wf.run(packets=5)
    described = {way: r.spec for way, r in results.items()}
    assert same(described["python"], described["toml"]) and same(described["python"], described["sad"])
    assert [d["file"] for d in described.values()] == ["<waveform exp6>", "<waveform exp6>", "<waveform exp6>"]
    for way, r in results.items():
        assert r.status == "ok", (way, r.error)
        assert r.producer.sent == 5
        assert [(s.name, s.received, s.reordered_from_original) for s in r.stages] == [
            ("stage1", 5, 0),
            ("stage2", 5, 0),
            ("stage3", 5, 0),
        ], way
        assert [h["components"] for h in r.hosts] == [["producer"], ["stage1"], ["stage2"], ["stage3"]]
        assert r.naming["context"] == "exp6_1"


def test_a_run_typed_and_as_rows():
    result = tiny().run()
    assert isinstance(result, scabench.RunResult) and result.status == "ok"
    assert result.spec["file"] == "<waveform tiny>" and result.naming["context"] == "tiny_1"
    assert [s.name for s in result.stages] == ["stage1", "stage2"]
    assert all(isinstance(s, scabench.StageResult) for s in result.stages)
    assert isinstance(result.stages[0].latency_in_stage_us, scabench.Latency)
    rows = result.rows()
    assert [(r["component"], r["role"]) for r in rows] == [
        ("producer", "source"),
        ("stage1", "stage"),
        ("stage2", "stage"),
    ]
    for row in rows:
        assert all(not isinstance(v, (list, dict)) for v in row.values()), row
    assert rows[0]["sent"] == 5 and rows[2]["received"] == 5
    assert rows[1]["latency_in_stage_us_p50"] == result.stages[0].latency_in_stage_us.p50
    assert rows[2]["last_packet_ms"] == result.stages[1].last_packet_ms
    assert "stage1" in scabench.text(result) and "end to end" in scabench.text(result)


def test_a_benchmark_typed_and_as_rows():
    bench = tiny().run(2, warmup=1, quiet_wait_s=0)
    assert isinstance(bench, scabench.Benchmark) and bench.status == "ok" and len(bench.runs) == 2
    runs = bench.rows()
    assert [r["run"] for r in runs] == [1, 2]
    assert [r["last_packet_ms"] for r in runs] == [b.stages[-1].last_packet_ms for b in bench.runs]
    assert all(r["packets_reordered"] == 0 for r in runs)
    stages = bench.stage_rows()
    assert [(r["run"], r["component"]) for r in stages] == [
        (1, "producer"),
        (1, "stage1"),
        (1, "stage2"),
        (2, "producer"),
        (2, "stage1"),
        (2, "stage2"),
    ]
    summary = bench.summary_rows()
    assert [r["figure"] for r in summary] == list(bench.summary())
    assert summary[0]["n"] == 2 and summary[0]["median"] == bench.summary()["last_packet_ms"].median
    header, body = benchmark_csv(bench)
    assert header == list(summary[0]) and body[0] == list(summary[0].values())
    assert "95 % CI (median)" in scabench.text(bench)
    # Each process's hop cost, by the components it holds.
    processes = ["+".join(h["components"]) for h in bench.runs[0].hosts]
    assert all(f"CPU per packet: {p}" in scabench.text(bench) for p in processes)
    assert all(runs[0][f"cpu_per_packet_ms_{p}"] > 0 for p in processes)


def test_a_sweep_typed_and_resumed(tmp_path):
    wf = tiny()
    grid = {"policy.call": ["oneway", "twoway"]}
    sweep = wf.sweep(grid, runs=1, quiet_wait_s=0, out=tmp_path / "sweep")
    assert isinstance(sweep, scabench.SweepResult) and sweep.status == "ok" and sweep.reused == 0
    assert sweep.spec == "<waveform tiny>" and sweep.grid == grid
    assert [p.settings for p in sweep.points] == [{"policy.call": "oneway"}, {"policy.call": "twoway"}]
    for point in sweep.points:
        assert isinstance(point.benchmark, scabench.Benchmark) and point.benchmark.runs[0].producer.sent == 5
    assert isinstance(sweep.answer, scabench.Answer) and sweep.answer.best is not None
    assert sweep.best.label == sweep.answer.best["label"] and sweep.best.reordered_at_outputs == [0]
    rows = sweep.rows()
    assert [r["policy.call"] for r in rows] == ["oneway", "twoway"]
    assert [r["qualifies"] for r in rows if r["label"] == sweep.best.label] == [True]
    assert len(sweep.run_rows()) == 2 and sweep.run_rows()[0]["policy.call"] == "oneway"
    # results.json is the document; the same call resumes from it, measuring nothing.
    saved = json.loads((tmp_path / "sweep" / "results.json").read_text())
    assert saved["points"] == sweep.as_dict()["points"]
    again = wf.sweep(grid, runs=1, quiet_wait_s=0, out=tmp_path / "sweep")
    assert again.reused == 2
    assert [p.benchmark.runs[0].started_at for p in again.points] == [
        p.benchmark.runs[0].started_at for p in sweep.points
    ]
    assert again.answer == sweep.answer
    # One-way into stage2 is served by one thread per connection, from one sending thread: guaranteed too.
    assert [p.order_guaranteed for p in sweep.points] == [True, True]
    # One run a point gives compare no spread to judge by: the two tie.
    assert sweep.answer.tie is not None and "one run on a side" in sweep.answer.tie["why"]
    assert "Tie between the two fastest configurations that guarantee order" in scabench.text(sweep)
    # A grid beyond the cap is refused before any point is planned.
    with pytest.raises(scabench.SpecError, match=r"1,000,000 points \(1000 × 1000 values\)"):
        wf.sweep({"stage1.work_us": list(range(1000)), "stage2.work_us": list(range(1000))})


def test_example_exp6(tmp_path):
    out = tmp_path / "exp6.json"
    proc = run_example("exp6", "--packets", 6, "--json", out)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("exp6: two-way, producer does not wait, worker thread")
    result = json.loads(out.read_text())
    assert result["status"] == "ok" and result["producer"]["sent"] == 6
    assert [(s["name"], s["received"]) for s in result["stages"]] == [("stage1", 6), ("stage2", 6), ("stage3", 6)]
    assert same(result["spec"], load_spec(TOML_EXP6).with_packets(6, where="--packets").describe())
    toml = run_example("exp6", "--toml")
    assert toml.returncode == 0
    assert scabench.Waveform.from_dict(tomllib.loads(toml.stdout)) == scabench.load("exp6")
    bad = run_example("exp6", "--cores", "4096", "--packets", 3)
    assert bad.returncode == 2
    assert bad.stderr.strip() == (
        "error: <waveform exp6>: run.cores: CPU 4096 is not usable here; usable CPUs: "
        f"{sorted(os.sched_getaffinity(0))}"
    )


def test_example_sweep_of_call_and_worker(tmp_path):
    out = tmp_path / "sweep.json"
    proc = run_example("sweep_call_worker", "--packets", 4, "--runs", 1, "--quiet-wait", 0, "--json", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert [p["settings"] for p in doc["points"]] == [
        {"policy.call": c, "policy.worker": w} for c in ("oneway", "twoway") for w in (False, True)
    ]
    best = doc["answer"]["best"]
    assert best is not None  # two-way keeps order: something always qualifies
    assert best["settings"]["policy.call"] == "twoway"  # one-way into the pool never: it cannot promise order
    tie = doc["answer"]["tie"]
    lead = (
        "configurations that guarantee order by their policies and kept 0 packets reordered at every output in "
        f"every run; {'preferred' if tie and tie['preferred_by'] else 'listed first'}"
        if tie
        else "configuration that guarantees order by its policies and kept 0 packets reordered at every output "
        "in every run"
    )
    assert f"{lead}: {best['label']}" in proc.stdout
    assert f"answer: {best['settings']}" in proc.stdout
    missing = run_example("sweep_call_worker", "--spec", "no-such-spec")
    assert missing.returncode == 2 and missing.stderr.startswith("error: no-such-spec: no such file")
    assert len(missing.stderr.strip().splitlines()) == 1


def test_example_results_as_tables(tmp_path):
    proc = run_example("results_to_pandas", "--packets", 5, "--runs", 2, "--quiet-wait", 0, "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    tables = {name: list(csv.DictReader(open(tmp_path / f"{name}.csv"))) for name in ("runs", "stages", "summary")}
    assert [r["run"] for r in tables["runs"]] == ["1", "2"]
    assert [(r["run"], r["component"]) for r in tables["stages"]] == [
        (str(i), c) for i in (1, 2) for c in ("producer", "stage1", "stage2")
    ]
    assert [r["figure"] for r in tables["summary"]][:4] == [
        "last_packet_ms",
        "overhead_ratio",
        "packets_reordered",
        "latency_p99_ms",
    ]
    assert {r["figure"] for r in tables["summary"][4:]} == {
        "cpu_per_packet_ms_producer",
        "cpu_per_packet_ms_stage1",
        "cpu_per_packet_ms_stage2",
    }
    assert all(r["received"] == "5" for r in tables["stages"] if r["role"] == "stage")
    if importlib.util.find_spec("pandas") is None:
        assert "pandas is not installed" in proc.stdout
    else:
        assert "latency_in_stage_us_p50" in proc.stdout

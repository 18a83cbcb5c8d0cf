"""`scabench sweep`: crossed grids over real processes, the answer to the
paper's question (fastest in-order configuration) on known summaries, the
resume of a sweep cut short, and bad grids refused before anything runs."""
import json

import pytest

from conftest import pipeline_toml, scabench
from scabench.measure.sweep import answer, key_of, why_not


def _point(label, last_ms, reordered, p99_ms=1.0, status="ok"):
    def s(v):
        return {"n": len(reordered), "median": v, "min": v, "max": v}
    return {"label": label, "settings": {"policy.call": label}, "runs_asked": len(reordered), "packets": 8,
            "status": status, "outputs": ["stage2"], "reordered_at_outputs": reordered,
            "summary": {"last_packet_ms": s(last_ms), "overhead_ratio": s(last_ms / 2.0),
                        "packets_reordered": s(max(reordered or [0])), "latency_p99_ms": s(p99_ms)},
            "benchmark": {"warnings": []}}


def test_a_reordering_point_is_never_the_answer_however_fast():
    points = [_point("fast", 1.0, [0, 3]), _point("middle", 2.0, [0, 0]), _point("slow", 3.0, [0, 0])]
    a = answer(points)
    assert a["best"]["label"] == "middle" and a["runner_up"]["label"] == "slow"
    assert a["best"]["overhead_ratio"] == 1.0 and a["best"]["latency_p99_ms"] == 1.0
    assert a["excluded"] == [{"label": "fast", "why": "reordered packets (up to 3 in a run)"}]


def test_the_latency_bound_excludes_and_can_leave_none():
    points = [_point("quick-but-late", 1.0, [0], p99_ms=50.0), _point("slow", 3.0, [0], p99_ms=2.0)]
    assert answer(points)["best"]["label"] == "quick-but-late"
    bounded = answer(points, max_latency_ms=10.0)
    assert bounded["best"]["label"] == "slow" and bounded["runner_up"] is None
    assert "over the 10 ms bound" in why_not(points[0], 10.0)
    none = answer(points + [_point("reorders", 0.5, [1])], max_latency_ms=1.0)
    assert none["best"] is None and none["qualified"] == 0 and len(none["excluded"]) == 3


def test_a_failed_point_does_not_qualify():
    a = answer([_point("broken", 0.5, [], status="failed"), _point("ok", 4.0, [0])])
    assert a["best"]["label"] == "ok" and "did not finish" in a["excluded"][0]["why"]


def _sweep(spec, out, *more):
    return scabench("sweep", spec, "--grid", "policy.call=oneway,twoway", "--runs", 1, "--quiet-wait", 1,
                    "--out", out, *more, timeout=300)


def test_a_two_point_sweep_end_to_end_answers_with_an_in_order_configuration(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    out = tmp_path / "sweep"
    proc = _sweep(spec, out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert list(doc)[0] == "scabench" and doc["status"] == "ok"
    assert [p["settings"] for p in doc["points"]] == [{"policy.call": "oneway"}, {"policy.call": "twoway"}]
    for p in doc["points"]:
        assert p["status"] == "ok" and len(p["benchmark"]["runs"]) == 1 and p["packets"] == 8
        assert p["benchmark"]["runs"][0]["producer"]["sent"] == 8
        assert p["summary"]["last_packet_ms"]["median"] > 0
    best = doc["answer"]["best"]
    assert best is not None  # two-way keeps order, so something always qualifies
    chosen = next(p for p in doc["points"] if p["label"] == best["label"])
    assert chosen["reordered_at_outputs"] == [0]
    assert best["last_packet_ms"] == min(p["summary"]["last_packet_ms"]["median"] for p in doc["points"]
                                         if p["reordered_at_outputs"] == [0])
    assert f"Fastest configuration that kept 0 packets reordered" in proc.stdout and best["label"] in proc.stdout
    assert "point 2/2" in proc.stderr  # progress, on stderr
    report = (out / "report.md").read_text()
    assert report.startswith(f"# Sweep of") and report.index("## Answer") < report.index("## Points")
    assert (out / "report.html").stat().st_size > 0 and (out / "sweep.png").stat().st_size > 0
    header = (out / "sweep.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "policy.call" and "last_packet_ms_median" in header and "latency_p99_ms_median" in header


def test_an_interrupted_sweep_resumes_skipping_the_points_measured(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    out = tmp_path / "sweep"
    out.mkdir()
    # What a sweep cut short after its first point leaves: that point, marked
    # so that a measurement of it again would show.
    kept = _point("oneway", 123.0, [0])
    kept["settings"] = {"policy.call": "oneway"}
    (out / "results.json").write_text(json.dumps({"scabench": {}, "status": "interrupted", "sweep": {"spec": str(spec)},
                                                  "points": [kept]}))
    proc = _sweep(spec, out)
    assert proc.returncode == 0, proc.stderr
    assert "point 1/2 policy.call=oneway: measured already, skipped" in proc.stderr
    assert "resumed: 1 of 2" in proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["points"][0]["summary"]["last_packet_ms"]["median"] == 123.0  # reused, not measured again
    assert doc["points"][1]["settings"] == {"policy.call": "twoway"} and len(doc["points"][1]["benchmark"]["runs"]) == 1
    # Other runs or packets are another measurement: nothing is skipped.
    assert key_of({"policy.call": "oneway"}, 1, 8) != key_of({"policy.call": "oneway"}, 2, 8)
    proc = scabench("sweep", spec, "--grid", "policy.call=oneway", "--runs", 1, "--packets", 5, "--quiet-wait", 1,
                    "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "skipped" not in proc.stderr and json.loads((out / "results.json").read_text())["points"][0]["packets"] == 5


def test_a_sweep_of_another_spec_in_the_same_out_is_refused(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    out = tmp_path / "sweep"
    out.mkdir()
    doc = {"scabench": {}, "status": "ok", "sweep": {"spec": str(tmp_path / "other.toml")}, "points": []}
    (out / "results.json").write_text(json.dumps(doc))
    proc = _sweep(spec, out)
    assert proc.returncode == 2 and "other.toml" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert json.loads((out / "results.json").read_text()) == doc  # left as it was


@pytest.mark.parametrize("grid, words", [
    ("policy.call=oneway,bogus", "bogus"),
    ("stage9.work_us=1,2", "stage9"),
    ("run.nothing=1", "run.nothing"),
    ("call=oneway", "policy.KEY"),
    ("policy.worker=", "KEY=V1,V2"),
])
def test_a_bad_grid_exits_2_with_one_line_before_anything_runs(write_spec, tmp_path, grid, words):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    # The good first grid is crossed with the bad one: every point is checked before any runs.
    proc = scabench("sweep", spec, "--grid", "stage1.work_us=100,200", "--grid", grid, "--out", tmp_path / "o")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()

"""`scabench sweep` over real processes: a two-point sweep end to end and
the resume of one cut short (the answer on known summaries and bad grids
refused before anything runs: unit/test_sweep.py)."""

import json

from conftest import pipeline_toml, scabench
from test_sweep import _sweep, _sweep_until


def test_a_two_point_sweep_end_to_end_answers_with_an_in_order_configuration(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    out = tmp_path / "sweep"
    proc = _sweep(spec, out, "--json", tmp_path / "s.json", "--csv", tmp_path / "s.csv")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert list(doc)[0] == "scabench" and doc["status"] == "ok"
    assert (tmp_path / "s.json").read_text() == (out / "results.json").read_text()
    assert (tmp_path / "s.csv").read_text() == (out / "sweep.csv").read_text()
    assert [p["settings"] for p in doc["points"]] == [{"policy.call": "oneway"}, {"policy.call": "twoway"}]
    for p in doc["points"]:
        assert p["status"] == "ok" and len(p["benchmark"]["runs"]) == 1 and p["packets"] == 8
        assert p["benchmark"]["runs"][0]["producer"]["sent"] == 8
        assert p["summary"]["last_packet_ms"]["median"] > 0
    best = doc["answer"]["best"]
    assert best is not None  # two-way keeps order, so something always qualifies
    chosen = next(p for p in doc["points"] if p["label"] == best["label"])
    assert chosen["reordered_at_outputs"] == [0]
    assert best["last_packet_ms"] == min(
        p["summary"]["last_packet_ms"]["median"]
        for p in doc["points"]
        if p["reordered_at_outputs"] == [0] and p["order_guaranteed"]
    )
    assert (
        "Fastest configuration that guarantees order by its policies and kept 0 packets reordered" in proc.stdout
        and best["label"] in proc.stdout
    )
    assert "point 2/2" in proc.stderr  # progress, on stderr
    report = (out / "report.md").read_text()
    assert report.startswith("# Sweep of") and report.index("## Answer") < report.index("## Points")
    assert (out / "report.html").stat().st_size > 0 and (out / "sweep.png").stat().st_size > 0
    header = (out / "sweep.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "policy.call" and "last_packet_ms_median" in header and "latency_p99_ms_median" in header
    # One-way into the pool cannot promise order: never the answer, however it ran.
    oneway = next(p for p in doc["points"] if p["settings"] == {"policy.call": "oneway"})
    assert oneway["order_guaranteed"] is False and best["label"] == "policy.call=twoway"
    assert "Warning: The source is unpaced (no period) at every point" in proc.stdout

    # The same command again: every point is measured already, and the answer is the first one's.
    again = _sweep(spec, out)
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "results.json").read_text())["answer"] == doc["answer"]
    answer_part = proc.stdout.split("\n\n")[1].split("report:")[0]
    assert answer_part in again.stdout and "No configuration qualified" not in again.stdout


def test_an_interrupted_sweep_resumes_where_it_stopped_keeping_every_run(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    out = tmp_path / "sweep"
    # Ctrl-C once the second point has kept its first run: the first point is
    # whole in results.json, the second half-way through its runs.
    code, stderr = _sweep_until(spec, out, "point 2/2 policy.call=twoway: run 1/2: last packet")
    assert code == 130, stderr
    assert "interrupted by SIGINT" in stderr and "results.json" in stderr and "Traceback" not in stderr
    cut = json.loads((out / "results.json").read_text())
    assert cut["status"] == "interrupted" and cut["answer"] is None
    first, second = cut["points"]
    assert first["status"] == "ok" and len(first["benchmark"]["runs"]) == 2
    assert second["status"] == "interrupted" and len(second["benchmark"]["runs"]) == 1

    proc = _sweep(spec, out, "--runs", 2)
    assert proc.returncode == 0, proc.stderr
    assert "point 1/2 policy.call=oneway: measured already (2 run(s)), skipped" in proc.stderr
    assert "point 2/2 policy.call=twoway: 1 of 2 run(s) measured already; measuring the rest" in proc.stderr
    # Only the run missing was measured.
    assert "policy.call=oneway: run" not in proc.stderr and "policy.call=twoway: run 1/2" not in proc.stderr
    assert "policy.call=twoway: run 2/2: last packet" in proc.stderr
    assert (
        "1 of 2 point(s) were measured already and skipped; 1 run(s) of 1 point(s) without all their runs "
        "were kept, and only the runs missing measured"
    ) in proc.stderr
    doc = json.loads((out / "results.json").read_text())
    assert doc["status"] == "ok" and doc["answer"]["best"] is not None
    assert [p["status"] for p in doc["points"]] == ["ok", "ok"]
    assert doc["points"][0]["benchmark"]["runs"] == first["benchmark"]["runs"]  # kept as measured, not rerun
    kept, *more = doc["points"][1]["benchmark"]["runs"]
    assert kept == second["benchmark"]["runs"][0] and len(more) == 1 and more[0]["started_at"] > kept["started_at"]
    assert doc["points"][1]["summary"]["last_packet_ms"]["n"] == 2
    assert "Fastest configuration" in proc.stdout

    # What OUT holds is another measurement than these: refused, one line,
    # saying how to start afresh, and OUT left as it was.
    whole = (out / "results.json").read_text()
    for more_args, says in (
        (("--grid", "policy.call=oneway"), "give the same --grid values"),
        (("--packets", 5), "measured with 8 packets a run, not 5"),
        (("--runs", 1), "give --runs 2 or more"),
    ):
        args = ["sweep", spec, "--quiet-wait", 1, "--out", out, *more_args]
        if "--grid" not in more_args:
            args += ["--grid", "policy.call=twoway,oneway"]  # the same grid, in another order
        refused = scabench(*args)
        assert refused.returncode == 2, (more_args, refused.stderr)
        assert len(refused.stderr.strip().splitlines()) == 1 and says in refused.stderr, refused.stderr
        assert "start afresh, give another --out or delete" in refused.stderr
        assert (out / "results.json").read_text() == whole

    # A sweep whose every point is measured goes straight to its report:
    # Ctrl-C there, outside the measuring, still exits 130 (not click's 1).
    code, stderr = _sweep_until(spec, out, "resumed from")
    assert code == 130 and "interrupted by SIGINT" in stderr and "Aborted" not in stderr, stderr

"""`scabench run --runs K` and a single run's CSV over real processes (the
warnings and `scabench compare` on samples whose verdicts are known:
unit/test_benchmark.py)."""

import csv
import json

import pytest
from conftest import pipeline_toml, scabench

from scabench.measure import stats
from scabench.measure.repeat import Benchmark


def test_runs_end_to_end_keep_every_run_and_the_summary(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=6, stages=1, work_us=500))
    out, table = tmp_path / "bench.json", tmp_path / "bench.csv"
    proc = scabench(
        "run", spec, "--runs", 2, "--warmup", 1, "--quiet-wait", 1, "--json", out, "--csv", table, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    for words in ("median", "mean ± σ", "min … max", "95 % CI", "last packet", "ratio", "packets reordered", "floor: "):
        assert words in proc.stdout, words
    assert "warm-up 1/1" in proc.stderr and "run 2/2" in proc.stderr  # progress, on stderr
    doc = json.loads(out.read_text())
    assert list(doc)[:3] == ["scabench", "status", "spec"] and doc["status"] == "ok"
    assert doc["benchmark"]["runs"] == 2 and doc["benchmark"]["warmup"] == 1
    assert len(doc["runs"]) == 2
    for run in doc["runs"]:
        assert run["status"] == "ok" and run["producer"]["sent"] == 6
        assert run["attempt"] >= 1 and isinstance(run["machine_was_quiet"], bool)
    assert list(doc["summary"]) == [f.key for f in stats.HEADLINE] + [
        "cpu_per_packet_ms_producer",
        "cpu_per_packet_ms_stage1",
    ]
    assert "CPU per packet: stage1" in proc.stdout
    last = [r["stages"][-1]["last_packet_ms"] for r in doc["runs"]]
    assert doc["summary"]["last_packet_ms"]["n"] == 2
    assert doc["summary"]["last_packet_ms"]["median"] == pytest.approx(sum(last) / 2)
    assert doc["summary"]["last_packet_ms"]["min"] == min(last)
    # What the runs saw is in words: a run kept although others loaded the cores says so.
    if any(r["foreign_cpu_pct"] > doc["benchmark"]["guard"]["redo_above_pct"] for r in doc["runs"]):
        assert "warning: other processes used" in proc.stdout
    assert doc["warnings"] == [
        line[len("warning: ") :] for line in proc.stdout.splitlines() if line.startswith("warning: ")
    ]
    # The file reads back as it was written, and its CSV parses.
    assert Benchmark.from_dict(doc).as_dict() == doc
    rows = list(csv.DictReader(table.open()))
    assert [r["figure"] for r in rows] == list(doc["summary"])
    assert float(rows[0]["median"]) == pytest.approx(doc["summary"]["last_packet_ms"]["median"])
    assert rows[0]["unit"] == "ms" and int(rows[0]["n"]) == 2


def test_a_single_run_writes_a_csv_row_per_component(write_spec, tmp_path):
    table = tmp_path / "run.csv"
    proc = scabench("run", write_spec(pipeline_toml(packets=5, stages=2, work_us=200)), "--csv", table)
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(table.open()))
    assert [r["component"] for r in rows] == ["producer", "stage1", "stage2"]
    assert [r["received"] for r in rows] == ["5", "5", "5"]
    assert float(rows[-1]["last_packet_ms"]) > 0

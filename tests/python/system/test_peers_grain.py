"""`scabench peers --grain --quick`: the pipeline at two grains, end to end,
on plain threads and scabench's ordered strategies over shm, unix and
collocated (a few packets, no waiting for quiet); its report again from
its results; a results file of the paper's study refused."""

import csv
import json

import pytest
from conftest import scabench

PACKETS = 6
FAST = ("--quiet-wait-s", "0", "--max-redos", "0")
PEERS = ("threads", "scabench-credits-shm", "scabench-exp6-collocated", "scabench-credits-unix")
HOPS = {
    "scabench-credits-shm": ["shm"],
    "scabench-exp6-collocated": ["collocated"],
    "scabench-credits-unix": ["unix"],
}


@pytest.fixture(scope="module")
def grain_study(tmp_path_factory):
    out = tmp_path_factory.mktemp("grain") / "report"
    proc = scabench(
        "peers",
        "--grain",
        "--quick",
        "--packets",
        PACKETS,
        *FAST,
        "--only",
        ",".join(PEERS),
        "--out",
        out,
        "--json",
        out.parent / "g.json",
        "--csv",
        out.parent / "g.csv",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out, proc, json.loads((out / "results.json").read_text())


def test_every_peer_runs_every_point_in_order(grain_study):
    out, proc, doc = grain_study
    assert doc["status"] == "complete"
    assert list(doc["peers"]) == list(PEERS)
    assert [(p["work_us"], p["samples"], p["packets"]) for p in doc["points"]] == [
        (50, 1024, PACKETS),
        (0, 1024, PACKETS),
    ]
    for point in doc["points"]:
        assert (point["floor_ms"] > 0) == (point["work_us"] > 0)
        for pid in PEERS:
            entry = point["peers"][pid]
            assert not entry["failures"], (pid, entry["failures"])
            [run] = entry["runs"]
            assert run["received"] == [PACKETS] * 3 and run["in_order"] == [PACKETS] * 3, pid
            if pid in HOPS:  # each strategy's hops went where its peer says
                assert run["hops"] == HOPS[pid], (pid, run["hops"])
            figures = point["figures"][pid]
            assert figures["in_order"]
            # Work is CPU time on the thread's clock: nobody beats the floor; without work there is none.
            if point["work_us"]:
                assert figures["ratio_floor"] >= 0.99, (pid, figures)
            else:
                assert figures["ratio_floor"] is None and run["ratio"] is None
            threads_ms = point["figures"]["threads"]["last_packet_ms"]
            assert figures["ratio_threads"] == pytest.approx(figures["last_packet_ms"] / threads_ms)
        assert point["figures"]["threads"]["ratio_threads"] == 1.0
    assert (out / "peers-grain.png").stat().st_size > 0
    report = (out / "report.md").read_text()
    assert "1024 samples (8,192 B) a packet:" in report and "| peer | 50 µs | 0 µs |" in report
    assert "scabench-credits-unix" in proc.stdout and "best scabench ordered strategy" in proc.stdout
    assert (out / "report.html").is_file()


def test_json_and_csv_have_every_point_and_peer(grain_study):
    out, _, doc = grain_study
    assert json.loads((out.parent / "g.json").read_text()) == doc
    with open(out.parent / "g.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(PEERS)
    assert {(r["work_us"], r["peer"]) for r in rows} == {(w, p) for w in ("50", "0") for p in PEERS}


def test_the_report_again_from_its_results(grain_study, tmp_path):
    out, _, doc = grain_study
    (out / "report.md").unlink()
    proc = scabench("peers", "--grain", "--from-results", "--out", out, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (out / "report.md").is_file() and "best scabench ordered strategy" in proc.stdout
    # A results file of the paper's study is no --grain study's: one line, exit 2.
    other = tmp_path / "paper"
    other.mkdir()
    (other / "results.json").write_text(json.dumps({**doc, "points": None}))
    proc = scabench("peers", "--grain", "--from-results", "--out", other, timeout=120)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "cannot read the kept results as a --grain study's" in proc.stderr

"""`scabench bulk --quick`: one hop's bytes per second over tcp, unix and
shm, two-way and one-way, beside memcpy measured in the same study, end to
end (a few packets, no waiting for quiet); and scabench-profile memcpy
refusing a bad size."""

import csv
import json
import subprocess

import pytest
from conftest import scabench

from scabench.paths import program

PACKETS = 8
SIZES = (1024, 65536)
FAST = ("--quiet-wait-s", "0", "--max-redos", "0")


@pytest.fixture(scope="module")
def bulk_study(tmp_path_factory):
    out = tmp_path_factory.mktemp("bulk") / "report"
    proc = scabench(
        "bulk",
        "--quick",
        "--sizes",
        "1K,64K",
        "--packets",
        PACKETS,
        *FAST,
        "--out",
        out,
        "--csv",
        out.parent / "b.csv",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out, proc, json.loads((out / "results.json").read_text())


def test_every_transport_and_call_moves_every_packet(bulk_study):
    out, proc, doc = bulk_study
    assert doc["status"] == "complete"
    assert {(c["transport"], c["call"], c["size"]) for c in doc["cases"]} == {
        (t, c, s) for t in ("tcp", "unix", "shm") for c in ("twoway", "oneway") for s in SIZES
    }
    # memcpy at every size, measured before and after the runs.
    assert sorted(map(int, doc["memcpy"])) == list(SIZES) and all(v > 0 for v in doc["memcpy"].values())
    assert len(doc["meta"]["memcpy_foreign_pct"]) == 2
    for case in doc["cases"]:
        assert not case["failures"], case
        [run] = case["runs"]
        assert run["hops"] == [case["transport"]]  # the hop went over the transport the case names
        assert run["bytes_per_s"] == pytest.approx(case["size"] * PACKETS / (run["last_packet_ms"] / 1000))
        s = case["summary"]
        assert s["bytes_per_s"] == run["bytes_per_s"]
        assert s["of_memcpy"] == pytest.approx(run["bytes_per_s"] / doc["memcpy"][str(case["size"])])
    assert "memcpy" in proc.stdout and "median GB/s" in proc.stdout and "REDHAWK 2.2.8 manual" in proc.stdout
    report = (out / "report.md").read_text()
    assert "## REDHAWK's published figures" in report and "| 64 KB |" in report
    assert (out / "report.html").is_file()
    with open(out.parent / "b.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 12 and {r["size_bytes"] for r in rows} == {"1024", "65536"}


def test_profile_memcpy_answers_each_size_and_refuses_a_bad_one():
    proc = subprocess.run(
        [str(program("scabench-profile")), "memcpy", "--bytes", "4096,100", "--seconds", "0.05"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line.split() for line in proc.stdout.splitlines()]
    assert [(w[0], w[1]) for w in lines] == [("memcpy", "4096"), ("memcpy", "100")]
    assert all(float(w[2]) > 0 and int(w[3]) >= 10 for w in lines)
    proc = subprocess.run(
        [str(program("scabench-profile")), "memcpy", "--bytes", "4096,x"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and proc.stderr.splitlines()[0].endswith(
        "'x' is not a whole number of bytes from 1 to 1073741824"
    )

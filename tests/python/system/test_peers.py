"""`scabench peers`: the paper's pipeline on peer frameworks. End to end on
whatever peers this machine has (a few packets, no waiting for quiet), the
order check of each peer program seen to fail, a peer that is not installed
skipped with how to install it, and bad input."""

import csv
import json
import os
import re
import subprocess
import sys

import pytest
from conftest import REPO, scabench

from scabench.paths import bin_dir
from scabench.studies.peers import catalogue
from scabench.studies.peers.analysis import order_problem, row_of_program, summarise, undisturbed
from scabench.studies.peers.measure import run_program_peer
from scabench.studies.peers.render import answer_lines, format_peers, rows

PACKETS = 6
FAST = ("--quiet-wait-s", "0", "--max-redos", "0")
PROGRAMS = [p for p in catalogue.PEERS if p.is_program]


@pytest.fixture(scope="module")
def quick_study(tmp_path_factory):
    out = tmp_path_factory.mktemp("peers") / "report"
    proc = scabench(
        "peers",
        "--quick",
        "--packets",
        PACKETS,
        *FAST,
        "--out",
        out,
        "--json",
        out.parent / "p.json",
        "--csv",
        out.parent / "p.csv",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out, proc, json.loads((out / "results.json").read_text())


def test_every_installed_peer_runs_the_pipeline_in_order(quick_study):
    out, proc, doc = quick_study
    assert doc["status"] == "complete"
    assert list(doc["peers"]) == [p.id for p in catalogue.PEERS]
    assert doc["meta"]["pipeline"] == {"packets": PACKETS, "samples": 1024, "stages": 3, "work_us": 5000}
    ran = {pid: e for pid, e in doc["peers"].items() if not e["skipped"]}
    # Plain threads need nothing but the build, and scabench is the point.
    assert {"threads", "scabench-exp6", "scabench-credits", "scabench-exp6-shm", "scabench-credits-shm"} <= set(ran)
    # A shared-memory peer's hops between processes went through rings, the others' over the spec's socket.
    for pid in ("scabench-exp6-shm", "scabench-credits-shm", "scabench-exp6"):
        [run] = ran[pid]["runs"]
        hops = {c["transport"] for c in run["result"]["spec"]["connections"]}
        assert hops == ({"shm"} if pid.endswith("-shm") else {"tcp"}), (pid, hops)
    for pid, e in ran.items():
        assert not e["failures"], (pid, e["failures"])
        [run] = e["runs"]
        assert run["round"] == 1
        assert run["received"] == [PACKETS] * 3 and run["in_order"] == [PACKETS] * 3, pid
        assert run["order_problem"] is None and e["summary"]["in_order"], pid
        # Every stage's work is CPU time, so no peer can beat the floor.
        assert run["ratio"] >= 0.99, (pid, run["ratio"])
        assert run["ratio"] == pytest.approx(run["last_packet_ms"] / doc["meta"]["floor_ms"])
        assert run["cpu_s"] > 0
        assert ("output" in run) == (e["kind"] == "program") and ("result" in run) == (e["kind"] == "scabench")
        assert pid in proc.stdout
        assert e["summary"]["ratio_undisturbed"]["n"] == sum(undisturbed(r) for r in e["runs"])
    for pid, e in doc["peers"].items():
        if e["skipped"]:
            assert "scripts/setup.sh" in e["skipped"] and f"{pid}: skipped:" in proc.stderr
    # Progress: a line per run, its figures scaled, with the time spent and left.
    for pid in ran:
        assert re.search(
            rf"^\[\d+/{len(ran)}\] round 1/1 {pid}: last packet [\d.]+ (µs|ms|s), ratio [\d.]+, "
            rf"in order, foreign load [\d.]+ %  \[.*left\]$",
            proc.stderr,
            re.M,
        ), pid


def test_json_and_csv_give_the_document_and_a_row_per_peer(quick_study):
    out, proc, doc = quick_study
    assert (out.parent / "p.json").read_text() == (out / "results.json").read_text()
    with open(out.parent / "p.csv", newline="") as f:
        rows = {r["peer"]: r for r in csv.DictReader(f)}
    assert list(rows) == list(doc["peers"])
    for pid, e in doc["peers"].items():
        r = rows[pid]
        if e["skipped"]:
            assert r["skipped"] == e["skipped"] and r["runs"] == "0" and r["ratio_median"] == ""
            continue
        assert r["runs"] == "1" and r["in_order"] == "True"
        assert float(r["ratio_median"]) == pytest.approx(e["summary"]["ratio"]["median"])
        assert float(r["ratio_min"]) <= float(r["ratio_median"]) <= float(r["ratio_max"])
    assert f"rows written to {out.parent / 'p.csv'}" in proc.stdout


def test_the_report_has_the_table_the_plot_and_the_load(quick_study):
    out, proc, doc = quick_study
    text = (out / "report.md").read_text()
    assert "| peer | runs | last packet ÷ floor | min–max | undisturbed runs: median (min–max, n) |" in text
    assert "## How loaded the machine was" in text and "peers.png" in text
    assert (out / "peers.png").stat().st_size > 0 and (out / "report.html").is_file()
    assert "last packet ÷ floor" in proc.stdout and "report:" in proc.stdout


def test_the_report_opens_with_the_answer(quick_study):
    # The fastest peer in order, and scabench's fastest beside it, before the evidence.
    out, proc, doc = quick_study
    ordered = {
        pid: e["summary"]["ratio"]["median"]
        for pid, e in doc["peers"].items()
        if e.get("summary") and e["summary"]["in_order"]
    }
    best = min(ordered, key=ordered.get)
    text = (out / "report.md").read_text()
    opening = text.split("\n")[2]
    assert opening.startswith(
        f"**Fastest with every packet in order: {best}, {ordered[best]:.3f} × the floor (median of 1 round(s))"
    ), opening
    ours = min((pid for pid in ordered if doc["peers"][pid]["kind"] == "scabench"), key=ordered.get)
    assert (f"scabench's fastest: {ours}, " in opening) == (ours != best)
    assert text.index("Fastest with every packet in order") < text.index("## Last packet over the floor")
    # The terminal: the answer under the table, above where the files went.
    assert (
        proc.stdout.index("ratio: time of the last packet")
        < proc.stdout.index(f"Fastest with every packet in order: {best}")
        < proc.stdout.index("report:")
    )


def test_the_report_is_written_again_from_the_results(quick_study):
    out, _, _ = quick_study
    (out / "report.md").unlink()
    proc = scabench("peers", "--from-results", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "threads" in proc.stdout and (out / "report.md").is_file()


@pytest.mark.parametrize("peer", PROGRAMS, ids=[p.id for p in PROGRAMS])
def test_a_peers_order_check_fails_on_packets_out_of_order(peer):
    if catalogue.missing_reason(peer):
        pytest.skip(catalogue.missing_reason(peer))
    pipeline = {"packets": 8, "samples": 64, "stages": 3, "work_us": 100}
    cores = sorted(os.sched_getaffinity(0))
    good = row_of_program(run_program_peer(peer, pipeline, cores, 10.0), 10.0)
    assert good["order_problem"] is None
    # The producer swaps packets 2 and 3: every stage sees 1, 3, 2, 4 break the order.
    bad = row_of_program(run_program_peer(peer, pipeline, cores, 10.0, misorder=2), 10.0)
    assert bad["received"] == [8, 8, 8] and bad["in_order"] == [5, 5, 5]
    assert bad["order_problem"] == "stage 1 saw 3 of 8 packets out of order"


def test_order_problem_names_lost_packets_first():
    assert order_problem([10, 9, 9], [10, 9, 9], 10) == "stage 2 received 9 of 10 packets"
    assert order_problem([10, 10], [10, 10], 10) is None
    assert order_problem([], [], 10) == "no stage reported what it received"


def _bin_without(tmp_path, missing):
    """A bin folder with every program of the build but `missing`."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for path in bin_dir().iterdir():
        if path.name != missing:
            (folder / path.name).symlink_to(path)
    return folder


@pytest.mark.parametrize(
    "missing, peer, hint",
    [
        ("scabench-peer-gnuradio", "gnuradio", "scripts/setup.sh --peers"),
        ("scabench-peer-zmq", "zmq-ipc", "scripts/setup.sh"),
    ],
)
def test_a_peer_not_installed_is_skipped_with_how_to_install_it(tmp_path, missing, peer, hint):
    env = {**os.environ, "SCABENCH_BIN_DIR": str(_bin_without(tmp_path, missing))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "peers",
            "--quick",
            "--packets",
            "4",
            *FAST,
            "--only",
            f"threads,{peer}",
            "--out",
            tmp_path / "out",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith(f"{peer}: skipped:"))
    assert missing in line and hint in line
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["peers"][peer]["skipped"] and doc["peers"][peer]["runs"] == []
    assert len(doc["peers"]["threads"]["runs"]) == 1
    assert f"{peer}: skipped:" in proc.stdout and hint in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.parametrize(
    "args, says",
    [
        (["--only", "threads,nosuch"], "'nosuch' is not a peer; peers: threads"),
        (["--cores", "99"], "CPU 99 is not usable here"),
        (["--cores", "x"], "is not a list of CPU numbers"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, says):
    proc = scabench("peers", "--quick", *args, "--out", tmp_path / "out")
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()


def test_from_results_without_results_is_one_line(tmp_path):
    proc = scabench("peers", "--from-results", "--out", tmp_path)
    assert proc.returncode == 2 and "results.json: no such file" in proc.stderr


@pytest.mark.parametrize(
    "args, says",
    [
        (["--packets", "0"], "out of range"),
        (["--nosuch", "1"], "unknown argument"),
        (["--depth", "x"], "must be a whole number"),
    ],
)
def test_a_peer_program_refuses_bad_arguments(args, says):
    path = bin_dir() / "scabench-peer-threads"
    proc = subprocess.run([path, *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_run_out_of_order_is_marked_in_the_table():
    """The threads peer with two packets swapped, through the summary and
    the table as the study renders them: the peer is marked, not hidden."""
    peer = catalogue.BY_ID["threads"]
    pipeline = {"packets": 8, "samples": 64, "stages": 3, "work_us": 100}
    row = row_of_program(run_program_peer(peer, pipeline, sorted(os.sched_getaffinity(0)), 10.0, misorder=5), 10.0)
    entry = {
        "title": peer.title,
        "how": peer.how,
        "kind": "program",
        "skipped": None,
        "failures": [],
        "runs": [{"round": 1, **row, "foreign_pct": 0.0, "attempts": 1, "machine_was_quiet": True, "disturbed": False}],
    }
    entry["summary"] = summarise(entry)
    doc = {"meta": {"packets": 8, "cores": [0], "floor_ms": 10.0, "runs": 1}, "peers": {"threads": entry}}
    [cells] = rows(doc)
    assert cells[0] == "threads" and cells[7] == "NO: stage 1 saw 3 of 8 packets out of order"
    assert cells[4] == f"{row['ratio']:.3f} ({row['ratio']:.3f}, 1)"  # the one run, undisturbed
    assert "threads: out of order: stage 1 saw 3 of 8 packets out of order" in format_peers(doc)
    # Every column of the terminal's table is said under it.
    assert "ratio: time of the last packet ÷ floor, the least time the hardware allows (1: ideal)" in format_peers(
        doc, wide=True
    )
    assert "CPU s: user + system time of the peer's processes" in format_peers(doc, wide=True)
    assert answer_lines(doc) == ["No peer kept every packet in order."]


def _peer_entry(kind, ratios_disturbed):
    runs = [
        {
            "round": i + 1,
            "last_packet_ms": 10.0 * ratio,
            "ratio": ratio,
            "cpu_s": 0.1,
            "user_s": 0.1,
            "system_s": 0.0,
            "received": [8] * 3,
            "in_order": [8] * 3,
            "order_problem": None,
            "foreign_pct": 19.1 if disturbed else 0.5,
            "attempts": 1,
            "machine_was_quiet": True,
            "disturbed": disturbed,
        }
        for i, (ratio, disturbed) in enumerate(ratios_disturbed)
    ]
    entry = {"title": "t", "how": "h", "kind": kind, "skipped": None, "failures": [], "runs": runs}
    entry["summary"] = summarise(entry)
    return entry


def test_the_plot_marks_a_disturbed_run_grey_and_has_a_legend(tmp_path, monkeypatch):
    """A peer whose one round was disturbed (19.1 % foreign load) was drawn
    as a normal point, and the colours had no legend."""
    import matplotlib.pyplot as plt

    from scabench.studies.peers import render as peers_render

    doc = {
        "meta": {"packets": 8, "cores": [0, 1], "floor_ms": 10.0, "runs": 1, "guard": {"redo_above_pct": 3.0}},
        "peers": {
            "threads": _peer_entry("program", [(1.5, True)]),
            "scabench-exp6": _peer_entry("scabench", [(1.2, False)]),
        },
    }
    kept, close = [], plt.close
    monkeypatch.setattr(plt, "close", kept.append)
    peers_render._plot(doc, tmp_path)
    [fig] = kept
    try:
        ax = fig.axes[0]
        medians = {line.get_ydata()[0]: line for line in ax.lines if line.get_marker() == "o"}
        grey = matplotlib_colour(peers_render.DISTURBED_COLOUR)
        assert matplotlib_colour(medians[0].get_markerfacecolor()) == grey  # threads: its only round disturbed
        assert matplotlib_colour(medians[1].get_markerfacecolor()) != grey  # scabench-exp6: undisturbed
        ticks = [line for line in ax.lines if line.get_marker() == "|" and len(line.get_xdata())]
        assert [matplotlib_colour(t.get_color()) for t in ticks if t.get_xdata()[0] == 1.5] == [grey]
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert texts[:3] == ["scabench strategy: median", "peer framework: median", "median over disturbed rounds too"]
        assert "a round, disturbed:\nothers took over 3 % of the cores" in texts
    finally:
        close(fig)


def matplotlib_colour(c):
    from matplotlib.colors import to_rgba

    return to_rgba(c)

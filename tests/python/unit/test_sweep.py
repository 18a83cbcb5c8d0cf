"""`scabench sweep`: crossed grids over real processes, the answer to the
paper's question (fastest in-order configuration) on known summaries, the
resume of a sweep cut short, and bad grids refused before anything runs."""

import json
import signal
import subprocess
import sys

import pytest
from conftest import REPO, pipeline_toml, scabench

from scabench.console import text
from scabench.errors import SpecError
from scabench.measure.sweep import (
    MAX_POINTS,
    answer,
    grid_axes,
    label_of,
    missing_at_outputs,
    reordered_at_outputs,
    why_not,
)
from scabench.report.sweep import ANSWER_COLOUR, answer_lines, sweep_figure, sweep_view
from scabench.run.results import PathResult, RunResult, StageResult


def _point(
    label,
    last_ms,
    reordered,
    p99_ms=1.0,
    status="ok",
    guaranteed=True,
    last_runs=None,
    cpu_runs=None,
    p99_runs=None,
    unpaced=False,
):
    """A measured point as results.json keeps it; its runs' figures each
    the median unless given run by run."""

    def s(v):
        return {"n": len(reordered), "median": v, "min": v, "max": v}

    n = len(reordered)
    return {
        "label": label,
        "settings": {"policy.call": label},
        "runs_asked": n,
        "packets": 8,
        "status": status,
        "outputs": ["stage2"],
        "reordered_at_outputs": reordered,
        "order_guaranteed": guaranteed,
        "unpaced": unpaced,
        "order_why": "two-way (the sender waits)" if guaranteed else "one-way with pool dispatch can reorder",
        "summary": {
            "last_packet_ms": s(last_ms),
            "overhead_ratio": s(last_ms / 2.0),
            "packets_reordered": s(max(reordered or [0])),
            "latency_p99_ms": s(p99_ms),
        },
        "per_run": {
            "last_packet_ms": last_runs or [last_ms] * n,
            "latency_p99_ms": p99_runs or [p99_ms] * n,
            "cpu_per_packet_us": cpu_runs or [None] * n,
        },
        "benchmark": {"warnings": []},
    }


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


def test_a_point_that_kept_order_by_chance_is_listed_never_recommended():
    """One-way into a pool kept order in both runs: the policy cannot
    promise it, so the slower two-way point is the answer."""
    points = [_point("oneway", 1.0, [0, 0], guaranteed=False), _point("twoway", 9.0, [0, 0])]
    a = answer(points)
    assert a["best"]["label"] == "twoway" and a["runner_up"] is None and a["qualified"] == 1
    assert a["excluded"] == [
        {"label": "oneway", "why": "one-way with pool dispatch can reorder; kept order in 2 run(s) by chance"}
    ]
    # A point measured before order guarantees were recorded is never the answer either.
    old = _point("old", 0.5, [0, 0])
    del old["order_guaranteed"], old["order_why"]
    assert answer([old, points[1]])["best"]["label"] == "twoway"
    assert "not recorded" in why_not(old)


def test_a_winner_within_noise_ties_and_the_cheaper_in_cpu_is_preferred():
    """The fastest by median is not significantly faster (compare's rule):
    the answer says they tie and prefers the one with less CPU per packet."""
    quick_costly = _point("quick", 100.0, [0, 0, 0], last_runs=[90.0, 100.0, 110.0], cpu_runs=[50.0, 51.0, 52.0])
    cheap = _point("cheap", 101.0, [0, 0, 0], last_runs=[91.0, 101.0, 111.0], cpu_runs=[20.0, 21.0, 22.0])
    a = answer([quick_costly, cheap])
    assert a["best"]["label"] == "cheap" and a["runner_up"]["label"] == "quick"
    assert a["tie"]["preferred_by"] == "cpu_per_packet_us" and "t-test p" in a["tie"]["why"]
    assert a["best"]["cpu_per_packet_us"] == 21.0
    shown = "\n".join(answer_lines({"answer": a}))
    assert shown.startswith("Tie between the two fastest configurations") and "Tied with: quick" in shown
    assert "cheap is preferred: its CPU per packet is lower (21 against 51 µs" in shown


def test_a_tie_with_the_same_cpu_is_settled_by_latency_and_else_says_nothing_tells_them_apart():
    same_cpu = [30.0, 31.0, 32.0]
    late = _point(
        "late", 100.0, [0, 0, 0], last_runs=[90.0, 100.0, 110.0], cpu_runs=same_cpu, p99_runs=[40.0, 41.0, 42.0]
    )
    prompt = _point(
        "prompt", 101.0, [0, 0, 0], last_runs=[91.0, 101.0, 111.0], cpu_runs=same_cpu, p99_runs=[5.0, 6.0, 7.0]
    )
    a = answer([late, prompt])
    assert a["best"]["label"] == "prompt" and a["tie"]["preferred_by"] == "latency_p99_ms"
    a = answer(
        [_point("a", 100.0, [0, 0], last_runs=[90.0, 110.0]), _point("b", 101.0, [0, 0], last_runs=[91.0, 111.0])]
    )
    assert a["best"]["label"] == "a" and a["tie"]["preferred_by"] is None
    assert "tells them apart" in a["tie"]["reason"]


def test_a_winner_significantly_faster_is_no_tie():
    a = answer(
        [
            _point("fast", 10.0, [0, 0, 0], last_runs=[9.9, 10.0, 10.1]),
            _point("slow", 20.0, [0, 0, 0], last_runs=[19.9, 20.0, 20.1], cpu_runs=[1.0, 1.0, 1.0]),
        ]
    )
    assert a["best"]["label"] == "fast" and a["tie"] is None
    assert answer_lines({"answer": a})[0].startswith("Fastest configuration that guarantees order")


def test_an_unpaced_source_warns_that_latency_is_queueing():
    a = answer([_point("x", 1.0, [0], unpaced=True), _point("y", 2.0, [0], unpaced=True)])
    assert len(a["warnings"]) == 1 and "at every point" in a["warnings"][0] and "queueing" in a["warnings"][0]
    assert answer_lines({"answer": a})[-1].startswith("Warning: The source is unpaced")
    assert answer([_point("x", 1.0, [0])])["warnings"] == []


def test_no_qualified_point_says_why_and_never_an_empty_why():
    for points in ([], [_point("reorders", 1.0, [4])]):
        lines = answer_lines({"answer": answer(points)})
        assert lines[0].startswith("No configuration qualified")
        assert "Why: ." not in lines and all(not line.endswith(": .") for line in lines), lines


def test_the_plot_marks_the_answer_apart_and_the_points_left_out_hollow_with_the_legend_off_every_point():
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt

    points = [
        _point("reorders", 1.0, [0, 3]),
        _point("by-chance", 2.0, [0, 0], guaranteed=False),
        _point("answer", 3.0, [0, 0]),
        _point("slower", 4.0, [0, 0]),
    ]
    doc = {
        "sweep": {"spec": "s.toml", "grid": {"policy.call": [p["label"] for p in points]}, "max_latency_ms": None},
        "points": points,
        "answer": answer(points),
    }
    fig = sweep_figure(doc)
    fig.canvas.draw()
    try:
        for ax in fig.axes:
            assert ax.get_legend() is None  # no legend inside a panel, where it could cover a point
            marks = [c for c in ax.collections if len(c.get_offsets()) == 1]
            by_x = {int(c.get_offsets()[0][0]): c for c in marks}
            hollow = {x for x, c in by_x.items() if not len(c.get_facecolor()) or c.get_facecolor()[0][3] == 0}
            assert hollow == {0, 1}
            assert mcolors.to_hex(by_x[2].get_facecolor()[0]) == ANSWER_COLOUR
            assert mcolors.to_hex(by_x[3].get_facecolor()[0]) != ANSWER_COLOUR
            legend = fig.legends[0].get_window_extent()
            assert not legend.overlaps(ax.get_window_extent())
        assert {t.get_text() for t in fig.legends[0].get_texts()} >= {"the answer", "left out (why: see the answer)"}
    finally:
        plt.close(fig)


def test_the_terminal_table_fits_100_columns_with_every_spread_whole():
    def point(call, worker, last, p99):
        p = _point(call, last, [0, 0, 0], p99_ms=p99)
        p["settings"] = {"policy.call": call, "policy.worker": worker}
        p["label"] = label_of(p["settings"])
        for key, v in (("last_packet_ms", last), ("overhead_ratio", last / 750.0), ("latency_p99_ms", p99)):
            p["summary"][key].update(n=3, median=v, min=0.97 * v, max=1.04 * v)
        return p

    points = [
        point(c, w, last, p99)
        for c, w, last, p99 in (
            ("oneway", False, 814.1, 812.7),
            ("oneway", 16, 797.7, 792.4),
            ("twoway", False, 1563.0, 17.73),
            ("twoway", 16, 796.7, 257.3),
        )
    ]
    doc = {
        "sweep": {
            "spec": "/somewhere/exp6.toml",
            "grid": {"policy.call": ["oneway", "twoway"], "policy.worker": [False, 16]},
            "max_latency_ms": None,
        },
        "points": points,
        "answer": answer(points),
    }
    shown = text(sweep_view(doc))
    table = shown.split("\n\n")[0].splitlines()
    assert table[0].startswith("sweep of exp6.toml: 3 run(s) per point")
    assert max(map(len, table)) <= 100, shown
    assert "(789.7–846.7)" in shown and "(2.022–2.167)" not in shown  # durations' ranges whole; ratios' left out
    assert "false" in shown and "False" not in shown  # values as written on the command line
    assert "policy.call=twoway, policy.worker=16" in shown.split("\n\n")[1]


def _sweep(spec, out, *more):
    return scabench(
        "sweep",
        spec,
        "--grid",
        "policy.call=oneway,twoway",
        "--runs",
        1,
        "--quiet-wait",
        1,
        "--out",
        out,
        *more,
        timeout=300,
    )


def _sweep_until(spec, out, line_starts):
    """A two-point sweep of two runs a point, sent SIGINT as soon as its
    stderr shows a line that starts with `line_starts`; returns the
    command's exit status and its stderr."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "sweep",
            str(spec),
            "--grid",
            "policy.call=oneway,twoway",
            "--runs",
            "2",
            "--quiet-wait",
            "1",
            "--out",
            str(out),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith(line_starts):
                proc.send_signal(signal.SIGINT)
                break
        _, rest = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, "".join(lines) + rest


def test_a_sweep_of_another_spec_in_the_same_out_is_refused(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    out = tmp_path / "sweep"
    out.mkdir()
    doc = {"scabench": {}, "status": "ok", "sweep": {"spec": str(tmp_path / "other.toml")}, "points": []}
    (out / "results.json").write_text(json.dumps(doc))
    proc = _sweep(spec, out)
    assert proc.returncode == 2 and "other.toml" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert json.loads((out / "results.json").read_text()) == doc  # left as it was


def test_a_grid_of_more_points_than_the_cap_is_refused_before_planning(write_spec, tmp_path):
    """Two axes of a thousand values each: a million points, refused at
    once with the count and the cap, before a spec is planned."""
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    values = ",".join(map(str, range(1000)))
    proc = scabench(
        "sweep",
        spec,
        "--grid",
        f"stage1.work_us={values}",
        "--grid",
        f"stage2.work_us={values}",
        "--out",
        tmp_path / "o",
        timeout=60,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "1,000,000 points (1000 × 1000 values)" in proc.stderr and f"({MAX_POINTS:,})" in proc.stderr
    assert not (tmp_path / "o").exists()
    with pytest.raises(SpecError, match="more than a sweep takes"):
        grid_axes({"stage1.work_us": range(101), "stage2.work_us": range(100)})
    assert len(grid_axes({"stage1.work_us": range(100), "stage2.work_us": range(100)})) == 2  # 10,000: taken


@pytest.mark.parametrize(
    "grid, words",
    [
        ("policy.call=oneway,bogus", "bogus"),
        ("stage9.work_us=1,2", "stage9"),
        ("run.nothing=1", "run.nothing"),
        ("run.transport=tcp,udp", "'udp' is not valid; use one of: tcp, unix, shm"),
        ("call=oneway", "policy.KEY"),
        ("policy.worker=", "KEY=V1,V2"),
    ],
)
def test_a_bad_grid_exits_2_with_one_line_before_anything_runs(write_spec, tmp_path, grid, words):
    spec = write_spec(pipeline_toml(packets=8, stages=2, work_us=300))
    # The good first grid is crossed with the bad one: every point is checked before any runs.
    proc = scabench("sweep", spec, "--grid", "stage1.work_us=100,200", "--grid", grid, "--out", tmp_path / "o")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and words in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def _graph_run(reordered_b, lost_b=0, dropped_b=0):
    """A run of p -> t -> a, b with its two paths' figures."""

    def path(sink, reordered, lost, dropped):
        return PathResult("p", sink, 0, 1, 8, 8 - lost - dropped, 8 - lost - dropped, dropped, lost, reordered, None)

    stage = StageResult("b", "stage", 8, 5.0, 0, 0, 0, 1, 1)
    return RunResult(
        "ok",
        {},
        {},
        1.0,
        0.0,
        stages=[stage],
        paths=[path("a", 0, 0, 0), path("b", reordered_b, lost_b, dropped_b)],
    )


def test_the_answer_covers_every_sink_of_a_graph():
    # Sink b reordered: the point is not recommended, though a kept order.
    runs = [_graph_run(0), _graph_run(3)]
    point = _point("b-reorders", 1.0, [reordered_at_outputs(r, ["a", "b"]) for r in runs])
    point["missing_at_outputs"] = [missing_at_outputs(r) for r in runs]
    assert point["reordered_at_outputs"] == [0, 3]
    clean = _point("in-order", 2.0, [reordered_at_outputs(_graph_run(0), ["a", "b"])])
    clean["missing_at_outputs"] = [missing_at_outputs(_graph_run(0))]
    a = answer([point, clean])
    assert a["best"]["label"] == "in-order"
    assert a["excluded"] == [{"label": "b-reorders", "why": "reordered packets (up to 3 in a run)"}]
    # A packet lost on the way to b, or dropped by a drop fan-out: not lossless, not recommended.
    lost = _point("loses", 1.0, [0])
    lost["missing_at_outputs"] = [missing_at_outputs(_graph_run(0, lost_b=2))]
    assert why_not(lost) == "lost packets (up to 2 in a run)"
    dropped = _point("drops", 1.0, [0])
    dropped["missing_at_outputs"] = [missing_at_outputs(_graph_run(0, dropped_b=4))]
    assert why_not(dropped) == "dropped packets on a drop fan-out (up to 4 in a run): not lossless"
    # Results written before paths were measured: judged as before.
    assert why_not(_point("old", 1.0, [0])) is None

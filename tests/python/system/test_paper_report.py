"""`scabench paper`: the report from synthetic results, campaign file errors,
and a tiny end-to-end run over real processes."""

import csv
import json
import re
from dataclasses import replace as changed
from pathlib import Path

import pytest
from conftest import REPO, scabench
from paper_world import FAST, replace, run, world

from scabench.errors import SpecError
from scabench.measure.campaign import Spread, load_campaign, spread
from scabench.report.markdown import write_report
from scabench.studies.paper import figures as paper_figures
from scabench.studies.paper.claims import VERDICT_MEANS, judge_claims
from scabench.studies.paper.figures import draw_figures
from scabench.studies.paper.render import render

CLOSE = paper_figures.plt.close  # pyplot's own, before any test replaces it

META = {
    "quick": False,
    "runs": 3,
    "packets": 1000,
    "quiet_below_pct": 10,
    "redo_above_pct": 10,
    "max_redos": 2,
    "elapsed_s": 600.0,
    "finished_at": "2026-11-22 10:00 UTC",
    "environment": {"cpu_model": "test CPU", "online_cpus": 2, "kernel": "6.x", "omniorb_version": "4.2.5"},
}


def test_spread_gives_median_and_range():
    assert spread([3, 1, 2, None, float("nan")]) == Spread(median=2.0, min=1.0, max=3.0, n=3)
    assert spread([]) == Spread(None, None, None, 0)


def test_report_sets_our_figures_beside_the_papers(tmp_path):
    entries = world()
    claims = judge_claims(entries)
    figures = draw_figures(tmp_path, entries)
    md_path, html_path = write_report(tmp_path, "t", render(entries, claims, META, figures))
    md = md_path.read_text()
    # Table 2's published stage-3 time and reordering, beside ours (median and range over 3 equal runs).
    # (The table's number with a no-break space: "Table 2" stays on one line in a narrow column.)
    assert "| exp1 | 2 cores | 7,600 | 1.013 | – | 900 / 920 | 4,498 | 0.898 | 487 / 694 | Table\u00a02 |" in md
    assert "4,330.24" in md  # Table 2's producer column
    assert "| … paper (1 core, 1000 packets) | – | 15,236.05 | 15,261.42 | 15,280.76 |" in md
    assert "| test 1 | exp1 | 7,550 / 7,580 / 7,600 | 4,463 / 4,508 / 4,514 | 12 / 400 / 900 | 315 / 520 / 612 |" in md
    for c in claims:
        assert c.claim in md
    for name in figures.values():
        assert (tmp_path / name).stat().st_size > 1000
    html = html_path.read_text()
    assert html.count("data:image/png;base64,") == len(figures)
    assert not re.search(r'src="(?!data:)', html)  # self-contained
    assert 'class="verdict-reproduced"' in html


def with_latency(entries):
    """exp6 on 2 cores with every packet's latency: 0, 1, ..., 100 ms, and
    1.2 and 1.4 times that in two more runs."""
    base = [1000.0 * i for i in range(101)]
    runs = [run([7650, 7680, 7700], sends=FAST, latency=[k * v for v in base]) for k in (1.0, 1.2, 1.4)]
    return replace(entries, "exp6@multicore", runs)


def test_report_gives_latency_beside_the_ratio(tmp_path):
    entries = with_latency(world())
    figures = draw_figures(tmp_path, entries)
    md = render(entries, judge_claims(entries), META, figures)
    # Medians over the runs: p50 of 50, 60, 70 ms; p99 of 99, 118.8, 138.6 ms.
    assert "| exp6 | 2 cores | 7,700 | 1.027 | 60 ms / 118.8 ms | 0 / 0 |" in md
    assert ("| exp6 | 2 cores | 3 | 60 ms (50–70) | 108 ms (90–126) | 118.8 ms (99–138.6) | 120 ms (100–140) |") in md
    # Results written before runs measured latency show none, rather than zero.
    assert "| exp1 | 2 cores | 7,600 | 1.013 | – |" in md
    assert figures["latency"] == "latency.png" and f"![latency per packet]({figures['latency']})" in md
    assert (tmp_path / "latency.png").stat().st_size > 1000


def _overview(entries, tmp_path, monkeypatch):
    """The overview figure's axes, kept open."""
    kept = []
    monkeypatch.setattr(paper_figures.plt, "close", kept.append)
    draw_figures(tmp_path, entries)
    overview = next(f for f in kept if "over the set-up's floor" in f.axes[0].get_title())
    for f in kept:
        if f is not overview:
            CLOSE(f)
    return overview.axes[0]


def test_the_overview_draws_whiskers_only_over_several_runs(tmp_path, monkeypatch):
    from matplotlib.container import ErrorbarContainer

    one = {name: changed(e, runs=e.runs[:1]).summarise() for name, e in world().items()}
    ax = _overview(one, tmp_path, monkeypatch)
    assert not [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert "one run each, so no spread" in ax.get_legend().get_texts()[0].get_text()
    spread = replace(one, "exp1@multicore", [run([7550, 7580, v], floor=7500.0) for v in (7500, 7600, 7900)])
    ax = _overview(spread, tmp_path, monkeypatch)
    bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 1 and len(bars[0].lines[2][0].get_segments()) == 1  # one whisker: exp1 on 2 cores
    assert "median of 1–3 runs, whiskers min–max where more than one" in ax.get_legend().get_texts()[0].get_text()
    # What did not run is no bar at all, and says so.
    del spread["exp2@singlecore"]
    ax = _overview(spread, tmp_path, monkeypatch)
    assert "not run" in [t.get_text() for t in ax.texts]


def test_each_overview_bar_names_our_cores_and_the_papers(tmp_path, monkeypatch):
    """The paper's 4-core bar stands beside ours on this machine's cores:
    its label names both, never our cores alone."""
    ax = _overview(world(), tmp_path, monkeypatch)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "exp1\nours: 2 cores\npaper: 4 cores"
    assert labels[1] == "exp1\nours: 1 core\npaper: 1 core"
    assert all("paper: " in label and "ours: " in label for label in labels)


def _tick_labels(axis):
    """The labels a reader sees: of the ticks inside the axis's view (the
    locator may give some beyond it, which are not drawn)."""
    lo, hi = sorted(axis.get_view_interval())
    return [
        t.get_text()
        for loc, t in zip(axis.get_majorticklocs(), axis.get_majorticklabels())
        if lo <= loc <= hi and t.get_text()
    ]


@pytest.mark.parametrize(
    "send_us",
    [
        [41.0, 44.0, 47.0, 52.0, 55.0, 58.0],  # less than a factor of 2: no decade in the range
        [5.0, 5.2, 5.3, 5.5, 6.0, 1400.0],  # one slow send over two decades
        [45.0, 46.0, 47.0, 48.0, 49.0],  # narrower than one digit
    ],
)
def test_send_time_plots_label_their_axes_however_narrow_the_range(tmp_path, monkeypatch, send_us):
    """A narrow range of send times left the histogram's time axis and the
    scatter's time axis without a single label, and the counts with one."""
    kept = []
    monkeypatch.setattr(paper_figures.plt, "close", kept.append)
    paper_figures.send_time_histogram(tmp_path / "h.png", "t", send_us)
    [fig] = kept
    hist, scatter = fig.axes
    try:
        assert len(_tick_labels(hist.xaxis)) >= 2, _tick_labels(hist.xaxis)
        assert all(label.endswith("s") for label in _tick_labels(hist.xaxis))  # times, with their unit
        assert len(_tick_labels(hist.yaxis)) >= 2 and "0.9" not in _tick_labels(hist.yaxis)
        assert len(_tick_labels(scatter.yaxis)) >= 2, _tick_labels(scatter.yaxis)
    finally:
        CLOSE(fig)


def test_no_latency_histogram_without_latency(tmp_path):
    assert "latency" not in draw_figures(tmp_path, world())


def test_claims_that_did_not_run_are_counted_apart_and_the_report_opens_with_the_counts(tmp_path):
    entries = {k: v for k, v in world().items() if k.split("@")[0] == "exp6"}  # as --only exp6
    claims = judge_claims(entries)
    md_path, html_path = write_report(tmp_path, "t", render(entries, claims, META, draw_figures(tmp_path, entries)))
    md = md_path.read_text()
    answer = (
        "**Claims: 2 reproduced, 0 differ (explained), 0 not reproduced, of the 2 judged. 17 of 19 not run: "
        "a configuration they need was not measured, so they are neither reproduced nor refuted.**"
    )
    assert md.split("\n")[2] == answer  # the answer first, under the title
    assert md.count("| **not run** |") == 17 and md.count("| **not reproduced** |") == 0
    # The headline does not call it failed, and names its set-up as the rows that ran do.
    assert "| exp1 | 2 cores | not run |" in md
    html = html_path.read_text()
    assert html.count('class="verdict-not-run"') == 17


def test_the_terminal_and_the_report_say_what_each_verdict_means(tmp_path):
    """The terminal printed "differs" and "not run" beside claim ids with no
    word on what they mean."""
    out = tmp_path / "paper"
    out.mkdir()
    (out / "results.json").write_bytes((REPO / "tests/python/data/paper-results.json").read_bytes())
    proc = scabench("paper", "--from-results", "--out", out)
    assert proc.returncode == 0, proc.stderr
    shown = " ".join(proc.stdout.split())  # the terminal wraps long lines
    md = " ".join((out / "report.md").read_text().split())
    for verdict, means in VERDICT_MEANS.items():
        assert f"{verdict}: {means}" in shown and f"{verdict}: {means}" in md, verdict
    # Under the table, before the answer that counts them.
    assert shown.index("reproduced: these runs") > shown.index("twoway-keeps-order") > 0
    assert shown.index("reproduced: these runs") < shown.index("Claims: ")


def test_the_long_report_has_contents_that_link_to_its_sections(tmp_path):
    entries = world()
    md_path, html_path = write_report(
        tmp_path, "t", render(entries, judge_claims(entries), META, draw_figures(tmp_path, entries))
    )
    md = md_path.read_text()
    contents = md[md.index("**Contents**") : md.index("## Claims")]
    links = re.findall(r"- \[(.+)\]\(#([^)]+)\)", contents)
    sections = re.findall(r"^## (.+)$", md, re.M)
    assert [title for title, _ in links] == sections and len(sections) > 10
    assert ("Claims", "claims") in links
    assert (
        "exp1: one-way, producer waits 0 ms, no worker thread",
        "exp1-one-way-producer-waits-0-ms-no-worker-thread",
    ) in links
    html = html_path.read_text()
    for _, anchor in links:  # every link lands on a heading of the HTML
        assert f'<h2 id="{anchor}">' in html, anchor
    assert md.index("**Contents**") < md.index("## Claims") < md.index("## Headline")


def test_campaign_file_errors_name_the_key(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text("[measure]\nruns = 0\n")
    with pytest.raises(SpecError, match="measure.runs"):
        load_campaign(bad)
    bad.write_text(
        f'[setup.a]\ncores = [0]\n[[config]]\nid = "x"\nspec = "{REPO}/experiments/paper/exp1.toml"\nsetups = ["b"]\n'
    )
    with pytest.raises(SpecError, match=r"config\[0\].setups: 'b' is not a set-up; declared: a"):
        load_campaign(bad)
    bad.write_text(
        f'[setup.a]\ncores = [0]\n[[config]]\nid = "x"\nspec = "{REPO}/experiments/paper/exp1.toml"\n'
        'policy = { sync = "sometimes" }\n'
    )
    with pytest.raises(SpecError, match="sync.*valid"):
        load_campaign(bad)


def test_paper_quick_end_to_end(tmp_path):
    campaign = tmp_path / "campaign.toml"
    paper = REPO / "experiments" / "paper"
    campaign.write_text(f"""
[measure]
quiet_wait_s = 2.0
redo_above_pct = 100.0
[setup.multicore]
label = "all cores"
cores = "all"
[setup.singlecore]
label = "1 core"
cores = [0]
[[config]]
id = "exp1"
group = "table1"
spec = "{paper}/exp1.toml"
[[config]]
id = "exp6"
group = "table1"
spec = "{paper}/exp6.toml"
[[config]]
id = "sync-transport"
group = "sync"
spec = "{paper}/exp1.toml"
policy = {{ sync = "transport" }}
setups = ["multicore"]
""")
    out = tmp_path / "out"
    exports = ("--json", tmp_path / "copy" / "paper.json", "--csv", tmp_path / "paper.csv")
    proc = scabench("paper", "--quick", "--packets", 6, "--campaign", campaign, "--out", out, *exports, "--trace")
    assert proc.returncode == 0, proc.stderr
    # --trace: a trace per run (the four distinct ones at least: a failed start is redone), and the
    # report's timelines of the experiments it ran (exp5 was not).
    traces = sorted(p.name for p in (out / "traces").iterdir())
    assert len(traces) >= 4 and traces[0] == "001-exp1.trace.json"
    md = (out / "report.md").read_text()
    assert "## Timelines: the first packets" in md
    assert "![exp1: the first packets](timeline-exp1-multicore.png)" in md and "timeline-exp5" not in md
    assert (out / "timeline-exp6-multicore.png").stat().st_size > 1000
    # --json: the study's document; --csv: a row per configuration with its spreads and run count.
    assert (tmp_path / "copy" / "paper.json").read_text() == (out / "results.json").read_text()
    with open(tmp_path / "paper.csv", newline="") as f:
        rows = {r["config"]: r for r in csv.DictReader(f)}
    assert set(rows) == {
        "exp1@multicore",
        "exp1@singlecore",
        "exp6@multicore",
        "exp6@singlecore",
        "sync-transport@multicore",
    }
    exp6 = rows["exp6@multicore"]
    assert exp6["status"] == "ok" and exp6["runs"] == "1" and exp6["reordered_from_original_max"] == "0"
    assert (
        float(exp6["overhead_ratio_min"]) <= float(exp6["overhead_ratio_median"]) <= float(exp6["overhead_ratio_max"])
    )
    assert float(exp6["latency_p99_ms_median"]) > 0 and float(exp6["paper_overhead_ratio"]) > 0
    assert rows["sync-transport@multicore"]["same_as"] == "exp1@multicore"
    assert rows["sync-transport@multicore"]["paper_overhead_ratio"] == ""  # not a Table 1 row
    assert f"rows written to {tmp_path / 'paper.csv'}" in proc.stdout
    assert "[1/4] exp1@multicore run 1/1" in proc.stderr  # progress; sync-transport is exp1's run
    # Each run's progress line sets its end-to-end latency p99, scaled, beside its ratio.
    for n, name in enumerate(("exp1@multicore", "exp1@singlecore", "exp6@multicore", "exp6@singlecore"), 1):
        assert re.search(
            rf"^\[{n}/4\] {name} run 1/1: last packet [\d.]+ (µs|ms|s), ratio [\d.]+, "
            rf"latency p99 [\d.]+ (µs|ms|s), packets reordered \d+",
            proc.stderr,
            re.M,
        ), name
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete"
    configs = results["configs"]
    assert set(configs) == {
        "exp1@multicore",
        "exp1@singlecore",
        "exp6@multicore",
        "exp6@singlecore",
        "sync-transport@multicore",
    }
    assert configs["sync-transport@multicore"]["same_as"] == "exp1@multicore"
    for name, e in configs.items():
        assert len(e["runs"]) == 1 and e["runs"][0]["producer"]["sent"] == 6, name
    assert configs["exp6@multicore"]["summary"]["stages"][-1]["reordered_from_original"]["max"] == 0
    # The entries have the keys, in the order, of a file written before they were typed (data/README.md).
    before = json.loads((Path(__file__).parents[1] / "data" / "paper-results.json").read_text())["configs"]
    for name, e in configs.items():
        was = before[name]
        assert list(e) == list(was) and list(e["config"]) == list(was["config"]), name
        assert list(e["summary"]) == list(was["summary"]), name
        assert [list(s) for s in e["summary"]["stages"]] == [list(s) for s in was["summary"]["stages"]], name
    claims = {c["id"]: c for c in results["claims"]}
    assert claims["twoway-keeps-order"]["verdict"] == "reproduced"
    assert all(
        c["verdict"] in ("reproduced", "not reproduced", "differs", "not run") and c["evidence"]
        for c in claims.values()
    )
    assert claims["collocated-oneway-is-twoway"]["verdict"] == "not run"
    assert "not measured" in claims["collocated-oneway-is-twoway"]["evidence"]
    not_run = sum(c["verdict"] == "not run" for c in claims.values())
    assert f"{not_run} of {len(claims)} not run" in proc.stdout
    for f in ("report.md", "report.html", "overview.png", "send-times-exp6-singlecore.png"):
        assert (out / f).exists(), f
    assert "twoway-keeps-order" in proc.stdout and "reproduced" in proc.stdout
    # The report can be judged and written again from the kept runs, without running anything.
    (out / "report.md").unlink()
    again = scabench("paper", "--from-results", "--out", out, *exports)
    assert again.returncode == 0, again.stderr
    untraced = "".join(line for line in proc.stdout.splitlines(True) if not line.startswith("trace: "))
    assert (out / "report.md").exists() and again.stdout == untraced


def test_paper_only_names_what_is_valid(tmp_path):
    proc = scabench("paper", "--quick", "--only", "exp9", "--out", tmp_path)
    assert proc.returncode == 2
    assert "--only: no configuration 'exp9'" in proc.stderr and "exp6" in proc.stderr

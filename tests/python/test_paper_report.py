"""`scabench paper`: the report from synthetic results, campaign file errors,
and a tiny end-to-end run over real processes."""
import json
import re
from pathlib import Path

import pytest
from paper_world import world

from conftest import REPO, scabench
from scabench.measure.campaign import Spread, load_campaign, spread
from scabench.errors import SpecError
from scabench.studies.paper.claims import judge_claims
from scabench.studies.paper.figures import draw_figures
from scabench.studies.paper.render import render
from scabench.report.markdown import write_report

META = {"quick": False, "runs": 3, "packets": 1000, "quiet_below_pct": 10, "redo_above_pct": 10, "max_redos": 2,
        "elapsed_s": 600.0, "finished_at": "2026-11-22 10:00 UTC",
        "environment": {"cpu_model": "test CPU", "online_cpus": 2, "kernel": "6.x", "omniorb_version": "4.2.5"}}


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
    assert "| exp1 | 2 cores | 7,600 | 1.013 | 900 / 920 | 4,498 | 0.898 | 487 / 694 | Table 2 |" in md
    assert "4,330.24" in md                     # Table 2's producer column
    assert "| … paper (1 core) | – | 15,236.05 | 15,261.42 | 15,280.76 |" in md
    assert "| test 1 | exp1 | 7,550 / 7,580 / 7,600 | 4,463 / 4,508 / 4,514 | 12 / 400 / 900 | 315 / 520 / 612 |" in md
    for c in claims:
        assert c.claim in md
    for name in figures.values():
        assert (tmp_path / name).stat().st_size > 1000
    html = html_path.read_text()
    assert html.count("data:image/png;base64,") == len(figures)
    assert not re.search(r'src="(?!data:)', html)     # self-contained
    assert 'class="verdict-reproduced"' in html


def test_campaign_file_errors_name_the_key(tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[measure]\nruns = 0\n')
    with pytest.raises(SpecError, match="measure.runs"):
        load_campaign(bad)
    bad.write_text(f'[setup.a]\ncores = [0]\n[[config]]\nid = "x"\nspec = "{REPO}/experiments/paper/exp1.toml"\n'
                   'setups = ["b"]\n')
    with pytest.raises(SpecError, match=r"config\[0\].setups: 'b' is not a set-up; declared: a"):
        load_campaign(bad)
    bad.write_text(f'[setup.a]\ncores = [0]\n[[config]]\nid = "x"\nspec = "{REPO}/experiments/paper/exp1.toml"\n'
                   'policy = { sync = "sometimes" }\n')
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
    proc = scabench("paper", "--quick", "--packets", 6, "--campaign", campaign, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "[1/4] exp1@multicore run 1/1" in proc.stderr      # progress; sync-transport is exp1's run
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete"
    configs = results["configs"]
    assert set(configs) == {"exp1@multicore", "exp1@singlecore", "exp6@multicore", "exp6@singlecore",
                            "sync-transport@multicore"}
    assert configs["sync-transport@multicore"]["same_as"] == "exp1@multicore"
    for name, e in configs.items():
        assert len(e["runs"]) == 1 and e["runs"][0]["producer"]["sent"] == 6, name
    assert configs["exp6@multicore"]["summary"]["stages"][-1]["reordered_from_original"]["max"] == 0
    # The entries have the keys, in the order, of a file written before they were typed (data/README.md).
    before = json.loads((Path(__file__).parent / "data" / "paper-results.json").read_text())["configs"]
    for name, e in configs.items():
        was = before[name]
        assert list(e) == list(was) and list(e["config"]) == list(was["config"]), name
        assert list(e["summary"]) == list(was["summary"]), name
        assert [list(s) for s in e["summary"]["stages"]] == [list(s) for s in was["summary"]["stages"]], name
    claims = {c["id"]: c for c in results["claims"]}
    assert claims["twoway-keeps-order"]["verdict"] == "reproduced"
    assert all(c["verdict"] in ("reproduced", "not reproduced", "differs") and c["evidence"] for c in claims.values())
    assert "not measured" in claims["collocated-oneway-is-twoway"]["evidence"]
    for f in ("report.md", "report.html", "overview.png", "send-times-exp6-singlecore.png"):
        assert (out / f).exists(), f
    assert "twoway-keeps-order" in proc.stdout and "reproduced" in proc.stdout
    # The report can be judged and written again from the kept runs, without running anything.
    (out / "report.md").unlink()
    again = scabench("paper", "--from-results", "--out", out)
    assert again.returncode == 0, again.stderr
    assert (out / "report.md").exists() and again.stdout == proc.stdout


def test_paper_only_names_what_is_valid(tmp_path):
    proc = scabench("paper", "--quick", "--only", "exp9", "--out", tmp_path)
    assert proc.returncode == 2
    assert "--only: no configuration 'exp9'" in proc.stderr and "exp6" in proc.stderr

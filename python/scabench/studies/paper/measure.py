"""`scabench paper`: run the campaign, judge the claims, write the report.

The out directory gets results.json (every run, the summaries and the
claims), one PNG per experiment and set-up plus an overview, report.md and a
self-contained report.html. results.json is rewritten after every
configuration, so an interrupted campaign keeps what it measured. The claims
are judged in claims.py; figures.py draws the PNGs and render.py writes the
report.
"""

import time
from datetime import UTC, datetime
from pathlib import Path

from scabench.errors import ScabenchError
from scabench.measure.campaign import entries_from_json, load_campaign, run_campaign
from scabench.paths import experiments_dir
from scabench.report.markdown import write_report
from scabench.report.results_file import read_result, stamped, write_json
from scabench.run.environment import describe_environment
from scabench.studies.paper.claims import judge_claims
from scabench.studies.paper.figures import draw_figures
from scabench.studies.paper.render import TITLE, render

DEFAULT_CAMPAIGN = experiments_dir() / "paper" / "campaign.toml"


def run_paper(out_dir, quick=False, runs=None, packets=None, only=None, campaign_file=None):
    """Runs the campaign and writes the report; returns (results, claims)."""
    campaign = load_campaign(campaign_file or DEFAULT_CAMPAIGN)
    m = campaign.measure
    runs = runs or (1 if quick else m.runs)
    packets = packets or (m.quick_packets if quick else m.packets)
    if only:
        known = {c.id for c in campaign.configs}
        unknown = [i for i in only if i not in known]
        if unknown:
            raise ScabenchError(
                f"--only: no configuration {unknown[0]!r} in {campaign.path}; valid: {', '.join(sorted(known))}"
            )
        campaign.configs = [c for c in campaign.configs if c.id in only]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    meta = {
        "quick": quick,
        "runs": runs,
        "packets": packets,
        "campaign": str(campaign.path),
        "quiet_below_pct": m.quiet_below_pct,
        "redo_above_pct": m.redo_above_pct,
        "max_redos": m.max_redos,
        "environment": describe_environment(sorted({c for cfg in campaign.configs for c in cfg.cores})),
    }

    def save(entries, claims=None, status="partial"):
        doc = stamped(
            {"status": status, "meta": meta, "claims": [c.as_dict() for c in (claims or [])], "configs": entries}
        )
        return write_json(doc, out / "results.json")

    entries = run_campaign(campaign, runs, packets, on_config_done=save)
    for e in entries.values():
        e.summarise()
    claims = judge_claims(entries)
    meta["elapsed_s"] = time.monotonic() - started
    meta["finished_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    save(entries, claims, status="complete")
    figures = draw_figures(out, entries)
    write_report(out, TITLE, render(entries, claims, meta, figures))
    return entries, claims


def rerender(out_dir):
    """Judges the claims again and rewrites the report from the runs kept in
    out_dir/results.json: for a report made elsewhere, or after the rules
    changed, without running anything."""
    out = Path(out_dir)
    path = out / "results.json"
    if not path.exists():
        raise ScabenchError(f"{path}: no such file; run scabench paper --out {out_dir} first")
    doc = read_result(path, "--from-results")
    try:
        entries, meta = doc["configs"], doc["meta"]
    except (KeyError, TypeError) as exc:
        raise ScabenchError(f"{path}: not a scabench paper result ({exc})") from None
    if doc.get("status") != "complete":
        raise ScabenchError(f"{path}: the campaign did not finish (status {doc.get('status')!r}); run it again")
    try:
        entries = doc["configs"] = entries_from_json(entries)
    except (ValueError, KeyError) as exc:
        raise ScabenchError(f"{path}: not a scabench paper result ({exc})") from None
    for e in entries.values():
        e.summarise()
    claims = judge_claims(entries)
    doc["claims"] = [c.as_dict() for c in claims]
    write_json(doc, path)
    write_report(out, TITLE, render(entries, claims, meta, draw_figures(out, entries)))
    return entries, claims

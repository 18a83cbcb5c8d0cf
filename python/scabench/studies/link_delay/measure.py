"""`scabench link-delay`: the paper's pipeline across network hosts with real
link delay, for the two orderly strategies.

Two-way + worker keeps order by letting one packet be in flight per hop: each
worker's call waits a round trip (2d) for the next stage to take the packet,
so between hosts it turns into stop-and-wait. One-way + reorder buffer +
credit window keeps order at the receiver and lets w packets be in flight,
so the link delay only adds latency. The command runs both at each delay of
experiments/ordering/link-delay.toml (network.py makes the hosts and links),
K times each with the campaign's load guards; analysis.py sets the
measurements beside a model of each strategy and render.py writes the report.
"""

import time
from datetime import UTC, datetime
from pathlib import Path

from scabench.errors import ScabenchError
from scabench.measure.campaign import entries_from_json, load_campaign, run_campaign
from scabench.paths import experiments_dir
from scabench.report.results_file import read_result, stamped, write_json
from scabench.run.environment import describe_environment
from scabench.run.network import TOXIPROXY_VERSION, NetworkUnavailable, unavailable_reason
from scabench.studies.link_delay.analysis import LinkDelayEntry, add_models
from scabench.studies.link_delay.render import write_link_delay_report

DEFAULT_CAMPAIGN = experiments_dir() / "ordering" / "link-delay.toml"
STRATEGIES = {"twoway-worker": "two-way + worker", "credits": "one-way + resequence + credits"}


def run_link_delay(out_dir, quick=False, runs=None, packets=None, campaign_file=None):
    """Runs the campaign and writes the report; returns the result document."""
    reason = unavailable_reason()
    if reason:
        raise NetworkUnavailable(f"network hosts are not available here: {reason}")
    campaign = load_campaign(campaign_file or DEFAULT_CAMPAIGN)
    for c in campaign.configs:
        if c.group not in STRATEGIES:
            raise ScabenchError(f"{campaign.path}: config {c.id}: group must be one of {', '.join(STRATEGIES)}")
    m = campaign.measure
    runs = runs or (1 if quick else m.runs)
    packets = packets or (m.quick_packets if quick else m.packets)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    meta = {
        "quick": quick,
        "runs": runs,
        "packets": packets,
        "campaign": str(campaign.path),
        "emulator": f"toxiproxy {TOXIPROXY_VERSION}",
        "environment": describe_environment(sorted({c for cfg in campaign.configs for c in cfg.cores})),
    }

    def document(entries, status):
        return stamped({"status": status, "meta": meta, "configs": entries})

    def save(entries, status="partial"):
        return write_json(document(entries, status), out / "results.json")

    entries = run_campaign(campaign, runs, packets, on_config_done=save)
    for e in entries.values():
        e.summarise()
    entries = add_models(entries, campaign, packets)
    meta["elapsed_s"] = time.monotonic() - started
    meta["finished_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    save(entries, status="complete")
    doc = document(entries, "complete")
    write_link_delay_report(doc, out)
    return doc


def rerender(out_dir):
    path = Path(out_dir) / "results.json"
    doc = read_result(path, "--from-results")
    try:
        entries = entries_from_json(doc["configs"], LinkDelayEntry)
    except (KeyError, TypeError, ValueError) as exc:
        raise ScabenchError(f"{path}: cannot read the kept results ({exc})") from None
    entries = doc["configs"] = add_models(entries, load_campaign(doc["meta"]["campaign"]), doc["meta"]["packets"])
    for e in entries.values():
        e.summarise()
    write_json(doc, path)
    write_link_delay_report(doc, out_dir)
    return doc

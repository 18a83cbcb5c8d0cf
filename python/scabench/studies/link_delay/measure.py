"""`scabench link-delay`: the paper's pipeline across network hosts with real
link delay, for the two orderly strategies.

Two-way + worker keeps order by letting one packet be in flight per hop: each
worker's call waits a round trip (2d) for the next stage to take the packet,
so between hosts it turns into stop-and-wait. One-way + reorder buffer +
credit window keeps order at the receiver and lets w packets be in flight,
so the link delay only adds latency. The command runs both at each delay of
experiments/ordering/link-delay.toml (network.py makes the hosts and links),
K times each with the campaign's load guards, and sets the measurements
beside a model of each strategy.
"""
import json
import time
from datetime import datetime, timezone
from pathlib import Path

from scabench.measure.campaign import load_campaign, run_campaign, spread, summarise
from scabench.run.environment import describe_environment
from scabench.errors import ScabenchError
from scabench.run.network import NetworkUnavailable, TOXIPROXY_VERSION, unavailable_reason
from scabench.paths import REPO_ROOT
from scabench.report.markdown import md_table, write_report
from scabench.report.results_file import write_json
from scabench.model.pipeline import stage_work_ms

DEFAULT_CAMPAIGN = REPO_ROOT / "experiments" / "ordering" / "link-delay.toml"
TITLE = "Ordered pipelines across hosts with link delay"
STRATEGIES = {"twoway-worker": "two-way + worker", "credits": "one-way + resequence + credits"}


def model_ms(strategy, packets, stage_work_ms, cores, delay_ms, credits=0):
    """Predicted time of the last packet at the last stage (ms), as a range
    (best, worst).

    Every stage needs its work W_i of CPU per packet, so the pipeline cannot
    move faster than one packet per max(W_max, sum(W)/C) on C cores (7.5 ms
    for the paper's 3 x 5 ms on 2 cores). Two-way + worker: a forwarding
    stage computes, then waits a round trip 2d for the next stage to accept
    the packet. If the stages take turns, computing costs W of wall time and
    a packet moves every W + 2d (best); if the handoffs line them up so that
    all compute at once and then all wait, the S stages share C cores and
    computing takes W*S/C, so a packet moves every W*S/C + 2d (worst).
    Credits: a sender may be w packets ahead of the acknowledgements, which
    come back every w/4 packets and a delay d later, so it stalls only if
    w/4 packets and a round trip take longer than w packet periods. Either
    way the last packet then crosses the pipeline: sum(W) plus one d a hop."""
    work_max, work_sum, stages = max(stage_work_ms), sum(stage_work_ms), len(stage_work_ms)
    shared = work_sum / min(cores, stages)
    best = worst = max(work_max, shared)
    if strategy == "twoway-worker":
        best = max(best, work_max + 2 * delay_ms)
        worst = max(worst, work_max * max(1.0, stages / cores) + 2 * delay_ms)
    elif strategy == "credits" and credits > 0:
        best = worst = max(best, (2 * delay_ms + work_max) / (credits - credits / 4))
    tail = work_sum + stages * delay_ms
    return (packets - 1) * best + tail, (packets - 1) * worst + tail


def _delay(entry):
    net = entry["config"].get("network")
    return None if net is None else net.get("delay_ms", 0)


def _model_and_cpu_bound(config, packets):
    """The configuration's model range, and the floor's CPU bound (all stage
    CPU work spread over the cores)."""
    spec = config.load(packets)
    work, cpu = stage_work_ms(spec)
    credits = max((c.policy.credits for c in spec.connections if c.policy.flow == "credits"), default=0)
    delay = spec.network.delay_ms if spec.network else 0
    model = model_ms(config.group, packets, work, len(spec.cores), delay, credits)
    return model, packets * sum(cpu) / len(spec.cores)


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
    meta = {"quick": quick, "runs": runs, "packets": packets, "campaign": str(campaign.path),
            "emulator": f"toxiproxy {TOXIPROXY_VERSION}",
            "environment": describe_environment(sorted({c for cfg in campaign.configs for c in cfg.cores}))}

    def save(entries, status="partial"):
        doc = {"status": status, "meta": meta, "configs": entries}
        write_json(doc, out / "results.json")
        return doc

    entries = run_campaign(campaign, runs, packets, on_config_done=save)
    for e in entries.values():
        e["summary"] = summarise(e["runs"])
    _add_models(entries, campaign, packets)
    meta["elapsed_s"] = time.monotonic() - started
    meta["finished_at"] = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    doc = save(entries, status="complete")
    write_link_delay_report(doc, out)
    return doc


def _add_models(entries, campaign, packets):
    """Each entry's model range and CPU bound, from its configuration; done
    again when a report is rewritten, so a corrected model needs no rerun."""
    configs = {c.name: c for c in campaign.configs}
    for name, e in entries.items():
        if name in configs:
            model, cpu_bound = _model_and_cpu_bound(configs[name], packets)
            e["model_ms"], e["cpu_bound_ms"] = list(model), cpu_bound


# ------------------------------------------------------------------ report

def _cell(s, digits=3):
    if not s or s.get("median") is None:
        return None
    if s["n"] > 1 and s["max"] - s["min"] > 0:
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"
    return f"{s['median']:.{digits}f}"


def rows_by_delay(doc):
    """{delay (None: loopback): {strategy: entry}}, in the order of the campaign."""
    out = {}
    for e in doc["configs"].values():
        if e.get("summary"):
            out.setdefault(_delay(e), {})[e["config"]["group"]] = e
    return out


def _ratio_with_emulator(entry):
    """Ratio to a floor whose CPU bound also carries the link emulator's CPU:
    the emulator runs on the pipeline's cores, which a real network would
    leave to the pipeline. None on loopback."""
    values = []
    for r in entry["runs"]:
        emulator_s = (r.get("network") or {}).get("emulator_cpu_s")
        last = r["stages"][-1]["last_packet_ms"]
        if emulator_s is None or not last:
            return None
        cores = len(r["spec"]["cores"])
        floor = max(r["floor_ms"], entry["cpu_bound_ms"] + 1000.0 * emulator_s / cores)
        values.append(last / floor)
    return spread(values)


def headline(doc):
    """One row per delay: both strategies' ratio to the floor, the model's, and
    how much slower two-way + worker is."""
    rows = []
    for delay, by in rows_by_delay(doc).items():
        tw, cr = by.get("twoway-worker"), by.get("credits")
        row = {"delay_ms": delay}
        for key, e in (("twoway_worker", tw), ("credits", cr)):
            if e is None:
                continue
            s = e["summary"]
            row[key] = {"ratio": s["overhead_ratio"], "model_ratio": [m / s["floor_ms"] for m in e["model_ms"]],
                        "ratio_with_emulator": _ratio_with_emulator(e),
                        "last_ms": s["stages"][-1]["last_packet_ms"]["median"],
                        "output_reordered": int(max(st["output_reordered_from_previous"]["max"] for st in s["stages"])),
                        "emulator_cpu_s": s.get("emulator_cpu_s", {}).get("median"),
                        "cpu_s": s["cpu_s"]["median"],
                        "held_peak": max((r["stages"][i].get("held_peak", 0) for r in e["runs"]
                                          for i in range(len(r["stages"]))), default=0)}
        if tw and cr:
            row["twoway_over_credits"] = row["twoway_worker"]["last_ms"] / row["credits"]["last_ms"]
        rows.append(row)
    return rows


def _plot(doc, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    by_delay = {d: by for d, by in rows_by_delay(doc).items() if d is not None}
    delays = sorted(by_delay)
    for strategy, label, colour in (("twoway-worker", "two-way + worker", "#b5452a"),
                                    ("credits", "one-way + resequence + credits", "#2a6fb5")):
        pts = [(d, by_delay[d][strategy]) for d in delays if strategy in by_delay[d]]
        if not pts:
            continue
        xs = [d for d, _ in pts]
        med = [e["summary"]["overhead_ratio"]["median"] for _, e in pts]
        lo = [m - e["summary"]["overhead_ratio"]["min"] for m, (_, e) in zip(med, pts)]
        hi = [e["summary"]["overhead_ratio"]["max"] - m for m, (_, e) in zip(med, pts)]
        ax.errorbar(xs, med, yerr=[lo, hi], fmt="o-", color=colour, capsize=3, label=f"{label}, measured")
        best = [e["model_ms"][0] / e["summary"]["floor_ms"] for _, e in pts]
        worst = [e["model_ms"][1] / e["summary"]["floor_ms"] for _, e in pts]
        ax.fill_between(xs, best, worst, color=colour, alpha=.15)
        ax.plot(xs, best, "--", color=colour, alpha=.7, label=f"{label}, model (best–worst)")
        ax.plot(xs, worst, "--", color=colour, alpha=.7)
    ax.set_xlabel("one-way delay per hop (ms)")
    ax.set_ylabel("time of last packet / floor")
    ax.set_title("Paper pipeline across 4 network hosts")
    ax.grid(alpha=.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "link-delay.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


def render(doc, figure):
    meta = doc["meta"]
    rows = headline(doc)
    fmt = lambda v, d=3: None if v is None else f"{v:.{d}f}"  # noqa: E731

    def model(m):
        if not m:
            return None
        return fmt(m[0]) if abs(m[1] - m[0]) < 5e-4 else f"{fmt(m[0])}–{fmt(m[1])}"

    table = []
    for r in rows:
        tw, cr = r.get("twoway_worker", {}), r.get("credits", {})
        table.append(["loopback (no emulator)" if r["delay_ms"] is None else f"{r['delay_ms']} ms",
                      _cell(tw.get("ratio")), model(tw.get("model_ratio")),
                      _cell(cr.get("ratio")), model(cr.get("model_ratio")), _cell(cr.get("ratio_with_emulator")),
                      fmt(r.get("twoway_over_credits"), 2),
                      f"{tw.get('output_reordered', '–')} / {cr.get('output_reordered', '–')}",
                      cr.get("held_peak"),
                      f"{fmt(tw.get('emulator_cpu_s'), 2) or '–'} / {fmt(cr.get('emulator_cpu_s'), 2) or '–'}"])
    text = [f"# {TITLE}", "",
            f"{meta['packets']} packets per run, {meta['runs']} run(s) per row, median (min–max); "
            f"finished {meta.get('finished_at', '?')} in {meta.get('elapsed_s', 0) / 60:.1f} min. "
            f"Campaign: `{meta['campaign']}`.", "",
            "Each process of the paper's pipeline (producer, 3 stages of 5 ms CPU work, 1024 doubles a packet) "
            "runs on a network host of its own: a Linux network namespace joined by a veth link. Every link "
            "into a host passes a user-space link emulator "
            f"({meta['emulator']}) that delays each direction by the row's delay, so a call sees the delay on "
            "the way out and again on the way back. Object references name the emulator's address "
            "(the ORB's published endpoint), so data, replies and acknowledgements all cross it.", "",
            "## Both strategies, by link delay", "",
            md_table(["one-way delay per hop", "two-way + worker × floor", "model", "credits × floor", "model",
                      "credits × floor with the emulator's CPU",
                      "two-way ÷ credits (time of last packet)", "outputs reordered (two-way / credits)",
                      "most held by a port (credits)", "emulator CPU s (two-way / credits)"], table), "",
            "The floor is the hardware's bound for the pipeline on these cores; with network hosts it also "
            "carries the last packet's delay across the 3 hops. The emulator runs on the same cores as the "
            "pipeline: its CPU is counted as the run's own (not as foreign load) and shown in the last column. "
            "A real network would leave those cycles to the pipeline, so the column \"with the emulator's CPU\" "
            "divides by a floor whose CPU bound also carries the emulator's CPU.",
            "", f"![ratio to the floor vs link delay]({figure})", "",
            "## The models", "",
            "- Both strategies: the 3 stages need 15 ms of CPU per packet on 2 cores, so at best one packet "
            "leaves every 7.5 ms.",
            "- Two-way + worker: a stage's worker does its 5 ms, then calls the next stage and waits a round "
            "trip (2·delay) until that stage has queued the packet. If the stages take turns on the cores, a "
            "packet moves every 5 ms + 2·delay (the model's best); if the handoffs line them up so that all three "
            "compute at once, each computes at 2/3 speed and a packet moves every 7.5 ms + 2·delay (its worst). "
            "Either way it is stop-and-wait once the round trip is more than a few ms.",
            "- Credits(w): a sender runs up to w packets ahead of the acknowledgements, which return every w/4 "
            "packets and a delay later; with w = 32 the window covers far more than a round trip, so the link "
            "adds only the latency of the last packet.", ""]
    text += ["## Environment", "", "```", json.dumps(meta["environment"], indent=1), "```", ""]
    return "\n".join(text)


def write_link_delay_report(doc, out_dir):
    out = Path(out_dir)
    figure = _plot(doc, out)
    return write_report(out, TITLE, render(doc, figure))


def rerender(out_dir):
    path = Path(out_dir) / "results.json"
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ScabenchError(f"{path}: cannot read the kept results ({exc})") from None
    _add_models(doc["configs"], load_campaign(doc["meta"]["campaign"]), doc["meta"]["packets"])
    for e in doc["configs"].values():
        e["summary"] = summarise(e["runs"])
    write_json(doc, path)
    write_link_delay_report(doc, out_dir)
    return doc

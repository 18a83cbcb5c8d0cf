"""The report of `scabench link-delay`: the plot of the ratio to the floor
against the link delay, and report.md/report.html."""

from pathlib import Path

from scabench.report import latency
from scabench.report.campaign import campaign_csv
from scabench.report.markdown import environment_section, md_table, write_report
from scabench.report.plots import runs_label, save_figure, whiskers
from scabench.studies.link_delay.analysis import headline, rows_by_delay

TITLE = "Ordered pipelines across hosts with link delay"


def _cell(s, digits=3):
    """A Spread as median (min–max), None without one."""
    if s is None or s.median is None:
        return None
    if s.n > 1 and s.max - s.min > 0:
        return f"{s.median:.{digits}f} ({s.min:.{digits}f}–{s.max:.{digits}f})"
    return f"{s.median:.{digits}f}"


def _plot(doc, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    by_delay = {d: by for d, by in rows_by_delay(doc).items() if d is not None}
    delays = sorted(by_delay)
    for strategy, label, colour in (
        ("twoway-worker", "two-way + worker", "#b5452a"),
        ("credits", "one-way + resequence + credits", "#2a6fb5"),
    ):
        pts = [(d, by_delay[d][strategy]) for d in delays if strategy in by_delay[d]]
        if not pts:
            continue
        xs = [d for d, _ in pts]
        ratios = [e.summary.overhead_ratio for _, e in pts]
        med = [r.median for r in ratios]
        ax.plot(xs, med, "o-", color=colour, label=f"{label}, measured ({runs_label(r.n for r in ratios)})")
        several, err = whiskers(ratios)
        if several:
            ax.errorbar(
                [xs[i] for i in several], [med[i] for i in several], yerr=err, fmt="none", color=colour, capsize=3
            )
        best = [e.model_ms[0] / e.summary.floor_ms for _, e in pts]
        worst = [e.model_ms[1] / e.summary.floor_ms for _, e in pts]
        ax.fill_between(xs, best, worst, color=colour, alpha=0.15)
        ax.plot(xs, best, "--", color=colour, alpha=0.7, label=f"{label}, model (best–worst)")
        ax.plot(xs, worst, "--", color=colour, alpha=0.7)
    ax.set_xlabel("one-way delay per hop (ms)")
    ax.set_ylabel("time of last packet / floor")
    ax.set_title("Paper pipeline across 4 network hosts")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "link-delay.png"
    save_figure(fig, path)
    return path.name


STRATEGIES = (("twoway-worker", "two-way + worker"), ("credits", "one-way + resequence + credits"))


def _delay_label(delay):
    return "loopback (no emulator)" if delay is None else f"{delay} ms per hop"


def _latency_plot(doc, out):
    """Every packet's end-to-end latency in the median run of each strategy,
    one panel per delay. None if no run measured latency."""
    panels = []
    for delay, by in rows_by_delay(doc).items():
        group = []
        for strategy, label in STRATEGIES:
            e = by.get(strategy)
            run = e.runs[e.summary.median_run] if e and e.summary else None
            if run is not None and run.end_to_end_latency_us_all:
                group.append((label, run.end_to_end_latency_us_all))
        panels.append((_delay_label(delay), group or "no latency in these results"))
    path = out / "link-delay-latency.png"
    if not latency.histograms(path, panels, "Latency per packet, producer send to stage 3 done (median run of each)"):
        return None
    return path.name


def latency_table(doc):
    """End-to-end latency of both strategies at each delay, over the runs."""
    rows = []
    for delay, by in rows_by_delay(doc).items():
        for strategy, label in STRATEGIES:
            e = by.get(strategy)
            if e is None:
                continue
            lat = latency.end_to_end(e.runs)
            rows.append(
                [_delay_label(delay), label, latency.measured_runs(lat)]
                + [latency.spread_cell(lat, q) for q in latency.QUANTILES]
            )
    if not any(row[2] for row in rows):
        return latency.NOT_MEASURED
    return md_table(["one-way delay", "strategy", "runs", "p50", "p90", "p99", "max"], rows)


def answer(doc):
    """The report's answer, first: at each delay, how much later two-way +
    worker delivered its last packet than credits, and each one's p99
    latency (medians over the runs)."""
    lines, entries = [], rows_by_delay(doc)
    for r in headline(doc):
        if r.twoway_over_credits is None:
            continue
        by = entries[r.delay_ms]
        lat = {k: latency.end_to_end(by[k].runs) for k in ("twoway-worker", "credits")}
        p99 = (
            f"; p99 latency {latency.spread_cell(lat['twoway-worker'], 'p99')} against "
            f"{latency.spread_cell(lat['credits'], 'p99')}"
            if all(map(latency.measured_runs, lat.values()))
            else ""
        )
        lines.append(
            f"- {_delay_label(r.delay_ms)}: two-way + worker took {r.twoway_over_credits:.2f}× as "
            f"long as credits to deliver the last packet ({r.twoway_worker.ratio.median:.3f}× "
            f"against {r.credits.ratio.median:.3f}× the floor){p99}."
        )
    if not lines:
        return "**No delay has a successful run of both strategies.**"
    return "\n".join(
        ["**Two-way + worker against one-way + resequence + credits(32), medians over the runs:**", ""] + lines
    )


def render(doc, figure, latency_figure=None):
    meta = doc["meta"]
    rows = headline(doc)
    fmt = lambda v, d=3: None if v is None else f"{v:.{d}f}"  # noqa: E731

    def model(m):
        if not m:
            return None
        return fmt(m[0]) if abs(m[1] - m[0]) < 5e-4 else f"{fmt(m[0])}–{fmt(m[1])}"

    def of(figures, name, missing=None):
        """A strategy's figure, `missing` where the strategy did not run at this delay."""
        return missing if figures is None else getattr(figures, name)

    # Two tables, each narrow enough to read: the ratios beside their models
    # and latencies, then order and what the emulator took.
    table, more, entries = [], [], rows_by_delay(doc)
    for r in rows:
        tw, cr = r.twoway_worker, r.credits
        by = entries[r.delay_ms]
        delay = "loopback (no emulator)" if r.delay_ms is None else f"{r.delay_ms} ms"
        table.append(
            [
                delay,
                _cell(of(tw, "ratio")),
                model(of(tw, "model_ratio")),
                latency.p50_p99(latency.end_to_end(by["twoway-worker"].runs)) if tw else None,
                _cell(of(cr, "ratio")),
                model(of(cr, "model_ratio")),
                latency.p50_p99(latency.end_to_end(by["credits"].runs)) if cr else None,
                fmt(r.twoway_over_credits, 2),
            ]
        )
        more.append(
            [
                delay,
                _cell(of(cr, "ratio_with_emulator")),
                f"{of(tw, 'output_reordered', '–')} / {of(cr, 'output_reordered', '–')}",
                of(cr, "held_peak"),
                f"{fmt(of(tw, 'emulator_cpu_s'), 2) or '–'} / {fmt(of(cr, 'emulator_cpu_s'), 2) or '–'}",
            ]
        )
    text = [
        f"# {TITLE}",
        "",
        answer(doc),
        "",
        f"{meta['packets']} packets per run, {meta['runs']} run(s) per row, median (min–max); "
        f"finished {meta.get('finished_at', '?')} in {meta.get('elapsed_s', 0) / 60:.1f} min. "
        f"Campaign: `{meta['campaign']}`.",
        "",
        "Each process of the paper's pipeline (producer, 3 stages of 5 ms CPU work, 1024 doubles a packet) "
        "runs on a network host of its own: a Linux network namespace joined by a veth link. Every link "
        "into a host passes a user-space link emulator "
        f"({meta['emulator']}) that delays each direction by the row's delay, so a call sees the delay on "
        "the way out and again on the way back. Object references name the emulator's address "
        "(the ORB's published endpoint), so data, replies and acknowledgements all cross it.",
        "",
        "## Both strategies, by link delay",
        "",
        md_table(
            [
                "one-way delay per hop",
                "two-way + worker × floor",
                "model",
                "latency p50 / p99",
                "credits × floor",
                "model",
                "latency p50 / p99",
                "two-way ÷ credits (time of last packet)",
            ],
            table,
        ),
        "",
        "The floor is the hardware's bound for the pipeline on these cores; with network hosts it also "
        "carries the last packet's delay across the 3 hops. Latency is each packet's, end to end, the "
        "median over the runs of each run's p50 and p99.",
        "",
        md_table(
            [
                "one-way delay per hop",
                "credits × floor with the emulator's CPU",
                "outputs reordered (two-way / credits)",
                "most held by a port (credits)",
                "emulator CPU s (two-way / credits)",
            ],
            more,
        ),
        "",
        "The emulator runs on the same cores as the pipeline: its CPU is counted as the run's own (not as "
        "foreign load) and shown in the last column. A real network would leave those cycles to the "
        'pipeline, so the column "with the emulator\'s CPU" divides by a floor whose CPU bound also carries '
        "the emulator's CPU.",
        "",
        f"![ratio to the floor vs link delay]({figure})",
        "",
        "## Latency per packet",
        "",
        "How long each packet took, from the start of its send at the producer to done at stage 3 "
        '(docs/architecture.md, "Metrics"): the median over the runs, with the range in brackets.',
        "",
        latency_table(doc),
        "",
    ]
    if latency_figure:
        text += [f"![latency per packet by link delay]({latency_figure})", ""]
    text += [
        "## The models",
        "",
        "- Both strategies: the 3 stages need 15 ms of CPU per packet on 2 cores, so at best one packet "
        "leaves every 7.5 ms.",
        "- Two-way + worker: a stage's worker does its 5 ms, then calls the next stage and waits a round "
        "trip (2·delay) until that stage has queued the packet. If the stages take turns on the cores, a "
        "packet moves every 5 ms + 2·delay (the model's best); if the handoffs line them up so that all three "
        "compute at once, each computes at 2/3 speed and a packet moves every 7.5 ms + 2·delay (its worst). "
        "Either way it is stop-and-wait once the round trip is more than a few ms.",
        "- Credits(w): a sender runs up to w packets ahead of the acknowledgements, which return every w/4 "
        "packets and a delay later; with w = 32 the window covers far more than a round trip, so the link "
        "adds only the latency of the last packet.",
        "",
    ]
    text += environment_section(meta["environment"])
    return "\n".join(text)


def write_link_delay_report(doc, out_dir):
    out = Path(out_dir)
    figure = _plot(doc, out)
    return write_report(out, TITLE, render(doc, figure, _latency_plot(doc, out)))


def link_delay_csv(doc):
    """`scabench link-delay --csv`: a row per configuration (a strategy at a
    delay; the delay empty on loopback), its figures with their spreads and
    run counts, and its model's best and worst time of the last packet."""

    def where(e):
        net = e.config.network
        return {"delay_ms": None if net is None else net.get("delay_ms", 0), "strategy": e.config.group}

    def model(e):
        m = e.model_ms or [None, None]
        return {"model_best_ms": m[0], "model_worst_ms": m[1]}

    return campaign_csv(doc["configs"], first=where, last=model)

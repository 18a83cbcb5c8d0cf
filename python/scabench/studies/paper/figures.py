"""The report's figures (PNG, drawn with matplotlib's non-interactive backend)."""

from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from scabench.report import latency
from scabench.report.plots import log_axis_labels, runs_label, save_figure, whiskers
from scabench.report.timeline import draw_timeline, timeline_title
from scabench.run.metrics import percentile
from scabench.studies.paper.published import (
    PAPER_PACKETS,
    SETUPS,
    TABLE1,
    paper_figure,
    paper_ratio,
    paper_table,
    published,
)
from scabench.units import duration_us


def send_time_histogram(path, title, send_us, paper_note=None):
    """The producer's send times of one run, log-binned like the paper's
    Figs 9-16 (which span 6 µs to 100 ms), with the share under each decade."""
    s = np.asarray(send_us, dtype=float)
    s = s[s > 0]
    fig, (ax, ax_time) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [3, 2]})
    if s.size:
        lo, hi = max(1.0, s.min() * 0.8), s.max() * 1.25
        bins = np.logspace(np.log10(lo), np.log10(hi), 50)
        counts, _, _ = ax.hist(s, bins=bins, color="#3b6ea8")
        ax.set_xscale("log")
        # Counts on a log axis where they span a decade or more (a few slow
        # sends beside hundreds of fast ones); a handful of packets on a
        # plain one, whose ticks are whole packets.
        counts_log = counts.max() >= 10
        if counts_log:
            ax.set_yscale("log")
            log_axis_labels(ax.yaxis)
        else:
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        for q, style in ((50, "--"), (90, ":"), (99, "-.")):
            v = percentile(s, q)
            ax.axvline(v, color="#a4161a", linestyle=style, linewidth=1, label=f"p{q} {duration_us(v)}")
        ax.legend(fontsize=8, title="percentiles", title_fontsize=8)
        ax_time.plot(np.arange(s.size), s, ".", markersize=2, color="#3b6ea8")
        ax_time.set_yscale("log")
        # Times scaled (10 µs, 1 ms), with labelled ticks however narrow the
        # range of the send times (log_axis_labels).
        log_axis_labels(ax.xaxis, time_us=True)
        log_axis_labels(ax_time.yaxis, time_us=True)
    else:
        counts_log = False
    ax.set_xlabel("send time (log scale)")
    ax.set_ylabel("packets (log scale)" if counts_log else "packets")
    ax.set_title(title, fontsize=10)
    ax_time.set_xlabel("packet")
    ax_time.set_ylabel("send time (log scale)")
    ax_time.set_title("per packet, in order", fontsize=10)
    if paper_note:
        fig.text(0.01, 0.01, paper_note, fontsize=7, color="#555")
    fig.tight_layout(rect=(0, 0.05 if paper_note else 0, 1, 1))
    save_figure(fig, path)


def overview(path, rows):
    """Time of the last packet over the floor, ours beside the paper's, per
    experiment and set-up. rows: [(label naming the experiment, our cores
    and the paper's, the ratio's Spread or None, paper ratio, why there is
    no ratio: "not run", "failed")].
    Whiskers only where several runs give a spread; no bar where nothing
    was measured (a zero bar would read as a ratio of 0)."""
    fig, ax = plt.subplots(figsize=(11, 4.2))
    x = np.arange(len(rows))
    measured = [(i, r[1]) for i, r in enumerate(rows) if r[1] is not None and r[1].median is not None]
    xs = [x[i] - 0.2 for i, _ in measured]
    med = [s.median for _, s in measured]
    ax.bar(xs, med, 0.4, label=f"ours, scabench ({runs_label(s.n for _, s in measured)})", color="#3b6ea8")
    several, err = whiskers([s for _, s in measured])
    if several:
        ax.errorbar(
            [xs[k] for k in several],
            [med[k] for k in several],
            yerr=err,
            fmt="none",
            ecolor="#1d2433",
            capsize=3,
            linewidth=1,
        )
    paper = [r[2] if r[2] is not None else np.nan for r in rows]
    ax.bar(x + 0.2, paper, 0.4, label=f"paper ({PAPER_PACKETS} packets)", color="#c9a227")
    for i, r in enumerate(rows):
        if r[1] is None or r[1].median is None:
            ax.text(x[i] - 0.2, 0.05, r[3], rotation=90, ha="center", va="bottom", fontsize=8, color="#6b7280")
    ax.axhline(1.0, color="#444", linewidth=0.8)
    ax.set_xticks(x, [r[0] for r in rows], fontsize=7)
    ax.set_ylabel("last packet / floor")
    ax.legend(fontsize=8, title="bars (the cores of each are under it)", title_fontsize=8)
    ax.set_title("Time of the last packet at stage 3, over the set-up's floor", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path)


def figure_note(experiment, setup):
    number, fig = paper_figure(experiment, setup)
    if not number:
        return None
    shares = ", ".join(f"{p} % under {t} µs" for t, p in fig.get("share_under_us", {}).items())
    extras = [
        f"min {fig['min_us']:,} µs" if "min_us" in fig else "",
        f"mean {fig['mean_us']:,} µs" if "mean_us" in fig else "",
        f"max {fig['max_us']:,} µs" if "max_us" in fig else "",
    ]
    return f"paper, Fig. {number} ({published()['setup'][setup]['label']}): " + ", ".join(
        x for x in [shares] + extras if x
    )


def draw_figures(out, entries):
    """The send-time histogram of the median run of each Table 1 experiment
    and set-up, and the overview. Returns {key: file name}."""
    figures = {}
    rows: list[tuple[str, Any, Any, Any]] = []
    # A set-up's cores here are the campaign's (the multi-core set-up is this
    # machine's cores), the paper's are its own: each bar's label names both,
    # so that the paper's 4 cores never stand under this machine's 2.
    ours = {e.config.setup: e.config.setup_label for e in entries.values()}
    for exp in TABLE1:
        for setup in SETUPS:
            e = entries.get(f"{exp}@{setup}")
            bar_label = f"{exp}\nours: {ours.get(setup, setup)}\npaper: {published()['setup'][setup]['label']}"
            if not e:
                rows.append((bar_label, None, paper_ratio(exp, setup), "not run"))
                continue
            s = e.summary
            label = e.config.setup_label
            if s:
                run = e.runs[s.median_run]
                name = f"send-times-{exp}-{setup}.png"
                number, _ = paper_table(exp, setup)
                send_time_histogram(
                    out / name,
                    f"{exp} on {label}: producer send times (median run)",
                    run.producer.send_us_all,
                    figure_note(exp, setup),
                )
                figures[f"{exp}@{setup}"] = name
                rows.append((bar_label, s.overhead_ratio, paper_ratio(exp, setup), None))
            else:
                rows.append((bar_label, None, paper_ratio(exp, setup), "failed"))
    figures.update(draw_timelines(out, entries))
    figures["overview"] = "overview.png"
    overview(out / "overview.png", rows)
    if latency_histograms(out / "latency.png", entries):
        figures["latency"] = "latency.png"
    return figures


# The experiments whose first packets the report draws as timelines: the
# empty pipeline (exp1), a two-way chain without a worker (exp5), and the
# worker queues that fix it (exp6).
TIMELINES = ("exp1", "exp5", "exp6")


def draw_timelines(out, entries):
    """The timeline of each of TIMELINES, from the median run of its first
    set-up that ran (multi-core first). Returns {"timeline:EXP": file name}
    for those drawn; a run kept before results held timelines has none."""
    figures = {}
    for exp in TIMELINES:
        for setup in SETUPS:
            e = entries.get(f"{exp}@{setup}")
            if not e or not e.summary or e.runs[e.summary.median_run].timeline is None:
                continue
            timeline = e.runs[e.summary.median_run].timeline
            name = f"timeline-{exp}-{setup}.png"
            draw_timeline(
                timeline, out / name, timeline_title(f"{exp} on {e.config.setup_label} (median run)", timeline)
            )
            figures[f"timeline:{exp}"] = name
            break
    return figures


def latency_histograms(path, entries):
    """The end-to-end latency of every packet of the median run of each
    Table 1 experiment, both set-ups in one panel. False if no run measured
    latency (results written before runs did)."""
    panels = []
    # Only the experiments the campaign ran: a panel saying "not run" shows nothing.
    for exp in (x for x in TABLE1 if any(f"{x}@{setup}" in entries for setup in SETUPS)):
        group, ran = [], False
        for setup in SETUPS:
            e = entries.get(f"{exp}@{setup}")
            s = e.summary if e else None
            ran = ran or bool(s)
            run = e.runs[s.median_run] if s else None
            if run is not None and run.end_to_end_latency_us_all:
                group.append((e.config.setup_label, run.end_to_end_latency_us_all))
        e = published()["experiment"][exp]
        panels.append(
            (
                f"{exp}: {e['call']}{', worker' if e['worker'] else ''}, producer waits {e['producer_wait_ms']} ms",
                group or ("no latency in these results" if ran else "failed"),
            )
        )
    return latency.histograms(path, panels, "Latency per packet, producer send to stage 3 done (median run of each)")

"""Latency in the studies' reports: a configuration's per-packet latency
(run/results.Latency, defined in docs/architecture.md, "Metrics") over its
runs, as table cells, and the histograms of its packets' latencies."""

import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from scabench.report.plots import log_axis_labels, save_figure
from scabench.run.metrics import percentile
from scabench.run.results import Latency, RunResult
from scabench.units import duration_spread, duration_us

QUANTILES = ("p50", "p90", "p99", "max")


def end_to_end(runs: Sequence[RunResult]) -> list[Latency | None]:
    """Each run's end-to-end Latency (None for a run written before runs
    measured latency)."""
    return [r.end_to_end_latency_us for r in runs]


def at_stage(runs: Sequence[RunResult], index: int, span: str = "since_send") -> list[Latency | None]:
    """Each run's Latency at stage `index`: since the send, or in the stage."""
    key = "latency_since_send_us" if span == "since_send" else "latency_in_stage_us"
    return [getattr(r.stages[index], key) if r.stages and index < len(r.stages) else None for r in runs]


def _median(latencies: Iterable[Latency | None], q: str) -> float | None:
    values = [getattr(x, q) for x in latencies if x is not None]
    return float(np.median(values)) if values else None


def p50_p99(latencies: Sequence[Latency | None]) -> str:
    """'p50 / p99', each the median over the runs that measured it; '–' when
    none did."""
    if all(x is None for x in latencies):
        return "–"
    return f"{duration_us(_median(latencies, 'p50'))} / {duration_us(_median(latencies, 'p99'))}"


def spread_cell(latencies: Sequence[Latency | None], q: str) -> str:
    """One quantile over the runs: the median, and its range in brackets when
    several runs measured it and they differ."""
    values = [getattr(x, q) / 1000.0 for x in latencies if x is not None]
    if not values:
        return "–"
    return duration_spread(float(np.median(values)), min(values), max(values))


def measured_runs(latencies: Iterable[Latency | None]) -> int:
    return sum(1 for x in latencies if x is not None)


# What a report says in place of a latency table of dashes.
NOT_MEASURED = "These results hold no latency: they were written before runs measured it."


def histograms(path: str | os.PathLike, panels: Sequence[tuple[str, Any]], title: str, note: str | None = None) -> bool:
    """Small multiples of per-packet latency histograms, one panel per
    (panel title, [(series label, latencies in µs)] or, for a panel with
    nothing to draw, the words that say why), drawn as outlines so
    that series overlap legibly. Every panel shares one logarithmic time
    axis (the latencies span µs to s) and one count axis, so panels compare
    directly; dashed and dotted marks are each series' p50 and p99.
    Returns False (and draws nothing) when no series has a packet."""
    series = [np.asarray(v, dtype=float) for _, group in panels if not isinstance(group, str) for _, v in group]
    values = np.concatenate([s[s > 0] for s in series]) if series else np.zeros(0)
    if values.size == 0:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lo, hi = values.min() / 1.2, values.max() * 1.2
    bins = np.geomspace(lo, hi, 60)
    cols = 2 if len(panels) > 1 else 1
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 2.5 * rows + 0.8), sharex=True, sharey=True, squeeze=False)
    colours = ["#3b6ea8", "#b5452a", "#2a8a4a", "#8a5ab5"]
    for ax, (panel_title, group) in zip(axes.flat, panels):
        for i, (label, v) in enumerate([] if isinstance(group, str) else group):
            v = np.asarray(v, dtype=float)
            if not v.size:
                continue
            colour = colours[i % len(colours)]
            p50, p99 = percentile(v, 50), percentile(v, 99)
            ax.hist(
                v[v > 0],
                bins=bins,
                histtype="step",
                linewidth=1.4,
                color=colour,
                label=f"{label}: p50 {duration_us(p50)}, p99 {duration_us(p99)}",
            )
            ax.axvline(p50, color=colour, linestyle="--", linewidth=0.9)
            ax.axvline(p99, color=colour, linestyle=":", linewidth=0.9)
        ax.set_xscale("log")
        ax.set_title(panel_title, fontsize=9)
        ax.grid(alpha=0.3, which="both")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left")
        else:
            ax.text(
                0.5,
                0.5,
                group if isinstance(group, str) else "nothing measured",
                transform=ax.transAxes,
                ha="center",
                va="center",
                color="#777",
            )
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    log_axis_labels(axes.flat[0].xaxis, time_us=True)  # shared by every panel
    for ax in axes.flat[: len(panels)]:
        ax.tick_params(which="both", labelbottom=True)  # every panel its own time labels: the grid may end with a gap
    for ax in axes.flat[max(0, len(panels) - cols) : len(panels)]:
        ax.set_xlabel("latency per packet (log scale, shared)")
    for ax in axes[:, 0]:
        ax.set_ylabel("packets")
    fig.suptitle(title, fontsize=10)
    if note:
        fig.text(0.01, 0.005, note, fontsize=7, color="#555")
    fig.tight_layout(rect=(0, 0.03 if note else 0, 1, 1))
    save_figure(fig, path)
    return True

"""A sweep's document (measure/sweep.py) for people: the answer in words,
the table (terminal and CSV), the plot (ratio and latency p99 per point)
and the report (report.md, report.html), which opens with the answer."""

import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from rich.text import Text

from scabench import units
from scabench.console import BAD, GOOD, add_rows, table
from scabench.measure.sweep import point_row, value_text, why_not
from scabench.report.markdown import md_table, write_report
from scabench.report.plots import runs_label, save_figure, whiskers
from scabench.report.results_file import CsvTable
from scabench.report.timeline import draw_timeline, timeline_section, timeline_title
from scabench.run.results import Timeline

PLOT = "sweep.png"


def _fig(point: dict[str, Any], key: str) -> SimpleNamespace:
    return SimpleNamespace(
        **{"n": 0, "median": None, "min": None, "max": None, **((point.get("summary") or {}).get(key) or {})}
    )


def _with_spread(s: SimpleNamespace, show: Callable[..., str]) -> str | None:
    """A median, with its min–max where there were several runs (a
    duration's range in the median's unit)."""
    if s.median is None:
        return None
    if show is units.duration:
        return units.duration_spread(s.median, s.min, s.max) if s.n > 1 else show(s.median)
    if s.n > 1 and s.min != s.max:
        return f"{show(s.median)} ({show(s.min)}–{show(s.max)})"
    return show(s.median)


def answer_lines(doc: dict[str, Any]) -> list[str]:
    """The answer to the paper's question for this pipeline, in sentences."""
    a = doc.get("answer")
    if not a:
        return ["no answer: the sweep did not finish every point (run the same command again to resume it)"]
    bound = a["max_latency_ms"]
    within = f" and had a median latency p99 within {units.duration(bound)}" if bound is not None else ""
    rule = f"guarantees order by its policies and kept 0 packets reordered at every output in every run{within}"
    best, second, tie = a["best"], a["runner_up"], a.get("tie")
    warnings = [f"Warning: {w}" for w in a.get("warnings", [])]
    if best is None:
        whys = "; ".join(f"{e['label']}: {e['why']}" for e in a["excluded"])
        return [
            f"No configuration qualified: none {rule}.",
            f"Why: {whys}." if whys else "Why: no point was measured.",
            *warnings,
        ]
    lead = (
        f"Tie between the two fastest configurations that guarantee order by their policies and kept 0 packets "
        f"reordered at every output in every run{within}; "
        f"{'preferred' if tie['preferred_by'] else 'listed first'}"
        if tie
        else f"Fastest configuration that {rule}"
    )
    lines = [
        f"{lead}: {best['label']}, last packet {units.duration(best['last_packet_ms'])} "
        f"(median of {best['runs']} run(s)), {units.ratio(best['overhead_ratio'])} × the floor, "
        f"latency p99 {units.duration(best['latency_p99_ms'])}{_cpu(best)}."
    ]
    if best.get("order_why"):
        lines.append(f"Order is guaranteed by: {best['order_why']}.")
    if second is not None:
        lines.append(
            f"{'Tied with' if tie else 'Runner-up'}: {second['label']}, last packet "
            f"{units.duration(second['last_packet_ms'])}, {units.ratio(second['overhead_ratio'])} × the "
            f"floor, latency p99 {units.duration(second['latency_p99_ms'])}{_cpu(second)}."
        )
    else:
        lines.append("No runner-up: no other configuration qualified.")
    if tie:
        lines.append(f"Not significantly faster by compare's rule ({tie['why']}): {tie['reason']}.")
    if a["excluded"]:
        lines.append(
            f"Left out ({len(a['excluded'])}): " + "; ".join(f"{e['label']}: {e['why']}" for e in a["excluded"]) + "."
        )
    return lines + warnings


def _cpu(pick: dict[str, Any]) -> str:
    cpu = pick.get("cpu_per_packet_us")
    return f", CPU {units.duration_us(cpu)} per packet" if cpu is not None else ""


HEADER = ("runs", "last packet", "ratio", "reordered (max)", "latency p99", "qualifies")


def rows(doc: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """A row per point: its settings, then the figures (median, min–max where several runs)."""
    keys = list(doc["sweep"]["grid"])
    bound = doc["sweep"].get("max_latency_ms")
    out = []
    for p in doc["points"]:
        reordered = [r for r in p["reordered_at_outputs"] if r is not None]
        why = why_not(p, bound)
        out.append(
            [
                *(value_text(p["settings"].get(k)) for k in keys),
                len(p["reordered_at_outputs"]),
                _with_spread(_fig(p, "last_packet_ms"), units.duration),
                _with_spread(_fig(p, "overhead_ratio"), units.ratio),
                max(reordered) if reordered else None,
                _with_spread(_fig(p, "latency_p99_ms"), units.duration),
                "yes" if why is None else f"no: {why}",
            ]
        )
    return keys, out


def sweep_view(doc: dict[str, Any]) -> list[Any]:
    """What the terminal shows: the table, then the answer. Within 100
    columns: a duration's range goes under its median (whole), the ratio's
    is left out (it is the last packet's over the floor), and why a point
    does not qualify is left to the answer's lines ("Left out")."""
    keys, body = rows(doc)
    ratio, durations = len(keys) + 2, (len(keys) + 1, len(keys) + 4)
    figures = [(h, {"min_width": 13}) if h in ("last packet", "latency p99") else h for h in HEADER[1:]]
    # The run count in the title (every point of a finished sweep has K runs) unless they differ.
    counts = sorted({r[len(keys)] for r in body})
    runs = f"{counts[0]} run(s) per point" if len(counts) == 1 else None
    if runs is None:
        figures.insert(0, HEADER[0])
    t = table(
        *keys,
        *figures,
        title=f"sweep of {Path(str(doc['sweep']['spec'])).name}"
        + (f": {runs}, median with min–max under it" if runs else ""),
    )
    for row in body:
        row = list(row)
        if runs:
            del row[len(keys)]
            ratio, durations = len(keys) + 1, (len(keys), len(keys) + 3)
        for i in durations:
            row[i] = row[i].replace(" (", "\n(") if row[i] else row[i]
        row[ratio] = row[ratio].split(" (")[0] if row[ratio] else row[ratio]
        row[-1] = "yes" if row[-1] == "yes" else "no"
        add_rows(t, [row])
    best = (doc.get("answer") or {}).get("best")
    lines = answer_lines(doc)
    return [t, "", Text(lines[0], style=GOOD if best else BAD), *lines[1:]]


def sweep_csv(doc: dict) -> CsvTable:
    """The table as CSV: settings, then each headline figure's median, min and max, raw (point_row)."""
    keys, bound = list(doc["sweep"]["grid"]), doc["sweep"].get("max_latency_ms")
    rows = [point_row(p, keys, bound) for p in doc["points"]]
    return list(rows[0]), [list(r.values()) for r in rows]


# The answer in orange, the other points in blue: told apart by hue and
# lightness alike (and by its star), as green beside blue is not.
ANSWER_COLOUR = "#e66100"
POINT_COLOUR = "#1f4e9c"


def plot(doc: dict[str, Any], out: str | os.PathLike) -> Path:
    """The sweep's plot (sweep_figure) as OUT/sweep.png; returns its path."""
    fig = sweep_figure(doc)
    path = Path(out) / PLOT
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_figure(fig, path)


def sweep_figure(doc: dict[str, Any]) -> Any:
    """Ratio per point (whiskers min–max only where several runs) and latency
    p99, side by side. The answer is an orange star, a point left out of the
    answer a hollow circle; the legend sits below the panels, off every point."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    points = doc["points"]
    labels = [p["label"] for p in points]
    # A tick names a point by its values alone; the keys are the axis's label.
    keys = list(doc["sweep"]["grid"])
    ticks = [", ".join(value_text(p["settings"].get(k)) for k in keys) for p in points]
    xs = list(range(len(points)))
    bound = doc["sweep"].get("max_latency_ms")
    best = ((doc.get("answer") or {}).get("best") or {}).get("label")
    left_out = [why_not(p, bound) is not None for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(max(8, 0.9 * len(points) + 4), 5.2))
    runs = runs_label(_fig(p, "overhead_ratio").n for p in points)
    for ax, key, name in (
        (left, "overhead_ratio", "time of last packet / floor"),
        (right, "latency_p99_ms", "latency p99 (ms)"),
    ):
        figs = [_fig(p, key) for p in points]
        med = [f.median if f.median is not None else float("nan") for f in figs]
        several, err = whiskers(figs)
        if several:
            ax.errorbar(
                [xs[i] for i in several],
                [med[i] for i in several],
                yerr=err,
                fmt="none",
                color=POINT_COLOUR,
                capsize=3,
                zorder=2,
            )
        for i in xs:
            if labels[i] == best:
                ax.scatter(
                    [i], [med[i]], marker="*", s=180, color=ANSWER_COLOUR, edgecolors="black", linewidths=0.6, zorder=4
                )
            else:
                ax.scatter(
                    [i],
                    [med[i]],
                    marker="o",
                    s=42,
                    zorder=3,
                    linewidths=1.4,
                    edgecolors=POINT_COLOUR,
                    facecolors="none" if left_out[i] else POINT_COLOUR,
                )
        if key == "latency_p99_ms" and bound is not None:
            ax.axhline(bound, color="#a4161a", ls="--")
        if key == "overhead_ratio":
            ax.axhline(1.0, color="#6b7280", ls=":")
            # The floor in sight, off the frame's edge: no run is under it.
            ax.set_ylim(bottom=min(0.95, *(m for m in med if m == m)))
        else:
            ax.set_ylim(bottom=0)  # a latency from 0, so that heights compare
        ax.set_xlim(-0.5, len(points) - 0.5)
        long = max(map(len, ticks)) > 10
        ax.set_xticks(xs, ticks, rotation=30 if long else 0, ha="right" if long else "center", fontsize=8)
        ax.set_xlabel(", ".join(keys), fontsize=8)
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    handles = [
        Line2D([], [], marker="*", ls="none", ms=12, color=ANSWER_COLOUR, markeredgecolor="black", label="the answer"),
        Line2D([], [], marker="o", ls="none", ms=7, color=POINT_COLOUR, label="qualifies"),
        Line2D(
            [],
            [],
            marker="o",
            ls="none",
            ms=7,
            markerfacecolor="none",
            markeredgecolor=POINT_COLOUR,
            label="left out (why: see the answer)",
        ),
        Line2D([], [], color="#6b7280", ls=":", label="floor (ratio 1)"),
    ]
    if bound is not None:
        handles.append(Line2D([], [], color="#a4161a", ls="--", label="latency bound"))
    fig.suptitle(f"Sweep of {Path(str(doc['sweep']['spec'])).name}: {runs}", fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False)
    return fig


# The answer's timeline beside the report (`sweep --timeline`).
TIMELINE_PNG = "timeline.png"


def answer_timeline(doc: dict[str, Any]) -> tuple[str, Timeline] | None:
    """(the answer's label, the timeline of its median run: the run of the
    median ratio), or None where there is no answer or its runs kept no
    timeline (kept before results held one)."""
    best = ((doc.get("answer") or {}).get("best") or {}).get("label")
    point = next((p for p in doc["points"] if p["label"] == best), None)
    runs = [r for r in (point or {}).get("benchmark", {}).get("runs", []) if r.get("timeline")]
    if not runs:
        return None
    runs.sort(key=lambda r: r.get("overhead_ratio") or 0.0)
    return str(best), Timeline.from_dict(runs[len(runs) // 2]["timeline"])


def _timeline_section(doc: dict[str, Any], out: str | os.PathLike) -> list[str]:
    """The answer's first packets, drawn beside the report."""
    found = answer_timeline(doc)
    lines = ["## Timeline of the answer", ""]
    if found is None:
        return lines + ["None: there is no answer, or its runs kept no timeline.", ""]
    label, timeline = found
    draw_timeline(timeline, Path(out) / TIMELINE_PNG, timeline_title(f"{label} (median run)", timeline))
    return lines + timeline_section(timeline, TIMELINE_PNG, f"{label}: the first packets")


def write_sweep_report(doc: dict[str, Any], out: str | os.PathLike, timeline: bool = False) -> tuple[Path, Path]:
    """report.md and report.html, with the plot and, with `timeline`, the
    answer's first packets; returns their paths."""
    plot(doc, out)
    keys, body = rows(doc)
    s = doc["sweep"]
    grid = "; ".join(f"`{k}` = {', '.join(map(value_text, v))}" for k, v in s["grid"].items())
    warnings = [f"- {p['label']}: {w}" for p in doc["points"] for w in p["benchmark"].get("warnings", [])]
    text = "\n".join(
        [
            f"# Sweep of {s['spec']}",
            "",
            "## Answer",
            "",
            *[f"{line}\n" for line in answer_lines(doc)],
            "## Points",
            "",
            f"Grid: {grid}. {s['runs']} run(s) per point after {s['warmup']} warm-up(s), each under the measurement "
            "guard; figures are medians, with min–max where there were several runs. Reordered: the most packets out "
            "of order at any output in any run.",
            "",
            md_table(list(keys) + list(HEADER), body),
            "",
            f"![ratio and latency p99 per point]({PLOT})",
            "",
            *(_timeline_section(doc, out) if timeline else []),
            "## Warnings",
            "",
            *(warnings or ["None."]),
            "",
            f"Measured by scabench {(doc.get('scabench') or {}).get('version', '?')} "
            f"(commit {(doc.get('scabench') or {}).get('commit', '?')}); every run is in results.json.",
            "",
        ]
    )
    return write_report(out, f"Sweep of {s['spec']}", text)

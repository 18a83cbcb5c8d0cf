"""The report of `scabench peers --grain`: the terminal's tables, the plot
of each peer's ratio against the grain, and report.md/report.html."""

import os
from pathlib import Path
from typing import Any

from scabench.console import add_rows, table
from scabench.report.markdown import environment_section, md_table, write_report
from scabench.report.plots import save_figure
from scabench.studies.machine_load import load_section, load_summary
from scabench.studies.peers.grain_analysis import best_ordered_scabench, grain_sizes, grain_table, work_label

TITLE = "Peers at every grain: work per packet by packet size"
FIGURE = "peers-grain.png"
RATIO_NAMES = {
    "ratio_threads": "time of the last packet ÷ that of plain threads at the same point",
    "ratio_floor": "time of the last packet ÷ the point's floor (none without work)",
}


def _cores_label(cores: list[int]) -> str:
    return f"{len(cores)} core{'s' if len(cores) != 1 else ''} ({','.join(map(str, cores))})"


def answer_lines(doc: dict[str, Any]) -> list[str]:
    """At each point, scabench's best ordered strategy against plain threads."""
    lines = []
    for p in doc["points"]:
        best = best_ordered_scabench(doc, p)
        where = f"{work_label(p['work_us'])} of work, {p['samples']} samples"
        if best is None:
            lines.append(f"{where}: no scabench strategy ran in order.")
        else:
            lines.append(f"{where}: best scabench ordered strategy {best[0]}, {best[1]:.3f} × plain threads.")
    return lines


def notes(doc: dict[str, Any]) -> list[str]:
    """The skipped peers and the failed runs, one line each."""
    out = [f"{pid}: skipped: {e['skipped']}" for pid, e in doc["peers"].items() if e.get("skipped")]
    for p in doc["points"]:
        for pid, entry in p["peers"].items():
            for f in entry.get("failures", []):
                out.append(
                    f"{pid} at {work_label(p['work_us'])}, {p['samples']} samples: round {f['round']} failed: "
                    f"{f['error']}"
                )
    return out


def grain_view(doc: dict[str, Any]) -> list[Any]:
    """The terminal's view (console.show prints it): the set-up, the table
    of ratios to plain threads, the legend, the notes and the answer."""
    meta = doc["meta"]
    tables = []
    for size in grain_sizes(doc):
        header, rows = grain_table(doc, "ratio_threads", size)
        tables.append(add_rows(table(*header, title=f"{size} samples a packet"), rows))
    return [
        f"{len(doc['points'])} point(s) on {_cores_label(meta['cores'])}; {meta['runs']} round(s); "
        f"columns: work per packet and stage",
        *tables,
        "each cell: median time of the last packet ÷ that of plain threads at the same point (1: as fast as "
        "threads in one process); !: a run lost order",
        *notes(doc),
        "",
        *answer_lines(doc),
    ]


PALETTE = "tab20"


def _plot(doc: dict[str, Any], out: Path) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from scabench.report.plots import log_axis_labels

    sizes = grain_sizes(doc)
    works = sorted({p["work_us"] for p in doc["points"]})
    ratios = ("ratio_floor", "ratio_threads")
    fig, axes = plt.subplots(len(ratios), len(sizes), figsize=(4.2 * len(sizes) + 2.8, 7), squeeze=False, sharex=True)
    colours = plt.get_cmap(PALETTE)
    ids = list(doc["peers"])
    for col, size in enumerate(sizes):
        points = sorted((p for p in doc["points"] if p["samples"] == size), key=lambda p: p["work_us"])
        for row, ratio in enumerate(ratios):
            ax = axes[row][col]
            for k, pid in enumerate(ids):
                xs, ys = [], []
                for p in points:
                    f = p.get("figures", {}).get(pid)
                    if f and f[ratio] is not None:
                        xs.append(p["work_us"])
                        ys.append(f[ratio])
                if not xs:
                    continue
                scabench = doc["peers"][pid]["kind"] == "scabench"
                ax.plot(
                    xs,
                    ys,
                    "o-" if scabench else "s--",
                    color=colours(k % 20),
                    label=pid,
                    markersize=4,
                    linewidth=1.2,
                )
            # No work sits at 0 of a linear stretch below 1 µs, the rest on a log scale.
            ax.set_xscale("symlog", linthresh=1)
            ax.set_xticks(works, [work_label(w) for w in works], fontsize=7, rotation=30)
            ax.set_yscale("log")
            log_axis_labels(ax.yaxis)
            ax.axhline(1.0, color="#444", linewidth=0.8)
            ax.grid(alpha=0.3, which="both")
            if row == 0:
                ax.set_title(f"{size} samples ({size * 8:,} B) a packet", fontsize=9)
            if row == len(ratios) - 1:
                ax.set_xlabel("work per packet and stage", fontsize=8)
            if col == 0:
                ax.set_ylabel(
                    "last packet ÷ floor" if ratio == "ratio_floor" else "last packet ÷ plain threads", fontsize=8
                )
    handles, labels = [], []
    for ax in axes.flat:
        for h, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    fig.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(0.995 - 2.6 / fig.get_figwidth(), 0.95))
    meta = doc["meta"]
    fig.suptitle(f"The peers' pipeline at every grain, {_cores_label(meta['cores'])}", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 2.7 / fig.get_figwidth(), 0.96))
    path = out / FIGURE
    save_figure(fig, path)
    return path.name


def render(doc: dict[str, Any], figure: str) -> str:
    meta = doc["meta"]
    kept_runs = [r for p in doc["points"] for e in p["peers"].values() for r in e["runs"]]
    packets = ", ".join(f"{work_label(p['work_us'])} × {p['samples']}: {p['packets']}" for p in doc["points"])
    work = ", ".join(map(work_label, meta["grid"]["work_us"]))
    text = [
        f"# {TITLE}",
        "",
        *[f"- {line}" for line in answer_lines(doc)],
        "",
        f"The pipeline of `{meta['pipeline_spec']}` (a producer and 3 stages, the same CPU work per packet at "
        f"every stage) at every point of the grid: work per packet {work}"
        f"; packets of {', '.join(map(str, meta['grid']['samples']))} doubles. On {_cores_label(meta['cores'])}; "
        f"{meta['runs']} round(s), every peer at every point once a round. Finished {meta.get('finished_at', '?')} "
        f"in {meta.get('elapsed_s', 0) / 60:.1f} min.",
        "",
        f"Packets per run: {packets}.",
        "",
    ]
    for ratio in ("ratio_threads", "ratio_floor"):
        text += [f"## {RATIO_NAMES[ratio][0].upper()}{RATIO_NAMES[ratio][1:]}", ""]
        for size in grain_sizes(doc):
            header, rows = grain_table(doc, ratio, size)
            text += [f"{size} samples ({size * 8:,} B) a packet:", "", md_table(header, rows), ""]
    text += [
        "Columns: work per packet and stage. Each cell is the median over the rounds; "
        "a ratio to plain threads is the peer's median time of the last packet over that of plain threads at "
        "the same point. !: a run in which a stage did not see every packet in order.",
        "",
        f"![ratio against grain, per peer]({figure})",
        "",
    ]
    skipped = notes(doc)
    if skipped:
        text += ["Not measured:", ""] + [f"- {line}" for line in skipped] + [""]
    text += [
        "## The peers",
        "",
        md_table(["peer", "what moves the packets"], [[pid, e["how"]] for pid, e in doc["peers"].items()]),
        "",
        *load_section(load_summary(kept_runs, meta), meta.get("guard")),
        *environment_section(meta["environment"]),
    ]
    return "\n".join(text)


def write_grain_report(doc: dict[str, Any], out_dir: str | os.PathLike) -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_report(out, TITLE, render(doc, _plot(doc, out)))

"""The report of `scabench peers`: the terminal table, the plot of each
peer's ratio to the floor, and report.md/report.html."""

from pathlib import Path
from types import SimpleNamespace

from scabench.console import add_rows, table, text
from scabench.report.markdown import environment_section, md_table, write_report
from scabench.report.plots import runs_label, save_figure, whiskers
from scabench.studies.machine_load import load_section, load_summary
from scabench.studies.peers.analysis import runs_of, undisturbed

TITLE = "The paper's pipeline on peer frameworks"
FIGURE = "peers.png"


def _range(s, digits=3):
    if not s or s.get("median") is None:
        return None
    if s["n"] > 1:
        return f"{s['min']:.{digits}f}–{s['max']:.{digits}f}"
    return f"{s['min']:.{digits}f}"


def _median(s, digits=3):
    return None if not s or s.get("median") is None else f"{s['median']:.{digits}f}"


def _order(summary):
    if summary is None:
        return None
    return "yes" if summary["in_order"] else "NO: " + "; ".join(summary["order_problems"])


def _cores_label(cores):
    return f"{len(cores)} core{'s' if len(cores) != 1 else ''} ({','.join(map(str, cores))})"


def _undisturbed(s):
    u = s.get("ratio_undisturbed")
    if not u or not u["n"]:
        return "none"
    return f"{_median(u)} ({_range(u)}, {u['n']})"


def rows(doc):
    """One row per peer that ran: peer, runs, median ratio, min–max, the
    same over the undisturbed runs, median last packet (ms), median CPU (s),
    all in order, median foreign load (%)."""
    out = []
    for peer_id, e in doc["peers"].items():
        s = e.get("summary")
        if s is None:
            continue
        out.append(
            [
                peer_id,
                s["runs"],
                _median(s["ratio"]),
                _range(s["ratio"]),
                _undisturbed(s),
                _median(s["last_packet_ms"], 0),
                _median(s["cpu_s"], 2),
                _order(s),
                _median(s["foreign_pct"], 1),
            ]
        )
    return out


HEADER = [
    "peer",
    "runs",
    "last packet ÷ floor",
    "min–max",
    "undisturbed runs: median (min–max, n)",
    "last packet ms",
    "CPU s",
    "all in order",
    "foreign load %",
]


def answer_lines(doc):
    """The study's answer, first in the report and last on the terminal:
    the fastest peer that kept every packet in order (median ratio to the
    floor over its rounds), scabench's fastest ordered strategy beside it,
    and the peers that lost order or did not run."""
    ran = [(pid, e["summary"]) for pid, e in doc["peers"].items() if e.get("summary")]
    ordered = sorted(((pid, s) for pid, s in ran if s["in_order"]), key=lambda x: x[1]["ratio"]["median"])
    if not ordered:
        return ["No peer kept every packet in order" + (" (none ran)." if not ran else ".")]

    def said(pid, s):
        r = s["ratio"]
        spread = f", {_range(r)}" if r["n"] > 1 and r["min"] != r["max"] else ""
        return f"{pid}, {_median(r)} × the floor (median of {r['n']} round(s){spread})"

    best_id, best = ordered[0]
    lines = [f"Fastest with every packet in order: {said(best_id, best)}."]
    ours = [(pid, s) for pid, s in ordered if doc["peers"][pid]["kind"] == "scabench"]
    if ours and ours[0][0] != best_id:
        pid, s = ours[0]
        later = s["last_packet_ms"]["median"] / best["last_packet_ms"]["median"]
        lines.append(
            f"scabench's fastest: {said(pid, s)}; its last packet came {later:.2f}× as late as that of {best_id}."
        )
    elif ours:
        lines.append("It is scabench's own: no peer framework delivered the last packet sooner in order.")
    lost = [pid for pid, s in ran if not s["in_order"]]
    if lost:
        lines.append(f"Out of order: {', '.join(lost)}.")
    missing = [pid for pid, e in doc["peers"].items() if not e.get("summary")]
    if missing:
        lines.append(f"Not measured: {', '.join(missing)}.")
    return lines


def notes(doc):
    """The skipped peers and the failed runs, one line each."""
    out = []
    for peer_id, e in doc["peers"].items():
        if e.get("skipped"):
            out.append(f"{peer_id}: skipped: {e['skipped']}")
        for f in e.get("failures", []):
            out.append(f"{peer_id}: round {f['round']} failed: {f['error']}")
    return out


# The terminal's columns: the report's, with shorter headers and the
# undisturbed runs as median and count, so that the table fits 100 columns.
TERMINAL_HEADER = ["peer", "ratio", "min–max", "quiet (n)", "last ms", "CPU s", "in order", "load %"]


def _terminal_row(row, summary):
    u = summary.get("ratio_undisturbed")
    quiet = f"{_median(u)} ({u['n']})" if u and u["n"] else "none"
    in_order = row[7]
    if in_order and in_order.startswith("NO"):
        in_order = "NO"  # what went wrong is a line under the table
    return [row[0], row[2], row[3], quiet, row[5], row[6], in_order, row[8]]


def peers_view(doc):
    """The terminal's view: the set-up, the table, the legend, the skipped
    peers and the failed runs (console.show prints it)."""
    meta = doc["meta"]
    summaries = [e["summary"] for e in doc["peers"].values() if e.get("summary") is not None]
    terminal_rows = [_terminal_row(r, s) for r, s in zip(rows(doc), summaries)]
    return (
        [
            f"{meta['packets']} packets on {_cores_label(meta['cores'])}, floor {meta['floor_ms']:.0f} ms; "
            f"{meta['runs']} round(s)",
            add_rows(table(*TERMINAL_HEADER), terminal_rows),
            "ratio: time of the last packet ÷ floor, the least time the hardware allows (1: ideal), median over "
            "the rounds; quiet: the same over the rounds the guard found undisturbed (n: how many); last ms: time "
            "of the last packet; CPU s: user + system time of the peer's processes; load: others' share of the "
            "cores",
        ]
        + [f"{r[0]}: out of order: {r[7][len('NO: ') :]}" for r in rows(doc) if r[7] and r[7].startswith("NO")]
        + notes(doc)
        + ["", *answer_lines(doc)]
    )


def format_peers(doc, wide=False):
    """The same as plain text."""
    return text(peers_view(doc), wide)


SCABENCH_COLOUR, PEER_COLOUR, DISTURBED_COLOUR = "#2a6fb5", "#b5452a", "#999999"


def _plot(doc, out):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    ran = [(pid, e) for pid, e in doc["peers"].items() if e.get("summary")]
    fig, ax = plt.subplots(figsize=(10, 1.4 + 0.42 * max(1, len(ran))))
    ratios = [SimpleNamespace(**e["summary"]["ratio"]) for _, e in ran]
    several, err = whiskers(ratios)  # min–max only over several rounds
    for y, ((_pid, e), s) in enumerate(zip(ran, ratios)):
        colour = SCABENCH_COLOUR if e["kind"] == "scabench" else PEER_COLOUR
        # A median that stands on a disturbed round is grey inside: it is
        # not a figure to compare peers by (the table's undisturbed column is).
        any_disturbed = any(not undisturbed(r) for r in e["runs"])
        ax.plot(
            [s.median],
            [y],
            "o",
            markeredgecolor=colour,
            markersize=7,
            markerfacecolor=DISTURBED_COLOUR if any_disturbed else colour,
        )
        if y in several:
            k = several.index(y)
            ax.errorbar([s.median], [y], xerr=[[err[0][k]], [err[1][k]]], fmt="none", color=colour, capsize=3)
        # Each round a tick just above the row, where the whiskers' caps do not hide it.
        for disturbed in (False, True):
            xs = [r["ratio"] for r in e["runs"] if undisturbed(r) != disturbed]
            ax.plot(
                xs,
                [y - 0.28] * len(xs),
                "|",
                color=DISTURBED_COLOUR if disturbed else colour,
                markersize=8,
                markeredgewidth=2,
            )
    ax.set_yticks(range(len(ran)), [pid for pid, _ in ran], fontsize=8)
    ax.set_ylim(len(ran) - 0.5, -0.7)  # top to bottom in the table's order, room for the first row's ticks
    ax.axvline(1.0, color="#444", linewidth=0.8)
    ax.set_xlabel(
        f"time of last packet / floor (1: the least the hardware allows)\n"
        f"({runs_label(s.n for s in ratios).replace('run', 'round')})",
        fontsize=9,
    )
    meta = doc["meta"]
    ax.set_title(f"Paper pipeline, {meta['packets']} packets, {_cores_label(meta['cores'])}", fontsize=10)
    ax.grid(alpha=0.3)
    bar = meta.get("guard", {}).get("redo_above_pct")
    disturbed_means = (
        f"others took over {bar:g} % of the cores" if bar is not None else "others' load over the guard's bar"
    )
    legend = [
        Line2D([], [], marker="o", linestyle="", color=SCABENCH_COLOUR, label="scabench strategy: median"),
        Line2D([], [], marker="o", linestyle="", color=PEER_COLOUR, label="peer framework: median"),
        Line2D(
            [],
            [],
            marker="o",
            linestyle="",
            markerfacecolor=DISTURBED_COLOUR,
            markeredgecolor="#444",
            label="median over disturbed rounds too",
        ),
        Line2D(
            [],
            [],
            marker="|",
            linestyle="",
            markersize=8,
            markeredgewidth=2,
            color="#444",
            label="a round, undisturbed (its colour)",
        ),
        Line2D(
            [],
            [],
            marker="|",
            linestyle="",
            markersize=8,
            markeredgewidth=2,
            color=DISTURBED_COLOUR,
            label=f"a round, disturbed:\n{disturbed_means}",
        ),
    ]
    ax.legend(handles=legend, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.tight_layout()
    path = Path(out) / FIGURE
    save_figure(fig, path)
    return path.name


def render(doc, figure):
    meta = doc["meta"]
    p = meta["pipeline"]
    text = [
        f"# {TITLE}",
        "",
        f"**{' '.join(answer_lines(doc))}**",
        "",
        f"{meta['packets']} packets of {p['samples']} doubles, a producer and {p['stages']} stages of "
        f"{p['work_us'] / 1000:g} ms of CPU work each (from `{meta['pipeline_spec']}`), on "
        f"{_cores_label(meta['cores'])}; {meta['runs']} round(s), every peer once a round. Floor "
        f"{meta['floor_ms']:.0f} ms. Finished {meta.get('finished_at', '?')} in "
        f"{meta.get('elapsed_s', 0) / 60:.1f} min.",
        "",
        "## Last packet over the floor",
        "",
        md_table(HEADER, rows(doc)),
        "",
    ]
    skipped = notes(doc)
    if skipped:
        text += ["Not measured:", ""] + [f"- {line}" for line in skipped] + [""]
    text += [
        f"![last packet over the floor, per peer]({figure})",
        "",
        "The time of the last packet runs from the producer's first send to the last stage's last "
        "completion, on the machine's monotonic clock, for every peer. The floor is the least the hardware "
        "allows: the larger of the pipeline bound (one packet per slowest stage, plus one packet's way "
        "through every stage) and the CPU bound (all the stages' work spread over the cores). "
        "A run is undisturbed when others took at most the guard's share of the cores while it ran; "
        "on a busy machine the guard keeps disturbed runs too (the cleanest of their "
        "attempts), so the column of undisturbed runs is the one to compare peers by. "
        '"All in order": every stage of every run saw every packet, each right after its predecessor '
        "(for scabench, in the order the stage finished them, which is the order it delivered). CPU: user "
        "and system time of the peer's processes (for scabench, its hosts'; the launcher and the Naming "
        "Service are not counted).",
        "",
        "## The peers",
        "",
        md_table(["peer", "what moves the packets"], [[pid, e["how"]] for pid, e in doc["peers"].items()]),
        "",
        "Every stage spins on its thread's CPU clock, the same spin as scabench's stage "
        "(`cpp/core/src/work.cpp`), so 5 ms of work is 5 ms of CPU even on a shared core. A program "
        "peer's process is pinned to the cores with sched_setaffinity before it starts; a scabench peer's "
        "hosts are pinned by its launcher, as `scabench run --cores` does.",
        "",
        *load_section(load_summary(runs_of(doc), meta), meta.get("guard")),
        *environment_section(meta["environment"]),
    ]
    return "\n".join(text)


def write_peers_report(doc, out_dir):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figure = _plot(doc, out)
    return write_report(out, TITLE, render(doc, figure))


def peers_csv(doc):
    """`scabench peers --csv`: a row per peer, skipped ones included, its
    figures over its runs (median, min, max, and for the ratio over the
    undisturbed runs their count too)."""
    figures = ("ratio", "ratio_undisturbed", "last_packet_ms", "cpu_s", "foreign_pct")
    header = (
        ["peer", "kind", "skipped", "runs", "failures", "in_order"]
        + [f"{f}_{s}" for f in figures for s in ("median", "min", "max")]
        + ["ratio_undisturbed_runs"]
    )
    rows = []
    for peer_id, e in doc["peers"].items():
        s = e.get("summary")
        rows.append(
            [peer_id, e["kind"], e.get("skipped"), len(e["runs"]), len(e["failures"]), s["in_order"] if s else None]
            + [(s[f] or {}).get(st) if s else None for f in figures for st in ("median", "min", "max")]
            + [s["ratio_undisturbed"]["n"] if s else None]
        )
    return header, rows

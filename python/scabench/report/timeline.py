"""A run's first packets as a timeline (RunResult.timeline): a lane per
component, a bar per packet from the start of its work to done, in the
packet's colour at every component so that one packet can be followed down
the pipeline, lighter where it was sending the packet on (a two-way call
waits there for the stages after it); time a packet waited in a queue as a
thin line under the lane; packets that arrived out of order outlined and
hatched. Gaps in a lane
are time the component had nothing to do: the empty pipeline shows as
lanes that stay empty while the first stage works."""

import os
from pathlib import Path
from typing import Any

from scabench.report.plots import save_figure
from scabench.run.results import Timeline

# A lane has a row per packet in work at once (bars never overlap), and is
# at most this many rows high: more packets at once (a pool's threads)
# share the height in thinner rows.
MOST_ROWS = 8
QUEUE_BAND = 1.2  # the height, in rows, of the band of queued packets under a lane
LANE_GAP = 0.9
# A packet's number is written in its bar where the bar is this share of the axis wide.
LABEL_AT = 0.025


def _busy(spans: list[tuple[float, float]], end: float) -> float:
    """The share of [0, end] in which at least one span was open."""
    total, reach = 0.0, 0.0
    for a, b in sorted(spans):
        a = max(a, reach)
        if b > a:
            total += b - a
            reach = b
    return total / end if end > 0 else 0.0


def _rows(spans: list[tuple[float, float]]) -> list[int]:
    """Each span's row, the lowest free one in start order, so that the
    spans of one row never overlap."""
    rows, free_at = [0] * len(spans), []  # type: list[int], list[float]
    for i in sorted(range(len(spans)), key=lambda i: spans[i][0]):
        a, b = spans[i]
        for k, end in enumerate(free_at):
            if end <= a:
                rows[i], free_at[k] = k, b
                break
        else:
            rows[i] = len(free_at)
            free_at.append(b)
    return rows


def draw_timeline(timeline: Timeline, path: str | os.PathLike, title: str) -> Path:
    """Draws the timeline as a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    fields = {name: i for i, name in enumerate(Timeline.SPAN_FIELDS)}
    seq_at, track_at, arrive_at = fields["sequence"], fields["track"], fields["arrive_ms"]
    start_at, send_at, done_at = fields["start_ms"], fields["send_ms"], fields["done_ms"]
    reordered_at = fields["reordered"]
    lanes = [lane for lane in timeline.lanes if lane["spans"]]
    end = max((s[done_at] for lane in lanes for s in lane["spans"]), default=1.0) or 1.0
    colours = plt.get_cmap("tab20")
    # Lay the lanes out from the top: each its work rows, then its queue band.
    layout, y = [], 0.0
    for lane in lanes:
        rows = _rows([(s[start_at], s[done_at]) for s in lane["spans"]])
        queued = [(s[arrive_at], s[start_at]) for s in lane["spans"] if s[start_at] > s[arrive_at]]
        height = min(max(rows) + 1, MOST_ROWS) + (QUEUE_BAND if queued else 0.0)
        layout.append((lane, rows, queued, y, height))
        y += height + LANE_GAP
    fig, ax = plt.subplots(figsize=(11, 0.3 * y + 1.6))
    for lane, rows, queued, top, height in layout:
        work_rows = min(max(rows) + 1, MOST_ROWS)
        row_h = work_rows / (max(rows) + 1)
        # A source's records are its sends: all of each is sending.
        source = lane is layout[0][0] and all(s[start_at] == s[arrive_at] for s in lane["spans"])
        worked = []
        for s, row in zip(lane["spans"], rows):
            colour = colours(s[seq_at] % 20)
            bar = (top + row * row_h + 0.08 * row_h, 0.84 * row_h)
            work_end = s[start_at] if source else (s[send_at] if s[send_at] is not None else s[done_at])
            worked.append((s[start_at], work_end))
            ax.broken_barh([(s[start_at], work_end - s[start_at])], bar, facecolors=colour, linewidth=0)
            ax.broken_barh([(work_end, s[done_at] - work_end)], bar, facecolors=colour, alpha=0.35, linewidth=0)
            if source:  # a send may be µs long: its start marked in full colour, so that every send shows
                ax.vlines(s[start_at], bar[0], bar[0] + bar[1], colors=[colour], linewidth=1.5)
            width = max(s[done_at] - s[start_at], end * 0.002)  # a send of µs still shows
            if s[reordered_at]:
                ax.broken_barh(
                    [(s[start_at], width)], bar, facecolors="none", edgecolors="black", linewidth=1.2, hatch="////"
                )
            if width >= LABEL_AT * end and row_h >= 0.6:
                ax.text(
                    s[start_at] + width / 2, bar[0] + bar[1] / 2, str(s[seq_at]), ha="center", va="center", fontsize=7
                )
        if queued:
            band = top + work_rows
            qrows = _rows(queued)
            step = QUEUE_BAND / (max(qrows) + 2)
            queued_spans = [s for s in lane["spans"] if s[start_at] > s[arrive_at]]
            for (a, b), row, s in zip(queued, qrows, queued_spans):
                ax.plot([a, b], [band + step * (row + 1)] * 2, color=colours(s[seq_at] % 20), linewidth=1.1)
        what = "sends" if source else f"in work {100 * _busy(worked, end):.0f} %"
        threads = len({s[track_at] for s in lane["spans"]})
        label = f"{lane['component']}\n{what}" + (f", {threads} threads" if threads > 1 else "")
        ax.text(-0.01, top + height / 2, label, transform=ax.get_yaxis_transform(), ha="right", va="center", fontsize=9)
        ax.axhline(top + height + LANE_GAP / 2, color="#dddddd", linewidth=0.8)
    ax.set_ylim(y, -0.2)
    ax.set_yticks([])
    ax.set_xlim(0, end * 1.01)
    ax.set_xlabel("ms since the first send")
    ax.set_title(title, fontsize=11, loc="left")
    ax.grid(axis="x", color="#eeeeee")
    ax.set_axisbelow(True)
    handles: list[Any] = [
        Patch(facecolor="#999999", label="a packet in work (its colour: its number)"),
        Patch(facecolor="#999999", alpha=0.35, label="sending it on, until the call returned"),
        Patch(facecolor="none", edgecolor="black", hatch="////", label="arrived out of order"),
    ]
    if any(q for _, _, q, _, _ in layout):
        handles.append(plt.Line2D([], [], color="#888888", linewidth=1.1, label="waiting in the queue"))
    fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=4, fontsize=8, frameon=False)
    tall = fig.get_figheight()  # margins in inches: the title above, the axis and the legend below
    fig.subplots_adjust(left=0.17, right=0.98, top=1 - 0.45 / tall, bottom=1.0 / tall)
    return save_figure(fig, path)


def timeline_title(what: str, timeline: Timeline) -> str:
    return f"{what}: the first {timeline.packets} packets of each stream"


def timeline_section(timeline: Timeline | None, image: str, what: str) -> list[str]:
    """A report's lines for a timeline drawn as `image` (beside the report)."""
    if timeline is None:
        return ["Not measured: these results were written before runs kept their first packets.", ""]
    return [
        f"![{what}]({image})",
        "",
        "A lane per component, a bar per packet from the start of its work to done, in the packet's colour at "
        "every component, lighter while the component was sending it on (a two-way call waits there for the "
        "components after it); a thin line under a lane: time a packet waited in its queue; hatched and "
        "outlined: it arrived out of order; in work: the share of the time shown in which the component worked "
        "a packet. Work start is worked out from the records where a worker or a reorder "
        "buffer hands packets on in turn (docs/reference/trace.md).",
        "",
    ]

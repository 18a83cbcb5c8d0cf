"""A run's report as a page: the waveform drawn as its graph (components and
connections, each connection labelled with its policy and what was measured
on it), then the tables of its paths, connections, streams and stalls
(`scabench run --report DIR`; docs/reference/result-files.md, "Reports").

The drawing is Graphviz's (the graphviz package writes the DOT source; the
`dot` program lays it out): waveform.svg, the one the page shows, and
waveform.png beside it, as the other reports' figures are. Everything comes
from the RunResult, so a kept results file draws again."""

import html
import os
from pathlib import Path

import graphviz

from scabench import units
from scabench.report.markdown import md_table, write_report
from scabench.report.timeline import draw_timeline, timeline_section, timeline_title
from scabench.run.results import HopResult, RunResult

# What an edge's lines say, for the page's legend.
EDGE_LEGEND = (
    "Each arrow is a connection, from a uses port to a provides port, labelled with its ports, its policy (the "
    "call, then the sync and dispatch where they are not the defaults, the worker's depth, the fan-out where it "
    "is not sequential), then what the run measured on it: the packets that came in on it and their rate, the "
    "most packets its fan-out queue held (parallel and drop), and the packets a drop fan-out dropped, in red. "
    "The time each hop took is in the Connections table"
)


def _port_of(end: str) -> tuple[str, str]:
    name, _, port = end.partition(".")
    return name, port


def _hop_line(hop: HopResult) -> str:
    """What was measured on one connection, in one line: counts and rate.
    Not its hop latency, which a call that waits for the receiver makes
    negative: the table shows it, with what it means."""
    parts = []
    if hop.received is not None:
        parts.append(f"{hop.received:,} pkts" + (f", {hop.rate_pps:,.0f}/s" if hop.rate_pps is not None else ""))
    if hop.fanout in ("parallel", "drop") and hop.queue_peak is not None:
        parts.append(f"queue peak {hop.queue_peak}")
    if hop.dropped:
        parts.append(f"dropped {hop.dropped}")
    return ", ".join(parts) or "not measured"


# Left to right while the longest route has this many components at most
# (it then fits the page's width at a readable size); a longer one, a chain
# of many blocks, top to bottom.
ACROSS_AT_MOST = 5


def _depth(spec: dict) -> int:
    """Components on the waveform's longest route (a spec the loader
    checked has no cycle)."""
    after: dict[str, list[str]] = {}
    for conn in spec.get("connections", []):
        uses, provides = conn["id"].split("->")
        after.setdefault(_port_of(uses)[0], []).append(_port_of(provides)[0])
    longest: dict[str, int] = {}

    def depth(name: str) -> int:
        if name not in longest:
            longest[name] = 1 + max((depth(n) for n in after.get(name, [])), default=0)
        return longest[name]

    return max((depth(c["name"]) for c in spec.get("components", [])), default=0)


def waveform_graph(result: RunResult) -> graphviz.Digraph:
    """The waveform of a run as a Graphviz graph: a node per component
    (its name, and its kind below in grey), an edge per connection, its SVG
    id the connection's (its ports, policy and counts). A result written
    before connections were measured draws its edges with the policy alone."""
    across = _depth(result.spec) <= ACROSS_AT_MOST
    dot = graphviz.Digraph(
        "waveform",
        graph_attr={
            "rankdir": "LR" if across else "TB",
            "fontname": "Helvetica",
            "nodesep": "0.4",
            "ranksep": "0.5" if across else "0.3",
        },
        node_attr={"shape": "box", "style": "rounded,filled", "fillcolor": "#eef1f6", "fontname": "Helvetica"},
        edge_attr={"fontname": "Helvetica", "fontsize": "10"},
    )
    for comp in result.spec.get("components", []):
        name, kind = html.escape(comp["name"]), html.escape(comp["kind"])
        kind_line = "" if comp["name"] == comp["kind"] else f'<BR/><FONT POINT-SIZE="10" COLOR="#5b6475">{kind}</FONT>'
        dot.node(comp["name"], f"<{name}{kind_line}>")
    measured = {hop.id: hop for hop in result.connections or []}
    for conn in result.spec.get("connections", []):
        uses, provides = conn["id"].split("->")
        (a, out), (b, into) = _port_of(uses), _port_of(provides)
        hop = measured.get(conn["id"])
        policy = hop.policy if hop is not None else conn.get("call", "")
        lines = [f"{out} → {into}", policy] + ([_hop_line(hop)] if hop is not None else [])
        # Across, each line centred over its arrow; down, beside it, left-aligned (\l) so
        # that a long line does not reach back over the arrow.
        label = "\n".join(lines) if across else "".join(f"  {line}\\l" for line in lines)
        dropped = hop is not None and bool(hop.dropped)
        dot.edge(a, b, label=label, id=conn["id"], tooltip=conn["id"], color="#a4161a" if dropped else "#1d2433")
    return dot


def draw_waveform(result: RunResult, out_dir: str | os.PathLike) -> list[Path]:
    """waveform.svg and waveform.png in out_dir (the `dot` program lays them out)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    dot = waveform_graph(result)
    paths = []
    for fmt in ("svg", "png"):
        path = out / f"waveform.{fmt}"
        path.write_bytes(dot.pipe(format=fmt))
        paths.append(path)
    return paths


def _us(value: float | None) -> str | None:
    return None if value is None else units.duration_us(value)


def _paths_line(result: RunResult) -> str | None:
    """A graph's paths in one line: how many, and what went missing or out
    of order on them (None for a chain: its end to end says it)."""
    paths = result.paths or []
    if len(paths) < 2:
        return None
    lost = None if any(p.lost is None for p in paths) else sum(p.lost or 0 for p in paths)
    return (
        f"{len(paths)}: {units.MISSING if lost is None else lost} lost, {sum(p.dropped for p in paths)} dropped, "
        f"{sum(p.reordered for p in paths)} reordered (Paths, below)"
    )


def _fan_out_ports(result: RunResult) -> set[str]:
    """The uses ports ("a.out") with several connections."""
    ends = [conn["id"].split("->")[0] for conn in result.spec.get("connections", [])]
    return {end for end in ends if ends.count(end) > 1}


def _without_fanout(policy: str) -> str:
    """A connection's policy in short less its fan-out, which the table's column of its own says."""
    return " ".join(word for word in policy.split() if not word.startswith("fanout:"))


def report_text(result: RunResult, of_runs: int | None = None) -> str:
    """The report's Markdown: its headline, the drawing and the tables."""
    spec = result.spec
    title = f"Run of {Path(spec.get('file', 'the spec')).name}"
    lines = [f"# {title}", ""]
    if of_runs:
        lines += [f"The last kept of {of_runs} runs (`--runs`).", ""]
    e2e = result.end_to_end_latency_us
    headline = [
        ["status", result.status],
        ["floor", units.duration(result.floor_ms)],
        ["ratio", units.ratio(result.overhead_ratio) if result.overhead_ratio is not None else None],
        ["end-to-end latency p50 / p99", f"{_us(e2e.p50)} / {_us(e2e.p99)}" if e2e is not None else None],
        ["paths", _paths_line(result)],
        ["stalled", "yes" if result.stalled else "no"],
        ["clean", {True: "yes", False: result.why_not_clean(), None: None}[result.clean]],
    ]
    # A graph has no one end to end (each path has its own), a chain no paths to count.
    headline = [
        row for row in headline if row[1] is not None or row[0] not in ("paths", "end-to-end latency p50 / p99")
    ]
    lines += [md_table(["figure", "value"], headline), ""]
    lines += ["## Waveform", "", '<img src="waveform.svg" alt="the waveform as a graph">', ""]
    lines += [f"{EDGE_LEGEND} ([PNG](waveform.png)).", ""]
    if result.paths:
        lines += ["## Paths", ""]
        lines += [
            "Each source's stream at each sink it reaches: latency from the start of a packet's send at the "
            "source to done at the sink, per arrival (a packet two routes deliver is two arrivals); lost: "
            "sent × routes less dropped less arrivals; reordered: at the sink, in the order it finished "
            "them, within each connection into it.",
            "",
        ]
        rows = [
            [
                f"{p.source} → {p.sink}",
                p.stream,
                p.routes,
                p.sent,
                p.arrivals,
                p.delivered,
                p.dropped,
                p.lost,
                p.reordered,
                *(
                    [_us(getattr(p.latency_us, k)) for k in ("p50", "p90", "p99", "max")]
                    if p.latency_us
                    else [None] * 4
                ),
            ]
            for p in result.paths
        ]
        header = ["path", "stream", "routes", "sent", "arrivals", "delivered", "dropped", "lost", "reordered"]
        lines += [md_table(header + ["p50", "p90", "p99", "max"], rows), ""]
    if result.connections:
        lines += ["## Connections", ""]
        fans_out = _fan_out_ports(result)
        rows = [
            [
                h.id.replace("->", " → "),
                _without_fanout(h.policy),
                h.transport,
                h.fanout if h.id.split("->")[0] in fans_out else None,
                h.sent,
                h.received,
                h.dropped,
                h.unsent,
                h.queue_peak if h.fanout in ("parallel", "drop") else None,  # sequential has no queue
                None if h.blocked_ns is None else units.duration_us(h.blocked_ns / 1e3),
                None if h.rate_pps is None else f"{h.rate_pps:,.0f}",
                _us(h.latency_us_mean),
                _us(h.latency_us_p99),
            ]
            for h in result.connections
        ]
        header = ["connection", "policy", "transport", "fan-out", "sent", "received", "dropped", "unsent"]
        header += ["queue peak", "blocked", "packets/s", "hop mean", "hop p99"]
        lines += [md_table(header, rows), ""]
        lines += [
            "sent, dropped, unsent, queue peak and blocked: the sending port's counts (a dash: the sender "
            "wrote none, or a queue peak where the port has no queue); received: the receiver's records of "
            "packets that came in on this connection; fan-out: the policy of a uses port with several "
            "connections (a dash: one connection); hop: arrival at the receiver minus done at the sender of the "
            "same packet, negative where the call waits for the receiver (two-way, or sync = target): the sender "
            "is done with a packet only once the receiver has taken it.",
            "",
        ]
    if result.streams:
        lines += ["## Order per stream", ""]
        rows = [
            [
                o.component,
                o.stream,
                o.received,
                o.reordered_from_previous,
                o.reordered_from_original,
                o.output_reordered_from_original,
            ]
            for o in result.streams
        ]
        header = ["component", "stream", "received", "reordered (previous)", "reordered (original)"]
        lines += [md_table(header + ["handed on reordered"], rows), ""]
    lines += ["## Stalls", ""]
    if result.stalls:
        rows = [[s["component"], s["at_ms"], s["for_ms"], s["threshold_ms"]] for s in result.stalls]
        lines += [md_table(["component", "at (ms)", "for (ms)", "threshold (ms)"], rows), ""]
    else:
        lines += ["None: no component, on any branch, held work while the whole run stood still.", ""]
    return "\n".join(lines)


# The timeline's file beside the report (`--timeline`).
TIMELINE_PNG = "timeline.png"


def write_run_report(
    result: RunResult, out_dir: str | os.PathLike, of_runs: int | None = None, timeline: bool = False
) -> tuple[Path, Path]:
    """report.md and report.html in out_dir, with the waveform drawn beside
    them and, with `timeline`, the run's first packets (timeline.png)."""
    draw_waveform(result, out_dir)
    text = report_text(result, of_runs)
    if timeline:
        if result.timeline is not None:
            title = timeline_title(Path(result.spec.get("file", "the run")).stem, result.timeline)
            draw_timeline(result.timeline, Path(out_dir) / TIMELINE_PNG, title)
        text = _with_timeline(text, timeline_section(result.timeline, TIMELINE_PNG, "the first packets"))
    return write_report(out_dir, text.splitlines()[0].lstrip("# "), text)


def _with_timeline(text: str, section: list[str]) -> str:
    """The report with its timeline after the waveform, where a reader of the
    drawing looks next."""
    parts = text.split("\n## ")
    waveform = next(i for i, p in enumerate(parts) if p.startswith("Waveform"))
    parts.insert(waveform + 1, "Timeline\n\n" + "\n".join(section))
    return "\n## ".join(parts)

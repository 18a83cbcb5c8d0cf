"""A run's report as a page: the waveform drawn as its graph (components and
connections, each connection labelled with its policy and what was measured
on it), then the tables of its paths, connections, streams and stalls
(`scabench run --report DIR`; docs/reference/result-files.md, "Reports").

The drawing is Graphviz's (the graphviz package writes the DOT source; the
`dot` program lays it out): waveform.svg, the one the page shows, and
waveform.png beside it, as the other reports' figures are. Everything comes
from the RunResult, so a kept results file draws again."""

import os
from pathlib import Path

import graphviz

from scabench import units
from scabench.report.markdown import md_table, write_report
from scabench.run.results import HopResult, RunResult

# What an edge's second line says, for the page's legend.
EDGE_LEGEND = (
    "Each arrow is a connection, from a uses port to a provides port, labelled with its policy (the call, "
    "then the sync and dispatch where they are not the defaults, the worker's depth, the fan-out where it is "
    "not sequential), then what the run measured on it: the packets per second that came in on it, the mean "
    "and p99 of arrival at the receiver minus done at the sender, and the packets a drop fan-out dropped"
)


def _port_of(end: str) -> tuple[str, str]:
    name, _, port = end.partition(".")
    return name, port


def _hop_line(hop: HopResult) -> str:
    """What was measured on one connection, in one line."""
    parts = []
    if hop.rate_pps is not None:
        parts.append(f"{hop.rate_pps:,.0f} pkt/s")
    if hop.latency_us_mean is not None and hop.latency_us_p99 is not None:
        parts.append(f"{units.duration_us(hop.latency_us_mean)} (p99 {units.duration_us(hop.latency_us_p99)})")
    if hop.dropped:
        parts.append(f"dropped {hop.dropped}")
    return ", ".join(parts) or "not measured"


def waveform_graph(result: RunResult) -> graphviz.Digraph:
    """The waveform of a run as a Graphviz graph: a node per component
    (its name and kind), an edge per connection (its ports, policy and
    figures). A result written before connections were measured draws its
    edges with the policy alone."""
    dot = graphviz.Digraph(
        "waveform",
        graph_attr={"rankdir": "LR", "fontname": "Helvetica", "nodesep": "0.5", "ranksep": "1.1"},
        node_attr={"shape": "box", "style": "rounded,filled", "fillcolor": "#eef1f6", "fontname": "Helvetica"},
        edge_attr={"fontname": "Helvetica", "fontsize": "10"},
    )
    for comp in result.spec.get("components", []):
        same = comp["name"] == comp["kind"]
        dot.node(comp["name"], comp["name"] if same else f"{comp['name']}\n{comp['kind']}")
    measured = {hop.id: hop for hop in result.connections or []}
    for conn in result.spec.get("connections", []):
        uses, provides = conn["id"].split("->")
        (a, out), (b, into) = _port_of(uses), _port_of(provides)
        hop = measured.get(conn["id"])
        policy = hop.policy if hop is not None else conn.get("call", "")
        label = f"{out} → {into}\n{policy}" + (f"\n{_hop_line(hop)}" if hop is not None else "")
        dot.edge(a, b, label=label, color="#a4161a" if hop is not None and hop.dropped else "#1d2433")
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
        ["stalled", "yes" if result.stalled else "no"],
        ["clean", {True: "yes", False: result.why_not_clean(), None: None}[result.clean]],
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
        rows = [
            [
                h.id,
                h.policy,
                h.transport,
                h.fanout,
                h.sent,
                h.received,
                h.dropped,
                h.unsent,
                h.queue_peak,
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
            "wrote none); received: the receiver's records of packets that came in on this connection; hop: "
            "arrival at the receiver minus done at the sender of the same packet.",
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


def write_run_report(result: RunResult, out_dir: str | os.PathLike, of_runs: int | None = None) -> tuple[Path, Path]:
    """report.md and report.html in out_dir, with the waveform drawn beside them."""
    draw_waveform(result, out_dir)
    text = report_text(result, of_runs)
    return write_report(out_dir, text.splitlines()[0].lstrip("# "), text)

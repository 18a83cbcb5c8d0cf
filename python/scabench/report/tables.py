"""What `scabench run` prints: one run's table, a benchmark's summary (K
runs), and `scabench compare`'s table. Views are rich renderables
(scabench/console.py prints them, with colour on a terminal); each format_*
gives the same as plain text. Durations and rates are scaled (scabench/units.py)."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rich.text import Text

from scabench import units
from scabench.console import BAD, MUTED, TITLE, WARN, add_rows, table, text
from scabench.measure import stats
from scabench.measure.repeat import Benchmark, warnings_of
from scabench.model.policy import SCABENCH_PROTOCOL
from scabench.report.results_file import CsvTable
from scabench.run.results import Latency, NodeResult, RunResult, StageResult
from scabench.version import version_info

# The two figures every run reports, in words, on one line under its table
# (docs/architecture.md, "Metrics", says how the floor is computed).
LEGEND = f"floor: {stats.FLOOR_MEANS}. ratio: {stats.RATIO_MEANS}"
# The run table's columns (DESIGN-BRIEF's metric definitions), said under
# it: the producer's row, both reordering counts and the thread column.
RUN_TABLE_LEGEND = (
    "last packet: when the stage finished its last packet, from the first send (the producer's row: "
    "when it sent its last, and how many it sent). "
    "reordered (previous): arrivals whose sequence number is not the previous arrival's + 1. "
    "reordered (original): arrival positions whose packet is not the one sent in that position. "
    "most ORB threads: the most of the ORB's threads in the stage's calls at once"
)
# The line under the run table's floor and ratio: the third figure on it.
FOREIGN_LEGEND = "foreign CPU: the share of the run's cores that other processes used during it"
# The latency table's rows and columns and the send times under it
# (docs/architecture.md, "Metrics").
LATENCY_LEGEND = (
    "pN: N % of the packets took at most this. arrival → done: from a packet's arrival at the stage's "
    "port to done there; send → done: from the start of its send at the producer. producer send: how "
    "long its send calls took"
)
# A graph's paths and connections tables, said under them (their
# definitions: docs/reference/metrics.md, "Measurement on graphs").
PATHS_LEGEND = (
    "path: a source's stream at a sink it reaches. arrived: its packets the sink finished. lost: sent less "
    "dropped less arrived. dropped: by a drop fan-out on the way. reordered: at the sink, against the source's "
    "order. p50, p99: from the start of a packet's send at the source to done at the sink"
)
CONNECTIONS_LEGEND = (
    "fan-out: the policy of a uses port with several connections. protocol: what the hop spoke (scabench, or "
    "bulkio: BulkIO's data interfaces). sent, dropped, queue peak: the sending "
    "port's counts. received: what came in on the connection. packets/s: its arrival rate. "
    "scabench run --report DIR draws the waveform with these"
)
# The ordering-and-flow table's columns (their counters: RecordFileHeader,
# record_log.hpp), said under it.
FLOW_LEGEND = (
    "output reordered: as reordered (previous), in the order it finished packets (what it handed on). "
    "most held: the most packets its port held at once (in calls, reorder buffer, worker queue). "
    "reorder buffer peak: the most its reorder buffer held. skipped / late / dup.: packets given up on "
    "after the reorder timeout / arriving after being given up on / arriving twice (both dropped). "
    "sender suspended: times its port told its sender to stop (watermarks). sends that waited: times "
    "its output waited for credits or a resume"
)
# The statistics of repeated runs (measure/stats.py), said under the
# benchmark's table and compare's.
SIGMA_LEGEND = "σ: the runs' sample standard deviation"
CI_LEGEND = (
    "95 % CI (median): the median's, from the runs' own values (order statistics), so never outside them; "
    "it takes {runs} runs or more"
)
# Why a result has no ratio: its floor is 0 (no component declares work and
# no source is paced).
NO_FLOOR = "no floor (no declared work)"


def _line(content: str, style: str | None = None) -> Text:
    return Text(content, style=style or "")


def spec_lines(spec: dict[str, Any], packets: int | dict[str, int] | None = None) -> list[Any]:
    """The title of a resolved spec and its set-up: cores, transport, each
    connection's policy. packets: what the source sent, or each source's
    ({name: sent}, several sources)."""
    exp = spec.get("experiment", {})
    title = exp.get("name", spec["file"]) + (f": {exp['title']}" if exp.get("title") else "")
    setup = f"cores {spec['cores']}, transport {spec['transport']}"
    if isinstance(packets, dict):
        setup += ", packets " + ", ".join(f"{name} {sent}" for name, sent in packets.items())
    elif packets is not None:
        setup += f", {packets} packets"
    setup += f", hosts {len(spec['hosts'])}"
    external = sum("external" in c for c in spec["components"])
    if external:
        setup += f", external {external}"
    if spec.get("scheduler", "normal") != "normal":
        setup += f", scheduler {spec['scheduler']}"
    out = [_line(title, TITLE), _line(setup)]
    fans_out = fan_out_ports(spec)
    for c in spec["connections"]:
        policy = f"call={c['call']}" + (f" sync={c['sync']}" if c["call"] == "oneway" else "")
        policy += f" dispatch={c['dispatch']} worker={c['worker_depth'] or 'no'}"
        if c["id"].split("->")[0] in fans_out and "fanout" in c:  # results before fan-out have none
            policy += f" fanout={c['fanout']}" + (f"({c['fanout_depth']})" if c["fanout"] != "sequential" else "")
        if c["worker_depth"] and c.get("worker_resume", "auto") != "auto":
            policy += f" (resume at {c['worker_resume']})"
        if c.get("ordering", "arrival") != "arrival":
            policy += (
                f" ordering={c['ordering']}(capacity {c['reorder_capacity']}, timeout {c['reorder_timeout_ms']:g} ms)"
            )
        if c.get("flow", "none") != "none":
            policy += (
                " flow="
                + {
                    "watermarks": f"watermarks({c['flow_low']}, {c['flow_high']})",
                    "credits": f"credits({c['credits']})",
                }[c["flow"]]
            )
        # Where the packets go: a direct call, or the transport of a remote hop
        # (results written before hops said theirs give the placement alone).
        hop = c.get("transport")
        policy += f" ({c['placement']}" + (f", {hop}" if hop and hop != "collocated" else "") + ")"
        out.append(_line(f"  {c['id']}: {policy}"))
    if spec.get("network"):
        net = spec["network"]
        out.append(
            _line(
                f"  network hosts: one namespace and node per process, links of {net['delay_ms']} ms one-way "
                "delay" + (f" ± {net['jitter_ms']} ms" if net["jitter_ms"] else "")
            )
        )
    if spec.get("nodes"):
        placed = ", ".join(f"{node} ({', '.join(members)})" for node, members in spec["nodes"].items())
        out.append(_line(f"  nodes: {placed} in the domain {spec.get('domain')}"))
    return out


def fan_out_ports(spec: dict[str, Any]) -> set[str]:
    """The uses ports ("a.out") of a resolved spec with several connections."""
    ends = [c["id"].split("->")[0] for c in spec["connections"]]
    return {end for end in ends if ends.count(end) > 1}


def _count(v: Any) -> Any:
    """A count a result may lack (older results): a dash."""
    return units.MISSING if v is None else v


def _uses_ordering(spec: dict[str, Any]) -> bool:
    return any(
        c.get("ordering", "arrival") != "arrival" or c.get("flow", "none") != "none" for c in spec["connections"]
    )


def stage_rows(result: RunResult) -> CsvTable:
    """One row per component (the producer first): what the run table and
    its CSV show. Returns (header, rows) of raw values."""
    producer, stages = result.producer, result.stages
    assert stages is not None, "an analysed result: a run's, or one read back"
    header = [
        "component",
        "last_packet_ms",
        "received",
        "reordered_from_previous",
        "reordered_from_original",
        "max_server_threads",
    ]
    rows = []
    if producer:
        rows.append([producer.name, producer.last_sent_ms, producer.sent, None, None, None])
    rows += [
        [
            s.name,
            s.last_packet_ms,
            s.received,
            s.reordered_from_previous,
            s.reordered_from_original,
            s.max_server_threads,
        ]
        for s in stages
    ]
    if _uses_ordering(result.spec):
        header += [
            "output_reordered_from_previous",
            "held_peak",
            "reorder_buffer_peak",
            "skipped",
            "late",
            "duplicates",
            "flow_suspends",
            "send_stalls",
        ]
        for row, part in zip(rows, ([producer] if producer else []) + stages):
            is_stage = part is not producer
            row += [part.output_reordered_from_previous if is_stage else None]
            row += [
                getattr(part, k) if is_stage else None
                for k in ("held_peak", "reorder_buffer_peak", "skipped", "late", "duplicates", "flow_suspends")
            ]
            row += [part.send_stalls]
    if result.refusals:
        header.append("refused")
        for row, part in zip(rows, ([producer] if producer else []) + stages):
            row.append(part.refused or 0)
    if any(s.checksum is not None for s in stages):
        header.append("checksum")
        for row, part in zip(rows, ([producer] if producer else []) + stages):
            row.append(None if part is producer else part.checksum)
    if any(s.measured_at for s in stages):
        header += ["measured_at", "process_cpu_s", "cpu_per_packet_us"]
        for row, part in zip(rows, ([producer] if producer else []) + stages):
            row += [None] * 3 if part is producer else [part.measured_at, part.process_cpu_s, part.cpu_per_packet_us]
    return header, rows


def run_view(result: RunResult) -> list[Any]:
    """The table of one run (a RunResult that ran: its figures exist)."""
    producer, stages = result.producer, result.stages
    assert stages is not None and result.cpu is not None, "an analysed result"
    sources = {p.source: p.sent for p in result.paths or []}
    out = spec_lines(result.spec, sources if len(sources) > 1 else producer.sent if producer else 0)
    main = table(
        "component", "last packet", "received", "reordered (previous)", "reordered (original)", "most ORB threads"
    )
    parts = ([producer] if producer else []) + stages
    for part in parts:
        is_stage = part is not producer
        row = [
            part.name,
            units.duration(part.last_packet_ms if is_stage else part.last_sent_ms),
            part.received if is_stage else part.sent,
        ]
        row += (
            [part.reordered_from_previous, part.reordered_from_original, part.max_server_threads]
            if is_stage
            else [None] * 3
        )
        add_rows(main, [row])
    out += [_line(""), main, _line(RUN_TABLE_LEGEND, MUTED)]
    external = [s for s in stages if s.measured_at]
    for s in external:
        kind = "" if s.kind == "external" else f" ({s.kind})"
        out.append(
            _line(
                f"{s.name}: an external component{kind}, measured at {s.measured_at} (its packets as "
                "they reached that port)",
                MUTED,
            )
        )
    if external:  # what each stage's process costs, beside an external one's
        cpu = table("process CPU", "over the run", "per packet")
        add_rows(
            cpu,
            [
                [s.name, units.duration(s.process_cpu_s * 1e3), units.duration_us(s.cpu_per_packet_us)]
                for s in stages
                if s.process_cpu_s is not None
            ],
        )
        out += [_line(""), cpu]
    if _uses_ordering(result.spec):
        flow = table(
            "component",
            "output reordered",
            "most held",
            "reorder buffer peak",
            "skipped / late / dup.",
            "sender suspended",
            "sends that waited",
            title="ordering and flow",
        )
        for part in parts:
            is_stage = part is not producer
            add_rows(
                flow,
                [
                    [part.name]
                    + (
                        [
                            part.output_reordered_from_previous,
                            _count(part.held_peak),
                            _count(part.reorder_buffer_peak),
                            f"{part.skipped or 0} / {part.late or 0} / {part.duplicates or 0}",
                            _count(part.flow_suspends),
                        ]
                        if is_stage
                        else [None] * 5
                    )
                    + [_count(part.send_stalls)]
                ],
            )
        out += [_line(""), flow, _line(FLOW_LEGEND, MUTED)]
    for s in stages:
        if s.connections:  # fan-in: each connection into it, its own order
            view = table(
                "connection",
                "sent",
                "received",
                "reordered (previous)",
                "reordered (original)",
                title=f"{s.name}, per connection (the counts above are their sum, each stream on its own)",
            )
            add_rows(
                view,
                [
                    [c.id, _count(c.sent), c.received, c.reordered_from_previous, c.reordered_from_original]
                    for c in s.connections
                ],
            )
            out += [_line(""), view]
    out += graph_view(result)
    out.append(
        _line(
            f"floor {units.duration(result.floor_ms)}, ratio {units.ratio(result.overhead_ratio)}, "
            f"foreign CPU {units.percent(result.foreign_cpu_pct)}"
        )
    )
    out += floor_lines(result, FOREIGN_LEGEND)
    out += [_line(line) for line in output_check_lines(stages)]
    for stall in result.stalls or []:
        out.append(
            _line(
                f"STALLED: {stall['component']} held work and finished none for "
                f"{units.duration(stall['for_ms'])}, from {units.duration(stall['at_ms'])} (threshold "
                f"{units.duration(stall['threshold_ms'])}): this run's times are not the pipeline's",
                BAD,
            )
        )
    if result.missing:
        out.append(
            _line(
                f"NOT CLEAN: {result.why_not_clean()}: the stream was cut short, its times and ratio "
                "cover only what arrived",
                BAD,
            )
        )
    if result.refusals:
        out.append(_line(_refusal_line(result, parts), BAD))
        # Beside the table rather than in it: one more column would not fit in 100.
        out.append(_line("refused from peers: " + ", ".join(f"{p.name} {p.refused or 0}" for p in parts)))
    out += [_line(f"warning: {w}", WARN) for w in warnings_of([result], {})]
    latency = latency_rows(result)
    if latency:
        view = table("latency", "packets", "p50", "p90", "p99", "max")
        add_rows(view, latency)
        out += [_line(""), view]
    send = producer.send_us if producer else {}
    if send:
        out.append(
            _line(
                "producer send: "
                + ", ".join(f"{k} {units.duration_us(send[k])}" for k in ("min", "p50", "p90", "p99", "max"))
            )
        )
    if latency or send:
        out.append(_line(LATENCY_LEGEND, MUTED))
    cpu = result.cpu
    out.append(
        _line(
            f"run CPU: user {units.duration(cpu.user_s * 1e3)}, system {units.duration(cpu.system_s * 1e3)}, "
            f"context switches {cpu.voluntary_ctxsw} voluntary / {cpu.involuntary_ctxsw} involuntary"
        )
    )
    if result.network and result.network.emulator_cpu_s is not None:  # set once a run has ended
        out.append(
            _line(
                f"link emulator CPU: {units.duration(result.network.emulator_cpu_s * 1e3)} (on the run's "
                "cores; not counted as foreign)"
            )
        )
    out += [_line(_node_line(node)) for node in result.nodes or []]
    return out


def graph_view(result: RunResult) -> list[Any]:
    """A graph's paths (several: a chain's one is the latency table's end
    to end) and, where a uses port fans out, its connections with their
    fan-out counts (a fan-in alone has its stage's table per connection);
    docs/reference/metrics.md, "Measurement on graphs"."""
    paths, fans_out = result.paths or [], fan_out_ports(result.spec)
    # Shown where a port fans out, or a hop spoke BulkIO (which a reader of
    # the result must not take for scabench's own).
    bulkio = any(h.protocol == "bulkio" for h in result.connections or [])
    hops = (result.connections or []) if fans_out or bulkio else []
    out: list[Any] = []
    if len(paths) > 1:
        view = table("path", "stream", "sent", "arrived", "lost", "dropped", "reordered", "p50", "p99")
        for p in paths:
            lat = p.latency_us
            add_rows(
                view,
                [
                    [f"{p.source} → {p.sink}", p.stream, p.sent, p.arrivals, _count(p.lost), p.dropped, p.reordered]
                    + [units.duration_us(getattr(lat, k)) if lat else None for k in ("p50", "p99")]
                ],
            )
        out += [_line(""), view, _line(PATHS_LEGEND, MUTED)]
    if hops:
        view = table("connection", "protocol", "fan-out", "sent", "received", "dropped", "queue peak", "packets/s")
        for h in hops:
            fan = h.id.split("->")[0] in fans_out
            add_rows(
                view,
                [
                    [
                        h.id,
                        h.protocol or SCABENCH_PROTOCOL,
                        h.fanout if fan else None,
                        _count(h.sent),
                        _count(h.received),
                        _count(h.dropped),
                        _count(h.queue_peak) if h.fanout in ("parallel", "drop") else None,
                        None if h.rate_pps is None else f"{h.rate_pps:,.0f}",
                    ]
                ],
            )
        out += [_line(""), view, _line(CONNECTIONS_LEGEND, MUTED)]
    return out


def output_check_lines(stages: Iterable[StageResult]) -> list[str]:
    """What each sink reported of the samples it received: their sum
    (checksum = true) and the recording it wrote (capture)."""
    lines = []
    for s in stages:
        if s.checksum is not None:
            lines.append(f"{s.name} checksum {s.checksum!r}: the sum of every sample it received, in double")
        if s.capture is not None:
            lines.append(
                f"{s.name} captured every sample it received: {s.capture}.sigmf-data (SigMF, "
                "scabench.read_recording reads it)"
            )
    return lines


def _node_line(node: NodeResult) -> str:
    """A node's CPU and switches (its processes', as it reported them) and
    how its clock was related to the launcher's."""
    plain = node.device == "CF::ExecutableDevice"
    words = (
        f"node {node.name}{' (a plain CF::ExecutableDevice, on this machine)' if plain else ''}: "
        f"CPU user {units.duration(node.user_s * 1e3)}, system "
        f"{units.duration(node.system_s * 1e3)}, {node.context_switches} context switches "
        f"({len(node.processes)} process{'es' if len(node.processes) != 1 else ''}"
        f"{', read in /proc' if node.cpu_from == '/proc' else ''})"
    )
    if plain:
        words += "; clock: this machine's, the launcher's own"
    start = node.clock.start
    if start is not None:
        words += (
            f"; clock {start.offset_ms:+.3f} ms from the launcher's, times within "
            f"{units.duration(node.clock.error_bound_ms)} (round trip {units.duration(start.rtt_ms)})"
        )
    if node.lost:
        words += f"; lost: {node.lost}"
    return words


def figure_legend(figures: Iterable[stats.Figure], said: Sequence[str] = ("ratio",)) -> str:
    """The terms of the figures a table shows, each defined once (one
    "CPU per packet" for every process's), less those another line of the
    view defines (said: the ratio, in LEGEND)."""
    terms = dict.fromkeys((f.term, f.means) for f in figures if f.means and f.term not in said)
    return ". ".join(f"{term}: {means}" for term, means in terms)


def floor_lines(result: RunResult | None, also: str | None = None) -> list[Text]:
    """The legend of floor and ratio (and also, the rest of the line they
    are on), with what the floor of this result leaves out (components that
    declare no work) or that it has none."""
    out = [_line(LEGEND + (f". {also}" if also else ""), MUTED)]
    if result is not None and result.floor_caveat:
        out.append(_line(f"floor: {result.floor_caveat}", MUTED))
    if result is not None and not result.floor_ms:
        out.append(_line(f"floor: {NO_FLOOR}, so no ratio", MUTED))
    return out


def format_run(result: RunResult) -> str:
    return text(run_view(result))


def latency_rows(result: RunResult) -> list[list[Any]]:
    """The latency table's rows (docs/architecture.md, "Metrics"): per stage
    from arrival and from send, then end to end; [] for a result without."""
    rows = []

    def row(label: str, lat: Latency | None) -> None:
        if lat is not None:
            rows.append([label, lat.count] + [units.duration_us(getattr(lat, k)) for k in ("p50", "p90", "p99", "max")])

    for s in result.stages or []:
        row(f"{s.name}: arrival → done", s.latency_in_stage_us)
        row(f"{s.name}: send → done", s.latency_since_send_us)
    row("end to end: send → last done", result.end_to_end_latency_us)
    return rows


def _refusal_line(result: RunResult, parts: Sequence[Any]) -> str:
    """The marker of a run in which ports refused what peers sent."""
    by: dict[Any, Any] = {}
    for part in parts:
        for reason, n in ((part.refused_by if part else None) or {}).items():
            by[reason] = by.get(reason, 0) + n
    detail = ", ".join(f"{reason} {n}" for reason, n in by.items() if n)
    return (
        f"NOT CLEAN: ports refused {result.refusals or 0} packets or signals from peers ({detail}); "
        "see docs/trust-model.md"
    )


def _interval(low: float | None, high: float | None, unit: str, scale: Any = None) -> str:
    return f"{units.figure(low, unit, scale)} … {units.figure(high, unit, scale)}"


def summary_rows(summary: dict[str, stats.Summary], figures: Iterable[stats.Figure] = stats.HEADLINE) -> CsvTable:
    """The figures of K runs, scaled for the terminal: (header, rows)."""
    header = ["figure", "median", "mean ± σ", "min … max", "95 % CI (median)"]
    rows = []
    for f in figures:
        s = summary[f.key]
        if not s.n:
            rows.append([f.label] + [None] * 4)
            continue
        scale = units.time_unit(s.median) if f.unit == "ms" else None
        sigma = units.MISSING if s.stdev is None else units.figure(s.stdev, f.unit, scale)
        rows.append(
            [
                f.label,
                units.figure(s.median, f.unit, scale),
                f"{units.figure(s.mean, f.unit, scale)} ± {sigma}",
                _interval(s.min, s.max, f.unit, scale),
                _interval(s.ci95[0], s.ci95[1], f.unit, scale) if s.ci95 else f"n < {stats.interval_runs()}: none",
            ]
        )
    return header, rows


def benchmark_csv(bench: Benchmark) -> CsvTable:
    """A benchmark's summary as CSV: (header, rows), a row per figure."""
    rows = bench.summary_rows()
    return list(rows[0]), [list(r.values()) for r in rows]


def benchmark_view(bench: Benchmark) -> list[Any]:
    """A benchmark's summary: the spec, how the runs were kept, the headline
    figures, the legend and the warnings."""
    first = bench.runs[0] if bench.runs else None
    packets = first.producer.sent if first and first.producer else None
    out = spec_lines(bench.spec, packets)
    redone = sum((r.attempt or 1) - 1 for r in bench.runs)
    g = bench.guard
    out.append(
        _line(
            f"{len(bench.runs)} run(s)"
            + (f" after {bench.warmup} warm-up" if bench.warmup else "")
            + f", each after a quiet machine (others under {g['quiet_below_pct']:g} % of the cores, waited "
            f"for up to {g['quiet_wait_s']:g} s) and redone (up to {g['max_redos']} times) if others took "
            f"more than {g['redo_above_pct']:g} % or it stalled: {redone} attempt(s) thrown away"
        )
    )
    header, rows = summary_rows(bench.summary(), bench.figures())
    out += [
        _line(""),
        add_rows(table(*header), rows),
        _line(
            f"{figure_legend(bench.figures())}. {SIGMA_LEGEND}. {CI_LEGEND.format(runs=stats.interval_runs())}", MUTED
        ),
        _line(""),
    ]
    if first is not None:
        out.append(_line(f"floor {units.duration(first.floor_ms)}", None))
    out += floor_lines(first)
    out += [_line(f"warning: {w}", WARN) for w in bench.warnings()]
    return out


def format_benchmark(bench: Benchmark) -> str:
    return text(benchmark_view(bench))


def _verdict(c: stats.Comparison) -> str:
    if c.significant is None:
        return "cannot tell"
    return "significant" if c.significant else "not significant"


COMPARE_RULE = (
    "significant: Student's two-sample t-test (pooled variance) rejects equal means at 95 % and the "
    "means differ by more than either side's σ (pyperf's rule)"
)
# compare's verdict where the rule cannot be applied (stats.compare).
CANNOT_TELL = "cannot tell: a side has one run (no spread to judge by) or no value"


@dataclass
class Compared:
    """`scabench compare`: result files named A, B, C ..., and each headline
    figure of every file after the first against the first (A)."""

    names: list  # "A", "B", ...
    files: list  # their paths
    runs: dict  # name: [RunResult]
    warnings: list
    comparisons: dict = field(default_factory=dict)  # (figure key, name): stats.Comparison
    # The figures compared: the headline ones, then each process's CPU per
    # packet (stats.figures_of), over every file's runs.
    figures: tuple = ()

    def __post_init__(self) -> None:
        base = self.names[0]
        self.figures = stats.figures_of([r for n in self.names for r in self.runs[n]])
        for f in self.figures:
            for n in self.names[1:]:
                c = stats.compare([f.of(r) for r in self.runs[base]], [f.of(r) for r in self.runs[n]])
                lacking = _no_floor(f, self.runs[base]) or _no_floor(f, self.runs[n])
                self.comparisons[(f.key, n)] = replace(c, why=lacking) if lacking else c

    def as_dict(self) -> dict[str, Any]:
        return {
            "scabench": version_info(),
            "files": [{"name": n, "path": str(p), "runs": len(self.runs[n])} for n, p in zip(self.names, self.files)],
            "rule": COMPARE_RULE,
            "figures": {
                f.key: {
                    "unit": f.unit,
                    "against": self.names[0],
                    **{n: self.comparisons[(f.key, n)].as_dict() for n in self.names[1:]},
                }
                for f in self.figures
            },
            "warnings": self.warnings,
        }

    def csv(self) -> CsvTable:
        """A row per figure and file compared with A: (header, rows)."""
        header = [
            "figure",
            "unit",
            "a",
            "b",
            "a_n",
            "a_median",
            "a_mean",
            "a_stdev",
            "b_n",
            "b_median",
            "b_mean",
            "b_stdev",
            "ratio",
            "difference",
            "t",
            "p",
            "significant",
        ]
        rows = []
        for f in self.figures:
            for n in self.names[1:]:
                c = self.comparisons[(f.key, n)]
                rows.append(
                    [
                        f.key,
                        f.unit,
                        self.names[0],
                        n,
                        c.a.n,
                        c.a.median,
                        c.a.mean,
                        c.a.stdev,
                        c.b.n,
                        c.b.median,
                        c.b.mean,
                        c.b.stdev,
                        c.ratio,
                        c.difference,
                        c.t,
                        c.p,
                        "" if c.significant is None else c.significant,
                    ]
                )
        return header, rows


def _no_floor(figure: stats.Figure, runs: Sequence[RunResult]) -> str | None:
    """NO_FLOOR for the ratio of runs whose floor is 0 (no declared work, no
    pacing); None otherwise."""
    if figure.key == "overhead_ratio" and runs and all(not r.floor_ms for r in runs):
        return NO_FLOOR
    return None


def compare_view(cmp: "Compared") -> list[Any]:
    """pyperf's layout: a row per figure, a column per file; A's median, then
    each other file's median with its mean over A's and the verdict."""
    base = cmp.names[0]
    rows = []
    for f in cmp.figures:
        medians = {n: stats.describe([f.of(r) for r in cmp.runs[n]]).median for n in cmp.names}
        scale = units.time_unit(medians[base]) if f.unit == "ms" and medians[base] is not None else None
        row = [f.label, _no_floor(f, cmp.runs[base]) or units.figure(medians[base], f.unit, scale)]
        for n in cmp.names[1:]:
            c = cmp.comparisons[(f.key, n)]
            if _no_floor(f, cmp.runs[n]) or _no_floor(f, cmp.runs[base]):
                # No ratio to compare: say why rather than "cannot tell".
                row.append(
                    _no_floor(f, cmp.runs[n]) or f"{units.figure(medians[n], f.unit, scale)} ({base}: {NO_FLOOR})"
                )
                continue
            ratio = "" if c.ratio is None else f"{units.ratio(c.ratio)}×, "  # none over a mean of 0
            row.append(
                Text.assemble(
                    f"{units.figure(medians[n], f.unit, scale)} ({ratio}",
                    (_verdict(c), TITLE if c.significant else ""),
                    ")",
                )
            )
        rows.append(row)
    out: list[Any] = [f"{n}: {p} ({len(cmp.runs[n])} run(s))" for n, p in zip(cmp.names, cmp.files)]
    out += [
        "",
        add_rows(table("figure", *cmp.names), rows),
        "",
        Text(
            f"each figure: the median; beside it, its mean over {base}'s and whether it differs from {base}. "
            + ". ".join([COMPARE_RULE, CANNOT_TELL, SIGMA_LEGEND, figure_legend(cmp.figures), LEGEND]),
            style=MUTED,
        ),
    ]
    out += [Text(f"warning: {w}", style=WARN) for w in cmp.warnings]
    return out


def compare_warnings(
    names: Sequence[str], runs: dict[str, list[RunResult]], own_warnings: dict[str, list[str]]
) -> list[str]:
    """What makes the comparison doubtful: each file's own warnings, one run
    on a side, streams of different lengths, different machines."""
    out = [f"{n}: {w}" for n in names for w in own_warnings[n]]
    single = [n for n in names if len(runs[n]) == 1]
    if single:
        out.append(
            f"{', '.join(single)}: one run, no spread to judge a difference by; "
            "scabench run SPEC --runs K --json gives K"
        )
    sent = {n: sorted({r.producer.sent for r in runs[n] if r.producer}) for n in names}
    if len({tuple(s) for s in sent.values()}) > 1:
        out.append(
            "the files' runs sent different numbers of packets ("
            + "; ".join(f"{n}: {', '.join(map(str, s)) or '–'}" for n, s in sent.items())
            + "): their times do not compare"
        )
    machines = {
        n: {
            (r.environment.get("cpu_model"), r.environment.get("online_cpus"), str(r.spec.get("cores")))
            for r in runs[n]
        }
        for n in names
    }
    if len({m for s in machines.values() for m in s}) > 1:
        out.append(
            "the runs were measured on different machines or cores ("
            + "; ".join(
                f"{n}: " + ", ".join(f"{m[0]}, {m[1]} CPUs, cores {m[2]}" for m in sorted(s, key=str))
                for n, s in machines.items()
            )
            + ")"
        )
    return out

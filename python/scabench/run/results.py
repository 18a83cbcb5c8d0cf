"""What one run gives, typed: RunResult and its parts (docs/architecture.md,
"Result JSON").

as_dict() gives the result JSON's object, keys in the order the file has
them; from_dict() reads one back (a study's kept runs, re-rendered). Which
keys a result may lack is in the fields (scabench/typed.py): optional() ones
are left out while None (only a failed run has "error", only a run on
network hosts has "network"); figure() ones exist once the run's records
were analysed, all of them or none (a run that failed before)."""

from dataclasses import dataclass
from typing import Any, Self

from numpy.typing import ArrayLike

from scabench.run import metrics
from scabench.typed import Typed, figure, flat, from_dict, list_of, optional


@dataclass
class Latency(Typed):
    """A latency distribution over packets, in µs (metrics.latency_summary;
    which span is measured: docs/architecture.md, "Metrics")."""

    count: int  # packets measured
    p50: float
    p90: float
    p99: float
    max: float

    @classmethod
    def of(cls, latency_us: ArrayLike) -> Self | None:
        """From the packets' latencies (µs); None for no packet."""
        summary = metrics.latency_summary(latency_us)
        return cls(**summary) if summary is not None else None


@dataclass
class StageResult(Typed):
    """One stage (a component with an input), from its record file; an
    external component from the record file of the one it feeds
    (`measured_at`)."""

    name: str
    kind: str
    received: int
    last_packet_ms: float | None  # None: it finished no packet
    reordered_from_previous: int
    reordered_from_original: int
    output_reordered_from_previous: int  # in the order it finished packets
    max_server_threads: int | None  # None: an external component (its own ports know)
    distinct_receiving_threads: int | None
    # Reordered from original in the order it finished packets: what a
    # resequencing or queueing port handed on (the counts above are taken at
    # arrival); None in results written before.
    output_reordered_from_original: int | None = optional()
    # Ordering and flow-control counts from the record file's header; None in
    # results written before the runtime counted them.
    reorder_buffer_peak: int | None = optional()
    skipped: int | None = optional()
    late: int | None = optional()
    duplicates: int | None = optional()
    held_peak: int | None = optional()
    flow_suspends: int | None = optional()
    send_stalls: int | None = optional()
    # Packets its output ports gave up unsent: stopped or disconnected while
    # they waited for credits or a resume (records.FLOW_FIELDS).
    unsent: int | None = optional()
    # What its ports refused from peers (docs/trust-model.md): the total and
    # by reason; None in results written before ports counted refusals.
    refused: int | None = optional()
    refused_by: dict | None = optional()
    # Latency per packet (docs/architecture.md, "Metrics"): from its arrival
    # at this stage's port to done here, and from the start of its send at
    # the packet source to done here; None in results written before runs
    # measured latency (and since_send without a single packet source).
    latency_in_stage_us: Latency | None = optional()
    latency_since_send_us: Latency | None = optional()
    # An external component: the port whose records give its figures (its
    # packets as they reached that port, received and last_packet_ms too).
    measured_at: str | None = optional()
    # CPU of the stage's process over the measured window (from start() to
    # the last end of stream), where the stage has a process of its own
    # started by the run, and per packet received.
    process_cpu_s: float | None = optional()
    cpu_per_packet_us: float | None = optional()
    # With more than one connection into it (fan-in): each connection's
    # figures (ConnectionResult), in the spec's order; the stage's own
    # reordering counts are then their sum. None otherwise, and in results
    # written before.
    connections: list | None = optional()
    # What a sink reported at end of stream (docs/architecture.md, "Checking
    # the output"): with checksum = true, the sum of every sample it received,
    # in double, in the order it took them; with capture, the SigMF recording
    # it wrote them to (NAME: NAME.sigmf-data and NAME.sigmf-meta). None
    # otherwise, and in results written before (the sum is then only the text
    # of RunResult.stats[NAME]["checksum"]).
    checksum: float | None = optional()
    capture: str | None = optional()

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        return from_dict(
            cls,
            doc,
            {
                "latency_in_stage_us": Latency.from_dict,
                "latency_since_send_us": Latency.from_dict,
                "connections": list_of(ConnectionResult),
            },
        )


@dataclass
class ConnectionResult(Typed):
    """One connection into a stage that has several (fan-in), from the
    stage's records: each packet's record names the connection it came in
    on. Order is counted within the connection, per stream."""

    id: str  # the spec's connection id, "p1.out->stage1.in"
    sent: int | None  # packets the sending component handled (a source: sent); None: no records
    received: int
    reordered_from_previous: int
    reordered_from_original: int
    # The transport its packets used ("shm", "unix", "tcp" or "collocated":
    # model/transport.py); None in results written before.
    transport: str | None = optional()


@dataclass
class PathResult(Typed):
    """One (source, sink) pair of the waveform graph (model/graph.paths):
    the source's stream as the sink finished it (run/graph_figures.py;
    docs/reference/metrics.md, "Measurement on graphs"). Counted per arrival: a
    sink that two routes reach (a diamond) finishes each packet once per
    route, and each arrival is a sample of the latency."""

    source: str
    sink: str
    stream: int  # the source's stream id, which the records carry
    routes: int  # how many routes lead from source to sink
    sent: int  # packets the source sent
    arrivals: int  # packets of the stream the sink finished (once per route that delivered them)
    delivered: int  # distinct packets of the stream the sink finished
    # Arrivals dropped on purpose by a drop fan-out on the way (per route,
    # as arrivals), and the arrivals missing beyond those: sent times routes
    # less dropped less arrivals; None where a component on the way has no
    # record file to count by.
    dropped: int
    lost: int | None
    # At the sink, in the order it finished them, counted against the
    # source's order within each connection it came in on (a route of a
    # diamond told apart by the connection number), summed.
    reordered: int
    latency_us: Latency | None  # done at the sink minus the start of its send at the source

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        return from_dict(cls, doc, {"latency_us": Latency.from_dict})


@dataclass
class HopResult(Typed):
    """One connection of the graph, in the spec's order: what its sending
    port counted (the sender's `<name>.connections.json`; None without
    one, as from an external component or an older runtime) and what the
    receiving records show of the packets that came in on it."""

    id: str  # "a.out->b.in"
    policy: str  # the policy in short (report/graph.policy_label)
    transport: str
    # What the hop spoke: "scabench" or "bulkio", as the sending port found
    # it at connect (its sidecar), else as the policy says. Absent (None) in
    # results written before hops had a protocol: those spoke "scabench".
    protocol: str | None = optional(kw_only=True)
    fanout: str | None  # the sending port's: sequential, parallel or drop
    sent: int | None
    dropped: int | None  # a drop fan-out's full queue
    unsent: int | None
    queue_peak: int | None
    blocked_ns: int | None
    received: int | None  # records at the receiver with this connection's number; None: no records
    rate_pps: float | None  # received over the span from its first to its last arrival
    # Arrival at the receiver minus done at the sender of the same packet
    # (µs); negative where the sender is done only after its push returned
    # (a call that waits for the receiver).
    latency_us_mean: float | None
    latency_us_p99: float | None
    # A BulkIO hop's receiving port (its sidecar's provides entry; the
    # port's, whoever pushed into it): packets whose T went back in their
    # stream, and packets whose T was no send time (docs/reference/bulkio.md).
    # None on a scabench hop, without a sidecar, and in results written before.
    t_backwards: int | None = optional(kw_only=True)
    t_invalid: int | None = optional(kw_only=True)


@dataclass
class StreamOrder(Typed):
    """One stream's order at one component that records: its arrivals
    counted against the source's order, and the order it finished them."""

    component: str
    stream: int
    received: int
    reordered_from_previous: int
    reordered_from_original: int
    output_reordered_from_original: int


@dataclass
class ProducerResult(Typed):
    """The first packet source: what it sent and how long each send took."""

    name: str
    sent: int
    last_sent_ms: float | None
    send_us: dict  # metrics.send_time_stats: {"min", "p50", ...}; {} if nothing was sent
    send_share_under_us: dict  # {threshold (µs, as text): % of sends faster}
    send_us_all: list  # every send, in order (µs)
    send_stalls: int | None = optional()
    unsent: int | None = optional()  # as StageResult's: not in `sent`
    refused: int | None = optional()  # as StageResult's
    refused_by: dict | None = optional()


@dataclass
class CpuUsage(Typed):
    """The run's CPU: the launcher's count of the hosts' CPU, and their
    rusage at exit, summed."""

    run_cpu_s: float
    user_s: float
    system_s: float
    voluntary_ctxsw: int
    involuntary_ctxsw: int


@dataclass
class NetworkResult(Typed):
    """Network hosts (run/network.py): where each host was, the link, and
    the link emulator's CPU once the run ended."""

    hosts: list  # per host: netns, address, published, node, node_agent
    link: dict  # delay_ms, jitter_ms
    emulator: str
    emulator_cpu_s: float | None = optional()  # counted as the run's own, not foreign
    node_agents_cpu_s: float | None = optional()  # the agents in the namespaces: the run's own too


@dataclass
class ClockProbe(Typed):
    """A node's clock against the launcher's, by the shortest of a few round
    trips to it (NodeDevice.monotonicNs): the node read its clock within the
    round trip, so its offset is known within half of it, whatever the
    delays each way (docs/architecture.md, "Time across nodes")."""

    offset_ms: float  # the node's CLOCK_MONOTONIC minus the launcher's
    bound_ms: float  # |error| of offset_ms: at most this (half the round trip)
    rtt_ms: float

    @classmethod
    def of(cls, probe: dict[str, Any]) -> Self:
        """From the launcher's manifest (ns)."""
        return cls(probe["offset_ns"] / 1e6, probe["bound_ns"] / 1e6, probe["rtt_ns"] / 1e6)


@dataclass
class NodeClock(Typed):
    """How a node's times were put on the launcher's clock: the offset,
    taken linearly between the probe before the stream started and the one
    after it ended. error_bound_ms bounds the error of every time moved so,
    if the two clocks keep a steady rate between the probes; a span between
    two nodes' times is then within the sum of their bounds."""

    start: ClockProbe | None
    end: ClockProbe | None
    error_bound_ms: float | None  # None: no probe, no time moved

    @classmethod
    def of(cls, clock: dict[str, Any]) -> Self:
        start, end = (ClockProbe.of(clock[k]) if k in clock else None for k in ("start", "end"))
        bounds = [p.bound_ms for p in (start, end) if p is not None]
        return cls(start, end, max(bounds) if bounds else None)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        return from_dict(cls, doc, {"start": ClockProbe.from_dict, "end": ClockProbe.from_dict})


@dataclass
class NodeResult(Typed):
    """A node the run placed processes on (docs/architecture.md, "Placement
    on nodes"): its clock against the launcher's, and each process it
    started for the run with the CPU and context switches it reported (its
    last record: the whole process once it has ended), and their sums."""

    name: str
    same_machine: bool  # on the launcher's machine (a network host, a plain CF node): its CPU is the run's own
    published_host: str  # the address its components are reached at
    clock: NodeClock
    processes: list  # per process: pid, program, host, components, running, exit_status, user_s, ...
    user_s: float
    system_s: float
    context_switches: int
    lost: str | None = optional()  # it stopped answering during the run: why
    # What its device is: "scabench::node::NodeDevice" (scabench node), or
    # "CF::ExecutableDevice", a plain one (a REDHAWK GPP) that the launcher
    # drives with CF alone, on its own machine. None in results written before.
    device: str | None = optional()
    # Where its processes' CPU and context switches come from: "node" (its
    # records of them), or "/proc" (a plain node's, this machine's; their
    # exit status is then not known). None in results written before.
    cpu_from: str | None = optional()

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Self:
        """From the launcher's manifest."""
        processes = entry.get("processes", [])
        return cls(
            name=entry["name"],
            same_machine=entry.get("same_machine", False),
            published_host=entry.get("published_host", ""),
            clock=NodeClock.of(entry.get("clock", {})),
            processes=processes,
            user_s=sum(p.get("user_s", 0.0) for p in processes),
            system_s=sum(p.get("system_s", 0.0) for p in processes),
            context_switches=sum(p.get("context_switches", 0) for p in processes),
            lost=entry.get("lost"),
            device=entry.get("device"),
            cpu_from=entry.get("cpu_from"),
        )

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        return from_dict(cls, doc, {"clock": NodeClock.from_dict})


@dataclass
class Timeline(Typed):
    """The first packets of each stream at every recording component, for a
    timeline (report/timeline.py; how the times are worked out:
    run/journeys.py). A lane per component, in data-flow order: {"component",
    "kind", "source" (its records are its sends; absent in results written
    before lanes said so), "tracks" (the threads and roles that worked its packets, by
    name), "spans": one list per packet, [sequence, stream, track (index
    into tracks), arrive_ms, start_ms, send_ms (sending on began; null where
    not seen), done_ms, reordered (0 or 1)], in arrival order}; times in ms
    since the sources' first send."""

    packets: int  # the window: packets numbered below this, in each stream
    lanes: list

    SPAN_FIELDS = ("sequence", "stream", "track", "arrive_ms", "start_ms", "send_ms", "done_ms", "reordered")


@dataclass
class RunResult(Typed):
    """One run of a spec (runner.run_spec); a failed or interrupted run keeps
    what it had: its stages and producer over the packets handled (its other
    figures null)."""

    # The scabench that measured it ({"version", "commit"}): the file's first key.
    scabench: dict | None = optional(kw_only=True)
    status: str  # "ok", "failed" or "interrupted"
    spec: dict  # the resolved spec (Spec.describe())
    environment: dict  # cores, CPU model, kernel, ORB version
    floor_ms: float
    started_at: float  # time.time() at launch
    # What the floor leaves out (model/pipeline.floor_caveat): components that
    # declare no work; None when it counts every one's.
    floor_caveat: str | None = optional()
    network: NetworkResult | None = optional()
    naming: dict | None = optional()  # the run's Naming Service: corbaloc and the waveform's context
    # The launcher's record of each process (pid, cores, components, rusage),
    # with its ORB options, its endpoint's transport and each of its remote
    # hops' ("transport", "hops": runner._with_transports); None if it left no manifest.
    hosts: list | None = optional()
    nodes: list | None = optional()  # NodeResult of each node the run placed processes on
    # The order the launcher started and stopped the components, each with
    # when its call returned (monotonic ns, the clock of the records):
    # {"started": [{"component", "at_ns"}], "stopped": [...]}; None if it left no manifest.
    lifecycle: dict | None = optional()
    overhead_ratio: float | None = figure()  # None if no last stage finished a packet
    # A ratio below 1: which of the floor's assumptions the run broke, in
    # words (model/pipeline.below_floor_why); None otherwise.
    below_floor_why: list | None = optional()
    # Each packet from the start of its send at the packet source to done at
    # the end of the pipeline (docs/architecture.md, "Metrics"): the
    # distribution, and every packet's in sequence order (µs). None in
    # results written before runs measured latency.
    end_to_end_latency_us: Latency | None = optional()
    end_to_end_latency_us_all: list | None = optional()
    foreign_cpu_pct: float | None = figure()
    stages: list | None = figure()  # StageResult, in pipeline order
    producer: ProducerResult | None = figure()  # None (written {}) without a packet source
    cpu: CpuUsage | None = figure()
    window_s: float | None = figure()  # from start() to the last end of stream
    stats: dict | None = figure()  # figures components reported: {component: {key: value}}
    # Stretches in which a component held work and finished none (run/stalls.py).
    stalls: list | None = optional()
    stalled: bool | None = optional()
    # The graph's figures (run/graph_figures.py): every (source, sink) path,
    # every connection, every stream's order at every component that
    # records. None in results written before.
    paths: list | None = optional()
    connections: list | None = optional()
    streams: list | None = optional()
    # The first packets' journeys, for a timeline (Timeline); None in results written before.
    timeline: Timeline | None = optional()
    # Packets or signals the ports refused from peers; and each component
    # that received fewer packets than the ones feeding it handled (less
    # those its reorder buffer counted late): {"component", "sent",
    # "received", "late"} (runner.missing_packets). A run with either is not
    # clean (why_not_clean), and with packets missing its ratio is None: its
    # last packet is not the stream's.
    refusals: int | None = optional()
    missing: list | None = optional()
    clean: bool | None = optional()
    window: dict | None = optional()  # what run_spec's on_start measured
    error: str | None = optional()
    failed_component: str | None = optional()
    # How the campaign's guard kept the run (measure/campaign.py).
    attempt: int | None = optional()
    redone_for_foreign_load_pct: list | None = optional()
    machine_was_quiet: bool | None = optional()

    def why_not_clean(self) -> str | None:
        """Why the run is not clean, in words; None where it is (or was
        never judged: a run that did not finish)."""
        if self.clean is not False:
            return None
        why = [
            f"{m['component']} received {m['received']} of the {m['sent'] - (m['late'] or 0)} packets sent to it"
            for m in self.missing or []
        ]
        if self.refusals:
            why.append(f"ports refused {self.refusals} packets or signals from peers")
        return "; ".join(why) or "not clean"

    @property
    def analysed(self) -> bool:
        """The run's records were read: its figures exist."""
        return self.stages is not None

    def rows(self) -> list[dict[str, Any]]:
        """The run as rows of a table, one per component it measured (the
        packet source first, then the stages in pipeline order): "component",
        "role" ("source" or "stage"), then the part's figures flattened
        (typed.flat: latency_in_stage_us_p50, ...; lists left out).
        pandas.DataFrame(result.rows()) loads them. None of them for a run
        whose records were never read."""
        parts = ([("source", self.producer)] if self.producer is not None else []) + [
            ("stage", s) for s in self.stages or []
        ]
        return [
            {"component": part.name, "role": role, **{k: v for k, v in flat(part.as_dict()).items() if k != "name"}}
            for role, part in parts
        ]

    def process_cpu_per_packet_ms(self) -> dict:
        """{process: its CPU per packet (ms)}, what each hop costs: every
        process the run started (a host, named by its components joined with
        "+", or an external program), its CPU over the measured window
        (the manifest's window_cpu_s) over the packets it handled, the most
        any of its components did (a source's sent, a stage's received).
        {} for a result that has none (never analysed, or no manifest). In
        pipeline order (the packet source's process first)."""
        handled = {s.name: s.received for s in self.stages or []}
        if self.producer is not None:
            handled = {self.producer.name: self.producer.sent, **handled}
        place = {name: i for i, name in enumerate(handled)}
        out = {}
        for host in sorted(
            self.hosts or [],
            key=lambda h: min((place.get(c, len(place)) for c in h.get("components") or []), default=len(place)),
        ):
            members = host.get("components") or []
            packets = max((handled[c] for c in members if handled.get(c)), default=0)
            if host.get("window_cpu_s") is not None and packets:
                out["+".join(members)] = 1e3 * host["window_cpu_s"] / packets
        return out

    def cpu_per_packet_ms(self) -> float | None:
        """The whole run's CPU per packet (ms), what a configuration costs
        besides its time: the CPU of every process over the measured window
        (window_cpu_s, as process_cpu_per_packet_ms takes it), summed, over
        the packets the source sent. The packets sent rather than each
        process's own: the run as one cost per packet put in. None where a
        process did not record its CPU or no packet was sent."""
        cpu = [h.get("window_cpu_s") for h in self.hosts or []]
        sent = self.producer.sent if self.producer is not None else 0
        if not cpu or any(c is None for c in cpu) or not sent:
            return None
        return 1e3 * sum(cpu) / sent

    def as_dict(self) -> dict[str, Any]:
        out = super().as_dict()
        if self.analysed and self.producer is None:
            out["producer"] = {}
        return out

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        return from_dict(
            cls,
            doc,
            {
                "network": NetworkResult.from_dict,
                "nodes": list_of(NodeResult),
                "end_to_end_latency_us": Latency.from_dict,
                "stages": list_of(StageResult),
                "producer": lambda p: ProducerResult.from_dict(p) if p else None,
                "cpu": CpuUsage.from_dict,
                "paths": list_of(PathResult),
                "connections": list_of(HopResult),
                "streams": list_of(StreamOrder),
                "timeline": Timeline.from_dict,
            },
        )

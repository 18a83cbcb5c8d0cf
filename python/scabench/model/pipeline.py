"""What a spec's pipeline must cost at least: the work its stages do per
packet, the pacing of its sources, the link delay on its critical path, and
from these its floor, the least time the hardware allows for the last packet
(docs/architecture.md, "Metrics"). A run's ratio is its last packet over
this floor.

The kinds' knowledge lives here, once: which kinds pace a stream and how
(`period_us`, or a STANAG 4285 frame per packet at `symbol_rate`), which
components declare their work per packet (the stages' `work`/`work_us`, in
C++ and in Python, the tee's and the merge's, the duplex's per path, and an
external component that gives `work_us` among its properties), which do
not (the floor then says it counts only declared work), and what a run can
break of the floor's assumptions (below_floor_why).
"""

import numbers
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scabench.model.catalog import properties_of
from scabench.model.checks import SAMPLE_BYTES
from scabench.model.graph import critical_path, describe_route

if TYPE_CHECKING:
    from scabench.model.spec import Component

if TYPE_CHECKING:
    from scabench.model.spec import Spec

# The kinds that do `work` for `work_us` on each packet.
STAGE_KINDS = ("stage", "py-stage")
# The kinds that only count what reaches them (and checksum it): the floor
# takes their work as none, rather than as unknown.
COUNTING_KINDS = ("sink",)
# The values of a stage's `work` (cpp/components/stage.cpp, components/stage.py).
CPU_WORK, SLEEP_WORK, NO_WORK = "cpu", "sleep", "none"

# A STANAG 4285 frame is 256 symbols, and its data source sends one frame
# per packet (the standard's frame; the waveform's components agree).
S4285_SYMBOLS_PER_FRAME = 256


def property_value(comp: "Component", key: str) -> Any:
    """A component property as the run will see it: the spec's value or the default."""
    return comp.properties.get(key, properties_of(comp)[key]["default"])


def packet_bytes(spec: "Spec") -> int:
    """The largest packet of the run (bytes)."""
    samples = [
        property_value(c, "samples") for c in spec.components if c.external is None and "samples" in properties_of(c)
    ]
    return max(samples or [1]) * SAMPLE_BYTES[spec.sample_type]


def producer_packets(spec: "Spec") -> int:
    return max([property_value(c, "packets") for c in spec.packet_sources()] or [0])


def packets_through(spec: "Spec") -> dict[str, int]:
    """{component: packets it handles}: a packet source its own stream, a
    source without a count none, any other component what every connection
    into it brings (several connections into one port: fan-in adds them).
    A connection carries what its sender handled, or, out of one path of a
    component with several (work_paths: the duplex's `tx_out`), what came
    into that path."""
    return {name: n for (name, path), n in path_packets(spec).items() if path is None}


def path_packets(spec: "Spec") -> dict[tuple[str, str | None], int]:
    """{(component, None): packets it handles (packets_through), and
    (component, path): packets into each of its paths, for a component
    with several (work_paths)}."""
    counted = {c.name for c in spec.packet_sources()}
    out: dict[tuple[str, str | None], int] = {}

    def carried(conn) -> int:
        path = port_path(spec.component(conn.uses[0]), conn.uses[1], "uses")
        return through(conn.uses[0], path)

    def through(name: str, path: str | None = None) -> int:
        if (name, path) not in out:
            if name in counted and path is None:
                out[name, path] = property_value(spec.component(name), "packets")
            else:
                comp = spec.component(name)
                into = [
                    c
                    for c in spec.connections
                    if c.provides[0] == name and (path is None or port_path(comp, c.provides[1], "provides") == path)
                ]
                out[name, path] = sum(carried(c) for c in into)
        return out[name, path]

    for c in spec.components:
        through(c.name)
        for path in work_paths(c):
            if path:
                through(c.name, path)
    return out


def source_period_ms(comp: "Component") -> float:
    """The pacing period of a packet source: `period_us`, or one STANAG 4285
    frame at `symbol_rate`; 0 when it sends as fast as it can."""
    props = properties_of(comp)
    if "period_us" in props:
        return property_value(comp, "period_us") / 1000.0
    if "symbol_rate" in props and property_value(comp, "symbol_rate") > 0:
        return 1000.0 * S4285_SYMBOLS_PER_FRAME / property_value(comp, "symbol_rate")
    return 0.0


def work_paths(comp: "Component") -> list[str]:
    """The paths through a component its declared work is per, by the
    prefix of their work properties: [""] for one work on every packet (a
    stage, a tee, a merge, an external component); a kind that declares
    its work per path under a prefix (the duplex's `tx_work_us` and
    `rx_work_us`) one path per prefix, from its `<prefix>in` to its
    `<prefix>out` ("tx_", "rx_"), in the catalogue's order."""
    if comp.external is not None:
        return [""]
    prefixes = [
        key.removesuffix("work_us")
        for key in properties_of(comp)
        if key.endswith("_work_us") and "." not in key and key.removesuffix("work_us")
    ]
    return prefixes or [""]


def port_path(comp: "Component", port: str, direction: str) -> str | None:
    """The path (work_paths' prefix) a port of a component with several
    paths belongs to; None for a component with one, or a port of none."""
    end = "in" if direction == "provides" else "out"
    return next((p for p in work_paths(comp) if p and port == f"{p}{end}"), None)


def declared_work_ms(comp: "Component", path: str = "") -> tuple[float, float] | None:
    """A component's work per packet on one of its paths (work_paths; the
    one path of most, ""), as its spec declares it: (work, the part of it
    that needs a core), in ms; None where it declares none.

    - a stage kind (C++ or Python), a tee, a merge: `work` and `work_us`,
      the kind's defaults where the spec leaves them; a duplex the same
      under its path's prefix (`tx_work`, `tx_work_us`);
    - an external component: the same keys among its properties, where it
      gives a `work_us` (its program alone knows what it does with them). Its
      work needs a core only where it says `work = "cpu"`: without that, the
      floor, a least time, counts its work_us as time a packet spends in it,
      not as CPU;
    - a counting kind (a sink): none;
    - any other kind (a FIR, the STANAG 4285 blocks): unknown, None."""
    if comp.kind in COUNTING_KINDS:
        return 0.0, 0.0
    kind, us = _declared(comp, f"{path}work"), _declared(comp, f"{path}work_us")
    if not _is_count(us):
        return None
    if kind == NO_WORK:
        return 0.0, 0.0
    return us / 1000.0, (us / 1000.0 if kind == CPU_WORK else 0.0)


def heaviest_work_ms(comp: "Component") -> tuple[float, float] | None:
    """The work of a component's heaviest path (declared_work_ms; its one
    path for most): the most one packet costs it. None where a path
    declares none."""
    works = [declared_work_ms(comp, path) for path in work_paths(comp)]
    if any(w is None for w in works):
        return None
    return max((w for w in works if w is not None), key=lambda w: w[0])


def _is_count(value: object) -> bool:
    # float(): numbers.Real declares no comparison with int, but every Real converts.
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value) >= 0


def working_components(spec: "Spec") -> list[tuple[str, tuple[float, float] | None]]:
    """[(name, heaviest_work_ms or None)] of every component that takes
    packets in (every one but the sources), in pipeline order."""
    sources = set(spec.sources())
    return [(name, heaviest_work_ms(spec.component(name))) for name in spec.pipeline_order() if name not in sources]


def stage_work(spec: "Spec") -> dict:
    """{name: (work ms, CPU ms)} per packet of every component that declares
    work, a counting kind left out, in pipeline order: a component with
    several paths its heaviest path's, the most one packet costs it (what a
    stall or a hang is judged by); the floor counts each path's (path_work)."""
    return {
        name: work
        for name, work in working_components(spec)
        if work is not None and spec.component(name).kind not in COUNTING_KINDS
    }


def path_work(spec: "Spec") -> dict[tuple[str, str | None], tuple[float, float]]:
    """{(name, path): (work ms, CPU ms)} per packet of each path through
    every component of stage_work, in pipeline order: (name, None) for a
    component with one path, (name, prefix) for each of a component with
    several (work_paths)."""
    out = {}
    for name in stage_work(spec):
        comp = spec.component(name)
        for path in work_paths(comp):
            work = declared_work_ms(comp, path)
            assert work is not None  # stage_work holds only components whose every path declares its work
            out[name, path or None] = work
    return out


def undeclared_work(spec: "Spec") -> list:
    """The components whose work the floor cannot count: they declare none."""
    return [name for name, work in working_components(spec) if work is None]


def floor_caveat(spec: "Spec") -> str | None:
    """What the floor leaves out, in words; None when it counts every
    component's work."""
    names = undeclared_work(spec)
    if not names:
        return None
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return (
        f"the floor counts only declared work (work_us); {shown} "
        f"declare{'s' if len(names) == 1 else ''} none, so the ratio includes "
        f"{'its' if len(names) == 1 else 'their'} work"
    )


@dataclass(frozen=True)
class Floor:
    """The floor of a spec's pipeline and its two bounds, each stated
    (floor_parts): the pipeline bound, the busiest stage's or the slowest
    source's period plus one packet's way along the critical path (the
    route through the most declared work, graph.critical_path, and that
    route's link delay); the CPU bound, every packet's CPU work over the
    cores. The floor is the larger."""

    critical_path: list[str]
    path_work_ms: float  # the declared work along the critical path
    pipeline_ms: float
    cpu_ms: float
    cores: int

    @property
    def floor_ms(self) -> float:
        return max(self.pipeline_ms, self.cpu_ms)

    def statement(self) -> str:
        """The two bounds in words, the larger first."""
        pipeline = (
            f"pipeline bound {self.pipeline_ms:,.0f} ms (critical path {describe_route(self.critical_path)}, "
            f"{self.path_work_ms:g} ms of work a packet)"
        )
        cores = f"{self.cores} core{'' if self.cores == 1 else 's'}"
        cpu = f"CPU bound {self.cpu_ms:,.0f} ms (all CPU work over {cores})"
        return ", ".join([pipeline, cpu] if self.pipeline_ms >= self.cpu_ms else [cpu, pipeline])


def floor_parts(spec: "Spec") -> Floor:
    """The floor of the spec's pipeline on its cores and its bounds
    (Floor), over every component that declares its work
    (declared_work_ms). With several sources, each paces its own stream, a
    stage behind a merge handles the packets of every stream it gets, and a
    stage behind a fan-out the packets of each branch. A component with
    several paths (work_paths: the duplex) counts each on its own: on the
    critical path the work of the path the route takes, in the busiest
    stage each path's packets at its work (its paths are served apart), in
    the CPU bound each path's packets at its CPU work."""
    cores = len(spec.cores)
    producers = spec.packet_sources()
    if not producers:
        return Floor([], 0.0, 0.0, 0.0, cores)
    known = path_work(spec)
    route, path_work_ms = _critical_path(spec, known)
    packets = producer_packets(spec)
    period_ms = max(source_period_ms(p) for p in producers)
    pacing_ms = max((property_value(p, "packets") - 1) * source_period_ms(p) for p in producers)
    through = path_packets(spec)
    pipeline, cpu_bound = floor_bounds_ms(
        packets,
        [w for w, _ in known.values()],
        [c for _, c in known.values()],
        period_ms,
        cores,
        route_delay_ms(spec, route),
        stage_packets=[through[key] for key in known],
        pacing_ms=pacing_ms,
        path_work_ms=path_work_ms,
    )
    return Floor(route, path_work_ms, pipeline, cpu_bound, cores)


@dataclass(frozen=True)
class _Vertex:
    name: str


@dataclass(frozen=True)
class _Edge:
    uses: tuple[str, str]
    provides: tuple[str, str]


@dataclass
class PathGraph:
    """The spec's graph with each component of several paths (work_paths)
    split into one vertex per path, named "NAME PREFIX" (a name has no
    space): a route through a duplex takes one of its paths, not both."""

    components: list[_Vertex]
    connections: list[_Edge]
    of: dict[str, tuple[str, str | None]]  # vertex -> (component, path)


def path_graph(spec: "Spec") -> PathGraph:
    """The spec's graph with each component of several paths split into
    one vertex per path (PathGraph): what reaches what through a duplex.
    A vertex of a component with one path is named as the component."""
    of: dict[str, tuple[str, str | None]] = {}

    def vertex(name: str, port: str, direction: str) -> str:
        path = port_path(spec.component(name), port, direction)
        v = name if path is None else f"{name} {path}"
        of.setdefault(v, (name, path))
        return v

    for c in spec.components:
        for path in work_paths(c):
            of.setdefault(c.name if not path else f"{c.name} {path}", (c.name, path or None))
    edges = [
        _Edge(
            (vertex(c.uses[0], c.uses[1], "uses"), c.uses[1]),
            (vertex(c.provides[0], c.provides[1], "provides"), c.provides[1]),
        )
        for c in spec.connections
    ]
    return PathGraph([_Vertex(v) for v in of], edges, of)


def _critical_path(spec: "Spec", known: dict[tuple[str, str | None], tuple[float, float]]) -> tuple[list[str], float]:
    """graph.critical_path over the paths through the components (path_graph),
    each weighing its declared work (path_work): the route as component names."""
    g = path_graph(spec)
    route, work = critical_path(g, lambda v: known.get(g.of[v], (0.0, 0.0))[0])
    return [g.of[v][0] for v in route], work


def floor_of(spec: "Spec") -> float:
    """The floor of the spec's pipeline on its cores (floor_parts)."""
    return floor_parts(spec).floor_ms


def stage_work_ms(spec: "Spec") -> tuple[list[float], list[float]]:
    """Per path of work (path_work: a component's one, each of a duplex's),
    in pipeline order: its work per packet (ms, any kind) and the part of
    it that needs a CPU (sleep does not)."""
    known = path_work(spec).values()
    return [w for w, _ in known], [c for _, c in known]


def below_floor_why(spec: "Spec", stages: list[Any]) -> list:
    """Why a run's last packet came before its floor, in words: each
    assumption of the floor the run broke, from the spec and its measured
    stages (StageResult). The floor assumes that a stage works on one packet
    at a time, that every packet costs its stage work_us, that every packet
    goes through every stage, and that the work runs on the run's cores
    only. A run that broke none of these, but still came in under the floor,
    is said to as such: it would be a defect of the floor."""
    why = []
    cores = len(spec.cores)
    measured = {s.name: s for s in stages or []}
    through = packets_through(spec)
    for name, (work_ms, _) in stage_work(spec).items():
        if not work_ms:
            continue
        comp, stage = spec.component(name), measured.get(name)
        into = [c for c in spec.connections if c.provides[0] == name]
        at_once = getattr(stage, "max_server_threads", None) or 1
        # A duplex's paths are served apart, as the floor has them: one packet at a time each.
        if at_once > len(work_paths(comp)) and cores > 1 and not any(c.policy.worker_depth for c in into):
            why.append(
                f"{name} worked on up to {at_once} packets at once (its ORB threads, no worker) on {cores} "
                "cores, where the floor has a stage work on one packet at a time"
            )
        jitter = _jitter_us(comp)
        if jitter > 0:
            why.append(
                f"{name}'s work varies by up to ±{jitter:g} µs a packet (work_jitter_us), where the floor "
                "takes work_us for every packet"
            )
        if stage is not None and stage.received < through[name]:
            why.append(
                f"{name} had {stage.received} of the {through[name]} packets the floor counts for it "
                "(the others were dropped, skipped or refused)"
            )
        if comp.external is not None and comp.external.ref is not None:
            why.append(
                f"{name} is a component someone else started: its work ran on cores the run does not own, "
                f"beyond the {cores} the floor spreads the CPU work over"
            )
    placed = [name for members in spec.nodes.values() for name in members if name in stage_work(spec)]
    if placed:
        why.append(
            f"{', '.join(placed)} ran on other nodes: their work used cores beyond the {cores} the floor "
            "spreads the CPU work over"
        )
    return why or [
        "no assumption of the floor is seen broken (one packet at a time per stage, work_us for every "
        "packet, every packet through every stage, the run's cores only): a defect of the floor"
    ]


def _declared(comp, key):
    """A property as the run will see it, for any component: an external
    one's from its spec only (None where it does not give it)."""
    if comp.external is not None and comp.kind not in STAGE_KINDS:
        return comp.properties.get(key)
    props = properties_of(comp)
    return property_value(comp, key) if key in props else None


def _jitter_us(comp: "Component") -> float:
    """The most a component's work varies per packet (µs): its
    `work_jitter_us`, the largest of its paths' (work_paths) for a duplex."""
    jitters = [_declared(comp, f"{path}work_jitter_us") for path in work_paths(comp)]
    return max((float(j) for j in jitters if _is_count(j)), default=0.0)


def stage_longest_work_ms(spec: "Spec") -> list[float]:
    """Per component that declares its work, in pipeline order: the longest
    one packet's work may take (ms), its work plus its work_jitter_us, the
    most data-dependent work adds to a packet (a component with no work has
    none to vary). What a run must wait through before calling a quiet
    pipeline stuck."""
    longest = []
    for name, (work_ms, _) in stage_work(spec).items():
        jitter = _jitter_us(spec.component(name))
        longest.append(work_ms + (jitter / 1000.0 if work_ms > 0 else 0.0))
    return longest


def route_delay_ms(spec: "Spec", route: list[str]) -> float:
    """Link delay along a route, with network hosts: each of its
    connections between two processes crosses one emulated link."""
    if spec.network is None:
        return 0.0
    hops = list(zip(route, route[1:]))
    return float(
        sum(
            0 if spec.collocated(conn) else spec.network.delay_ms
            for a, b in hops
            for conn in [next(c for c in spec.connections if (c.uses[0], c.provides[0]) == (a, b))]
        )
    )


def floor_ms(
    packets: int,
    stage_work_ms: list[float],
    cpu_work_ms: list[float],
    producer_period_ms: float,
    cores: int,
    path_delay_ms: float = 0.0,
    stage_packets: list[int] | None = None,
    pacing_ms: float | None = None,
    path_work_ms: float | None = None,
) -> float:
    """The least time the hardware allows for the last packet to leave the
    last stage: the larger of the two bounds of floor_bounds_ms."""
    return max(
        floor_bounds_ms(
            packets,
            stage_work_ms,
            cpu_work_ms,
            producer_period_ms,
            cores,
            path_delay_ms,
            stage_packets,
            pacing_ms,
            path_work_ms,
        )
    )


def floor_bounds_ms(
    packets: int,
    stage_work_ms: list[float],
    cpu_work_ms: list[float],
    producer_period_ms: float,
    cores: int,
    path_delay_ms: float = 0.0,
    stage_packets: list[int] | None = None,
    pacing_ms: float | None = None,
    path_work_ms: float | None = None,
) -> tuple[float, float]:
    """The two bounds of the least time the hardware allows for the last
    packet to leave the last stage: (the pipeline bound: one packet per
    bottleneck period, plus the latency of one packet along the critical
    path; the CPU bound: all CPU work spread over the cores). The floor is
    the larger.

    stage_work_ms: work per packet of each stage on the path (any kind);
    cpu_work_ms: the part of it that needs a CPU (sleep does not);
    path_delay_ms: link delay along the path (network hosts), which one
    packet's latency includes;
    stage_packets: the packets each stage handles (default: `packets` each;
    more behind a merge of several sources);
    pacing_ms: when the sources can have sent their last packet (default:
    (packets - 1) periods);
    path_work_ms: the work along the critical path, the route through the
    most work (default: every stage's, a chain's one route).

    A chain with one source: (N - 1) · max(Wmax, P) + ΣW (+ delay) against
    N · ΣWcpu / C. In general the bottleneck period is the busiest stage's
    (n_s - 1) · W_s or the slowest source's pacing, whichever ends later,
    and a packet's latency the critical path's work."""
    if packets <= 0:
        return 0.0, 0.0
    pacing = (packets - 1) * producer_period_ms if pacing_ms is None else pacing_ms
    if not stage_work_ms:  # no stage of known work (e.g. real DSP): only the pacing bounds it
        return float(pacing + path_delay_ms), 0.0
    counts = stage_packets if stage_packets is not None else [packets] * len(stage_work_ms)
    busiest = max((n - 1) * w for n, w in zip(counts, stage_work_ms))
    latency = sum(stage_work_ms) if path_work_ms is None else path_work_ms
    pipeline = max(busiest, pacing) + latency + path_delay_ms
    cpu = sum(n * c for n, c in zip(counts, cpu_work_ms)) / cores
    return float(pipeline), float(cpu)

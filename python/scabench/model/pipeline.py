"""What a spec's pipeline must cost at least: the work its stages do per
packet, the pacing of its sources, the link delay on its critical path, and
from these its floor, the least time the hardware allows for the last packet
(docs/architecture.md, "Metrics"). A run's ratio is its last packet over
this floor.

The kinds' knowledge lives here, once: which kinds pace a stream and how
(`period_us`, or a STANAG 4285 frame per packet at `symbol_rate`), which
components declare their work per packet (the stages' `work`/`work_us`, in
C++ and in Python, and an external component that gives `work_us` among its
properties), which do not (the floor then says it counts only declared
work), and what a run can break of the floor's assumptions (below_floor_why).
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
    into it brings (several connections into one port: fan-in adds them)."""
    counted = {c.name for c in spec.packet_sources()}
    out = {}

    def through(name):
        if name not in out:
            if name in counted:
                out[name] = property_value(spec.component(name), "packets")
            else:
                out[name] = sum(through(c.uses[0]) for c in spec.connections if c.provides[0] == name)
        return out[name]

    for c in spec.components:
        through(c.name)
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


def declared_work_ms(comp: "Component") -> tuple[float, float] | None:
    """A component's work per packet as its spec declares it: (work, the
    part of it that needs a core), in ms; None where it declares none.

    - a stage kind (C++ or Python): `work` and `work_us`, the kind's
      defaults where the spec leaves them;
    - an external component: the same keys among its properties, where it
      gives a `work_us` (its program alone knows what it does with them). Its
      work needs a core only where it says `work = "cpu"`: without that, the
      floor, a least time, counts its work_us as time a packet spends in it,
      not as CPU;
    - a counting kind (a sink): none;
    - any other kind (a FIR, the STANAG 4285 blocks): unknown, None."""
    if comp.kind in COUNTING_KINDS:
        return 0.0, 0.0
    kind, us = _declared(comp, "work"), _declared(comp, "work_us")
    if not _is_count(us):
        return None
    if kind == NO_WORK:
        return 0.0, 0.0
    return us / 1000.0, (us / 1000.0 if kind == CPU_WORK else 0.0)


def _is_count(value: object) -> bool:
    # float(): numbers.Real declares no comparison with int, but every Real converts.
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value) >= 0


def working_components(spec: "Spec") -> list[tuple[str, tuple[float, float] | None]]:
    """[(name, declared_work_ms or None)] of every component that takes
    packets in (every one but the sources), in pipeline order."""
    sources = set(spec.sources())
    return [(name, declared_work_ms(spec.component(name))) for name in spec.pipeline_order() if name not in sources]


def stage_work(spec: "Spec") -> dict:
    """{name: (work ms, CPU ms)} per packet of every component that declares
    work, a counting kind left out, in pipeline order."""
    return {
        name: work
        for name, work in working_components(spec)
        if work is not None and spec.component(name).kind not in COUNTING_KINDS
    }


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
    stage behind a fan-out the packets of each branch."""
    cores = len(spec.cores)
    producers = spec.packet_sources()
    if not producers:
        return Floor([], 0.0, 0.0, 0.0, cores)
    known = stage_work(spec)
    route, path_work = critical_path(spec, lambda name: known.get(name, (0.0, 0.0))[0])
    packets = producer_packets(spec)
    period_ms = max(source_period_ms(p) for p in producers)
    pacing_ms = max((property_value(p, "packets") - 1) * source_period_ms(p) for p in producers)
    through = packets_through(spec)
    work, cpu = stage_work_ms(spec)
    pipeline, cpu_bound = floor_bounds_ms(
        packets,
        work,
        cpu,
        period_ms,
        cores,
        route_delay_ms(spec, route),
        stage_packets=[through[name] for name in known],
        pacing_ms=pacing_ms,
        path_work_ms=path_work,
    )
    return Floor(route, path_work, pipeline, cpu_bound, cores)


def floor_of(spec: "Spec") -> float:
    """The floor of the spec's pipeline on its cores (floor_parts)."""
    return floor_parts(spec).floor_ms


def stage_work_ms(spec: "Spec") -> tuple[list[float], list[float]]:
    """Per component that declares its work, in pipeline order: its work per
    packet (ms, any kind) and the part of it that needs a CPU (sleep does not)."""
    known = stage_work(spec).values()
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
        if at_once > 1 and cores > 1 and not any(c.policy.worker_depth for c in into):
            why.append(
                f"{name} worked on up to {at_once} packets at once (its ORB threads, no worker) on {cores} "
                "cores, where the floor has a stage work on one packet at a time"
            )
        jitter = _declared(comp, "work_jitter_us")
        if _is_count(jitter) and jitter > 0:
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


def stage_longest_work_ms(spec: "Spec") -> list[float]:
    """Per component that declares its work, in pipeline order: the longest
    one packet's work may take (ms), its work plus its work_jitter_us, the
    most data-dependent work adds to a packet (a component with no work has
    none to vary). What a run must wait through before calling a quiet
    pipeline stuck."""
    longest = []
    for name, (work_ms, _) in stage_work(spec).items():
        jitter = _declared(spec.component(name), "work_jitter_us")
        longest.append(work_ms + (jitter / 1000.0 if work_ms > 0 and _is_count(jitter) else 0.0))
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

"""What a spec's pipeline must cost at least: the work its stages do per
packet, the pacing of its sources, the link delay on its longest path, and
from these its floor, the least time the hardware allows for the last packet
(docs/architecture.md, "Metrics"). A run's ratio is its last packet over
this floor.

The kinds' knowledge lives here, once: which kinds pace a stream and how
(`period_us`, or a STANAG 4285 frame per packet at `symbol_rate`), and which
kinds do a known amount of work per packet (the stages' `work`/`work_us`,
in C++ and in Python).
"""
from scabench.model.catalog import kind_of

# The kinds that do `work` for `work_us` on each packet.
STAGE_KINDS = ("stage", "py-stage")

# A STANAG 4285 frame is 256 symbols, and its data source sends one frame
# per packet (the standard's frame; the waveform's components agree).
S4285_SYMBOLS_PER_FRAME = 256


def property_value(comp, key):
    """A component property as the run will see it: the spec's value or the default."""
    return comp.properties.get(key, kind_of(comp)["properties"][key]["default"])


def producer_packets(spec):
    return max([property_value(c, "packets") for c in spec.packet_sources()] or [0])


def packets_through(spec):
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



def source_period_ms(comp):
    """The pacing period of a packet source: `period_us`, or one STANAG 4285
    frame at `symbol_rate`; 0 when it sends as fast as it can."""
    props = kind_of(comp)["properties"]
    if "period_us" in props:
        return property_value(comp, "period_us") / 1000.0
    if "symbol_rate" in props and property_value(comp, "symbol_rate") > 0:
        return 1000.0 * S4285_SYMBOLS_PER_FRAME / property_value(comp, "symbol_rate")
    return 0.0


def floor_of(spec):
    """The floor of the spec's pipeline on its cores (floor_ms). With
    several sources, each paces its own stream, and a stage behind a merge
    handles the packets of every stream it gets."""
    producers = spec.packet_sources()
    if not producers:
        return 0.0
    packets = producer_packets(spec)
    period_ms = max(source_period_ms(p) for p in producers)
    pacing_ms = max((property_value(p, "packets") - 1) * source_period_ms(p) for p in producers)
    work, cpu = stage_work_ms(spec)
    through = packets_through(spec)
    counts = [through[n] for n in spec.pipeline_order() if spec.component(n).kind == "stage"]
    return floor_ms(packets, work, cpu, period_ms, len(spec.cores), path_delay_ms(spec), stage_packets=counts,
                    pacing_ms=pacing_ms)


def stage_work_ms(spec):
    """Per stage in pipeline order: its work per packet (ms, any kind) and
    the part of it that needs a CPU (sleep does not)."""
    work, cpu = [], []
    for name in spec.pipeline_order():
        comp = spec.component(name)
        if comp.kind not in STAGE_KINDS:
            continue
        kind, ms = property_value(comp, "work"), property_value(comp, "work_us") / 1000.0
        work.append(0.0 if kind == "none" else ms)
        cpu.append(ms if kind == "cpu" else 0.0)
    return work, cpu


def stage_longest_work_ms(spec) -> list[float]:
    """Per stage in pipeline order: the longest one packet's work may take
    (ms): its work plus its work_jitter_us, the most data-dependent work adds
    to a packet (a stage with no work has none to vary). What a run must wait
    through before calling a quiet pipeline stuck."""
    stages = [spec.component(n) for n in spec.pipeline_order() if spec.component(n).kind in STAGE_KINDS]
    work, _ = stage_work_ms(spec)
    return [w + property_value(c, "work_jitter_us") / 1000.0 if w > 0 else 0.0 for c, w in zip(stages, work)]


def path_delay_ms(spec):
    """Link delay on the longest path from a source, with network hosts:
    every connection between two processes crosses one emulated link."""
    if spec.network is None:
        return 0.0
    longest = {}
    for name in reversed(spec.pipeline_order()):
        longest[name] = max((longest.get(c.provides[0], 0) + (0 if spec.collocated(c) else spec.network.delay_ms)
                             for c in spec.connections if c.uses[0] == name), default=0)
    return float(max((longest[s] for s in spec.sources()), default=0))



def floor_ms(packets, stage_work_ms, cpu_work_ms, producer_period_ms, cores, path_delay_ms=0.0,
             stage_packets=None, pacing_ms=None):
    """The least time the hardware allows for the last packet to leave the
    last stage: the pipeline bound (one packet per bottleneck period, plus the
    latency of one packet through every stage) or the CPU bound (all CPU work
    spread over the cores), whichever is larger.

    stage_work_ms: work per packet of each stage on the path (any kind);
    cpu_work_ms: the part of it that needs a CPU (sleep does not);
    path_delay_ms: link delay along the path (network hosts), which one
    packet's latency includes;
    stage_packets: the packets each stage handles (default: `packets` each;
    more behind a merge of several sources);
    pacing_ms: when the sources can have sent their last packet (default:
    (packets - 1) periods).

    With one source: (N - 1) · max(Wmax, P) + ΣW (+ delay) against N · ΣWcpu / C.
    In general the bottleneck period is the busiest stage's (n_s - 1) · W_s
    or the slowest source's pacing, whichever ends later."""
    if packets <= 0:
        return 0.0
    pacing = (packets - 1) * producer_period_ms if pacing_ms is None else pacing_ms
    if not stage_work_ms:  # no stage of known work (e.g. real DSP): only the pacing bounds it
        return float(pacing + path_delay_ms)
    counts = stage_packets if stage_packets is not None else [packets] * len(stage_work_ms)
    busiest = max((n - 1) * w for n, w in zip(counts, stage_work_ms))
    pipeline = max(busiest, pacing) + sum(stage_work_ms) + path_delay_ms
    cpu = sum(n * c for n, c in zip(counts, cpu_work_ms)) / cores
    return float(max(pipeline, cpu))

"""What `scabench link-delay`'s runs mean: the model of each strategy, the
rows of the report by link delay, and the headline (each strategy's ratio to
the floor beside the model's). Functions of the kept results and of the
campaign's configurations: nothing here runs anything; measure.py runs the
campaign."""

from dataclasses import dataclass, fields
from typing import Any

from scabench.measure.campaign import CampaignEntry, Spread, spread
from scabench.model.pipeline import stage_work_ms
from scabench.typed import optional


def model_ms(strategy, packets, stage_work_ms, cores, delay_ms, credits=0):
    """Predicted time of the last packet at the last stage (ms), as a range
    (best, worst).

    Every stage needs its work W_i of CPU per packet, so the pipeline cannot
    move faster than one packet per max(W_max, sum(W)/C) on C cores (7.5 ms
    for the paper's 3 x 5 ms on 2 cores). Two-way + worker: a forwarding
    stage computes, then waits a round trip 2d for the next stage to accept
    the packet. If the stages take turns, computing costs W of wall time and
    a packet moves every W + 2d (best); if the handoffs line them up so that
    all compute at once and then all wait, the S stages share C cores and
    computing takes W*S/C, so a packet moves every W*S/C + 2d (worst).
    Credits: a sender may be w packets ahead of the acknowledgements, which
    come back every w/4 packets and a delay d later, so it stalls only if
    w/4 packets and a round trip take longer than w packet periods. Either
    way the last packet then crosses the pipeline: sum(W) plus one d a hop."""
    work_max, work_sum, stages = max(stage_work_ms), sum(stage_work_ms), len(stage_work_ms)
    shared = work_sum / min(cores, stages)
    best = worst = max(work_max, shared)
    if strategy == "twoway-worker":
        best = max(best, work_max + 2 * delay_ms)
        worst = max(worst, work_max * max(1.0, stages / cores) + 2 * delay_ms)
    elif strategy == "credits" and credits > 0:
        best = worst = max(best, (2 * delay_ms + work_max) / (credits - credits / 4))
    tail = work_sum + stages * delay_ms
    return (packets - 1) * best + tail, (packets - 1) * worst + tail


@dataclass
class LinkDelayEntry(CampaignEntry):
    """A campaign entry with its configuration's model (add_models), kept in
    results.json after the summary."""

    model_ms: list | None = optional()  # the model's [best, worst] time of the last packet (ms)
    cpu_bound_ms: float | None = optional()  # the floor's CPU bound: all stage work over the cores

    @classmethod
    def of(cls, entry):
        """A campaign's entry as one of these, without its model yet."""
        return cls(**{f.name: getattr(entry, f.name) for f in fields(entry)})


@dataclass
class StrategyFigures:
    """One strategy at one link delay, as the report shows it."""

    ratio: Spread  # time of the last packet over the floor
    model_ratio: list  # the model's [best, worst] over the floor
    ratio_with_emulator: Spread | None  # over a floor that carries the emulator's CPU; None on loopback
    last_ms: float  # median time of the last packet
    output_reordered: int  # most outputs out of order at any stage
    emulator_cpu_s: float | None
    cpu_s: float
    held_peak: int  # most packets a port held in any run


@dataclass
class DelayRow:
    """One row of the report: both strategies at one link delay."""

    delay_ms: float | None  # None: loopback, no emulator
    twoway_worker: StrategyFigures | None = None
    credits: StrategyFigures | None = None
    twoway_over_credits: float | None = None  # their times of the last packet, where both ran


def _delay(entry):
    net = entry.config.network
    return None if net is None else net.get("delay_ms", 0)


def _model_and_cpu_bound(config, packets):
    """The configuration's model range, and the floor's CPU bound (all stage
    CPU work spread over the cores)."""
    spec = config.load(packets)
    work, cpu = stage_work_ms(spec)
    credits = max((c.policy.credits for c in spec.connections if c.policy.flow == "credits"), default=0)
    delay = spec.network.delay_ms if spec.network else 0
    model = model_ms(config.group, packets, work, len(spec.cores), delay, credits)
    return model, packets * sum(cpu) / len(spec.cores)


def add_models(entries, campaign, packets):
    """The entries as LinkDelayEntry, each with its model range and CPU bound
    from its configuration; done again when a report is rewritten, so a
    corrected model needs no rerun."""
    configs = {c.name: c for c in campaign.configs}
    out = {}
    for name, e in entries.items():
        e = e if isinstance(e, LinkDelayEntry) else LinkDelayEntry.of(e)
        if name in configs:
            model, e.cpu_bound_ms = _model_and_cpu_bound(configs[name], packets)
            e.model_ms = list(model)
        out[name] = e
    return out


def rows_by_delay(doc):
    """{delay (None: loopback): {strategy: entry}}, in the order of the campaign."""
    out: dict[Any, dict[str, Any]] = {}
    for e in doc["configs"].values():
        if e.summary:
            out.setdefault(_delay(e), {})[e.config.group] = e
    return out


def _ratio_with_emulator(entry):
    """Ratio to a floor whose CPU bound also carries the link emulator's CPU:
    the emulator runs on the pipeline's cores, which a real network would
    leave to the pipeline. None on loopback."""
    values = []
    for r in entry.runs:
        emulator_s = r.network.emulator_cpu_s if r.network else None
        last = r.stages[-1].last_packet_ms
        if emulator_s is None or not last:
            return None
        cores = len(r.spec["cores"])
        floor = max(r.floor_ms, entry.cpu_bound_ms + 1000.0 * emulator_s / cores)
        values.append(last / floor)
    return spread(values)


def _figures(entry):
    s = entry.summary
    return StrategyFigures(
        ratio=s.overhead_ratio,
        model_ratio=[m / s.floor_ms for m in entry.model_ms],
        ratio_with_emulator=_ratio_with_emulator(entry),
        last_ms=s.stages[-1].last_packet_ms.median,
        output_reordered=int(max(st.output_reordered_from_previous.max for st in s.stages)),
        emulator_cpu_s=s.emulator_cpu_s.median,
        cpu_s=s.cpu_s.median,
        held_peak=max((st.held_peak or 0 for r in entry.runs for st in r.stages), default=0),
    )


def headline(doc):
    """One DelayRow per delay: both strategies' ratio to the floor, the
    model's, and how much slower two-way + worker is."""
    rows = []
    for delay, by in rows_by_delay(doc).items():
        tw, cr = by.get("twoway-worker"), by.get("credits")
        row = DelayRow(delay, _figures(tw) if tw else None, _figures(cr) if cr else None)
        if row.twoway_worker and row.credits:  # both measured
            row.twoway_over_credits = row.twoway_worker.last_ms / row.credits.last_ms
        rows.append(row)
    return rows

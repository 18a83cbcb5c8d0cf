"""What `scabench link-delay`'s runs mean: the model of each strategy, the
rows of the report by link delay, and the headline (each strategy's ratio to
the floor beside the model's). Functions of the kept results and of the
campaign's configurations: nothing here runs anything; measure.py runs the
campaign."""
from scabench.measure.campaign import spread
from scabench.model.pipeline import stage_work_ms


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


def _delay(entry):
    net = entry["config"].get("network")
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
    """Each entry's model range and CPU bound, from its configuration; done
    again when a report is rewritten, so a corrected model needs no rerun."""
    configs = {c.name: c for c in campaign.configs}
    for name, e in entries.items():
        if name in configs:
            model, cpu_bound = _model_and_cpu_bound(configs[name], packets)
            e["model_ms"], e["cpu_bound_ms"] = list(model), cpu_bound


def rows_by_delay(doc):
    """{delay (None: loopback): {strategy: entry}}, in the order of the campaign."""
    out = {}
    for e in doc["configs"].values():
        if e.get("summary"):
            out.setdefault(_delay(e), {})[e["config"]["group"]] = e
    return out


def _ratio_with_emulator(entry):
    """Ratio to a floor whose CPU bound also carries the link emulator's CPU:
    the emulator runs on the pipeline's cores, which a real network would
    leave to the pipeline. None on loopback."""
    values = []
    for r in entry["runs"]:
        emulator_s = r.network.emulator_cpu_s if r.network else None
        last = r.stages[-1].last_packet_ms
        if emulator_s is None or not last:
            return None
        cores = len(r.spec["cores"])
        floor = max(r.floor_ms, entry["cpu_bound_ms"] + 1000.0 * emulator_s / cores)
        values.append(last / floor)
    return spread(values)


def headline(doc):
    """One row per delay: both strategies' ratio to the floor, the model's, and
    how much slower two-way + worker is."""
    rows = []
    for delay, by in rows_by_delay(doc).items():
        tw, cr = by.get("twoway-worker"), by.get("credits")
        row = {"delay_ms": delay}
        for key, e in (("twoway_worker", tw), ("credits", cr)):
            if e is None:
                continue
            s = e["summary"]
            row[key] = {"ratio": s["overhead_ratio"], "model_ratio": [m / s["floor_ms"] for m in e["model_ms"]],
                        "ratio_with_emulator": _ratio_with_emulator(e),
                        "last_ms": s["stages"][-1]["last_packet_ms"]["median"],
                        "output_reordered": int(max(st["output_reordered_from_previous"]["max"] for st in s["stages"])),
                        "emulator_cpu_s": s.get("emulator_cpu_s", {}).get("median"),
                        "cpu_s": s["cpu_s"]["median"],
                        "held_peak": max((st.held_peak or 0 for r in e["runs"] for st in r.stages), default=0)}
        if tw and cr:
            row["twoway_over_credits"] = row["twoway_worker"]["last_ms"] / row["credits"]["last_ms"]
        rows.append(row)
    return rows

"""Synthetic campaign entries for the paper's claims: RunResults like the
runner's (runner.run_spec), summarised by the real campaign.summarise."""

import copy
from pathlib import Path

import numpy as np

from scabench.measure.campaign import CampaignEntry, Config
from scabench.run import metrics
from scabench.run.results import ConnectionResult, CpuUsage, Latency, ProducerResult, RunResult, StageResult
from scabench.run.runner import SEND_THRESHOLDS_US


def run(last, prev=(0, 0, 0), orig=None, floor=7500.0, sends=None, threads=(1, 1, 1), latency=None, connections=None):
    """latency: every packet's end-to-end latency (µs); None, as in results
    written before runs measured it. connections: (previous, original)
    reordered per connection into stage1 from producer, producer2, ...: a
    fan-in run, its stage1 counts their sum."""
    orig = prev if orig is None else orig
    sends = np.asarray(sends if sends is not None else [50.0] * 1000, dtype=float)
    stages = [
        StageResult(
            name=f"stage{i + 1}",
            kind="stage",
            last_packet_ms=float(t),
            received=1000,
            reordered_from_previous=int(p),
            reordered_from_original=int(o),
            output_reordered_from_previous=int(p),
            max_server_threads=int(th),
            distinct_receiving_threads=int(th),
        )
        for i, (t, p, o, th) in enumerate(zip(last, prev, orig, threads))
    ]
    if connections:
        names = ["producer"] + [f"producer{k + 1}" for k in range(1, len(connections))]
        stages[0].connections = [
            ConnectionResult(
                id=f"{n}.out->stage1.in", sent=1000, received=1000, reordered_from_previous=p, reordered_from_original=o
            )
            for n, (p, o) in zip(names, connections)
        ]
        stages[0].reordered_from_previous = sum(p for p, _ in connections)
        stages[0].reordered_from_original = sum(o for _, o in connections)
    return RunResult(
        status="ok",
        spec={},
        environment={},
        floor_ms=floor,
        started_at=0.0,
        hosts=[],
        overhead_ratio=last[-1] / floor,
        foreign_cpu_pct=1.0,
        stages=stages,
        producer=ProducerResult(
            name="producer",
            sent=int(sends.size),
            last_sent_ms=float(last[0]) - 5,
            send_us=metrics.send_time_stats(sends),
            send_share_under_us=metrics.share_under(sends, SEND_THRESHOLDS_US),
            send_us_all=sends.tolist(),
        ),
        cpu=CpuUsage(run_cpu_s=15.5, user_s=15.0, system_s=0.5, voluntary_ctxsw=0, involuntary_ctxsw=0),
        window_s=last[-1] / 1000,
        stats={},
        end_to_end_latency_us=Latency.of(latency) if latency is not None else None,
        end_to_end_latency_us_all=list(latency) if latency is not None else None,
    )


def entry(config_id, setup, runs, cores=None, group="table1"):
    cores = cores or ([0, 1] if setup == "multicore" else [0])
    config = Config(
        config_id,
        group,
        Path(f"{config_id}.toml"),
        setup,
        f"{len(cores)} core{'s' if len(cores) > 1 else ''}",
        cores,
        title=config_id,
    )
    return CampaignEntry(config, runs, []).summarise()


PACED = [4.0] * 900 + [20000.0] * 100  # one-way producer paced by socket buffers
PIPELINE = [15100.0] * 1000  # two-way producer waiting for 3 stages
FAST = [40.0] * 950 + [7000.0] * 50  # two-way + worker, queue has room


def world():
    """A 2-core machine where every claim of the paper holds."""
    mc, sc = 7500.0, 15000.0
    spec = {
        ("exp1", "multicore"): run([7550, 7580, 7600], (12, 400, 900), (9, 500, 920), mc, PACED, (12, 3, 3)),
        ("exp1", "singlecore"): run([15100, 15150, 15200], (400, 500, 600), (900, 900, 900), sc, PACED, (20, 5, 5)),
        ("exp2", "multicore"): run([7560, 7590, 7610], (5, 100, 300), (5, 150, 400), mc),
        ("exp2", "singlecore"): run([15110, 15160, 15210], (300, 350, 400), (700, 700, 700), sc),
        ("exp3", "multicore"): run([7600, 7620, 7650], (11, 11, 11), (500, 500, 500), mc, FAST),
        ("exp3", "singlecore"): run([15200, 15210, 15220], (0, 0, 0), (0, 0, 0), sc, FAST),
        ("exp4", "multicore"): run([7600, 7620, 7650], floor=mc),
        ("exp4", "singlecore"): run([15200, 15210, 15220], floor=sc),
        ("exp5", "multicore"): run([15500, 15500, 15500], floor=mc, sends=PIPELINE),
        ("exp5", "singlecore"): run([15200, 15200, 15200], floor=sc, sends=PIPELINE),
        ("exp6", "multicore"): run([7650, 7680, 7700], floor=mc, sends=FAST),
        ("exp6", "singlecore"): run([15250, 15260, 15280], floor=sc, sends=FAST),
        ("exp1-collocated", "multicore"): run([15300, 15300, 15300], floor=mc),
        ("exp3-collocated", "multicore"): run([7600, 7620, 7650], floor=mc),
        ("exp6-collocated", "multicore"): run([7600, 7620, 7650], floor=mc),
        ("exp5-pinned", "multicore"): run([15200, 15200, 15200], floor=mc, sends=PIPELINE),
        ("exp1-single-thread-poa", "multicore"): run([7550, 7580, 7600], (3, 3, 3), (2, 2, 2), mc),
        ("exp1-single-thread-poa-two-senders", "multicore"): run(
            [15050, 15080, 15100], (0, 3, 3), floor=15000.0, threads=(4, 1, 1), connections=[(2, 2), (1, 0)]
        ),
        ("exp6-deep-queue", "multicore"): run([7650, 7680, 7700], floor=mc, sends=FAST),
        ("sync-target", "multicore"): run([15400, 15400, 15400], floor=mc),
        ("sync-server-worker", "multicore"): run([7660, 7690, 7710], floor=mc),
        ("sync-none-worker", "multicore"): run([7660, 7690, 7710], (2, 2, 2), floor=mc),
    }
    return {f"{k[0]}@{k[1]}": entry(k[0], k[1], [v, copy.deepcopy(v), copy.deepcopy(v)]) for k, v in spec.items()}


def replace(entries, name, runs):
    """A copy of entries where `name` has the given runs."""
    out = dict(entries)
    old = entries[name].config
    out[name] = entry(old.id, old.setup, runs, cores=old.cores, group=old.group)
    return out

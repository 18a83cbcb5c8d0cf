"""`scabench peers --grain`: the peers' pipeline at every grain.

The pipeline of `scabench peers` (a producer and 3 stages, each doing the
same CPU work per packet) at each point of a grid: work per packet (5 ms
down to none) by packet size (16 to 65,536 doubles). Every peer of
catalogue.GRAIN_PEERS runs every point once a round; rounds are interleaved
(round 1 runs every point on every peer, round 2 again), and within a round
the peers of one point run one after the other, so that their ratio to plain
threads compares runs made under the same load. Every run goes through the
one guard (measure/guard.py), as `scabench peers` does.

A point's packet count comes from grain_analysis.packets_for (a run long
enough that the hand-offs decide it, short enough for 2 cores), unless
--packets gives one count for all. results.json is written after every
run; report.md, report.html and the plot at the end."""

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scabench import units
from scabench.console import Progress
from scabench.errors import RunError, ScabenchError
from scabench.measure.campaign import Measure
from scabench.measure.guard import Guard, measure_or_record_failure
from scabench.measure.repeat import flaw_of
from scabench.model.load import load_spec
from scabench.model.overrides import Overrides, apply_overrides
from scabench.model.pipeline import floor_of
from scabench.paths import experiments_dir
from scabench.report.results_file import read_result, write_json
from scabench.run.environment import describe_environment
from scabench.run.runner import run_spec
from scabench.studies.peers import catalogue
from scabench.studies.peers.analysis import pipeline_of, row_of_program, row_of_run
from scabench.studies.peers.grain_analysis import (
    QUICK_SAMPLES,
    QUICK_WORK_US,
    SAMPLES,
    WORK_US,
    packets_for,
    summarise_points,
    work_label,
)
from scabench.studies.peers.grain_render import write_grain_report
from scabench.studies.peers.measure import REDO_BUDGET, run_program_peer

PRODUCER = "producer"


def _overrides(base, cores: list[int], packets: int, samples: int, work_us: int, peer=None) -> Overrides:
    """The one spec change of a point: packets, cores, the producer's
    samples, every stage's work; a scabench peer's transport or placement."""
    stages = [c.name for c in base.components if c.name != PRODUCER]
    return Overrides(
        packets=packets,
        cores=cores,
        properties={PRODUCER: {"samples": samples}, **{s: {"work_us": work_us} for s in stages}},
        transport=peer.transport if peer else None,
        collocated=peer.collocated if peer else False,
    )


WHERE = {"packets": "--packets", "properties": "--grain-work/--grain-sizes", "transport": "peer", "collocated": "peer"}


def _spec(spec, cores, packets, samples, work_us, peer=None):
    """`spec` at one point of the grid (and as `peer` runs it, if given)."""
    return apply_overrides(spec, _overrides(spec, cores, packets, samples, work_us, peer), WHERE)


def _pipeline(point: dict[str, Any]) -> dict[str, int]:
    """A point's pipeline (analysis.pipeline_of's keys)."""
    return {k: point[k] for k in ("packets", "samples", "stages", "work_us")}


def _measure_once(peer, point: dict[str, Any], cores: list[int]) -> tuple[dict[str, Any], dict[str, Any]]:
    floor_ms = point["floor_ms"] or float("nan")  # no floor without work: the ratio is no figure then
    if peer.is_program:
        output = run_program_peer(peer, _pipeline(point), cores, max(point["floor_ms"], 1000.0))
        try:
            row = row_of_program(output, floor_ms)
        except ValueError as exc:
            raise RunError(f"{peer.id}: {exc}", component=peer.id) from None
        return row, {}
    spec = _spec(load_spec(peer.spec), cores, point["packets"], point["samples"], point["work_us"], peer)
    result = run_spec(spec)
    hops = sorted({c["transport"] for c in result.spec.get("connections", [])})
    return row_of_run(result, floor_ms, point["packets"]), {"hops": hops, "result": result}


def run_grain(
    out_dir: str | os.PathLike,
    cores: list[int],
    quick: bool = False,
    runs: int | None = None,
    packets: int | None = None,
    only: list[str] | None = None,
    work_us: Sequence[int] | None = None,
    samples: Sequence[int] | None = None,
    quiet_wait_s: float | None = None,
    max_redos: int | None = None,
    log: Callable[[str], None] = print,
    progress_stream=None,
) -> dict[str, Any]:
    """Measures every installed peer at every point of the grid, interleaved,
    and writes the report; returns the result document."""
    measure = Measure()
    runs = runs or (1 if quick else 2)
    work_us = tuple(work_us or (QUICK_WORK_US if quick else WORK_US))
    samples = tuple(samples or (QUICK_SAMPLES if quick else SAMPLES))
    peers = catalogue.select(only, catalogue.GRAIN_PEERS)
    base = load_spec(catalogue.EXP6)
    points: list[dict[str, Any]] = []
    for w in work_us:
        for s in samples:
            n = packets or (measure.quick_packets if quick else packets_for(w, s))
            at_point = _spec(base, cores, n, s, w)
            # The point's pipeline as the program peers take it: packets, samples, stages, work_us.
            points.append({**pipeline_of(at_point), "floor_ms": floor_of(at_point), "peers": {}})
    for peer in peers:  # every scabench peer's spec takes every point before anything runs
        if not peer.is_program:
            for p in points:
                spec = _spec(load_spec(peer.spec), cores, p["packets"], p["samples"], p["work_us"], peer)
                if pipeline_of(spec) != _pipeline(p):
                    raise ScabenchError(f"{peer.spec}: its pipeline differs from {catalogue.EXP6}'s")
    settings = replace(measure.guard_settings(), redo_budget=REDO_BUDGET)
    if quiet_wait_s is not None:
        settings = replace(settings, quiet_wait_s=quiet_wait_s)
    if max_redos is not None:
        settings = replace(settings, max_redos=max_redos)
    out = Path(out_dir)
    started = time.monotonic()
    entries = {}
    for peer in peers:
        reason = catalogue.missing_reason(peer)
        entries[peer.id] = {
            "title": peer.title,
            "how": peer.how,
            "kind": "program" if peer.is_program else "scabench",
            "skipped": reason,
        }
        if reason:
            log(f"{peer.id}: skipped: {reason}")
    doc: dict[str, Any] = {
        "status": "partial",
        "meta": {
            "quick": quick,
            "runs": runs,
            "cores": cores,
            "grid": {"work_us": list(work_us), "samples": list(samples)},
            "pipeline_spec": str(catalogue.EXP6.relative_to(experiments_dir().parent)),
            "guard": {k: v for k, v in asdict(settings).items() if k != "retry_errors"},
            "started_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "loadavg_start": list(os.getloadavg()),
            "environment": describe_environment(cores),
        },
        "peers": entries,
        "points": points,
    }

    def save(status: str = "partial") -> Path:
        doc["status"] = status
        return write_json(doc, out / "results.json")

    active = [p for p in peers if not entries[p.id]["skipped"]]
    total = runs * len(active) * len(points)
    seconds = sum(max(p["floor_ms"], 100.0) / 1000 * 1.5 + 1.5 for p in points) * len(active) * runs
    log(
        f"{len(active)} peer(s) x {len(points)} point(s) x {runs} round(s) = {total} runs on cores {cores}; "
        f"about {units.wall_time(seconds)} on a quiet machine"
    )
    with Progress(seconds, "peers --grain", progress_stream) as progress:
        guard = Guard(settings, cores=cores, log=progress.say)
        n = 0
        for round_no in range(1, runs + 1):
            for point in points:
                each_s = max(point["floor_ms"], 100.0) / 1000 * 1.5 + 1.5
                for peer in active:
                    n += 1
                    label = (
                        f"[{n}/{total}] round {round_no}/{runs} {work_label(point['work_us'])} "
                        f"x {point['samples']} {peer.id}"
                    )
                    _one_run(doc, point, peer, cores, round_no, guard, progress, each_s, label, save)
    summarise_points(doc)
    doc["meta"]["loadavg_end"] = list(os.getloadavg())
    doc["meta"]["elapsed_s"] = time.monotonic() - started
    doc["meta"]["finished_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    save("complete")
    write_grain_report(doc, out)
    return doc


def _one_run(doc, point, peer, cores, round_no, guard, progress, each_s, label, save) -> None:
    entry = point["peers"].setdefault(peer.id, {"runs": [], "failures": []})
    kept = measure_or_record_failure(
        guard,
        lambda: _measure_once(peer, point, cores),
        failures=entry["failures"],
        round_no=round_no,
        doc=doc,
        save=save,
        progress=progress,
        each_s=each_s,
        label=label,
        foreign_of=None if peer.is_program else (lambda v: v[1]["result"].foreign_cpu_pct or 0.0),
        flaw_of=None if peer.is_program else (lambda v: flaw_of(v[1]["result"])),
    )
    if kept is None:
        return
    row, measured = kept.value
    measured.pop("result", None)  # a run's whole result is large; the grid keeps its figures
    if row["ratio"] != row["ratio"]:  # NaN: no floor at this point
        row["ratio"] = None
    entry["runs"].append(
        {
            "round": round_no,
            **row,
            **kept.run_fields(),
            **measured,
        }
    )
    order = "in order" if row["order_problem"] is None else f"NOT IN ORDER: {row['order_problem']}"
    ratio = "no floor" if row["ratio"] is None else f"ratio {units.ratio(row['ratio'])}"
    progress.advance(
        each_s,
        f"{label}: last packet {units.duration(row['last_packet_ms'])}, {ratio}, {order}, "
        f"foreign load {kept.foreign_pct:.1f} %",
    )
    save()


def rerender_grain(out_dir: str | os.PathLike) -> dict[str, Any]:
    """The report again from OUT/results.json, running nothing."""
    path = Path(out_dir) / "results.json"
    doc = read_result(path, "--from-results")
    try:
        summarise_points(doc)  # a KeyError here: not a --grain study's file
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ScabenchError(
            f"{path}: cannot read the kept results as a --grain study's ({type(exc).__name__}: {exc})"
        ) from None
    write_grain_report(doc, out_dir)
    return doc

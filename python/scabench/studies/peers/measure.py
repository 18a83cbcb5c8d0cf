"""`scabench peers`: the paper's pipeline on peer frameworks, side by side.

Every peer (catalogue.py) runs the same pipeline: the producer and stages
of experiments/paper/exp6.toml (1000 packets of 1024 doubles, 3 stages of
5 ms of CPU work on the thread's CPU clock). Rounds are interleaved (round 1
runs every peer once, round 2 every peer again, ...), so that a machine whose
load drifts over the study spoils every peer alike rather than one, and
every run goes through the one measurement guard (measure/guard.py): it
waits for a quiet machine and redoes a run that others disturbed.

Each peer runs on the given cores: a program peer's process is pinned with
sched_setaffinity before it starts (its threads and children inherit it),
a scabench peer's spec gets the cores as `scabench run --cores` gives them
(the launcher pins each host). Its time of the last packet is set over the
pipeline's floor on those cores (model/pipeline.floor_of), and every stage
must have seen every packet in order.

results.json is written after every run (an interrupted study keeps what it
measured); report.md, report.html and the plot at the end."""

import json
import os
import subprocess
import time
from dataclasses import asdict, replace
from datetime import UTC, datetime
from pathlib import Path

from scabench import units
from scabench.console import Progress
from scabench.errors import RunError, ScabenchError
from scabench.measure.campaign import Measure
from scabench.measure.guard import Guard, measure_or_record_failure
from scabench.measure.repeat import flaw_of
from scabench.model.load import load_spec
from scabench.model.overrides import Overrides, apply_overrides
from scabench.model.pipeline import floor_of
from scabench.paths import experiments_dir, program
from scabench.report.results_file import read_result, write_json
from scabench.run import processes
from scabench.run.environment import describe_environment
from scabench.run.runner import run_spec
from scabench.studies.peers import catalogue
from scabench.studies.peers.analysis import pipeline_of, row_of_program, row_of_run, summarise
from scabench.studies.peers.render import write_peers_report

# A busy shared machine must not stretch the study without end: redos of the
# whole study are at most this share of its runs (the guard's redo budget).
REDO_BUDGET = 0.5
# A program peer that has not finished in this many floors (plus a start-up
# allowance) is stuck, not slow. Generous: on a shared machine whose load
# average reached 20 on 2 cores, a peer did not finish within 8 floors.
TIMEOUT_FLOORS, TIMEOUT_EXTRA_S = 12.0, 60.0


def _spec_of(peer, cores, packets):
    overrides = Overrides(packets=packets, cores=cores, transport=peer.transport, collocated=peer.collocated)
    where = {"packets": "--packets", "transport": f"peer {peer.id}", "collocated": f"peer {peer.id}"}
    return apply_overrides(load_spec(peer.spec), overrides, where)


def run_program_peer(peer, pipeline, cores, floor_ms, misorder=None):
    """Runs a program peer once, pinned to `cores`; returns its JSON line as
    a dict. A failure (exit status, no result line, too long) is a RunError."""
    argv = [str(program(peer.program)), *peer.args]
    for key in ("packets", "samples", "stages", "work_us"):
        argv += [f"--{key.replace('_', '-')}", str(pipeline[key])]
    argv += ["--depth", str(peer.depth)]
    if misorder is not None:
        argv += ["--misorder", str(misorder)]
    timeout_s = TIMEOUT_FLOORS * floor_ms / 1000.0 + TIMEOUT_EXTRA_S
    try:
        proc = processes.run_program(argv, timeout_s, preexec=lambda: os.sched_setaffinity(0, cores))
    except subprocess.TimeoutExpired:
        raise RunError(f"{peer.id}: {argv[0]} did not finish in {timeout_s:.0f} s", component=peer.id) from None
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        raise RunError(f"{peer.id}: {argv[0]} failed: {why}", component=peer.id)
    lines = proc.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        raise RunError(f"{peer.id}: {argv[0]} printed no result line", component=peer.id) from None


def _measure_once(peer, pipeline, cores, packets, floor_ms):
    """One run of a peer: (row, what to keep of the run as measured)."""
    if peer.is_program:
        output = run_program_peer(peer, pipeline, cores, floor_ms)
        try:
            return row_of_program(output, floor_ms), {"output": output}
        except ValueError as exc:
            raise RunError(f"{peer.id}: {exc}", component=peer.id) from None
    result = run_spec(_spec_of(peer, cores, packets))
    return row_of_run(result, floor_ms, packets), {"result": result}


def run_peers(
    out_dir,
    cores,
    quick=False,
    runs=None,
    packets=None,
    only=None,
    quiet_wait_s=None,
    max_redos=None,
    log=print,
    progress_stream=None,
):
    """Measures every peer installed here, interleaved, and writes the
    report; returns the result document."""
    measure = Measure()
    runs = runs or (1 if quick else measure.runs)
    peers = catalogue.select(only)
    base = load_spec(catalogue.EXP6)
    packets = packets or (measure.quick_packets if quick else pipeline_of(base)["packets"])
    pipeline = {**pipeline_of(base), "packets": packets}
    floor_ms = floor_of(apply_overrides(base, Overrides(packets=packets, cores=cores), {"packets": "--packets"}))
    for peer in peers:  # a scabench peer's spec must agree with the pipeline, and load before anything runs
        if not peer.is_program and pipeline_of(_spec_of(peer, cores, packets)) != pipeline:
            raise ScabenchError(f"{peer.spec}: its pipeline differs from {catalogue.EXP6}'s")
    settings = replace(measure.guard_settings(), redo_budget=REDO_BUDGET)
    if quiet_wait_s is not None:
        settings = replace(settings, quiet_wait_s=quiet_wait_s)
    if max_redos is not None:
        settings = replace(settings, max_redos=max_redos)
    out = Path(out_dir)
    started = time.monotonic()
    meta = {
        "quick": quick,
        "runs": runs,
        "packets": packets,
        "cores": cores,
        "floor_ms": floor_ms,
        "pipeline": pipeline,
        "pipeline_spec": str(catalogue.EXP6.relative_to(experiments_dir().parent)),
        "guard": {k: v for k, v in asdict(settings).items() if k != "retry_errors"},
        "started_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "loadavg_start": list(os.getloadavg()),
        "environment": describe_environment(cores),
    }
    entries = {}
    for peer in peers:
        reason = catalogue.missing_reason(peer)
        entries[peer.id] = {
            "title": peer.title,
            "how": peer.how,
            "kind": "program" if peer.is_program else "scabench",
            "skipped": reason,
            "runs": [],
            "failures": [],
        }
        if reason:
            log(f"{peer.id}: skipped: {reason}")
    doc = {"status": "partial", "meta": meta, "peers": entries}

    def save(status="partial"):
        doc["status"] = status
        return write_json(doc, out / "results.json")

    active = [p for p in peers if not entries[p.id]["skipped"]]
    total = runs * len(active)
    each_s = floor_ms / 1000 * 1.1 + 1.5  # a run, its start and end included, on a quiet machine
    log(
        f"{len(active)} peer(s) x {runs} round(s) of {packets} packets on cores {cores}; floor {floor_ms:.0f} ms; "
        f"about {total * each_s / 60:.0f} min on a quiet machine"
    )
    # The house progress (console.Progress): a bar with the time left on a
    # terminal, a line per run with it elsewhere.
    with Progress(total * each_s, "peers", progress_stream) as progress:
        _rounds(
            doc,
            entries,
            active,
            runs,
            Guard(settings, cores=cores, log=progress.say),
            progress,
            each_s,
            pipeline,
            cores,
            packets,
            floor_ms,
            save,
        )
    for entry in entries.values():
        entry["summary"] = summarise(entry)
    meta["loadavg_end"] = list(os.getloadavg())
    meta["elapsed_s"] = time.monotonic() - started
    meta["finished_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    save("complete")
    write_peers_report(doc, out)
    return doc


def _rounds(doc, entries, active, runs, guard, progress, each_s, pipeline, cores, packets, floor_ms, save):
    """Round r runs every active peer once, under the guard; save() after every run."""
    total, n = runs * len(active), 0
    for round_no in range(1, runs + 1):
        for peer in active:
            n += 1
            label = f"[{n}/{total}] round {round_no}/{runs} {peer.id}"
            entry = entries[peer.id]
            kept = measure_or_record_failure(
                guard,
                lambda: _measure_once(peer, pipeline, cores, packets, floor_ms),
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
                continue
            row, measured = kept.value
            entry["runs"].append(
                {
                    "round": round_no,
                    **row,
                    **kept.run_fields(),
                    **measured,
                }
            )
            order = "in order" if row["order_problem"] is None else f"NOT IN ORDER: {row['order_problem']}"
            progress.advance(
                each_s,
                f"{label}: last packet {units.duration(row['last_packet_ms'])}, "
                f"ratio {units.ratio(row['ratio'])}, {order}, "
                f"foreign load {kept.foreign_pct:.1f} %",
            )
            save()


def rerender(out_dir):
    """The report again from OUT/results.json, running nothing."""
    path = Path(out_dir) / "results.json"
    doc = read_result(path, "--from-results")
    try:
        for entry in doc["peers"].values():
            entry["summary"] = summarise(entry)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ScabenchError(f"{path}: cannot read the kept results ({type(exc).__name__}: {exc})") from None
    write_peers_report(doc, out_dir)
    return doc

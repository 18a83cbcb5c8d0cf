"""`scabench bulk`: one hop's bulk throughput, beside this machine's memcpy.

A producer sends packets as fast as the hop takes them to a stage that does
no work (experiments/bulk/one-hop.toml), in real processes over real
sockets or a shared-memory ring: bytes per second are every packet's bytes
over the time from the first send to the receiver's last packet. Each case
is a transport (tcp, unix, shm), a call (two-way: the producer waits for
each packet's reply; one-way) and a packet size. Rounds are interleaved
(round 1 runs every case once, then round 2), every run under the one guard
(measure/guard.py).

The limit beside each size is memcpy's bandwidth at that size, measured in
the same study by scabench-profile memcpy on the same cores, before the
runs and after them, each under the guard, the higher kept (others' load
can only lower it): a hop copies a packet at least once, so no hop can
beat it. results.json is written after
every run; report.md and report.html at the end."""

import os
import subprocess
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
from scabench.paths import experiments_dir, program
from scabench.report.results_file import read_result, write_json
from scabench.run import processes
from scabench.run.environment import describe_environment
from scabench.run.runner import run_spec
from scabench.studies.bulk.analysis import (
    CALLS,
    QUICK_SIZES,
    SIZES,
    TRANSPORTS,
    packets_for,
    rate_label,
    size_label,
    summarise,
    throughput,
)
from scabench.studies.bulk.render import write_bulk_report

ONE_HOP = experiments_dir() / "bulk" / "one-hop.toml"
PRODUCER, RECEIVER = "producer", "receiver"
MEMCPY_SECONDS, QUICK_MEMCPY_SECONDS = 0.5, 0.1  # per size
WHERE = {"packets": "--packets", "properties": "--sizes", "policy": "bulk", "transport": "bulk"}


def case_spec(cores: list[int], transport: str, call: str, size: int, packets: int):
    """The one-hop spec of a case."""
    overrides = Overrides(
        packets=packets,
        cores=cores,
        properties={PRODUCER: {"samples": size}},
        policy={"call": call},
        transport=transport,
    )
    return apply_overrides(load_spec(ONE_HOP), overrides, WHERE)


def measure_memcpy(sizes: Sequence[int], cores: list[int], seconds: float) -> dict[str, float]:
    """memcpy's bandwidth at each size, bytes per second, keyed by the size as
    text (a JSON key): scabench-profile memcpy on the study's cores."""
    argv = [str(program("scabench-profile")), "memcpy", "--bytes", ",".join(map(str, sizes))]
    argv += ["--seconds", f"{seconds:g}"]
    try:
        proc = processes.run_program(
            argv, 30 + 2 * seconds * len(sizes), preexec=lambda: os.sched_setaffinity(0, cores)
        )
    except subprocess.TimeoutExpired:
        raise RunError(f"{argv[0]} memcpy did not finish") from None
    if proc.returncode != 0:
        raise RunError(f"{argv[0]} memcpy failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
    out = {}
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "memcpy":
            out[parts[1]] = float(parts[2])
    if sorted(map(int, out)) != sorted(sizes):
        raise RunError(f"{argv[0]} memcpy did not answer for every size: {proc.stdout.strip()!r}")
    return out


def _measure_once(cores: list[int], case: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    result = run_spec(case_spec(cores, case["transport"], case["call"], case["size"], case["packets"]))
    if not result.stages:
        raise RunError("the run reported no receiver", component=RECEIVER)
    receiver = result.stages[-1]
    if receiver.received != case["packets"]:
        raise RunError(f"the receiver took {receiver.received} of {case['packets']} packets", component=RECEIVER)
    hops = sorted({c["transport"] for c in result.spec.get("connections", [])})
    try:
        rate = throughput(case["size"], case["packets"], receiver.last_packet_ms)
    except ValueError as exc:
        raise RunError(str(exc), component=RECEIVER) from None
    return {"last_packet_ms": receiver.last_packet_ms, "bytes_per_s": rate, "hops": hops}, result


def _one_run(doc, case, cores, round_no, guard, progress, each_s, label, save) -> None:
    """One run of a case under the guard; kept in the case, or its failure."""
    kept = measure_or_record_failure(
        guard,
        lambda: _measure_once(cores, case),
        failures=case["failures"],
        round_no=round_no,
        doc=doc,
        save=save,
        progress=progress,
        each_s=each_s,
        label=label,
        foreign_of=lambda v: v[1].foreign_cpu_pct or 0.0,
        flaw_of=lambda v: flaw_of(v[1]),
    )
    if kept is None:
        return
    row, _ = kept.value
    case["runs"].append(
        {
            "round": round_no,
            **row,
            **kept.run_fields(),
        }
    )
    progress.advance(each_s, f"{label}: {rate_label(row['bytes_per_s'])}, foreign load {kept.foreign_pct:.1f} %")
    save()


def run_bulk(
    out_dir: str | os.PathLike,
    cores: list[int],
    quick: bool = False,
    runs: int | None = None,
    sizes: Sequence[int] | None = None,
    transports: Sequence[str] | None = None,
    packets: int | None = None,
    quiet_wait_s: float | None = None,
    max_redos: int | None = None,
    log: Callable[[str], None] = print,
    progress_stream=None,
) -> dict[str, Any]:
    """Measures every case, interleaved, and writes the report; returns the result document."""
    measure = Measure()
    runs = runs or (1 if quick else 3)
    sizes = tuple(sizes or (QUICK_SIZES if quick else SIZES))
    transports = tuple(transports or TRANSPORTS)
    cases: list[dict[str, Any]] = [
        {
            "transport": t,
            "call": c,
            "size": s,
            "packets": packets or packets_for(s, quick),
            "runs": [],
            "failures": [],
        }
        for s in sizes
        for t in transports
        for c in CALLS
    ]
    for case in cases:  # every case's spec is checked before anything runs
        case_spec(cores, case["transport"], case["call"], case["size"], case["packets"])
    settings = measure.guard_settings()
    if quiet_wait_s is not None:
        settings = replace(settings, quiet_wait_s=quiet_wait_s)
    if max_redos is not None:
        settings = replace(settings, max_redos=max_redos)
    out = Path(out_dir)
    started = time.monotonic()
    doc: dict[str, Any] = {
        "status": "partial",
        "meta": {
            "quick": quick,
            "runs": runs,
            "cores": cores,
            "sizes": list(sizes),
            "transports": list(transports),
            "calls": list(CALLS),
            "spec": str(ONE_HOP.relative_to(experiments_dir().parent)),
            "guard": {k: v for k, v in asdict(settings).items() if k != "retry_errors"},
            "started_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "loadavg_start": list(os.getloadavg()),
            "environment": describe_environment(cores),
        },
        "memcpy": {},
        "cases": cases,
    }

    def save(status: str = "partial") -> Path:
        doc["status"] = status
        return write_json(doc, out / "results.json")

    memcpy_seconds = QUICK_MEMCPY_SECONDS if quick else MEMCPY_SECONDS
    # A run's estimate: its start and end, and its bytes at 1 GB/s; memcpy's, its seconds per size.
    each_s = {id(c): 1.5 + c["size"] * c["packets"] / 1e9 for c in cases}
    memcpy_s = 2 * (memcpy_seconds * len(sizes) + 1)
    total_s = runs * sum(each_s.values()) + memcpy_s
    log(f"{len(cases)} case(s) x {runs} round(s) on cores {cores}; about {units.wall_time(total_s)} on a quiet machine")
    # The house progress (console.Progress): a bar with the time left on a terminal, a line per run elsewhere.
    with Progress(total_s, "bulk", progress_stream) as progress:
        guard = Guard(settings, cores=cores, log=progress.say)

        def memcpy_again(when: str) -> None:
            kept = guard.measure(lambda: measure_memcpy(sizes, cores, memcpy_seconds), label=f"memcpy {when}")
            for size, rate in kept.value.items():
                doc["memcpy"][size] = max(rate, doc["memcpy"].get(size, 0.0))
            doc["meta"].setdefault("memcpy_foreign_pct", []).append(kept.foreign_pct)
            progress.advance(
                memcpy_s / 2, f"memcpy at {len(sizes)} size(s), {when}: foreign load {kept.foreign_pct:.1f} %"
            )
            save()

        memcpy_again("before the runs")
        total, n = runs * len(cases), 0
        for round_no in range(1, runs + 1):
            for case in cases:
                n += 1
                label = (
                    f"[{n}/{total}] round {round_no}/{runs} {case['transport']} {case['call']} "
                    f"{size_label(case['size'])}"
                )
                _one_run(doc, case, cores, round_no, guard, progress, each_s[id(case)], label, save)
        memcpy_again("after the runs")
    summarise(doc)
    doc["meta"]["loadavg_end"] = list(os.getloadavg())
    doc["meta"]["elapsed_s"] = time.monotonic() - started
    doc["meta"]["finished_at"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    save("complete")
    write_bulk_report(doc, out)
    return doc


def rerender_bulk(out_dir: str | os.PathLike) -> dict[str, Any]:
    """The report again from OUT/results.json, running nothing."""
    path = Path(out_dir) / "results.json"
    doc = read_result(path, "--from-results")
    try:
        summarise(doc)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ScabenchError(f"{path}: cannot read the kept results ({type(exc).__name__}: {exc})") from None
    write_bulk_report(doc, out_dir)
    return doc

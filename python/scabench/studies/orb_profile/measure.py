"""`scabench profile`: what omniORB costs per call and per byte, on every
transport we have (collocated, giop:unix, giop:tcp on loopback).

The C++ program build/bin/scabench-profile makes the calls and times each
one with the cycle counter; this module runs it (the processes of each
transport), decides how often to call, guards every round against foreign
load and counts the bytes each message put on the wire (through
wire.GiopRelay). What to measure is plan.py's; the statistics, fits and
derived figures are analysis.py's."""

import os
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict

import numpy as np

from scabench.errors import RunError
from scabench.interrupts import Interrupted
from scabench.measure.guard import Guard, GuardSettings
from scabench.measure.load import ForeignLoadMeter, wait_for_quiet
from scabench.paths import program
from scabench.run.environment import describe_environment
from scabench.run.processes import LineReader, free_port, spawn
from scabench.studies.orb_profile.analysis import cycles_to_ns, derive, summarize_rounds
from scabench.studies.orb_profile.plan import CASES, CASES_BY_NAME, ELEMENT_BYTES, SWEEP_TYPE
from scabench.studies.orb_profile.wire import GiopRelay, exchanges
from scabench.version import version_info

# --- processes -------------------------------------------------------------


def _read_line(proc, what, timeout_s):
    try:
        line = proc.lines.line(timeout_s)
    except TimeoutError:
        raise RunError(f"{what}: no answer within {timeout_s:.0f} s") from None
    if line is None:
        proc.wait(timeout=5)
        raise RunError(f"{what}: exited with status {proc.returncode}: {_stderr_tail(proc)}")
    return line


def _stderr_tail(proc):
    try:
        proc.stderr_file.seek(0)
        return proc.stderr_file.read().strip().splitlines()[-1]
    except (AttributeError, IndexError, OSError):
        return "(no message)"


def _start(args, what, cores=None):
    err = tempfile.TemporaryFile(mode="w+")
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    proc = spawn(
        [str(program("scabench-profile")), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        bufsize=1,
        preexec=pin,
    )
    # Carried on the process (attributes of our own on a Popen).
    proc.stderr_file = err  # type: ignore[attr-defined]
    proc.lines = LineReader(proc.stdout)  # type: ignore[attr-defined]  # every answer is read through it
    proc.what = what  # type: ignore[attr-defined]
    return proc


def _stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    proc.stderr_file.close()


class Server:
    """The empty target in a process of its own, on one endpoint."""

    def __init__(self, transport, workdir, cores=None):
        self.transport = transport
        if transport == "unix":
            self.socket_path = os.path.join(workdir, "server.sock")
            endpoint = f"giop:unix:{self.socket_path}"
        else:
            self.port = free_port()
            endpoint = f"giop:tcp:127.0.0.1:{self.port}"
        self.proc = _start(["serve", "--endpoint", endpoint], f"{transport} server", cores)
        line = _read_line(self.proc, self.proc.what, 15)
        if not line.startswith("ready "):
            raise RunError(f"{self.proc.what}: unexpected answer {line[:80]!r}")
        self.ior = line.split(" ", 1)[1]

    def stop(self):
        _stop(self.proc)


class Driver:
    """A client process (or, collocated, client and servant in one process)
    that times calls on request."""

    def __init__(self, reference, what, cores=None):
        args = ["drive", "--collocated"] if reference is None else ["drive", "--ior", reference]
        self.proc = _start(args, what, cores)

    def ask(self, line, timeout_s=120):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RunError(f"{self.proc.what}: exited: {_stderr_tail(self.proc)}") from None
        answer = _read_line(self.proc, self.proc.what, timeout_s)
        if answer.startswith("error"):
            raise RunError(f"{self.proc.what}: {answer[6:]}")
        return answer

    def tsc(self):
        words = self.ask("tsc").split()
        return float(words[1]), int(words[3])

    def time(self, case, elements, calls):
        answer = self.ask(f"time {case} {elements} {calls}")
        return np.array(answer.split()[1:], dtype=np.int64)

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                pass
        _stop(self.proc)


# --- measurements ----------------------------------------------------------


def measure_case(driver, case, elements, rounds, plan, tsc_hz, watch_cores=None):
    """Warm-up, then `rounds` rounds of calls; a round during which others
    used more than the threshold of the watched cores (all if None) is
    redone (up to max_attempts, keeping the cleanest)."""
    probe = driver.time(case, elements, 5)
    per_call_s = max(float(np.median(probe)) / tsc_hz, 1e-9)
    driver.time(case, elements, int(np.clip(plan.warmup_s / per_call_s, 5, plan.max_calls)))
    calls = int(np.clip(plan.round_s / per_call_s, plan.min_calls, plan.max_calls))
    # Rounds are short (~0.2 s), so the guard does not wait for quiet before
    # each: it meters each round and redoes the disturbed ones.
    guard = Guard(
        GuardSettings(quiet_wait_s=0, redo_above_pct=plan.foreign_threshold_pct, max_redos=plan.max_attempts - 1),
        cores=watch_cores,
    )
    rounds_kept = [guard.measure(lambda: driver.time(case, elements, calls)) for _ in range(rounds)]
    kept = [r.value for r in rounds_kept]
    foreign = [round(r.foreign_pct, 2) for r in rounds_kept]
    attempts = [r.attempts for r in rounds_kept]
    summary = summarize_rounds(kept, tsc_hz)
    summary.update(
        foreign_pct=foreign, attempts=attempts, spoiled_rounds=sum(p >= plan.foreign_threshold_pct for p in foreign)
    )
    return summary


def measure_first_calls(transport, server, plan, tsc_hz, cores):
    """The first call on a new reference, in fresh client processes: it
    opens the connection (and omniORB's LocateRequest), which later calls
    reuse. Set-up cost = first call − median of the calls that follow."""
    args = ["first", "--follow", str(plan.first_follow)]
    args += ["--collocated"] if server is None else ["--ior", server.ior]
    samples = []
    meter = ForeignLoadMeter(cores).start()
    for _ in range(plan.first_samples):
        proc = _start(args, f"{transport} first-call client", cores)
        try:
            line = _read_line(proc, proc.what, 30)
        finally:
            _stop(proc)
        if line.startswith("error"):
            raise RunError(f"{transport} first-call client: {line[6:]}")
        words = line.split()
        first, steady = int(words[1]), float(np.median(np.array(words[3:], dtype=np.int64)))
        samples.append({"first_cycles": first, "steady_cycles": steady, "setup_cycles": first - steady})
    med = {k: float(np.median([s[k] for s in samples])) for k in ("first_cycles", "steady_cycles", "setup_cycles")}
    return {
        **med,
        **{k.replace("cycles", "ns"): cycles_to_ns(v, tsc_hz) for k, v in med.items()},
        "samples": samples,
        "foreign_pct": round(meter.foreign_pct(), 2),
    }


def measure_wire(transport, server, workdir, plan):
    """Runs every case (and every sweep size) a few times through a GiopRelay
    and returns, per case, the bytes of each message it saw."""
    listen: str | tuple[str, int]
    if transport == "unix":
        family, listen, upstream = socket.AF_UNIX, os.path.join(workdir, "relay.sock"), server.socket_path
        reference = f"corbaloc:omniunix:{listen}:/profile"
    else:
        family, listen, upstream = socket.AF_INET, ("127.0.0.1", 0), ("127.0.0.1", server.port)
    with GiopRelay(family, listen, upstream) as relay:
        if transport == "tcp":
            reference = f"corbaloc:iiop:1.2@127.0.0.1:{relay.address[1]}/profile"
        driver = Driver(reference, f"{transport} client through the byte-counting relay")
        try:
            runs = [(c.name, c.elements, c.operation) for c in CASES]
            runs += [(f"sweep-{n}", n, "sequenceDouble") for n in plan.sweep_elements]
            out, setup = {}, []
            for name, elements, operation in runs:
                before = len(relay.snapshot())
                driver.time(name if not name.startswith("sweep") else "sequence-double", elements, plan.wire_calls)
                window = relay.snapshot()[before:]
                setup += [m for m in window if m.type in ("LocateRequest", "LocateReply")]
                out[name] = _wire_summary(name, operation, window, plan.wire_calls)
        finally:
            driver.close()
        if relay.errors:
            raise RunError(f"{transport} relay: {relay.errors[0]}")
    return {
        "cases": out,
        "setup_messages": [{"direction": m.direction, "type": m.type, "bytes": m.bytes} for m in setup],
    }


def _wire_summary(name, operation, messages, calls):
    mine = [e for e in exchanges(messages) if e["operation"] == operation]
    if len(mine) != calls:
        raise RunError(f"relay: expected {calls} {operation} requests for {name}, saw {len(mine)}")
    sizes = {(e["request"].bytes, e["request"].body_bytes, e["reply"].bytes if e["reply"] else 0) for e in mine}
    if len(sizes) != 1:
        raise RunError(f"relay: {name} messages differ in size between calls: {sorted(sizes)}")
    request, reply = mine[0]["request"], mine[0]["reply"]
    return {
        "operation": operation,
        "request_bytes": request.bytes,
        "request_frames": request.frames,
        "request_body_offset": request.body_offset,
        "request_body_bytes": request.body_bytes,
        "request_envelope_bytes": request.bytes - request.body_bytes,
        "reply_bytes": reply.bytes if reply else 0,
        "oneway": mine[0]["oneway"],
    }


def profile_transport(transport, plan, tsc_hz, workdir, log):
    """Every case, the size sweep, first calls and bytes on the wire, with
    client and server on one core (the paper's set-up: two tasks on one
    processor); then a few cases again with the processes free to spread
    over every core."""
    one_core = {plan.core}
    server = Server(transport, workdir, one_core) if transport != "collocated" else None
    try:
        driver = Driver(server.ior if server else None, f"{transport} client", one_core)
        try:
            cases = {}
            for c in CASES:
                cases[c.name] = measure_case(driver, c.name, c.elements, plan.rounds, plan, tsc_hz, one_core)
                log(f"  {transport:10s} {c.name:24s} {cases[c.name]['median_cycles']:>10.0f} cycles")
            sweep = []
            for n in plan.sweep_elements:
                s = measure_case(driver, "sequence-double", n, plan.sweep_rounds, plan, tsc_hz, one_core)
                s.update(elements=n, payload_bytes=n * ELEMENT_BYTES[SWEEP_TYPE])
                s["mb_per_s"] = s["payload_bytes"] / s["median_ns"] * 1e3
                sweep.append(s)
                log(f"  {transport:10s} sweep {n:>8d} doubles {s['median_ns'] / 1e3:>10.1f} µs")
        finally:
            driver.close()
        first = measure_first_calls(transport, server, plan, tsc_hz, one_core)
        log(f"  {transport:10s} first call: set-up {first['setup_ns'] / 1e3:.1f} µs")
        wire = measure_wire(transport, server, workdir, plan) if server else None
    finally:
        if server:
            server.stop()
    spread = _measure_spread(transport, plan, tsc_hz, workdir, log) if transport != "collocated" else None
    return {
        "cores": sorted(one_core),
        "cases": cases,
        "sweep": sweep,
        "first_call": first,
        "wire": wire,
        "spread": spread,
    }


def _measure_spread(transport, plan, tsc_hz, workdir, log):
    """A few cases with client and server unpinned: on a VM the scheduler
    may then wake the peer on another, idle, core, which costs more than the
    call itself."""
    server = Server(transport, workdir)
    try:
        driver = Driver(server.ior, f"{transport} client (any core)")
        try:
            out = {}
            for name in plan.spread_cases:
                case = CASES_BY_NAME[name]
                out[name] = measure_case(driver, name, case.elements, plan.rounds, plan, tsc_hz)
                log(f"  {transport:10s} {name:24s} {out[name]['median_cycles']:>10.0f} cycles (any core)")
        finally:
            driver.close()
    finally:
        server.stop()
    return out


def run_profile(plan, log=print):
    """Measures every transport of the plan and returns the result dict."""
    started = time.monotonic()
    quiet, pct = wait_for_quiet(
        plan.foreign_threshold_pct,
        timeout_s=30,
        on_wait=lambda p: log(f"waiting for a quiet machine (others use {p:.0f} %)"),
    )
    result = {
        "scabench": version_info(),
        "command": "profile",
        "plan": asdict(plan),
        "environment": describe_environment("all"),
        "quiet_at_start": quiet,
        "foreign_pct_at_start": round(pct, 2),
        "transports": {},
    }
    with tempfile.TemporaryDirectory(prefix="scabench-profile-") as workdir:
        calibrator = Driver(None, "cycle-counter calibration")
        try:
            hz, overhead = calibrator.tsc()
        finally:
            calibrator.close()
        result["tsc"] = {"hz": hz, "timer_overhead_cycles": overhead}
        log(f"cycle counter: {hz / 1e6:.1f} MHz, timing nothing costs {overhead} cycles")
        try:
            for transport in plan.transports:
                result["transports"][transport] = profile_transport(transport, plan, hz, workdir, log)
        except Interrupted as exc:
            exc.result = {**result, "status": "interrupted"}  # the transports measured so far
            raise
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    return derive(result)

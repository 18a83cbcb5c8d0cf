"""`scabench profile`: what omniORB costs per call and per byte, on every
transport we have (collocated, giop:unix, giop:tcp on loopback).

The C++ program build/bin/scabench-profile makes the calls and times each
one with the cycle counter; this module decides what to call and how often,
guards every round against foreign load, and turns rounds into statistics,
fits and the bytes each message put on the wire (through wire.GiopRelay)."""
import os
import select
import socket
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from scabench.studies.orb_profile import datarate
from scabench.run.environment import describe_environment
from scabench.errors import RunError
from scabench.measure.load import ForeignLoadMeter, wait_for_quiet
from scabench.paths import program
from scabench.studies.orb_profile.wire import GiopRelay, exchanges

TRANSPORTS = ("collocated", "unix", "tcp")
TYPES = ("octet", "short", "float", "double")
ELEMENT_BYTES = {"octet": 1, "short": 2, "float": 4, "double": 8}
ARRAY_LENGTH = 1024  # idl/profile.idl ARRAY_LENGTH, and the sequences of the profile's cases
SWEEP_TYPE = "double"


@dataclass(frozen=True)
class Case:
    name: str  # what scabench-profile calls it
    kind: str  # invocation, oneway, basic, array, sequence
    type: str | None
    elements: int  # elements carried (0 for the null calls)
    operation: str  # the IDL operation, as it appears on the wire

    @property
    def payload_bytes(self):
        return self.elements * ELEMENT_BYTES[self.type] if self.type else 0


def _cases():
    cases = [Case("null", "invocation", None, 0, "nullCall"), Case("oneway", "oneway", None, 0, "nullOneway")]
    for kind, elements in (("basic", 1), ("array", ARRAY_LENGTH), ("sequence", ARRAY_LENGTH)):
        for t in TYPES:
            cases.append(Case(f"{kind}-{t}", kind, t, elements, kind + t.capitalize()))
    cases.append(Case("sequence-double-oneway", "oneway", "double", ARRAY_LENGTH, "sequenceDoubleOneway"))
    return cases


CASES = _cases()
CASES_BY_NAME = {c.name: c for c in CASES}


@dataclass
class Plan:
    """How much to measure. Rounds are sized in time, so that a slow case
    does not take longer than a fast one."""
    rounds: int = 7
    round_s: float = 0.1
    warmup_s: float = 0.05
    min_calls: int = 5
    max_calls: int = 20000
    sweep_elements: list = field(default_factory=lambda: [4 ** k for k in range(11)])  # 1 .. 1M
    sweep_rounds: int = 5
    first_samples: int = 15  # fresh client processes, one first call each
    first_follow: int = 20  # steady calls after the first one, for the comparison
    wire_calls: int = 3
    foreign_threshold_pct: float = 10.0
    max_attempts: int = 3  # per round, when foreign load spoils it
    transports: tuple = TRANSPORTS
    core: int = 0  # client and server both run here
    spread_cases: tuple = ("null", "basic-double", "sequence-double")

    @classmethod
    def quick(cls):
        return cls(rounds=3, round_s=0.03, warmup_s=0.01, sweep_elements=[1, 64, 4096, 262144], sweep_rounds=3,
                   first_samples=3, first_follow=5, wire_calls=1, max_attempts=2)


# --- statistics ------------------------------------------------------------

def summarize_rounds(rounds, tsc_hz):
    """Per-round medians and p99s of per-call cycle counts; the result is the
    median of the round medians and the p99 over every call of the rounds."""
    if not rounds or any(len(r) == 0 for r in rounds):
        raise ValueError("every round needs at least one call")
    medians = [float(np.median(r)) for r in rounds]
    p99s = [float(np.percentile(r, 99)) for r in rounds]
    pooled = np.concatenate([np.asarray(r, dtype=float) for r in rounds])
    median_cycles = float(np.median(medians))
    p99_cycles = float(np.percentile(pooled, 99))
    return {
        "median_cycles": median_cycles,
        "p99_cycles": p99_cycles,
        "median_ns": cycles_to_ns(median_cycles, tsc_hz),
        "p99_ns": cycles_to_ns(p99_cycles, tsc_hz),
        "round_median_cycles": medians,
        "round_p99_cycles": p99s,
        "calls_per_round": [len(r) for r in rounds],
    }


def cycles_to_ns(cycles, tsc_hz):
    return float(cycles) * 1e9 / tsc_hz


def fit_fixed_and_per_byte(payload_bytes, cost):
    """cost ≈ fixed + per_byte · bytes, by least squares on relative error
    (each point weighted by 1/cost), so that the small calls, which carry
    the fixed cost, count as much as the big ones. Returns (fixed, per_byte,
    worst relative residual)."""
    x = np.asarray(payload_bytes, dtype=float)
    y = np.asarray(cost, dtype=float)
    if len(x) < 2 or len(np.unique(x)) < 2:
        raise ValueError("the fit needs at least two different sizes")
    w = 1.0 / y
    design = np.column_stack([np.ones_like(x), x]) * w[:, None]
    (fixed, per_byte), *_ = np.linalg.lstsq(design, y * w, rcond=None)
    residual = float(np.max(np.abs((fixed + per_byte * x - y) / y)))
    return float(fixed), float(per_byte), residual


def block_size_analysis(fixed_ns, per_byte_ns, sweep, share=0.10):
    """Where block processing stops paying: by the fit, the block at which the
    fixed cost falls to `share` of the call (fixed = share · (fixed +
    per_byte · B), so B = fixed · (1 - share) / (share · per_byte)); by
    measurement, the smallest block whose throughput is within `share` of
    the best measured."""
    best = max(p["mb_per_s"] for p in sweep)
    measured = next(p for p in sweep if p["mb_per_s"] >= (1 - share) * best)
    # A per-byte cost that adds under 1 % to the biggest call of the sweep is
    # none at all (collocated calls hand the servant the caller's buffer).
    largest = max(p["payload_bytes"] for p in sweep)
    has_per_byte = per_byte_ns * largest > 0.01 * fixed_ns
    model_bytes = fixed_ns * (1 - share) / (share * per_byte_ns) if has_per_byte else None
    # The slope between the two largest blocks: what a byte costs where the
    # fixed cost no longer matters, measured rather than fitted.
    last, previous = sorted(sweep, key=lambda p: p["payload_bytes"])[-2:][::-1]
    largest_ns_per_byte = ((last["median_ns"] - previous["median_ns"])
                           / (last["payload_bytes"] - previous["payload_bytes"])) if "median_ns" in last else None
    return {"share": share,
            "has_per_byte_cost": bool(has_per_byte),
            "largest_blocks_ns_per_byte": largest_ns_per_byte,
            "model_bytes": model_bytes,
            "asymptotic_mb_per_s": 1e3 / per_byte_ns if has_per_byte else None,
            "measured_bytes": measured["payload_bytes"] if has_per_byte else None,
            "measured_elements": measured["elements"] if has_per_byte else None,
            "best_measured_mb_per_s": best}


# --- processes -------------------------------------------------------------

def _read_line(proc, what, timeout_s):
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    if not ready:
        raise RunError(f"{what}: no answer within {timeout_s:.0f} s")
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=5)
        raise RunError(f"{what}: exited with status {proc.returncode}: {_stderr_tail(proc)}")
    return line.rstrip("\n")


def _stderr_tail(proc):
    try:
        proc.stderr_file.seek(0)
        return proc.stderr_file.read().strip().splitlines()[-1]
    except (AttributeError, IndexError, OSError):
        return "(no message)"


def _start(args, what, cores=None):
    err = tempfile.TemporaryFile(mode="w+")
    pin = (lambda: os.sched_setaffinity(0, cores)) if cores else None
    proc = subprocess.Popen([str(program("scabench-profile")), *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1, preexec_fn=pin)
    proc.stderr_file = err
    proc.what = what
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
            self.port = _free_tcp_port()
            endpoint = f"giop:tcp:127.0.0.1:{self.port}"
        self.proc = _start(["serve", "--endpoint", endpoint], f"{transport} server", cores)
        line = _read_line(self.proc, self.proc.what, 15)
        if not line.startswith("ready "):
            raise RunError(f"{self.proc.what}: unexpected answer {line[:80]!r}")
        self.ior = line.split(" ", 1)[1]

    def stop(self):
        _stop(self.proc)


def _free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    kept, foreign, attempts = [], [], []
    for _ in range(rounds):
        best = None
        for attempt in range(1, plan.max_attempts + 1):
            meter = ForeignLoadMeter(watch_cores).start()
            cycles = driver.time(case, elements, calls)
            pct = meter.foreign_pct()
            if best is None or pct < best[1]:
                best = (cycles, pct)
            if pct < plan.foreign_threshold_pct:
                break
        kept.append(best[0])
        foreign.append(round(best[1], 2))
        attempts.append(attempt)
    summary = summarize_rounds(kept, tsc_hz)
    summary.update(foreign_pct=foreign, attempts=attempts,
                   spoiled_rounds=sum(p >= plan.foreign_threshold_pct for p in foreign))
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
    return {**med, **{k.replace("cycles", "ns"): cycles_to_ns(v, tsc_hz) for k, v in med.items()},
            "samples": samples, "foreign_pct": round(meter.foreign_pct(), 2)}


def measure_wire(transport, server, workdir, plan):
    """Runs every case (and every sweep size) a few times through a GiopRelay
    and returns, per case, the bytes of each message it saw."""
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
    return {"cases": out, "setup_messages": [{"direction": m.direction, "type": m.type, "bytes": m.bytes}
                                             for m in setup]}


def _wire_summary(name, operation, messages, calls):
    mine = [e for e in exchanges(messages) if e["operation"] == operation]
    if len(mine) != calls:
        raise RunError(f"relay: expected {calls} {operation} requests for {name}, saw {len(mine)}")
    sizes = {(e["request"].bytes, e["request"].body_bytes, e["reply"].bytes if e["reply"] else 0) for e in mine}
    if len(sizes) != 1:
        raise RunError(f"relay: {name} messages differ in size between calls: {sorted(sizes)}")
    request, reply = mine[0]["request"], mine[0]["reply"]
    return {"operation": operation, "request_bytes": request.bytes, "request_frames": request.frames,
            "request_body_offset": request.body_offset, "request_body_bytes": request.body_bytes,
            "request_envelope_bytes": request.bytes - request.body_bytes,
            "reply_bytes": reply.bytes if reply else 0, "oneway": mine[0]["oneway"]}


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
    return {"cores": sorted(one_core), "cases": cases, "sweep": sweep, "first_call": first, "wire": wire,
            "spread": spread}


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


# --- derived figures --------------------------------------------------------

def derive(result):
    """Adds to each transport the figures computed from its measurements:
    Eq. 1 per case, cycles per element, the sweep fit and the block size."""
    hz = result["tsc"]["hz"]
    for t in result["transports"].values():
        null = t["cases"]["null"]["median_cycles"]
        for name, m in t["cases"].items():
            case = CASES_BY_NAME[name]
            m["elements"] = case.elements
            m["payload_bytes"] = case.payload_bytes
            m["datarate_bps"] = (float(datarate.max_data_rate(m["median_cycles"], hz, case.elements))
                                 if case.elements else None)
            if case.elements > 1:
                m["cycles_per_element"] = m["median_cycles"] / case.elements
                m["marginal_cycles_per_element"] = (m["median_cycles"] - null) / case.elements
        sweep = t["sweep"]
        fixed_ns, per_byte_ns, worst = fit_fixed_and_per_byte([p["payload_bytes"] for p in sweep],
                                                              [p["median_ns"] for p in sweep])
        t["fit"] = {"fixed_ns": fixed_ns, "per_byte_ns": per_byte_ns,
                    "fixed_cycles": fixed_ns * hz / 1e9, "per_byte_cycles": per_byte_ns * hz / 1e9,
                    "worst_relative_residual": worst, "points": len(sweep)}
        t["block_size"] = block_size_analysis(fixed_ns, per_byte_ns, sweep)
    return result


def run_profile(plan, log=print):
    """Measures every transport of the plan and returns the result dict."""
    started = time.monotonic()
    quiet, pct = wait_for_quiet(plan.foreign_threshold_pct, timeout_s=30,
                                on_wait=lambda p: log(f"waiting for a quiet machine (others use {p:.0f} %)"))
    result = {"command": "profile", "plan": asdict(plan), "environment": describe_environment("all"),
              "quiet_at_start": quiet, "foreign_pct_at_start": round(pct, 2), "transports": {}}
    with tempfile.TemporaryDirectory(prefix="scabench-profile-") as workdir:
        calibrator = Driver(None, "cycle-counter calibration")
        try:
            hz, overhead = calibrator.tsc()
        finally:
            calibrator.close()
        result["tsc"] = {"hz": hz, "timer_overhead_cycles": overhead}
        log(f"cycle counter: {hz / 1e6:.1f} MHz, timing nothing costs {overhead} cycles")
        for transport in plan.transports:
            result["transports"][transport] = profile_transport(transport, plan, hz, workdir, log)
    result["elapsed_s"] = round(time.monotonic() - started, 1)
    return derive(result)

"""Runs a spec: writes the assembly, hands it to scabench-launch, then turns
the per-packet records into the result, a RunResult (docs/architecture.md,
"Result JSON")."""
import contextlib
import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np

from scabench import interrupts
from scabench.errors import RunError
from scabench.interrupts import Interrupted
from scabench.model.resources import check_memory
from scabench.model.pipeline import floor_of, producer_packets, property_value, source_period_ms, stage_work_ms
from scabench.model.policy import host_orb_options
from scabench.paths import program
from scabench.run import metrics, processes
from scabench.run.environment import describe_environment
from scabench.run.naming import NamingService
from scabench.run.network import NetworkHosts
from scabench.run.records import read_records, refusals
from scabench.run.results import CpuUsage, NetworkResult, ProducerResult, RunResult, StageResult
from scabench.run.stalls import find_stalls
from scabench.run.watchdog import Watchdog

# Options every host gets. verifyObjectExistsAndType 0: the first call on a
# reference would otherwise be a LocateRequest round trip, even for a oneway.
# Thresholds for the share of fast sends: the paper quotes shares under 12 to
# 35 µs for one-way and under 100 µs for two-way with a worker.
SEND_THRESHOLDS_US = (10, 15, 35, 100, 1000, 10000)

BASE_ORB_OPTIONS = ["-ORBverifyObjectExistsAndType", "0", "-ORBgiopMaxMsgSize", str(64 << 20)]
# The watchdog ends a run in which no packet moved for this long (s), or for
# longer where the pipeline's own pace is slower (hang_limit_s).
HANG_MIN_S = 5.0


def host_cores(spec):
    """Each host's CPU set: all run cores, or with pin one core each in turn."""
    if spec.pin:
        return [[spec.cores[i % len(spec.cores)]] for i in range(len(spec.hosts))]
    return [list(spec.cores) for _ in spec.hosts]


def build_assembly(spec, run_dir, timeout_s, network=None):
    """What scabench-launch runs. `network` (a network.NetworkHosts) puts
    each host in its namespace, listening behind its emulated link."""
    properties = {c.name: dict(c.properties) for c in spec.components}
    incoming = [[] for _ in spec.hosts]  # the policies of each host's remote connections in
    packets = producer_packets(spec)
    for c in spec.components:
        properties[c.name]["record_capacity"] = packets + 16
    for conn in spec.connections:
        properties[conn.uses[0]].update(conn.policy.uses_properties(conn.uses[1]))
        properties[conn.provides[0]].update(conn.policy.provides_properties(conn.provides[1]))
        if not spec.collocated(conn):
            incoming[spec.host_of(conn.provides[0])].append(conn.policy)
    host_options = [host_orb_options(policies) for policies in incoming]
    hosts = []
    for i, (members, cores) in enumerate(zip(spec.hosts, host_cores(spec))):
        name = f"host{i}-" + "+".join(members)
        if network is not None:
            endpoint_options = network.orb_options(i)
        else:
            endpoint_options = ["-ORBendPoint", "giop:tcp:127.0.0.1:" if spec.transport == "tcp"
                                else f"giop:unix:{run_dir}/host{i}.sock"]
        hosts.append({
            "name": name,
            "cores": cores,
            "scheduler": spec.scheduler,
            **({"netns": network.netns(i)} if network is not None else {}),
            "orb_options": endpoint_options + BASE_ORB_OPTIONS + host_options[i],
            "components": [_assembly_component(spec.component(n), spec.sample_type, properties[n])
                           for n in members],
        })
    return {
        "run_dir": str(run_dir),
        "host_binary": str(program("scabench-host")),
        "timeout_s": timeout_s,
        "measure_cores": spec.cores,
        "hosts": hosts,
        "connections": [{"id": c.id, "uses": {"component": c.uses[0], "port": c.uses[1]},
                         "provides": {"component": c.provides[0], "port": c.provides[1]}} for c in spec.connections],
    }


def _assembly_component(comp, sample_type, properties):
    entry = {"name": comp.name, "kind": comp.kind, "sample_type": sample_type, "properties": properties}
    if comp.library is not None:
        entry["library"] = str(comp.library)  # the host loads it before creating the component
    return entry


def run_spec(spec, on_start=None, on_hold=None):
    """Runs `spec` once over real processes and returns its RunResult.
    Raises RunError, which carries the partial result (the caller keeps it),
    or Interrupted (a termination signal), which carries it too.

    on_start(pids, host_names), if given, is called once the stream has
    started, with the host processes; whatever it returns is the result's
    "window" (the granularity lab measures a steady window there).

    on_hold(naming), if given, is called once the stream has ended and been
    measured, with the run's components still up and bound in the Naming
    Service (naming: {"corbaloc", "context"}); they are released when it
    returns."""
    check_memory(spec)  # before any process starts
    floor = floor_of(spec)
    timeout_s = spec.timeout_s or max(60.0, 5 * floor / 1000.0 + 30.0)
    processes.remove_leftovers()
    run_dir = processes.make_run_dir()
    try:
        with interrupts.while_owning(), NamingService(run_dir) as names, \
                _network_hosts(spec, run_dir) as network:
            return _launch(spec, run_dir, timeout_s, floor, network, names, on_start, on_hold)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def hang_limit_s(spec):
    """How long a run may go without any packet moving before the watchdog
    ends it: HANG_MIN_S, or more where a stage's work, a source's period or
    the links' delay is that slow."""
    work, _ = stage_work_ms(spec)
    period = max((source_period_ms(p) for p in spec.packet_sources()), default=0.0)
    delay = spec.network.delay_ms if spec.network is not None else 0.0
    return max(HANG_MIN_S, (20 * max(work, default=0.0) + 3 * period + 4 * delay) / 1000.0)


def _network_hosts(spec, run_dir):
    if spec.network is None:
        return contextlib.nullcontext()
    return NetworkHosts(len(spec.hosts), spec.network, run_dir)


def waveform_instance(spec):
    """The naming context of the run's waveform instance: the spec's name
    and an instance number, as an SCA domain names an application."""
    return f"{Path(str(spec.path)).stem or 'waveform'}_1"


def _launch(spec, run_dir, timeout_s, floor, network, names, on_start, on_hold):
    assembly = build_assembly(spec, run_dir, timeout_s, network)
    assembly["announce_start"] = on_start is not None
    assembly["hold"] = on_hold is not None
    assembly["naming"] = names.describe(waveform_instance(spec))
    (run_dir / "assembly.json").write_text(json.dumps(assembly, indent=2))
    manifest_path = run_dir / "manifest.json"
    started = time.time()
    result = RunResult(status="failed", spec=spec.describe(), environment=describe_environment(spec.cores),
                       floor_ms=floor, started_at=started)
    if network is not None:
        result.network = NetworkResult(**network.describe())
    result.naming = assembly["naming"]
    proc = processes.spawn([str(program("scabench-launch")), str(run_dir / "assembly.json"), str(manifest_path)],
                           stderr=subprocess.PIPE, text=True,
                           stdout=subprocess.PIPE if (on_start or on_hold) else None,
                           stdin=subprocess.PIPE if on_hold else subprocess.DEVNULL)
    window = None
    dog = Watchdog(proc, run_dir, hang_limit_s(spec), order=spec.pipeline_order(),
                   packets={c.name: property_value(c, "packets") for c in spec.packet_sources()})
    try:
        with dog:
            if on_start:
                line = proc.stdout.readline()  # "started PID ...", or nothing if the run failed first
                if line.startswith("started"):
                    pids = [int(p) for p in line.split()[1:]]
                    window = on_start(pids, [h["name"] for h in assembly["hosts"]])
            if on_hold:
                if _read_until(proc.stdout, "held"):  # nothing if the run failed first
                    on_hold(assembly["naming"])
                proc.stdin.close()  # the launcher releases the components
                proc.stdin = None    # (communicate() would flush the closed pipe)
            _, stderr = proc.communicate(timeout=timeout_s + 60)
    except BaseException as exc:
        # Interrupted, a timeout, or an error in on_start: the launcher ends
        # its hosts, then itself; what the records hold so far is kept.
        _end_launcher(proc)
        partial_analysis(spec, run_dir, result)
        if isinstance(exc, Interrupted):
            result.status = "interrupted"
            result.error = f"interrupted by {exc.name}"
            exc.result = result
        raise
    if dog.fault is not None:
        partial_analysis(spec, run_dir, result)
        result.failed_component, result.error = dog.fault
        raise RunError(result.error, result.failed_component, result)
    if not manifest_path.exists():
        partial_analysis(spec, run_dir, result)
        result.error = f"scabench-launch ended without a result: {stderr.strip() or proc.returncode}"
        raise RunError(result.error, result=result)
    manifest = json.loads(manifest_path.read_text())
    result.hosts = _with_orb_options(manifest.get("hosts", []), assembly)
    if manifest["status"] != "ok":
        partial_analysis(spec, run_dir, result)
        result.error = manifest["error"]
        result.failed_component = manifest.get("failed_component", "")
        raise RunError(result.error, result.failed_component, result)
    analyse(spec, run_dir, manifest, result)
    if network is not None:
        _count_emulator_as_own(result, network.emulator_cpu_s(), len(spec.cores))
    if on_start:
        result.window = window
    result.status = "ok"
    return result


def _with_orb_options(hosts, assembly):
    """The launcher's record of each host, with the ORB options it ran with
    (its endpoint says the transport; the rest, how omniORB served it)."""
    options = {h["name"]: h["orb_options"] for h in assembly["hosts"]}
    return [{**h, "orb_options": options[h["name"]]} if h.get("name") in options else h for h in hosts]


def _read_until(stream, word):
    for line in stream:
        if line.split()[:1] == [word]:
            return True
    return False


def _end_launcher(proc):
    """SIGTERM: the launcher ends its hosts (SIGTERM, SIGKILL 2 s later) and
    writes its manifest; SIGKILL if it has not gone after that."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()  # the hosts go with it (PR_SET_PDEATHSIG)
            proc.wait()


def _count_emulator_as_own(result, emulator_cpu_s, cores):
    """The link emulator stands in for the network, and it runs on the run's
    cores: its CPU is the run's, not foreign load. It is reported on its own.
    (Nearly all of it falls in the measured window: before start() only a
    few control calls cross the links.)"""
    result.network.emulator_cpu_s = emulator_cpu_s
    window_s = result.window_s or 0
    if window_s > 0:
        share = 100.0 * emulator_cpu_s / (window_s * cores)
        result.foreign_cpu_pct = max(0.0, result.foreign_cpu_pct - share)


def _read_all_records(spec, run_dir, partial=False):
    """{component: Records}; with partial, the components whose record file
    was made and can be read (a run that failed may have stopped anywhere)."""
    out = {}
    for c in spec.components:
        try:
            out[c.name] = read_records(run_dir / f"{c.name}.rec")
        except (OSError, ValueError):
            if not partial:
                raise
    return out


def partial_analysis(spec, run_dir, result):
    """Sets what a run that did not finish measured: each stage's and the
    producer's figures over the packets they handled, and its stalls. No
    ratio and no CPU (null): those need the whole run."""
    records = _read_all_records(spec, run_dir, partial=True)
    if any(r.sequence.size for r in records.values()):  # a run that failed before any packet measured nothing
        result.stages, result.producer, result.stalls, _ = _components(spec, records)
        result.stalled = bool(result.stalls)


def _components(spec, records):
    """(stages, producer, stalls, last packet in ms) from the records."""
    sources = set(spec.sources())
    producers = [c.name for c in spec.packet_sources() if c.name in records]
    t0 = min((int(records[p].arrive_ns.min()) for p in producers if records[p].arrive_ns.size), default=0)
    ms = lambda ns: (int(ns) - t0) / 1e6  # noqa: E731
    work = dict(zip([n for n in spec.pipeline_order() if spec.component(n).kind == "stage"], stage_work_ms(spec)[0]))

    stages, stalls = [], []
    for name in spec.pipeline_order():
        if name in sources or name not in records:
            continue
        r = records[name]
        output = r.sequence[np.argsort(r.done_ns, kind="stable")]
        stages.append(StageResult(
            name=name,
            kind=spec.component(name).kind,
            received=int(r.sequence.size + r.overflowed),
            last_packet_ms=ms(r.done_ns.max()) if r.done_ns.size else None,
            reordered_from_previous=metrics.reordered_from_previous(r.sequence),
            reordered_from_original=metrics.reordered_from_original(r.sequence),
            output_reordered_from_previous=metrics.reordered_from_previous(output),
            max_server_threads=r.max_concurrent,
            distinct_receiving_threads=int(np.unique(r.thread_id).size),
            reorder_buffer_peak=r.flow["reorder_peak"],
            skipped=r.flow["skipped"],
            late=r.flow["late"],
            duplicates=r.flow["duplicates"],
            held_peak=r.flow["held_peak"],
            flow_suspends=r.flow["suspends"],
            send_stalls=r.flow["send_stalls"],
            **refusals(r),
        ))
        stalls += find_stalls(name, r.arrive_ns, r.done_ns, work.get(name), t0, concurrency=r.max_concurrent)
    producer = None
    if producers:
        r = records[producers[0]]
        send_us = (r.done_ns - r.arrive_ns) / 1e3
        producer = ProducerResult(
            name=producers[0],
            sent=int(r.sequence.size),
            last_sent_ms=ms(r.done_ns.max()) if r.done_ns.size else None,
            send_us=metrics.send_time_stats(send_us),
            send_share_under_us=metrics.share_under(send_us, SEND_THRESHOLDS_US),
            send_us_all=[round(float(v), 3) for v in send_us],
            send_stalls=r.flow["send_stalls"],
            **refusals(r),
        )
    for name in producers:
        r = records[name]
        stalls += find_stalls(name, r.arrive_ns, r.done_ns, 0.0, t0, source_period_ms(spec.component(name)))
    terminal = [s for s in stages if s.last_packet_ms is not None and
                not any(c.uses[0] == s.name for c in spec.connections)]
    last = max((s.last_packet_ms for s in terminal), default=None)
    return stages, producer, sorted(stalls, key=lambda e: e["at_ms"]), last


def analyse(spec, run_dir, manifest, result):
    """Sets the figures of `result` from the record files and the manifest."""
    stages, producer, stalls, last = _components(spec, _read_all_records(spec, run_dir))
    rusage = [h["rusage"] for h in manifest["hosts"] if "rusage" in h]
    floor = result.floor_ms
    result.overhead_ratio = (last / floor) if (last and floor) else None
    result.foreign_cpu_pct = manifest["foreign_cpu_pct"]
    result.stages = stages
    result.producer = producer
    result.cpu = CpuUsage(
        run_cpu_s=manifest["own_cpu_s"],
        user_s=sum(u["user_s"] for u in rusage),
        system_s=sum(u["system_s"] for u in rusage),
        voluntary_ctxsw=sum(u["voluntary_ctxsw"] for u in rusage),
        involuntary_ctxsw=sum(u["involuntary_ctxsw"] for u in rusage),
    )
    result.window_s = (manifest["window_end_ns"] - manifest["window_start_ns"]) / 1e9
    result.stats = manifest.get("stats", {})
    result.stalls, result.stalled = stalls, bool(stalls)
    # A peer sent what a port refused (docs/trust-model.md): the counts may
    # still be right, but the run was not the clean one the spec describes.
    result.refusals = sum(p.refused for p in [producer, *stages] if p is not None)
    result.clean = result.refusals == 0

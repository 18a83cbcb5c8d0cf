"""Runs a spec: writes the assembly, hands it to scabench-launch, then turns
the per-packet records into the result (docs/architecture.md, "Result")."""
import contextlib
import json
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from scabench.run import metrics
from scabench.model.pipeline import floor_of, producer_packets
from scabench.run.environment import describe_environment
from scabench.errors import RunError
from scabench.run.network import NetworkHosts
from scabench.paths import program
from scabench.run.records import read_records, refusals

# Options every host gets. verifyObjectExistsAndType 0: the first call on a
# reference would otherwise be a LocateRequest round trip, even for a oneway.
# Thresholds for the share of fast sends: the paper quotes shares under 12 to
# 35 µs for one-way and under 100 µs for two-way with a worker.
SEND_THRESHOLDS_US = (10, 15, 35, 100, 1000, 10000)

BASE_ORB_OPTIONS = ["-ORBverifyObjectExistsAndType", "0", "-ORBgiopMaxMsgSize", str(64 << 20)]


def host_cores(spec):
    """Each host's CPU set: all run cores, or with pin one core each in turn."""
    if spec.pin:
        return [[spec.cores[i % len(spec.cores)]] for i in range(len(spec.hosts))]
    return [list(spec.cores) for _ in spec.hosts]


def build_assembly(spec, run_dir, timeout_s, network=None):
    """What scabench-launch runs. `network` (a network.NetworkHosts) puts
    each host in its namespace, listening behind its emulated link."""
    properties = {c.name: dict(c.properties) for c in spec.components}
    host_options = [[] for _ in spec.hosts]
    packets = producer_packets(spec)
    for c in spec.components:
        properties[c.name]["record_capacity"] = packets + 16
    for conn in spec.connections:
        properties[conn.uses[0]].update(conn.policy.uses_properties(conn.uses[1]))
        properties[conn.provides[0]].update(conn.policy.provides_properties(conn.provides[1]))
        if not spec.collocated(conn):
            host_options[spec.host_of(conn.provides[0])] = conn.policy.orb_options()
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
            "components": [{"name": n, "kind": spec.component(n).kind, "sample_type": spec.sample_type,
                            "properties": properties[n]} for n in members],
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


def run_spec(spec, on_start=None):
    """Runs `spec` once over real processes and returns the result dict.
    Raises RunError, which carries the partial result (the caller keeps it).

    on_start(pids, host_names), if given, is called once the stream has
    started, with the host processes; whatever it returns is the result's
    "window" (the granularity lab measures a steady window there)."""
    floor = floor_of(spec)
    timeout_s = spec.timeout_s or max(60.0, 5 * floor / 1000.0 + 30.0)
    run_dir = Path(tempfile.mkdtemp(prefix="scabench-"))
    try:
        with _network_hosts(spec, run_dir) as network:
            return _launch(spec, run_dir, timeout_s, floor, network, on_start)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _network_hosts(spec, run_dir):
    if spec.network is None:
        return contextlib.nullcontext()
    return NetworkHosts(len(spec.hosts), spec.network, run_dir)


def _launch(spec, run_dir, timeout_s, floor, network, on_start):
    assembly = build_assembly(spec, run_dir, timeout_s, network)
    assembly["announce_start"] = on_start is not None
    (run_dir / "assembly.json").write_text(json.dumps(assembly, indent=2))
    manifest_path = run_dir / "manifest.json"
    started = time.time()
    proc = subprocess.Popen([str(program("scabench-launch")), str(run_dir / "assembly.json"),
                             str(manifest_path)], stderr=subprocess.PIPE, text=True,
                            stdout=subprocess.PIPE if on_start else None)
    window = None
    try:
        if on_start:
            line = proc.stdout.readline()  # "started PID ...", or nothing if the run failed first
            if line.startswith("started"):
                pids = [int(p) for p in line.split()[1:]]
                window = on_start(pids, [h["name"] for h in assembly["hosts"]])
        _, stderr = proc.communicate(timeout=timeout_s + 60)
    except (subprocess.TimeoutExpired, KeyboardInterrupt, SystemExit):
        proc.send_signal(signal.SIGTERM)  # the launcher ends its hosts, then itself
        _, stderr = proc.communicate()
        raise
    result = {"status": "failed", "spec": spec.describe(), "environment": describe_environment(spec.cores),
              "floor_ms": floor, "started_at": started}
    if network is not None:
        result["network"] = network.describe()
    if not manifest_path.exists():
        result["error"] = f"scabench-launch ended without a result: {stderr.strip() or proc.returncode}"
        raise RunError(result["error"], result=result)
    manifest = json.loads(manifest_path.read_text())
    result["hosts"] = manifest.get("hosts", [])
    if manifest["status"] != "ok":
        result["error"] = manifest["error"]
        result["failed_component"] = manifest.get("failed_component", "")
        raise RunError(manifest["error"], manifest.get("failed_component", ""), result)
    result.update(analyse(spec, run_dir, manifest, floor))
    if network is not None:
        _count_emulator_as_own(result, network.emulator_cpu_s(), len(spec.cores))
    if on_start:
        result["window"] = window
    result["status"] = "ok"
    return result


def _count_emulator_as_own(result, emulator_cpu_s, cores):
    """The link emulator stands in for the network, and it runs on the run's
    cores: its CPU is the run's, not foreign load. It is reported on its own.
    (Nearly all of it falls in the measured window: before start() only a
    few control calls cross the links.)"""
    result["network"]["emulator_cpu_s"] = emulator_cpu_s
    window_s = result.get("window_s") or 0
    if window_s > 0:
        share = 100.0 * emulator_cpu_s / (window_s * cores)
        result["foreign_cpu_pct"] = max(0.0, result["foreign_cpu_pct"] - share)


def analyse(spec, run_dir, manifest, floor):
    records = {c.name: read_records(run_dir / f"{c.name}.rec") for c in spec.components}
    sources = set(spec.sources())
    producers = [c.name for c in spec.packet_sources()]
    t0 = min((int(records[p].arrive_ns.min()) for p in producers if records[p].arrive_ns.size), default=0)
    ms = lambda ns: (int(ns) - t0) / 1e6  # noqa: E731

    stages = []
    for name in spec.pipeline_order():
        if name in sources:
            continue
        r = records[name]
        output = r.sequence[np.argsort(r.done_ns, kind="stable")]
        stages.append({
            "name": name,
            "kind": spec.component(name).kind,
            "received": int(r.sequence.size + r.overflowed),
            "last_packet_ms": ms(r.done_ns.max()) if r.done_ns.size else None,
            "reordered_from_previous": metrics.reordered_from_previous(r.sequence),
            "reordered_from_original": metrics.reordered_from_original(r.sequence),
            "output_reordered_from_previous": metrics.reordered_from_previous(output),
            "max_server_threads": r.max_concurrent,
            "distinct_receiving_threads": int(np.unique(r.thread_id).size),
            "reorder_buffer_peak": r.flow["reorder_peak"],
            "skipped": r.flow["skipped"],
            "late": r.flow["late"],
            "duplicates": r.flow["duplicates"],
            "held_peak": r.flow["held_peak"],
            "flow_suspends": r.flow["suspends"],
            "send_stalls": r.flow["send_stalls"],
            **refusals(r),
        })
    producer = {}
    if producers:
        r = records[producers[0]]
        send_us = (r.done_ns - r.arrive_ns) / 1e3
        producer = {
            "name": producers[0],
            "sent": int(r.sequence.size),
            "last_sent_ms": ms(r.done_ns.max()) if r.done_ns.size else None,
            "send_us": metrics.send_time_stats(send_us),
            "send_share_under_us": metrics.share_under(send_us, SEND_THRESHOLDS_US),
            "send_us_all": [round(float(v), 3) for v in send_us],
            "send_stalls": r.flow["send_stalls"],
            **refusals(r),
        }
    terminal = [s for s in stages if s["last_packet_ms"] is not None and
                not any(c.uses[0] == s["name"] for c in spec.connections)]
    last = max((s["last_packet_ms"] for s in terminal), default=None)
    rusage = [h["rusage"] for h in manifest["hosts"] if "rusage" in h]
    return {
        "floor_ms": floor,
        "overhead_ratio": (last / floor) if (last and floor) else None,
        "foreign_cpu_pct": manifest["foreign_cpu_pct"],
        "stages": stages,
        "producer": producer,
        "cpu": {
            "run_cpu_s": manifest["own_cpu_s"],
            "user_s": sum(u["user_s"] for u in rusage),
            "system_s": sum(u["system_s"] for u in rusage),
            "voluntary_ctxsw": sum(u["voluntary_ctxsw"] for u in rusage),
            "involuntary_ctxsw": sum(u["involuntary_ctxsw"] for u in rusage),
        },
        "window_s": (manifest["window_end_ns"] - manifest["window_start_ns"]) / 1e9,
        "stats": manifest.get("stats", {}),
        # A peer sent what a port refused (docs/trust-model.md): the counts may
        # still be right, but the run was not the clean one the spec describes.
        "refusals": sum(refusals(r)["refused"] for r in records.values()),
        "clean": not any(refusals(r)["refused"] for r in records.values()),
    }

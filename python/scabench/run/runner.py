"""Runs a spec: writes the assembly, hands it to scabench-launch, then turns
the per-packet records into the result, a RunResult (docs/architecture.md,
"Result JSON")."""

import contextlib
import json
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scabench import interrupts
from scabench.errors import RunError, SpecError
from scabench.interrupts import Interrupted
from scabench.model.catalog import PYTHON_KINDS
from scabench.model.pipeline import (
    below_floor_why,
    floor_caveat,
    floor_of,
    property_value,
    source_period_ms,
    stage_longest_work_ms,
    stage_work,
)
from scabench.model.resources import check_memory
from scabench.model.sad.load import waveform_stem
from scabench.model.spec import Connection, Spec
from scabench.model.transport import hop_transport, process_transport
from scabench.paths import program
from scabench.run import journeys, metrics, processes, trace
from scabench.run.environment import describe_environment
from scabench.run.graph_figures import connection_numbers, graph_figures, read_sidecars, sidecar_entry
from scabench.run.live import LiveSample, LiveSampler, LiveWatch
from scabench.run.naming import Domain, NamingService
from scabench.run.network import NetworkHosts, unavailable_reason
from scabench.run.plan import build_assembly, process_name
from scabench.run.records import REFUSAL_REASONS, Records, read_records, refusals
from scabench.run.results import (
    ConnectionResult,
    CpuUsage,
    Latency,
    NetworkResult,
    NodeResult,
    ProducerResult,
    RunResult,
    StageResult,
)
from scabench.run.stalls import find_stalls, pipeline_progress_ns
from scabench.run.watchdog import LAUNCHER_GRACE_NODES_S, LAUNCHER_GRACE_S, Watchdog
from scabench.version import version_info

# Thresholds for the share of fast sends: the paper quotes shares under 12 to
# 35 µs for one-way and under 100 µs for two-way with a worker.
SEND_THRESHOLDS_US = (10, 15, 35, 100, 1000, 10000)

# The watchdog ends a run in which no packet moved for this long (s), or for
# longer where the pipeline's own pace is slower (hang_limit_s).
HANG_MIN_S = 5.0


def run_spec(
    spec: Spec,
    on_start: Callable[[list[int], list[str]], Any] | None = None,
    on_hold: Callable[[dict[str, str]], None] | None = None,
    on_sample: Callable[[LiveSample], None] | None = None,
) -> RunResult:
    """Runs `spec` once over real processes and returns its RunResult.
    Raises RunError, which carries the partial result (the caller keeps it),
    or Interrupted (a termination signal), which carries it too.

    on_start(pids, host_names), if given, is called once the stream has
    started, with the host processes; whatever it returns is the result's
    "window" (the granularity lab measures a steady window there).

    on_hold(naming), if given, is called once the stream has ended and been
    measured, with the run's components still up and bound in the Naming
    Service (naming: {"corbaloc", "context"}); they are released when it
    returns.

    on_sample(sample), if given, is called with the run's figures so far
    (run/live.py) every LiveWatch interval while it goes on, and once at its
    end, from a thread of its own."""
    check_memory(spec)  # before any process starts
    check_network_hosts(spec)
    floor = floor_of(spec)
    timeout_s = spec.timeout_s or max(60.0, 5 * floor / 1000.0 + 30.0)
    processes.remove_leftovers()
    run_dir = processes.make_run_dir()
    try:
        with (
            interrupts.while_owning(),
            _network_hosts(spec, run_dir) as network,
            _naming(spec, run_dir, network) as names,
        ):
            if network is not None:
                network.start_nodes(names.corbaloc, spec.cores)
            return _launch(spec, run_dir, timeout_s, floor, network, names, on_start, on_hold, on_sample)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _naming(spec: "Spec", run_dir: Path, network: NetworkHosts | None) -> NamingService | Domain:
    """The Naming Service the run binds its components in (and finds its
    nodes in): the domain the spec names, or the run's own, which network
    hosts reach from their namespaces."""
    if spec.domain is not None:
        return Domain(spec.domain)
    return NamingService(run_dir, host=network.naming_address() if network is not None else "127.0.0.1")


def hang_limit_s(spec: "Spec") -> float:
    """How long a run may go without any packet moving before the watchdog
    ends it: HANG_MIN_S, or more where a stage's work (with its jitter: a
    packet may take work_us + work_jitter_us), a source's period or the
    links' delay is that slow."""
    work = stage_longest_work_ms(spec)
    period = max((source_period_ms(p) for p in spec.packet_sources()), default=0.0)
    delay = spec.network.delay_ms if spec.network is not None else 0.0
    return max(HANG_MIN_S, (20 * max(work, default=0.0) + 3 * period + 4 * delay) / 1000.0)


def check_network_hosts(spec: Spec) -> None:
    """A spec on network hosts ([network], --link-delay) where they cannot be
    made (not root, no CAP_SYS_ADMIN in a container, no ip or link
    emulator): a SpecError naming the spec and why, before any process starts."""
    if spec.network is None:
        return
    reason = unavailable_reason()
    if reason is not None:
        raise SpecError(spec.path, "network", f"network hosts ([network], --link-delay) cannot be made here: {reason}")


def _network_hosts(spec: Spec, run_dir: Path) -> contextlib.AbstractContextManager[NetworkHosts | None]:
    if spec.network is None:
        return contextlib.nullcontext()
    return NetworkHosts(len(spec.hosts), spec.network, run_dir)


def waveform_instance(spec: "Spec") -> str:
    """The naming context of the run's waveform instance: the spec's name
    and an instance number, as an SCA domain names an application."""
    return f"{waveform_stem(spec.path) or 'waveform'}_1"


def _launch(
    spec: "Spec",
    run_dir: Path,
    timeout_s: float,
    floor: float,
    network: NetworkHosts | None,
    names: NamingService | Domain,
    on_start: Callable[..., Any] | None,
    on_hold: Callable[[dict[str, str]], None] | None,
    on_sample: Callable[[LiveSample], None] | None = None,
) -> RunResult:
    assembly = build_assembly(spec, run_dir, timeout_s, network)
    assembly["announce_start"] = on_start is not None
    assembly["hold"] = on_hold is not None
    assembly["naming"] = names.describe(waveform_instance(spec))
    (run_dir / "assembly.json").write_text(json.dumps(assembly, indent=2))
    manifest_path = run_dir / "manifest.json"
    started = time.time()
    result = RunResult(
        status="failed",
        spec=spec.describe(),
        environment=describe_environment(spec.cores),
        floor_ms=floor,
        started_at=started,
        floor_caveat=floor_caveat(spec),
        scabench=version_info(),
    )
    if network is not None:
        result.network = NetworkResult(**network.describe())
    result.naming = {k: v for k, v in assembly["naming"].items() if k != "shared"}
    # The agents' CPU from here on (their start-up is over: each has registered).
    agents_before = network.agents_cpu_s() if network is not None else 0.0
    proc = processes.spawn(
        [str(program("scabench-launch")), str(run_dir / "assembly.json"), str(manifest_path)],
        stderr=subprocess.PIPE,
        text=True,
        stdout=subprocess.PIPE if (on_start or on_hold) else None,
        stdin=subprocess.PIPE if on_hold else subprocess.DEVNULL,
    )
    window = held_records = None
    # The launcher's teardown takes longer with processes on nodes: it ends them through the nodes.
    grace_s = LAUNCHER_GRACE_NODES_S if assembly["nodes"] else LAUNCHER_GRACE_S
    dog = Watchdog(
        proc,
        run_dir,
        hang_limit_s(spec),
        order=spec.pipeline_order(),
        packets={c.name: property_value(c, "packets") for c in spec.packet_sources()},
        feeds_external={
            c.uses[0]: c.provides[0] for c in spec.connections if spec.component(c.provides[0]).external is not None
        },
        launcher_grace_s=grace_s,
    )
    live = LiveWatch(LiveSampler(spec, run_dir, proc.pid), on_sample) if on_sample else contextlib.nullcontext()
    try:
        with dog, live:
            if on_start:
                assert proc.stdout is not None  # a pipe whenever on_start is given
                line = proc.stdout.readline()  # "started PID ...", or nothing if the run failed first
                if line.startswith("started"):
                    pids = [int(p) for p in line.split()[1:]]
                    window = on_start(pids, [h["name"] for h in assembly["hosts"]])
            if on_hold:
                assert proc.stdout is not None  # a pipe whenever on_hold is given
                held = _read_until(proc.stdout, "held")  # "held CONTEXT"; nothing if the run failed first
                if held:
                    # The stream is over: its records are read now (those of
                    # nodes brought back), before an outside tool may restart
                    # a component (which starts a new record file) while the
                    # run is held.
                    held_records = _read_all_records(spec, run_dir, partial=True)
                    held_context = held.split()[1] if len(held.split()) > 1 else assembly["naming"]["context"]
                    result.naming = {"corbaloc": assembly["naming"]["corbaloc"], "context": held_context}
                    on_hold(result.naming)
                assert proc.stdin is not None  # a pipe whenever on_hold is given
                proc.stdin.close()  # the launcher releases the components
                proc.stdin = None  # (communicate() would flush the closed pipe)
            _, stderr = proc.communicate(timeout=timeout_s + 60)
    except BaseException as exc:
        # Interrupted, a timeout, or an error in on_start: the launcher ends
        # its hosts, then itself; what the records hold so far is kept.
        _end_launcher(proc, grace_s)
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
    result.hosts = _with_transports(_with_orb_options(manifest.get("hosts", []), assembly, spec), spec)
    if "naming" in manifest:  # the context the launcher made (in a shared domain, the first free instance)
        result.naming = manifest["naming"]
    if "nodes" in manifest:
        result.nodes = [NodeResult.of(n) for n in manifest["nodes"]]
    if "lifecycle" in manifest:
        result.lifecycle = manifest["lifecycle"]
    if manifest["status"] != "ok":
        partial_analysis(spec, run_dir, result)
        result.error = manifest["error"]
        result.failed_component = manifest.get("failed_component", "")
        raise RunError(result.error, result.failed_component, result)
    analyse(spec, run_dir, manifest, result, held_records)
    if network is not None:
        _count_emulator_as_own(
            result, network.emulator_cpu_s(), network.agents_cpu_s() - agents_before, len(spec.cores)
        )
    if on_start:
        result.window = window
    result.status = "ok"
    return result


def _with_orb_options(hosts: list[dict[str, Any]], assembly: dict[str, Any], spec: "Spec") -> list[dict[str, Any]]:
    """The launcher's record of each process, with the ORB options it ran
    with where the run chose them (its endpoint says the transport; the
    rest, how omniORB served it)."""
    options = {h["name"]: h["orb_options"] for h in assembly["hosts"]}
    options.update(
        {
            process_name(spec, ("external", e["name"])): e["orb_options"]
            for e in assembly["externals"]
            if e.get("orb_options")
        }
    )
    return [{**h, "orb_options": options[h["name"]]} if h.get("name") in options else h for h in hosts]


def _with_transports(hosts: list[dict[str, Any]], spec: "Spec") -> list[dict[str, Any]]:
    """Each process's record with the transports of its hops: its ORB's
    endpoint ("tcp" or "unix": the control plane, and every hop that is not
    shm) and each remote connection in and out of it with the transport it
    used (model/transport.py)."""
    processes = [("host", i) for i in range(len(spec.hosts))] + [("external", c.name) for c in spec.externals()]
    names: dict[Any, tuple[str, Any]] = {process_name(spec, p): p for p in processes}
    out = []
    for h in hosts:
        process = names.get(h.get("name"))
        if process is None:
            out.append(h)
            continue
        hops: dict[str, dict[str, Any]] = {"in": {}, "out": {}}
        for conn in spec.connections:
            if spec.collocated(conn):
                continue
            for side, end in (("out", conn.uses), ("in", conn.provides)):
                if spec.process_of(end[0]) == process:
                    hops[side][conn.id] = hop_transport(spec, conn)
        out.append({**h, "transport": process_transport(spec), "hops": hops})
    return out


def _read_until(stream: Iterable[str], word: str) -> str | None:
    """The first line of `stream` that starts with `word`, or None at its end."""
    for line in stream:
        if line.split()[:1] == [word]:
            return line
    return None


def _end_launcher(proc: subprocess.Popen, grace_s: float) -> None:
    """SIGTERM: the launcher ends its hosts (SIGTERM, SIGKILL 2 s later; on
    nodes through the node, 5 s) and writes its manifest; SIGKILL if it has
    not gone after that."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(grace_s + 2)
        except subprocess.TimeoutExpired:
            proc.kill()  # the hosts go with it (PR_SET_PDEATHSIG)
            proc.wait()


def _count_emulator_as_own(result: RunResult, emulator_cpu_s: float, agents_cpu_s: float, cores: int) -> None:
    """The link emulator stands in for the network, and it runs on the run's
    cores: its CPU is the run's, not foreign load; so is the node agents'
    (a heartbeat a second, and the launcher's polls). Each is reported on its
    own. (Nearly all of the emulator's falls in the measured window: before
    start() only a few control calls cross the links; the agents' is taken
    over the launcher's life, their start-up left out.)"""
    assert result.network is not None  # the run's network hosts, recorded at launch
    result.network.emulator_cpu_s = emulator_cpu_s
    result.network.node_agents_cpu_s = agents_cpu_s
    window_s = result.window_s or 0
    if window_s > 0:
        assert result.foreign_cpu_pct is not None  # measured over the window
        share = 100.0 * (emulator_cpu_s + agents_cpu_s) / (window_s * cores)
        result.foreign_cpu_pct = max(0.0, result.foreign_cpu_pct - share)


def _read_all_records(spec: "Spec", run_dir: Path, partial: bool = False) -> dict[str, Records]:
    """{component: Records} of the runtime's components (an external one has
    no record file); with partial, those whose record file was made and can
    be read (a run that failed may have stopped anywhere)."""
    out = {}
    for c in spec.components:
        if c.external is not None:
            continue
        try:
            out[c.name] = read_records(run_dir / f"{c.name}.rec")
        except (OSError, ValueError):
            if not partial:
                raise
    return out


def partial_analysis(spec: "Spec", run_dir: Path, result: RunResult) -> None:
    """Sets what a run that did not finish measured: each stage's and the
    producer's figures over the packets they handled, and its stalls. No
    ratio and no CPU (null): those need the whole run."""
    records = _read_all_records(spec, run_dir, partial=True)
    if any(r.sequence.size for r in records.values()):  # a run that failed before any packet measured nothing
        result.stages, result.producer, result.stalls, _, end_to_end = _components(spec, records)
        result.stalled = bool(result.stalls)
        _set_end_to_end(result, end_to_end)
        _set_graph(spec, records, read_sidecars(spec, run_dir, result.stats), result)
        _set_journeys(spec, records, result)


def _set_graph(
    spec: "Spec", records: dict[str, Records], sidecars: dict[str, dict[str, Any]], result: RunResult
) -> None:
    """The graph's figures (run/graph_figures.py): its paths, connections and streams."""
    result.paths, result.connections, result.streams = graph_figures(spec, records, sidecars)


def _set_journeys(spec: "Spec", records: dict[str, Records], result: RunResult) -> None:
    """The first packets' timeline (run/journeys.py), and the run's trace where
    the command asked for one (run/trace.py)."""
    all_of = journeys.journeys(spec, records)
    result.timeline = journeys.timeline(all_of)
    trace.write_requested(spec, all_of, result)


def _set_end_to_end(result: RunResult, latency_us: np.ndarray | None) -> None:
    """The run's end-to-end latency (None, or no packet: not measured, see _components)."""
    if latency_us is not None and latency_us.size:
        result.end_to_end_latency_us = Latency.of(latency_us)
        result.end_to_end_latency_us_all = [round(float(v), 3) for v in latency_us]


def _chain_from(spec: "Spec", source: str) -> list[str]:
    """The components a source feeds, in order, the source first."""
    chain = [source]
    while (nxt := [c.provides[0] for c in spec.connections if c.uses[0] == chain[-1]]) and nxt[0] not in chain:
        chain.append(nxt[0])
    return chain


def _components(
    spec: "Spec", records: dict[str, Records], stats: dict[str, Any] | None = None
) -> tuple[list[StageResult], ProducerResult | None, list[dict[str, Any]], float | None, np.ndarray | None]:
    """(stages, producer, stalls, last packet in ms, end-to-end latency of
    each packet in µs, in sequence order) from the records (and the stats
    the components reported, for an external one's refusals).

    Latency since send needs the packet numbers of one source: with several
    packet sources (each numbering its own packets from 0) or none, it and
    the end-to-end latency are not measured (None). A uses port has one
    connection, so what the source feeds is a chain, and its end is the end
    of the pipeline (never an external component: spec.py)."""
    sources = set(spec.sources())
    producers = [c.name for c in spec.packet_sources() if c.name in records]
    t0 = min((int(records[p].arrive_ns.min()) for p in producers if records[p].arrive_ns.size), default=0)
    sent = records[producers[0]] if len(spec.packet_sources()) == 1 and producers else None
    # Slots whose packet is done; a run cut short leaves the others' done time 0.
    done = {name: r.done_ns > 0 for name, r in records.items()}
    chain = _chain_from(spec, producers[0])[1:] if sent is not None else []

    def since_send_us(name: str) -> np.ndarray:
        """The packets done at `name`, by number: done there minus send start (µs)."""
        r = records[name]
        assert sent is not None  # called only along the chain of the one packet source
        order = np.argsort(r.sequence[done[name]], kind="stable")
        return (
            metrics.since_send_ns(
                sent.sequence, sent.arrive_ns, r.sequence[done[name]][order], r.done_ns[done[name]][order]
            )
            / 1e3
        )

    ms = lambda ns: (int(ns) - t0) / 1e6  # noqa: E731
    work = {name: ms for name, (ms, _) in stage_work(spec).items()}

    progress = pipeline_progress_ns(r.done_ns[done[n]] for n, r in records.items())
    stages, stalls = [], []
    for name in spec.pipeline_order():
        if spec.component(name).external is not None:
            stage = _external_stage(spec, spec.component(name), records, ms, (stats or {}).get(name, {}))
            if stage is not None:
                stages.append(stage)
            continue
        if name in sources or name not in records:
            continue
        r = records[name]
        done_order = np.argsort(r.done_ns, kind="stable")
        stages.append(
            StageResult(
                name=name,
                kind=spec.component(name).kind,
                received=int(r.sequence.size + r.overflowed),
                last_packet_ms=ms(r.done_ns.max()) if r.done_ns.size else None,
                reordered_from_previous=metrics.per_stream(metrics.reordered_from_previous, r.sequence, r.stream),
                reordered_from_original=metrics.per_stream(metrics.reordered_from_original, r.sequence, r.stream),
                output_reordered_from_previous=metrics.per_stream(
                    metrics.reordered_from_previous,
                    r.sequence[done_order],
                    None if r.stream is None else r.stream[done_order],
                ),
                output_reordered_from_original=metrics.per_stream(
                    metrics.reordered_from_original,
                    r.sequence[done_order],
                    None if r.stream is None else r.stream[done_order],
                ),
                max_server_threads=r.max_concurrent,
                distinct_receiving_threads=int(np.unique(r.thread_id).size),
                reorder_buffer_peak=r.flow["reorder_peak"],
                skipped=r.flow["skipped"],
                late=r.flow["late"],
                duplicates=r.flow["duplicates"],
                held_peak=r.flow["held_peak"],
                flow_suspends=r.flow["suspends"],
                send_stalls=r.flow["send_stalls"],
                unsent=r.flow["unsent"],
                **refusals(r),
                latency_in_stage_us=Latency.of((r.done_ns[done[name]] - r.arrive_ns[done[name]]) / 1e3),
                latency_since_send_us=Latency.of(since_send_us(name)) if name in chain else None,
                connections=_connections(spec, name, r, records),
                **_output_check((stats or {}).get(name, {})),
            )
        )
        stalls += find_stalls(
            name, r.arrive_ns, r.done_ns, work.get(name), t0, concurrency=r.max_concurrent, progress_ns=progress
        )
    producer = None
    if producers:
        r = records[producers[0]]
        send_us = (r.done_ns - r.arrive_ns) / 1e3
        producer = ProducerResult(
            name=producers[0],
            # A packet given up while it waited (stop, disconnect) has its
            # record, as every send begun has, but did not go.
            sent=int(r.sequence.size) - r.flow["unsent"],
            last_sent_ms=ms(r.done_ns.max()) if r.done_ns.size else None,
            send_us=metrics.send_time_stats(send_us),
            send_share_under_us=metrics.share_under(send_us, SEND_THRESHOLDS_US),
            send_us_all=[round(float(v), 3) for v in send_us],
            send_stalls=r.flow["send_stalls"],
            unsent=r.flow["unsent"],
            **refusals(r),
        )
    for name in producers:
        r = records[name]
        stalls += find_stalls(
            name, r.arrive_ns, r.done_ns, 0.0, t0, source_period_ms(spec.component(name)), progress_ns=progress
        )
    terminal = [
        s for s in stages if s.last_packet_ms is not None and not any(c.uses[0] == s.name for c in spec.connections)
    ]
    last = max((s.last_packet_ms for s in terminal if s.last_packet_ms is not None), default=None)
    # A run cut short may have left no record file at the end: nothing was done there.
    end_to_end = since_send_us(chain[-1]) if chain and chain[-1] in records else None
    return stages, producer, sorted(stalls, key=lambda e: e["at_ms"]), last, end_to_end


def _output_check(stats: dict[str, Any]) -> dict[str, Any]:
    """The checksum (a number) and capture a sink reported as stats."""
    return {"checksum": float(stats["checksum"]) if "checksum" in stats else None, "capture": stats.get("capture")}


def missing_packets(
    spec: Spec,
    handled: dict[str, int],
    stages: list[StageResult],
    sidecars: Mapping[str, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Each stage that received fewer packets than its connections brought
    it, less those its reorder buffer counted late (it drops them, and says
    so). [{"component", "sent", "received", "late"}].

    What a connection owes its receiver (owed_packets): all its sender
    handled (its record file's count, `handled` by name) where that is the
    sender's only connection; where the sender has several (a fan-out, a
    duplex's two paths), what its counts (`sidecars`, graph_figures.
    read_sidecars) say went out on that one: packets a drop fan-out dropped
    there never went, and are reported as dropped, not missing. A packet a
    producer loses on purpose (drop_packet) was never sent, so never
    missed. A stage is not judged where one of its connections cannot be
    told: from or to a component without a record file (an external
    program, a Python stage: what it passes on is its own business), or
    from a sender with several connections and no counts."""
    out = []
    for stage in stages:
        into = [c for c in spec.connections if c.provides[0] == stage.name]
        if stage.name not in handled or not into:
            continue
        owed = [owed_packets(spec, handled, sidecars or {}, conn) for conn in into]
        if None in owed:
            continue
        sent = sum(n for n in owed if n is not None)
        if stage.received < sent - (stage.late or 0):
            out.append({"component": stage.name, "sent": sent, "received": stage.received, "late": stage.late})
    return out


def owed_packets(
    spec: Spec, handled: dict[str, int], sidecars: Mapping[str, dict[str, Any]], conn: Connection
) -> int | None:
    """The packets `conn` should have brought its receiver (missing_packets),
    None where that cannot be told."""
    sender = conn.uses[0]
    if sender not in handled:
        return None
    if sum(c.uses[0] == sender for c in spec.connections) == 1:
        return handled[sender]
    entry = sidecar_entry(spec, sidecars, conn)
    return None if entry is None or entry.get("sent") is None else int(entry["sent"])


def _connections(spec: Spec, name: str, r: Records, records: dict[str, Records]) -> list[ConnectionResult] | None:
    """Each connection's figures at a stage that several feed (fan-in), or
    None. A record names its connection by the number the component gave
    it (graph_figures.connection_numbers)."""
    into = [c for c in spec.connections if c.provides[0] == name]
    if len(into) < 2 or r.connection is None:
        return None
    assert r.stream is not None  # read with the connection, from the same flags
    numbers = connection_numbers(spec)
    out = []
    for conn in into:
        mine = r.connection == numbers[conn.id]
        seq, stream = r.sequence[mine], r.stream[mine]
        upstream = records.get(conn.uses[0])
        out.append(
            ConnectionResult(
                id=conn.id,
                sent=int(upstream.sequence.size + upstream.overflowed) if upstream is not None else None,
                received=int(seq.size),
                reordered_from_previous=metrics.per_stream(metrics.reordered_from_previous, seq, stream),
                reordered_from_original=metrics.per_stream(metrics.reordered_from_original, seq, stream),
                transport=hop_transport(spec, conn),
            )
        )
    return out


def _external_stage(
    spec: "Spec", comp: Any, records: dict[str, Records], ms: Callable[[Any], float], stats: dict[str, Any]
) -> StageResult | None:
    """An external component's figures, from the record file of the
    component it feeds (its first connection's): the packets it passed on,
    in the order they reached that port, and when the last one did. What
    only its own ports know (threads, and refusals unless it reported them
    as stats, as a Python component does) is None."""
    conn = next(c for c in spec.connections if c.uses[0] == comp.name)
    r = records.get(conn.provides[0])
    if r is None:
        return None
    reported = {reason: int(stats[f"refused.{reason}"]) for reason in REFUSAL_REASONS if f"refused.{reason}" in stats}
    knows_refusals = comp.kind in PYTHON_KINDS or bool(reported)  # a Python component reports only nonzero counts
    by_reason = {reason: reported.get(reason, 0) for reason in REFUSAL_REASONS}
    order = metrics.reordered_from_previous(r.sequence)
    return StageResult(
        name=comp.name,
        kind=comp.kind,
        received=int(r.sequence.size + r.overflowed),
        last_packet_ms=ms(r.arrive_ns.max()) if r.arrive_ns.size else None,
        reordered_from_previous=order,
        reordered_from_original=metrics.reordered_from_original(r.sequence),
        output_reordered_from_previous=order,
        output_reordered_from_original=metrics.reordered_from_original(r.sequence),
        max_server_threads=None,
        distinct_receiving_threads=None,
        duplicates=int(stats["duplicates"]) if "duplicates" in stats else (0 if knows_refusals else None),
        refused=sum(by_reason.values()) if knows_refusals else None,
        refused_by=by_reason if knows_refusals else None,
        measured_at=f"{conn.provides[0]}.{conn.provides[1]}",
    )


def _process_cpu(result: RunResult) -> None:
    """Each stage's process CPU over the measured window, where the stage has
    a process of its own (a host of one component, or an external program
    the run started), and that process's CPU per packet as the benchmark
    summary gives it (RunResult.process_cpu_per_packet_ms)."""
    per_packet_ms = result.process_cpu_per_packet_ms()
    own = {
        h["components"][0]: h["window_cpu_s"]
        for h in result.hosts or []
        if len(h.get("components", [])) == 1 and h.get("window_cpu_s") is not None
    }
    for stage in result.stages or []:
        if stage.name in own:
            stage.process_cpu_s = own[stage.name]
            ms = per_packet_ms.get(stage.name)
            stage.cpu_per_packet_us = None if ms is None else 1e3 * ms


def analyse(
    spec: "Spec", run_dir: Path, manifest: dict[str, Any], result: RunResult, records: dict[str, Records] | None = None
) -> None:
    """Sets the figures of `result` from the record files (or `records`, read
    already) and the manifest."""
    records = records if records is not None else _read_all_records(spec, run_dir)
    stages, producer, stalls, last, end_to_end = _components(spec, records, manifest.get("stats", {}))
    rusage = [h["rusage"] for h in manifest["hosts"] if "rusage" in h]
    floor = result.floor_ms
    result.overhead_ratio = (last / floor) if (last and floor) else None
    if result.overhead_ratio is not None and result.overhead_ratio < 1:
        result.below_floor_why = below_floor_why(spec, stages)
    _set_end_to_end(result, end_to_end)
    result.foreign_cpu_pct = manifest["foreign_cpu_pct"]
    result.stages = stages
    result.producer = producer
    _process_cpu(result)
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
    sidecars = read_sidecars(spec, run_dir, result.stats)
    _set_graph(spec, records, sidecars, result)
    _set_journeys(spec, records, result)
    # A peer sent what a port refused (docs/trust-model.md): the counts may
    # still be right, but the run was not the clean one the spec describes.
    result.refusals = sum(p.refused or 0 for p in [producer, *stages] if p is not None)
    # Packets sent and never received (an end of stream that came early, a
    # peer that cut the stream): the figures cover only what arrived.
    result.missing = (
        missing_packets(spec, {n: int(r.sequence.size + r.overflowed) for n, r in records.items()}, stages, sidecars)
        or None
    )
    if result.missing:
        result.overhead_ratio = None
    result.clean = result.refusals == 0 and not result.missing

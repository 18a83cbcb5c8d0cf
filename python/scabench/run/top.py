"""`scabench top`: the live view of any running waveform, read over CORBA.

`run --live` reads a run's record files; a waveform this command did not
start (a held run, another tool's, a REDHAWK waveform) has none to read
here. What every such component offers on the wire is its ports
(`CF::PortSet::getPortSet`) and, on each port that is a BulkIO
`ProvidesPortStatisticsProvider` or `UsesPortStatisticsProvider`, its
statistics: calls, elements and bits per second, the average queue depth,
the time since the last call, the streams, and keywords. So top finds the
waveform's components in the Naming Service, asks each port for its
statistics at every sample, and draws them with the same view as `--live`.

scabench's own ports, whatever protocol they speak, answer with keywords
beside BulkIO's figures (docs/reference/bulkio.md): a provides port the
calls taken, the packets in its worker queue and its reorder buffers now,
refused, and on a BulkIO port the packets whose T went back; a uses port,
per connection, its credits outstanding and its shared-memory ring's depth
now; and every port its process's pid, CPU time and threads, from which
top works out CPU per process between two samples, as run --live does from
/proc. A REDHAWK component's ports answer BulkIO's figures alone (the calls
among its keywords where it gives them). What the wire has no place for
stays empty: "done" is what was taken less what is held, and threads seen
(rather than the process's threads now) are not shown.

Latency so far is each component's provides ports' (the latency_* keywords:
send to arrival at the port, p50, p99 and max at bin resolution, the upper
edge of their bin, latency_bins.py), so a component that takes from a
producer or a stage shows it; `run --live` shows send to done at the sinks
instead, from the records. A component with several provides ports shows
the most packets' count and the highest of each figure."""

import time
from dataclasses import dataclass
from typing import Any

from omniORB import CORBA

from scabench.components import idl
from scabench.errors import ScabenchError
from scabench.run.live import ComponentSample, ConnectionSample, LiveSample, PathLatency
from scabench.run.naming import DEFAULT_NAMING

S = idl.load()
CosNaming = S.CosNaming
PROVIDES_STATISTICS = "IDL:BULKIO/ProvidesPortStatisticsProvider:1.0"
USES_STATISTICS = "IDL:BULKIO/UsesPortStatisticsProvider:1.0"
# A component that does not answer within this is shown as not answering:
# one hung process must not freeze the view of the others.
CALL_TIMEOUT_MS = 2000
URL_SCHEMES = ("corbaname:", "corbaloc:", "IOR:")
_ORB: Any = None


def orb() -> Any:
    """This process's ORB, made once, with a call timeout (CALL_TIMEOUT_MS)."""
    global _ORB
    if _ORB is None:
        _ORB = CORBA.ORB_init(["scabench-top", "-ORBclientCallTimeOutPeriod", str(CALL_TIMEOUT_MS)], CORBA.ORB_ID)
    return _ORB


def _keywords(stats: Any) -> dict[str, Any]:
    out = {}
    for k in stats.keywords:
        try:
            out[k.id] = k.value.value()
        except Exception:  # a keyword whose type this ORB cannot read: skipped, the rest shown
            continue
    return out


@dataclass
class _Component:
    name: str
    ref: Any


def _is_context(obj: Any) -> bool:
    try:
        return bool(obj._is_a("IDL:omg.org/CosNaming/NamingContext:1.0"))
    except CORBA.Exception:
        return False


def find_components(target: str, naming: str | None = None) -> tuple[str, list[_Component]]:
    """(what is watched, its components) for TARGET: a URL (corbaname:,
    corbaloc:, IOR:) of a naming context or of one component, or the name of
    a context (a waveform instance, `exp6_1`; `a/b` for a nested one) in the
    Naming Service at `naming`. Refused in one line when it is none of them."""
    if naming is not None and not naming.startswith(URL_SCHEMES):
        raise ScabenchError(f"top: --naming {naming!r} is not a CORBA URL; give one of {', '.join(URL_SCHEMES)}")
    try:
        if target.startswith(URL_SCHEMES):
            obj, where = orb().string_to_object(target), target
        else:
            root_ref = naming or DEFAULT_NAMING
            root = orb().string_to_object(root_ref)._narrow(CosNaming.NamingContext)
            if root is None:
                raise ScabenchError(f"top: {root_ref} is not a Naming Service")
            path = [CosNaming.NameComponent(part, "") for part in target.split("/") if part]
            try:
                obj = root.resolve(path)
            except CosNaming.NamingContext.NotFound:
                bound = sorted(b.binding_name[0].id for b in root.list(100)[0])
                raise ScabenchError(
                    f"top: {target!r} is not bound in the Naming Service at {root_ref}; bound there: "
                    + (", ".join(bound) or "nothing")
                ) from None
            where = f"{target} at {root_ref}"
        if _is_context(obj):
            ctx = obj._narrow(CosNaming.NamingContext)
            bindings = ctx.list(1000)[0]
            comps = [
                _Component(b.binding_name[0].id, ctx.resolve(b.binding_name))
                for b in bindings
                if b.binding_type == CosNaming.nobject
            ]
            return where, sorted(comps, key=lambda c: c.name)
        return where, [_Component(target.rsplit("/", 1)[-1].rsplit("#", 1)[-1], obj)]
    except (CORBA.TRANSIENT, CORBA.COMM_FAILURE, CORBA.OBJECT_NOT_EXIST, CORBA.BAD_PARAM) as exc:
        why = type(exc).__name__
        what = repr(target) if target.startswith(URL_SCHEMES) else f"the Naming Service at {naming or DEFAULT_NAMING}"
        raise ScabenchError(f"top: {what} does not answer ({why}); is the waveform running?") from exc


class PortStatisticsSampler:
    """Samples a running waveform's components over CORBA (see the module
    docstring); `sample()` gives a LiveSample as run --live does."""

    def __init__(self, target: str, naming: str | None = None) -> None:
        self.where, self.components = find_components(target, naming)
        self.started = time.monotonic()
        # Each process's CPU time at the last sample, and when: CPU % is the
        # difference over the time between two samples.
        self.cpu_before: dict[int, tuple[float, int]] = {}
        self.cpu_now: dict[int, float | None] = {}  # this sample's, per process

    def sample(self) -> LiveSample:
        self.cpu_now = {}
        components, connections, latency = [], [], []
        for comp in self.components:
            c, conns, lat = self._component(comp)
            components.append(c)
            connections.extend(conns)
            if lat is not None:
                latency.append(lat)
        return LiveSample(
            time.monotonic() - self.started,
            0,
            0,
            None,
            components,
            connections,
            latency,
            watching=self.where,
            latency_to="arrival",
        )

    def _component(self, comp: _Component) -> tuple[ComponentSample, list[ConnectionSample], PathLatency | None]:
        out = ComponentSample(comp.name, "")
        conns: list[ConnectionSample] = []
        latencies: list[PathLatency] = []
        try:
            resource = comp.ref._narrow(S.CF.Resource)
            ports = resource.getPortSet() if resource is not None else []
            out.kind = (resource.softwareProfile.rsplit("/", 1)[-1] or "") if resource is not None else ""
        except CORBA.Exception as exc:
            out.kind = f"not answering ({type(exc).__name__})"
            return out, conns, None
        since = []
        process: dict[str, Any] = {}
        for port in ports:
            try:
                if port.direction == "Provides" and port.obj_ptr._is_a(PROVIDES_STATISTICS):
                    stats = port.obj_ptr._narrow(S.BULKIO.ProvidesPortStatisticsProvider).statistics
                    self._add_provides(out, stats)
                    since.append(stats.timeSinceLastCall)
                    if (lat := _latency(comp.name, _keywords(stats))) is not None:
                        latencies.append(lat)
                    process = process or _keywords(stats)
                elif port.direction == "Uses" and port.obj_ptr._is_a(USES_STATISTICS):
                    for entry in port.obj_ptr._narrow(S.BULKIO.UsesPortStatisticsProvider).statistics:
                        kw = _keywords(entry.statistics)
                        process = process or kw
                        _add_uses(out, kw)
                        conns.append(
                            ConnectionSample(
                                entry.connectionId,
                                comp.name,
                                "",
                                int(kw.get("calls", 0)),
                                float(entry.statistics.callsPerSecond),
                            )
                        )
            except CORBA.Exception:
                continue  # a port that does not answer: the others still shown
        if since:
            out.since_last_s = min(since)
        out.holding = sum(x or 0 for x in (out.queued, out.reorder_held))
        out.finished = max(0, out.taken - out.holding)
        self._add_process(out, process)
        latency = None
        if latencies:
            latency = PathLatency(
                comp.name,
                max(x.packets for x in latencies),
                max(x.p50_us for x in latencies),
                max(x.p99_us for x in latencies),
                max(x.max_us for x in latencies),
            )
        return out, conns, latency

    def _add_process(self, out: ComponentSample, kw: dict[str, Any]) -> None:
        """Its process's pid, threads, and CPU % since the last sample (from
        the keywords every scabench port adds; none from a REDHAWK port).
        Components of one process show its one figure."""
        if "pid" not in kw or "process_cpu_us" not in kw:
            return
        out.pid = pid = int(kw["pid"])
        out.threads_now = int(kw["process_threads"]) if "process_threads" in kw else None
        if pid not in self.cpu_now:
            now, cpu_us = time.monotonic(), int(kw["process_cpu_us"])
            before = self.cpu_before.get(pid)
            percent = None
            if before is not None and now > before[0]:
                percent = 100.0 * (cpu_us - before[1]) / 1e6 / (now - before[0])
            self.cpu_now[pid] = percent
            self.cpu_before[pid] = (now, cpu_us)
        out.cpu_percent = self.cpu_now[pid]

    @staticmethod
    def _add_provides(out: ComponentSample, stats: Any) -> None:
        """A provides port's figures into its component's: BulkIO's rates,
        and the keywords scabench's ports add (docs/reference/bulkio.md):
        `calls` taken, `queued` in the worker queue and `reorder_held` in its
        reorder buffers now, `refused`, and a BulkIO port's `t_backwards`
        (packets whose T went back: its order)."""
        kw = _keywords(stats)
        out.packets_per_s += float(stats.callsPerSecond)
        out.bits_per_s += float(stats.bitsPerSecond)
        out.taken += int(kw.get("calls", 0))
        out.reordered += int(kw.get("t_backwards", 0))
        out.refused += int(kw.get("refused", 0))
        for key, attr in (("queued", "queued"), ("reorder_held", "reorder_held")):
            if key in kw:
                setattr(out, attr, (getattr(out, attr) or 0) + int(kw[key]))


def _latency(component: str, kw: dict[str, Any]) -> PathLatency | None:
    """A provides port's latency so far (send to arrival) from its keywords;
    None before a packet with a send time, or from a port without them."""
    count = int(kw.get("latency_count", 0))
    if count == 0 or "latency_p50_ns" not in kw:
        return None
    return PathLatency(
        component,
        count,
        int(kw["latency_p50_ns"]) / 1000.0,
        int(kw["latency_p99_ns"]) / 1000.0,
        int(kw["latency_max_ns"]) / 1000.0,
    )


def _add_uses(out: ComponentSample, kw: dict[str, Any]) -> None:
    """A uses connection's depths into its component's: its credits
    outstanding (a credits connection) and its ring's depth (shm)."""
    for key in ("credits_outstanding", "ring_depth"):
        if key in kw:
            setattr(out, key, (getattr(out, key) or 0) + int(kw[key]))

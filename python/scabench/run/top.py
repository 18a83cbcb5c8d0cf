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
beside BulkIO's figures (calls taken, packets queued now, refused, and on a
BulkIO port packets whose T went back: docs/reference/bulkio.md); a REDHAWK
component's answer BulkIO's alone (the calls among its keywords where it
gives them). What the wire has no place for stays empty: "done" is what was
taken less what is queued, threads seen and CPU per process are not shown,
and latency needs the records (`run --live`)."""

import time
from dataclasses import dataclass
from typing import Any

from omniORB import CORBA

from scabench.components import idl
from scabench.errors import ScabenchError
from scabench.run.live import ComponentSample, ConnectionSample, LiveSample
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

    def sample(self) -> LiveSample:
        components, connections = [], []
        for comp in self.components:
            c, conns = self._component(comp)
            components.append(c)
            connections.extend(conns)
        return LiveSample(
            time.monotonic() - self.started,
            0,
            0,
            None,
            components,
            connections,
            [],
            watching=self.where,
        )

    def _component(self, comp: _Component) -> tuple[ComponentSample, list[ConnectionSample]]:
        out = ComponentSample(comp.name, "")
        conns: list[ConnectionSample] = []
        try:
            resource = comp.ref._narrow(S.CF.Resource)
            ports = resource.getPortSet() if resource is not None else []
            out.kind = (resource.softwareProfile.rsplit("/", 1)[-1] or "") if resource is not None else ""
        except CORBA.Exception as exc:
            out.kind = f"not answering ({type(exc).__name__})"
            return out, conns
        since = []
        for port in ports:
            try:
                if port.direction == "Provides" and port.obj_ptr._is_a(PROVIDES_STATISTICS):
                    stats = port.obj_ptr._narrow(S.BULKIO.ProvidesPortStatisticsProvider).statistics
                    self._add_provides(out, stats)
                    since.append(stats.timeSinceLastCall)
                elif port.direction == "Uses" and port.obj_ptr._is_a(USES_STATISTICS):
                    for entry in port.obj_ptr._narrow(S.BULKIO.UsesPortStatisticsProvider).statistics:
                        kw = _keywords(entry.statistics)
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
        out.finished = max(0, out.taken - out.holding)
        return out, conns

    @staticmethod
    def _add_provides(out: ComponentSample, stats: Any) -> None:
        """A provides port's figures into its component's: BulkIO's rates,
        and the keywords scabench's ports add (docs/reference/bulkio.md):
        `calls` taken, `queued` in the worker queue now, `refused`, and a
        BulkIO port's `t_backwards` (packets whose T went back: its order)."""
        kw = _keywords(stats)
        out.packets_per_s += float(stats.callsPerSecond)
        out.bits_per_s += float(stats.bitsPerSecond)
        out.taken += int(kw.get("calls", 0))
        out.holding += int(kw.get("queued", 0))
        out.reordered += int(kw.get("t_backwards", 0))
        out.refused += int(kw.get("refused", 0))

"""A run's packets as a Chrome trace-event file, the JSON that Perfetto
(ui.perfetto.dev) and chrome://tracing open (docs/reference/trace.md).

Made after the run from its records (run/journeys.py): a process per
component, a thread track per thread or role that worked its packets, a
complete event ("X") per packet with its time in work and sending inside,
its time queued on a queue track of its own, a flow ("s" to "f") from each
packet's send to where the next component took it, and counters of the
packets each component held and queued and of the credits outstanding on
each credits connection. A long run is cut to a window of its first
packets, which the file states (otherData.window).

A command asks for traces with `tracing(...)` around its runs (one file,
or one per run in a folder; a sweep names each after its point and the
run within it: `TraceRequest.at_point`); the runner writes them as it
analyses each run (`write_requested`)."""

import contextlib
import contextvars
import json
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from scabench.model.sad.load import waveform_stem
from scabench.model.spec import Spec
from scabench.run.journeys import Journey, Journeys, window

# Packets of each stream a trace holds unless told otherwise: enough to see
# a run settle, small enough for the viewer (a few MB).
DEFAULT_PACKETS = 2000
TRACE_SUFFIX = ".trace.json"


def _us(ns: np.ndarray | int | float, t0: int) -> np.ndarray:
    """Times as µs since t0, to the ns: the records' own precision, so that
    spans made of the same times nest exactly and a packet's span never
    shares an end with the next one's start by rounding."""
    return (np.asarray(ns, np.float64) - t0) / 1000.0


# How far inside its slice a flow's end lies: the viewer binds a flow's end
# to the slice open on its track at that time, and at a slice's very end the
# next packet's slice may already be open (a worker starts the next packet at
# the ns the last one was done). More than a viewer's rounding of ts to ns.
FLOW_INSET_NS = 10


def _inside(at: int, lo: int, hi: int) -> float:
    """`at`, moved strictly inside the slice (lo, hi) (ns) where it is not."""
    inset = min(FLOW_INSET_NS, (hi - lo) / 2)
    return min(max(at, lo + inset), hi - inset)


def _lanes(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each interval's lane, the lowest free one in start order, so that the
    intervals of one lane never overlap (a track's spans must nest)."""
    lane = np.zeros(starts.size, np.int64)
    free_at: list[int] = []
    for i in np.argsort(starts, kind="stable"):
        for k, end in enumerate(free_at):
            if end <= starts[i]:
                lane[i], free_at[k] = k, int(ends[i])
                break
        else:
            lane[i] = len(free_at)
            free_at.append(int(ends[i]))
    return lane


def _steps(name: str, up_ns: np.ndarray, down_ns: np.ndarray) -> tuple[str, np.ndarray, np.ndarray]:
    """A counter's value after each change: +1 at each `up`, -1 at each `down`."""
    times = np.concatenate((up_ns, down_ns))
    delta = np.concatenate((np.ones(up_ns.size, np.int64), -np.ones(down_ns.size, np.int64)))
    order = np.lexsort((delta, times))  # at one time, the -1 first: no false peak
    times, value = times[order], np.cumsum(delta[order])
    last = np.concatenate((times[1:] != times[:-1], [True])) if times.size else np.zeros(0, bool)
    return name, times[last], value[last]


@dataclass
class _Events:
    """The trace's events, each track's kept in time order."""

    t0: int
    end_us: float  # counters are cut here: the window's last packet done
    events: list[dict[str, Any]] = field(default_factory=list)
    next_flow: int = 1

    def meta(self, pid: int, tid: int | None, what: str, value: Any) -> None:
        event = {
            "ph": "M",
            "pid": pid,
            "name": what,
            "args": {"name" if what.endswith("name") else "sort_index": value},
        }
        if tid is not None:
            event["tid"] = tid
        self.events.append(event)

    def span(self, pid: int, tid: int, name: str, cat: str, start: int, end: int, args: dict | None = None) -> None:
        """A complete event from `start` to `end` (ns on the run's clock)."""
        ts, dur = float(_us(start, self.t0)), max(0, end - start) / 1000.0
        event = {"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat, "ts": ts, "dur": dur}
        if args:
            event["args"] = args
        self.events.append(event)

    def flow(self, start: "_At", end: "_At", packet: dict[str, int]) -> None:
        """An arrow of `packet` (its sequence and stream) from the slice open
        at `start` (pid, tid, ns) to the one open at `end`."""
        fid, self.next_flow = self.next_flow, self.next_flow + 1
        common = {"id": fid, "name": "packet", "cat": "flow", "args": packet}
        (pa, ta, sa), (pb, tb, sb) = start, end
        self.events.append({"ph": "s", "pid": pa, "tid": ta, "ts": float(_us(sa, self.t0))} | common)
        self.events.append({"ph": "f", "bp": "e", "pid": pb, "tid": tb, "ts": float(_us(sb, self.t0))} | common)

    def counter(self, pid: int, steps: tuple[str, np.ndarray, np.ndarray]) -> None:
        name, times, values = steps
        us = _us(times, self.t0)
        keep = us <= self.end_us
        for ts, v in zip(us[keep], values[keep]):
            self.events.append({"ph": "C", "pid": pid, "name": name, "ts": float(ts), "args": {name: int(v)}})


_At = tuple[int, int, float]  # (pid, tid, ns on the run's clock): a point on a track
_Opens = dict[int, tuple[int, float]]  # record index: (tid, ns) where a flow binds to its slice


def _component(ev: _Events, pid: int, j: Journey, shown: np.ndarray) -> tuple[_Opens, _Opens]:
    """One component's tracks and spans. Returns where each shown packet's
    first slice opens (a flow in ends there) and where its sending opens
    (a flow out starts there), as {record index: (tid, ns)}, each strictly
    inside the packet's own slice."""
    p = j.packets
    start, done, arrive, send = p.start_ns, p.done_ns, p.arrive_ns, p.send_ns
    ev.meta(pid, None, "process_name", j.name + (f" ({j.kind})" if j.kind != j.name else ""))
    ev.meta(pid, None, "process_sort_index", pid)
    for tid, track in enumerate(j.tracks, start=1):
        ev.meta(pid, tid, "thread_name", track)
        ev.meta(pid, tid, "thread_sort_index", tid)
    queued = shown & (start > arrive)
    lane = _lanes(arrive[queued], start[queued])
    first_queue_tid = len(j.tracks) + 1
    for k in range(int(lane.max()) + 1 if lane.size else 0):
        ev.meta(pid, first_queue_tid + k, "thread_name", f"queued {k + 1}")
        ev.meta(pid, first_queue_tid + k, "thread_sort_index", first_queue_tid + k)
    queue_tid = dict(zip(np.flatnonzero(queued), first_queue_tid + lane))
    took: _Opens = {}
    sends: _Opens = {}
    for i in np.flatnonzero(shown):
        tid = int(p.track[i]) + 1
        seq, stream = int(p.sequence[i]), int(p.stream[i])
        t_arrive, t_start, t_send, t_done = int(arrive[i]), int(start[i]), int(send[i]), int(done[i])
        packet = {"sequence": seq, "stream": stream}
        label = f"#{seq}" + (f" s{stream}" if stream else "")
        args = dict(packet)
        if not j.source:
            args |= {"connection": int(p.connection[i]), "thread_id": int(p.thread_id[i])}
            args["reordered"] = bool(p.reordered[i])
        if p.reordered[i]:
            label += " (out of order)"
        ev.span(pid, tid, label, "packet", t_start, t_done, args)
        if j.source:
            ev.span(pid, tid, "sending", "sending", t_start, t_done)
        else:
            ev.span(pid, tid, "in work", "work", t_start, t_send if t_send >= 0 else t_done)
            if t_send >= 0:
                ev.span(pid, tid, "sending", "sending", t_send, t_done)
        work_begins = _inside(t_start, t_start, t_done)
        if i in queue_tid:
            qtid = int(queue_tid[i])
            ev.span(pid, qtid, f"#{seq} queued", "queued", t_arrive, t_start, packet)
            ev.flow((pid, qtid, _inside(t_start, t_arrive, t_start)), (pid, tid, work_begins), packet)
            took[int(i)] = (qtid, _inside(t_arrive, t_arrive, t_start))
        else:
            took[int(i)] = (tid, work_begins)
        # A flow out starts in the sending slice, or (none seen) at the packet's
        # last moment: inside its own slice, never on the next packet's start.
        sends[int(i)] = (tid, _inside(t_send, t_send, t_done) if t_send >= 0 else _inside(t_done, t_start, t_done))
    return took, sends


def chrome_trace(all_of: Journeys, packets: int, about: Mapping[str, Any]) -> dict[str, Any]:
    """The trace of the first `packets` packets of each stream (a dict to
    write as JSON); `about` goes into otherData with the window."""
    shown_of = window(all_of, packets)
    ends = [int(j.packets.done_ns.max()) for j in shown_of.components if j.packets.done_ns.size]
    ev = _Events(all_of.t0_ns, float(_us(max(ends), all_of.t0_ns)) if ends else 0.0)
    pids = {j.name: pid for pid, j in enumerate(all_of.components, start=1)}
    took, sends = {}, {}
    for j in all_of.components:
        took[j.name], sends[j.name] = _component(ev, pids[j.name], j, j.packets.sequence < packets)
    # A flow per packet and hop: from the sender's sending to where the receiver took it.
    for conn, number in all_of.connections:
        sender, receiver = all_of.of(conn.uses[0]), all_of.of(conn.provides[0])
        if sender is None or receiver is None:
            continue
        s_keys, r_keys = sender.packets.keys, receiver.packets.keys
        position = {int(k): i for i, k in reversed(list(enumerate(s_keys)))}  # each packet's first record there
        for i in np.flatnonzero((receiver.packets.connection == number) & (receiver.packets.sequence < packets)):
            at = position.get(int(r_keys[i]))
            if at is None or at not in sends[sender.name]:
                continue
            packet = {"sequence": int(receiver.packets.sequence[i]), "stream": int(receiver.packets.stream[i])}
            ev.flow(
                (pids[sender.name], *sends[sender.name][at]),
                (pids[receiver.name], *took[receiver.name][int(i)]),
                packet,
            )
    for j in all_of.components:
        p, pid = j.packets, pids[j.name]
        if not j.source:
            ev.counter(pid, _steps("held", p.arrive_ns, p.done_ns))
        if j.deferred:
            mine = np.isin(p.track, list(j.deferred))
            ev.counter(pid, _steps("queued", p.arrive_ns[mine], p.start_ns[mine]))
    for conn, number in all_of.connections:
        if conn.policy.flow != "credits":
            continue
        sender, receiver = all_of.of(conn.uses[0]), all_of.of(conn.provides[0])
        if sender is None or receiver is None:
            continue
        # A credit is taken as the packet goes and given back once the receiver
        # is done with it: only the sender's packets this connection carried
        # (a sender on two paths sends others on its other ports).
        into = receiver.packets.connection == number
        carried = np.isin(sender.packets.keys, receiver.packets.keys[into])
        s = sender.packets.take(carried)
        went = np.where(s.send_ns >= 0, s.send_ns, s.done_ns)
        back = receiver.packets.done_ns[into]
        ev.counter(pids[sender.name], _steps(f"credits outstanding ({conn.id})", went, back))
    # The metadata first, then every event in time order (so each track's);
    # the sort is stable, and a packet's span was added before the spans in it.
    meta = [e for e in ev.events if e["ph"] == "M"]
    timed = sorted((e for e in ev.events if e["ph"] != "M"), key=itemgetter("ts"))
    return {
        "traceEvents": meta + timed,
        "displayTimeUnit": "ms",
        "otherData": {
            **about,
            "window": {
                "packets": packets,
                "of": all_of.sent,
                "rule": f"the first {packets} packets of each stream (numbers 0 to {packets - 1})",
            },
            "time": "µs since the sources' first send, to the ns (CLOCK_MONOTONIC)",
            "derived": "work start where one thread works a port's packets in turn: when it was free; "
            "sending: from the receiver's upcall entry (docs/reference/trace.md)",
        },
    }


def about_run(spec: Spec, result: Any) -> dict[str, Any]:
    """What otherData says of the run: its spec, waveform and when, and the
    spec as it ran (the result's `spec`: a sweep's point, a campaign's
    configuration, each told apart by it)."""
    return {
        "spec": str(spec.path),
        "waveform": waveform_stem(spec.path) or "waveform",
        "started_at": getattr(result, "started_at", None),
        "scabench": getattr(result, "scabench", None),
        "resolved": spec.describe(),
    }


def write_trace(path: str | os.PathLike, doc: dict[str, Any]) -> Path:
    """Writes the trace beside its name and renames it over it (a reader
    never sees half a file)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    try:
        part.write_text(json.dumps(doc, separators=(",", ":")))
        part.replace(target)
    except OSError:
        part.unlink(missing_ok=True)  # a full disk: leave no half file taking its room
        raise
    return target


@dataclass
class TraceRequest:
    """Where a command wants its runs' traces: `target` is the file (one
    run) or the folder (`per_run`: a file per run, numbered in the order
    they ran and named after the spec); `packets`: the window."""

    target: Path
    packets: int = DEFAULT_PACKETS
    per_run: bool = False
    written: list[Path] = field(default_factory=list)
    unwritten: list[Path] = field(default_factory=list)  # those that could not be written
    # The sweep point the runs now belong to (at_point): its short name
    # (p01) and its settings in words; None outside a sweep.
    point: tuple[str, str] | None = None

    @contextlib.contextmanager
    def at_point(self, name: str, settings: str) -> Iterator[None]:
        """The runs inside are a sweep point's: their files are named after
        it and the run within it (NNN-SPEC-p01-r2), and say its settings."""
        before, self.point = self.point, (name, settings)
        try:
            yield
        finally:
            self.point = before

    def next_path(self, spec: Spec) -> Path:
        """The file for the next run: a folder's next number, after the
        files already there (a sweep resumed in its folder keeps the traces
        of the runs it kept), then at a sweep point the point and the run's
        number within it."""
        if not self.per_run:
            return self.target
        taken = [p.name.split("-", 1)[0] for p in self.target.glob(f"*{TRACE_SUFFIX}")]
        number = max((int(t) for t in taken if t.isdigit()), default=0) + 1
        stem = waveform_stem(spec.path) or "run"
        if self.point is None:
            return self.target / f"{number:03d}-{stem}{TRACE_SUFFIX}"
        point = self.point[0]
        runs = len(list(self.target.glob(f"[0-9][0-9][0-9]-{stem}-{point}-r*{TRACE_SUFFIX}")))
        return self.target / f"{number:03d}-{stem}-{point}-r{runs + 1}{TRACE_SUFFIX}"


_REQUEST: contextvars.ContextVar[TraceRequest | None] = contextvars.ContextVar("trace_request", default=None)


@contextlib.contextmanager
def tracing(request: TraceRequest) -> Iterator[TraceRequest]:
    """Every run inside writes its trace where `request` says."""
    token = _REQUEST.set(request)
    try:
        yield request
    finally:
        _REQUEST.reset(token)


@contextlib.contextmanager
def traces_at_point(name: str, settings: str) -> Iterator[None]:
    """The runs inside are a sweep point's (TraceRequest.at_point), where a
    command asked for traces; nothing otherwise."""
    request = _REQUEST.get()
    if request is None:
        yield
        return
    with request.at_point(name, settings):
        yield


def write_requested(spec: Spec, all_of: Journeys, result: Any) -> Path | None:
    """The run's trace, where a command asked for one (tracing); None if none
    did, or where it could not be written (a warning on stderr, the first
    time only: the runs after it likely fail alike)."""
    request = _REQUEST.get()
    if request is None:
        return None
    about = about_run(spec, result)
    if request.point is not None:
        about["point"] = {"name": request.point[0], "settings": request.point[1]}
    doc = chrome_trace(all_of, request.packets, about)
    path = request.next_path(spec)
    try:
        write_trace(path, doc)
    except OSError as exc:
        # A trace is a view of the run, not its result: a full disk in the
        # middle of a sweep costs the trace, never the run or the command.
        if not request.unwritten:
            reason = exc.strerror or str(exc)
            print(f"warning: trace not written: {path}: {reason} (the runs' results are kept)", file=sys.stderr)
        request.unwritten.append(path)
        return None
    request.written.append(path)
    return path

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
or one per run in a folder); the runner writes them as it analyses each
run (`write_requested`)."""

import contextlib
import contextvars
import json
import os
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


def _us(ns: np.ndarray | int, t0: int) -> np.ndarray:
    """Times as whole µs since t0: every end of a span is rounded the same
    way, so spans made of the same times nest exactly."""
    return np.rint((np.asarray(ns, np.int64) - t0) / 1000.0).astype(np.int64)


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
    end_us: int  # counters are cut here: the window's last packet done
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
        event = {"ph": "X", "pid": pid, "tid": tid, "name": name, "cat": cat, "ts": start, "dur": max(0, end - start)}
        if args:
            event["args"] = args
        self.events.append(event)

    def flow(self, start: tuple[int, int, int], end: tuple[int, int, int]) -> None:
        """An arrow from the slice open at `start` (pid, tid, ts) to the one open at `end`."""
        fid, self.next_flow = self.next_flow, self.next_flow + 1
        (pa, ta, sa), (pb, tb, sb) = start, end
        self.events.append({"ph": "s", "pid": pa, "tid": ta, "ts": sa, "id": fid, "name": "packet", "cat": "flow"})
        self.events.append(
            {"ph": "f", "bp": "e", "pid": pb, "tid": tb, "ts": sb, "id": fid, "name": "packet", "cat": "flow"}
        )

    def counter(self, pid: int, steps: tuple[str, np.ndarray, np.ndarray]) -> None:
        name, times, values = steps
        us = _us(times, self.t0)
        keep = us <= self.end_us
        for ts, v in zip(us[keep], values[keep]):
            self.events.append({"ph": "C", "pid": pid, "name": name, "ts": int(ts), "args": {name: int(v)}})


_Opens = dict[int, tuple[int, int]]  # record index: (tid, ts)


def _component(ev: _Events, pid: int, j: Journey, shown: np.ndarray) -> tuple[_Opens, _Opens]:
    """One component's tracks and spans. Returns where each shown packet's
    first slice opens (a flow in ends there) and where its sending opens
    (a flow out starts there), as {record index: (tid, ts)}."""
    p = j.packets
    start, done = _us(p.start_ns, ev.t0), _us(p.done_ns, ev.t0)
    arrive = _us(p.arrive_ns, ev.t0)
    send = np.where(p.send_ns >= 0, _us(p.send_ns, ev.t0), done)
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
        seq = int(p.sequence[i])
        label = f"#{seq}" + (f" s{int(p.stream[i])}" if p.stream[i] else "")
        args = {"sequence": seq, "stream": int(p.stream[i])}
        if not j.source:
            args |= {"connection": int(p.connection[i]), "thread_id": int(p.thread_id[i])}
            args["reordered"] = bool(p.reordered[i])
        if p.reordered[i]:
            label += " (out of order)"
        ev.span(pid, tid, label, "packet", int(start[i]), int(done[i]), args)
        if j.source:
            ev.span(pid, tid, "sending", "sending", int(start[i]), int(done[i]))
        else:
            ev.span(pid, tid, "in work", "work", int(start[i]), int(send[i]))
            if p.send_ns[i] >= 0:
                ev.span(pid, tid, "sending", "sending", int(send[i]), int(done[i]))
        if i in queue_tid:
            qtid = int(queue_tid[i])
            ev.span(pid, qtid, f"#{seq} queued", "queued", int(arrive[i]), int(start[i]), {"sequence": seq})
            ev.flow((pid, qtid, int(arrive[i])), (pid, tid, int(start[i])))
            took[int(i)] = (qtid, int(arrive[i]))
        else:
            took[int(i)] = (tid, int(start[i]))
        # A flow out starts in the sending slice, or (none seen) at the packet's last moment.
        sends[int(i)] = (tid, int(send[i]) if p.send_ns[i] >= 0 else int(done[i]))
    return took, sends


def chrome_trace(all_of: Journeys, packets: int, about: Mapping[str, Any]) -> dict[str, Any]:
    """The trace of the first `packets` packets of each stream (a dict to
    write as JSON); `about` goes into otherData with the window."""
    shown_of = window(all_of, packets)
    ends = [int(j.packets.done_ns.max()) for j in shown_of.components if j.packets.done_ns.size]
    ev = _Events(all_of.t0_ns, int(_us(max(ends), all_of.t0_ns)) if ends else 0)
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
            ev.flow((pids[sender.name], *sends[sender.name][at]), (pids[receiver.name], *took[receiver.name][int(i)]))
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
        # A credit is taken as the packet goes and given back once the receiver is done with it.
        went = np.where(sender.packets.send_ns >= 0, sender.packets.send_ns, sender.packets.done_ns)
        back = receiver.packets.done_ns[receiver.packets.connection == number]
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
            "time": "µs since the sources' first send (CLOCK_MONOTONIC)",
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
    part.write_text(json.dumps(doc, separators=(",", ":")))
    part.replace(target)
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

    def next_path(self, spec: Spec) -> Path:
        """The file for the next run: a folder's next number, after the
        files already there (a sweep resumed in its folder keeps the traces
        of the runs it kept)."""
        if not self.per_run:
            return self.target
        taken = [p.name.split("-", 1)[0] for p in self.target.glob(f"*{TRACE_SUFFIX}")]
        number = max((int(t) for t in taken if t.isdigit()), default=0) + 1
        return self.target / f"{number:03d}-{waveform_stem(spec.path) or 'run'}{TRACE_SUFFIX}"


_REQUEST: contextvars.ContextVar[TraceRequest | None] = contextvars.ContextVar("trace_request", default=None)


@contextlib.contextmanager
def tracing(request: TraceRequest) -> Iterator[TraceRequest]:
    """Every run inside writes its trace where `request` says."""
    token = _REQUEST.set(request)
    try:
        yield request
    finally:
        _REQUEST.reset(token)


def write_requested(spec: Spec, all_of: Journeys, result: Any) -> Path | None:
    """The run's trace, where a command asked for one (tracing); None if none did."""
    request = _REQUEST.get()
    if request is None:
        return None
    doc = chrome_trace(all_of, request.packets, about_run(spec, result))
    path = write_trace(request.next_path(spec), doc)
    request.written.append(path)
    return path

"""Every packet's journey through a run, from the per-packet records: when
each component took it, began its work, began sending it on and was done
with it, on which thread or role (docs/reference/trace.md). The trace file
(run/trace.py) and the timeline (RunResult.timeline, drawn by
report/timeline.py) are both made from it.

A record holds two times (records.py): the upcall's entry (a source: its
send's start) and when the packet was processed and forwarded (a source:
when the send returned). The rest is worked out, and the trace says so:

- work start: where the receiving thread works the packet itself (no
  worker, no reorder buffer) it starts at arrival, on that thread. Where
  one thread works the port's packets in turn (the worker, or the reorder
  buffer's releaser), it starts when that thread is free: at arrival, or
  when the packet before it on that thread was done, whichever is later;
  the time between arrival and start is the packet's time queued.
- sending: from the first time a receiver took the packet (its upcall's
  entry) to the sender's done. A call that returns before the receiver's
  upcall begins (one-way) shows no sending: its send is part of its work.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scabench.model import graph
from scabench.model.spec import Connection, Spec
from scabench.run.graph_figures import connection_numbers, stream_of
from scabench.run.records import Records
from scabench.run.results import Timeline

# A packet's key across components: its number and its stream (as graph_figures matches them).
_STREAM_BITS = 16


def packet_keys(sequence: np.ndarray, stream: np.ndarray) -> np.ndarray:
    return (np.asarray(sequence, np.int64) << _STREAM_BITS) | np.asarray(stream, np.int64)


@dataclass
class Handling:
    """One component's packets (every record it finished), in arrival order,
    as numpy arrays of one length; times in ns on the run's clock."""

    sequence: np.ndarray
    stream: np.ndarray
    connection: np.ndarray  # the number it came in on (0 at a source)
    thread_id: np.ndarray  # the thread that received it (a source: the sending thread)
    track: np.ndarray  # index into Journey.tracks: the thread or role that worked it
    arrive_ns: np.ndarray
    start_ns: np.ndarray  # its work began
    send_ns: np.ndarray  # sending on began; -1 where not seen (see the module's docstring)
    done_ns: np.ndarray
    reordered: np.ndarray  # bool: arrived out of its stream's order (not the previous + 1)

    @property
    def keys(self) -> np.ndarray:
        return packet_keys(self.sequence, self.stream)

    @property
    def queued(self) -> np.ndarray:
        """bool: waited between arrival and the start of its work."""
        return self.start_ns > self.arrive_ns

    def take(self, mask: np.ndarray) -> "Handling":
        return Handling(**{name: getattr(self, name)[mask] for name in self.__dataclass_fields__})


@dataclass
class Journey:
    """One component: what kind, its tracks (the threads and roles that
    worked its packets, by name), and its packets."""

    name: str
    kind: str
    source: bool
    tracks: list[str]
    packets: Handling
    # The tracks whose packets wait for one thread (a worker, a releaser):
    # their time between arrival and start is time queued.
    deferred: set[int] = field(default_factory=set)


@dataclass
class Journeys:
    """Every recording component's journey, in data-flow order, and the
    connections between them; t0_ns: the sources' first send."""

    t0_ns: int
    components: list[Journey]
    connections: list[tuple[Connection, int]]  # each with the number its packets carry at the receiver
    sent: int  # packets the sources sent, all streams

    def of(self, name: str) -> Journey | None:
        return next((j for j in self.components if j.name == name), None)


def _handler(spec: Spec, name: str, into: list[Connection]) -> dict[int, tuple[str, bool]]:
    """{connection number at `name`: (the track that works its packets where
    one thread does, else "", whether that track queues)}: the port's worker
    (one per provides port), else a reorder buffer's releaser (one per
    connection), else the receiving thread itself ("")."""
    numbers = connection_numbers(spec)
    out = {}
    for conn in into:
        if conn.policy.worker_depth:
            out[numbers[conn.id]] = (f"worker ({conn.provides[1]})", True)
        elif conn.policy.ordering == "resequence":
            out[numbers[conn.id]] = (f"releaser ({conn.uses[0]})", True)
        else:
            out[numbers[conn.id]] = ("", False)
    return out


def _reordered(sequence: np.ndarray, stream: np.ndarray) -> np.ndarray:
    """Each arrival whose number is not its stream's previous arrival's + 1
    (metrics.reordered_from_previous, per arrival)."""
    out = np.zeros(sequence.size, bool)
    for s in np.unique(stream):
        where = np.flatnonzero(stream == s)
        seq = sequence[where]
        previous = np.concatenate(([-1], seq[:-1]))
        out[where] = seq != previous + 1
    return out


def _serial_starts(arrive: np.ndarray, done: np.ndarray) -> np.ndarray:
    """Work starts where one thread works the packets in turn: each at its
    arrival or when the one before it (in the order they were done) was
    done, whichever is later."""
    order = np.argsort(done, kind="stable")
    previous_done = np.concatenate(([np.iinfo(np.int64).min], done[order][:-1]))
    start = np.empty_like(arrive)
    start[order] = np.maximum(arrive[order], previous_done)
    return start


def _first_arrivals(keys: np.ndarray, arrive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique keys, each one's first arrival)."""
    order = np.lexsort((arrive, keys))
    keys, arrive = keys[order], arrive[order]
    first = np.concatenate(([True], keys[1:] != keys[:-1])) if keys.size else np.zeros(0, bool)
    return keys[first], arrive[first]


def journeys(spec: Spec, records: Mapping[str, Records]) -> Journeys:
    """The journeys of every packet a recording component finished."""
    sources = set(graph.sources(spec))
    numbers = connection_numbers(spec)
    starts = [int(records[s].arrive_ns.min()) for s in sources if s in records and records[s].arrive_ns.size]
    t0 = min(starts, default=min((int(r.arrive_ns.min()) for r in records.values() if r.arrive_ns.size), default=0))
    handled: dict[str, Handling] = {}
    tracks: dict[str, list[str]] = {}
    deferred: dict[str, set[int]] = {}
    for name in graph.topological_order(spec):
        r = records.get(name)
        if r is None:
            continue
        done = r.done_ns > 0
        n = int(np.count_nonzero(done))
        sequence, arrive, finished, thread = r.sequence[done], r.arrive_ns[done], r.done_ns[done], r.thread_id[done]
        if name in sources:
            stream = np.full(n, stream_of(spec, name), np.int64)
            connection = np.zeros(n, np.int64)
        else:
            stream = r.stream[done] if r.stream is not None else np.zeros(n, np.int64)
            connection = r.connection[done] if r.connection is not None else np.zeros(n, np.int64)
        into = [c for c in spec.connections if c.provides[0] == name]
        handlers = _handler(spec, name, into)
        names: list[str] = []
        track = np.zeros(n, np.int64)
        start = arrive.copy()
        queues: set[int] = set()
        for number in np.unique(connection) if n else []:
            mine = connection == number
            role, queues_here = handlers.get(int(number), ("", False))
            if role:
                if role not in names:
                    names.append(role)
                track[mine] = names.index(role)
                if queues_here:
                    queues.add(names.index(role))
            else:  # worked on the thread that received it
                for tid in np.unique(thread[mine]):
                    label = f"{'send' if name in sources else 'thread'} {int(tid)}"
                    if label not in names:
                        names.append(label)
                    track[mine & (thread == tid)] = names.index(label)
        for index in queues:
            mine = track == index
            start[mine] = _serial_starts(arrive[mine], finished[mine])
        handled[name] = Handling(
            sequence=sequence,
            stream=stream,
            connection=connection,
            thread_id=thread,
            track=track,
            arrive_ns=arrive,
            start_ns=start,
            send_ns=arrive.copy() if name in sources else np.full(n, -1, np.int64),
            done_ns=finished,
            reordered=_reordered(sequence, stream) if name not in sources else np.zeros(n, bool),
        )
        tracks[name], deferred[name] = names, queues
    for name, h in handled.items():
        if name in sources:
            continue
        # Sending began when a receiver first took the packet, within its work here.
        taken = [
            (handled[c.provides[0]], numbers[c.id])
            for c in spec.connections
            if c.uses[0] == name and c.provides[0] in handled
        ]
        first = np.full(h.sequence.size, np.iinfo(np.int64).max, np.int64)
        for receiver, number in taken:
            mine = receiver.connection == number
            keys, arrive = _first_arrivals(receiver.keys[mine], receiver.arrive_ns[mine])
            if keys.size == 0:
                continue
            pos = np.minimum(np.searchsorted(keys, h.keys), keys.size - 1)
            found = keys[pos] == h.keys
            first = np.where(found, np.minimum(first, arrive[pos]), first)
        within = (first >= h.start_ns) & (first <= h.done_ns)
        h.send_ns = np.where(within, first, -1)
    components = [
        Journey(name, spec.component(name).kind, name in sources, tracks[name], h, deferred[name])
        for name, h in handled.items()
    ]
    sent = sum(int(records[s].sequence.size) for s in sources if s in records)
    return Journeys(t0, components, [(c, numbers[c.id]) for c in spec.connections], sent)


def window(all_of: Journeys, packets: int) -> Journeys:
    """The same journeys of the first `packets` packets of each stream
    (numbers below `packets`: a source numbers its packets from 0)."""
    return Journeys(
        all_of.t0_ns,
        [
            Journey(j.name, j.kind, j.source, j.tracks, j.packets.take(j.packets.sequence < packets), j.deferred)
            for j in all_of.components
        ],
        all_of.connections,
        all_of.sent,
    )


# Packets of each stream a run's timeline keeps (RunResult.timeline): enough
# to see a pipeline fill (or not) and packets overtake, few enough to draw.
TIMELINE_PACKETS = 32


def timeline(all_of: Journeys, packets: int = TIMELINE_PACKETS) -> Timeline:
    """The first `packets` packets of each stream, as a run's result keeps them."""
    ms = lambda ns: round((int(ns) - all_of.t0_ns) / 1e6, 4)  # noqa: E731
    lanes = []
    for j in window(all_of, packets).components:
        p = j.packets
        spans: list[list[Any]] = [
            [int(p.sequence[i]), int(p.stream[i]), int(p.track[i]), ms(p.arrive_ns[i]), ms(p.start_ns[i])]
            + [ms(p.send_ns[i]) if p.send_ns[i] >= 0 else None, ms(p.done_ns[i]), int(p.reordered[i])]
            for i in range(p.sequence.size)
        ]
        lanes.append({"component": j.name, "kind": j.kind, "tracks": list(j.tracks), "spans": spans})
    return Timeline(packets, lanes)

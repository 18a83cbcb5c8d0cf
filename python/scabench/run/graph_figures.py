"""Measurement on graphs: the figures of a run whose waveform is a graph
(fan-out, fan-in, several sources and sinks), from the per-packet records
and each component's per-connection counts (docs/reference/metrics.md,
"Measurement on graphs").

- a path (model/graph.paths) is one source's stream as one sink finished
  it: its latency, and the packets that did not arrive, told apart as
  dropped (on purpose, by a drop fan-out on the way) or lost;
- a stream's order is counted at every component that records, each
  stream on its own (two streams merged interleave, which is no
  reordering);
- a connection's figures are its sending port's counts (the sender's
  `<name>.connections.json`) beside what the receiver's records show of the
  packets that came in on it: each record's flags carry the number of the
  connection it came in on (low 16 bits), numbered per receiving component
  in the order the launcher attaches them, the spec's.

A packet keeps its number and its stream id through the components (the
ports stamp them; latency since send rests on the same): a component that
makes packets of its own numbering (a decoder that emits fewer) leaves
numbers the source never sent, which no path matches.
"""

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from scabench.model import graph
from scabench.model.pipeline import path_graph
from scabench.model.policy import Policy, parse_policy
from scabench.model.spec import Connection, Spec
from scabench.model.transport import hop_transport
from scabench.run import metrics
from scabench.run.records import Records
from scabench.run.results import HopResult, Latency, PathResult, StreamOrder

SIDECAR_SUFFIX = ".connections.json"
# A record's key for matching one packet across components: its number and its stream.
_STREAM_BITS = 16


def read_sidecars(
    spec: Spec, run_dir: Path, stats: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """{component: its per-connection counts}, in either shape a component
    gives them: its `<name>.connections.json` in the run directory (a
    runtime component), else its `stat NAME connections JSON` line among
    the run's stats (a Python component the run started as an external
    program, which is given no record directory). A component that gave
    neither (a runtime before them, another external program, a run cut
    short) is left out: its figures are then None."""
    out = {}
    for c in spec.components:
        path = run_dir / f"{c.name}{SIDECAR_SUFFIX}"
        try:
            out[c.name] = json.loads(path.read_text())
            continue
        except (OSError, ValueError):
            pass
        reported = ((stats or {}).get(c.name) or {}).get("connections")
        try:
            counts = json.loads(reported) if isinstance(reported, str) else reported
        except ValueError:
            continue
        if isinstance(counts, dict):
            out[c.name] = counts
    return out


def policy_label(policy: Policy, fanout: str | None = None, protocol: str | None = None) -> str:
    """A connection's policy in a few words, for a drawing or a table: its
    call, then its sync and dispatch where they are not the defaults, its
    worker's depth, and its fan-out where it is not sequential ("twoway",
    "oneway sync:none worker:64", "oneway fanout:drop"), and its protocol
    where it is not scabench's own ("twoway protocol:bulkio"). fanout,
    protocol: the sending port's, where its counts say (else the policy's)."""
    default = parse_policy({})
    parts = [policy.call]
    parts += [
        f"{key}:{getattr(policy, key)}" for key in ("sync", "dispatch") if getattr(policy, key) != getattr(default, key)
    ]
    if policy.worker_depth:
        parts.append(f"worker:{policy.worker_depth}")
    fanout = fanout or dict(policy.others).get("fanout")
    if fanout not in (None, "sequential"):
        parts.append(f"fanout:{fanout}")
    protocol = protocol or policy.protocol
    if protocol != "scabench":
        parts.append(f"protocol:{protocol}")
    return " ".join(parts)


def stream_of(spec: Spec, name: str) -> int:
    """The stream id a source stamps (spec_toml numbers several sources'
    streams; one source's is its own setting, 0 by default)."""
    return int(spec.component(name).properties.get("stream_id", 0))


def connection_numbers(spec: Spec) -> dict[str, int]:
    """{connection id: the number its packets carry at the receiver}: per
    receiving component, its connections in the spec's order (the launcher
    attaches them so), across all its provides ports."""
    seen: dict[str, int] = {}
    out = {}
    for conn in spec.connections:
        receiver = conn.provides[0]
        out[conn.id] = seen.get(receiver, 0)
        seen[receiver] = out[conn.id] + 1
    return out


def sidecar_entry(spec: Spec, sidecars: Mapping[str, dict[str, Any]], conn: Connection) -> dict[str, Any] | None:
    """The sending port's counts for one connection: the entry of the
    sender's sidecar with the connection's id, else the one at its place
    among the port's connections (connect order: the spec's)."""
    entries = [e for e in (sidecars.get(conn.uses[0]) or {}).get("uses", []) if e.get("port") == conn.uses[1]]
    by_id = [e for e in entries if e.get("connection_id") == conn.id]
    if by_id:
        return by_id[0]
    place = [c.id for c in spec.connections if tuple(c.uses) == tuple(conn.uses)].index(conn.id)
    return entries[place] if place < len(entries) else None


def _streams(spec: Spec, name: str, r: Records) -> np.ndarray:
    """Each record's stream id: a source's own (its records carry none)."""
    if name in graph.sources(spec):
        return np.full(r.sequence.size, stream_of(spec, name), dtype=np.int64)
    return r.stream if r.stream is not None else np.zeros(r.sequence.size, dtype=np.int64)


def _keys(sequence: np.ndarray, stream: np.ndarray) -> np.ndarray:
    return (np.asarray(sequence, np.int64) << _STREAM_BITS) | np.asarray(stream, np.int64)


def _into(spec: Spec, conn: Connection, r: Records) -> np.ndarray:
    """The receiver's records of the packets that came in on `conn`."""
    numbers = connection_numbers(spec)
    if r.connection is None:  # written before records named their connection: only one can be told
        return np.ones(r.sequence.size, bool)
    return r.connection == numbers[conn.id]


def _handled(spec: Spec, name: str, r: Records) -> np.ndarray:
    """The records of the packets a component passed on: done ones; for a
    source of one connection, those it sent (a send given up unsent is the
    last records'). A source of several counts one unsent per connection
    that gave the packet up: its records are all kept, and what each
    connection was offered is its own count (_offered)."""
    done = r.done_ns > 0
    if name in graph.sources(spec) and len(_leaving(spec, name)) == 1:
        sent = r.sequence.size - r.flow.get("unsent", 0)
        done &= np.arange(r.sequence.size) < sent
    return done


def _leaving(spec: Spec, name: str) -> list[Connection]:
    return [c for c in spec.connections if c.uses[0] == name]


def _offered(spec: Spec, sidecars: Mapping[str, dict[str, Any]], conn: Connection, handled: int) -> int:
    """The packets a source offered to one of its connections: sent or
    dropped there, its sidecar says, where the source has several (each
    gives up its own queue at a stop); else (one connection, or no
    sidecar) the packets it sent, `handled`."""
    entry = sidecar_entry(spec, sidecars, conn) if len(_leaving(spec, conn.uses[0])) > 1 else None
    if entry is None:
        return handled
    return int(entry.get("sent") or 0) + int(entry.get("dropped") or 0)


def hop_figures(spec: Spec, records: Mapping[str, Records], sidecars: Mapping[str, dict[str, Any]]) -> list[HopResult]:
    """Every connection's figures (HopResult), in the spec's order."""
    out = []
    for conn in spec.connections:
        entry = sidecar_entry(spec, sidecars, conn) or {}
        receiver, sender = records.get(conn.provides[0]), records.get(conn.uses[0])
        received = rate = mean = p99 = None
        if receiver is not None:
            mine = _into(spec, conn, receiver)
            received = int(np.count_nonzero(mine))
            arrive = np.sort(receiver.arrive_ns[mine])
            span_s = (int(arrive[-1]) - int(arrive[0])) / 1e9 if arrive.size > 1 else 0.0
            rate = (arrive.size - 1) / span_s if span_s > 0 else None
            if sender is not None:
                latency = _hop_latency_us(spec, conn, sender, receiver, mine)
                if latency.size:
                    mean, p99 = float(latency.mean()), metrics.percentile(latency, 99)
        fanout = entry.get("fanout", dict(conn.policy.others).get("fanout"))
        protocol = str(entry.get("protocol") or conn.policy.protocol)
        into = _provides_entry(sidecars, conn)
        out.append(
            HopResult(
                id=conn.id,
                policy=policy_label(conn.policy, fanout, protocol),
                transport=hop_transport(spec, conn),
                protocol=protocol,
                fanout=fanout,
                **{k: entry.get(k) for k in ("sent", "dropped", "unsent", "queue_peak", "blocked_ns")},
                received=received,
                rate_pps=rate,
                latency_us_mean=mean,
                latency_us_p99=p99,
                t_backwards=into.get("t_backwards"),
                t_invalid=into.get("t_invalid"),
            )
        )
    return out


def _provides_entry(sidecars: Mapping[str, dict[str, Any]], conn: Connection) -> dict[str, Any]:
    """The receiving port's entry in its component's sidecar ({} without
    one): a BulkIO port's is one for the port, whoever pushed into it."""
    entries = (sidecars.get(conn.provides[0]) or {}).get("provides", [])
    return next((e for e in entries if e.get("port") == conn.provides[1]), {})


def _hop_latency_us(spec: Spec, conn: Connection, sender: Records, receiver: Records, mine: np.ndarray) -> np.ndarray:
    """For each packet that came in on `conn`: its arrival at the receiver
    minus when the sender was done with it (µs)."""
    handled = _handled(spec, conn.uses[0], sender)
    sent_keys = _keys(sender.sequence, _streams(spec, conn.uses[0], sender))[handled]
    sent_done = sender.done_ns[handled]
    got_keys = _keys(receiver.sequence, _streams(spec, conn.provides[0], receiver))[mine]
    got_arrive = receiver.arrive_ns[mine]
    if sent_keys.size == 0 or got_keys.size == 0:
        return np.zeros(0)
    order = np.argsort(sent_keys, kind="stable")
    pos = np.minimum(np.searchsorted(sent_keys[order], got_keys), sent_keys.size - 1)
    found = sent_keys[order][pos] == got_keys
    return (got_arrive[found] - sent_done[order][pos[found]]) / 1e3


def _dropped(
    spec: Spec,
    records: Mapping[str, Records],
    sidecars: Mapping[str, dict[str, Any]],
    conn: Connection,
    stream: int,
) -> int | None:
    """The packets of `stream` a drop fan-out dropped on `conn`: its
    sender's count where the connection carries that stream alone; else
    (after a merge) the stream's shortfall on the hop (what the sender
    passed on less what came in on it), at most the count. None where
    that cannot be told (no records at one end)."""
    entry = sidecar_entry(spec, sidecars, conn) or {}
    dropped = int(entry.get("dropped") or 0)
    if dropped == 0:
        return 0
    carried = [s for s in graph.sources(spec) if conn.uses[0] in graph.reachable(spec, s)]
    if len(carried) == 1:
        return dropped
    sender, receiver = records.get(conn.uses[0]), records.get(conn.provides[0])
    if sender is None or receiver is None:
        return None
    passed = np.count_nonzero(_handled(spec, conn.uses[0], sender) & (_streams(spec, conn.uses[0], sender) == stream))
    came = np.count_nonzero(_into(spec, conn, receiver) & (_streams(spec, conn.provides[0], receiver) == stream))
    return min(dropped, max(0, int(passed - came)))


def path_figures(
    spec: Spec, records: Mapping[str, Records], sidecars: Mapping[str, dict[str, Any]]
) -> list[PathResult]:
    """Every (source, sink) path a packet can take (_routes) whose ends both
    record (PathResult), in model/graph.paths' order. Counted per arrival: a packet that reaches
    the sink by two routes (a diamond) is two arrivals, each a latency
    sample; `delivered` counts it once. Its order is counted within each
    connection into the sink, on each packet's first arrival there, so the
    two routes' copies, which interleave, are not taken for reordering."""
    out = []
    for source, sink, routes in _routes(spec):
        src, dst = records.get(source), records.get(sink)
        if src is None or dst is None:
            continue
        stream = stream_of(spec, source)
        handled = _handled(spec, source, src)
        sent = int(np.count_nonzero(handled))
        mine = (dst.done_ns > 0) & (_streams(spec, sink, dst) == stream)
        by_done = np.argsort(dst.done_ns, kind="stable")
        by_done = by_done[mine[by_done]]
        seq = dst.sequence[by_done]
        latency = metrics.since_send_ns(src.sequence[handled], src.arrive_ns[handled], seq, dst.done_ns[by_done])
        conn_of = dst.connection[by_done] if dst.connection is not None else np.zeros(seq.size, np.int64)
        reordered = sum(metrics.reordered_from_original(_first_arrivals(seq[conn_of == n])) for n in np.unique(conn_of))
        # A copy dropped on a connection is one arrival fewer on each route on
        # from its receiver; the sender's count already covers every route
        # through the connection (a merge takes one copy per route before it).
        drops = [
            (_dropped(spec, records, sidecars, conn, stream), onward)
            for (a, b), onward in _onward_routes(routes).items()
            for conn in spec.connections
            if conn.uses[0] == a and conn.provides[0] == b
        ]
        dropped = sum(d * onward for d, onward in drops if d is not None)
        # Each route expects what the source offered to its first connection.
        offered = {
            conn.provides[0]: _offered(spec, sidecars, conn, sent)
            for conn in _leaving(spec, source)
            if conn.provides[0] in {route[1] for route in routes}
        }
        expected = sum(offered[route[1]] for route in routes)
        arrivals = int(seq.size)
        out.append(
            PathResult(
                source=source,
                sink=sink,
                stream=stream,
                routes=len(routes),
                sent=max(offered.values()),
                arrivals=arrivals,
                delivered=int(np.unique(seq).size),
                dropped=dropped,
                lost=None if any(d is None for d, _ in drops) else max(0, expected - dropped - arrivals),
                reordered=int(reordered),
                latency_us=Latency.of(latency / 1e3),
            )
        )
    return out


def _routes(spec: Spec) -> list[tuple[str, str, list[list[str]]]]:
    """[(source, sink, its routes as component names)] for every pair
    model/graph.paths gives that a packet can go between, in its order: a
    route through a component of several paths (a duplex) takes one of
    them (model/pipeline.path_graph), so a TX source reaches no RX sink."""
    g = path_graph(spec)
    out = []
    for source, sink in graph.paths(spec):
        routes = [[g.of[v][0] for v in route] for route in graph.routes(g, source, sink)]
        if routes:
            out.append((source, sink, routes))
    return out


def _onward_routes(routes: list[list[str]]) -> dict[tuple[str, str], int]:
    """{(sender, receiver) of each hop on the routes: how many routes go on
    from its receiver to the sink}."""
    onward: dict[tuple[str, str], set[tuple[str, ...]]] = {}
    for route in routes:
        for i in range(len(route) - 1):
            onward.setdefault((route[i], route[i + 1]), set()).add(tuple(route[i + 1 :]))
    return {hop: len(rest) for hop, rest in onward.items()}


def _first_arrivals(sequence: np.ndarray) -> np.ndarray:
    """Each packet's first arrival, in order: a copy that came again on the
    same connection (two routes merged before it) is no reordering."""
    _, first = np.unique(sequence, return_index=True)
    return sequence[np.sort(first)]


def stream_orders(spec: Spec, records: Mapping[str, Records]) -> list[StreamOrder]:
    """Every stream's order at every component with an input that records,
    in the graph's topological order, streams by id."""
    out = []
    for name in graph.topological_order(spec):
        r = records.get(name)
        if r is None or name in graph.sources(spec):
            continue
        streams = _streams(spec, name, r)
        done = r.done_ns > 0
        by_done = np.argsort(r.done_ns, kind="stable")
        for stream in np.unique(streams):
            arrived = r.sequence[streams == stream]
            finished = r.sequence[by_done][(streams[by_done] == stream) & done[by_done]]
            out.append(
                StreamOrder(
                    component=name,
                    stream=int(stream),
                    received=int(arrived.size),
                    reordered_from_previous=metrics.reordered_from_previous(arrived),
                    reordered_from_original=metrics.reordered_from_original(arrived),
                    output_reordered_from_original=metrics.reordered_from_original(finished),
                )
            )
    return out


def graph_figures(
    spec: Spec, records: Mapping[str, Records], sidecars: Mapping[str, dict[str, Any]]
) -> tuple[list[PathResult], list[HopResult], list[StreamOrder]]:
    """(paths, connections, streams) of a run, as RunResult holds them."""
    return path_figures(spec, records, sidecars), hop_figures(spec, records, sidecars), stream_orders(spec, records)

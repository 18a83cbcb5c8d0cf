"""A waveform as a directed graph: components are its vertices, connections
its edges (from a uses port to a provides port). The one place that walks
it: where packets start and end, the order components are met, which
source reaches which sink, loops, and the longest path by some weight.

Everything here reads only names: a spec's component names and its
connections' (component, port) ends, so the functions serve a spec being
checked as well as a finished one.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Protocol


class _Connection(Protocol):
    uses: tuple  # (component, port)
    provides: tuple  # (component, port)


class Graph(Protocol):
    components: list  # of objects with .name
    connections: list  # of objects with .uses and .provides


def _names(spec: Graph) -> list[str]:
    return [c.name for c in spec.components]


def successors(spec: Graph) -> dict[str, list[str]]:
    """component -> the components it feeds, each once, in connection order."""
    out: dict[str, list[str]] = {name: [] for name in _names(spec)}
    for conn in spec.connections:
        targets = out.setdefault(conn.uses[0], [])
        if conn.provides[0] not in targets:
            targets.append(conn.provides[0])
    return out


def predecessors(spec: Graph) -> dict[str, list[str]]:
    """component -> the components that feed it, each once, in connection order."""
    into: dict[str, list[str]] = {name: [] for name in _names(spec)}
    for conn in spec.connections:
        feeders = into.setdefault(conn.provides[0], [])
        if conn.uses[0] not in feeders:
            feeders.append(conn.uses[0])
    return into


def sources(spec: Graph) -> list[str]:
    """Components no connection feeds: where packets start. In declaration order."""
    fed = {conn.provides[0] for conn in spec.connections}
    return [name for name in _names(spec) if name not in fed]


def sinks(spec: Graph) -> list[str]:
    """Components that feed no connection: where packets end. In declaration order."""
    feeding = {conn.uses[0] for conn in spec.connections}
    return [name for name in _names(spec) if name not in feeding]


def start_order(spec: Graph, given: Sequence[str] = ()) -> list[str]:
    """The order the launcher starts every component in (and stops them in
    reverse): `given` (a SAD's assembly controller and startorders, a spec's
    run.start_order) as it is, with the components it leaves out in the safe
    order around it: those that receive before it, those that only send
    after it, each group in name order, so that no packet of theirs reaches a
    component not yet started. `given` is never reordered: where it starts a
    sender before its receiver, that receiver refuses what reaches it first
    (docs/how-to/sad.md, "The start order")."""
    ordered = set(given)
    fed = {conn.provides[0] for conn in spec.connections}
    rest = sorted(name for name in _names(spec) if name not in ordered)
    return [n for n in rest if n in fed] + list(given) + [n for n in rest if n not in fed]


def early_senders(spec: Graph, order: Sequence[str]) -> list[tuple[str, str]]:
    """(sender, receiver) of each connection along which packets may flow
    before `order` has started the receiver: when it starts, the sender is
    reached from a started source through started components only. Such a
    receiver would refuse what reaches it before its start. In `order`, each
    pair once."""
    feeders, fed = predecessors(spec), successors(spec)
    pairs: list[tuple[str, str]] = []
    for k, name in enumerate(order):
        started = set(order[:k])
        flowing = [n for n in started if not feeders.get(n)]
        seen = set(flowing)
        while flowing:
            for after in fed.get(flowing.pop(), []):
                if after in started and after not in seen:
                    seen.add(after)
                    flowing.append(after)
        pairs += [(p, name) for p in feeders.get(name, []) if p in seen]
    return pairs


def find_cycle(spec: Graph) -> list[str] | None:
    """A loop of the graph as the components met along it, the first one
    again at the end (["a", "b", "a"]); None if there is none. A component
    connected to itself is a loop of one ("a", "a")."""
    after = successors(spec)
    state: dict[str, str] = {}

    def visit(name: str, trail: list[str]) -> list[str] | None:
        state[name] = "open"
        for nxt in after.get(name, []):
            if state.get(nxt) == "open":
                return trail[trail.index(nxt) :] + [nxt]
            if nxt not in state and (loop := visit(nxt, trail + [nxt])) is not None:
                return loop
        state[name] = "done"
        return None

    for name in after:
        if name not in state and (loop := visit(name, [name])) is not None:
            return loop
    return None


def topological_order(spec: Graph) -> list[str]:
    """Every component, each after all that feed it (sources first; among
    components ready at once, declaration order). A graph with a loop has
    no such order: its components on and after the loop come last, in
    declaration order, so that a caller reporting on a bad graph still
    sees every component."""
    before = predecessors(spec)
    names = _names(spec)
    waiting = {name: len(before[name]) for name in names}
    ready = [name for name in names if waiting[name] == 0]
    after = successors(spec)
    order: list[str] = []
    while ready:
        name = ready.pop(0)
        order.append(name)
        for nxt in after.get(name, []):
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                ready.append(nxt)
                ready.sort(key=names.index)
    return order + [name for name in names if name not in order]


def reachable(spec: Graph, start: str) -> list[str]:
    """The components packets from `start` reach, `start` first, then in
    topological order."""
    after = successors(spec)
    seen = {start}
    frontier = [start]
    while frontier:
        for nxt in after.get(frontier.pop(), []):
            if nxt not in seen:
                seen.add(nxt)
                frontier.append(nxt)
    return [start] + [name for name in topological_order(spec) if name in seen and name != start]


def paths(spec: Graph) -> list[tuple[str, str]]:
    """Every (source, sink) pair such that packets from the source reach the
    sink: the paths a run measures latency along. Sources in declaration
    order, and each source's sinks in declaration order."""
    ends = sinks(spec)
    pairs = []
    for source in sources(spec):
        reached = set(reachable(spec, source))
        pairs += [(source, sink) for sink in ends if sink in reached and sink != source]
    return pairs


def routes(spec: Graph, source: str, sink: str) -> list[list[str]]:
    """Every route from `source` to `sink`, as the components along it
    (both ends included). A graph with a loop has routes without end: call
    it on a graph find_cycle accepts."""
    after = successors(spec)
    found: list[list[str]] = []

    def walk(trail: list[str]) -> None:
        here = trail[-1]
        if here == sink:
            found.append(trail)
            return
        for nxt in after.get(here, []):
            walk(trail + [nxt])

    walk([source])
    return found


def critical_path(spec: Graph, weight: Callable[[str], float]) -> tuple[list[str], float]:
    """The heaviest route from any source to any sink, with `weight` of each
    component summed along it, and that sum. On a loop-free graph. With
    several equally heavy, the first in topological order."""
    order = topological_order(spec)
    before = predecessors(spec)
    best: dict[str, tuple[float, list[str]]] = {}
    for name in order:
        feeders = [best[f] for f in before[name] if f in best]
        total, route = max(feeders, key=lambda entry: entry[0], default=(0.0, []))
        best[name] = (total + weight(name), route + [name])
    ends = [best[name] for name in sinks(spec) if name in best]
    if not ends:
        return [], 0.0
    total, route = max(ends, key=lambda entry: entry[0])
    return route, total


def not_reaching_a_sink(spec: Graph, is_sink: Callable[[str], bool]) -> list[str]:
    """Components none of whose routes ends at a component for which
    `is_sink` holds: work whose packets nobody counts. In declaration order."""
    ok = {name for name in _names(spec) if is_sink(name)}
    before = predecessors(spec)
    frontier = list(ok)
    while frontier:
        for feeder in before.get(frontier.pop(), []):
            if feeder not in ok:
                ok.add(feeder)
                frontier.append(feeder)
    return [name for name in _names(spec) if name not in ok]


def fan_out(connections: Iterable[_Connection]) -> dict[tuple, list]:
    """uses port (component, port) -> its connections, for the ports with
    more than one."""
    by_port: dict[tuple, list] = {}
    for conn in connections:
        by_port.setdefault(tuple(conn.uses), []).append(conn)
    return {port: conns for port, conns in by_port.items() if len(conns) > 1}


def describe_route(route: Sequence[str]) -> str:
    """A route as people write it: "a -> b -> c"."""
    return " -> ".join(route)

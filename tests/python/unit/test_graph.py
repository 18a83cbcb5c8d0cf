"""The waveform graph's walks (model/graph.py) on small known graphs."""

from types import SimpleNamespace

import pytest

from scabench.model import graph


def spec(names, edges):
    """A graph of components `names` and connections "a.out->b.in"."""
    conns = []
    for edge in edges:
        a, b = edge.split("->")
        conns.append(SimpleNamespace(uses=tuple(a.split(".")), provides=tuple(b.split("."))))
    return SimpleNamespace(components=[SimpleNamespace(name=n) for n in names], connections=conns)


# The shapes a waveform takes: fan-out, a diamond, fan-in from two sources.
TRANSCEIVER = spec(
    ["tx", "channel", "rx", "ber", "monitor"],
    [
        "tx.out->channel.in",
        "channel.out->rx.in",
        "channel.out->monitor.in",
        "rx.out->ber.in",
    ],
)
DIAMOND = spec(
    ["p", "tee", "a", "b", "merge", "sink"],
    [
        "p.out->tee.in",
        "tee.out_a->a.in",
        "tee.out_b->b.in",
        "a.out->merge.in_a",
        "b.out->merge.in_b",
        "merge.out->sink.in",
    ],
)
TWO_SOURCES = spec(
    ["p1", "p2", "merge", "s"],
    ["p1.out->merge.in_a", "p2.out->merge.in_b", "merge.out->s.in"],
)


def test_sources_and_sinks_in_declaration_order():
    assert graph.sources(TRANSCEIVER) == ["tx"]
    assert graph.sinks(TRANSCEIVER) == ["ber", "monitor"]
    assert graph.sources(TWO_SOURCES) == ["p1", "p2"]
    assert graph.sinks(DIAMOND) == ["sink"]


def test_topological_order_puts_every_component_after_its_feeders():
    for g in (TRANSCEIVER, DIAMOND, TWO_SOURCES):
        order = graph.topological_order(g)
        assert sorted(order) == sorted(c.name for c in g.components)
        for conn in g.connections:
            assert order.index(conn.uses[0]) < order.index(conn.provides[0])
    assert graph.topological_order(DIAMOND) == ["p", "tee", "a", "b", "merge", "sink"]


def test_paths_pair_each_source_with_the_sinks_it_reaches():
    assert graph.paths(TRANSCEIVER) == [("tx", "ber"), ("tx", "monitor")]
    assert graph.paths(TWO_SOURCES) == [("p1", "s"), ("p2", "s")]
    assert graph.paths(DIAMOND) == [("p", "sink")]


def test_routes_of_a_diamond_are_both_branches():
    assert graph.routes(DIAMOND, "p", "sink") == [
        ["p", "tee", "a", "merge", "sink"],
        ["p", "tee", "b", "merge", "sink"],
    ]


def test_find_cycle_names_the_loop():
    looped = spec(["a", "b", "c"], ["a.out->b.in", "b.out->c.in", "c.out->b.in2"])
    assert graph.find_cycle(looped) == ["b", "c", "b"]
    assert graph.find_cycle(spec(["a"], ["a.out->a.in"])) == ["a", "a"]
    assert graph.find_cycle(DIAMOND) is None
    # Every component is still listed, the looped ones last.
    assert sorted(graph.topological_order(looped)) == ["a", "b", "c"]


def test_critical_path_is_the_heaviest_route():
    work = {"p": 0.0, "tee": 1.0, "a": 5.0, "b": 2.0, "merge": 1.0, "sink": 0.0}
    route, total = graph.critical_path(DIAMOND, work.__getitem__)
    assert route == ["p", "tee", "a", "merge", "sink"]
    assert total == pytest.approx(7.0)
    work["b"] = 9.0
    assert graph.critical_path(DIAMOND, work.__getitem__) == (
        ["p", "tee", "b", "merge", "sink"],
        pytest.approx(11.0),
    )


def test_not_reaching_a_sink_finds_dead_branches():
    g = spec(
        ["p", "tee", "s", "dead"],
        ["p.out->tee.in", "tee.out_a->s.in", "tee.out_b->dead.in"],
    )
    assert graph.not_reaching_a_sink(g, lambda n: n == "s") == ["dead"]
    assert graph.not_reaching_a_sink(TRANSCEIVER, lambda n: n in ("ber", "monitor")) == []


def test_fan_out_groups_the_uses_ports_with_several_connections():
    assert list(graph.fan_out(TRANSCEIVER.connections)) == [("channel", "out")]
    assert graph.fan_out(TWO_SOURCES.connections) == {}

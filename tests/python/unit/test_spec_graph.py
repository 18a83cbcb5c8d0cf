"""A spec as a graph (issue 28): named ports from the catalogue, a uses port
with several connections (fan-out), the refusals of a bad graph (each one
line naming the connection, exit 2 before any process starts), the order
the policies guarantee per connection, the floor over a graph, the plan,
the Python API's ports and a SAD's fan-out."""

import dataclasses
import re

import pytest
from conftest import scabench

from scabench.api import Waveform
from scabench.errors import SpecError
from scabench.model import graph
from scabench.model.catalog import (
    component_kinds,
    kind_ports,
    port_names,
    port_type,
)
from scabench.model.load import load_spec
from scabench.model.order import order_guarantees
from scabench.model.pipeline import (
    below_floor_why,
    floor_bounds_ms,
    floor_caveat,
    floor_ms,
    floor_parts,
    packets_through,
    stage_longest_work_ms,
    stage_work,
)
from scabench.model.sad.export import export_sad
from scabench.model.spec_toml import parse_spec
from scabench.run.plan import plan_of


def component(name, kind, extra=""):
    return f'[[component]]\nname = "{name}"\nkind = "{kind}"\n{extra}\n'


def connection(a, b, extra=""):
    return f'[[connection]]\nfrom = "{a}"\nto = "{b}"\n{extra}\n'


CPU = 'work = "cpu"\nwork_us = {}'
# producer -> a -> c, producer -> b: a fan-out of the producer's one port.
FAN = (
    '[run]\ncores = "0"\n'
    + component("producer", "producer", "packets = 100\nsamples = 16")
    + component("a", "stage", CPU.format(1000))
    + component("b", "stage", CPU.format(3000))
    + component("c", "stage", 'work = "sleep"\nwork_us = 2000')
    + connection("producer.out", "a.in")
    + connection("producer.out", "b.in")
    + connection("a.out", "c.in")
)


def refused(write_spec, text):
    path = write_spec(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert "\n" not in str(err.value) and str(err.value).startswith(str(path))
    return err.value


# -- ports ---------------------------------------------------------------


def test_every_kind_has_ports_with_a_direction_a_type_and_whether_required():
    for kind, declared in component_kinds().items():
        ports = kind_ports(declared)
        assert port_names(ports, "provides") == declared["provides"], kind
        assert port_names(ports, "uses") == declared["uses"], kind
        for name, port in ports.items():
            assert port["type"] in ("sample", "octet", "short", "float", "double"), (
                kind,
                name,
            )
            assert not (port["direction"] == "uses" and port["required"]), (kind, name)


def test_a_sample_port_carries_the_runs_sample_type():
    stage = kind_ports(component_kinds()["stage"])
    assert stage["in"]["type"] == "sample"
    assert port_type(stage["in"], "float") == "float" and port_type(stage["in"], "octet") == "octet"
    assert port_type({"type": "short"}, "double") == "short"


def _typed_mismatch():
    """A uses port and a provides port of the catalogue that carry different
    types whatever the run's sample type (None if there is no such pair)."""
    kinds = component_kinds()
    typed = [
        (kind, name, port)
        for kind, declared in kinds.items()
        for name, port in kind_ports(declared).items()
        if port["type"] != "sample"
    ]
    for ukind, uname, uport in typed:
        for pkind, pname, pport in typed:
            if uport["direction"] == "uses" and pport["direction"] == "provides" and uport["type"] != pport["type"]:
                return (ukind, uname, uport["type"]), (pkind, pname, pport["type"])
    return None


def test_ports_of_different_types_are_refused_naming_both(write_spec):
    mismatch = _typed_mismatch()
    assert mismatch is not None, "the catalogue has typed ports of different types (the FIR, the STANAG 4285 blocks)"
    (ukind, uport, utype), (pkind, pport, ptype) = mismatch
    text = component("x", ukind) + component("y", pkind) + connection(f"x.{uport}", f"y.{pport}")
    err = refused(write_spec, text)
    assert err.key == "connection[0]"
    assert f"x.{uport} ({utype}) -> y.{pport} ({ptype})" in str(err)


def test_an_unknown_port_lists_the_kinds_ports_of_that_direction(write_spec):
    err = refused(
        write_spec,
        FAN.replace(
            'from = "producer.out"\nto = "b.in"',
            'from = "producer.output"\nto = "b.in"',
        ),
    )
    assert err.key == "connection[1].from" and "has no uses (output) port 'output'; it has: out" in str(err)


def test_a_required_input_left_unconnected_is_refused(write_spec):
    kind, declared = next((k, d) for k, d in component_kinds().items() if len(d["provides"]) > 1)
    first, second = declared["provides"][:2]
    text = component("p", "producer") + component("m", kind) + connection("p.out", f"m.{first}")
    err = refused(write_spec, text)
    assert f"m.{second} is a required input" in str(err)


# -- fan-out -------------------------------------------------------------


def test_a_uses_port_feeds_several_connections(write_spec):
    spec = load_spec(write_spec(FAN))
    assert [c.id for c in spec.connections] == [
        "producer.out->a.in",
        "producer.out->b.in",
        "a.out->c.in",
    ]
    assert list(graph.fan_out(spec.connections)) == [("producer", "out")]
    assert spec.sources() == ["producer"] and spec.pipeline_order() == [
        "producer",
        "a",
        "b",
        "c",
    ]
    assert graph.paths(spec) == [("producer", "b"), ("producer", "c")]
    # Every branch gets every packet.
    assert packets_through(spec) == {"producer": 100, "a": 100, "b": 100, "c": 100}


def test_the_connections_of_one_uses_port_agree_on_its_keys(write_spec):
    text = FAN.replace('to = "b.in"\n', 'to = "b.in"\ncall = "oneway"\n')
    err = refused(write_spec, text)
    assert err.key == "connection[1].call"
    assert "producer.out->a.in and producer.out->b.in leave one port with different call" in str(err)
    # A key of the receiving side is each port's own.
    load_spec(write_spec(FAN.replace('to = "b.in"\n', 'to = "b.in"\nworker = 8\n'), "fine.toml"))


def test_a_fan_out_policy_on_a_port_with_one_connection_is_refused(write_spec):
    err = refused(write_spec, FAN.replace('to = "c.in"\n', 'to = "c.in"\nfanout = "parallel"\n'))
    assert err.key == "connection[2].fanout" and "a fan-out policy on a port with one connection" in str(err)
    err = refused(write_spec, FAN.replace('to = "c.in"\n', 'to = "c.in"\nfanout_depth = 8\n'))
    assert err.key == "connection[2].fanout_depth"
    # In [policy] it is every fan-out port's default, and the others' none of their business.
    spec = load_spec(write_spec(FAN + '[policy]\nfanout = "drop"\nfanout_depth = 8\n', "default.toml"))
    assert {c.policy.fanout for c in spec.connections} == {"drop"}


def test_the_connections_of_a_fan_out_port_agree_on_its_fanout(write_spec):
    err = refused(write_spec, FAN.replace('to = "b.in"\n', 'to = "b.in"\nfanout = "drop"\n'))
    assert err.key == "connection[1].fanout" and "different fanout ('sequential' and 'drop')" in str(err)
    both = FAN.replace('to = "a.in"\n', 'to = "a.in"\nfanout = "drop"\n')
    spec = load_spec(write_spec(both.replace('to = "b.in"\n', 'to = "b.in"\nfanout = "drop"\n'), "both.toml"))
    assert [c.policy.fanout for c in spec.connections[:2]] == ["drop", "drop"]


def test_one_port_given_two_settings_is_refused_by_every_reader_and_by_the_plan(write_spec, tmp_path):
    # TOML (test_the_connections_of_a_fan_out_port_agree_on_the_sending_side
    # above), the API and a SAD's sidecar all come to spec_toml's check.
    wf = Waveform("fan", cores=[0])
    producer = wf.component("producer", "producer", packets=10, samples=16)
    a, b = wf.component("a", "stage"), wf.component("b", "stage")
    wf.connect(producer.port("out"), a.port("in"))
    wf.connect(producer.port("out"), b.port("in"), call="oneway")
    with pytest.raises(SpecError, match="leave one port with different call"):
        wf.validate()
    exported = export_sad(load_spec(write_spec('[experiment]\nname = "fan"\n' + FAN, "fan.toml")), tmp_path / "out")
    with exported.sidecar.open("a") as f:
        f.write('[connection."producer.out->b.in"]\ncall = "oneway"\n')
    with pytest.raises(SpecError, match="leave one port with different call"):
        load_spec(exported.sad)
    # A Spec changed past the readers (a connection's policy set on its own)
    # is not planned with one of its settings silently kept.
    spec = load_spec(write_spec(FAN))
    spec.connections[1].policy = dataclasses.replace(spec.connections[1].policy, call="oneway")
    with pytest.raises(ValueError, match="producer.out->a.in and producer.out->b.in give one uses port different"):
        plan_of(spec, tmp_path, 10.0)


# -- bad graphs ----------------------------------------------------------


def test_a_loop_is_refused_naming_the_connection_that_closes_it(write_spec):
    text = FAN + connection("c.out", "a.in")
    err = refused(write_spec, text)
    assert err.key == "connection[3]"
    assert "the connections make a loop (a -> c -> a); refused: no policy says yet how packets go round a loop" in (
        str(err)
    )


def test_a_branch_ending_at_an_external_component_is_refused(write_spec):
    text = FAN + component("x", "external", 'exec = "/bin/true"') + connection("c.out", "x.in")
    err = refused(write_spec, text)
    assert err.key == "connection[3]"
    assert "'x' (external) is external and last" in str(err)
    assert "the packets of 'a', 'c' reach no end that records" in str(err)


def test_the_same_pair_connected_twice_is_refused(write_spec):
    err = refused(write_spec, FAN + connection("producer.out", "b.in"))
    assert err.key == "connection[3]" and "producer.out->b.in is connected twice (connection[1] too)" in str(err)


@pytest.mark.parametrize(
    "extra, says",
    [
        (
            connection("c.out", "a.in"),
            "connection[3]: the connections make a loop (a -> c -> a)",
        ),
        (
            connection("producer.out", "b.in"),
            "connection[3]: producer.out->b.in is connected twice",
        ),
        (
            connection("b.out", "b.in"),
            "connection[3]: b.out->b.in connects 'b' to itself",
        ),
    ],
)
def test_validate_refuses_a_bad_graph_with_one_line_and_exit_2(write_spec, extra, says):
    path = write_spec(FAN + extra)
    proc = scabench("validate", path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stdout.splitlines()
    assert line.startswith(f"bad  {path}: ") and says in line, line


# -- the spec's tables ---------------------------------------------------


def test_a_graph_spec_written_as_tables_is_the_same_spec(write_spec):
    spec = load_spec(write_spec(FAN.replace('to = "c.in"\n', 'to = "c.in"\nworker = 4\n')))
    again = parse_spec(spec.document(), spec.path)
    assert again.describe() == spec.describe()
    assert [c.where for c in again.connections] == [
        "connection[0]",
        "connection[1]",
        "connection[2]",
    ]


# -- the floor -----------------------------------------------------------


def test_the_floor_of_a_graph_is_its_critical_path_or_its_cpu_bound(write_spec):
    # 100 packets; a (1 ms CPU) -> c (2 ms sleep) on one branch, b (3 ms CPU) on the other.
    # Pipeline: the busiest stage 99 · 3 ms, then one packet along the heaviest route
    # (3 ms either way: a + c, or b): 300 ms. CPU: 100 · (1 + 3) ms on one core: 400 ms.
    one = floor_parts(load_spec(write_spec(FAN)))
    assert one.pipeline_ms == pytest.approx(300.0) and one.cpu_ms == pytest.approx(400.0)
    assert one.path_work_ms == pytest.approx(3.0) and one.floor_ms == pytest.approx(400.0)
    assert "CPU bound 400 ms (all CPU work over 1 core), pipeline bound 300 ms" in one.statement()
    # On two cores the CPU bound halves and the pipeline bound holds.
    two = floor_parts(load_spec(write_spec(FAN.replace('cores = "0"', 'cores = "0,1"'), "two.toml")))
    assert two.cpu_ms == pytest.approx(200.0) and two.floor_ms == pytest.approx(300.0)
    # A heavier c makes a -> c the critical path and c the busiest stage: 99 · 4 + (1 + 4) ms.
    heavy = floor_parts(load_spec(write_spec(FAN.replace("work_us = 2000", "work_us = 4000"), "heavy.toml")))
    assert heavy.critical_path == [
        "producer",
        "a",
        "c",
    ] and heavy.pipeline_ms == pytest.approx(401.0)


# tx (200 packets) -> radio's TX path (2 ms CPU) -> s (1 ms CPU) -> tx_sink;
# rx (100 packets) -> radio's RX path (2.5 ms CPU) -> rx_sink.
DUPLEX = (
    '[run]\ncores = "0"\n'
    + component("tx", "producer", "packets = 200\nsamples = 16\nperiod_us = 0")
    + component("rx", "producer", "packets = 100\nsamples = 16\nperiod_us = 0")
    + component("radio", "duplex", 'tx_work = "cpu"\ntx_work_us = 2000\nrx_work = "cpu"\nrx_work_us = 2500')
    + component("s", "stage", CPU.format(1000))
    + component("tx_sink", "sink")
    + component("rx_sink", "sink")
    + connection("tx.out", "radio.tx_in")
    + connection("rx.out", "radio.rx_in")
    + connection("radio.tx_out", "s.in")
    + connection("s.out", "tx_sink.in")
    + connection("radio.rx_out", "rx_sink.in")
)


def test_a_duplex_counts_each_path_at_its_own_work_and_packets(write_spec):
    spec = load_spec(write_spec(DUPLEX))
    assert floor_caveat(spec) is None  # both paths declare their work
    assert packets_through(spec)["radio"] == 300 and packets_through(spec)["s"] == 200  # s is behind TX only
    # The route through the TX path, 2 + 1 ms, outweighs the RX one, 2.5 ms; the
    # radio weighs its TX work on it, not its heavier RX work (which would make 3.5).
    one = floor_parts(spec)
    assert one.critical_path == ["tx", "radio", "s", "tx_sink"] and one.path_work_ms == pytest.approx(3.0)
    # Pipeline: the busiest path, TX's 199 · 2 ms (RX's 99 · 2.5, s's 199 · 1), then 3 ms.
    # CPU: 200 · 2 + 100 · 2.5 + 200 · 1 ms on one core.
    assert one.pipeline_ms == pytest.approx(401.0) and one.cpu_ms == pytest.approx(850.0)
    two = floor_parts(load_spec(write_spec(DUPLEX.replace('cores = "0"', 'cores = "0,1"'), "two.toml")))
    assert two.cpu_ms == pytest.approx(425.0) and two.pipeline_ms == pytest.approx(401.0)
    # A stall or a hang is judged by the most one packet costs it.
    assert stage_work(spec)["radio"] == (2.5, 2.5)
    jittery = spec.with_properties("radio", {"rx_work_jitter_us": 100}, where="test")
    assert stage_longest_work_ms(jittery) == [pytest.approx(2.6), pytest.approx(1.0)]
    assert any("radio's work varies by up to ±100 µs" in why for why in below_floor_why(jittery, []))


def test_a_chains_floor_is_what_it_always_was():
    # A chain's one route is its critical path: the work of every stage.
    work, cpu = [1.0, 3.0, 2.0], [1.0, 3.0, 0.0]
    assert floor_bounds_ms(100, work, cpu, 0.0, 1) == floor_bounds_ms(100, work, cpu, 0.0, 1, path_work_ms=6.0)
    assert floor_ms(100, work, cpu, 0.0, 1) == pytest.approx(400.0)
    assert floor_ms(100, work, cpu, 0.0, 4) == pytest.approx(99 * 3.0 + 6.0)


def test_validate_states_a_graphs_two_bounds(write_spec):
    proc = scabench("validate", write_spec(FAN))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "floor 400 ms: CPU bound 400 ms (all CPU work over 1 core), pipeline bound 300 ms (critical path producer -> b"
        in proc.stdout
    )


# -- order ---------------------------------------------------------------


def with_fanout(policy, fanout):
    """A policy with its fanout set, as a schema with the key gives it."""
    return dataclasses.replace(
        policy,
        others=tuple(kv for kv in policy.others if kv[0] != "fanout") + (("fanout", fanout),),
    )


# Two producers merge into s (two connections into one port, no worker: its
# handler runs on several threads), which fans out one-way to a and b, each
# served by one thread per connection.
MERGE_THEN_FAN = (
    component("p1", "producer")
    + component("p2", "producer")
    + component("s", "stage")
    + component("a", "stage")
    + component("b", "stage")
    + connection("p1.out", "s.in")
    + connection("p2.out", "s.in")
    + connection("s.out", "a.in", 'call = "oneway"\nsync = "transport"\ndispatch = "serial"')
    + connection("s.out", "b.in", 'call = "oneway"\nsync = "transport"\ndispatch = "serial"')
)


def test_a_fan_out_keeps_each_connections_order_as_its_policy_pushes_it(write_spec):
    spec = load_spec(write_spec(MERGE_THEN_FAN))
    # sequential: s's several threads push each connection in turn: one-way calls can take several connections.
    sequential = order_guarantees(spec)
    assert [g.output for g in sequential] == ["a", "b"]
    assert not any(g.guaranteed for g in sequential) and "several threads can reorder" in sequential[0].why
    # parallel: a sender thread per connection, fed in order: each connection is served in order.
    for conn in spec.connections[2:]:
        conn.policy = with_fanout(conn.policy, "parallel")
    parallel = order_guarantees(spec)
    assert all(g.guaranteed and not g.may_lose for g in parallel)
    assert "fan-out parallel" in parallel[0].why
    # drop: the same order, and packets may be lost.
    for conn in spec.connections[2:]:
        conn.policy = with_fanout(conn.policy, "drop")
    drop = order_guarantees(spec)
    assert all(g.guaranteed and g.may_lose for g in drop) and "packets may be lost" in drop[0].why


def test_a_chain_loses_nothing_and_says_no_fan_out(write_spec):
    chain = FAN.replace(connection("producer.out", "b.in"), "").replace(component("b", "stage", CPU.format(3000)), "")
    (only,) = order_guarantees(load_spec(write_spec(chain)))
    assert only.output == "c" and only.guaranteed and not only.may_lose and "fan-out" not in only.why


# -- the plan ------------------------------------------------------------


def test_a_fan_out_port_has_a_hop_per_connection_and_one_setting(write_spec, tmp_path):
    spec = load_spec(write_spec(FAN.replace("[run]", '[run]\ntransport = "shm"')))
    hops = [h for h in plan_of(spec, tmp_path, 10.0).hops if (h.uses.component, h.uses.port) == ("producer", "out")]
    assert [h.provides.component for h in hops] == ["a", "b"]
    assert hops[0].uses.properties == hops[1].uses.properties
    assert hops[0].uses.properties["out.transport"] == "shm"


# -- the Python API ------------------------------------------------------


def test_the_api_connects_named_ports_and_one_port_several_times():
    wf = Waveform("fan", cores=[0])
    producer = wf.component("producer", "producer", packets=10, samples=16)
    a, b = wf.component("a", "stage"), wf.component("b", "stage")
    assert wf.connect(producer.port("out"), a.port("in")) == "producer.out->a.in"
    assert wf.connect(producer.port("out"), b.port("in"), worker=4) == "producer.out->b.in"
    spec = wf.validate()
    assert list(graph.fan_out(spec.connections)) == [("producer", "out")]
    assert spec.connections[1].policy.worker_depth == 4


def test_the_api_refuses_a_port_its_kind_does_not_have():
    wf = Waveform("ports")
    stage = wf.component("s", "stage")
    with pytest.raises(SpecError) as err:
        stage.port("output")
    assert err.value.key == "s.output" and "stage has no port 'output'; it has: uses out; provides in" in str(err.value)
    # An external component's ports are its own: any name goes.
    assert str(wf.component("x", "external", exec="/bin/true").port("anything")) == "x.anything"


# -- SAD -----------------------------------------------------------------

NCNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def test_a_fan_out_goes_to_a_sad_and_back(write_spec, tmp_path):
    from lxml import etree

    text = '[experiment]\nname = "fan"\n' + FAN.replace('to = "b.in"\n', 'to = "b.in"\nworker = 4\n')
    original = load_spec(write_spec(text, "fan.toml"))
    exported = export_sad(original, tmp_path / "out")
    root = etree.parse(str(exported.sad)).getroot()
    uses = [
        (
            i.findtext("usesport/usesidentifier"),
            i.find("usesport/componentinstantiationref").get("refid"),
        )
        for i in root.iter("connectinterface")
    ]
    assert uses.count(("out", "producer")) == 2
    ids = [i.get("id") for i in root.iter("connectinterface")]
    assert len(set(ids)) == 3 and all(NCNAME.fullmatch(i) for i in ids), ids
    loaded = load_spec(exported.sad)
    a, b = loaded.describe(), original.describe()
    a.pop("file"), b.pop("file")
    assert a == b


def test_a_port_with_one_connection_is_given_no_fan_out_keys(write_spec, tmp_path):
    spec = load_spec(write_spec(FAN + '[policy]\nfanout = "drop"\nfanout_depth = 8\n'))
    hops = {h.id: h.uses.properties for h in plan_of(spec, tmp_path, 10.0).hops}
    assert hops["producer.out->a.in"]["out.fanout"] == "drop" and hops["producer.out->a.in"]["out.fanout_depth"] == 8
    assert "out.fanout" not in hops["a.out->c.in"] and "out.fanout_depth" not in hops["a.out->c.in"]
    # So a Python component's port, which has one connection, is not refused for a key it does not take.
    load_spec(
        write_spec(
            FAN.replace('name = "a"\nkind = "stage"', 'name = "a"\nkind = "py-stage"') + '[policy]\nfanout = "drop"\n',
            "py.toml",
        )
    )


def test_a_fan_out_ports_own_policy_is_written_back_where_a_spec_may_give_it(write_spec, tmp_path):
    # Two of three connections drop: the most common policy, but the third's port has one
    # connection, which may not say fanout of its own: [policy] keeps its fanout instead.
    text = FAN.replace('to = "a.in"\n', 'to = "a.in"\nfanout = "drop"\n')
    spec = load_spec(write_spec(text.replace('to = "b.in"\n', 'to = "b.in"\nfanout = "drop"\n')))
    doc = spec.document()
    assert "fanout" not in doc["connection"][2] and doc["connection"][0]["fanout"] == "drop"
    assert parse_spec(doc, spec.path).describe() == spec.describe()
    # And through a SAD's sidecar.
    loaded = load_spec(export_sad(spec, tmp_path / "out").sad)
    assert [c.policy for c in loaded.connections] == [c.policy for c in spec.connections]


TWO_SOURCES = (
    '[run]\nsample_type = "double"\n'
    + component("a", "producer", "packets = 5\n{a}")
    + component("b", "producer", "packets = 5\n{b}")
    + component("m", "merge")
    + component("s", "sink")
    + connection("a.out", "m.in_a")
    + connection("b.out", "m.in_b")
    + connection("m.out", "s.in")
)


def test_sources_left_without_a_stream_id_take_ids_no_source_was_given(write_spec):
    spec = load_spec(write_spec(TWO_SOURCES.format(a="stream_id = 0", b="")))
    assert [spec.component(n).properties["stream_id"] for n in ("a", "b")] == [0, 1]
    spec = load_spec(write_spec(TWO_SOURCES.format(a="", b="stream_id = 0")))
    assert [spec.component(n).properties["stream_id"] for n in ("a", "b")] == [1, 0]


def test_two_sources_stamping_one_stream_are_refused(write_spec):
    err = refused(write_spec, TWO_SOURCES.format(a="stream_id = 3", b="stream_id = 3"))
    assert err.key == "component[1].stream_id" and "'b' and 'a' both stamp stream 3" in str(err)
    spec = load_spec(write_spec(TWO_SOURCES.format(a="", b="")))
    with pytest.raises(SpecError, match="both stamp stream 0"):
        spec.with_properties("b", {"stream_id": 0}, where="--set")

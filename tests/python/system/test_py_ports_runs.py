"""A Python uses port with several connections, over real CORBA between
real processes: `scabench-py-stage` started the SCA way, packets pushed into
it from this process, its out-port connected to two sink servants here. The
port's fanout (sequential, parallel, drop) decides how the two share each
packet; the stage reports what each connection carried (`stat NAME
connections`, and NAME.connections.json in its RECORD_DIR). A consumer is
made slow by holding its calls on a gate this test opens: nothing here
depends on timing."""

import json
import threading

import pytest

# The fixtures (context, make_sink, naming, orb, start_stage) are imported for pytest to find.
from py_components_world import (  # noqa: F401
    TOKEN,
    WAIT_S,
    S,
    context,
    header,
    make_sink,
    naming,
    orb,
    props,
    sink_class,
    start_stage,
)


@pytest.fixture
def make_gated_sink(orb):
    """A sink whose calls wait on a gate (threading.Event) until the test
    opens it; `called` is set once the first call is waiting."""
    poa = orb.resolve_initial_references("RootPOA")
    made = []

    def make():
        class Gated(sink_class("double")):
            def __init__(self):
                super().__init__()
                self.gate, self.called = threading.Event(), threading.Event()

            def _take(self, header, data, call):
                self.called.set()
                assert self.gate.wait(WAIT_S * 4), "the gate was never opened"
                super()._take(header, data, call)

        sink = Gated()
        poa.activate_object(sink)
        made.append(sink)
        return sink, poa.servant_to_reference(sink)

    yield make
    for sink in made:
        sink.gate.set()  # nothing stays held once the test ends


def fanned_stage(start_stage, sinks, tmp_path=None, **config):
    """A started stage (work none) whose out-port is connected to every
    sink reference in `sinks`, in order, as "to-0", "to-1", ...; this
    process attached as its in-port's sender."""
    stage = start_stage(extra=("RECORD_DIR", str(tmp_path)) if tmp_path else ())
    res = stage.resolve()
    res.initialize()
    res.configure(props(work="none", **config))
    port = res.getPort("in")._narrow(S.data.dataDouble)
    port.attachSender(TOKEN, None)
    out = res.getPort("out")._narrow(S.CF.Port)
    for i, ref in enumerate(sinks):
        out.connectPort(ref, f"to-{i}")
    res.start()
    return stage, res, port, out


def links(sink):
    return [h.link_sequence for h, _, _ in sink.data()]


def push_in_step(port, n, fast, slow):
    """n packets into the stage, each once the fast sink has the one
    before, so that its queue never holds more than one; the first once the
    slow sink is held in its call (with it, one packet is out of the slow
    connection's queue)."""
    for i in range(n):
        port.pushPacket(header(i), [float(i)])  # returns though the slow sink takes nothing
        fast.wait_for(lambda p, i=i: len(p) == i + 1)
        if i == 0:
            assert slow.called.wait(WAIT_S)


def test_sequential_fanout_delivers_every_packet_to_both_connections_each_numbered_its_own(
    start_stage, make_sink, tmp_path
):
    first, first_ref = make_sink()
    second, second_ref = make_sink()
    stage, res, port, out = fanned_stage(start_stage, [first_ref, second_ref], tmp_path)
    with pytest.raises(S.CF.Port.OccupiedPort):
        out.connectPort(first_ref, "to-0")  # an id already connected
    with pytest.raises(S.CF.Port.InvalidPort):
        out.disconnectPort("to-9")  # no such connection
    n = 12
    for i in range(n):
        port.pushPacket(header(i), [float(i), -float(i)])  # two-way all the way: both have it when this returns
    assert [h.sequence_number for h, _, _ in first.data()] == list(range(n))
    assert [h.sequence_number for h, _, _ in second.data()] == list(range(n))
    assert links(first) == links(second) == list(range(n))
    assert [d for _, d, _ in first.data()] == [d for _, d, _ in second.data()] == [[i, -i] for i in range(n)]
    assert first.token != second.token and {h.connection_token for h, _, _ in first.packets} == {first.token}
    port.pushPacket(header(n, eos=True), [])
    for sink in (first, second):
        ((eos, _, _),) = sink.ends()
        assert (eos.sequence_number, eos.link_sequence) == (
            n,
            n,
        )  # each connection's own end of stream
    res.stop()
    sidecar = json.loads((tmp_path / "stage1.connections.json").read_text())
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0
    uses = stage.connections()["uses"]
    assert [(c["connection_id"], c["fanout"], c["sent"], c["dropped"], c["unsent"]) for c in uses] == [
        ("to-0", "sequential", n, 0, 0),
        ("to-1", "sequential", n, 0, 0),
    ]
    assert all(c["blocked_ns"] > 0 for c in uses)  # the caller waited for each call
    assert sidecar == stage.connections()  # the same counts: nothing was sent between stop and release
    assert sidecar["provides"] == [{"port": "in", "number": 0}]
    assert (first.detached, second.detached) == (
        first.token,
        second.token,
    )  # release disconnected both


def test_drop_fanout_loses_packets_for_the_slow_connection_only_and_counts_them(
    start_stage, make_sink, make_gated_sink
):
    slow, slow_ref = make_gated_sink()
    fast, fast_ref = make_sink()
    depth, n = 2, 30
    stage, res, port, out = fanned_stage(start_stage, [slow_ref, fast_ref], out__fanout="drop", out__fanout_depth=depth)
    push_in_step(port, n, fast, slow)
    port.pushPacketOneway(header(n, eos=True), [])  # the stage waits for its queues: this caller does not
    fast.wait_for(lambda p: any(h.end_of_stream for h, _, _ in p))
    assert links(fast) == list(range(n)) and fast.ends()[0][0].sequence_number == n
    assert slow.packets == []
    slow.gate.set()
    slow.wait_for(lambda p: any(h.end_of_stream for h, _, _ in p))
    got = len(slow.data())
    assert got == depth + 1  # one in the slow sink's call, `depth` in its queue; every later one dropped
    assert links(slow) == list(range(got))  # a dropped packet takes no link number: nothing to wait for
    ((eos, _, _),) = slow.ends()
    # Its end of stream announces what it carried, and comes right after it.
    assert (eos.sequence_number, eos.link_sequence) == (got, got)
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0
    counts = {c["connection_id"]: c for c in stage.connections()["uses"]}
    assert (counts["to-0"]["sent"], counts["to-0"]["dropped"]) == (got, n - got)
    assert (counts["to-1"]["sent"], counts["to-1"]["dropped"]) == (n, 0)
    assert counts["to-0"]["queue_peak"] == depth
    assert counts["to-0"]["blocked_ns"] == counts["to-1"]["blocked_ns"] == 0  # drop never waits


def test_parallel_fanout_keeps_the_fast_connection_going_and_loses_nothing(start_stage, make_sink, make_gated_sink):
    slow, slow_ref = make_gated_sink()
    fast, fast_ref = make_sink()
    depth = 4
    n = depth + 1  # one in the slow sink's call, the rest fill its queue: no push waits
    stage, res, port, out = fanned_stage(
        start_stage,
        [slow_ref, fast_ref],
        out__fanout="parallel",
        out__fanout_depth=depth,
    )
    push_in_step(port, n, fast, slow)
    port.pushPacketOneway(header(n, eos=True), [])
    fast.wait_for(lambda p: any(h.end_of_stream for h, _, _ in p))
    assert links(fast) == list(range(n))  # while the first connection's consumer has taken nothing
    assert slow.packets == []
    slow.gate.set()
    slow.wait_for(lambda p: any(h.end_of_stream for h, _, _ in p))
    assert links(slow) == list(range(n)) and slow.ends()[0][0].sequence_number == n
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0
    # No push waited: the slow connection's queue had room for every packet.
    assert [(c["fanout"], c["sent"], c["dropped"], c["blocked_ns"]) for c in stage.connections()["uses"]] == [
        ("parallel", n, 0, 0)
    ] * 2


def test_fanout_values_outside_the_policy_are_refused_naming_the_property(start_stage):
    stage = start_stage()
    res = stage.resolve()
    for bad in (props(out__fanout="broadcast"), props(out__fanout_depth=0)):
        with pytest.raises(S.CF.PropertySet.InvalidConfiguration) as refused:
            res.configure(bad)
        assert bad[0].id in refused.value.msg


def test_a_connection_whose_consumer_is_gone_loses_its_packets_counted_and_the_other_goes_on(
    orb, start_stage, make_sink
):
    gone, gone_ref = make_sink()
    other, other_ref = make_sink()
    stage, res, port, out = fanned_stage(start_stage, [gone_ref, other_ref])
    poa = orb.resolve_initial_references("RootPOA")
    poa.deactivate_object(poa.reference_to_id(gone_ref))  # its consumer is gone: every call to it fails
    n = 5
    for i in range(n):
        port.pushPacket(header(i), [float(i)])
    port.pushPacket(header(n, eos=True), [])
    assert links(other) == list(range(n)) and other.ends()[0][0].sequence_number == n
    assert gone.packets == []
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0
    errors = [line for line in stage.stdout().splitlines() if line.startswith("error ")]
    assert len(errors) == 1 and "OBJECT_NOT_EXIST" in errors[0], errors  # reported once
    assert [(c["connection_id"], c["sent"], c["unsent"]) for c in stage.connections()["uses"]] == [
        ("to-0", 0, n),
        ("to-1", n, 0),
    ]


def test_disconnect_gives_up_a_slow_connections_queue_counted_unsent_and_returns_at_once(
    start_stage, make_sink, make_gated_sink
):
    slow, slow_ref = make_gated_sink()
    fast, fast_ref = make_sink()
    depth = 4
    n = depth + 1  # one in the slow sink's call, `depth` in its queue
    stage, res, port, out = fanned_stage(
        start_stage, [slow_ref, fast_ref], out__fanout="parallel", out__fanout_depth=depth
    )
    push_in_step(port, n, fast, slow)
    # The slow sink still holds its call: disconnect waits for no queue to drain.
    returned = threading.Event()
    threading.Thread(target=lambda: (out.disconnectPort("to-0"), returned.set()), daemon=True).start()
    assert returned.wait(WAIT_S), "disconnectPort waited for the slow connection's queue"
    assert slow.detached == slow.token
    for i in range(n, n + 2):  # only the connection left takes them
        port.pushPacket(header(i), [float(i)])
        fast.wait_for(lambda p, i=i: len(p) == i + 1)
    slow.gate.set()
    slow.wait_for(lambda p: len(p) == 1)
    port.pushPacketOneway(header(n + 2, eos=True), [])
    fast.wait_for(lambda p: any(h.end_of_stream for h, _, _ in p))
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0
    assert links(slow) == [0] and slow.ends() == []  # its queue given up, and no end of stream after it
    counts = {c["connection_id"]: c for c in stage.connections()["uses"]}
    assert [counts["to-0"][k] for k in ("sent", "dropped", "unsent")] == [1, 0, depth]  # n offered, all counted
    assert [counts["to-1"][k] for k in ("sent", "dropped", "unsent")] == [n + 2, 0, 0]

"""A Python component's ports as it declares them (name, direction, type,
whether a spec must connect it, description) and as the catalogue lists
them; an optional in-port left unconnected does not hold back end of
stream. In this process, without an ORB: the ports' servant methods are
called as the ORB would call them (over real CORBA:
system/test_py_ports_runs.py)."""

import pytest

from scabench.components import idl
from scabench.components.component import Component, ComponentContext, describe
from scabench.components.stage import Stage
from scabench.model.catalog import kind_declaration

S = idl.load()
TOKEN = 41


class Mixer(Component):
    """A main input following the run's sample type, an optional control
    input of its own type, one output."""

    def __init__(self, context):
        super().__init__(context)
        self.out = self.add_out_port("out", description="the mix")
        self.add_in_port("in", self.on_packet, description="the signal")
        self.add_in_port("gain", self.on_gain, "short", required=False, description="gain updates")
        self.ended = []

    def on_packet(self, header, samples):
        self.out.push(header, samples)

    def on_gain(self, header, samples):
        pass

    def on_end_of_stream(self, header):
        self.ended.append(self.processed_in_stream)


def test_describe_lists_each_port_with_its_direction_type_and_whether_it_is_required():
    described = describe(Mixer, sample_type="float")
    assert described["provides"] == ["in", "gain"] and described["uses"] == ["out"]
    assert described["ports"] == {
        "in": {"direction": "provides", "type": "sample", "required": True, "description": "the signal"},
        "gain": {"direction": "provides", "type": "short", "required": False, "description": "gain updates"},
        "out": {"direction": "uses", "type": "sample", "required": False, "description": "the mix"},
    }


def test_the_catalogue_lists_the_python_stages_ports_and_its_fanout_keys():
    declared = kind_declaration("py-stage")
    assert declared["ports"] == {
        "in": {"direction": "provides", "type": "sample", "required": True, "description": "the packets to work on"},
        "out": {
            "direction": "uses",
            "type": "sample",
            "required": False,
            "description": "every packet taken in, after its work",
        },
    }
    assert declared["provides"] == ["in"] and declared["uses"] == ["out"]
    props = declared["properties"]
    assert props["out.fanout"]["default"] == "sequential"
    assert props["out.fanout"]["values"] == ["sequential", "parallel", "drop"]
    assert (props["out.fanout_depth"]["default"], props["out.fanout_depth"]["min"]) == (64, 1)
    assert props["out.fanout_depth"]["max"] == 65536


def test_a_port_of_an_unknown_sample_type_is_refused_naming_it():
    class Bad(Component):
        def __init__(self, context):
            super().__init__(context)
            self.add_in_port("in", print, "complex")

    with pytest.raises(ValueError, match="port in: sample type 'complex' is not one of octet, short, float, double"):
        Bad(ComponentContext("bad"))


def header(seq, eos=False):
    return S.data.PacketHeader(7, seq, 0, eos, seq, TOKEN)


def stream_through(component, port_name, n):
    """n packets and end of stream into one port, from the one sender attached to it."""
    port = next(p for p in component.in_ports if p.name == port_name)
    for i in range(n):
        port._upcall(header(i), [float(i)])
    port._upcall(header(n, eos=True), [])


def test_an_optional_in_port_left_unconnected_does_not_hold_back_end_of_stream():
    mixer = Mixer(ComponentContext("mix"))
    mixer.in_ports[0]._attach_sender(TOKEN, None)  # "in" connected; "gain" not
    mixer.start()
    stream_through(mixer, "in", 3)
    assert mixer.ended == [3]


def test_an_optional_in_port_that_is_connected_is_waited_for():
    mixer = Mixer(ComponentContext("mix"))
    for port in mixer.in_ports:
        port._attach_sender(TOKEN, None)
    mixer.start()
    stream_through(mixer, "in", 3)
    assert mixer.ended == []  # "gain" has a sender: its stream has not ended
    stream_through(mixer, "gain", 2)
    assert mixer.ended == [5]


def test_provides_connections_are_numbered_across_the_components_ports_in_attach_order():
    mixer = Mixer(ComponentContext("mix"))
    gain, main = mixer.in_ports[1], mixer.in_ports[0]
    gain._attach_sender(1, None)
    main._attach_sender(2, None)
    main._attach_sender(3, None)
    assert mixer.connections()["provides"] == [
        {"port": "gain", "number": 0},
        {"port": "in", "number": 1},
        {"port": "in", "number": 2},
    ]
    assert mixer.connections()["uses"] == []


def test_stage_ports_follow_the_run_sample_type():
    stage = Stage(ComponentContext("s", sample_type="short"))
    assert [(p.name, p.sample_type, p.follows_run) for p in stage.in_ports + stage.out_ports] == [
        ("in", "short", True),
        ("out", "short", True),
    ]

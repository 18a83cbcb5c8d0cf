"""RhGain's in-port queue (experiments/sdrroot/dom/components/RhGain), its
servant called directly: a full queue flushed as BulkIO's is, stream by
stream, and what it passes over."""

import importlib.util
import sys

from conftest import REPO

from scabench.components import idl

BULKIO = idl.load().BULKIO
_spec = importlib.util.spec_from_file_location(
    "RhGain", REPO / "experiments" / "sdrroot" / "dom" / "components" / "RhGain" / "python" / "RhGain.py"
)
assert _spec is not None and _spec.loader is not None
rhgain = importlib.util.module_from_spec(_spec)
# No __pycache__ beside the program: experiments/ is bundled into the package as it stands.
_writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
try:
    _spec.loader.exec_module(rhgain)
finally:
    sys.dont_write_bytecode = _writes_bytecode

T = BULKIO.PrecisionUTCTime(BULKIO.TCM_CPU, BULKIO.TCS_VALID, 0.0, 1.0, 0.0)


def port(depth):
    rhgain.QUEUE_DEPTH = depth
    return rhgain.DoubleInPort("in", rhgain.Log("x", "x:w", rhgain.CF.LogLevels.OFF))


def queued(p):
    return [(k.streamID, k.data[0] if k.data else None, k.EOS, k.sri_changed) for k in p.queue]


def test_a_flush_collapses_each_stream_into_its_latest_packet_and_the_new_one_takes_its_place():
    p = port(5)
    p.pushSRI(rhgain.default_sri("a"))
    p.pushPacket([1.0], T, False, "a")
    p.pushSRI(rhgain.default_sri("b"))
    p.pushPacket([10.0], T, False, "b")
    p.pushPacket([2.0], T, True, "a")  # a's end
    p.pushPacket([3.0], T, False, "a")  # a new stream a (its default SRI)
    p.pushPacket([11.0], T, False, "b")
    assert p._get_state() == BULKIO.BUSY
    p.pushPacket([12.0], T, False, "b")  # full: flushed
    assert queued(p) == [
        ("a", 2.0, True, True),  # a's first stream: collapsed into its end, its SRI change carried
        ("a", 3.0, False, True),  # a's second
        ("b", 12.0, False, True),  # b's: the new packet, in place of its latest, with its SRI change
    ]
    assert p.flushed == 3  # a 1.0, b 10.0 and b 11.0


def test_an_empty_end_goes_onto_the_packet_before_it_and_empty_packets_are_passed_over():
    p = port(3)
    p.pushPacket([], T, False, "a")  # no samples, no end: nothing
    assert queued(p) == []
    p.pushPacket([1.0], T, False, "a")
    p.pushPacket([2.0], T, False, "a")
    p.pushPacket([], T, True, "a")
    p.pushPacket([5.0], T, False, "c")
    assert queued(p) == [("a", 2.0, True, True), ("c", 5.0, False, True)]
    assert p._get_activeSRIs()[0].streamID == "c"  # a's ended with it


class Recorder:
    """A connection's far end, called in-process."""

    def __init__(self):
        self.calls = []

    def pushSRI(self, H):
        self.calls.append(("sri", H.streamID))

    def pushPacket(self, data, T, EOS, streamID):
        self.calls.append(("packet", streamID, EOS))


def test_the_out_port_gives_each_connection_a_stream_s_sri_once_before_its_packets():
    out = rhgain.DoubleOutPort("out", rhgain.Log("x", "x:w", rhgain.CF.LogLevels.OFF))
    far = Recorder()
    out._connections["c"] = rhgain.Connection("c", "out", far)
    for eos in (False, False, True):  # a stream never given an SRI: BulkIO's default, once
        out.push_packet([1.0], T, eos, "s")
    out.push_packet([1.0], T, False, "s")  # the same id again after its end: a new stream, its SRI again
    assert far.calls == [
        ("sri", "s"),
        ("packet", "s", False),
        ("packet", "s", False),
        ("packet", "s", True),
        ("sri", "s"),
        ("packet", "s", False),
    ]

"""BulkIO over real processes: a hop of a run whose protocol is bulkio
(producer -> stage over BulkIO, stage -> sink over scabench's own), measured
as any run is; a client built from the project's IDL playing a REDHAWK uses
port against a running stage's BulkIO provides port; a BulkIO provides
servant in this process that a producer's uses port finds from its
repository id and pushes into; and what a bulkio connection cannot carry,
refused before any process starts."""

import json
import threading
import time

from conftest import scabench
from py_components_world import WAIT_S, S, orb, props  # noqa: F401 (orb: a fixture)
from test_connections import Host

from scabench.model.load import load_spec
from scabench.run import processes
from scabench.run.runner import run_spec

PACKETS = 12

SPEC = f"""[run]
transport = "tcp"
[[component]]
name = "producer"
kind = "producer"
packets = {PACKETS}
samples = 32
period_us = 2000
[[component]]
name = "stage"
kind = "stage"
work_us = 100
[[component]]
name = "sink"
kind = "sink"
[[connection]]
from = "producer.out"
to = "stage.in"
protocol = "bulkio"
[[connection]]
from = "stage.out"
to = "sink.in"
"""


def test_a_bulkio_hop_delivers_every_packet_in_order_and_says_so(write_spec, monkeypatch):
    # The run directory, to read the stage's sidecar while the run holds it.
    made = []
    make_run_dir = processes.make_run_dir
    monkeypatch.setattr(processes, "make_run_dir", lambda: made.append(make_run_dir()) or made[-1])
    sidecars = []

    def read_sidecar(_naming):
        # The stage writes it (whole, by a rename) once its end of stream is
        # sent, which the sink may report first: wait for it.
        path = made[0] / "stage.connections.json"
        deadline = time.monotonic() + WAIT_S
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        sidecars.append(json.loads(path.read_text()))

    doc = run_spec(load_spec(write_spec(SPEC)), on_hold=read_sidecar).as_dict()
    assert doc["status"] == "ok", doc.get("error")
    assert doc["clean"] is True, doc.get("missing")
    for stage in doc["stages"]:
        if stage["name"] != "producer":
            assert stage["received"] == PACKETS and stage["reordered_from_previous"] == 0, stage["name"]
    hops = {c["id"]: c for c in doc["connections"]}
    assert hops["producer.out->stage.in"]["protocol"] == "bulkio"
    # The producer's T is this machine's clock: every one a send time, none back.
    assert (hops["producer.out->stage.in"]["t_backwards"], hops["producer.out->stage.in"]["t_invalid"]) == (0, 0)
    assert "t_invalid" not in hops["stage.out->sink.in"]  # a scabench hop has no T
    assert hops["producer.out->stage.in"]["sent"] == PACKETS
    assert hops["producer.out->stage.in"]["received"] == PACKETS
    assert hops["stage.out->sink.in"]["protocol"] == "scabench"
    # A BulkIO hop's reordered is 0 by construction (positions as
    # received); its order is judged by T: none went backwards.
    (provides,) = [p for p in sidecars[0]["provides"] if p["port"] == "in"]
    assert provides["protocol"] == "bulkio" and provides["t_backwards"] == 0
    # Latency is measured across the BulkIO hop as across any other.
    assert doc["end_to_end_latency_us"]["p50"] > 0


# Two producers into the stage, and the stage's output over BulkIO: the
# stage forwards both streams on one connection.
TWO_STREAMS = f"""[run]
transport = "tcp"
[[component]]
name = "producer"
kind = "producer"
packets = {PACKETS}
samples = 32
period_us = 2000
[[component]]
name = "producer2"
kind = "producer"
packets = {PACKETS}
samples = 32
period_us = 2000
[[component]]
name = "stage"
kind = "stage"
[[component]]
name = "sink"
kind = "sink"
[[connection]]
from = "producer.out"
to = "stage.in"
[[connection]]
from = "producer2.out"
to = "stage.in"
[[connection]]
from = "stage.out"
to = "sink.in"
protocol = "bulkio"
"""


def test_a_stage_forwarding_two_streams_over_bulkio_ends_them_both(write_spec):
    """The end of the stage's output ends every stream it sent on the
    connection, so the sink's port reaches its end of stream."""
    doc = run_spec(load_spec(write_spec(TWO_STREAMS))).as_dict()
    assert doc["status"] == "ok", doc.get("error")
    assert doc["clean"] is True, doc.get("missing")
    sink = next(s for s in doc["stages"] if s["name"] == "sink")
    assert sink["received"] == 2 * PACKETS
    hops = {c["id"]: c for c in doc["connections"]}
    assert hops["stage.out->sink.in"]["protocol"] == "bulkio"
    assert hops["stage.out->sink.in"]["received"] == 2 * PACKETS


def utc(seconds_from_now=0.0):
    now = time.time() + seconds_from_now
    return S.BULKIO.PrecisionUTCTime(S.BULKIO.TCM_CPU, S.BULKIO.TCS_VALID, 0.0, float(int(now)), now - int(now))


def sri(stream_id):
    return S.BULKIO.StreamSRI(1, 0.0, 1.0, 0, 0, 0.0, 0.0, 0, 0, stream_id, False, [])


def keywords(stats):
    return {k.id: k.value.value() for k in stats.keywords}


def test_a_redhawk_style_client_pushes_into_a_stage(orb, tmp_path):
    """What a REDHAWK uses port does: pushSRI, then pushPacket with T, EOS
    and streamID, and no attach; the stage takes every packet, keeps the
    SRI while its stream is open, answers state and statistics, and ends
    its stream at the EOS."""
    host = Host(orb, tmp_path, "stage:stage")
    try:
        stage = host.res["stage"]
        stage.configure(props(work_us=0, in__protocol="bulkio", record_capacity=64))
        port = stage.getPort("in")._narrow(S.BULKIO.dataDouble)
        assert port is not None and not port._is_a("IDL:scabench/dataDouble:1.0")
        listed = {p.name: p.repid for p in stage.getPortSet()}
        assert listed == {"in": "IDL:BULKIO/dataDouble:1.0", "out": "IDL:scabench/dataDouble:1.0"}
        stage.start()
        assert port._get_state() == S.BULKIO.IDLE
        port.pushSRI(sri("capture"))
        assert [s.streamID for s in port._get_activeSRIs()] == ["capture"]
        assert port._get_state() == S.BULKIO.ACTIVE
        for i in range(5):
            port.pushPacket([float(i)] * 16, utc(), False, "capture")
        stats = port._get_statistics()
        assert list(stats.streamIDs) == ["capture"]
        assert keywords(stats)["calls"] == 5 and keywords(stats)["elements"] == 80
        port.pushPacket([], utc(), True, "capture")
        assert host.wait_for_end("stage") == 5
        assert port._get_activeSRIs() == []
        assert port._get_state() == S.BULKIO.IDLE
        stage.stop()
    finally:
        host.close()


class BulkioSink(S.BULKIO__POA.dataDouble):
    """A BulkIO provides port in this process, as a REDHAWK component's."""

    def __init__(self):
        self.calls = []
        self.sris = []
        self.cond = threading.Condition()

    def pushSRI(self, H):
        with self.cond:
            self.calls.append(("sri", H.streamID))
            self.sris.append(H)

    def pushPacket(self, data, T, EOS, streamID):
        with self.cond:
            self.calls.append(("packet", len(data), T.tcstatus, EOS, streamID))
            self.cond.notify_all()

    def _get_activeSRIs(self):
        return list(self.sris)

    def _get_state(self):
        return S.BULKIO.IDLE

    def _get_statistics(self):
        return S.BULKIO.PortStatistics("in", 0.0, 0.0, 0.0, [], 0.0, 0.0, [])


def test_a_producer_finds_a_bulkio_peer_and_pushes_into_it(orb, tmp_path):
    """The producer's port is given scabench's default protocol: the peer,
    a BULKIO::dataDouble, decides, and the producer's counts say bulkio."""
    sink = BulkioSink()
    poa = orb.resolve_initial_references("RootPOA")
    ref = poa.id_to_reference(poa.activate_object(sink))
    host = Host(orb, tmp_path, "producer:producer")
    try:
        producer = host.res["producer"]
        producer.configure(props(packets=4, samples=16, period_us=1000, record_capacity=16))
        producer.getPort("out")._narrow(S.CF.Port).connectPort(ref, "to-redhawk")
        producer.start()
        with sink.cond:
            assert sink.cond.wait_for(lambda: any(c[0] == "packet" and c[3] for c in sink.calls), WAIT_S)
            calls = list(sink.calls)
        assert calls[0] == ("sri", "0")  # the stream announced before its first packet
        assert calls[1:] == [("packet", 16, S.BULKIO.TCS_VALID, False, "0")] * 4 + [
            ("packet", 0, S.BULKIO.TCS_VALID, True, "0")
        ]
        producer.stop()  # which writes the connections' counts, whole
        sidecar = json.loads((tmp_path / "producer.connections.json").read_text())
        assert [(u["connection_id"], u["protocol"], u["sent"]) for u in sidecar["uses"]] == [
            ("to-redhawk", "bulkio", 4)
        ]
    finally:
        host.close()


def test_a_producer_disconnected_mid_stream_ends_the_stream_on_that_peer(orb, tmp_path):
    """disconnectPort while a stream is open on a BulkIO connection sends
    the peer an empty EOS for it first, as BulkIO's uses ports do."""
    sink = BulkioSink()
    poa = orb.resolve_initial_references("RootPOA")
    ref = poa.id_to_reference(poa.activate_object(sink))
    host = Host(orb, tmp_path, "producer:producer")
    try:
        producer = host.res["producer"]
        # Far more packets than the test waits for: the stream is still open at the disconnect.
        producer.configure(props(packets=100000, samples=16, period_us=2000, record_capacity=16))
        out = producer.getPort("out")._narrow(S.CF.Port)
        out.connectPort(ref, "to-redhawk")
        producer.start()
        with sink.cond:
            assert sink.cond.wait_for(lambda: sum(c[0] == "packet" for c in sink.calls) >= 3, WAIT_S)
        out.disconnectPort("to-redhawk")
        with sink.cond:
            calls = list(sink.calls)
        assert not any(c[0] == "packet" and c[3] for c in calls[:-1])  # no end before the disconnect's
        assert calls[-1] == ("packet", 0, S.BULKIO.TCS_VALID, True, "0")
        time.sleep(0.05)  # the producer goes on sending: to no one, so the peer hears nothing more
        with sink.cond:
            assert sink.calls == calls
        producer.stop()
    finally:
        host.close()


def refusal(write_spec, text, *flags):
    proc = scabench("validate", write_spec(text), *flags, timeout=120)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(lines) == 1 and "Traceback" not in proc.stderr, lines
    return lines[0]


def test_what_bulkio_cannot_carry_is_refused_in_one_line(write_spec):
    oneway = refusal(write_spec, SPEC.replace('protocol = "bulkio"', 'protocol = "bulkio"\ncall = "oneway"'))
    assert "connection[0].call" in oneway and "bulkio" in oneway
    shm = refusal(write_spec, SPEC.replace('transport = "tcp"', 'transport = "shm"'))
    assert "producer.out->stage.in" in shm and "shm" in shm
    python = refusal(write_spec, SPEC.replace('kind = "stage"', 'kind = "py-stage"').replace("work_us = 100", ""))
    assert "Python" in python and "protocol" in python

"""RhGain (experiments/sdrroot/dom/components/RhGain), a component written
the way a REDHAWK component is, from outside scabench's component runtime:
started as REDHAWK starts one (its entrypoint run with the SCA exec
parameters), driven through the CF contract by a client playing a REDHAWK
tool, and fed BulkIO by a test client that reads what comes out of it.
Against a real omniNames, over real sockets; every process started here is
ended by its PID."""

import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import REPO
from omniORB import CORBA

# The fixtures (context, naming, orb) are imported for pytest to find.
from py_components_world import (  # noqa: F401
    LOOPBACK,
    WAIT_S,
    S,
    bound,
    context,
    end_process,
    name,
    naming,
    orb,
)

from scabench.model.load import load_spec
from scabench.run.runner import run_spec

RHGAIN_DIR = REPO / "experiments" / "sdrroot" / "dom" / "components" / "RhGain"
RHGAIN = RHGAIN_DIR / "python" / "RhGain.py"
SPD = "/components/RhGain/RhGain.spd.xml"
BULKIO_DOUBLE = "IDL:BULKIO/dataDouble:1.0"
CF, BULKIO, BULKIO__POA = S.CF, S.BULKIO, S.BULKIO__POA


def program_env():
    """What a REDHAWK device gives an entrypoint: the environment, with the
    python3 that has omniORBpy first on PATH and this checkout's package."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO / "python")
    return env


class RhGainProcess:
    """RhGain.py run as REDHAWK's device runs an entrypoint: the file itself, with the exec parameters."""

    def __init__(self, tmp_path, context, context_ior, binding="RhGain_1", extra=()):
        self.context, self.binding = context, binding
        self.identifier = f"{binding}:waveform_1"
        args = [
            "NAMING_CONTEXT_IOR",
            context_ior,
            "COMPONENT_IDENTIFIER",
            self.identifier,
            "NAME_BINDING",
            binding,
            "PROFILE_NAME",
            SPD,
            "DEBUG_LEVEL",
            "3",
            *extra,
            *LOOPBACK,
        ]
        self.err_path = tmp_path / f"{binding}.err"
        with open(self.err_path, "w") as err:
            self.proc = subprocess.Popen([str(RHGAIN), *args], stdout=subprocess.DEVNULL, stderr=err, env=program_env())

    def resolve(self):
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                return self.context.resolve(name(self.binding))._narrow(CF.Resource)
            except S.CosNaming.NamingContext.NotFound:
                assert self.proc.poll() is None, f"RhGain exited {self.proc.returncode}: {self.stderr()}"
                assert time.monotonic() < deadline, "RhGain never bound its name"
                time.sleep(0.05)

    def stderr(self):
        return self.err_path.read_text()

    def close(self):
        end_process(self.proc)


@pytest.fixture
def rhgain(tmp_path, context):
    started = []

    def start(**kw):
        process = RhGainProcess(tmp_path, *context, **kw)
        started.append(process)
        return process

    yield start
    for process in started:
        process.close()


class BulkioSink(BULKIO__POA.dataDouble):
    """A BulkIO provides port of doubles in the test, as a REDHAWK
    component's would be: it keeps each call, SRI and packet, in order."""

    def __init__(self):
        self.calls = []  # ("sri", StreamSRI) or ("packet", data, T, EOS, streamID)
        self.cond = threading.Condition()

    def pushSRI(self, H):
        with self.cond:
            self.calls.append(("sri", H))
            self.cond.notify_all()

    def pushPacket(self, data, T, EOS, streamID):
        with self.cond:
            self.calls.append(("packet", list(data), T, EOS, streamID))
            self.cond.notify_all()

    def _get_activeSRIs(self):
        return []

    def _get_state(self):
        return BULKIO.IDLE

    def _get_statistics(self):
        return BULKIO.PortStatistics("sink", 0.0, 0.0, 0.0, [], 0.0, 0.0, [])

    def packets(self):
        return [c for c in self.calls if c[0] == "packet"]

    def wait_for(self, predicate):
        with self.cond:
            assert self.cond.wait_for(lambda: predicate(self.calls), WAIT_S), f"sink got {self.calls}"
            return list(self.calls)


@pytest.fixture
def bulkio_sink(orb):
    poa = orb.resolve_initial_references("RootPOA")
    sink = BulkioSink()
    poa.activate_object(sink)
    return sink, poa.servant_to_reference(sink)


def double(value):
    return CORBA.Any(CORBA.TC_double, value)


def utc(seconds, fraction):
    return BULKIO.PrecisionUTCTime(BULKIO.TCM_CPU, BULKIO.TCS_VALID, 0.0, float(seconds), fraction)


def sri(stream, xdelta=1e-3, blocking=False):
    return BULKIO.StreamSRI(1, 0.0, xdelta, 1, 0, 0.0, 0.0, 0, 0, stream, blocking, [])


# ---------------------------------------------------------------- the CF contract


def test_started_as_redhawk_starts_it_it_answers_the_cf_contract(rhgain):
    process = rhgain()
    res = process.resolve()
    assert res._get_identifier() == process.identifier  # COMPONENT_IDENTIFIER, not the name binding
    assert res._get_softwareProfile() == SPD  # PROFILE_NAME
    assert res._is_a("IDL:CF/Resource:1.0")
    # A REDHAWK deployment's order: initial values, then initialize; the values come once.
    res.initializeProperties([CF.DataType("gain", double(3.0))])
    res.initialize()
    with pytest.raises(CF.PropertyEmitter.AlreadyInitialized):
        res.initializeProperties([])
    assert [(p.id, p.value.value()) for p in res.query([])] == [("gain", 3.0)]
    res.configure([CF.DataType("gain", CORBA.Any(CORBA.TC_long, -2))])  # any number, as REDHAWK takes it
    assert res.query([CF.DataType("gain", CORBA.Any(CORBA.TC_null, None))])[0].value.value() == -2.0
    # What it does not have is refused as REDHAWK's PropertySet refuses it.
    with pytest.raises(CF.PropertySet.InvalidConfiguration) as refused:
        res.configure([CF.DataType("dataDouble_in.call", CORBA.Any(CORBA.TC_string, "twoway"))])
    assert [p.id for p in refused.value.invalidProperties] == ["dataDouble_in.call"]
    with pytest.raises(CF.PropertySet.PartialConfiguration) as partial:
        res.configure([CF.DataType("gain", double(4.0)), CF.DataType("gain", CORBA.Any(CORBA.TC_string, "x"))])
    assert [p.id for p in partial.value.invalidProperties] == ["gain"]
    with pytest.raises(CF.UnknownProperties):
        res.query([CF.DataType("nope", CORBA.Any(CORBA.TC_null, None))])
    # Its ports: BulkIO's, by the names its SCD gives.
    ports = {p.name: p for p in res.getPortSet()}
    assert {n: (p.repid, p.direction) for n, p in ports.items()} == {
        "dataDouble_in": (BULKIO_DOUBLE, CF.PortSet.DIRECTION_PROVIDES),
        "dataDouble_out": (BULKIO_DOUBLE, CF.PortSet.DIRECTION_USES),
    }
    provides, uses = res.getPort("dataDouble_in"), res.getPort("dataDouble_out")
    assert provides._is_a(BULKIO_DOUBLE) and not provides._is_a("IDL:scabench/dataDouble:1.0")
    for repid in ("IDL:CF/Port:1.0", "IDL:ExtendedCF/QueryablePort:1.0", "IDL:BULKIO/UsesPortStatisticsProvider:1.0"):
        assert uses._is_a(repid), repid
    with pytest.raises(CF.PortSupplier.UnknownPort):
        res.getPort("in")
    with pytest.raises(CF.TestableObject.UnknownTest):
        res.runTest(1, [])
    assert res.getNamedLoggers() == [process.binding]
    # The lifecycle.
    assert not res._get_started()
    res.start()
    assert res._get_started()
    res.stop()
    assert not res._get_started()
    res.releaseObject()
    assert not bound(process.context, process.binding)  # gone by the time releaseObject returns
    assert process.proc.wait(WAIT_S) == 0
    assert "Traceback" not in process.stderr()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("DEBUG_LEVEL", "9"), "DEBUG_LEVEL '9': 0 (fatal) to 5 (trace)"),
        (("SAMPLE_TYPE", "float"), "SAMPLE_TYPE 'float': RhGain's ports are BULKIO::dataDouble (double)"),
        (("DOM_PATH",), "exec parameter 'DOM_PATH' has no value"),
    ],
)
def test_bad_exec_parameters_are_one_line_and_exit_2_before_it_binds(rhgain, extra, says):
    process = rhgain(binding="bad", extra=extra)
    assert process.proc.wait(WAIT_S) == 2
    assert process.stderr() == f"RhGain: {says}\n"
    assert not bound(process.context, "bad")


def test_other_exec_parameters_are_passed_over_as_redhawk_passes_them(rhgain):
    process = rhgain(extra=("DOM_PATH", "/domain", "LOGGING_CONFIG_URI", "file:///nowhere", "SAMPLE_TYPE", "double"))
    process.resolve().releaseObject()
    assert process.proc.wait(WAIT_S) == 0


def test_sigterm_ends_it_and_unbinds_its_name(rhgain):
    process = rhgain()
    process.resolve()
    os.kill(process.proc.pid, signal.SIGTERM)
    assert process.proc.wait(WAIT_S) == 128 + signal.SIGTERM
    assert not bound(process.context, process.binding)
    assert "Traceback" not in process.stderr()


# ---------------------------------------------------------------- BulkIO through it


def test_bulkio_packets_come_out_times_the_gain_with_t_eos_stream_and_sri_as_they_came(rhgain, bulkio_sink):
    sink, sink_ref = bulkio_sink
    res = rhgain().resolve()
    res.initialize()
    res.configure([CF.DataType("gain", double(2.5))])
    uses = res.getPort("dataDouble_out")._narrow(BULKIO.UsesPortStatisticsProvider)
    uses.connectPort(sink_ref, "hop_out")
    assert [(c.connectionId, c.port._is_equivalent(sink_ref)) for c in uses._get_connections()] == [("hop_out", True)]
    with pytest.raises(CF.Port.OccupiedPort):
        uses.connectPort(sink_ref, "hop_out")
    res.start()
    port = res.getPort("dataDouble_in")._narrow(BULKIO.dataDouble)
    # As a REDHAWK uses port sends a stream: its SRI, then its packets, the last with EOS.
    port.pushSRI(sri("tx", xdelta=1e-6))
    sent = [[float(i), -1.5 * i, 0.25] for i in range(5)]
    times = [utc(1_700_000_000 + i, 0.125 * i) for i in range(5)]
    for i, data in enumerate(sent):
        port.pushPacket(data, times[i], i == len(sent) - 1, "tx")
    calls = sink.wait_for(lambda calls: sum(c[0] == "packet" for c in calls) == len(sent))
    assert calls[0][0] == "sri" and calls[0][1].streamID == "tx" and calls[0][1].xdelta == 1e-6  # passed through
    packets = [c for c in calls if c[0] == "packet"]
    assert [p[1] for p in packets] == [[2.5 * x for x in data] for data in sent]
    assert [(p[2].twsec, p[2].tfsec, p[2].tcstatus) for p in packets] == [
        (t.twsec, t.tfsec, BULKIO.TCS_VALID) for t in times
    ]
    assert [(p[3], p[4]) for p in packets] == [(False, "tx")] * 4 + [(True, "tx")]
    # Statistics, in PortStatistics' words: what each port carried.
    stats = port._get_statistics()
    assert stats.portName == "dataDouble_in" and stats.streamIDs == []  # the stream has ended
    assert stats.elementsPerSecond > 0 and stats.bitsPerSecond == pytest.approx(64 * stats.elementsPerSecond)
    assert port._get_state() == BULKIO.IDLE  # its queue is empty
    (per_connection,) = uses._get_statistics()
    assert per_connection.connectionId == "hop_out" and per_connection.statistics.callsPerSecond > 0
    assert port._get_activeSRIs() == []  # ended with its stream
    res.stop()
    res.releaseObject()


def test_a_stream_without_sri_gets_bulkio_default_one_and_a_port_that_goes_gets_eos(rhgain, bulkio_sink):
    sink, sink_ref = bulkio_sink
    res = rhgain().resolve()
    res.initialize()
    uses = res.getPort("dataDouble_out")
    uses.connectPort(sink_ref, "c1")
    res.start()
    port = res.getPort("dataDouble_in")._narrow(BULKIO.dataDouble)
    port.pushPacket([1.0, 2.0], utc(1, 0.5), False, "s7")  # no pushSRI first
    calls = sink.wait_for(lambda calls: any(c[0] == "packet" for c in calls))
    assert calls[0][0] == "sri" and (calls[0][1].streamID, calls[0][1].xdelta) == ("s7", 1.0)
    assert calls[1][1:] == ([1.0, 2.0], calls[1][2], False, "s7")  # the PRF's gain, 1.0
    assert [s.streamID for s in port._get_activeSRIs()] == ["s7"]
    assert port._get_statistics().streamIDs == ["s7"]
    # The stream is under way: the connection that goes is given its end.
    uses.disconnectPort("c1")
    last = sink.wait_for(lambda calls: calls[-1][0] == "packet" and calls[-1][3])[-1]
    assert (last[1], last[3], last[4]) == ([], True, "s7")
    assert uses._narrow(BULKIO.UsesPortStatisticsProvider)._get_connections() == []
    with pytest.raises(CF.Port.InvalidPort):
        uses.disconnectPort("c1")
    with pytest.raises(CF.Port.InvalidPort):  # not a BulkIO port of doubles
        uses.connectPort(res, "c2")
    res.releaseObject()


def test_a_full_queue_is_flushed_as_bulkio_s_unless_the_sri_asks_for_blocking(rhgain, bulkio_sink):
    sink, sink_ref = bulkio_sink
    res = rhgain().resolve()
    res.initialize()
    res.getPort("dataDouble_out").connectPort(sink_ref, "c1")
    port = res.getPort("dataDouble_in")._narrow(BULKIO.dataDouble)
    # Stopped, it takes packets into its queue and processes none: 100 fill it.
    port.pushSRI(sri("lossy"))
    for i in range(100):
        port.pushPacket([float(i)], utc(i, 0.0), False, "lossy")
    assert port._get_state() == BULKIO.BUSY and port._get_statistics().averageQueueDepth == 100.0
    # The next one flushes the queue: the stream's queued packets collapse into their latest, whose place
    # the new one takes, the SRI change carried onto it.
    port.pushPacket([100.0], utc(100, 0.0), True, "lossy")
    # A blocking stream holds its sender back instead: its packets all wait their turn.
    port.pushSRI(sri("held", blocking=True))
    held = threading.Thread(
        target=lambda: [port.pushPacket([-float(i)], utc(i, 0.0), i == 149, "held") for i in range(150)]
    )
    held.start()
    deadline = time.monotonic() + WAIT_S
    while port._get_state() != BULKIO.BUSY:  # full again, and the sender waiting
        assert time.monotonic() < deadline, "the queue never filled"
        time.sleep(0.01)
    assert held.is_alive()
    res.start()
    held.join(WAIT_S)
    assert not held.is_alive()
    calls = sink.wait_for(lambda calls: sum(c[0] == "packet" and c[3] for c in calls) == 2)
    assert calls[0][0] == "sri" and calls[0][1].streamID == "lossy"  # the SRI change, carried onto the one kept
    assert [c[1][0] for c in calls if c[0] == "packet" and c[4] == "lossy"] == [100.0]  # its latest, its end
    assert [c[1][0] for c in calls if c[0] == "packet" and c[4] == "held"] == [-float(i) for i in range(150)]
    res.releaseObject()


# ---------------------------------------------------------------- in a scabench waveform

SPEC = REPO / "experiments" / "graphs" / "redhawk-component.toml"
SDRROOT = REPO / "experiments" / "sdrroot"
SAD = SDRROOT / "dom" / "waveforms" / "RhGainChain" / "RhGainChain.sad.xml"
PACKETS, SAMPLES = 20, 64


def producer_sum(samples):
    """What the producer's packet sums to: 100 sin(0.01 i), i < samples (cpp/components/producer.cpp)."""
    return sum(100.0 * math.sin(0.01 * i) for i in range(samples))


def check_rhgain_run(result, names, gain):
    """Clean, its one path delivered whole and in order, measured, and both hops BulkIO."""
    producer, rhgain, sink = names
    assert result.status == "ok", result.error
    assert result.clean is True, result.why_not_clean()
    (path,) = result.paths
    assert (path.source, path.sink) == (producer, sink)
    assert (path.sent, path.arrivals, path.delivered) == (PACKETS,) * 3, path
    assert (path.lost, path.dropped, path.reordered) == (0, 0, 0), path
    assert path.latency_us is not None and path.latency_us.count == PACKETS
    assert [(h.id, h.protocol) for h in result.connections] == [
        (f"{producer}.out->{rhgain}.dataDouble_in", "bulkio"),
        (f"{rhgain}.dataDouble_out->{sink}.in", "bulkio"),
    ]
    stages = {s.name: s for s in result.stages}
    assert stages[rhgain].measured_at == f"{sink}.in" and stages[rhgain].received == PACKETS
    assert stages[rhgain].process_cpu_s > 0  # its own process, started by the run
    # What reached the sink is the producer's samples times the gain.
    assert float(result.stats[sink]["checksum"]) == pytest.approx(PACKETS * gain * producer_sum(SAMPLES))


def test_the_waveform_runs_with_rhgain_between_scabench_s_producer_and_sink(monkeypatch):
    monkeypatch.setenv("PATH", program_env()["PATH"])
    spec = load_spec(SPEC).with_packets(PACKETS, where="test")
    check_rhgain_run(run_spec(spec), ("producer", "rhgain", "sink"), 2.0)


def test_its_sad_runs_under_the_sdr_root(monkeypatch):
    monkeypatch.setenv("PATH", program_env()["PATH"])
    monkeypatch.setenv("SDRROOT", str(SDRROOT))
    spec = load_spec(SAD).with_packets(PACKETS, where="test")
    check_rhgain_run(run_spec(spec), ("BulkioSource_1", "RhGain_1", "BulkioSink_1"), 2.0)

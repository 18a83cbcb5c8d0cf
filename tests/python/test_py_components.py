"""Components in Python (python/scabench/components/): `scabench-py-stage`
started the SCA way against a real omniNames, driven over real CORBA from
this process as a launcher would, its packets checked at a sink servant
here; and beside a C++ stage in `scabench-host`."""
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
import tomllib

import pytest
from omniORB import CORBA

from py_components_world import (LOOPBACK, WAIT_S, S, NamingService, StageProcess, alive, any_of, as_bytes, bound,
                                 end_process, free_port, header, name, props, samples, sink_class, stage_command)
from scabench.components.component import ComponentContext
from scabench.components.stage import Stage
from scabench.paths import REPO_ROOT, program

_contexts = itertools.count(1)


@pytest.fixture(scope="module")
def orb():
    orb = CORBA.ORB_init(["tests", "-ORBgiopMaxMsgSize", str(64 << 20)] + LOOPBACK, CORBA.ORB_ID)
    poa = orb.resolve_initial_references("RootPOA")
    poa._get_the_POAManager().activate()
    yield orb
    orb.destroy()


@pytest.fixture(scope="module")
def naming(orb, tmp_path_factory):
    service = NamingService(tmp_path_factory.mktemp("naming"), orb)
    yield service
    service.close()


@pytest.fixture
def context(orb, naming):
    """A fresh naming context, as a launcher makes for a waveform instance: (context, its IOR)."""
    ctx = naming.root.bind_new_context(name(f"waveform_{next(_contexts)}"))
    return ctx, orb.object_to_string(ctx)


@pytest.fixture
def start_stage(tmp_path, context):
    started = []

    def start(**kw):
        stage = StageProcess(tmp_path, *context, **kw)
        started.append(stage)
        return stage
    yield start
    for stage in started:
        stage.close()


@pytest.fixture
def make_sink(orb):
    poa = orb.resolve_initial_references("RootPOA")

    def make(sample_type="double"):
        sink = sink_class(sample_type)()
        poa.activate_object(sink)
        return sink, poa.servant_to_reference(sink)
    return make


def wired_stage(start_stage, make_sink, sample_type="double", **config):
    """A started stage, configured (work none unless said), its out-port connected to a sink here."""
    stage = start_stage(sample_type=sample_type)
    res = stage.resolve()
    res.initialize()
    res.configure(props(**{"work": "none", **config}))
    port = res.getPort("in")._narrow(getattr(S.data, f"data{sample_type.capitalize()}"))
    sink, sink_ref = make_sink(sample_type)
    res.getPort("out")._narrow(S.CF.Port).connectPort(sink_ref, "stage1-to-sink")
    res.start()
    return stage, res, port, sink


def test_twoway_packets_are_forwarded_bit_identical_in_order_with_link_sequence_restamped(start_stage, make_sink):
    stage, res, port, sink = wired_stage(start_stage, make_sink)
    sent = [(header(i, link=1000 + 3 * i), samples("double", 256, i)) for i in range(40)]
    for h, data in sent:
        port.pushPacket(h, data)  # returns once forwarded: the stage's out call is two-way too
    got = sink.data()
    assert [h.sequence_number for h, _, _ in got] == list(range(40))
    assert [h.link_sequence for h, _, _ in got] == list(range(40))  # this connection's own count
    for (h, data), (g, gdata, call) in zip(sent, got):
        assert (g.stream_id, g.send_time_ns, g.end_of_stream, call) == (h.stream_id, h.send_time_ns, False, "twoway")
        assert as_bytes("double", gdata) == as_bytes("double", data)
    port.pushPacket(header(40, eos=True), [])
    (eos, _, _), = sink.ends()
    assert (eos.sequence_number, eos.link_sequence, eos.stream_id) == (40, 40, 7)
    assert stage.stderr() == ""


def test_a_packet_past_omniorbs_default_message_limit_crosses(start_stage, make_sink):
    """2.4 MB of doubles: over omniORB's 2 MiB default, under the runs' 64 MiB."""
    stage, res, port, sink = wired_stage(start_stage, make_sink)
    data = samples("double", 300_000, 3)
    port.pushPacket(header(0), data)
    (_, got, _), = sink.data()
    assert as_bytes("double", got) == as_bytes("double", data)


@pytest.mark.parametrize("sample_type", ["octet", "short", "float"])
def test_every_sample_type_crosses_bit_identical(start_stage, make_sink, sample_type):
    stage, res, port, sink = wired_stage(start_stage, make_sink, sample_type)
    sent = [samples(sample_type, 300, 50 + i) for i in range(5)]
    for i, data in enumerate(sent):
        port.pushPacket(header(i), data)
    assert [as_bytes(sample_type, d) for _, d, _ in sink.data()] == [as_bytes(sample_type, d) for d in sent]


@pytest.mark.parametrize("sync", ["none", "transport", "server", "target"])
def test_oneway_packets_all_arrive_once_and_end_of_stream_follows_them(start_stage, make_sink, sync):
    stage, res, port, sink = wired_stage(start_stage, make_sink, out__call="oneway", out__sync=sync)
    n = 60
    sent = {i: samples("double", 64, i) for i in range(n)}
    for i, data in sent.items():
        port.pushPacketOneway(header(i), data)
    port.pushPacketOneway(header(n, eos=True), [])  # may overtake packets in the stage's ORB
    # One-way again from the stage: at the sink too end of stream may overtake packets, so the
    # sink waits for the count it announces, as a port does.
    sink.wait_for(lambda p: any(h.end_of_stream for h, _, _ in p) and
                  sum(not h.end_of_stream for h, _, _ in p) >= n)
    got = sink.data()
    assert sorted(h.sequence_number for h, _, _ in got) == list(range(n))
    assert sorted(h.link_sequence for h, _, _ in got) == list(range(n))
    assert all(as_bytes("double", d) == as_bytes("double", sent[h.sequence_number]) for h, d, _ in got)
    expected_call = "twoway" if sync == "target" else "oneway"
    assert {call for _, _, call in sink.packets} == {expected_call}
    eos, = (h for h, _, _ in sink.ends())
    # Forwarded only after all n: its link sequence comes after every packet's.
    assert (eos.sequence_number, eos.link_sequence) == (n, n)


def test_end_of_stream_waits_for_the_packets_it_announces(start_stage, make_sink):
    stage, res, port, sink = wired_stage(start_stage, make_sink)
    port.pushPacket(header(3, eos=True), [])  # overtook all three packets
    port.pushPacket(header(0), [0.0])
    port.pushPacket(header(1), [1.0])
    assert sink.ends() == []
    port.pushPacket(header(2), [2.0])
    assert [(h.sequence_number, h.end_of_stream, h.link_sequence) for h, _, _ in sink.packets] == \
        [(0, False, 0), (1, False, 1), (2, False, 2), (3, True, 3)]


def test_a_stage_with_nothing_connected_reports_its_end_of_stream(start_stage):
    stage = start_stage()
    res = stage.resolve()
    res.configure(props(work="none"))
    res.start()
    port = res.getPort("in")._narrow(S.data.dataDouble)
    for i in range(4):
        port.pushPacket(header(i), [float(i)])
    port.pushPacket(header(4, eos=True), [])
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0
    assert stage.stdout().splitlines() == ["eos stage1 4"]


def test_cpu_work_costs_about_work_us_of_cpu_and_sleep_costs_little(start_stage, make_sink):
    n, work_s = 10, 0.02
    stage, res, port, sink = wired_stage(start_stage, make_sink, work="cpu", work_us=int(work_s * 1e6))
    cpu0, t0 = stage.cpu_s(), time.monotonic()
    for i in range(n):
        port.pushPacket(header(i), [0.0] * 16)
    cpu, wall = stage.cpu_s() - cpu0, time.monotonic() - t0
    # Busy on the thread's own CPU clock: at least n * work of CPU (less a tick either end), and
    # nowhere near twice it. No bound on wall time but the floor: the machine may be busy.
    assert n * work_s - 0.03 <= cpu < 2 * n * work_s + 0.5, cpu
    assert wall >= n * work_s

    res.stop()
    res.configure(props(work="sleep"))
    res.start()
    cpu0, t0 = stage.cpu_s(), time.monotonic()
    for i in range(n, 2 * n):
        port.pushPacket(header(i), [0.0] * 16)
    cpu, wall = stage.cpu_s() - cpu0, time.monotonic() - t0
    assert wall >= n * work_s
    assert cpu < n * work_s / 2, cpu  # waiting, not computing
    assert len(sink.data()) == 2 * n


def test_a_stopped_component_neither_processes_nor_forwards(start_stage, make_sink):
    stage, res, port, sink = wired_stage(start_stage, make_sink)
    port.pushPacket(header(0), [0.0])
    res.stop()
    with pytest.raises(CORBA.BAD_INV_ORDER):
        port.pushPacket(header(1), [1.0])
    port.pushPacketOneway(header(2), [2.0])
    port.syncMarker()  # the one-way has been read; its upcall may still be running
    time.sleep(0.2)
    assert [h.sequence_number for h, _, _ in sink.packets] == [0]
    assert "refused: the component is not started" in stage.stderr()
    res.start()
    port.pushPacket(header(3), [3.0])
    assert [h.sequence_number for h, _, _ in sink.packets] == [0, 3]


REFUSED = [
    ("in.worker", 64, "supported: 0"),
    ("in.ordering", "resequence", "supported: arrival"),
    ("in.flow", "credits(16)", "supported: none"),
    ("out.flow", "watermarks(2, 8)", "supported: none"),
    ("in.dispatch", "threads", "use pool, pool:N, serial or single"),
    ("out.call", "sometimes", "use one of: twoway, oneway"),
    ("out.sync", "later", "use one of: none, transport, server, target"),
    ("work", "gpu", "use one of: none, cpu, sleep"),
    ("work_us", -1, "from 0"),
    ("colour", "blue", "unknown property"),
]


def test_configure_refuses_what_the_python_runtime_does_not_do_naming_the_property(start_stage):
    stage = start_stage()
    res = stage.resolve()
    for pid, value, why in REFUSED:
        with pytest.raises(S.CF.PropertySet.InvalidConfiguration) as refused:
            res.configure(props(work_us=1234) + props(**{pid.replace(".", "__"): value}))
        assert f"property '{pid}'" in refused.value.msg and why in refused.value.msg, refused.value.msg
        assert [p.id for p in refused.value.invalidProperties] == [pid]
    # All or nothing: the good value sent beside each bad one was not applied.
    current = {p.id: p.value.value() for p in res.query([])}
    assert current["work_us"] == 5000 and current["in.worker"] == 0 and current["out.flow"] == "none"
    # Every key of each connection, defaults included, is taken (the launcher sends them all).
    defaults = {"in.dispatch": "pool", "in.worker": 0, "in.worker_resume": "auto", "in.ordering": "arrival",
                "in.reorder_capacity": 64, "in.reorder_timeout_ms": 50.0, "in.flow": "none", "out.call": "oneway",
                "out.sync": "none", "out.flow": "none", "out.sync_none_depth": 1024}
    res.configure(props(**{k.replace(".", "__"): v for k, v in defaults.items()}))
    res.start()
    with pytest.raises(S.CF.PropertySet.InvalidConfiguration) as refused:
        res.configure(props(work_us=1))
    assert "started" in refused.value.msg


INTEGERS = [(CORBA.TC_short, 1500), (CORBA.TC_ushort, 1501), (CORBA.TC_long, 1502), (CORBA.TC_ulong, 1503),
            (CORBA.TC_longlong, 1504), (CORBA.TC_ulonglong, 1505), (CORBA.TC_octet, 200), (CORBA.TC_double, 1506.0),
            (CORBA.TC_float, 1507.0)]


def test_integer_properties_take_any_numeric_corba_type_that_fits(start_stage):
    res = start_stage().resolve()
    for tc, value in INTEGERS:
        res.configure([S.CF.DataType("work_us", any_of(tc, value))])
        got, = res.query([S.CF.DataType("work_us", any_of(CORBA.TC_null, None))])
        assert (got.value.typecode().kind(), got.value.value()) == (CORBA.tk_longlong, int(value))
    for tc, value, why in [(CORBA.TC_double, 1.5, "whole number"), (CORBA.TC_ulonglong, 2 ** 64 - 1, "64-bit"),
                           (CORBA.TC_string, "5000", "integer"), (CORBA.TC_boolean, True, "integer")]:
        with pytest.raises(S.CF.PropertySet.InvalidConfiguration) as refused:
            res.configure([S.CF.DataType("work_us", any_of(tc, value))])
        assert "'work_us'" in refused.value.msg and why in refused.value.msg, refused.value.msg
    res.configure([S.CF.DataType("in.reorder_timeout_ms", any_of(CORBA.TC_short, 20))])  # a real takes an integer


def test_release_unbinds_the_name_and_exits_0(start_stage):
    stage = start_stage(binding="stage7")
    res = stage.resolve()
    assert res._get_identifier() == "stage7:waveform_1"
    res.initialize()
    res.start()
    res.releaseObject()
    assert not stage.bound()  # gone by the time releaseObject returns
    assert stage.proc.wait(WAIT_S) == 0
    assert stage.stderr() == ""


def test_sigterm_ends_it_cleanly_and_unbinds(start_stage):
    stage = start_stage()
    stage.resolve()
    os.kill(stage.proc.pid, signal.SIGTERM)
    assert stage.proc.wait(WAIT_S) == 128 + signal.SIGTERM
    assert not stage.bound()
    assert "Traceback" not in stage.stderr()


def test_it_dies_with_its_parent(tmp_path, context):
    ctx, ior = context
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; p = subprocess.Popen(sys.argv[1:]); "
                               "print(p.pid, flush=True); p.wait()", *stage_command(), "NAMING_CONTEXT_IOR", ior,
                               "COMPONENT_IDENTIFIER", "orphan:w", "NAME_BINDING", "orphan", *LOOPBACK],
                              stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + WAIT_S
        while not bound(ctx, "orphan"):
            assert time.monotonic() < deadline, "never bound"
            time.sleep(0.05)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + WAIT_S
        while alive(child):
            assert time.monotonic() < deadline, "outlived its parent"
            time.sleep(0.05)
        assert not bound(ctx, "orphan")  # it ended cleanly: SIGTERM
    finally:
        end_process(parent)
        if alive(child):
            os.kill(child, signal.SIGKILL)


@pytest.mark.parametrize("args, why", [
    ([], "missing NAMING_CONTEXT_IOR, COMPONENT_IDENTIFIER, NAME_BINDING"),
    (["NAMING_CONTEXT_IOR", "IOR:00", "COMPONENT_IDENTIFIER", "a"], "missing NAME_BINDING"),
    (["NAMING_CONTEXT_IOR", "IOR:00", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING"], "'NAME_BINDING' has no value"),
    (["NAMING_CONTEXT_IOR", "x", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b", "SAMPLE_TYPE", "int"],
     "SAMPLE_TYPE 'int'"),
    (["NAMING_CONTEXT_IOR", "x", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b", "-ORBtraceLevel"],
     "ORB option -ORBtraceLevel has no value"),
    (["NAMING_CONTEXT_IOR", "x", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b", "KIND", "fir"],
     "KIND 'fir': this program serves 'stage'"),
    (["NAMING_CONTEXT_IOR", "not-an-ior", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b"],
     "not an object reference"),
])
def test_bad_parameters_get_one_line_and_exit_2(args, why):
    done = subprocess.run(stage_command() + args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and why in done.stderr, done.stderr


def test_help_and_an_unusable_context(orb, make_sink):
    done = subprocess.run(stage_command() + ["--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "NAMING_CONTEXT_IOR" in done.stdout and "NAME_BINDING" in done.stdout
    base = ["COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b"] + LOOPBACK
    # Another kind of object: not a naming context.
    _, sink_ref = make_sink()
    done = subprocess.run(stage_command() + ["NAMING_CONTEXT_IOR", orb.object_to_string(sink_ref)] + base,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "not a CosNaming naming context" in done.stderr, done.stderr
    # Nothing listens there: it cannot be reached.
    done = subprocess.run(stage_command() + ["NAMING_CONTEXT_IOR", f"corbaloc::127.0.0.1:{free_port()}/NameService"]
                          + base, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "cannot reach the naming context" in done.stderr, done.stderr


def test_dispatch_single_serialises_the_port(start_stage, make_sink):
    stage, res, port, sink = wired_stage(start_stage, make_sink, in__dispatch="single", work="sleep", work_us=100_000)

    def push(first):
        for i in (first, first + 1):
            port.pushPacket(header(i), [float(i)])
    t0 = time.monotonic()
    threads = [threading.Thread(target=push, args=(k,)) for k in (0, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Two callers, four packets of 100 ms each: one at a time takes 0.4 s; served by the ORB's pool, about 0.2 s.
    assert time.monotonic() - t0 >= 0.4
    assert sorted(h.sequence_number for h, _, _ in sink.packets) == [0, 1, 2, 3]


def test_policy_keys_and_defaults_are_the_runtimes():
    """The Python ports declare the runtime's policy keys with its defaults,
    and the stage the C++ stage's own properties (all but record_capacity:
    the Python runtime keeps no packet records)."""
    described = json.loads(subprocess.run([str(program("scabench-host")), "--describe"], capture_output=True,
                                          text=True, check=True, timeout=60).stdout)
    cxx = {k: v["default"] for k, v in described["kinds"]["stage"]["properties"].items() if k != "record_capacity"}
    python = {k: p.value for k, p in Stage(ComponentContext("s")).properties.entries().items()}
    assert python == cxx


def test_the_console_script_is_declared():
    scripts = tomllib.loads((REPO_ROOT / "python" / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["scabench-py-stage"] == "scabench.components.stage:main"


def test_a_cxx_stage_and_python_stages_talk_both_ways(tmp_path, orb, context, start_stage, make_sink):
    """test -> Python stage -> C++ stage (scabench-host) -> Python stage -> sink."""
    py_a, py_b = start_stage(binding="py_a"), start_stage(binding="py_b")
    read_fd, write_fd = os.pipe()
    host = subprocess.Popen([str(program("scabench-host")), "--host", "h1", "--status-fd", str(write_fd),
                             "--record-dir", str(tmp_path), "--component", "cxx:stage:double"] + LOOPBACK,
                            pass_fds=(write_fd,), stderr=subprocess.PIPE, text=True)
    os.close(write_fd)
    status = os.fdopen(read_fd)
    try:
        line = status.readline().split()
        assert line[:2] == ["ready", "cxx"], line
        cxx = orb.string_to_object(line[2])._narrow(S.CF.Resource)
        a, b = py_a.resolve(), py_b.resolve()
        sink, sink_ref = make_sink()
        for res in (a, cxx, b):
            res.initialize()
        a.configure(props(work="none"))
        b.configure(props(work="none"))
        cxx.configure(props(work="none", record_capacity=1000))
        a.getPort("out")._narrow(S.CF.Port).connectPort(cxx.getPort("in"), "a-cxx")
        cxx.getPort("out")._narrow(S.CF.Port).connectPort(b.getPort("in"), "cxx-b")
        b.getPort("out")._narrow(S.CF.Port).connectPort(sink_ref, "b-sink")
        for res in (b, cxx, a):
            res.start()
        port = a.getPort("in")._narrow(S.data.dataDouble)
        sent = [samples("double", 128, 90 + i) for i in range(20)]
        for i, data in enumerate(sent):
            port.pushPacket(header(i, link=500 + i), data)
        port.pushPacket(header(20, eos=True), [])
        got = sink.wait_for(lambda p: any(h.end_of_stream for h, _, _ in p))
        assert [(h.sequence_number, h.link_sequence) for h, _, _ in got[:-1]] == [(i, i) for i in range(20)]
        assert [as_bytes("double", d) for _, d, _ in got[:-1]] == [as_bytes("double", d) for d in sent]
        assert (got[-1][0].end_of_stream, got[-1][0].sequence_number) == (True, 20)
        for res in (a, cxx, b):
            res.releaseObject()
        assert host.wait(WAIT_S) == 0 and py_a.proc.wait(WAIT_S) == 0 and py_b.proc.wait(WAIT_S) == 0
    finally:
        end_process(host)
        status.close()

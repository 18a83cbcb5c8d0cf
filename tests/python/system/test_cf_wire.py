"""The CF on the wire as SCA 2.2.2 and REDHAWK 2.x have it, checked by a
client in this process playing a REDHAWK tool (omniORBpy with the project's
IDL, idl/cf.idl): a deployment's calls in its order (initializeProperties,
initialize, configure, getPortSet, connectPort and `connections` on a uses
port, start, `started`, stop) on a C++ component (scabench-host in the exec
form) and a Python one (scabench-py-stage), and each CF exception that
carries a CF::ErrorNumberType, read back from a component and a node with
the CF_E* value chosen for what happened. Every process started here is
ended by its PID."""

import os
import shutil
import subprocess

import pytest
from omniORB import CORBA
from py_components_world import (  # noqa: F401 (fixtures: context, make_sink, naming, orb, start_stage)
    TOKEN,
    WAIT_S,
    S,
    StageProcess,
    context,
    header,
    make_sink,
    naming,
    orb,
    props,
    start_stage,
)
from test_node import exec_params, node, start_node  # noqa: F401 (fixtures: node, start_node)

from scabench.node.profile import DEVICE_SPD
from scabench.paths import program

CF = S.CF
PROFILE = "/components/producer/producer.spd.xml"


def exec_host(tmp_path, context, binding, record_dir, *extra):
    """scabench-host in the SCA exec form hosting one producer, as a REDHAWK
    ApplicationFactory would start it (PROFILE_NAME included)."""
    ctx, ior = context
    return StageProcess(
        tmp_path,
        ctx,
        ior,
        binding=binding,
        command=[str(program("scabench-host"))],
        extra=["KIND", "producer", "RECORD_DIR", str(record_dir), *extra],
    )


def deploy(res, initial, ports):
    """A REDHAWK deployment's first calls: initial values once, before
    initialize; the ports as getPortSet lists them, {name: (direction, repid)}."""
    res.initializeProperties(initial)
    res.initialize()
    with pytest.raises(CF.PropertyEmitter.AlreadyInitialized):
        res.initializeProperties(initial)  # once, and never after initialize
    asked = [CF.DataType(p.id, CORBA.Any(CORBA.TC_null, None)) for p in initial]
    assert [(p.id, p.value.value()) for p in res.query(asked)] == [(p.id, p.value.value()) for p in initial]
    listed = res.getPortSet()
    assert {p.name: (p.direction, p.repid) for p in listed} == ports
    for p in listed:
        assert p.obj_ptr._is_equivalent(res.getPort(p.name)) and p.description
    assert not res._get_started()


def logging_answers(res, logger):
    """Logging: one logger at INFO, no records, nothing else it can be set to."""
    assert res._get_log_level() == CF.LogLevels.INFO and res.getNamedLoggers() == [logger]
    assert res.getLogLevel(logger) == CF.LogLevels.INFO
    res.setLogLevel(logger, CF.LogLevels.INFO)
    assert res.retrieve_records(10, 0) == ([], 0)
    with pytest.raises(CORBA.NO_IMPLEMENT):
        res.setLogLevel(logger, CF.LogLevels.DEBUG)
    with pytest.raises(CF.UnknownIdentifier):
        res.getLogLevel("nobody")
    with pytest.raises(CORBA.NO_IMPLEMENT):
        res.setLogConfigURL("file:///etc/log4j.cfg")
    with pytest.raises(CORBA.NO_IMPLEMENT):
        res.registerPropertyListener(res, [], 1.0)
    with pytest.raises(CF.InvalidIdentifier):
        res.unregisterPropertyListener("never-registered")


def queryable(res, port):
    out = res.getPort(port)._narrow(S.ExtendedCF.QueryablePort)
    assert out is not None, f"uses port {port} is not a QueryablePort"
    return out


def listed(out):
    return [c.connectionId for c in out._get_connections()]


def test_a_redhawk_deployment_drives_a_cpp_component(tmp_path, context, make_sink):
    host = exec_host(tmp_path, context, "src", tmp_path, "PROFILE_NAME", PROFILE)
    try:
        res = host.resolve()
        assert (res._get_identifier(), res._get_softwareProfile()) == ("src:waveform_1", PROFILE)
        deploy(res, props(packets=3, samples=4), {"out": (CF.PortSet.DIRECTION_USES, "IDL:scabench/dataDouble:1.0")})
        res.configure(props(stream_id=5))
        out = queryable(res, "out")
        (a, a_ref), (b, b_ref) = make_sink(), make_sink()
        out.connectPort(a_ref, "src-a")
        out.connectPort(b_ref, "src-b")
        connections = out._get_connections()
        assert [c.connectionId for c in connections] == ["src-a", "src-b"]
        assert connections[0].port._is_equivalent(a_ref) and connections[1].port._is_equivalent(b_ref)
        res.start()
        assert res._get_started()
        for sink in (a, b):
            packets = sink.wait_for(lambda ps: any(h.end_of_stream for h, _, _ in ps))
            assert [h.stream_id for h, _, _ in packets] == [5] * 4
        res.stop()
        assert not res._get_started()
        out.disconnectPort("src-a")
        assert listed(out) == ["src-b"]
        logging_answers(res, "src")
        res.releaseObject()
        assert host.proc.wait(WAIT_S) == 0
    finally:
        host.close()


def test_a_cpp_components_start_errors_carry_the_cf_error_number(tmp_path, context):
    gone = tmp_path / "gone"
    gone.mkdir()
    host = exec_host(tmp_path, context, "src", gone)
    try:
        res = host.resolve()
        assert res._get_softwareProfile() == ""  # no PROFILE_NAME given
        shutil.rmtree(gone)  # where its packet records go is gone at its first start
        with pytest.raises(CF.Resource.StartError) as no_dir:
            res.start()
        assert no_dir.value.errorNumber == CF.CF_ENOENT and not res._get_started()
        gone.mkdir()
        res.configure(props(filters=1))  # a filter chain needs float samples: a bad value at start
        with pytest.raises(CF.Resource.StartError) as bad_value:
            res.start()
        assert bad_value.value.errorNumber == CF.CF_EINVAL and "float" in bad_value.value.msg
        res.configure(props(filters=0, packets=1))
        res.start()  # the next start tries again
        assert res._get_started()
        res.releaseObject()
    finally:
        host.close()


def test_the_exec_host_refuses_to_start_without_a_component_identifier(tmp_path, context):
    _, ior = context
    done = subprocess.run(
        [str(program("scabench-host")), "NAMING_CONTEXT_IOR", ior, "NAME_BINDING", "x", "KIND", "producer"],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode == 2 and "COMPONENT_IDENTIFIER is required" in done.stderr


def test_a_redhawk_deployment_drives_a_python_component(start_stage, make_sink):
    stage = start_stage(binding="pystage", extra=["PROFILE_NAME", "/components/stage/stage.spd.xml"])
    res = stage.resolve()
    assert (res._get_identifier(), res._get_softwareProfile()) == (
        "pystage:waveform_1",
        "/components/stage/stage.spd.xml",
    )
    deploy(
        res,
        props(work="none"),
        {
            "in": (CF.PortSet.DIRECTION_PROVIDES, "IDL:scabench/dataDouble:1.0"),
            "out": (CF.PortSet.DIRECTION_USES, "IDL:scabench/dataDouble:1.0"),
        },
    )
    port = res.getPort("in")._narrow(S.data.dataDouble)
    port.attachSender(TOKEN, None)  # this process is the in-port's sender
    out = queryable(res, "out")
    (a, a_ref), (b, b_ref) = make_sink(), make_sink()
    out.connectPort(a_ref, "st-a")
    out.connectPort(b_ref, "st-b")
    connections = out._get_connections()
    assert [c.connectionId for c in connections] == ["st-a", "st-b"]
    assert connections[1].port._is_equivalent(b_ref)
    res.start()
    assert res._get_started()
    port.pushPacket(header(0), [1.5])
    port.pushPacket(header(1, eos=True), [])
    for sink in (a, b):  # each connection got the packet and the end of stream
        packets = sink.wait_for(lambda ps: any(h.end_of_stream for h, _, _ in ps))
        assert [(h.sequence_number, list(x)) for h, x, _ in packets if not h.end_of_stream] == [(0, [1.5])]
    res.stop()
    assert not res._get_started()
    out.disconnectPort("st-b")
    assert listed(out) == ["st-a"]
    logging_answers(res, "pystage")
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0


def test_a_nodes_cf_exceptions_carry_the_cf_error_number(start_node, context, tmp_path):
    _, ior = context
    garbage = tmp_path / "garbage"  # executable, but no program the kernel can run
    garbage.write_bytes(b"\x00\x01not a program\n")
    garbage.chmod(0o755)
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    n = start_node("--allow", str(garbage), "--allow", str(script))
    device = n.wait_registered().device
    with pytest.raises(CF.InvalidFileName) as not_allowed:
        device.load(None, "/bin/sh", CF.LoadableDevice.EXECUTABLE)
    assert not_allowed.value.errorNumber == CF.CF_EACCES
    with pytest.raises(CF.InvalidFileName) as not_loaded:
        device.execute("garbage", [], exec_params(ior, "x"))
    assert not_loaded.value.errorNumber == CF.CF_ENOENT
    device.load(None, "garbage", CF.LoadableDevice.EXECUTABLE)
    with pytest.raises(CF.ExecutableDevice.ExecuteFail) as cannot_run:
        device.execute("garbage", [], exec_params(ior, "x"))
    assert cannot_run.value.errorNumber == CF.CF_ENOEXEC
    device.load(None, "script", CF.LoadableDevice.EXECUTABLE)
    with pytest.raises(CF.InvalidFileName) as dependency:  # as REDHAWK 2.2's ApplicationFactory calls it
        device.executeLinked("script", [], [], ["libdsp.so"])
    assert dependency.value.errorNumber == CF.CF_ENOENT and "libdsp.so" in dependency.value.msg
    pid = device.executeLinked("script", [], [], [])
    with pytest.raises(CF.InvalidFileName) as not_a_name:
        device.watch([S.node.WatchRequest(pid, [S.node.FileRequest("../stdout", 0, 10)])])
    assert not_a_name.value.errorNumber == CF.CF_EINVAL
    os.chmod(script, 0o644)
    with pytest.raises(CF.LoadableDevice.LoadFail) as not_executable:
        device.load(None, "script", CF.LoadableDevice.EXECUTABLE)
    assert not_executable.value.errorNumber == CF.CF_EACCES
    script.unlink()
    with pytest.raises(CF.LoadableDevice.LoadFail) as gone:
        device.load(None, "script", CF.LoadableDevice.EXECUTABLE)
    assert gone.value.errorNumber == CF.CF_ENOENT
    with pytest.raises(CF.ExecutableDevice.InvalidProcess) as no_process:
        device.terminate(os.getpid())
    assert no_process.value.errorNumber == CF.CF_ESRCH
    # The node device as a REDHAWK Resource: serving either way, start and stop only set `started`;
    # its softwareProfile is its SPD in the DeviceManager's fileSys.
    assert (device._get_softwareProfile(), device.getPortSet(), device._get_started()) == (DEVICE_SPD, [], False)
    device.start()
    assert device._get_started()
    device.stop()
    assert not device._get_started()
    logging_answers(device, n.name)


def test_a_sequence_or_struct_to_a_cpp_kind_is_refused_by_name(tmp_path, context):
    """The runtime's C++ kinds declare simple properties only: a REDHAWK
    tool's simplesequence (a CORBA sequence) or struct (a CF::Properties in
    the any) is refused by the property's name and what it takes, and
    nothing changes."""
    from omniORB import tcInternal

    host = exec_host(tmp_path, context, "src", tmp_path)
    try:
        res = host.resolve()
        before = res.query([CF.DataType("packets", CORBA.Any(CORBA.TC_null, None))])[0].value.value()
        ulongs = tcInternal.createTypeCode((tcInternal.tv_sequence, tcInternal.tv_ulong, 0))
        members = CORBA.Any(CF._tc_Properties, [CF.DataType("x", CORBA.Any(CORBA.TC_long, 1))])
        for value, words in ((CORBA.Any(ulongs, [1, 2]), "not a sequence"), (members, "not a sequence")):
            with pytest.raises(CF.PropertySet.InvalidConfiguration) as refused:
                res.configure([CF.DataType("packets", value)])
            assert "packets" in refused.value.msg and words in refused.value.msg, refused.value.msg
        # Nothing changed: the value is the one queried before the refused configures.
        assert res.query([CF.DataType("packets", CORBA.Any(CORBA.TC_null, None))])[0].value.value() == before
        res.releaseObject()
    finally:
        host.close()

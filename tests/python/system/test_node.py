"""`scabench node`, the node agent: registration in a real omniNames, the SCA
ExecutableDevice driven over omniORBpy (load, execute, terminate, capacities,
process records), the component programs it starts bound and driven, and its
end: shut down, signalled, killed (its processes die with it, and a watcher
tells), or left without its domain (it stops its processes and exits).
Every process started here is ended by its PID."""

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# The fixtures (context, naming, orb, start_naming) are imported for pytest to find.
from conftest import REPO
from omniORB import CORBA
from py_components_world import (  # noqa: F401
    WAIT_S,
    S,
    alive,
    bound,
    closed_at_end,
    context,
    end_process,
    naming,
    orb,
    props,
    start_naming,
)

from scabench.errors import RunError
from scabench.run.nodes import list_nodes, node_alive, node_processes, resolve_node
from scabench.run.processes import free_port

CF = S.CF
_names = itertools.count(1)
DEAD_TIMEOUT_S = 1.0


def node_command(domain, name, *extra):
    return [sys.executable, "-m", "scabench.cli", "node", "--domain", domain, "--name", name, *extra]


class Node:
    """`scabench node` as a process of this test; refs once it is registered."""

    def __init__(self, tmp_path, root, domain, *extra, name=None, heartbeat_s="0.2"):
        self.root, self.name = root, name or f"node{next(_names)}"
        self.out_path, self.err_path = tmp_path / f"{self.name}.out", tmp_path / f"{self.name}.err"
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(
                node_command(domain, self.name, "--heartbeat-s", heartbeat_s, *extra), stdout=out, stderr=err, cwd=REPO
            )
        self.refs = None

    def wait_registered(self):
        deadline = time.monotonic() + WAIT_S
        while True:
            assert self.proc.poll() is None, f"node exited {self.proc.returncode}: {self.stderr()}"
            try:
                self.refs = resolve_node(self.root, self.name)
                if node_alive(self.refs.device):
                    return self.refs
            except RunError:
                pass
            assert time.monotonic() < deadline, f"node never registered: {self.stdout()} {self.stderr()}"
            time.sleep(0.05)

    @property
    def device(self):
        return self.refs.device

    def stdout(self):
        return self.out_path.read_text()

    def stderr(self):
        return self.err_path.read_text()

    def close(self):
        end_process(self.proc, grace_s=15.0)


@pytest.fixture
def start_node(tmp_path, naming, orb):
    def start(*extra, root=None, domain=None, **kw):
        # The iiop form here; the tests with a Naming Service of their own give the short one.
        return Node(
            tmp_path, root or naming.root, domain or f"corbaloc:iiop:127.0.0.1:{naming.port}/NameService", *extra, **kw
        )

    yield from closed_at_end(start)


@pytest.fixture
def node(start_node):
    n = start_node()
    n.wait_registered()
    return n


def wait_until(predicate, what, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def exec_params(context_ior, binding, **more):
    return props(
        NAMING_CONTEXT_IOR=context_ior, COMPONENT_IDENTIFIER=f"{binding}:waveform_1", NAME_BINDING=binding, **more
    )


def execute_stage(device, context_ior, binding, program="scabench-py-stage", options=(), **more):
    device.load(None, program, CF.LoadableDevice.EXECUTABLE)
    return device.execute(program, list(options), exec_params(context_ior, binding, **more))


def resolve_resource(ctx, binding, pid):
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            return ctx.resolve([S.CosNaming.NameComponent(binding, "")])._narrow(CF.Resource)
        except S.CosNaming.NamingContext.NotFound:
            assert alive(pid), f"{binding} (pid {pid}) exited before it bound its name"
            assert time.monotonic() < deadline, f"{binding} never bound its name"
            time.sleep(0.05)


def parent_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def record(device, pid):
    return next(r for r in device.processes() if r.pid == pid)


# --- registration ----------------------------------------------------------------------


def test_a_node_registers_under_nodes_and_answers(node, naming):
    assert node.name in list_nodes(naming.root)
    manager, device = node.refs.device_manager, node.device
    assert manager._get_label() == node.name and device._get_label() == node.name
    assert manager._get_identifier().startswith("DCE:")  # its DCD's id (node/profile.py)
    [registered] = manager._get_registeredDevices()
    assert registered._is_equivalent(device)
    assert registered._narrow(CF.ExecutableDevice) is not None  # any SCA tool can use it as one
    assert device._get_operationalState() == CF.Device.ENABLED
    assert device._get_adminState() == CF.Device.UNLOCKED
    assert device._get_usageState() == CF.Device.IDLE
    values = {p.id: p.value.value() for p in device.query([])}
    assert values["cores"] == ",".join(map(str, sorted(os.sched_getaffinity(0))))
    assert values["memory_mib"] > 0 and values["processes_running"] == 0
    assert set(values["programs"]) >= {"scabench-host", "scabench-py-stage"}
    assert values["component_endpoint"] == "giop:tcp:127.0.0.1:"
    assert "registered in" in node.stdout() and "loopback only" in node.stdout()


def test_a_second_node_of_a_live_name_is_refused(node, start_node):
    twin = start_node(name=node.name)
    assert twin.proc.wait(WAIT_S) == 2
    lines = twin.stderr().strip().splitlines()
    assert len(lines) == 1 and "--name" in lines[0] and "answers" in lines[0], lines
    assert node_alive(node.device)  # the first one keeps its name
    assert resolve_node(node.root, node.name).device._is_equivalent(node.device)


def test_a_node_whose_name_another_takes_leaves_the_domain_to_it(node, orb, naming):
    from scabench.run.nodes import DEVICE, node_path

    other = _not_naming(orb)
    naming.root.rebind(node_path(node.name, DEVICE), other)
    assert node.proc.wait(WAIT_S) == 1
    assert "another node registered" in node.stderr()
    assert naming.root.resolve(node_path(node.name, DEVICE))._is_equivalent(other)  # the newcomer's, untouched


# --- execute, drive, terminate ----------------------------------------------------------------


def test_execute_starts_a_python_stage_that_binds_and_is_driven_then_terminate_ends_it(node, context):
    ctx, ior = context
    pid = execute_stage(node.device, ior, "pystage")
    assert parent_of(pid) == node.proc.pid
    assert os.sched_getaffinity(pid) == os.sched_getaffinity(0)  # the node's CPUs: all of them here
    res = resolve_resource(ctx, "pystage", pid)
    assert res._get_identifier() == "pystage:waveform_1"
    res.initialize()
    res.configure(props(work="none"))
    res.start()
    assert {p.id: p.value.value() for p in res.query(props(work=""))}["work"] == "none"
    res.stop()
    assert node.device._get_usageState() == CF.Device.IDLE  # running processes are not capacity
    rec = record(node.device, pid)
    assert rec.running and rec.program == "scabench-py-stage" and rec.identifier == "pystage:waveform_1"
    node.device.terminate(pid)
    assert not alive(pid)  # gone when terminate returns
    assert not bound(ctx, "pystage")  # it ended cleanly: SIGTERM, and it unbound its name
    rec = record(node.device, pid)
    assert not rec.running and rec.exitStatus == 128 + signal.SIGTERM
    assert rec.userSeconds + rec.systemSeconds > 0 and rec.contextSwitches > 0
    with pytest.raises(CF.ExecutableDevice.InvalidProcess, match="has ended"):
        node.device.terminate(pid)


def test_execute_starts_scabench_host_which_ends_on_release(node, context):
    ctx, ior = context
    node.device.load(None, "scabench-host", CF.LoadableDevice.EXECUTABLE)
    pid = node.device.execute(
        "scabench-host",
        [],
        exec_params(ior, "cstage", KIND="stage")
        + [CF.DataType("-ORBgiopMaxMsgSize", CORBA.Any(CORBA.TC_string, str(1 << 20)))],
    )
    res = resolve_resource(ctx, "cstage", pid)
    argv = Path(f"/proc/{pid}/cmdline").read_text().split("\0")[:-1]
    assert argv[1:] == [
        "NAMING_CONTEXT_IOR",
        ior,
        "COMPONENT_IDENTIFIER",
        "cstage:waveform_1",
        "NAME_BINDING",
        "cstage",
        "KIND",
        "stage",
        "-ORBgiopMaxMsgSize",
        "1048576",
        "-ORBendPoint",
        "giop:tcp:127.0.0.1:",
    ]
    res.initialize()
    res.start()
    res.stop()
    res.releaseObject()
    wait_until(lambda: not record(node.device, pid).running, "the host did not end after releaseObject")
    rec = record(node.device, pid)
    assert rec.exitStatus == 0 and rec.userSeconds + rec.systemSeconds > 0
    records, totals = node_processes(node.device)
    assert totals["user_s"] >= rec.userSeconds and totals["context_switches"] >= rec.contextSwitches
    assert [r["pid"] for r in records] == [pid] and records[0]["exit_status"] == 0


def test_processes_run_on_the_cores_asked_for_and_listen_on_the_component_ports(start_node, context):
    ctx, ior = context
    cpus = sorted(os.sched_getaffinity(0))
    lo = free_port()
    lo = max(1024, min(lo, 65535 - 20))
    n = start_node("--cores", str(cpus[0]), "--component-ports", f"{lo}-{lo + 20}")
    n.wait_registered()
    pid = execute_stage(n.device, ior, "pinned")
    resolve_resource(ctx, "pinned", pid)
    assert os.sched_getaffinity(pid) == {cpus[0]}
    listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout.splitlines()
    ports = [int(line.split()[3].rsplit(":", 1)[1]) for line in listening if f"pid={pid}," in line]
    assert ports and all(lo <= p <= lo + 20 for p in ports), (ports, lo)
    if len(cpus) > 1:
        n2 = start_node()
        n2.wait_registered()
        pid2 = execute_stage(n2.device, ior, "affine", options=props(AFFINITY=str(cpus[1])))
        assert os.sched_getaffinity(pid2) == {cpus[1]}


# --- capacities -----------------------------------------------------------------------------


def test_capacities_are_allocated_within_what_the_node_offers(start_node):
    n = start_node("--cores", str(sorted(os.sched_getaffinity(0))[0]), "--memory-mib", "100")
    device = n.wait_registered().device
    assert device.allocateCapacity(props(memory_mib=60))
    assert device._get_usageState() == CF.Device.ACTIVE
    assert not device.allocateCapacity(props(memory_mib=41))  # 60 + 41 > 100
    assert not device.allocateCapacity(props(cores=2))  # one core offered
    assert not device.allocateCapacity(props(cores=1, memory_mib=41))  # all or nothing: the core is not taken
    assert device.allocateCapacity(props(cores=1, memory_mib=40))
    assert device._get_usageState() == CF.Device.BUSY
    values = {p.id: p.value.value() for p in device.query(props(cores_allocated=0, memory_mib_allocated=0))}
    assert values == {"cores_allocated": 1, "memory_mib_allocated": 100}
    for bad in (props(gpus=1), props(cores=-1), props(cores=1.5), props(memory_mib="10")):
        with pytest.raises(CF.Device.InvalidCapacity):
            device.allocateCapacity(bad)
    with pytest.raises(CF.Device.InvalidCapacity, match="cannot give back"):
        device.deallocateCapacity(props(cores=2))
    device.deallocateCapacity(props(cores=1, memory_mib=100))
    assert device._get_usageState() == CF.Device.IDLE


# --- what execute refuses ---------------------------------------------------------------------------


def test_execute_load_and_terminate_refuse_what_they_cannot_do(node, context, tmp_path):
    _, ior = context
    device = node.device
    with pytest.raises(CF.InvalidFileName, match="not loaded"):
        device.execute("scabench-host", [], exec_params(ior, "x"))
    with pytest.raises(CF.InvalidFileName, match="not a program"):
        device.load(None, "/bin/sh", CF.LoadableDevice.EXECUTABLE)
    with pytest.raises(CF.LoadableDevice.InvalidLoadKind):
        device.load(None, "scabench-host", CF.LoadableDevice.SHARED_LIBRARY)
    device.load(None, "scabench-py-stage", CF.LoadableDevice.EXECUTABLE)
    # Where components listen, what a program loads, where it writes: the node's to say.
    for key, value in (
        ("-ORBendPoint", "giop:tcp:0.0.0.0:"),
        ("-ORBtraceFile", "/tmp/x"),
        ("--library", str(tmp_path / "lib.so")),
        ("RECORD_DIR", "/etc"),
        ("EVENTS_FILE", "/etc/passwd"),
        ("", "x"),
    ):
        with pytest.raises(CF.ExecutableDevice.InvalidParameters) as refused:
            device.execute(
                "scabench-py-stage", [], exec_params(ior, "x") + [CF.DataType(key, CORBA.Any(CORBA.TC_string, value))]
            )
        assert [p.id for p in refused.value.invalidParms] == [key]
    for option in (props(PRIORITY="high"), props(AFFINITY="999"), props(STACK_SIZE=0), props(COLOUR="red")):
        with pytest.raises(CF.ExecutableDevice.InvalidOptions):
            device.execute("scabench-py-stage", option, exec_params(ior, "x"))
    with pytest.raises(CF.ExecutableDevice.InvalidProcess, match="started no process"):
        device.terminate(os.getpid())
    device.unload("scabench-py-stage")
    with pytest.raises(CF.InvalidFileName, match="not loaded"):
        device.unload("scabench-py-stage")
    device._set_adminState(CF.Device.LOCKED)
    with pytest.raises(CF.Device.InvalidState, match="LOCKED"):
        device.load(None, "scabench-py-stage", CF.LoadableDevice.EXECUTABLE)
    with pytest.raises(CF.Device.InvalidState):
        device.allocateCapacity(props(cores=1))
    device._set_adminState(CF.Device.UNLOCKED)
    with pytest.raises(CF.PropertySet.InvalidConfiguration, match="read-only"):
        device.configure(props(cores="0"))
    assert device.processes() == []  # nothing was started


def test_a_program_allowed_by_path_runs_and_its_failure_is_kept(start_node, context, tmp_path):
    script = tmp_path / "fails"
    script.write_text('#!/bin/sh\necho "fails: given $*" >&2\nexit 3\n')
    script.chmod(0o755)
    n = start_node("--allow", str(script))
    device = n.wait_registered().device
    device.load(None, str(script), CF.LoadableDevice.EXECUTABLE)  # by its path as well as by its name
    pid = device.execute("fails", [], props(ALPHA="1"))
    wait_until(lambda: not record(device, pid).running, "the program never ended")
    rec = record(device, pid)
    assert rec.exitStatus == 3
    assert rec.errorTail.startswith("fails: given ALPHA 1 -ORBendPoint giop:tcp:127.0.0.1:"), rec.errorTail


# --- the node's end -------------------------------------------------------------------------------


def test_shutdown_stops_its_processes_and_leaves_the_domain(node, context, naming):
    ctx, ior = context
    pids = [execute_stage(node.device, ior, f"down{i}") for i in range(2)]
    for i, pid in enumerate(pids):
        resolve_resource(ctx, f"down{i}", pid)
    node.refs.device_manager.shutdown()
    assert not any(alive(pid) for pid in pids)  # gone before shutdown returns
    assert node.proc.wait(WAIT_S) == 0
    assert node.name not in list_nodes(naming.root)
    assert not node_alive(node.device, DEAD_TIMEOUT_S)
    assert "Traceback" not in node.stderr() and "shutting down" in node.stdout()


def test_sigterm_stops_its_processes_and_leaves_the_domain(node, context, naming):
    ctx, ior = context
    pid = execute_stage(node.device, ior, "termed")
    resolve_resource(ctx, "termed", pid)
    os.kill(node.proc.pid, signal.SIGTERM)
    assert node.proc.wait(WAIT_S) == 128 + signal.SIGTERM
    assert not alive(pid) and not bound(ctx, "termed")
    assert node.name not in list_nodes(naming.root)
    assert node.stderr().strip() == "interrupted by SIGTERM"


def test_a_killed_node_takes_its_processes_and_a_watcher_tells_it_is_dead(start_node, context, tmp_path):
    ctx, ior = context
    # A program that, unlike scabench's, asks for no death signal of its own: only the node's ends it.
    sleeper = tmp_path / "sleeper"
    sleeper.write_text("#!/bin/sh\nexec sleep 600\n")
    sleeper.chmod(0o755)
    node = start_node("--allow", str(sleeper))
    node.wait_registered()
    pids = [
        execute_stage(node.device, ior, "orphan1"),
        execute_stage(node.device, ior, "orphan2", program="scabench-host", KIND="stage"),
    ]
    for pid, binding in zip(pids, ("orphan1", "orphan2")):
        resolve_resource(ctx, binding, pid)
    node.device.load(None, "sleeper", CF.LoadableDevice.EXECUTABLE)
    pids.append(node.device.execute("sleeper", [], []))
    assert alive(pids[-1])
    os.kill(node.proc.pid, signal.SIGKILL)
    node.proc.wait(WAIT_S)
    try:
        wait_until(lambda: not any(alive(pid) for pid in pids), "a process outlived its node")
    finally:
        for pid in filter(alive, pids):  # only if the test failed
            os.kill(pid, signal.SIGKILL)
    start = time.monotonic()
    assert not node_alive(node.device, DEAD_TIMEOUT_S)
    assert time.monotonic() - start <= DEAD_TIMEOUT_S + 1.0  # a refused connection: no wait for the timeout


def every_thread_stopped(pid):
    """kill() returns before a busy process's threads have all stopped: one
    still running can answer a call (seen in CI on a loaded machine)."""
    tasks = Path(f"/proc/{pid}/task")
    return all((t / "stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t") for t in tasks.iterdir())


def test_a_hung_node_is_dead_to_a_watcher_within_the_timeout(node):
    os.kill(node.proc.pid, signal.SIGSTOP)
    try:
        wait_until(lambda: every_thread_stopped(node.proc.pid), "the node's threads did not all stop")
        start = time.monotonic()
        assert not node_alive(node.device, DEAD_TIMEOUT_S)
        assert time.monotonic() - start <= DEAD_TIMEOUT_S + 2.0
    finally:
        os.kill(node.proc.pid, signal.SIGCONT)
    wait_until(lambda: node_alive(node.device), "the node did not come back after SIGCONT")


def test_losing_its_naming_service_the_node_stops_its_processes_and_exits(start_node, start_naming, orb):
    service = start_naming("domain")
    ctx = service.root.bind_new_context([S.CosNaming.NameComponent("waveform", "")])
    n = start_node("--grace-s", "1.5", root=service.root, domain=f"corbaloc::127.0.0.1:{service.port}/NameService")
    n.wait_registered()
    pid = execute_stage(n.device, orb.object_to_string(ctx), "stranded")
    resolve_resource(ctx, "stranded", pid)
    end_process(service.proc)
    wait_until(lambda: n.device._get_operationalState() == CF.Device.DISABLED, "the node never noticed")
    with pytest.raises(CF.Device.InvalidState, match="DISABLED"):
        n.device.load(None, "scabench-py-stage", CF.LoadableDevice.EXECUTABLE)
    assert n.proc.wait(WAIT_S) == 1
    assert not alive(pid)
    lines = n.stderr().strip().splitlines()
    assert len(lines) == 1 and "lost its domain" in lines[0] and "1.5 s" in lines[0], lines
    assert "does not answer" in n.stdout()


def test_a_naming_service_restarted_empty_gets_the_node_again(start_node, start_naming):
    service = start_naming("first")
    port = service.port
    n = start_node("--grace-s", "30", root=service.root, domain=f"corbaloc::127.0.0.1:{port}/NameService")
    n.wait_registered()
    service.close()
    service = start_naming("second", port=port)  # the same address, no data
    n.root = service.root
    n.wait_registered()
    assert "registered again" in n.stdout()


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, hint",
    [
        (["--name", "n"], "--domain"),
        (["--domain", "nowhere", "--name", "n"], "--domain"),
        (["--domain", "corbaloc:nonsense", "--name", "n"], "--domain"),
        (["--domain", "{domain}", "--name", "a/b"], "--name"),
        (["--domain", "{domain}", "--name", ""], "--name"),
        (["--domain", "{domain}", "--name", "n", "--cores", "x"], "--cores"),
        (["--domain", "{domain}", "--name", "n", "--cores", "4096"], "--cores"),
        (["--domain", "{domain}", "--name", "n", "--listen", "127.0.0.1:70000"], "--listen"),
        (["--domain", "{domain}", "--name", "n", "--listen", "192.0.2.1"], "--listen"),
        (["--domain", "{domain}", "--name", "n", "--listen", "127.0.0.1:{port}"], "Address already in use"),
        (["--domain", "{domain}", "--name", "n", "--component-ports", "5000-4000"], "--component-ports"),
        (["--domain", "{domain}", "--name", "n", "--component-ports", "80-90"], "--component-ports"),
        (["--domain", "{domain}", "--name", "n", "--allow", "/no/such/program"], "--allow"),
        (["--domain", "{domain}", "--name", "n", "--allow", "{plain}"], "--allow"),
        (["--domain", "{domain}", "--name", "n", "--heartbeat-s", "2", "--grace-s", "1"], "--grace-s"),
        (["--domain", "{domain}", "--name", "n", "--heartbeat-s", "nan"], "--heartbeat-s"),
        (["--domain", "{domain}", "--name", "n", "--memory-mib", str(1 << 40)], "--memory-mib"),
        (["--domain", "{sink}", "--name", "n"], "not a Naming Service"),
    ],
)
def test_bad_arguments_get_one_line_and_exit_2(args, hint, naming, orb, tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    sink = orb.object_to_string(_not_naming(orb))
    values = {
        "domain": f"corbaloc::127.0.0.1:{naming.port}/NameService",
        "plain": plain,
        "sink": sink,
        "port": naming.port,
    }
    done = subprocess.run(
        [sys.executable, "-m", "scabench.cli", "node", *[a.format(**values) for a in args]],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and hint in done.stderr, done.stderr
    assert len([line for line in done.stderr.splitlines() if line.lower().startswith("error")]) == 1, done.stderr


def _not_naming(orb):
    """A live object of another kind than a naming context: a data port."""
    from py_components_world import sink_class

    poa = orb.resolve_initial_references("RootPOA")
    sink = sink_class("double")()
    poa.activate_object(sink)
    return poa.servant_to_reference(sink)


def test_a_domain_that_never_answers_fails_the_node_after_the_grace(tmp_path):
    done = subprocess.run(
        node_command(
            f"corbaloc::127.0.0.1:{free_port()}/NameService", "lonely", "--heartbeat-s", "0.2", "--grace-s", "1"
        ),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "does not answer" in lines[0] and "tried for 1 s" in lines[0], lines


# --- what a launcher on another machine reads: events, records, the clock --------------------------------


def watch(device, pid, *files):
    """One process's record and the files asked, each (name, offset, max bytes)."""
    [seen] = device.watch([S.node.WatchRequest(pid, [S.node.FileRequest(f, o, n) for f, o, n in files])])
    return seen


def test_a_host_of_two_components_runs_in_a_directory_of_its_own_and_its_events_and_records_are_read_back(
    node, context
):
    ctx, ior = context
    node.device.load(None, "scabench-host", CF.LoadableDevice.EXECUTABLE)
    pid = node.device.execute(
        "scabench-host",
        [],
        props(NAMING_CONTEXT_IOR=ior, COMPONENT_IDENTIFIER="pair:waveform_1")
        + [CF.DataType("COMPONENT", CORBA.Any(CORBA.TC_string, v)) for v in ("src:producer", "snk:sink:double")],
    )
    producer, sink = resolve_resource(ctx, "src", pid), resolve_resource(ctx, "snk", pid)
    # One COMPONENT_IDENTIFIER for the host, "pair:waveform_1": each component answers its own in the application.
    assert (producer._get_identifier(), sink._get_identifier()) == ("src:waveform_1", "snk:waveform_1")
    directory = Path(f"/proc/{pid}/cwd").resolve()  # its own, in the node's private one
    assert directory.parent.name.startswith("scabench-run-") and (directory / "stdout").is_file()
    assert oct(directory.stat().st_mode & 0o777) == "0o700"
    for res in (producer, sink):
        res.initialize()
    producer.configure(props(packets=5, samples=16, period_us=0, record_capacity=32))
    sink.configure(props(record_capacity=32))
    producer.getPort("out")._narrow(CF.Port).connectPort(sink.getPort("in"), "src.out->snk.in")
    sink.start()
    producer.start()
    wait_until(
        lambda: b"eos snk 5" in watch(node.device, pid, ("stdout", 0, 4096)).files[0].data,
        "the sink's end of stream never reached the host's stdout",
    )
    seen = watch(node.device, pid, ("snk.rec", 0, 1 << 20), ("src.rec", 0, 1 << 20), ("nothing", 0, 10))
    assert seen.record.running and seen.record.identifier == "pair:waveform_1"
    records, sent, missing = seen.files
    # The header (with its gauges: record_log.hpp), then record_capacity slots.
    assert records.exists and records.size == len(records.data) == 192 + 32 * 32
    assert sent.exists and not missing.exists
    # The records are the sink's: 5 packets claimed and completed, in the header (record_log.hpp).
    claimed, completed = int.from_bytes(records.data[24:32], "little"), int.from_bytes(records.data[40:48], "little")
    assert (claimed, completed) == (5, 5)
    part = watch(node.device, pid, ("snk.rec", 100, 50)).files[0]
    assert part.data == records.data[100:150] and part.size == records.size
    for res in (producer, sink):
        res.stop()
        res.releaseObject()
    wait_until(lambda: not record(node.device, pid).running, "the host did not end once both were released")
    out = watch(node.device, pid, ("stdout", 0, 1 << 16)).files[0].data.decode()
    assert out.splitlines()[-1].startswith("rusage src "), out
    assert not bound(ctx, "src") and not bound(ctx, "snk")


def test_watch_refuses_what_is_not_a_file_of_the_process(node, context, tmp_path):
    _, ior = context
    pid = execute_stage(node.device, ior, "watched")
    for bad in ("../stdout", "/etc/passwd", "", ".", ".."):
        with pytest.raises(CF.InvalidFileName):
            watch(node.device, pid, (bad, 0, 10))
    with pytest.raises(CF.ExecutableDevice.InvalidProcess, match="started no process"):
        watch(node.device, os.getpid())
    # A link the program made in its directory is not followed.
    directory = Path(f"/proc/{pid}/cwd").resolve()
    (directory / "link").symlink_to("/etc/hostname")
    assert not watch(node.device, pid, ("link", 0, 100)).files[0].exists
    big = node.device.watch([S.node.WatchRequest(pid, [S.node.FileRequest("stderr", 0, 1 << 30)] * 3)])
    assert sum(len(f.data) for f in big[0].files) <= S.node.NodeDevice.MAX_WATCH_BYTES


def test_the_node_tells_its_monotonic_clock(node):
    before = time.monotonic_ns()
    told = node.device.monotonicNs()
    after = time.monotonic_ns()
    assert before <= told <= after  # one machine, one CLOCK_MONOTONIC


def test_execute_runs_a_program_under_the_scheduler_asked(node, context):
    _, ior = context
    pid = execute_stage(node.device, ior, "batched", options=props(SCHEDULER="batch"))
    assert os.sched_getscheduler(pid) == os.SCHED_BATCH
    with pytest.raises(CF.ExecutableDevice.InvalidOptions):
        execute_stage(node.device, ior, "fifo", options=props(SCHEDULER="fifo"))


def test_a_published_address_is_what_its_references_carry(start_node, context, orb):
    ctx, ior = context
    n = start_node("--publish", "localhost")  # another name for where it listens: its references carry it
    n.wait_registered()

    def published(obj):
        return subprocess.run(["catior", orb.object_to_string(obj)], capture_output=True, text=True).stdout

    assert "IIOP 1.2 localhost " in published(n.device)
    values = {p.id: p.value.value() for p in n.device.query(props(published_host=""))}
    assert values == {"published_host": "localhost"}
    pid = execute_stage(n.device, ior, "published")
    argv = Path(f"/proc/{pid}/cmdline").read_text().split("\0")[:-1]
    assert argv[-4:] == ["-ORBendPoint", "giop:tcp:127.0.0.1:", "-ORBendPointPublish", "giop:tcp:localhost:"]
    stage = resolve_resource(ctx, "published", pid)
    assert "IIOP 1.2 localhost " in published(stage)
    assert "published as localhost" in n.stdout()

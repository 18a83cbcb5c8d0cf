"""A waveform placed on a node whose device is a plain CF::ExecutableDevice
(cpp/programs/launcher/plain_nodes.cpp): the launcher drives it with CF
alone, on its own machine, and reads what CF has no place for (events,
records, state, CPU) in the run directory and /proc. The device is
examples/plain-gpp/plain_gpp.py, a GPP's part written from idl/cf.idl, run
as a process of its own; every process started here is ended by its PID."""

import json
import os
import pwd
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, pipeline_toml, scabench
from py_components_world import end_process, orb, start_naming  # noqa: F401 (the fixtures)

from scabench.components import idl
from scabench.errors import RunError
from scabench.model.load import load_spec
from scabench.paths import program
from scabench.run.plan import build_assembly
from scabench.run.runner import run_spec

WAIT_S = 60
PLAIN_GPP = REPO / "examples" / "plain-gpp" / "plain_gpp.py"
PY_STAGE = Path(sys.executable).parent / "scabench-py-stage"  # as a node finds it (node/settings.py)
ONE_EACH = 'hosts = [["producer"], ["stage1"], ["stage2"], ["stage3"]]'  # a process each


@pytest.fixture
def domain(start_naming):
    return start_naming("domain")


@pytest.fixture
def start_plain(tmp_path, domain):
    """start_plain(name, *flags) -> (Popen, its log's Path): a plain GPP bound at nodes/NAME/device."""
    started = []

    def start(name, *flags):
        log_path = tmp_path / f"{name}.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    str(PLAIN_GPP),
                    "--naming",
                    f"corbaloc::127.0.0.1:{domain.port}/NameService",
                    "--name",
                    name,
                    *flags,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
            )
        started.append(proc)
        deadline = time.monotonic() + WAIT_S
        while "bound nodes/" not in log_path.read_text():
            assert proc.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, f"plain device {name} never bound"
            time.sleep(0.05)
        return proc, log_path

    yield start
    for proc in started:
        end_process(proc)


def _spec(write_spec, domain, placement, run="", packets=10):
    return load_spec(
        write_spec(
            pipeline_toml(packets=packets, placement=placement, run=run, policy='call = "twoway"')
            + f'[domain]\nnaming = "corbaloc::127.0.0.1:{domain.port}/NameService"\n'
        )
    )


def _calls(log_path, name):
    return [line for line in log_path.read_text().splitlines() if line.startswith(f"call {name}")]


def _gone(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True


def test_a_component_on_a_plain_cf_node_runs_end_to_end_and_is_measured(write_spec, domain, start_plain):
    _, log = start_plain("gpp")
    spec = _spec(
        write_spec,
        domain,
        'nodes = { gpp = ["stage2"] }\nhosts = [["producer"], ["stage1"], ["stage2"], ["stage3"]]',
    )
    result = run_spec(spec)
    assert [s.received for s in result.stages] == [10, 10, 10]
    latency = result.end_to_end_latency_us
    assert latency is not None and latency.count == 10 and latency.p50 > 0
    [node] = result.nodes
    assert node.name == "gpp" and node.device == "CF::ExecutableDevice" and node.cpu_from == "/proc"
    assert node.same_machine and node.clock.start is None  # this machine's clock: no time moved
    [process] = node.processes
    assert process["components"] == ["stage2"] and process["exit_status"] is None and not process["running"]
    assert node.user_s + node.system_s > 0
    # Asked through CF alone: the memory, load, execute, unload, and given back.
    assert _calls(log, "allocateCapacity") and _calls(log, "execute") and _calls(log, "deallocateCapacity")
    # By the name the launcher's file system serves it at, which the device copied it from.
    assert _calls(log, "load") == ["call load /scabench/bin/scabench-host"]
    assert _calls(log, "unload") == ["call unload /scabench/bin/scabench-host"]
    [executed] = _calls(log, "execute")
    assert _gone(int(executed.split()[4]))  # it ended with the run
    host = next(h for h in result.hosts if h["components"] == ["stage2"])
    assert host["node"] == "gpp" and host["rusage"]["user_s"] >= 0  # its rusage line, read from its events file


@pytest.mark.skipif(not PY_STAGE.exists(), reason=f"{PY_STAGE} is not installed (scripts/setup.sh)")
def test_a_python_component_on_a_plain_cf_node_writes_its_events_for_the_launcher(write_spec, domain, start_plain):
    start_plain("gpp")
    text = pipeline_toml(packets=12, policy='call = "twoway"', placement='nodes = { gpp = ["stage1"] }')
    text = text.replace('name = "stage1"\nkind = "stage"', 'name = "stage1"\nkind = "py-stage"')
    spec = load_spec(write_spec(text + f'[domain]\nnaming = "corbaloc::127.0.0.1:{domain.port}/NameService"\n'))
    result = run_spec(spec)
    assert [s.received for s in result.stages] == [12, 12, 12]
    [process] = result.nodes[0].processes
    assert process["program"] == "scabench-py-stage" and process["user_s"] + process["system_s"] > 0
    # Its figures at the end ("stat stage1 ..." lines), read from its events file.
    assert "stage1" in result.stats, result.stats


def test_a_plain_node_that_does_not_take_mem_capacity_is_refused_before_anything_starts(
    write_spec, domain, start_plain
):
    _, log = start_plain("gpp", "--no-mem-capacity")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }')
    with pytest.raises(RunError) as err:
        run_spec(spec)
    message = str(err.value)
    assert "node gpp's device does not take REDHAWK's GPP memCapacity" in message and "\n" not in message
    assert err.value.component == "stage1"
    assert _calls(log, "execute") == [] and _calls(log, "load") == []


def test_a_plan_asking_the_scheduler_of_a_plain_node_is_refused_by_name(write_spec, domain, start_plain):
    _, log = start_plain("gpp")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }', run='scheduler = "batch"')
    out = scabench("run", spec.path)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "node gpp's device is a plain CF::ExecutableDevice, which has no SCHEDULER" in out.stderr
    assert _calls(log, "allocateCapacity") == [] and _calls(log, "execute") == []


def test_a_plan_asking_cpus_on_a_plain_node_is_refused_by_name(write_spec, domain, start_plain, tmp_path):
    """A spec places on nodes without CPUs (network hosts alone ask them), so
    the plan is edited as another writer of plans might make it."""
    _, log = start_plain("gpp")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }')
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assembly = build_assembly(spec, run_dir, 60)
    assembly["naming"] = {
        "corbaloc": f"corbaloc::127.0.0.1:{domain.port}/NameService",
        "context": "plain_cpus_1",
        "shared": True,
    }
    [on_node] = [h for h in assembly["hosts"] if h.get("node") == "gpp"]
    on_node["cores"] = [0]
    (run_dir / "assembly.json").write_text(json.dumps(assembly))
    out = subprocess.run(
        [
            str(program("scabench-launch")),
            str(run_dir / "assembly.json"),
            str(run_dir / "manifest.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 1
    assert "which has no AFFINITY execute option" in out.stderr and "CPUs 0 for stage1" in out.stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["failed_component"] == "stage1"
    assert all(h["pid"] == -1 for h in manifest["hosts"])  # nothing started, here or there
    assert _calls(log, "execute") == []


def test_a_plain_node_on_another_machine_is_refused_and_what_it_started_is_terminated(write_spec, domain, start_plain):
    """A device that answers pids of another machine's (an offset here): the
    pid is no process of this machine carrying the identifier given."""
    _, log = start_plain("gpp", "--pid-offset", "5000000")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }')
    with pytest.raises(RunError) as err:
        run_spec(spec)
    message = str(err.value)
    assert "node gpp's device is a plain CF::ExecutableDevice" in message and "run scabench node there" in message
    assert err.value.component == "stage1"
    [executed] = _calls(log, "execute")
    real, answered = int(executed.split()[4]), int(executed.split()[6])
    assert _calls(log, "terminate") == [f"call terminate {answered}"]  # through the device
    assert _gone(real)


def test_a_component_that_dies_on_a_plain_node_is_named_and_the_run_ends(write_spec, domain, start_plain):
    _, log = start_plain("gpp")
    spec = _spec(
        write_spec,
        domain,
        'nodes = { gpp = ["stage1"] }\n' + ONE_EACH,
        packets=2000,
    )
    killer_done = []

    def kill_when_started(pids, hosts):
        [executed] = _calls(log, "execute")
        pid = int(executed.split()[4])
        subprocess.run(["kill", "-9", str(pid)], check=True)
        killer_done.append(pid)

    with pytest.raises(RunError) as err:
        run_spec(spec, on_start=kill_when_started)
    assert killer_done
    assert err.value.component == "stage1" and "on node gpp" in str(err.value), str(err.value)
    assert _gone(killer_done[0])


def test_a_plain_node_that_is_short_of_memory_refuses_the_run(write_spec, domain, start_plain):
    _, log = start_plain("gpp", "--memory-mib", "1")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }')
    with pytest.raises(RunError) as err:
        run_spec(spec)
    assert "node gpp has not" in str(err.value) and "MiB of memory left" in str(err.value)
    assert _calls(log, "execute") == []


def test_what_a_plain_node_gone_mid_run_leaves_running_is_ended_by_the_launcher(write_spec, domain, start_plain):
    """Its device killed, then a local host: the run fails on the host, and
    the plain node's process, which outlives its device (a GPP's children
    do), is ended by the launcher on this machine, checked by its start
    time."""
    device, log = start_plain("gpp")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }\n' + ONE_EACH, packets=2000)
    on_node = []

    def kill_device_then_stage3(pids, hosts):
        [executed] = _calls(log, "execute")
        on_node.append(int(executed.split()[4]))
        device.kill()
        device.wait(WAIT_S)
        here = [host for host in hosts if not host.endswith("stage1")]  # the pids are this machine's hosts'
        [stage3] = [pid for pid, host in zip(pids, here) if host.endswith("stage3")]
        subprocess.run(["kill", "-9", str(stage3)], check=True)

    with pytest.raises(RunError) as err:
        run_spec(spec, on_start=kill_device_then_stage3)
    assert err.value.component == "stage3", str(err.value)
    assert on_node and _gone(on_node[0])
    [node] = err.value.result.nodes
    assert node.lost is not None
    [host] = [h for h in err.value.result.hosts if h.get("node") == "gpp"]
    assert host["exit"] == "ended by the launcher, its node gpp gone"


def _outside_address():
    """An address of this machine that is not loopback, or None."""
    found = subprocess.run(["hostname", "-I"], capture_output=True, text=True).stdout.split()
    return next((a for a in found if "." in a and not a.startswith("127.")), None)


@pytest.mark.skipif(_outside_address() is None, reason="this machine has no address but loopback")
def test_a_plain_node_beside_a_node_published_elsewhere_is_refused(write_spec, domain, start_plain, tmp_path):
    """A plain node's processes listen on this machine's loopback, as the
    launcher's own do: a scabench node whose components are published on
    another address (this machine's own outside one, so that the node
    itself answers there) could not reach them."""
    _, log = start_plain("gpp")
    outside = _outside_address()
    agent_log = tmp_path / "far.log"
    with open(agent_log, "w") as out:
        agent = subprocess.Popen(
            [sys.executable, "-m", "scabench.cli", "node", "--domain", f"corbaloc::127.0.0.1:{domain.port}/NameService"]
            + ["--name", "far", "--listen", f"{outside}:0", "--publish", str(outside)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=REPO,
        )
    try:
        deadline = time.monotonic() + WAIT_S
        while "registered in" not in agent_log.read_text():
            assert agent.poll() is None and time.monotonic() < deadline, agent_log.read_text()
            time.sleep(0.05)
        spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"], far = ["producer", "stage2", "stage3"] }')
        with pytest.raises(RunError) as err:
            run_spec(spec)
        assert f"node far's components are reached at {outside}" in str(err.value)
        assert "a plain CF node's included" in str(err.value)
        assert _calls(log, "execute") == []
    finally:
        end_process(agent)


def test_the_double_refuses_a_nil_file_system_and_a_relative_name_as_a_gpp_does(domain, start_plain, orb):
    """What a GPP's load and execute refuse, so that a launcher that passes
    the double would pass a GPP: a nil file system, a name not absolute."""
    start_plain("gpp")
    S = idl.load()
    root = orb.string_to_object(f"corbaloc::127.0.0.1:{domain.port}/NameService")._narrow(S.CosNaming.NamingContext)
    path = [S.CosNaming.NameComponent(part, "") for part in ("nodes", "gpp", "device")]
    device = root.resolve(path)._narrow(S.CF.ExecutableDevice)
    executable = S.CF.LoadableDevice.EXECUTABLE
    for call in (
        lambda: device.load(None, "/scabench/bin/scabench-host", executable),
        lambda: device.load(None, "scabench-host", executable),
        lambda: device.execute("scabench-host", [], []),
    ):
        with pytest.raises(S.CF.InvalidFileName) as refused:
            call()
        assert refused.value.errorNumber == S.CF.CF_EINVAL, refused.value.msg
    with pytest.raises(S.CF.InvalidFileName) as refused:
        device.execute("/scabench/bin/scabench-host", [], [])  # never loaded
    assert refused.value.errorNumber == S.CF.CF_ENOENT


def test_what_a_plain_nodes_terminate_leaves_running_is_ended_by_the_launcher(write_spec, domain, start_plain):
    """A GPP's terminate swallows what goes wrong: the launcher looks at
    /proc after it, and ends the process itself, checked by its start time."""
    _, log = start_plain("gpp", "--terminate-leaves-running")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }\n' + ONE_EACH, packets=2000)
    on_node = []

    def kill_stage3(pids, hosts):
        [executed] = _calls(log, "execute")
        on_node.append(int(executed.split()[4]))
        # What runs is the device's copy, in its cache, at the name it loaded.
        exe = Path(f"/proc/{on_node[0]}/exe").readlink()
        assert exe.name == "scabench-host" and exe.parent.as_posix().endswith("/scabench/bin"), exe
        assert exe.parents[2].name.startswith("plain-gpp-gpp-"), exe
        here = [host for host in hosts if not host.endswith("stage1")]
        [stage3] = [pid for pid, host in zip(pids, here) if host.endswith("stage3")]
        subprocess.run(["kill", "-9", str(stage3)], check=True)

    with pytest.raises(RunError) as err:
        run_spec(spec, on_start=kill_stage3)
    assert err.value.component == "stage3", str(err.value)
    assert _calls(log, "terminate")  # asked, and it answered without ending it
    assert on_node and _gone(on_node[0])
    [host] = [h for h in err.value.result.hosts if h.get("node") == "gpp"]
    assert host["exit"] == "ended by the launcher, its node gpp's terminate having left it running"


@pytest.mark.skipif(os.geteuid() != 0, reason="starting processes as another user needs root")
def test_a_plain_node_whose_processes_are_another_users_is_refused_naming_the_cause(write_spec, domain, start_plain):
    """As under a GPP run as another user: its processes could not write
    their events and records in the launcher's run directory (0700), and
    the same-machine check says so."""
    nobody = pwd.getpwnam("nobody")
    _, log = start_plain("gpp", "--run-as", "nobody")
    spec = _spec(write_spec, domain, 'nodes = { gpp = ["stage1"] }')
    with pytest.raises(RunError) as err:
        run_spec(spec)
    message = str(err.value)
    assert f"as uid {nobody.pw_uid}, not the launcher's uid 0" in message, message
    assert "must run as the launcher's user" in message and err.value.component == "stage1"
    [executed] = _calls(log, "execute")
    assert _calls(log, "terminate") and _gone(int(executed.split()[4]))

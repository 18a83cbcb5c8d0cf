"""External components in a run, over real processes: a Python stage between
C++ ones, programs the launcher starts with the SCA exec parameters,
components someone else started (resolved by ref), and the specs and
failures that must be refused with one line. Every process a test starts
itself is ended by its PID."""

import json
import math
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest
from conftest import REPO, scabench

# The fixtures (naming, orb) are imported for pytest to find.
from py_components_world import (  # noqa: F401
    WAIT_S,
    S,
    StageProcess,
    context,
    end_process,
    make_sink,
    name,
    naming,
    orb,
    props,
    sink_class,
)

from scabench.errors import SpecError
from scabench.model.load import load_spec
from scabench.paths import program
from scabench.run import processes
from scabench.run.records import read_records
from scabench.run.runner import run_spec

PYLINE = REPO / "experiments" / "open" / "pyline.toml"
EXEC_HOST = REPO / "experiments" / "open" / "exec-host.toml"


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def gain_program(tmp_path):
    """A program of someone else's: tests/python/gain_component.py, run by this interpreter."""
    return executable(
        tmp_path / "gain",
        f"#!/bin/sh\nPYTHONPATH={REPO / 'python'} exec {sys.executable} "
        f'{REPO / "tests" / "python" / "gain_component.py"} "$@"\n',
    )


def chain_spec(middle, packets=20, samples=64, sink='kind = "sink"\nchecksum = true', extra=""):
    """producer -> stage1 (C++) -> x (the component under test) -> last (sink by default)."""
    return (
        f'chain = ["producer", "stage1", "x", "last"]\n{extra}\n'
        f'[[component]]\nname = "producer"\nkind = "producer"\npackets = {packets}\nsamples = {samples}\n'
        f"period_us = 0\n"
        f'[[component]]\nname = "stage1"\nkind = "stage"\nwork = "none"\n'
        f'[[component]]\nname = "x"\n{middle}\n'
        f'[[component]]\nname = "last"\n{sink}\n'
    )


def one_line_error(proc):
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def producer_sum(samples):
    """What the producer's packet sums to: 100 sin(0.01 i), i < samples (cpp/components/producer.cpp)."""
    return sum(100.0 * math.sin(0.01 * i) for i in range(samples))


def comm(pid):
    try:
        return open(f"/proc/{pid}/comm").read().strip()
    except OSError:
        return ""


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def no_processes_left(tag):
    deadline = time.monotonic() + 10
    while processes.tagged_processes(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    return processes.tagged_processes(tag) == {}


# ---------------------------------------------------------------- pipelines


def test_a_python_stage_between_cpp_stages_is_run_and_measured_at_its_neighbour(tmp_path):
    out = tmp_path / "pyline.json"
    proc = scabench("run", PYLINE, "--packets", 40, "--json", out)
    assert proc.returncode == 0, proc.stderr
    assert "stage2: an external component (py-stage), measured at stage3.in" in proc.stdout
    assert re.search(r"process CPU +over the run +per packet", proc.stdout)
    result = json.loads(out.read_text())
    assert result["status"] == "ok"
    stages = {s["name"]: s for s in result["stages"]}
    assert list(stages) == ["stage1", "stage2", "stage3", "sink"]
    py = stages["stage2"]
    assert py["kind"] == "py-stage" and py["measured_at"] == "stage3.in"
    assert py["received"] == 40 and py["reordered_from_original"] == 0
    assert py["max_server_threads"] is None  # its own ports know, the run does not
    assert py["refused"] == 0  # it reported none (it reports refusals as stats)
    assert stages["sink"]["received"] == 40
    # Its per-connection counts, which it reports as a stat line, not a file: the hop out of it.
    hops = {c["id"]: c for c in result["connections"]}
    assert (hops["stage2.out->stage3.in"]["sent"], hops["stage2.out->stage3.in"]["received"]) == (40, 40)
    assert "connections" in result["stats"]["stage2"]
    # The Python stage's process: started by the run, released (exit 0), its CPU measured.
    host = next(h for h in result["hosts"] if h["components"] == ["stage2"])
    assert host["exec"].endswith(("scabench-py-stage", "python", "python3"))
    assert host["exit"] == "exited with status 0"
    assert py["process_cpu_s"] > 0 and py["cpu_per_packet_us"] == pytest.approx(1e6 * py["process_cpu_s"] / 40)
    assert all(s["process_cpu_s"] > 0 for s in stages.values())
    # Its properties and policy are the spec's, resolved; no runner-only property went to it.
    spec_py = next(c for c in result["spec"]["components"] if c["name"] == "stage2")
    assert spec_py["external"]["parameters"] == {"KIND": "stage"}
    assert result["floor_ms"] == 0.0  # work none everywhere


def test_with_shared_memory_the_hops_of_a_python_stage_stay_on_unix_sockets(tmp_path, write_spec):
    # A Python port speaks CORBA only: the hops into and out of it use the
    # run's endpoint (unix), the hops between C++ hosts the ring.
    text = PYLINE.read_text().replace('transport = "tcp"', 'transport = "shm"', 1)
    assert 'transport = "shm"' in text
    result = run_spec(load_spec(write_spec(text, name="pyline-shm.toml")).with_packets(30, where="--packets"))
    assert result.status == "ok" and all(s.received == 30 for s in result.stages)
    hops = {c["id"]: c["transport"] for c in result.spec["connections"]}
    assert {t for i, t in hops.items() if "stage2" in i} == {"unix"}
    assert {t for i, t in hops.items() if "stage2" not in i} == {"shm"}
    py = next(h for h in result.hosts if h["components"] == ["stage2"])
    assert py["transport"] == "unix" and set(py["hops"]["in"].values()) == {"unix"}


def test_an_external_program_gets_a_sequence_property_as_a_corba_sequence(tmp_path, write_spec):
    """A sequence property (a PRF simplesequence) travels as its type's CORBA
    sequence: the gain program's gains multiply sample i by gains[i % 2]."""
    gain = gain_program(tmp_path)
    middle = (
        f'kind = "external"\nexec = "{gain}"\norb_options = true\ngains = {{sequence = "double", values = [2.0, 0.0]}}'
    )
    result = run_spec(load_spec(write_spec(chain_spec(middle, packets=3, samples=64))))
    assert result.status == "ok"
    even = sum(100.0 * math.sin(0.01 * i) for i in range(0, 64, 2))
    assert float(result.stats["last"]["checksum"]) == pytest.approx(3 * 2.0 * even, rel=1e-9)


def test_an_external_program_gets_a_struct_property_as_cf_properties(tmp_path, write_spec):
    """A struct property (a PRF struct) travels as REDHAWK sends one, a
    CF::Properties of its members in the any: the gain program's scale takes
    each sample y to y * factor + offset."""
    gain = gain_program(tmp_path)
    middle = (
        f'kind = "external"\nexec = "{gain}"\norb_options = true\nscale = {{struct = {{factor = 3.0, offset = 0.5}}}}'
    )
    result = run_spec(load_spec(write_spec(chain_spec(middle, packets=3, samples=64))))
    assert result.status == "ok"
    expected = 3 * (3.0 * producer_sum(64) + 64 * 0.5)
    assert float(result.stats["last"]["checksum"]) == pytest.approx(expected, rel=1e-9)


# A program that takes its `scale` struct only with each member in the CORBA
# type of its PRF type, as a REDHAWK component's generated code extracts one
# (`props["id"] >>= member` fails on another type code).
TYPED_GAIN = """import sys
sys.path.insert(0, {tests!r})
from omniORB import CORBA
from gain_component import Gain
from scabench.components import idl
from scabench.components.program import main

EXPECTED = {{"factor": CORBA.tk_float, "offset": CORBA.tk_short}}


class TypedGain(Gain):
    def configure(self, configProperties):
        for prop in configProperties:
            if prop.id == "scale":
                kinds = {{m.id: m.value.typecode().kind() for m in prop.value.value()}}
                if kinds != EXPECTED:
                    raise idl.load().CF.PropertySet.InvalidConfiguration(f"scale's member types: {{kinds}}", [prop])
        super().configure(configProperties)


main(TypedGain, prog="typed-gain")
"""


def test_a_struct_member_goes_as_its_prf_type(tmp_path, write_spec):
    """A typed member, {type = "float", value = ...}, travels as that CORBA
    type: the program refuses the configure on any other type code."""
    script = tmp_path / "typed_gain.py"
    script.write_text(TYPED_GAIN.format(tests=str(REPO / "tests" / "python")))
    typed = executable(
        tmp_path / "typed-gain", f'#!/bin/sh\nPYTHONPATH={REPO / "python"} exec {sys.executable} {script} "$@"\n'
    )
    members = '{factor = {type = "float", value = 3.0}, offset = {type = "short", value = 1}}'
    middle = f'kind = "external"\nexec = "{typed}"\norb_options = true\nscale = {{struct = {members}}}'
    result = run_spec(load_spec(write_spec(chain_spec(middle, packets=2, samples=64))))
    assert result.status == "ok"
    expected = 2 * (3.0 * producer_sum(64) + 64 * 1.0)
    assert float(result.stats["last"]["checksum"]) == pytest.approx(expected, rel=1e-9)


def test_an_external_program_gets_its_properties_and_carries_the_packets(tmp_path, write_spec):
    """Any program taking the SCA exec parameters: the gain program multiplies
    by its property, and the sink's checksum says so."""
    gain = gain_program(tmp_path)
    spec = write_spec(
        chain_spec(f'kind = "external"\nexec = "{gain}"\norb_options = true\ngain = 2.5', packets=25, samples=64)
    )
    result = run_spec(load_spec(spec))
    assert result.status == "ok"
    assert float(result.stats["last"]["checksum"]) == pytest.approx(25 * 2.5 * producer_sum(64), rel=1e-9)
    x = next(s for s in result.stages if s.name == "x")
    assert (x.kind, x.received, x.measured_at) == ("external", 25, "last.in")
    assert x.refused is None  # an external component that reported no refusals: unknown, not zero
    assert result.clean
    host = next(h for h in result.hosts if h["components"] == ["x"])
    assert host["exec"] == str(gain) and host["exit"] == "exited with status 0"
    assert host["rusage"]["user_s"] + host["rusage"]["system_s"] > 0


def test_scabench_host_started_with_the_exec_parameters(tmp_path):
    out = tmp_path / "exec.json"
    proc = scabench("run", EXEC_HOST, "--packets", 30, "--set", "stage2.work_us=50", "--json", out)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    stage2 = next(s for s in result["stages"] if s["name"] == "stage2")
    assert (stage2["kind"], stage2["received"], stage2["measured_at"]) == ("external", 30, "stage3.in")
    assert next(c for c in result["spec"]["components"] if c["name"] == "stage2")["properties"]["work_us"] == 50
    host = next(h for h in result["hosts"] if h["components"] == ["stage2"])
    assert host["exec"].endswith("scabench-host") and host["exit"] == "exited with status 0"


# ------------------------------------- a host driven from outside, over TCP


class NeverAcknowledges(sink_class("double")):
    """A receiver that takes the sender's flow control and never answers it:
    a credits sender waits for ever once its window is used up."""

    def attachSender(self, token, flow):
        self.token, self.detached = token, None


@pytest.fixture
def producer_host(tmp_path, context, orb):
    """scabench-host in the SCA exec form, hosting one producer, resolved by name."""
    ctx, ior = context
    host = StageProcess(
        tmp_path,
        ctx,
        ior,
        binding="src",
        command=[str(program("scabench-host"))],
        extra=["KIND", "producer", "RECORD_DIR", str(tmp_path)],
    )
    yield host, host.resolve()
    host.close()


def test_the_exec_host_answers_its_component_identifier_and_ends_a_stream_with_its_id(producer_host, make_sink):
    host, producer = producer_host
    # CF::Resource::identifier is the COMPONENT_IDENTIFIER it was given (it answered its NAME_BINDING).
    assert (host.identifier, producer._get_identifier()) == ("src:waveform_1", "src:waveform_1")
    sink, sink_ref = make_sink()
    producer.configure(props(packets=3, samples=4, stream_id=9))
    producer.getPort("out")._narrow(S.CF.Port).connectPort(sink_ref, "src-sink")
    producer.start()
    packets = sink.wait_for(lambda ps: any(h.end_of_stream for h, _, _ in ps))
    # Over TCP, the end of stream carries the stream's id as its packets do (it carried 0).
    assert [h.stream_id for h, _, _ in packets] == [9, 9, 9, 9]
    assert [h.sequence_number for h, _, _ in sink.ends()] == [3]
    producer.releaseObject()
    assert host.proc.wait(WAIT_S) == 0


def test_the_exec_host_writes_its_events_to_the_events_file_given(tmp_path, context, make_sink):
    """EVENTS_FILE: what a launcher that did not start it reads there (a plain
    CF node's process, cpp/programs/launcher/plain_nodes.cpp), appended, and
    nothing of it on stdout."""
    ctx, ior = context
    events = tmp_path / "host.events"
    events.write_text("before\n")
    host = StageProcess(
        tmp_path,
        ctx,
        ior,
        binding="lone",
        command=[str(program("scabench-host"))],
        extra=["KIND", "producer", "RECORD_DIR", str(tmp_path), "EVENTS_FILE", str(events)],
    )
    try:
        producer = host.resolve()
        producer.configure(props(packets=2, samples=4))
        producer.start()  # no connection: its end of stream is the run's ("eos")
        deadline = time.monotonic() + WAIT_S
        while "eos lone 2" not in events.read_text():
            assert time.monotonic() < deadline, events.read_text()
            time.sleep(0.05)
        producer.releaseObject()
        assert host.proc.wait(WAIT_S) == 0
        lines = events.read_text().splitlines()
        assert lines[0] == "before" and "eos lone 2" in lines and lines[-1].startswith("rusage lone ")
        assert host.stdout() == ""
        assert (tmp_path / "lone.rec").exists()
    finally:
        host.close()


def test_stop_ends_a_producers_wait_for_credits_and_counts_the_packet(producer_host, orb, tmp_path):
    host, producer = producer_host
    receiver = NeverAcknowledges()
    poa = orb.resolve_initial_references("RootPOA")
    poa.activate_object(receiver)
    producer.configure(props(packets=10, samples=4, out__flow="credits(2)"))
    out = producer.getPort("out")._narrow(S.CF.Port)
    out.connectPort(poa.servant_to_reference(receiver), "src-never")
    producer.start()
    records = tmp_path / "src.rec"
    deadline = time.monotonic() + WAIT_S
    while not (records.exists() and read_records(records).flow["send_stalls"] >= 1):
        assert time.monotonic() < deadline, "the producer never waited for credits"
        time.sleep(0.05)
    stopped = threading.Thread(target=producer.stop, daemon=True)
    stopped.start()
    stopped.join(WAIT_S)
    hung = stopped.is_alive()
    if hung:
        out.disconnectPort("src-never")  # what freed it before; the test fails below
        stopped.join(WAIT_S)
    assert not hung, "stop() waited for the receiver's credits"
    # query answers, and the packet that waited is counted, not sent.
    [answer] = producer.query(props(packets=0))
    assert answer.value.value() == 10
    assert read_records(records).flow["unsent"] == 1
    assert len(receiver.data()) == 2 and receiver.ends() == []
    producer.releaseObject()
    assert host.proc.wait(WAIT_S) == 0


# ----------------------------------------------------------- references


@pytest.fixture
def started_stage(orb, naming, tmp_path):
    """scabench-py-stage started by the test itself, bound in the test's own
    Naming Service: a component someone else started."""
    context_name = f"others_{os.getpid()}_{time.monotonic_ns()}"
    ctx = naming.root.bind_new_context(name(context_name))
    stage = StageProcess(tmp_path, ctx, orb.object_to_string(ctx), binding="theirs")
    res = stage.resolve()
    yield stage, res, f"{context_name}/theirs", f"corbaloc::127.0.0.1:{naming.port}/NameService"
    stage.close()


def test_a_component_resolved_by_name_is_driven_and_released(write_spec, started_stage):
    stage, _, path, corbaloc = started_stage
    spec = write_spec(
        chain_spec(
            f'kind = "external"\nref = "{path}"\nnaming = "{corbaloc}"\nwork = "none"',
            sink='kind = "stage"\nwork = "none"',
        )
    )
    result = run_spec(load_spec(spec))
    x = next(s for s in result.stages if s.name == "x")
    assert (x.received, x.measured_at, x.process_cpu_s) == (20, "last.in", None)  # not the run's process
    assert stage.proc.wait(WAIT_S) == 0  # released the CF way: it unbound itself and left
    assert not stage.bound()


def test_a_component_by_ior_is_left_running_when_not_released(orb, write_spec, started_stage, make_sink):
    stage, res, _, _ = started_stage
    ior = orb.object_to_string(res)
    spec = write_spec(
        chain_spec(
            f'kind = "external"\nref = "{ior}"\nrelease = false\nwork = "none"', sink='kind = "stage"\nwork = "none"'
        )
    )
    assert run_spec(load_spec(spec)).status == "ok"
    assert stage.proc.poll() is None and stage.bound()
    # Stopped and disconnected: its out-port takes a new connection.
    sink, sink_ref = make_sink()
    res.getPort("out")._narrow(S.CF.Port).connectPort(sink_ref, "after")
    res.releaseObject()
    assert stage.proc.wait(WAIT_S) == 0


def test_refs_into_another_held_run(write_spec, tmp_path):
    """A held run's components, referenced from a second run: one has no
    out-port, the other is running and refuses configure; the held run is
    left as it was, and is released whole."""
    held_json = tmp_path / "held.json"
    held = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "run",
            str(PYLINE),
            "--packets",
            "20",
            "--hold",
            "--json",
            str(held_json),
        ],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = held.stderr.readline()
        assert "held:" in line, line + held.stderr.read()
        corbaloc = re.search(r"(corbaloc::\S+/NameService)", line).group(1)
        for target, release, why in [
            ("sink", "true", "component x has no port 'out' (connection x.out->last.in)"),
            (
                "stage3",
                "false",
                "component x rejected its configuration: property "
                "'in.dispatch' cannot change while the component is started",
            ),
        ]:
            spec = write_spec(
                chain_spec(f'kind = "external"\nref = "pyline_1/{target}"\nnaming = "{corbaloc}"\nrelease = {release}'),
                name=f"into-{target}.toml",
            )
            proc = scabench("run", spec)
            assert proc.returncode == 1
            assert one_line_error(proc).startswith(f"run failed: {why}")
        held.stdin.close()  # releases the held run
        assert held.wait(60) == 0, held.stderr.read()
    finally:
        end_process(held)
    result = json.loads(held_json.read_text())
    assert result["status"] == "ok" and [s["received"] for s in result["stages"]] == [20, 20, 20, 20]


# --------------------------------------------------------------- failures


def run_failure(spec):
    proc = scabench("run", spec)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return one_line_error(proc)


def test_a_program_that_exits_before_binding_is_named_with_its_stderr(tmp_path, write_spec):
    bad = executable(tmp_path / "nolicence", "#!/bin/sh\necho 'nolicence: no licence for this host' >&2\nexit 3\n")
    line = run_failure(write_spec(chain_spec(f'kind = "external"\nexec = "{bad}"')))
    assert re.fullmatch(
        rf"run failed: component x \({re.escape(str(bad))}, pid \d+\) exited with status 3; its "
        r"stderr: nolicence: no licence for this host",
        line,
    ), line


def test_a_program_that_never_binds_is_ended_after_its_timeout(tmp_path, write_spec):
    sleeper = executable(tmp_path / "sleeper", "#!/bin/sh\nexec sleep 60\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "run",
            str(write_spec(chain_spec(f'kind = "external"\nexec = "{sleeper}"\nbind_timeout_s = 1'))),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    tag = processes.owner_tag(proc.pid)
    seen = False  # the sleeper carries the run owner's tag, as every process of the run
    while proc.poll() is None and not seen:
        seen = any(comm(pid) == "sleep" for pid in processes.tagged_processes(tag))
        time.sleep(0.05)
    out, err = proc.communicate(timeout=120)
    assert seen
    assert proc.returncode == 1
    assert re.fullmatch(
        r"run failed: component x \(.*sleeper, pid \d+\) did not bind its name 'x' in the naming "
        r"context within 1 s",
        err.strip(),
    ), err
    assert no_processes_left(tag)  # the sleeper went with the run


@pytest.mark.parametrize(
    "script, says",
    [
        # It exits, leaving a child behind that holds its stdout.
        ("#!/bin/sh\nsleep 300 &\nexit 3\n", r"exited with status 3"),
        # It never binds; its child holds its stdout as well.
        ("#!/bin/sh\nsleep 300 &\nexec sleep 301\n", r"did not bind its name 'x' in the naming context within 1 s"),
    ],
)
def test_a_program_whose_child_outlives_it_is_ended_with_its_whole_group(tmp_path, write_spec, script, says):
    """The run ends a program's whole process group, and does not wait for
    the end of a pipe that a child of the program still holds."""
    forker = executable(tmp_path / "forker", script)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "run",
            str(write_spec(chain_spec(f'kind = "external"\nexec = "{forker}"\nbind_timeout_s = 1'))),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    tag = processes.owner_tag(proc.pid)
    try:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 1, err
        assert re.search(says, err), err
        assert no_processes_left(tag)  # the child went with its program
    finally:
        end_process(proc)
        for pid in processes.tagged_processes(tag):  # what the old launcher left behind: the run's own
            os.kill(pid, signal.SIGKILL)


def test_a_killed_command_takes_its_external_programs_along():
    """SIGKILL to the command: the launcher dies with it, and the Python
    stage with the launcher (PR_SET_PDEATHSIG), as the hosts do."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(PYLINE), "--packets", "20", "--hold"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "held:" in proc.stderr.readline()
        tag = processes.owner_tag(proc.pid)
        stage = [pid for pid in processes.tagged_processes(tag) if "NAME_BINDING" in cmdline(pid)]
        assert len(stage) == 1 and "stage2" in cmdline(stage[0])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        assert no_processes_left(tag)
    finally:
        end_process(proc)


def test_a_ref_that_does_not_answer(write_spec):
    line = run_failure(write_spec(chain_spec('kind = "external"\nref = "corbaloc::127.0.0.1:1/stage"')))
    assert (
        line == "run failed: component x: ref 'corbaloc::127.0.0.1:1/stage' does not answer: TRANSIENT "
        "(TRANSIENT_ConnectFailed)"
    )


def test_a_component_lacking_a_port(write_spec):
    host = program("scabench-host")
    line = run_failure(
        write_spec(
            chain_spec(
                f'kind = "external"\nexec = "{host}"\norb_options = true\n'
                'parameters = { KIND = "sink", RECORD_DIR = "{run_dir}" }'
            )
        )
    )
    assert line == "run failed: component x has no port 'out' (connection x.out->last.in)"


def test_a_python_port_refuses_a_policy_before_any_process_starts():
    proc = scabench("run", PYLINE, "--policy", "worker=8")
    assert proc.returncode == 2
    assert (
        "'stage2' is a Python component, and in.worker = 8: 8 is not supported by the Python runtime"
        in one_line_error(proc)
    )


# ------------------------------------------------------------- bad specs

EXEC = 'kind = "external"\nexec = "/bin/cat"'
BAD = [
    (
        chain_spec('kind = "stage"', sink=EXEC),
        "chain[2]",
        "'last' (external) is external and last: it has no record file of its own",
    ),
    (
        'chain = ["x", "s"]\n[[component]]\nname = "x"\n' + EXEC + '\n[[component]]\nname = "s"\nkind = "sink"\n',
        "connection",
        "'x' (external) is external and first",
    ),
    (chain_spec('kind = "external"\nexec = "./not-there"'), "component[2].exec", "no such program"),
    (chain_spec('kind = "external"\nexec = "no-such-program-anywhere"'), "component[2].exec", "on PATH"),
    (chain_spec('kind = "external"'), "component[2]", "needs one of exec"),
    (chain_spec(EXEC + '\nref = "IOR:00"'), "component[2]", "needs one of exec"),
    (
        chain_spec(EXEC + '\nnaming = "corbaloc::127.0.0.1:1/NameService"'),
        "component[2].naming",
        "goes with ref, not with exec",
    ),
    (
        chain_spec('kind = "external"\nref = "IOR:00"\nbind_timeout_s = 3'),
        "component[2].bind_timeout_s",
        "goes with exec, not with ref",
    ),
    (
        chain_spec('kind = "external"\nref = "waveform_1/stage2"'),
        "component[2].naming",
        "is a name: give the Naming Service",
    ),
    (chain_spec('kind = "external"\nref = "http://example.org/x"'), "component[2].ref", "neither a reference"),
    (
        chain_spec(EXEC + '\nparameters = { NAME_BINDING = "y" }'),
        "component[2].parameters.NAME_BINDING",
        "the launcher gives it",
    ),
    (chain_spec(EXEC + "\nbind_timeout_s = 0"), "component[2].bind_timeout_s", "more than 0"),
    (
        chain_spec(EXEC + "\ngain = [1, 2]"),
        "component[2].gain",
        "a boolean, an integer, a real, a string, a sequence",
    ),
    (
        chain_spec(EXEC + '\ngains = {sequence = "double", values = ["x"]}'),
        "component[2].gains.values[0]",
        "'x' is not a double",
    ),
    (
        chain_spec(EXEC + '\ngains = {sequence = "objref", values = []}'),
        "component[2].gains.sequence",
        "valid: boolean",
    ),
    (chain_spec(EXEC + "\nrelease = false"), "component[2].release", "goes with ref"),
    (
        'chain = ["producer", "x", "y", "s"]\n[[component]]\nname = "producer"\nkind = "producer"\n'
        '[[component]]\nname = "x"\n'
        + EXEC
        + '\n[[component]]\nname = "y"\n'
        + EXEC
        + '\n[[component]]\nname = "s"\nkind = "sink"\n',
        "connection",
        "x.out->y.in: both ends are external",
    ),
    (
        chain_spec(EXEC, extra='[[connection]]\nfrom = "p2.out"\nto = "last.in"\n')
        + '[[component]]\nname = "p2"\nkind = "producer"\n',
        "connection",
        "last.in also receives p2.out->last.in",
    ),
    (
        chain_spec(EXEC) + '[placement]\nhosts = [["producer", "stage1", "x", "last"]]\n',
        "placement.hosts",
        "'x' is external, a process of its own",
    ),
    (
        chain_spec(EXEC) + "[network]\ndelay_ms = 1\n",
        "network",
        "'x' (external) is external: it runs on this machine's loopback",
    ),
    (chain_spec('kind = "py-stage"\nwork_ms = 3'), "component[2].work_ms", "py-stage has no property 'work_ms'"),
    (
        chain_spec('kind = "py-stage"') + '[policy]\nflow = "credits(8)"\n',
        "policy",
        "'x' is a Python component, and in.flow = 'credits(8)': 'credits(8)' is not supported by the Python runtime",
    ),
]


@pytest.mark.parametrize("text, key, hint", BAD)
def test_bad_external_specs_are_refused_with_one_line(write_spec, text, key, hint):
    path = write_spec(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert err.value.key == key
    assert hint in str(err.value) and "\n" not in str(err.value)


def test_an_exec_that_is_not_executable(tmp_path, write_spec):
    plain = tmp_path / "plain"
    plain.write_text("#!/bin/sh\n")
    proc = scabench("run", write_spec(chain_spec(f'kind = "external"\nexec = "{plain}"')))
    assert proc.returncode == 2
    assert one_line_error(proc).endswith(f"component[2].exec: {plain} is not executable")


def test_a_bad_external_spec_exits_2_with_one_line(write_spec):
    proc = scabench("run", write_spec(chain_spec('kind = "stage"', sink=EXEC)))
    assert proc.returncode == 2
    assert "is external and last" in one_line_error(proc)


def test_the_exec_of_the_runtimes_own_program_is_found_as_scabench_finds_its_programs(tmp_path):
    spec = load_spec(EXEC_HOST)
    stage2 = spec.component("stage2")
    assert stage2.external.program == [str(program("scabench-host"))]
    assert stage2.external.parameters == {"KIND": "stage", "RECORD_DIR": "{run_dir}"}
    assert spec.hosts == [["producer"], ["stage1"], ["stage3"]]
    # The spec copied anywhere, away from the build, still finds it.
    copy = tmp_path / "elsewhere" / "exec-host.toml"
    copy.parent.mkdir()
    copy.write_text(EXEC_HOST.read_text())
    assert load_spec(copy).component("stage2").external.program == [str(program("scabench-host"))]


def test_the_relative_exec_of_a_spec_is_from_its_folder(tmp_path, write_spec):
    (tmp_path / "bin").mkdir()
    mine = executable(tmp_path / "bin" / "mine", "#!/bin/sh\nexit 0\n")
    spec = load_spec(write_spec(chain_spec('kind = "external"\nexec = "bin/mine"')))
    assert spec.component("x").external.program == [str(mine)]


def test_the_catalogue_lists_the_python_and_external_kinds():
    proc = scabench("components")
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"^py-stage +out +in ", proc.stdout, re.M) and re.search(r"^external +its own", proc.stdout, re.M)
    proc = scabench("components", "py-stage")
    assert proc.returncode == 0 and re.search(r"^work_us +integer +5,000 ", proc.stdout, re.M)
    proc = scabench("components", "external")
    assert proc.returncode == 2 and "declares nothing" in one_line_error(proc)

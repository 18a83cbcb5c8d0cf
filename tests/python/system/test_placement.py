"""Waveforms placed on nodes (docs/architecture.md, "Placement on nodes"):
specs that name nodes, runs whose processes `scabench node` agents start,
network hosts as nodes (a namespace and an agent each, behind the link
emulator), a node killed mid-run, and the nodes' clocks related to the
launcher's against a known delay.

The network-host tests need root, iproute2 and the link emulator; where any
is missing they skip and say which. Every process started here is ended by
its PID."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, descends_from, pipeline_toml, run_processes, scabench
from py_components_world import S, end_process, orb, start_naming  # noqa: F401 (the fixtures)

from scabench.errors import RunError, SpecError
from scabench.model.load import load_spec
from scabench.run import network
from scabench.run.runner import run_spec

REASON = network.unavailable_reason()
needs_network = pytest.mark.skipif(REASON is not None, reason=f"network hosts unavailable: {REASON}")
WAIT_S = 60


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _namespaces(pid):
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listing.splitlines() if line.startswith(f"{network.NAME_PREFIX}{pid}-")]


def _run_pids(result):
    """Every process the run started on its nodes, by the nodes' records."""
    return [p["pid"] for n in result.nodes for p in n.processes]


# --- the spec ------------------------------------------------------------------------------------

NODES_SPEC = pipeline_toml(packets=10, placement='nodes = { n1 = ["producer"], n2 = ["stage1", "stage2"] }')
DOMAIN = '[domain]\nnaming = "corbaloc::127.0.0.1:2809/NameService"\n'


def test_a_spec_places_processes_on_nodes(write_spec):
    spec = load_spec(write_spec(NODES_SPEC + DOMAIN))
    assert spec.nodes == {"n1": ["producer"], "n2": ["stage1", "stage2"]}
    assert spec.domain == "corbaloc::127.0.0.1:2809/NameService"
    assert [spec.node_of(n) for n in ("producer", "stage1", "stage3")] == ["n1", "n2", None]
    described = spec.describe()
    assert described["nodes"] == spec.nodes and described["domain"] == spec.domain
    assert "nodes" not in load_spec(write_spec(pipeline_toml(packets=10), "plain.toml")).describe()


@pytest.mark.parametrize(
    "text, key, words",
    [
        (NODES_SPEC, "placement.nodes", "[domain] naming"),
        (
            pipeline_toml(placement='nodes = { "a/b" = ["producer"] }') + DOMAIN,
            "placement.nodes.a/b",
            "not a node name",
        ),
        (pipeline_toml(placement="nodes = { n1 = [] }") + DOMAIN, "placement.nodes.n1", "non-empty list"),
        (pipeline_toml(placement='nodes = ["producer"]') + DOMAIN, "placement.nodes", "table of node names"),
        (pipeline_toml(placement='nodes = { n1 = ["ghost"] }') + DOMAIN, "placement.nodes.n1", "no component named"),
        (
            pipeline_toml(placement='nodes = { n1 = ["producer"], n2 = ["producer"] }') + DOMAIN,
            "placement.nodes.n2",
            "placed on 'n1' already",
        ),
        (
            pipeline_toml(
                placement='hosts = [["producer", "stage1"], ["stage2"], ["stage3"]]\nnodes = { n1 = ["producer"] }'
            )
            + DOMAIN,
            "placement.nodes",
            "share a process",
        ),
        (
            pipeline_toml(placement='nodes = { n1 = ["producer"] }', run='transport = "unix"') + DOMAIN,
            "run.transport",
            "tcp",
        ),
        (
            pipeline_toml(placement='nodes = { n1 = ["producer"] }') + DOMAIN + "[network]\ndelay_ms = 1\n",
            "domain",
            "network hosts",
        ),
        (
            pipeline_toml(placement='nodes = { n1 = ["producer"] }') + "[network]\ndelay_ms = 1\n",
            "placement.nodes",
            "network hosts",
        ),
        (pipeline_toml() + '[domain]\nnaming = "somewhere"\n', "domain.naming", "corbaloc"),
        (pipeline_toml() + '[domain]\nnaming = "corbaloc::h:1/NameService"\nport = 1\n', "domain.port", "unknown key"),
        (
            pipeline_toml(placement='nodes = { n1 = ["producer"] }\nwhere = 1') + DOMAIN,
            "placement.where",
            "valid: hosts, nodes",
        ),
    ],
)
def test_bad_node_placement_is_one_line_and_exit_2(write_spec, text, key, words):
    path = write_spec(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert key in str(err.value) and words in str(err.value), str(err.value)
    out = scabench("validate", path)
    assert out.returncode == 2 and "Traceback" not in out.stderr + out.stdout
    assert len((out.stdout + out.stderr).strip().splitlines()) == 1, out.stdout + out.stderr


def test_the_library_keeps_the_placement_on_nodes(write_spec, tmp_path):
    """scabench.load and a SAD read into the library keep the nodes and the
    domain (Spec.document()), so a waveform saved again runs where it ran."""
    import scabench
    from scabench.model.sad.export import export_sad

    original = load_spec(write_spec(NODES_SPEC + DOMAIN))
    for wf in (scabench.load(original.path), scabench.load(export_sad(original, tmp_path / "sad").sad)):
        spec = wf.spec()
        assert spec.nodes == original.nodes and spec.domain == original.domain
    again = load_spec(write_spec(scabench.load(original.path).to_toml(), "again.toml"))
    assert again.nodes == original.nodes and again.domain == original.domain


def test_overrides_that_would_split_a_process_over_nodes_are_refused(write_spec):
    spec = load_spec(write_spec(NODES_SPEC + DOMAIN))
    with pytest.raises(SpecError, match="--collocated.*share a process"):
        spec = spec.with_collocated(where="--collocated")
    out = scabench("run", write_spec(NODES_SPEC + DOMAIN), "--link-delay", "2")
    assert out.returncode == 2 and "network hosts" in out.stderr and "Traceback" not in out.stderr


def test_a_sad_sidecar_places_hostcollocations_and_lone_components_on_nodes(write_spec, tmp_path):
    from scabench.model.sad.export import export_sad

    original = load_spec(
        write_spec(
            pipeline_toml(
                packets=10,
                placement='hosts = [["producer"], ["stage1", "stage2"], ["stage3"]]\n'
                'nodes = { n1 = ["stage1", "stage2"], n2 = ["producer", "stage3"] }',
            )
            + DOMAIN
        )
    )
    exported = export_sad(original, tmp_path / "out")
    sidecar = exported.sidecar.read_text()
    assert '[hostcollocation.host2]\nnode = "n1"' in sidecar
    assert '[componentinstantiation.stage3]\nnode = "n2"' in sidecar
    assert '[domain]\nnaming = "corbaloc::127.0.0.1:2809/NameService"' in sidecar
    loaded = load_spec(exported.sad)
    assert loaded.nodes == original.nodes and loaded.domain == original.domain and loaded.hosts == original.hosts
    # A hostcollocation by its name too; a mistake is one line naming the sidecar's key.
    exported.sidecar.write_text(sidecar.replace("[hostcollocation.host2]", "[hostcollocation.nowhere]"))
    with pytest.raises(SpecError) as err:
        load_spec(exported.sad)
    assert "hostcollocation.nowhere" in str(err.value) and "no hostcollocation" in str(err.value)
    assert str(err.value).startswith(str(exported.sidecar))
    exported.sidecar.write_text(sidecar.replace('node = "n1"', 'node = "n1"\ncores = 2'))
    with pytest.raises(SpecError, match="hostcollocation.host2.cores: unknown key"):
        load_spec(exported.sad)
    exported.sidecar.write_text(sidecar.replace('node = "n1"', 'node = "n/1"'))
    with pytest.raises(SpecError, match="hostcollocation.host2: .*not a node name"):
        load_spec(exported.sad)


# --- nodes on this machine's loopback, in a domain of the test's own ---------------------------------


@pytest.fixture
def domain(start_naming):
    return start_naming("domain")


@pytest.fixture
def start_nodes(tmp_path, domain):
    started = []

    def start(*names):
        for name in names:
            log = open(tmp_path / f"{name}.log", "w")
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "scabench.cli",
                    "node",
                    "--domain",
                    f"corbaloc::127.0.0.1:{domain.port}/NameService",
                    "--name",
                    name,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=REPO,
            )
            log.close()
            started.append(proc)
        for name, proc in zip(names, started[-len(names) :]):
            deadline = time.monotonic() + WAIT_S
            while "registered in" not in (tmp_path / f"{name}.log").read_text():
                assert proc.poll() is None, (tmp_path / f"{name}.log").read_text()
                assert time.monotonic() < deadline, f"node {name} never registered"
                time.sleep(0.05)
        return started[-len(names) :]

    yield start
    for proc in started:
        end_process(proc, grace_s=15.0)


def _domain_spec(write_spec, domain, placement, packets=20, policy='call = "twoway"\nworker = 4'):
    return load_spec(
        write_spec(
            pipeline_toml(packets=packets, policy=policy, placement=placement)
            + f'[domain]\nnaming = "corbaloc::127.0.0.1:{domain.port}/NameService"\n'
        )
    )


def test_a_run_on_two_nodes_of_a_domain_reports_each_node_and_leaves_the_domain_as_it_was(
    write_spec, domain, start_nodes
):
    start_nodes("n1", "n2")
    spec = _domain_spec(
        write_spec,
        domain,
        'nodes = { n1 = ["stage1"], n2 = ["stage2", "stage3"] }\n'
        'hosts = [["producer"], ["stage1"], ["stage2", "stage3"]]',
    )
    result = run_spec(spec)
    assert [s.received for s in result.stages] == [20, 20, 20]
    assert all(s.reordered_from_original == 0 for s in result.stages)
    by_name = {n.name: n for n in result.nodes}
    assert set(by_name) == {"n1", "n2"}
    n2 = by_name["n2"]
    [process] = n2.processes
    assert process["components"] == ["stage2", "stage3"] and process["program"] == "scabench-host"
    assert process["exit_status"] == 0 and not process["running"]
    assert n2.user_s + n2.system_s > 0 and n2.context_switches > 0 and n2.lost is None
    for node in result.nodes:  # one machine, one clock: the offset is within its bound of 0
        assert node.clock.start is not None and node.clock.end is not None
        assert abs(node.clock.start.offset_ms) <= node.clock.start.bound_ms
        assert node.clock.error_bound_ms < 100
    hosts = {h["name"]: h for h in result.hosts}
    assert "node" not in hosts["host0-producer"] and hosts["host2-stage2+stage3"]["node"] == "n2"
    # The waveform's context was made in the domain, and is gone with the run.
    assert result.naming["corbaloc"] == spec.domain and result.naming["context"] == "spec_1"
    bindings, _ = domain.root.list(100)
    assert sorted(b.binding_name[0].id for b in bindings) == ["nodes"]
    assert not any(_alive(pid) for pid in _run_pids(result))


def test_a_python_component_runs_on_a_node_and_is_measured_at_the_port_it_feeds(write_spec, domain, start_nodes):
    start_nodes("n1", "n2")
    text = pipeline_toml(packets=15, policy='call = "twoway"', placement='nodes = { n1 = ["stage1"], n2 = ["stage2"] }')
    text = text.replace('name = "stage1"\nkind = "stage"', 'name = "stage1"\nkind = "py-stage"')
    spec = load_spec(write_spec(text + f'[domain]\nnaming = "corbaloc::127.0.0.1:{domain.port}/NameService"\n'))
    result = run_spec(spec)
    stage1 = next(s for s in result.stages if s.name == "stage1")
    assert stage1.received == 15 and stage1.measured_at == "stage2.in"
    [process] = next(n for n in result.nodes if n.name == "n1").processes
    assert process["program"] == "scabench-py-stage" and process["exit_status"] == 0
    assert [s.received for s in result.stages] == [15, 15, 15]


def test_a_node_not_in_the_domain_fails_the_run_naming_it(write_spec, domain, start_nodes):
    start_nodes("n1")
    spec = _domain_spec(write_spec, domain, 'nodes = { n1 = ["stage1"], ghost = ["stage2"] }')
    with pytest.raises(RunError) as err:
        run_spec(spec)
    assert "node ghost is not registered" in str(err.value) and err.value.component == "stage2"
    out = scabench("run", spec.path)
    assert out.returncode == 1 and "node ghost is not registered" in out.stderr and "Traceback" not in out.stderr


class RefusingExecutableDevice(S.CF__POA.ExecutableDevice):
    """A plain CF device (no scabench::node::NodeDevice) that refuses to
    execute: each call made of it is recorded."""

    def __init__(self):
        self.calls = []

    def _get_operationalState(self):
        self.calls.append("operationalState")
        return S.CF.Device.ENABLED

    def allocateCapacity(self, capacities):
        self.calls.append("allocateCapacity")
        return True

    def deallocateCapacity(self, capacities):
        self.calls.append("deallocateCapacity")

    def load(self, fs, fileName, loadKind):
        self.calls.append("load")

    def unload(self, fileName):
        self.calls.append("unload")

    def execute(self, name, options, parameters):
        self.calls.append("execute")
        raise S.CF.ExecutableDevice.ExecuteFail(S.CF.CF_ENOTSUP, "this device is here to refuse")


def test_a_plain_cf_device_that_refuses_to_execute_is_named_and_given_back_what_was_taken(write_spec, domain, orb):
    """A plain device is driven with CF alone (test_plain_node.py runs one);
    its refusal is the run's failure, and what the run took is given back."""
    CosNaming = S.CosNaming
    poa = orb.resolve_initial_references("RootPOA")
    device = RefusingExecutableDevice()
    poa.activate_object(device)
    nodes = domain.root.bind_new_context([CosNaming.NameComponent("nodes", "")])
    plain = nodes.bind_new_context([CosNaming.NameComponent("plain", "")])
    plain.bind([CosNaming.NameComponent("device", "")], poa.servant_to_reference(device))
    try:
        spec = _domain_spec(write_spec, domain, 'nodes = { plain = ["stage1"] }')
        with pytest.raises(RunError) as err:
            run_spec(spec)
        refusal = "node plain: execute /scabench/bin/scabench-host for stage1: this device is here to refuse"
        assert refusal in str(err.value)
        assert err.value.component == "stage1"
        assert device.calls == [
            "operationalState",
            "allocateCapacity",
            "load",
            "execute",
            "deallocateCapacity",
            "unload",
        ]
    finally:
        plain.unbind([CosNaming.NameComponent("device", "")])
        poa.deactivate_object(poa.servant_to_id(device))


def test_a_node_short_of_memory_refuses_the_run(write_spec, domain, start_nodes, tmp_path):
    log = open(tmp_path / "small.log", "w")
    small = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "node",
            "--domain",
            f"corbaloc::127.0.0.1:{domain.port}/NameService",
            "--name",
            "small",
            "--memory-mib",
            "1",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=REPO,
    )
    log.close()
    try:
        deadline = time.monotonic() + WAIT_S
        while "registered in" not in (tmp_path / "small.log").read_text():
            assert small.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        spec = _domain_spec(write_spec, domain, 'nodes = { small = ["stage1"] }')
        with pytest.raises(RunError, match="node small has not .* MiB of memory left"):
            run_spec(spec)
    finally:
        end_process(small, grace_s=15.0)


# --- network hosts: a namespace and a node each, behind the emulated link -----------------------------

CREDITS = '''call = "oneway"
ordering = "resequence"
reorder_capacity = 16
reorder_timeout_ms = 500
flow = "credits(8)"'''


@needs_network
def test_three_nodes_two_way_with_a_worker_then_credits(write_spec):
    text = pipeline_toml(packets=40, stages=2, work_us=500, policy='call = "twoway"\nworker = 4')
    text += (
        """[[connection]]
from = "stage1.out"
to = "stage2.in"
"""
        + CREDITS
        + "\n"
    )
    # The chain's stage1 -> stage2 is replaced by the [[connection]]: a spec connects a uses port once.
    text = text.replace('chain = ["producer", "stage1", "stage2"]', 'chain = ["producer", "stage1"]')
    spec = load_spec(write_spec(text))
    spec = spec.with_network({"delay_ms": 3}, where="--link-delay")
    result = run_spec(spec)
    assert [s.received for s in result.stages] == [40, 40]
    assert all(s.output_reordered_from_previous == 0 for s in result.stages)
    assert result.stages[1].skipped == 0
    assert sorted(n.name for n in result.nodes) == ["h0", "h1", "h2"]
    for node, host in zip(sorted(result.nodes, key=lambda n: n.name), result.network.hosts):
        assert node.same_machine and node.published_host == host["published"].split(":")[0]
        [process] = node.processes
        assert process["exit_status"] == 0 and process["user_s"] + process["system_s"] > 0
        assert process["context_switches"] > 0
        # Every call to the agent crosses the link both ways.
        assert node.clock.start.rtt_ms >= 2 * 3
    assert result.stages[0].process_cpu_s > 0  # through the node
    assert result.network.node_agents_cpu_s >= 0
    assert not any(_alive(pid) for pid in _run_pids(result))
    assert _namespaces(os.getpid()) == []


@needs_network
def test_a_node_killed_mid_run_is_named_and_every_process_of_the_run_is_gone(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=400, work="sleep", work_us=10_000, policy='call = "twoway"\nworker = 4'))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "run",
            str(spec),
            "--link-delay",
            "1",
            "--json",
            str(tmp_path / "r.json"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    hosts, victim, stderr = _signal_agent_h2(proc, signal.SIGKILL)
    assert proc.returncode == 1, stderr
    assert "node h2 does not answer" in stderr and "it is gone, and its components stage2 (pid" in stderr
    assert "went with it" in stderr and "Traceback" not in stderr
    assert not _alive(victim) and not any(_alive(pid) for pid in hosts)
    assert _namespaces(proc.pid) == []
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["status"] == "failed" and doc["failed_component"] == "stage2"
    lost = {n["name"]: n.get("lost") for n in doc["nodes"]}
    assert lost["h2"] and not lost["h0"]
    assert any(s["name"] == "stage1" and s["received"] > 0 for s in doc["stages"])  # fetched from a live node


@needs_network
def test_a_stopped_node_agent_is_said_not_to_answer_not_to_be_gone(write_spec, tmp_path):
    """SIGSTOP of a node's agent: its components' host runs on. The run
    says what is known (the agent does not answer; the host still runs)
    and ends it all the same."""
    spec = write_spec(pipeline_toml(packets=400, work="sleep", work_us=10_000, policy='call = "twoway"\nworker = 4'))
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec), "--link-delay", "1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    hosts, victim, stderr = _signal_agent_h2(proc, signal.SIGSTOP)
    assert proc.returncode == 1, stderr
    assert "node h2 does not answer" in stderr and "its agent is stopped or hung, not gone" in stderr, stderr
    assert re.search(r"its components stage2 \(pid \d+, still running\) are out of the run", stderr), stderr
    assert "went with it" not in stderr and "is gone" not in stderr
    assert not any(_alive(pid) for pid in hosts)
    assert _namespaces(proc.pid) == []


@needs_network
def test_a_host_hung_on_a_node_is_found_by_its_progress_and_named(write_spec, tmp_path):
    """The watchdog reads a node's components' progress from the record
    headers the launcher copies as it polls: a stopped host there is a hang,
    named after its component, and the run ends."""
    spec = write_spec(pipeline_toml(packets=400, work="sleep", work_us=5_000, policy='call = "twoway"\nworker = 4'))
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec), "--link-delay", "1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        [victim] = _wait_for(
            lambda: [pid for pid, _ in run_processes("COMPONENT stage2:stage", root=proc.pid)],
            bool,
            "stage2's host never started",
        )
        time.sleep(1.0)
        os.kill(victim, signal.SIGSTOP)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            end_process(proc)
        if _alive(victim):  # only if the test failed
            os.kill(victim, signal.SIGKILL)
    assert proc.returncode == 1, stderr
    assert "no packet moved" in stderr and "component stage2 holds a packet" in stderr, stderr
    assert not _alive(victim)


def _signal_agent_h2(proc, signum):
    """Sends `signum` to the agent of node h2 (stage2's) once a run of
    pipeline_toml on network hosts is under way, and waits for the run's
    end: (its four hosts, stage2's host, the run's stderr)."""
    agent = None
    try:
        hosts = _wait_for(
            lambda: [pid for pid, _ in run_processes("COMPONENT_IDENTIFIER", root=proc.pid)],
            lambda found: len(found) == 4,
            "the four hosts never started",
        )
        agent = _wait_for(
            lambda: [pid for pid, cmd in run_processes("--name h2 ", root=proc.pid) if "scabench.cli node" in cmd],
            bool,
            "no agent h2",
        )[0]
        victim = next(pid for pid in hosts if descends_from(pid, agent))
        time.sleep(1.0)  # the stream is under way
        os.kill(agent, signum)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            end_process(proc)
        left_behind = agent is not None and _alive(agent)
        if left_behind:  # only if the run failed to end it
            os.kill(agent, signal.SIGKILL)
    assert not left_behind
    return hosts, victim, stderr


def _wait_for(find, done, what, timeout=WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        found = find()
        if done(found):
            return found
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


# --- time across nodes -------------------------------------------------------------------------

ONE_WAY = """chain = ["producer", "sink"]
[[component]]
name = "producer"
kind = "producer"
packets = 12
samples = 16
period_us = 50000
[[component]]
name = "sink"
kind = "sink"
[policy]
call = "twoway"
"""
DELAY_MS = 20


def _one_way(result):
    """The packets' time from the producer's send to the sink's arrival
    (median): across two nodes, each time on its own node's clock, moved
    onto the launcher's."""
    sink = next(s for s in result.stages if s.name == "sink")
    return (sink.latency_since_send_us.p50 - sink.latency_in_stage_us.p50) / 1e3


@needs_network
def test_each_nodes_clock_is_related_to_the_launchers_within_half_the_round_trip(write_spec):
    spec = load_spec(write_spec(ONE_WAY))
    spec = spec.with_network({"delay_ms": DELAY_MS}, where="--link-delay")
    result = run_spec(spec)
    clocks = {n.name: n.clock for n in result.nodes}
    # The upper limits are generous (a loaded machine answers late), the
    # lower ones the link's: a round trip crosses it both ways.
    for clock in clocks.values():
        for probe in (clock.start, clock.end):
            assert 2 * DELAY_MS <= probe.rtt_ms < 2 * DELAY_MS + 30
            assert DELAY_MS <= probe.bound_ms < DELAY_MS + 15
            assert abs(probe.offset_ms) <= probe.bound_ms  # one kernel: the true offset is 0
    # A packet takes the link's delay into the sink's host: measured across
    # the two nodes' clocks, within the sum of their bounds (and here, where
    # the delays are the same both ways, much closer).
    bound = clocks["h0"].error_bound_ms + clocks["h1"].error_bound_ms
    assert abs(_one_way(result) - DELAY_MS) <= bound
    assert abs(_one_way(result) - DELAY_MS) < 5


@needs_network
def test_an_asymmetric_link_moves_the_estimate_and_the_bound_still_holds(write_spec, monkeypatch):
    """The launcher's calls to node h1's agent take 30 ms in and 10 ms back:
    the round trip says nothing of the split, so the offset is taken 10 ms
    off the truth (0, one kernel), within half the round trip (20 ms); h1's
    record times move with it, and the one-way delay measured across the
    nodes is 10 ms off, within the sum of the two nodes' bounds."""
    start_nodes = network.NetworkHosts.start_nodes

    def skewed(self, domain, cores):
        self.set_delay("n1", "upstream", 30)
        self.set_delay("n1", "downstream", 10)
        return start_nodes(self, domain, cores)

    monkeypatch.setattr(network.NetworkHosts, "start_nodes", skewed)
    spec = load_spec(write_spec(ONE_WAY))
    spec = spec.with_network({"delay_ms": DELAY_MS}, where="--link-delay")
    result = run_spec(spec)
    clocks = {n.name: n.clock for n in result.nodes}
    h1 = clocks["h1"].start
    assert 40 <= h1.rtt_ms < 70 and 20 <= h1.bound_ms < 35
    assert 5 <= h1.offset_ms <= 15  # (30 - 10) / 2 off the truth
    assert abs(h1.offset_ms) <= h1.bound_ms
    assert abs(clocks["h0"].start.offset_ms) < 5
    error = _one_way(result) - DELAY_MS
    assert -15 <= error <= -5  # the sink's times moved 10 ms early with h1's offset
    assert abs(error) <= clocks["h0"].error_bound_ms + clocks["h1"].error_bound_ms

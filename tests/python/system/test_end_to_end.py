"""Every policy end to end over real processes and real omniORB, few packets."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, pipeline_toml, run_processes, scabench

from scabench.model.load import load_spec
from scabench.report.results_file import write_json
from scabench.run.processes import owner_tag, shm_rings
from scabench.run.results import RunResult
from scabench.run.runner import run_spec

PACKETS = 20


def run(write_spec, **kwargs):
    kwargs.setdefault("packets", PACKETS)
    return run_spec(load_spec(write_spec(pipeline_toml(**kwargs))))


def assert_all_delivered(result):
    packets = result.spec["components"][0]["properties"]["packets"]
    assert result.status == "ok"
    assert result.producer.sent == packets
    for stage in result.stages:
        assert stage.received == packets, stage


def assert_in_order(result):
    for stage in result.stages:
        assert stage.reordered_from_previous == 0, stage
        assert stage.reordered_from_original == 0, stage


POLICIES = [
    ('call = "twoway"', "twoway"),
    ('call = "twoway"\nworker = 4', "twoway-worker"),
    ('call = "twoway"\ndispatch = "serial"', "twoway-serial"),
    ('call = "oneway"\nsync = "none"', "oneway-none"),
    ('call = "oneway"\nsync = "transport"', "oneway-transport"),
    ('call = "oneway"\nsync = "server"', "oneway-server"),
    ('call = "oneway"\nsync = "target"', "oneway-target"),
    ('call = "oneway"\ndispatch = "pool:2"', "oneway-pool2"),
    ('call = "oneway"\ndispatch = "single"', "oneway-single"),
    ('call = "oneway"\nworker = true', "oneway-worker"),
]


@pytest.mark.parametrize("policy", [p for p, _ in POLICIES], ids=[i for _, i in POLICIES])
def test_every_policy_delivers_every_packet(write_spec, policy, transport):
    result = run(write_spec, policy=policy, transport=transport)
    assert_all_delivered(result)
    assert {c["transport"] for c in result.spec["connections"]} == {transport}


@pytest.mark.parametrize("transport", ["tcp", "unix", "shm"])
def test_every_transport(write_spec, transport):
    result = run(write_spec, policy='call = "oneway"', run=f'transport = "{transport}"')
    assert_all_delivered(result)
    assert result.spec["transport"] == transport
    # Every hop, and every host, says what it used; shm's control plane is unix sockets.
    assert [c["transport"] for c in result.spec["connections"]] == [transport] * 3
    endpoint = "tcp" if transport == "tcp" else "unix"
    for host in result.hosts:
        assert host["transport"] == endpoint
        assert f"giop:{endpoint}:" in " ".join(host["orb_options"])
        assert set(host["hops"]["in"].values()) | set(host["hops"]["out"].values()) == {transport}
    by_name = {h["components"][0]: h for h in result.hosts}
    assert by_name["stage1"]["hops"] == {
        "in": {"producer.out->stage1.in": transport},
        "out": {"stage1.out->stage2.in": transport},
    }


def test_the_run_command_and_a_sweep_point_carry_hops_over_the_transport_asked_for(write_spec, tmp_path):
    # The spec says tcp; --transport (and a sweep's run.transport) override it.
    path = write_spec(pipeline_toml(packets=4, stages=2, work_us=200, transport="tcp"))
    proc = scabench("run", path, "--transport", "shm", "--json", tmp_path / "r.json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["spec"]["transport"] == "shm"
    assert {c["transport"] for c in doc["spec"]["connections"]} == {"shm"}
    assert doc["stages"][-1]["received"] == 4
    from scabench.measure.sweep import apply

    spec = apply(load_spec(path), {"run.transport": "unix"})
    assert {c["transport"] for c in spec.describe()["connections"]} == {"unix"}


QUIET = ["-ORBmaxServerThreadPerConnection", "1", "-ORBconnectionWatchPeriod", "3600000000"]


def runs_quiet(host):
    options = host["orb_options"]
    return any(options[i : i + len(QUIET)] == QUIET for i in range(len(options)))


@pytest.mark.parametrize(
    "policy, quiet_stages",
    [
        ('call = "twoway"', True),
        ('call = "oneway"\nsync = "target"', True),
        ('call = "oneway"\ndispatch = "serial"', True),
        ('call = "oneway"', False),
        ('call = "oneway"\ndispatch = "pool:2"', False),
        ('call = "oneway"\ndispatch = "single"', False),
    ],
)
def test_omniorb_watches_only_connections_that_threads_may_share(write_spec, policy, quiet_stages):
    # One thread per connection and no watching thread where no connection
    # in can have two calls at once (docs/findings/hop-cost.md); the producer
    # receives only flow-control signals. Every host's options are in the result.
    result = run(write_spec, policy=policy, packets=6)
    assert_all_delivered(result)
    by_name = {h["components"][0]: h for h in result.hosts}
    assert runs_quiet(by_name["producer"])
    for stage in ("stage1", "stage2", "stage3"):
        assert runs_quiet(by_name[stage]) == quiet_stages, by_name[stage]["orb_options"]


def test_a_host_whose_hops_in_are_all_shared_memory_runs_without_connection_watching(write_spec):
    # No packet of a shared-memory hop reaches the receiving ORB, whatever
    # the dispatch: only control calls do, one at a time.
    result = run(write_spec, policy='call = "oneway"\ndispatch = "pool:2"', packets=6, transport="shm")
    assert_all_delivered(result)
    assert all(runs_quiet(h) for h in result.hosts)


@pytest.mark.parametrize(
    "policy",
    [
        'call = "twoway"',
        'call = "twoway"\nworker = 2',
        'call = "oneway"\ndispatch = "serial"',
        'call = "oneway"\ndispatch = "serial"\nworker = 2',
        'call = "oneway"\ndispatch = "single"',
    ],
)
def test_two_way_and_serial_dispatch_never_reorder(write_spec, policy, transport):
    # A no-wait producer and work on the ORB thread: the set-up that makes a
    # multi-threaded ORB reorder.
    result = run(write_spec, policy=policy, work_us=2000, transport=transport)
    assert_all_delivered(result)
    assert_in_order(result)
    assert max(s.max_server_threads for s in result.stages) == 1 or "twoway" in policy


def test_two_way_without_worker_holds_one_packet_in_the_pipeline(write_spec, transport):
    # The empty pipeline: each send returns only after all three stages ran.
    result = run(write_spec, policy='call = "twoway"', work="sleep", work_us=10_000, transport=transport)
    assert result.producer.send_us["min"] >= 3 * 10_000


def test_oneway_target_waits_for_the_servant_and_transport_does_not(write_spec, transport):
    target = run(
        write_spec,
        policy='call = "oneway"\nsync = "target"',
        work="sleep",
        work_us=20_000,
        stages=1,
        transport=transport,
    )
    assert target.producer.send_us["min"] >= 20_000
    sent = run(
        write_spec,
        policy='call = "oneway"\nsync = "transport"',
        work="sleep",
        work_us=20_000,
        stages=1,
        packets=4,
        transport=transport,
    )
    assert sent.producer.send_us["p50"] < 20_000


def test_oneway_server_waits_for_the_server_to_read_the_packet(write_spec, transport):
    # The server has read a packet once a thread of it took the packet off
    # the connection; with one thread per connection (serial), that is only
    # once the upcall before it returned, so every send after the first waits
    # for the packet before it to be done.
    serial = run(
        write_spec,
        policy='call = "oneway"\nsync = "server"\ndispatch = "serial"',
        work="sleep",
        work_us=20_000,
        stages=1,
        packets=6,
        transport=transport,
    )
    assert_all_delivered(serial)
    assert sorted(serial.producer.send_us_all)[1] >= 15_000
    pool = run(
        write_spec,
        policy='call = "oneway"\nsync = "server"',
        work="sleep",
        work_us=20_000,
        stages=1,
        packets=6,
        transport=transport,
    )
    assert_all_delivered(pool)


def test_collocated_oneway_behaves_as_two_way(write_spec):
    # The paper's section 4.1: in one process the oneway is a direct call.
    result = run(
        write_spec,
        policy='call = "oneway"',
        work="sleep",
        work_us=10_000,
        placement='hosts = [["producer", "stage1", "stage2", "stage3"]]',
    )
    assert_all_delivered(result)
    assert_in_order(result)
    assert result.spec["connections"][0]["placement"] == "collocated"
    assert result.producer.send_us["min"] >= 3 * 10_000


def test_collocated_worker_threads_keep_stages_parallel(write_spec):
    result = run(
        write_spec,
        policy='call = "oneway"\nworker = true',
        work="sleep",
        work_us=20_000,
        placement='hosts = [["producer", "stage1", "stage2", "stage3"]]',
    )
    assert_all_delivered(result)
    serial_ms = PACKETS * 3 * 20
    # Pipelined it needs about (PACKETS + 2) x 20 ms; one packet at a time, 1200 ms.
    assert result.stages[-1].last_packet_ms < 0.75 * serial_ms


def test_single_core_run_and_pinning(write_spec, transport):
    result = run(write_spec, policy='call = "twoway"\nworker = 4', run="cores = [0]\npin = true", transport=transport)
    assert_all_delivered(result)
    assert result.spec["cores"] == [0]
    assert all(h["cores"] == [0] for h in result.hosts)


def test_result_json_has_the_keys_other_work_reads(write_spec, tmp_path):
    out = tmp_path / "result.json"
    proc = scabench("run", write_spec(pipeline_toml(packets=PACKETS)), "--json", out, "--packets", 12)
    assert proc.returncode == 0, proc.stderr
    assert "last packet" in proc.stdout and "floor: " in proc.stdout  # the table and its legend
    result = json.loads(out.read_text())
    for key in (
        "scabench",
        "floor_ms",
        "overhead_ratio",
        "foreign_cpu_pct",
        "stages",
        "producer",
        "spec",
        "environment",
    ):
        assert key in result
    assert [s["name"] for s in result["stages"]] == ["stage1", "stage2", "stage3"]
    for s in result["stages"]:
        for key in ("name", "last_packet_ms", "received", "reordered_from_previous", "reordered_from_original"):
            assert key in s
        assert s["received"] == 12
    assert set(result["producer"]["send_us"]) >= {"min", "p50", "p90", "p99", "max"}
    assert "last_sent_ms" in result["producer"]
    assert result["producer"]["send_share_under_us"]["10000"] <= 100.0
    env = result["environment"]
    assert env["omniorb_version"] and env["kernel"] and env["cpu_model"] and env["cores"]
    assert_reads_back(out, tmp_path)


def assert_reads_back(path, tmp_path):
    """A result file reads back as a RunResult that writes the same bytes
    (what --from-results does with a study's kept runs)."""
    again = write_json(RunResult.from_dict(json.loads(path.read_text())), tmp_path / "again.json")
    assert again.read_bytes() == path.read_bytes()


def test_a_stage_killed_mid_run_is_named_and_nothing_is_left(write_spec, tmp_path, transport):
    spec = write_spec(
        pipeline_toml(
            packets=500, policy='call = "twoway"\nworker = 4', work="sleep", work_us=10_000, transport=transport
        )
    )
    out = tmp_path / "failed.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec), "--json", str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    tag = owner_tag(proc.pid)  # what its processes and rings are tagged with
    victim, run_dir = None, None
    deadline = time.time() + 30
    while victim is None and time.time() < deadline:
        for pid, cmd in run_processes("--component stage2:stage", root=proc.pid):
            victim, run_dir = pid, cmd.split("--record-dir ")[1].split()[0]
        time.sleep(0.05)
    assert victim, "stage2's host never started"
    time.sleep(1.0)  # well into the run: 500 packets take over 5 s
    os.kill(victim, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "stage2" in stderr and "killed by signal 9" in stderr and "Traceback" not in stderr
    assert "the last was #" in stderr
    result = json.loads(out.read_text())
    assert result["status"] == "failed" and result["failed_component"] == "stage2"
    assert_reads_back(out, tmp_path)
    assert run_processes(run_dir) == []
    # A ring's name goes as soon as both ends have it mapped: none is left.
    assert shm_rings(tag) == {}


def test_a_component_that_cannot_start_is_named(write_spec):
    text = pipeline_toml(packets=5).replace('work = "cpu"', 'work = "cpu"', 1)
    path = write_spec(text)
    spec = load_spec(path)
    spec.component("stage2").properties["work"] = "spin"  # only the runtime can refuse this one
    from scabench.errors import RunError

    with pytest.raises(RunError) as err:
        run_spec(spec)
    assert err.value.component == "stage2"
    assert "spin" in str(err.value) and "none, cpu, sleep" in str(err.value)
    partial = err.value.result  # what the run had when it failed: no figures
    assert isinstance(partial, RunResult) and partial.status == "failed" and partial.failed_component == "stage2"
    assert not partial.analysed and partial.hosts


SCHED_BATCH = 3


def _policies(pid):
    """The scheduling policy of every thread of a process (stat field 41)."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out.append(int((task / "stat").read_text().rsplit(")", 1)[1].split()[38]))
        except (OSError, IndexError, ValueError):
            pass
    return out


def test_batch_scheduler_reaches_every_host_thread(write_spec):
    spec = load_spec(
        write_spec(
            pipeline_toml(packets=30, work="sleep", work_us=5000, policy="worker = 4", run='scheduler = "batch"')
        )
    )
    seen = {}
    result = run_spec(spec, on_start=lambda pids, names: seen.update({p: _policies(p) for p in pids}))
    assert result.spec["scheduler"] == "batch"
    assert len(seen) == 4
    for policies in seen.values():
        # ORB threads, the worker and the releaser: all of them
        assert len(policies) > 1 and set(policies) == {SCHED_BATCH}
    spec = spec.with_scheduler("normal", where="--scheduler")
    seen.clear()
    run_spec(spec, on_start=lambda pids, names: seen.update({p: _policies(p) for p in pids}))
    assert all(SCHED_BATCH not in policies for policies in seen.values())

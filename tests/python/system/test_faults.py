"""Faults in the middle of a run: signals to the command, a killed command,
stopped or hung processes, stalls. Each must be named, stop every process
of the run and keep what was measured (docs/architecture.md, "Faults")."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, pipeline_toml, run_processes

from scabench.errors import RunError
from scabench.measure.guard import Guard, GuardSettings
from scabench.model.load import load_spec
from scabench.report.tables import format_run
from scabench.run import processes
from scabench.run.records import HEADER
from scabench.run.runner import run_spec
from scabench.run.stalls import (
    STALL_MIN_MS,
    find_stalls,
    held_without_progress,
    late_starts,
    pipeline_progress_ns,
    threshold_ms,
)
from scabench.run.watchdog import Watchdog

MS = 1_000_000


# ---------------------------------------------------------------- stalls, on known data


def test_held_without_progress_counts_only_time_with_work_in_hand():
    # Packets arrive at 0, 10, 20 ms and finish at 5, 15, 25: 5 ms each with work.
    starts, lengths = held_without_progress(np.array([0, 10, 20]) * MS, np.array([5, 15, 25]) * MS)
    assert list(starts) == [0, 10 * MS, 20 * MS] and list(lengths) == [5 * MS] * 3
    # Two arrive at once; the second finishes 500 ms after the first: held all along.
    starts, lengths = held_without_progress(np.array([0, 0]) * MS, np.array([5, 505]) * MS)
    assert list(lengths) == [5 * MS, 500 * MS] and starts[1] == 5 * MS


def test_held_without_progress_ignores_order_of_arrival():
    a = np.array([30, 0, 10]) * MS
    c = np.array([12, 35, 5]) * MS
    _, lengths = held_without_progress(a, c)
    assert list(lengths) == [5 * MS, 2 * MS, 5 * MS]


def test_a_source_late_beyond_its_period_is_a_stall():
    # Sends at 0, 10, 20 ms take 1 ms; then the next starts 600 ms after the last returned.
    a = np.array([0, 10, 20, 621]) * MS
    c = np.array([1, 11, 21, 622]) * MS
    starts, lengths = late_starts(a, c, 10 * MS)
    assert list(lengths) == [-1 * MS, -1 * MS, 590 * MS] and starts[2] == 21 * MS
    found = find_stalls("producer", a, c, 0.0, 0, period_ms=10.0)
    assert found == [{"component": "producer", "at_ms": 21.0, "for_ms": 590.0, "threshold_ms": STALL_MIN_MS}]


def test_stall_threshold_scales_with_work_and_concurrency():
    assert threshold_ms(0.0) == STALL_MIN_MS
    assert threshold_ms(5.0) == STALL_MIN_MS  # 20 x 5 ms = 100 ms < the floor
    assert threshold_ms(50.0) == 1000.0
    assert threshold_ms(5.0, concurrency=8) == 800.0  # 8 packets sharing a core finish together
    a = np.array([0, 0]) * MS
    assert find_stalls("s", a, np.array([5, 505]) * MS, 5.0, 0) != []
    assert find_stalls("s", a, np.array([5, 505]) * MS, 5.0, 0, concurrency=8) == []
    assert find_stalls("s", a, np.array([5, 200]) * MS, 5.0, 0) == []


def test_a_wait_while_the_rest_of_the_pipeline_progresses_is_flow_control_not_a_stall():
    # A source's send blocks 500 ms (a full worker queue draining to its
    # resume level) while the next stage finishes a packet every 5 ms.
    a = np.array([0, 1, 501]) * MS
    c = np.array([1, 501, 502]) * MS
    downstream = np.arange(2, 600, 5) * MS
    assert find_stalls("producer", a, c, 0.0, 0, period_ms=0.0) != []  # judged alone
    assert find_stalls("producer", a, c, 0.0, 0, period_ms=0.0, progress_ns=downstream) == []
    # The stage stops finishing after 97 ms: from then until the send
    # returns at 501 ms nothing moved anywhere, and that is the stall.
    stopped = downstream[downstream < 100 * MS]
    [found] = find_stalls("producer", a, c, 0.0, 0, period_ms=0.0, progress_ns=stopped)
    assert found["at_ms"] == 97.0 and found["for_ms"] == 404.0


def test_the_pipelines_progress_is_every_components_completions_in_time_order():
    # Two components' completions, each in its own (record) order, and one
    # that finished nothing: one sorted array, as the stall rule reads it.
    stage = np.array([502, 2, 7]) * MS
    producer = np.array([1, 501]) * MS
    progress = pipeline_progress_ns([stage, producer, np.empty(0, np.int64)])
    assert progress.dtype == np.int64 and progress.tolist() == [1 * MS, 2 * MS, 7 * MS, 501 * MS, 502 * MS]
    assert pipeline_progress_ns([]).size == 0
    # The stage's gap from 7 to 501 ms is the producer's stall: nothing moved.
    a = np.array([0, 1, 501]) * MS
    c = np.array([1, 501, 502]) * MS
    [found] = find_stalls("producer", a, c, 0.0, 0, period_ms=0.0, progress_ns=progress)
    assert found["at_ms"] == 7.0 and found["for_ms"] == 494.0


def test_the_guard_redoes_a_flawed_measurement_and_keeps_an_unflawed_one():
    values = iter([{"stalled": True, "foreign": 0.0}, {"stalled": False, "foreign": 2.0}])
    guard = Guard(GuardSettings(quiet_wait_s=0, max_redos=3))
    kept = guard.measure(
        lambda: next(values), foreign_of=lambda v: v["foreign"], flaw_of=lambda v: "stalled" if v["stalled"] else None
    )
    assert kept.value["stalled"] is False and kept.attempts == 2 and kept.flaw is None
    # Every attempt flawed: the last one allowed is kept, and says so.
    guard = Guard(GuardSettings(quiet_wait_s=0, max_redos=1))
    kept = guard.measure(lambda: {"stalled": True}, foreign_of=lambda v: 0.0, flaw_of=lambda v: "stalled")
    assert kept.attempts == 2 and kept.flaw == "stalled"


# ---------------------------------------------------------------- the watchdog, on real processes


def _fake_records(run_dir, counts):
    for name, (claimed, completed) in counts.items():
        header = np.zeros(1, dtype=HEADER)
        header["magic"], header["claimed"], header["completed"] = b"SCABREC2", claimed, completed
        header.tofile(run_dir / f"{name}.rec")


def test_the_watchdog_ends_a_run_in_which_no_packet_moves(tmp_path):
    launcher = processes.spawn(["sleep", "60"])
    _fake_records(tmp_path, {"producer": (5, 4), "stage1": (3, 3), "stage2": (4, 3)})
    started = time.monotonic()
    with Watchdog(
        launcher, tmp_path, hang_limit_s=1.0, order=["producer", "stage1", "stage2"], packets={"producer": 10}
    ) as dog:
        launcher.wait(20)
    assert time.monotonic() - started < 10
    component, reason = dog.fault
    assert component == "stage2" and "holds a packet it does not finish" in reason and "producer" in reason


def test_the_watchdog_leaves_a_drained_stream_alone(tmp_path):
    launcher = processes.spawn(["sleep", "60"])
    _fake_records(tmp_path, {"producer": (10, 10), "stage1": (10, 10)})
    try:
        with Watchdog(launcher, tmp_path, hang_limit_s=0.5, packets={"producer": 10}) as dog:
            time.sleep(1.5)
        assert dog.fault is None and launcher.poll() is None
    finally:
        processes.stop(launcher)


def test_the_watchdog_names_a_stopped_launcher(tmp_path):
    launcher = processes.spawn(["sleep", "60"])
    os.kill(launcher.pid, signal.SIGSTOP)
    with Watchdog(launcher, tmp_path, hang_limit_s=60, stopped_limit_s=1.0) as dog:
        launcher.wait(20)
    assert dog.fault and "scabench-launch" in dog.fault[1] and "stopped" in dog.fault[1]


# ---------------------------------------------------------------- runs over real processes


def _spec(write_spec, **kwargs):
    kwargs.setdefault("policy", 'call = "twoway"\nworker = 4')
    return load_spec(write_spec(pipeline_toml(**kwargs)))


def _voluntary_switches(pid):
    """A process's voluntary context switches, summed over its threads
    (/proc/PID/status counts the main thread's alone)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "status").read_text()
        except OSError:  # a thread that ended meanwhile
            continue
        total += next(int(line.split()[1]) for line in text.splitlines() if line.startswith("voluntary_ctxt_switches"))
    return total


def test_a_stage_stopped_and_resumed_is_flagged_as_a_stall(write_spec):
    spec = _spec(write_spec, packets=150, work="sleep", work_us=5000)
    # stage2 the slowest: its worker queue stays full, so it holds work
    # whenever it is stopped (its own records say when a packet arrived,
    # and a process stopped between packets has none).
    spec = spec.with_properties("stage1", {"work_us": 1000}, where="--set")

    def pause_stage2(pids, names):
        victim = pids[names.index(next(n for n in names if n.endswith("stage2")))]
        # Stopped once it is working (each packet's sleep is a switch), not
        # at a fixed time: on a loaded machine stage2 may not have a packet
        # yet, and then it is the others that hold work and stand still.
        switches_at_start = _voluntary_switches(victim)
        deadline = time.monotonic() + 10
        while _voluntary_switches(victim) < switches_at_start + 10 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(victim, signal.SIGSTOP)
        time.sleep(1.5)
        os.kill(victim, signal.SIGCONT)

    result = run_spec(spec, on_start=pause_stage2)
    assert result.status == "ok" and result.stalled is True
    stalled = {s["component"] for s in result.stalls}
    assert "stage2" in stalled
    worst = max((s for s in result.stalls if s["component"] == "stage2"), key=lambda s: s["for_ms"])
    assert 1200 <= worst["for_ms"] <= 3000
    # Nothing else went wrong: every packet, in order.
    assert all(s.received == 150 and s.reordered_from_original == 0 for s in result.stages)
    assert "STALLED: stage2" in format_run(result)


def test_an_undisturbed_run_has_no_stall(write_spec):
    result = run_spec(_spec(write_spec, packets=30, work="sleep", work_us=2000))
    assert result.stalled is False and result.stalls == []
    assert "STALLED" not in format_run(result)


def test_a_stage_stopped_for_good_is_named_within_seconds(write_spec):
    spec = _spec(write_spec, packets=400, work="sleep", work_us=5000)
    stopped_at = {}

    def stop_stage3(pids, names):
        victim = pids[names.index(next(n for n in names if n.endswith("stage3")))]
        os.kill(victim, signal.SIGSTOP)
        stopped_at["t"] = time.monotonic()

    with pytest.raises(RunError) as err:
        run_spec(spec, on_start=stop_stage3)
    assert time.monotonic() - stopped_at["t"] < 10
    assert err.value.component == "stage3" and "stopped" in str(err.value)
    partial = err.value.result
    assert partial.status == "failed" and partial.stages  # what it measured is kept
    assert partial.overhead_ratio is None and partial.as_dict()["stages"][0]["name"] == "stage1"
    # Latency over the packets each stage finished, none of those it still held.
    assert partial.stages[0].latency_in_stage_us.count <= partial.stages[0].received < 400
    e2e = partial.end_to_end_latency_us
    assert (e2e.count if e2e else 0) <= partial.stages[-1].received
    assert processes.tagged_processes(processes.owner_tag()) == {}


def test_a_stopped_launcher_is_named_and_its_hosts_go(write_spec):
    spec = _spec(write_spec, packets=400, work="sleep", work_us=5000)
    hosts = []

    def stop_launcher(pids, names):
        hosts.extend(pids)
        launcher = int(Path(f"/proc/{pids[0]}/stat").read_text().rsplit(")", 1)[1].split()[1])
        os.kill(launcher, signal.SIGSTOP)

    with pytest.raises(RunError) as err:
        run_spec(spec, on_start=stop_launcher)
    assert "scabench-launch" in str(err.value) and "stopped" in str(err.value)
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in hosts):
        time.sleep(0.05)
    assert not any(Path(f"/proc/{p}").exists() for p in hosts)


# ---------------------------------------------------------------- signals to the command


def _start_cli(write_spec, tmp_path, packets=600):
    spec = write_spec(pipeline_toml(packets=packets, policy='call = "twoway"\nworker = 4', work="sleep", work_us=5000))
    out = tmp_path / "result.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec), "--json", str(out)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 30
    while time.time() < deadline and not run_processes("--component stage3:stage", root=proc.pid):
        time.sleep(0.05)
    assert run_processes("--component stage3:stage", root=proc.pid), "the run never started"
    time.sleep(1.0)  # into the stream: 600 packets take 3 s or more
    return proc, out, processes.owner_tag(proc.pid)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_a_signal_stops_the_run_and_keeps_what_it_measured(write_spec, tmp_path, signum, code):
    proc, out, tag = _start_cli(write_spec, tmp_path)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == code, stderr
    assert f"interrupted by {signal.Signals(signum).name}" in stderr and "Traceback" not in stderr
    assert processes.tagged_processes(tag) == {}
    assert not list(Path("/tmp").glob(f"{processes.RUN_DIR_PREFIX}{tag}-*"))
    result = json.loads(out.read_text())
    assert result["status"] == "interrupted"
    received = [s["received"] for s in result["stages"]]
    assert len(received) == 3 and 0 < received[0] < 600


def test_a_killed_command_takes_its_processes_along_and_the_next_run_cleans_up(write_spec, tmp_path):
    proc, _, tag = _start_cli(write_spec, tmp_path)
    assert processes.tagged_processes(tag)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and processes.tagged_processes(tag):
        time.sleep(0.02)
    assert processes.tagged_processes(tag) == {}, "a process outlived the killed command by a second"
    left = list(Path("/tmp").glob(f"{processes.RUN_DIR_PREFIX}{tag}-*"))
    assert left, "the killed command's run directory should be there to clean up"
    removed = processes.remove_leftovers()
    assert str(left[0]) in removed and not left[0].exists()


def test_a_shared_memory_ring_a_dead_command_left_is_removed_and_a_live_ones_kept():
    # A sending port removes a ring's name once its receiver has it mapped;
    # one killed in between leaves a name tagged with its command's owner tag.
    dead = f"{processes.SHM_PREFIX}999999999.1-12-0"
    mine = f"{processes.SHM_PREFIX}{processes.owner_tag()}-12-0"
    for name in (dead, mine):
        (processes.SHM_DIR / name).write_bytes(b"")
    try:
        removed = processes.remove_leftovers()
        assert str(processes.SHM_DIR / dead) in removed and not (processes.SHM_DIR / dead).exists()
        assert (processes.SHM_DIR / mine).exists()
    finally:
        for name in (dead, mine):
            (processes.SHM_DIR / name).unlink(missing_ok=True)


def test_an_interrupted_campaign_keeps_its_runs(tmp_path):
    campaign = tmp_path / "campaign.toml"
    campaign.write_text(f'''
[measure]
runs = 3
quiet_wait_s = 0.0
max_redos = 0
[setup.two]
cores = "all"
[[config]]
id = "exp6"
spec = "{REPO}/experiments/paper/exp6.toml"
''')
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "paper",
            "--campaign",
            str(campaign),
            "--packets",
            "200",
            "--out",
            str(tmp_path / "r"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    tag = processes.owner_tag(proc.pid)
    # 200 packets of 5 ms: a run takes over a second; stop the campaign in its second or third.
    time.sleep(4.0)
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert "interrupted by SIGTERM" in stderr and "results.json" in stderr and "Traceback" not in stderr
    # A host ends on its death signal, which the kernel delivers as its
    # parent goes: allow it the second the killed-command test allows.
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and processes.tagged_processes(tag):
        time.sleep(0.02)
    assert processes.tagged_processes(tag) == {}, "a process outlived the interrupted campaign by a second"
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["status"] == "interrupted"
    entry = doc["configs"]["exp6@two"]
    assert entry["interrupted"] is True
    assert len(entry["runs"]) + len(entry["failures"]) >= 1
    assert entry["failures"][-1]["error"] == "interrupted by SIGTERM"


def test_campaigns_redo_a_stalled_or_unclean_run():
    # The guarded run of campaigns and benchmarks (measure/repeat.py).
    from scabench.measure.repeat import flaw_of as _flaw_of
    from scabench.run.results import RunResult

    base = dict(status="ok", spec={}, environment={}, floor_ms=1.0, started_at=0.0)
    assert _flaw_of(RunResult(**base, stalls=[], stalled=False, refusals=0, clean=True)) is None
    stalled = RunResult(
        **base,
        stalls=[{"component": "stage2", "at_ms": 5.0, "for_ms": 900.0, "threshold_ms": 250.0}],
        stalled=True,
        refusals=0,
        clean=True,
    )
    assert _flaw_of(stalled) == "stage2 stalled 900 ms"
    assert "refused 3" in _flaw_of(RunResult(**base, stalls=[], stalled=False, refusals=3, clean=False))
    assert _flaw_of(RunResult(**base)) is None  # a result from before these fields existed


def test_a_library_caller_gets_interrupted_while_owning_and_its_handlers_back():
    # Outside the CLI nothing installs the handlers for good: a block that
    # owns processes or namespaces takes them for its duration only.
    script = """
import os, signal
from scabench import interrupts
mine = lambda s, f: None
signal.signal(signal.SIGTERM, mine)
try:
    with interrupts.while_owning():
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()
except interrupts.Interrupted as exc:
    print("interrupted", exc.exit_code)
print("restored", signal.getsignal(signal.SIGTERM) is mine, interrupts.installed())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["interrupted 143", "restored True False"]

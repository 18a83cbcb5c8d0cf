"""Network hosts: processes in namespaces of their own, behind emulated links
with real delay (python/scabench/run/network.py), and `scabench link-delay`.

The end-to-end tests need root, iproute2 and the link emulator; where any is
missing they skip and say which."""

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO, pipeline_toml, run_processes, scabench

from scabench.errors import SpecError
from scabench.model.load import load_spec
from scabench.model.pipeline import floor_of
from scabench.run import network, processes
from scabench.run.runner import run_spec
from scabench.studies.link_delay.analysis import model_ms

REASON = network.unavailable_reason()
needs_network = pytest.mark.skipif(REASON is not None, reason=f"network hosts unavailable: {REASON}")


def _namespaces(pid):
    listing = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in listing.splitlines() if line.startswith(f"{network.NAME_PREFIX}{pid}-")]


def _links(pid):
    listing = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return [line for line in listing.splitlines() if f": {network.NAME_PREFIX}{pid}h" in line]


def _emulators():
    found = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if b"toxiproxy" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.add(int(pid))
            except OSError:
                pass
    return found


# ------------------------------------------------------------ spec and model


def test_network_table_is_checked(write_spec):
    base = pipeline_toml(packets=5)
    for extra, key, words in (
        ("[network]\ndelay = 3\n", "network.delay", "valid: delay_ms, jitter_ms"),
        ("[network]\ndelay_ms = 2.5\n", "network.delay_ms", "whole number of milliseconds"),
        ("[network]\ndelay_ms = -1\n", "network.delay_ms", "from 0 to 10000"),
        ("[network]\ndelay_ms = 2\njitter_ms = 3\n", "network.jitter_ms", "must not exceed"),
    ):
        with pytest.raises(SpecError) as err:
            load_spec(write_spec(base + extra))
        assert key in str(err.value) and words in str(err.value)
    unix = pipeline_toml(packets=5, run='transport = "unix"') + "[network]\ndelay_ms = 2\n"
    with pytest.raises(SpecError) as err:
        load_spec(write_spec(unix))
    assert "run.transport" in str(err.value) and "tcp" in str(err.value)


def test_link_delay_option_is_checked_like_the_table(write_spec):
    spec = write_spec(pipeline_toml(packets=5, run='transport = "unix"'))
    out = scabench("run", spec, "--link-delay", "2")
    # The flag that made the network hosts is named, with the spec's transport it clashes with.
    assert out.returncode == 2 and "--link-delay: network hosts talk over tcp; 'unix' cannot cross" in out.stderr
    assert "Traceback" not in out.stderr
    out = scabench("run", write_spec(pipeline_toml(packets=5)), "--link-delay", "2", "--link-jitter", "5")
    assert out.returncode == 2 and "jitter_ms" in out.stderr and "must not exceed" in out.stderr


def test_floor_carries_the_last_packets_link_delay(write_spec):
    # 1 core, 3 stages of 1 ms, 20 packets: the CPU bound 60 ms beats the
    # pipeline bound 19 + 3 = 22 ms; with 20 ms links the pipeline bound is
    # 22 + 3 hops x 20 ms = 82 ms.
    spec = load_spec(write_spec(pipeline_toml(packets=20, run="cores = [0]")))
    assert floor_of(spec) == pytest.approx(60.0)
    spec = spec.with_network({"delay_ms": 20}, where="--link-delay")
    assert floor_of(spec) == pytest.approx(82.0)
    spec = spec.with_collocated(where="--collocated")  # one process: no link to cross
    assert floor_of(spec) == pytest.approx(60.0)


def test_models_of_the_two_strategies():
    # The paper's pipeline on 2 cores: 7.5 ms a packet at best.
    work = [5.0, 5.0, 5.0]
    assert model_ms("credits", 1000, work, 2, 0, credits=32) == pytest.approx((999 * 7.5 + 15,) * 2)
    assert model_ms("twoway-worker", 1000, work, 2, 0) == pytest.approx((999 * 7.5 + 15,) * 2)
    # 10 ms links: stop-and-wait at 5 (stages take turns) to 7.5 (all compute
    # at once) + 2 x 10 ms a packet; credits keep 7.5 ms.
    assert model_ms("twoway-worker", 1000, work, 2, 10) == pytest.approx((999 * 25 + 45, 999 * 27.5 + 45))
    assert model_ms("credits", 1000, work, 2, 10, credits=32) == pytest.approx((999 * 7.5 + 45,) * 2)
    # A window too small for the round trip limits credits too: (2 x 10 + 5) / (4 - 1) ms.
    assert model_ms("credits", 100, work, 2, 10, credits=4) == pytest.approx((99 * 25 / 3 + 45,) * 2)
    # Enough cores for every stage: no sharing, so both ends of the range agree.
    assert model_ms("twoway-worker", 10, work, 4, 2) == pytest.approx((9 * 9 + 21,) * 2)


def test_missing_emulator_is_said_clearly(monkeypatch, write_spec):
    monkeypatch.setattr(network, "toxiproxy_binary", lambda: None)
    monkeypatch.setattr(network, "_reason_cache", {})
    if os.geteuid() != 0:
        pytest.skip("not root: the reason given is the missing privilege")
    reason = network.unavailable_reason()
    assert "toxiproxy-server is not installed" in reason and "scripts/setup.sh" in reason
    spec = load_spec(write_spec(pipeline_toml(packets=5) + "[network]\ndelay_ms = 1\n"))
    # Refused as bad input before any process starts, naming the spec.
    with pytest.raises(SpecError) as err:
        run_spec(spec)
    assert "toxiproxy-server is not installed" in str(err.value) and "spec.toml: network" in str(err.value)


# ------------------------------------------------------------- end to end


@needs_network
def test_two_way_across_hosts_pays_the_round_trip_and_keeps_order(write_spec):
    spec = load_spec(write_spec(pipeline_toml(packets=20, policy='call = "twoway"\nworker = 8')))
    spec = spec.with_network({"delay_ms": 5}, where="--link-delay")
    before = _emulators()
    result = run_spec(spec)
    assert [s.received for s in result.stages] == [20, 20, 20]
    assert all(s.reordered_from_original == 0 for s in result.stages)
    # Every two-way send crosses the producer's link out and back: >= 2 x 5 ms.
    assert result.producer.send_us["min"] >= 10_000
    hosts = result.network.hosts
    assert len(hosts) == 4 and len({h["netns"] for h in hosts}) == 4 and len({h["address"] for h in hosts}) == 4
    assert result.network.link == {"delay_ms": 5, "jitter_ms": 0}
    assert result.network.emulator_cpu_s >= 0
    assert _namespaces(os.getpid()) == [] and _links(os.getpid()) == []
    assert _emulators() - before == set()


@needs_network
def test_credits_across_hosts_keep_order_and_nothing_is_lost(write_spec):
    policy = '''call = "oneway"
    ordering = "resequence"
    reorder_capacity = 16
    reorder_timeout_ms = 200
    flow = "credits(8)"'''
    spec = load_spec(write_spec(pipeline_toml(packets=60, policy=policy)))
    spec = spec.with_network({"delay_ms": 3, "jitter_ms": 1}, where="--link-delay")
    result = run_spec(spec)
    for s in result.stages:
        assert s.received == 60 and s.output_reordered_from_previous == 0
        assert s.skipped == 0 and s.held_peak <= 16 + 8
    assert _namespaces(os.getpid()) == []


@needs_network
def test_a_stage_killed_across_hosts_is_named_and_the_network_removed(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=500, policy='call = "twoway"\nworker = 4', work="sleep", work_us=10_000))
    before = _emulators()
    proc = _start_networked_run(spec)
    victim = _wait_for_host(proc, "COMPONENT stage2:stage")
    assert _namespaces(proc.pid), "the run made no namespaces"
    time.sleep(1.0)
    os.kill(victim, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "stage2" in stderr and "Traceback" not in stderr
    assert _namespaces(proc.pid) == [] and _links(proc.pid) == []
    assert _emulators() - before == set()


@needs_network
def test_a_terminated_run_removes_its_network(write_spec):
    spec = write_spec(pipeline_toml(packets=500, work="sleep", work_us=10_000, policy='call = "twoway"'))
    before = _emulators()
    proc = _start_networked_run(spec)
    host = _wait_for_host(proc, "COMPONENT stage3:stage")
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert _namespaces(proc.pid) == [] and _links(proc.pid) == []
    assert _emulators() - before == set()
    deadline = time.time() + 10
    while time.time() < deadline and Path(f"/proc/{host}").exists():
        time.sleep(0.05)
    assert not Path(f"/proc/{host}").exists(), "a host outlived its run"


@needs_network
def test_a_killed_command_takes_its_emulator_along_and_the_next_run_removes_its_network(write_spec):
    spec = write_spec(pipeline_toml(packets=500, work="sleep", work_us=10_000, policy='call = "twoway"'))
    before = _emulators()
    proc = _start_networked_run(spec)
    tag = processes.owner_tag(proc.pid)
    _wait_for_host(proc, "COMPONENT stage3:stage")
    time.sleep(0.5)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and (processes.tagged_processes(tag) or _emulators() - before):
        time.sleep(0.02)
    assert processes.tagged_processes(tag) == {} and _emulators() - before == set()
    assert _namespaces(proc.pid), "SIGKILL leaves the namespaces for the next run to remove"
    processes.remove_leftovers()
    network.remove_stale()
    assert _namespaces(proc.pid) == [] and _links(proc.pid) == []


@needs_network
def test_what_a_dead_run_left_is_removed():
    dead = _a_dead_pid()
    name = f"{network.NAME_PREFIX}{dead}-h0"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        assert name in network.remove_stale()
        assert _namespaces(dead) == []
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


@needs_network
def test_link_delay_command_reports_both_strategies(tmp_path):
    campaign = tmp_path / "campaign.toml"
    text = (REPO / "experiments" / "ordering" / "link-delay.toml").read_text()
    text = text.replace('spec = "../paper/exp6.toml"', f'spec = "{REPO}/experiments/paper/exp6.toml"')
    text = text.replace(
        'spec = "oneway-resequence-credits.toml"',
        f'spec = "{REPO}/experiments/ordering/oneway-resequence-credits.toml"',
    )
    # Keep two rows: the 10 ms ones.
    blocks = text.split("[[config]]")
    text = blocks[0] + "".join("[[config]]" + b for b in blocks[1:] if "10ms" in b)
    text = text.replace("quiet_wait_s = 120.0", "quiet_wait_s = 0.0").replace("max_redos = 3", "max_redos = 0")
    campaign.write_text(text)
    out = scabench(
        "link-delay",
        "--campaign",
        campaign,
        "--packets",
        "12",
        "--runs",
        "1",
        "--out",
        tmp_path / "r",
        "--json",
        tmp_path / "ld.json",
        "--csv",
        tmp_path / "ld.csv",
    )
    assert out.returncode == 0, out.stderr
    # Each run's progress line: its end-to-end latency p99, scaled, beside its ratio.
    assert re.search(r"run 1/1: last packet [\d.]+ (ms|s), ratio [\d.]+, latency p99 [\d.]+ (µs|ms|s)", out.stderr)
    assert (tmp_path / "ld.json").read_text() == (tmp_path / "r" / "results.json").read_text()
    with open(tmp_path / "ld.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["strategy"] for r in rows) == ["credits", "twoway-worker"]
    for r in rows:
        assert r["delay_ms"] == "10" and r["runs"] == "1" and r["output_reordered_max"] == "0"
        assert float(r["latency_p99_ms_median"]) >= 30 and 0 < float(r["model_best_ms"]) <= float(r["model_worst_ms"])
    assert "two-way + worker: ratio" in out.stdout and "credits" in out.stdout
    assert next(line for line in out.stdout.splitlines() if line.startswith("10 ms"))
    doc = json.loads((tmp_path / "r" / "results.json").read_text())
    assert doc["status"] == "complete" and len(doc["configs"]) == 2
    for entry in doc["configs"].values():
        assert entry["runs"][0]["network"]["link"]["delay_ms"] == 10
        assert 0 < entry["model_ms"][0] <= entry["model_ms"][1]
    md = (tmp_path / "r" / "report.md").read_text()
    assert "with the emulator's CPU" in md
    # Latency beside the ratio, and its histogram: a packet crosses 3 links of 10 ms at least.
    for strategy in ("two-way + worker", "one-way + resequence + credits"):
        row = re.search(rf"\| 10 ms per hop \| {re.escape(strategy)} \| 1 \| ([\d.]+) (ms|s) \|", md)
        assert row and float(row.group(1)) * (1000 if row.group(2) == "s" else 1) >= 30, strategy
    assert "![latency per packet by link delay](link-delay-latency.png)" in md
    html = (tmp_path / "r" / "report.html").read_text()
    assert "two-way + worker" in html and "data:image/png;base64," in html


def _start_networked_run(spec):
    """`scabench run SPEC --link-delay 1` in a process of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec), "--link-delay", "1"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_host(proc, marker):
    deadline = time.time() + 30
    while time.time() < deadline:
        found = run_processes(marker, root=proc.pid)
        if found:
            return found[0][0]
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"no host with {marker!r} started")


def _a_dead_pid():
    pid = 4_000_000
    while Path(f"/proc/{pid}").exists():
        pid += 1
    return pid

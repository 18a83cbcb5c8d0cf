"""`scabench top` over CORBA: a run bound in a Naming Service of the test's
own is read while it goes on (every port's BulkIO statistics), and a held
run's components after their stream; and the library's watch() reads the
same figures."""

import re
import subprocess
import sys
import time

from conftest import REPO, pipeline_toml, scabench
from py_components_world import orb, start_naming  # noqa: F401 (the fixtures)

from scabench import watch

PACKETS = 250


def _top_line(context, corbaloc):
    proc = scabench("top", context, "--naming", corbaloc, "--samples", "1", timeout=60)
    assert proc.returncode == 0, proc.stderr
    (line,) = [line for line in proc.stdout.splitlines() if " watching " in line]
    return line


def _done(line, component):
    return int(re.search(rf"{component}: done (\d+) ", line).group(1))


def test_top_reads_a_running_waveform_in_its_naming_service(write_spec, start_naming):
    domain = start_naming("domain")
    corbaloc = f"corbaloc::127.0.0.1:{domain.port}/NameService"
    # 250 packets 20 ms apart: 5 s of stream, read while it goes on.
    spec = write_spec(
        pipeline_toml(packets=PACKETS, work_us=500, period_us=20000, stages=2) + f'[domain]\nnaming = "{corbaloc}"\n'
    )
    run = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = []
        deadline = time.monotonic() + 60
        while run.poll() is None and time.monotonic() < deadline:
            proc = scabench("top", "spec_1", "--naming", corbaloc, "--samples", "1", timeout=60)
            # The waveform's context is bound before its components are: a
            # sample taken in between truthfully shows none yet.
            if proc.returncode == 0 and "stage2:" in proc.stdout:
                seen.append(_done(proc.stdout, "stage2"))
                if 0 < seen[-1] < PACKETS:
                    break
            time.sleep(0.2)
        assert seen and 0 < seen[-1] < PACKETS, seen  # read while packets still flowed
        watcher = watch("spec_1", naming=corbaloc)
        first = watcher.sample().component("stage1")
        time.sleep(0.1)
        sample = watcher.sample()
        stage1 = sample.component("stage1")
        assert stage1.taken >= seen[-1] and stage1.packets_per_s > 0 and stage1.refused == 0
        # The depths and the process, from the statistics' keywords: no worker
        # queue or reorder buffer here, so nothing held in either.
        assert (stage1.queued, stage1.reorder_held) == (0, 0)
        assert stage1.pid == first.pid and stage1.pid != sample.component("stage2").pid
        assert stage1.threads_now >= 2  # the ORB's and the main thread at least
        assert first.cpu_percent is None and stage1.cpu_percent is not None and stage1.cpu_percent >= 0
        assert {c.id for c in sample.connections} == {"producer.out->stage1.in", "stage1.out->stage2.in"}
        # Latency so far while the stream goes on: send to arrival at stage1's provides port.
        assert sample.latency_to == "arrival"
        (lat,) = [p for p in sample.latency if p.sink == "stage1"]
        assert lat.packets > 0 and 0 < lat.p50_us <= lat.p99_us <= lat.max_us
    finally:
        out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err


def test_top_reads_a_held_run_and_refuses_what_is_not_bound(write_spec):
    spec = write_spec(pipeline_toml(packets=20, work_us=100, stages=2))
    run = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec), "--hold"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        held = run.stderr.readline()
        corbaloc, context = re.search(r"(corbaloc::\S+/NameService), context (\S+);", held).groups()
        line = _top_line(context, corbaloc)
        for name in ("stage1", "stage2"):
            assert _done(line, name) == 21  # calls, as BulkIO counts them: 20 packets and the end of stream
            # Latency so far, send to arrival at its provides port: shown for each stage.
            assert re.search(rf"\| {name} p50 [^|]+ p99 [^|]+", line), line
        latency = {p.sink: p for p in watch(context, naming=corbaloc).sample().latency}
        assert set(latency) >= {"stage1", "stage2"}, latency
        for p in (latency["stage1"], latency["stage2"]):
            assert p.packets == 20  # the packets, not their end
            assert 0 < p.p50_us <= p.p99_us <= p.max_us
        refused = scabench("top", "nothere", "--naming", corbaloc, "--samples", "1", timeout=60)
        assert refused.returncode == 2
        assert refused.stderr.strip() == (
            f"error: top: 'nothere' is not bound in the Naming Service at {corbaloc}; bound there: {context}"
        )
    finally:
        run.stdin.close()  # releases the held run
        run.stdin = None  # (communicate() would flush the closed pipe)
        run.communicate(timeout=120)
    assert run.returncode == 0


def test_top_refuses_a_naming_service_it_cannot_use_in_one_line():
    bad = scabench("top", "x", "--naming", "notaurl", "--samples", "1", timeout=60)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: top: --naming 'notaurl' is not a CORBA URL; give one of corbaname:, corbaloc:, IOR:"
    ]
    gone = scabench("top", "x", "--naming", "corbaloc::127.0.0.1:1/NameService", "--samples", "1", timeout=60)
    assert gone.returncode == 2 and gone.stderr.strip().splitlines() == [
        "error: top: the Naming Service at corbaloc::127.0.0.1:1/NameService does not answer (TRANSIENT); "
        "is the waveform running?"
    ]

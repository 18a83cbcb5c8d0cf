"""`scabench run --live` over real processes: off a terminal it says the
run's figures in plain lines on stderr while the run goes on, and its last
line agrees with what the run measured."""

import re

from conftest import pipeline_toml, scabench


def test_live_lines_follow_the_run_and_end_with_every_packet(write_spec):
    # 1 ms of CPU work per packet at a 4 ms period: the run lasts about 3 s,
    # long enough for a line while it goes on, as well as the last one.
    spec = write_spec(pipeline_toml(packets=800, work_us=1000, period_us=4000, stages=2))
    proc = scabench("run", spec, "--live")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if " elapsed: sent " in line]
    assert len(lines) >= 2, proc.stderr
    sent = [int(re.search(r"sent (\d+) of 800", line).group(1)) for line in lines]
    assert sent == sorted(sent) and sent[0] < 800 and sent[-1] == 800
    last = lines[-1]
    for name in ("producer", "stage1", "stage2"):
        # The depths from the record header's gauges: nothing left queued at the end.
        assert re.search(rf"{name}: done 800 queued 0 ", last), last
    assert "stage2 p50 " in last  # the latency so far at the sink
    assert "reordered 0" in last and "STALL" not in last
    assert "stage1" in proc.stdout  # the run's own table, as without --live


def test_live_is_refused_with_runs(write_spec):
    proc = scabench("run", write_spec(pipeline_toml(packets=5)), "--live", "--runs", "2")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].endswith("--live watches one run; it cannot be used with --runs")


def test_live_lines_show_a_worker_queue_filling_from_the_record_gauges(write_spec):
    # exp6 in small: a producer that does not wait, two-way calls into a stage
    # with a worker that takes 20 ms a packet (sleep: no CPU to compete for).
    # The calls return once queued, so the stage's queue fills up to its depth.
    spec = write_spec(
        pipeline_toml(packets=60, work="sleep", work_us=20000, stages=1, policy='call = "twoway"\nworker = 16\n')
    )
    proc = scabench("run", spec, "--live")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if " elapsed: sent " in line]
    queued = [int(re.search(r"stage1: done \d+ queued (\d+) ", line).group(1)) for line in lines]
    assert max(queued[:-1]) >= 8, lines  # seen filling while the run went on
    assert queued[-1] == 0

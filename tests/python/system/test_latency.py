"""Per-packet latency end to end over real processes, few packets, and the
units the table writes it in (docs/architecture.md, "Metrics")."""

import json

import pytest
from conftest import pipeline_toml, scabench

from scabench.measure.campaign import Spread
from scabench.model.load import load_spec
from scabench.report.plots import runs_label, whiskers
from scabench.run import network
from scabench.run.runner import run_spec
from scabench.units import duration_us

PACKETS = 12
WORK_US = 10_000


def dominates(a, b):
    """Every percentile of a at least b's (a is at least b packet by packet)."""
    return all(getattr(a, k) >= getattr(b, k) for k in ("p50", "p90", "p99", "max"))


def test_two_way_latency_covers_every_packet_and_every_stages_work(write_spec):
    # Two-way, no worker: a send returns once all three stages have slept
    # their 10 ms, so every packet takes at least 30 ms end to end, and the
    # first stage holds each packet for its own work and the two after it.
    spec = load_spec(
        write_spec(pipeline_toml(packets=PACKETS, work="sleep", work_us=WORK_US, policy='call = "twoway"'))
    )
    result = run_spec(spec)
    assert result.status == "ok"
    e2e = result.end_to_end_latency_us
    assert e2e.count == PACKETS and len(result.end_to_end_latency_us_all) == PACKETS
    assert min(result.end_to_end_latency_us_all) >= 3 * WORK_US
    assert max(result.end_to_end_latency_us_all) == pytest.approx(e2e.max, abs=1e-3)
    # Each packet's span lies inside the run: none ends after the last packet was done.
    assert e2e.max <= result.stages[-1].last_packet_ms * 1000 + 1e-3
    for i, stage in enumerate(result.stages):
        assert stage.latency_in_stage_us.count == stage.latency_since_send_us.count == PACKETS
        assert stage.latency_in_stage_us.p50 >= (3 - i) * WORK_US
        # A packet's send starts before it arrives anywhere.
        assert dominates(stage.latency_since_send_us, stage.latency_in_stage_us)
    # In a chain the end is the last stage.
    assert result.stages[-1].latency_since_send_us == e2e
    # A stage is done with a packet once it has forwarded it, and a two-way
    # forward into a stage without a worker returns once that stage is done:
    # so each stage is done after the next one.
    for before, after in zip(result.stages, result.stages[1:]):
        assert dominates(before.latency_since_send_us, after.latency_since_send_us)


@pytest.mark.skipif(
    network.unavailable_reason() is not None, reason=f"network hosts unavailable: {network.unavailable_reason()}"
)
def test_across_network_hosts_each_link_adds_its_delay(write_spec):
    # One-way across hosts in namespaces of their own, 5 ms per link: a
    # packet at stage i has crossed i + 1 links since its send. Sends and
    # dones are read in different namespaces; this holds only because they
    # read one clock (docs/architecture.md, "Recording").
    spec = load_spec(write_spec(pipeline_toml(packets=PACKETS, work_us=1000, policy='call = "oneway"')))
    spec = spec.with_network({"delay_ms": 5}, where="--link-delay")
    result = run_spec(spec)
    for i, stage in enumerate(result.stages):
        assert stage.latency_since_send_us.count == PACKETS
        assert stage.latency_since_send_us.p50 >= (i + 1) * 5000 + 1000
    assert min(result.end_to_end_latency_us_all) >= 3 * 5000 + 3 * 1000


def test_the_run_table_and_json_give_latency_in_scaled_units(write_spec, tmp_path):
    path = write_spec(pipeline_toml(packets=PACKETS, work="sleep", work_us=WORK_US, policy='call = "twoway"'))
    out = tmp_path / "result.json"
    proc = scabench("run", path, "--json", out)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout[proc.stdout.index("latency ") :]
    assert "p50" in table and "p99" in table and "max" in table
    assert "stage1: arrival → done" in table and "end to end: send → last done" in table
    doc = json.loads(out.read_text())
    e2e = doc["end_to_end_latency_us"]
    line = next(x for x in table.splitlines() if x.startswith("end to end"))
    assert line.split()[-8:] == [
        *duration_us(e2e["p50"]).split(),
        *duration_us(e2e["p90"]).split(),
        *duration_us(e2e["p99"]).split(),
        *duration_us(e2e["max"]).split(),
    ]
    assert " ms" in line  # 30 ms or more, in ms
    assert list(doc["stages"][0]["latency_in_stage_us"]) == ["count", "p50", "p90", "p99", "max"]


# ------------------------------------------------ what the studies' plots share
def test_whiskers_only_where_several_runs_give_a_spread():
    one, three = Spread(1.2, 1.2, 1.2, 1), Spread(1.2, 1.1, 1.5, 3)
    assert whiskers([one, None, one]) == ([], [[], []])
    indices, (below, above) = whiskers([one, three])
    assert indices == [1] and below == [pytest.approx(0.1)] and above == [pytest.approx(0.3)]


def test_a_legend_says_how_many_runs_a_median_stands_on():
    assert runs_label([1, 1]) == "one run each, so no spread"
    assert runs_label([3, 3]) == "median of 3 runs, whiskers min–max"
    assert runs_label([1, 3]) == "median of 1–3 runs, whiskers min–max where more than one"

"""The floor (docs/architecture.md, "Metrics") for every kind of component:
a Python stage's and an external component's declared work count as a C++
stage's, a component whose work is unknown is named, and a ratio below 1
comes with the assumption of the floor the run broke."""

import json

import pytest
from conftest import scabench
from test_results import ok_run

from scabench.measure.repeat import warnings_of
from scabench.model.load import load_spec
from scabench.model.pipeline import below_floor_why, floor_caveat, floor_of, undeclared_work
from scabench.report.tables import format_run
from scabench.run.results import RunResult, StageResult


def chain_toml(stages, packets=100, period_us=0, cores="0"):
    """producer -> the stages (name, kind, extra TOML lines) -> sink in a
    chain, on `cores` (a Python or external component is never last)."""
    stages = [*stages, ("sink", "sink", "")]
    names = ", ".join(f'"{n}"' for n, _, _ in stages)
    text = f"""chain = ["producer", {names}]
[run]
cores = "{cores}"
[[component]]
name = "producer"
kind = "producer"
packets = {packets}
samples = 16
period_us = {period_us}
"""
    for name, kind, extra in stages:
        text += f'[[component]]\nname = "{name}"\nkind = "{kind}"\n{extra}\n'
    return text


CPU_1MS = 'work = "cpu"\nwork_us = 1000'


def test_a_python_stages_work_counts_as_a_cpp_stages(write_spec):
    # 100 packets, two stages of 1 ms of CPU on one core: 200 ms of CPU.
    cpp = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS), ("stage2", "stage", CPU_1MS)]), "cpp.toml"))
    py = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS), ("stage2", "py-stage", CPU_1MS)]), "py.toml"))
    assert floor_of(cpp) == pytest.approx(200.0)
    assert floor_of(py) == pytest.approx(200.0)
    assert floor_caveat(py) is None


def test_a_spec_whose_only_stage_is_python_has_a_floor(write_spec):
    spec = load_spec(write_spec(chain_toml([("stage1", "py-stage", CPU_1MS)])))
    assert floor_of(spec) == pytest.approx(100.0)


def test_validate_gives_the_floor_of_a_python_only_pipeline(write_spec):
    proc = scabench("validate", write_spec(chain_toml([("stage1", "py-stage", CPU_1MS)])))
    assert proc.returncode == 0, proc.stderr
    assert "floor 100 ms" in proc.stdout and "Traceback" not in proc.stderr


def test_the_pacing_bounds_the_floor(write_spec):
    # Paced at 5 ms: the last packet leaves at 99 · 5 ms and takes 1 ms.
    spec = load_spec(write_spec(chain_toml([("stage1", "py-stage", CPU_1MS)], period_us=5000)))
    assert floor_of(spec) == pytest.approx(99 * 5.0 + 1.0)


def test_heterogeneous_stages_bottleneck_and_cpu_sum(write_spec):
    # Pipeline: (N-1)·Wmax + ΣW = 99·3 + 4 = 301 ms; CPU on one core: 100·4 = 400 ms.
    stages = [("stage1", "stage", CPU_1MS), ("stage2", "py-stage", 'work = "cpu"\nwork_us = 3000')]
    assert floor_of(load_spec(write_spec(chain_toml(stages), "one.toml"))) == pytest.approx(400.0)
    # On two cores the CPU bound is 200 ms and the pipeline's 301 ms holds.
    assert floor_of(load_spec(write_spec(chain_toml(stages, cores="0,1"), "two.toml"))) == pytest.approx(301.0)


def test_sleep_work_counts_for_the_pipeline_not_the_cpu(write_spec):
    stages = [("stage1", "stage", CPU_1MS), ("stage2", "py-stage", 'work = "sleep"\nwork_us = 1000')]
    # Pipeline: 99·1 + 2 = 101 ms; CPU: 100 ms of stage1's only.
    assert floor_of(load_spec(write_spec(chain_toml(stages)))) == pytest.approx(101.0)


EXTERNAL = 'exec = "/bin/true"\n'


def test_an_external_components_declared_work_counts(write_spec):
    cpu = EXTERNAL + 'work = "cpu"\nwork_us = 1000'
    spec = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS), ("ext", "external", cpu)])))
    assert floor_of(spec) == pytest.approx(200.0)
    assert undeclared_work(spec) == [] and floor_caveat(spec) is None


def test_an_external_work_us_without_its_kind_is_time_not_cpu(write_spec):
    # It may sleep or wait on a device: a least time counts it in the pipeline only.
    spec = load_spec(
        write_spec(chain_toml([("stage1", "stage", CPU_1MS), ("ext", "external", EXTERNAL + "work_us = 1000")]))
    )
    assert floor_of(spec) == pytest.approx(101.0)


def test_an_external_component_without_declared_work_is_named(write_spec):
    spec = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS), ("ext", "external", EXTERNAL)])))
    assert floor_of(spec) == pytest.approx(100.0)
    assert undeclared_work(spec) == ["ext"]
    assert "counts only declared work" in floor_caveat(spec) and "ext declares none" in floor_caveat(spec)


def test_validate_says_what_the_floor_leaves_out(write_spec):
    spec = write_spec(chain_toml([("stage1", "stage", CPU_1MS), ("ext", "external", EXTERNAL)]))
    proc = scabench("validate", spec)
    assert proc.returncode == 0, proc.stderr
    assert "ext declares none" in proc.stdout


def test_a_sink_only_counts_and_is_not_named(write_spec):
    spec = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS)])))
    assert undeclared_work(spec) == [] and floor_of(spec) == pytest.approx(100.0)


def test_a_fir_declares_no_work_and_is_named(write_spec):
    # A FIR's ports carry floats: the pipeline is a float one.
    text = chain_toml([("stage1", "stage", CPU_1MS), ("fir1", "fir", "")]).replace(
        "[run]", '[run]\nsample_type = "float"'
    )
    spec = load_spec(write_spec(text))
    assert undeclared_work(spec) == ["fir1"] and floor_of(spec) == pytest.approx(100.0)


# A ratio below 1: the assumption of the floor the run broke, in words.


def measured(name, received=100, at_once=1):
    return StageResult(
        name=name,
        kind="stage",
        received=received,
        last_packet_ms=50.0,
        reordered_from_previous=0,
        reordered_from_original=0,
        output_reordered_from_previous=0,
        max_server_threads=at_once,
        distinct_receiving_threads=at_once,
    )


ONEWAY = '[policy]\ncall = "oneway"\ndispatch = "pool"\n'


def test_a_stage_that_worked_on_packets_at_once_broke_the_floor(write_spec):
    spec = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS)], cores="0,1") + ONEWAY))
    why = below_floor_why(spec, [measured("stage1", at_once=2), measured("sink")])
    assert len(why) == 1 and "stage1 worked on up to 2 packets at once" in why[0] and "2 cores" in why[0]
    # With a worker the ORB threads only queue packets: one is worked on at a time.
    spec = load_spec(
        write_spec(chain_toml([("stage1", "stage", CPU_1MS)], cores="0,1") + ONEWAY + "worker = 4\n", "worker.toml")
    )
    assert "at once" not in " ".join(below_floor_why(spec, [measured("stage1", at_once=2), measured("sink")]))


def test_jitter_and_lost_packets_broke_the_floor(write_spec):
    spec = load_spec(write_spec(chain_toml([("stage1", "py-stage", CPU_1MS + "\nwork_jitter_us = 800")])))
    why = below_floor_why(spec, [measured("stage1", received=90), measured("sink", received=90)])
    assert any("±800 µs" in w and "work_jitter_us" in w for w in why)
    assert any("stage1 had 90 of the 100 packets" in w for w in why)


def test_a_ratio_below_1_with_no_broken_assumption_says_so(write_spec):
    spec = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS)])))
    why = below_floor_why(spec, [measured("stage1"), measured("sink")])
    assert len(why) == 1 and "a defect of the floor" in why[0]


def described(write_spec, **changes):
    """A result of a spec with two stages, as the run table shows it."""
    spec = load_spec(write_spec(chain_toml([("stage1", "stage", CPU_1MS), ("stage2", "stage", CPU_1MS)])))
    run = ok_run(spec=spec.describe(), **changes)
    run.producer.send_us = {}  # the table's send line wants every percentile or none
    return run


def test_a_ratio_below_1_is_never_shown_bare(write_spec):
    run = described(write_spec, overhead_ratio=0.848, below_floor_why=["stage1 worked on up to 2 packets at once"])
    text = format_run(run)
    assert "ratio 0.848" in text
    assert "ratio is below 1 in the run (lowest 0.848)" in text and "stage1 worked on up to 2 packets" in text
    # Read back from its JSON, the reason stays with it.
    assert RunResult.from_dict(json.loads(json.dumps(run.as_dict()))).below_floor_why == run.below_floor_why
    # A benchmark says it for the runs that broke it, once per reason.
    runs = [ok_run(overhead_ratio=r, below_floor_why=["stage1 worked on up to 2 packets at once"]) for r in (0.9, 0.95)]
    runs.append(ok_run(overhead_ratio=1.1))
    said = [w for w in warnings_of(runs, {}) if "below 1" in w]
    assert len(said) == 1 and "2 of 3 runs (lowest 0.900)" in said[0] and said[0].count("at once") == 1


def test_a_result_without_a_floor_says_so(write_spec):
    text = format_run(described(write_spec, floor_ms=0.0, overhead_ratio=None))
    assert "no floor (no declared work)" in text
    caveat = "the floor counts only declared work (work_us); ext declares none"
    assert caveat in format_run(described(write_spec, floor_caveat=caveat))

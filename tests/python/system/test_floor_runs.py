"""A pipeline whose only stage is Python, run over real processes, and its
floor (the floor's arithmetic on known numbers: unit/test_floor.py)."""

import pytest
from test_floor import CPU_1MS, chain_toml

from scabench.model.load import load_spec
from scabench.run.runner import run_spec


def test_a_pipeline_whose_only_stage_is_python_runs(write_spec):
    # Over real processes: the floor is stage1's work, and the ratio is taken over it.
    spec = load_spec(write_spec(chain_toml([("stage1", "py-stage", CPU_1MS)], packets=5)))
    result = run_spec(spec)
    assert result.status == "ok", result.error
    assert result.floor_ms == pytest.approx(5.0) and result.overhead_ratio is not None
    assert result.stages[-1].received == 5 and result.floor_caveat is None

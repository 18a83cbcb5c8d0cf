"""Statistics of repeated runs (scabench.measure.stats) on samples whose
answers are known: textbook values of Student's t, a hand-computed interval,
and the samples of pyperf's predecessor (perf.py), whose pooled t-score is
1.0947 and not significant."""
import math

import pytest

from scabench.measure import stats
from scabench.run.results import RunResult, StageResult

# perf.py's test samples ("There's no particular significance to these values").
DATA1 = [89.2, 78.2, 89.3, 88.3, 87.3, 90.1, 95.2, 94.3, 78.3, 89.3]
DATA2 = [79.3, 78.3, 85.3, 79.3, 88.9, 91.2, 87.2, 89.2, 93.3, 79.9]


@pytest.mark.parametrize("df, value", [(1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042)])
def test_t_critical_values_match_the_table(df, value):
    assert stats.t_critical(df) == pytest.approx(value, abs=5e-4)


def test_summary_of_one_to_five():
    s = stats.describe([5, 1, 4, 2, 3])
    assert (s.n, s.median, s.mean, s.min, s.max) == (5, 3.0, 3.0, 1.0, 5.0)
    assert s.stdev == pytest.approx(math.sqrt(2.5))
    # 3 ± 2.7764 · 1.5811 / √5
    assert s.ci95 == pytest.approx((1.03676, 4.96324), abs=1e-5)
    assert s.cv == pytest.approx(math.sqrt(2.5) / 3)


def test_a_missing_value_is_left_out_and_one_run_has_no_spread():
    s = stats.describe([7.0, None, float("nan")])
    assert (s.n, s.median, s.mean, s.stdev, s.ci95, s.cv) == (1, 7.0, 7.0, None, None, None)
    assert stats.describe([None]).n == 0
    assert stats.describe([]).as_dict()["median"] is None


def test_perf_py_samples_are_not_significant():
    c = stats.compare(DATA2, DATA1)
    assert c.t == pytest.approx(1.0947, abs=1e-4)
    assert c.p > 0.05
    assert c.significant is False
    assert c.ratio == pytest.approx(87.95 / 85.19)


def test_a_clear_shift_is_significant():
    c = stats.compare([10.0, 10.1, 9.9, 10.05], [12.0, 12.1, 11.9, 12.0])
    assert c.significant is True
    assert c.difference == pytest.approx(1.9875)
    assert c.p < 1e-6


def test_a_shift_within_the_noise_is_not_significant_however_many_runs():
    # 200 runs a side: the t-test alone rejects equal means (t ≈ 5), but the
    # means are half a σ apart, which the second condition refuses.
    a = [-1.0, 1.0] * 100
    b = [-0.5, 1.5] * 100
    c = stats.compare(a, b)
    assert c.p < 0.001
    assert c.significant is False
    assert "within one σ" in c.why


def test_constant_samples():
    assert stats.compare([0, 0, 0], [0, 0, 0]).significant is False
    assert stats.compare([0, 0, 0], [2, 2, 2]).significant is True


def test_one_run_on_a_side_cannot_tell():
    c = stats.compare([5.0], [6.0, 7.0])
    assert c.significant is None
    assert c.ratio == pytest.approx(1.3)


def _run(last_ms, ratio, reordered):
    stage = StageResult("stage3", "stage", 10, last_ms, 0, reordered, 0, 1, 1)
    return RunResult("ok", {}, {}, 100.0, 0.0, overhead_ratio=ratio, stages=[stage])


def test_headline_figures_of_runs():
    runs = [_run(100.0, 1.0, 0), _run(110.0, 1.1, 2), _run(120.0, 1.2, 4)]
    summary = stats.summarise(runs)
    assert [f.key for f in stats.HEADLINE] == list(summary)
    assert summary["last_packet_ms"].median == 110.0
    assert summary["overhead_ratio"].mean == pytest.approx(1.1)
    assert summary["packets_reordered"].max == 4

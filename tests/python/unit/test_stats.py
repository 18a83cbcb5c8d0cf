"""Statistics of repeated runs (scabench.measure.stats) on samples whose
answers are known: textbook values of Student's t, a hand-computed interval,
and the samples of pyperf's predecessor (perf.py), whose pooled t-score is
1.0947 and not significant."""

import math

import pytest

from scabench.measure import stats
from scabench.run.results import Latency, PathResult, RunResult, StageResult

# perf.py's test samples ("There's no particular significance to these values").
DATA1 = [89.2, 78.2, 89.3, 88.3, 87.3, 90.1, 95.2, 94.3, 78.3, 89.3]
DATA2 = [79.3, 78.3, 85.3, 79.3, 88.9, 91.2, 87.2, 89.2, 93.3, 79.9]


def test_summary_of_one_to_five():
    s = stats.describe([5, 1, 4, 2, 3])
    assert (s.n, s.median, s.mean, s.min, s.max) == (5, 3.0, 3.0, 1.0, 5.0)
    assert s.stdev == pytest.approx(math.sqrt(2.5))
    assert s.cv == pytest.approx(math.sqrt(2.5) / 3)
    # min … max of 5 covers the median 1 - 2/32 = 93.75 % of the time: too few for 95 %.
    assert s.ci95 is None and s.ci95_why == "n = 5: too few runs for a 95 % interval (it takes 6)"


def test_two_runs_far_apart_give_no_negative_interval():
    # The case: 2 runs, 73.4 ms and 246.7 ms. mean ± t(1)·σ/√2 gave -99.98 ms … 246.7 ms.
    s = stats.describe([73.4, 246.7])
    assert s.ci95 is None and "n = 2: too few runs" in s.ci95_why
    assert s.as_dict()["ci95"] is None and s.as_dict()["ci95_why"] == s.ci95_why


def test_one_run_has_no_interval():
    s = stats.describe([7.0])
    assert s.ci95 is None and s.ci95_why.startswith("n = 1:")


@pytest.mark.parametrize("n, k", [(6, 1), (8, 1), (9, 2), (10, 2), (20, 6), (30, 10)])
def test_median_interval_is_the_textbook_order_statistics(n, k):
    # The k-th smallest and k-th largest of n (tables of the sign test's
    # confidence interval): n = 10 gives (x2, x9), n = 20 (x6, x15).
    values = [float(i) for i in range(1, n + 1)]
    assert stats.median_interval(values[::-1]) == (float(k), float(n + 1 - k))


def test_the_interval_of_a_positive_figure_stays_within_its_runs():
    values = [0.5, 0.6, 0.55, 40.0, 0.52, 0.58, 90.0]  # skewed: two disturbed runs
    low, high = stats.describe(values).ci95
    assert low > 0 and (low, high) == (0.5, 90.0)
    assert stats.interval_runs() == 6
    counts = [0, 0, 25, 2, 0, 0, 1, 0, 0]  # reorderings: whole runs' counts, never below 0
    assert stats.describe(counts).ci95 == (0.0, 2.0)


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


def _graph_run(p99_a_us, p99_b_us, lost_b=0):
    """A run of one source into sinks a and b, each path's latency p99 given."""

    def path(sink, p99, lost):
        return PathResult("p", sink, 0, 1, 10, 10 - lost, 10 - lost, 0, lost, 0, Latency(10 - lost, 1.0, 1.0, p99, p99))

    run = _run(100.0, 1.0, 0)
    run.paths = [path("a", p99_a_us, 0), path("b", p99_b_us, lost_b)]
    return run


def test_a_graphs_paths_are_figures_of_their_own_summarised_and_compared():
    a = [_graph_run(1000, 2000), _graph_run(1100, 2100), _graph_run(900, 1900)]
    b = [_graph_run(1000, 5000, 1), _graph_run(1100, 5100, 1), _graph_run(900, 4900, 1)]
    keys = [f.key for f in stats.figures_of(a)]
    assert keys[: len(stats.HEADLINE)] == [f.key for f in stats.HEADLINE]
    assert keys[len(stats.HEADLINE) :] == [
        "latency_p50_ms_p->a",
        "latency_p99_ms_p->a",
        "lost_p->a",
        "latency_p50_ms_p->b",
        "latency_p99_ms_p->b",
        "lost_p->b",
    ]
    figures = {f.key: f for f in stats.figures_of(a + b)}
    assert stats.summarise(a, figures.values())["latency_p99_ms_p->b"].median == pytest.approx(2.0)
    of = lambda runs, key: [figures[key].of(r) for r in runs]  # noqa: E731
    assert stats.compare(of(a, "latency_p99_ms_p->b"), of(b, "latency_p99_ms_p->b")).significant is True
    assert stats.compare(of(a, "latency_p99_ms_p->a"), of(b, "latency_p99_ms_p->a")).significant is False
    assert stats.compare(of(a, "lost_p->b"), of(b, "lost_p->b")).significant is True
    # One path (a chain): its figures are the headline ones.
    chain = _run(100.0, 1.0, 0)
    chain.paths = a[0].paths[:1]
    assert stats.figures_of([chain]) == stats.HEADLINE

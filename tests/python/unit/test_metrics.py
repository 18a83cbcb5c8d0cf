"""The paper's metric definitions on known sequences."""

import pytest

from scabench.model.pipeline import floor_ms
from scabench.run import metrics

# The paper's worked example, 1-based; our sequence numbers are 0-based.
PAPER_EXAMPLE = [1, 2, 4, 5, 6, 7, 8, 9, 3, 10]


def zero_based(seq):
    return [s - 1 for s in seq]


def test_paper_example_reordered_from_previous_is_3():
    assert metrics.reordered_from_previous(zero_based(PAPER_EXAMPLE)) == 3


def test_paper_example_reordered_from_original_is_7():
    assert metrics.reordered_from_original(zero_based(PAPER_EXAMPLE)) == 7


def test_in_order_stream_has_no_reordering():
    assert metrics.reordered_from_previous(range(100)) == 0
    assert metrics.reordered_from_original(range(100)) == 0


def test_first_arrival_is_compared_with_the_packet_before_the_first():
    assert metrics.reordered_from_previous([1, 0, 2]) == 3
    assert metrics.reordered_from_original([1, 0, 2]) == 2


def test_a_lost_packet_counts_once_from_previous_and_never_from_original():
    assert metrics.reordered_from_previous([0, 1, 3, 4]) == 1
    assert metrics.reordered_from_original([0, 1, 3, 4]) == 0


def test_empty_stream():
    assert metrics.reordered_from_previous([]) == 0
    assert metrics.reordered_from_original([]) == 0


@pytest.mark.parametrize("cores, expected", [(2, 7500.0), (1, 15000.0), (4, 5010.0)])
def test_floor_of_the_paper_pipeline(cores, expected):
    assert floor_ms(1000, [5, 5, 5], [5, 5, 5], 0, cores) == expected


def test_floor_with_a_paced_producer_and_sleep_work():
    # 10 packets, one every 8 ms, through 2 stages that sleep 5 ms: no CPU bound.
    assert floor_ms(10, [5, 5], [0, 0], 8, 1) == 9 * 8 + 10


def test_send_time_statistics():
    stats = metrics.send_time_stats(list(range(1, 11)))
    assert stats["min"] == 1 and stats["max"] == 10
    assert stats["mean_fastest_90pct"] == pytest.approx(5.0)
    assert stats["mean_slowest_10pct"] == pytest.approx(10.0)
    assert metrics.share_under(list(range(1, 11)), [5])["5"] == pytest.approx(40.0)


def test_floor_without_stages_is_the_pacing():
    assert floor_ms(10, [], [], 100, 2) == 900


# Percentiles (metrics.PERCENTILE_METHOD, numpy's "linear"): position
# q/100 * (n - 1) in the sorted samples, interpolated between neighbours.
def test_percentiles_of_0_to_100_are_the_samples_themselves():
    samples = list(range(100, -1, -1))  # order does not matter
    assert [metrics.percentile(samples, q) for q in (0, 50, 90, 99, 100)] == [0.0, 50.0, 90.0, 99.0, 100.0]


def test_a_percentile_between_two_samples_is_interpolated():
    # Four samples: p50 at position 1.5, p90 at 2.7, p99 at 2.97.
    samples = [40.0, 10.0, 30.0, 20.0]
    assert metrics.percentile(samples, 50) == 25.0
    assert metrics.percentile(samples, 90) == pytest.approx(37.0, abs=1e-12)
    assert metrics.percentile(samples, 99) == pytest.approx(39.7, abs=1e-12)
    # Nearest rank would give a sample: 20, 40, 40.
    assert metrics.percentile(samples, 90) not in samples


def test_latency_summary_on_known_samples():
    summary = metrics.latency_summary([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert list(summary) == ["count", "p50", "p90", "p99", "max"]
    assert summary["count"] == 10 and summary["max"] == 10.0
    # Positions 4.5, 8.1, 8.91 of 1..10.
    assert summary["p50"] == 5.5
    assert summary["p90"] == pytest.approx(9.1, abs=1e-12)
    assert summary["p99"] == pytest.approx(9.91, abs=1e-12)
    assert metrics.latency_summary([7.0]) == {"count": 1, "p50": 7.0, "p90": 7.0, "p99": 7.0, "max": 7.0}
    assert metrics.latency_summary([]) is None


def test_send_times_use_the_same_percentiles():
    stats = metrics.send_time_stats([40.0, 10.0, 30.0, 20.0])
    assert stats["p50"] == 25.0 and stats["p90"] == metrics.percentile([10, 20, 30, 40], 90)


def test_since_send_matches_packets_by_number_and_leaves_out_unsent_ones():
    sent = [0, 1, 2, 3]
    start = [100, 200, 300, 400]
    # The stage got 2, 0 and 3 (in that order), and a number the source never sent.
    latency = metrics.since_send_ns(sent, start, [2, 0, 9, 3], [1300, 1100, 5000, 1450])
    assert latency.tolist() == [1000, 1000, 1050]
    assert metrics.since_send_ns(sent, start, [], []).tolist() == []
    assert metrics.since_send_ns([], [], [1], [5]).tolist() == []


def test_out_of_order_marks_the_arrivals_reordered_from_previous_counts():
    arrivals = zero_based(PAPER_EXAMPLE)
    marks = metrics.out_of_order_from_previous(arrivals)
    assert marks.sum() == metrics.reordered_from_previous(arrivals) == 3
    assert list(metrics.out_of_order_from_previous([0, 2, 1, 3])) == [False, True, True, True]


def test_out_of_order_per_stream_marks_each_stream_against_its_own():
    # Streams 1 and 2 interleaved, each in order but stream 2's 1 before its 0.
    sequence, stream = [0, 1, 0, 1, 2, 2], [1, 2, 2, 1, 1, 2]
    marks = metrics.out_of_order_per_stream(sequence, stream)
    assert list(marks) == [False, True, True, False, False, True]
    assert marks.sum() == metrics.per_stream(metrics.reordered_from_previous, sequence, stream)

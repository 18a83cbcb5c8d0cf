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

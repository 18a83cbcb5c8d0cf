"""The paper's metrics, defined exactly (docs/architecture.md, "Metrics").
The floor they are compared with is the model's (scabench.model.pipeline).

Sequence numbers are those the producer stamped, 0-based; with several
producers, each stream's own (per_stream).
"""

from collections.abc import Callable, Iterable
from typing import Any, Final

import numpy as np
from numpy.typing import ArrayLike

# Every percentile a run reports is numpy's "linear" method (its default):
# for n sorted samples x[0] <= ... <= x[n-1], the q-th percentile is
# x[i] + f * (x[i+1] - x[i]) where i + f = q/100 * (n - 1), i whole and
# 0 <= f < 1. So p50 of an even count is the mean of the middle two, the max
# is p100, and a percentile may fall between two samples, unlike the
# nearest-rank method, which always returns a sample.
PERCENTILE_METHOD: Final = "linear"
LATENCY_PERCENTILES = (50, 90, 99)


def percentile(samples: ArrayLike, q: float) -> float:
    """The q-th percentile (0-100) of the samples, as PERCENTILE_METHOD defines it."""
    return float(np.percentile(np.asarray(samples, dtype=float), q, method=PERCENTILE_METHOD))


def out_of_order_from_previous(sequence: ArrayLike) -> np.ndarray:
    """Each arrival (bool): its number is not the previous arrival's + 1;
    the first arrival is compared with the packet before the first (-1)."""
    seq = np.asarray(sequence, dtype=np.int64)
    previous = np.concatenate(([-1], seq[:-1]))
    return seq != previous + 1


def reordered_from_previous(sequence: ArrayLike) -> int:
    """Arrivals whose number is not the previous arrival's + 1 (out_of_order_from_previous)."""
    return int(np.count_nonzero(out_of_order_from_previous(sequence)))


def reordered_from_original(sequence: ArrayLike) -> int:
    """Arrival positions whose packet is not the packet that holds that
    position in the original order, among the packets delivered."""
    seq = np.asarray(sequence, dtype=np.int64)
    return int(np.count_nonzero(seq != np.sort(seq)))


def per_stream(count: Callable[[np.ndarray], int], sequence: ArrayLike, stream: ArrayLike | None = None) -> int:
    """A reordering count over several streams (each source's sequence
    numbers, told apart by stream id), each counted on its own and summed:
    two streams merged into one port interleave, which is not reordering.
    With one stream (or no stream ids) it is count(sequence)."""
    seq = np.asarray(sequence, dtype=np.int64)
    if stream is None:
        return count(seq)
    ids = np.asarray(stream)
    return sum(count(seq[ids == s]) for s in np.unique(ids)) if seq.size else count(seq)


def out_of_order_per_stream(sequence: ArrayLike, stream: ArrayLike) -> np.ndarray:
    """Each arrival (bool) out of its own stream's order
    (out_of_order_from_previous within its stream, as per_stream counts
    reordered_from_previous): streams merged into one port interleave."""
    seq, ids = np.asarray(sequence, dtype=np.int64), np.asarray(stream)
    out = np.zeros(seq.size, bool)
    for s in np.unique(ids):
        mine = ids == s
        out[mine] = out_of_order_from_previous(seq[mine])
    return out


def send_time_stats(send_us: ArrayLike) -> dict[str, Any]:
    """The producer's send-time distribution (µs)."""
    s = np.sort(np.asarray(send_us, dtype=float))
    if s.size == 0:
        return {}
    k = max(1, int(round(0.9 * s.size)))
    return {
        "count": int(s.size),
        "min": float(s[0]),
        "p50": percentile(s, 50),
        "p80": percentile(s, 80),
        "p90": percentile(s, 90),
        "p99": percentile(s, 99),
        "max": float(s[-1]),
        "mean": float(s.mean()),
        "mean_fastest_90pct": float(s[:k].mean()),
        "mean_slowest_10pct": float(s[k:].mean()) if k < s.size else float(s[-1]),
    }


def share_under(send_us: ArrayLike, thresholds_us: Iterable[float]) -> dict[str, float]:
    """Share of sends (%) that took less than each threshold."""
    s = np.asarray(send_us, dtype=float)
    return {str(t): float(100.0 * np.count_nonzero(s < t) / s.size) if s.size else 0.0 for t in thresholds_us}


def latency_summary(latency_us: ArrayLike) -> dict[str, Any] | None:
    """A latency distribution (µs) as a run reports it: {count, p50, p90,
    p99, max}; None for no packet."""
    s = np.asarray(latency_us, dtype=float)
    if s.size == 0:
        return None
    return {"count": int(s.size), **{f"p{q}": percentile(s, q) for q in LATENCY_PERCENTILES}, "max": float(s.max())}


def since_send_ns(
    sent_sequence: np.ndarray, send_start_ns: np.ndarray, sequence: np.ndarray, done_ns: np.ndarray
) -> np.ndarray:
    """How long after its send began each packet was done: for the packets
    in (sequence, done_ns) whose number the source sent, done_ns minus the
    start of that send (ns), in the order given; packets the source did not
    send (no such number) are left out. (sent_sequence, send_start_ns): the
    source's records, each number once."""
    sent = np.asarray(sent_sequence, dtype=np.int64)
    start = np.asarray(send_start_ns, dtype=np.int64)
    seq = np.asarray(sequence, dtype=np.int64)
    done = np.asarray(done_ns, dtype=np.int64)
    if sent.size == 0 or seq.size == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(sent, kind="stable")
    pos = np.minimum(np.searchsorted(sent[order], seq), sent.size - 1)
    found = sent[order][pos] == seq
    return done[found] - start[order][pos[found]]

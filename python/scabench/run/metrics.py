"""The paper's metrics, defined exactly (docs/architecture.md, "Metrics").
The floor they are compared with is the model's (scabench.model.pipeline).

Sequence numbers are those the producer stamped, 0-based; with several
producers, each stream's own (per_stream).
"""
import numpy as np


def reordered_from_previous(sequence):
    """Arrivals whose number is not the previous arrival's + 1; the first
    arrival is compared with the packet before the first (-1)."""
    seq = np.asarray(sequence, dtype=np.int64)
    if seq.size == 0:
        return 0
    previous = np.concatenate(([-1], seq[:-1]))
    return int(np.count_nonzero(seq != previous + 1))


def reordered_from_original(sequence):
    """Arrival positions whose packet is not the packet that holds that
    position in the original order, among the packets delivered."""
    seq = np.asarray(sequence, dtype=np.int64)
    return int(np.count_nonzero(seq != np.sort(seq)))


def per_stream(count, sequence, stream=None):
    """A reordering count over several streams (each source's sequence
    numbers, told apart by stream id), each counted on its own and summed:
    two streams merged into one port interleave, which is not reordering.
    With one stream (or no stream ids) it is count(sequence)."""
    seq = np.asarray(sequence, dtype=np.int64)
    if stream is None:
        return count(seq)
    ids = np.asarray(stream)
    return sum(count(seq[ids == s]) for s in np.unique(ids)) if seq.size else count(seq)


def send_time_stats(send_us):
    """The producer's send-time distribution (µs)."""
    s = np.sort(np.asarray(send_us, dtype=float))
    if s.size == 0:
        return {}
    k = max(1, int(round(0.9 * s.size)))
    return {
        "count": int(s.size),
        "min": float(s[0]),
        "p50": float(np.percentile(s, 50)),
        "p80": float(np.percentile(s, 80)),
        "p90": float(np.percentile(s, 90)),
        "p99": float(np.percentile(s, 99)),
        "max": float(s[-1]),
        "mean": float(s.mean()),
        "mean_fastest_90pct": float(s[:k].mean()),
        "mean_slowest_10pct": float(s[k:].mean()) if k < s.size else float(s[-1]),
    }


def share_under(send_us, thresholds_us):
    """Share of sends (%) that took less than each threshold."""
    s = np.asarray(send_us, dtype=float)
    return {str(t): float(100.0 * np.count_nonzero(s < t) / s.size) if s.size else 0.0 for t in thresholds_us}

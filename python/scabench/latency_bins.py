"""The latency bins, one definition for every latency histogram scabench
keeps while a run goes on: the live view's (run/live.py), the Python ports'
(components/ports.py), and the C++ ports' (latency_histogram.hpp mirrors
these constants). 20 bins per decade from 1 µs to 1000 s: edges
1 µs * 10^(k/20) for k = 0..180, plus a bin below the first edge and one
above the last. A latency falls in the bin whose upper edge is the first
edge not below it (numpy's searchsorted); a quantile is that bin's upper
edge, at most one bin (12 %) above the latency."""

import bisect
from collections.abc import Sequence

PER_DECADE = 20
DECADES = 9
EDGES_US = tuple(10.0 ** (k / PER_DECADE) for k in range(DECADES * PER_DECADE + 1))
EDGES_NS = tuple(1000.0 * e for e in EDGES_US)
BINS = len(EDGES_NS) + 1


def bin_of_ns(latency_ns: int) -> int:
    """The bin of a latency in ns: how many edges lie below it."""
    return bisect.bisect_left(EDGES_NS, latency_ns)


def quantile_ns(counts: Sequence[int], q: float) -> int | None:
    """The q-th quantile (0..1) of a histogram over these bins, as its bin's
    upper edge in ns, rounded up (beyond the last edge: the last edge, a
    floor); None while it is empty."""
    total = sum(counts)
    if total == 0:
        return None
    rank = max(1, -(-int(q * 100 * total) // 100)) if q < 1 else total
    seen, index = 0, len(counts) - 1
    for i, n in enumerate(counts):
        seen += n
        if seen >= rank:
            index = i
            break
    return int(-(-EDGES_NS[min(index, len(EDGES_NS) - 1)] // 1))

"""Stalls: stretches of a run in which a component had work and finished
none of it (docs/architecture.md, "Metrics").

A stage stopped for a while and then resumed still delivers every packet in
order; only its times show it, inside a ratio that looks merely poor. A
stall is measured from the per-packet records, not guessed from the ratio:

  A component holds work from the moment it has taken more packets than it
  finished. Between its (k-1)-th and k-th completion (times c) it holds work
  from max(c[k-1], a[k]) on, a[k] being its k-th arrival, so
      stalled_k = c[k] - max(c[k-1], a[k]).
  This is exact for any order of arrival, since it counts packets only.
  For a packet source, a[k] is when it began packet k, so the same formula
  covers a send that blocks; a source that starts packet k later than
  its period after the (k-1)-th send returned is stalled too.

A component that holds work while the rest of the pipeline finishes packets
is held back by flow control (a source's two-way send into a full worker
queue waits for half the queue to drain: 32 packets of 5 ms, longer when
three stages share two cores), not stalled. So what counts is the longest
part of such a stretch in which no component of the run finished anything:
the pipeline stood still while this component had work.

A stretch longer than the component's threshold is a stall: STALL_WORK_FACTOR
times its work per packet, times the most packets it worked on at once (n
threads sharing a core finish their n packets together, after about n times
the work: slow, but not stalled), and never less than STALL_MIN_MS (a 2-core
machine shared with others preempts a process for tens of ms now and then;
that is foreign load, which the guard measures, not a stall)."""

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

STALL_WORK_FACTOR = 20
STALL_MIN_MS = 250.0


def threshold_ms(work_ms: float | None, concurrency: int = 1) -> float:
    return max(STALL_WORK_FACTOR * (work_ms or 0.0) * max(1, concurrency), STALL_MIN_MS)


def held_without_progress(arrive_ns: np.ndarray, done_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start_ns, length_ns) arrays: for each completion, how long before it
    the component held work and finished none (see the module docstring)."""
    a = np.sort(np.asarray(arrive_ns, dtype=np.int64))
    c = np.sort(np.asarray(done_ns, dtype=np.int64))
    n = min(a.size, c.size)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    a, c = a[:n], c[:n]
    previous = np.concatenate(([np.iinfo(np.int64).min], c[:-1]))
    start = np.maximum(previous, a)
    return start, c - start


def late_starts(arrive_ns: np.ndarray, done_ns: np.ndarray, period_ns: float) -> tuple[np.ndarray, np.ndarray]:
    """(start_ns, length_ns) of a source's idle stretches beyond its period:
    from a send's return to the next packet's start, less the period."""
    a = np.asarray(arrive_ns, dtype=np.int64)
    c = np.asarray(done_ns, dtype=np.int64)
    if a.size < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = np.argsort(a, kind="stable")
    a, c = a[order], c[order]
    start = c[:-1]
    return start, a[1:] - start - int(period_ns)


def pipeline_progress_ns(done_ns: Iterable[ArrayLike]) -> np.ndarray:
    """When anything in the run finished something: every component's
    completion times (`done_ns`, an array per component), sorted, as
    standing_still and find_stalls take them. A component waiting while
    others progress is held back by flow control, not stalled."""
    return np.sort(np.concatenate([np.asarray(d, np.int64) for d in done_ns] or [np.empty(0, np.int64)]))


def standing_still(
    starts: np.ndarray, lengths: np.ndarray, progress_ns: np.ndarray, limit_ns: float
) -> tuple[np.ndarray, np.ndarray]:
    """The parts of the stretches (start_ns, length_ns) longer than limit_ns
    in which nothing in `progress_ns` (sorted completion times of every
    component) happened: for each stretch, its longest such gap."""
    out_s, out_l = [], []
    for s, n in zip(starts[lengths > limit_ns], lengths[lengths > limit_ns]):
        inside = progress_ns[np.searchsorted(progress_ns, s, "right") : np.searchsorted(progress_ns, s + n, "left")]
        points = np.concatenate(([s], inside, [s + n]))
        gaps = np.diff(points)
        i = int(np.argmax(gaps))
        out_s.append(points[i])
        out_l.append(gaps[i])
    return np.asarray(out_s, np.int64), np.asarray(out_l, np.int64)


def find_stalls(
    name: str,
    arrive_ns: np.ndarray,
    done_ns: np.ndarray,
    work_ms: float | None,
    t0_ns: int,
    period_ms: float | None = None,
    concurrency: int = 1,
    progress_ns: np.ndarray | None = None,
) -> list[dict[str, Any]]:
    """The stalls of one component, as result entries. period_ms: a source's
    pacing period (None: not a source). progress_ns: every component's
    completion times, sorted (pipeline_progress_ns; None: judge the
    component alone)."""
    limit_ms = threshold_ms(work_ms, concurrency)
    starts, lengths = held_without_progress(arrive_ns, done_ns)
    if period_ms is not None:
        s2, l2 = late_starts(arrive_ns, done_ns, period_ms * 1e6)
        starts, lengths = np.concatenate((starts, s2)), np.concatenate((lengths, l2))
    if progress_ns is not None:
        starts, lengths = standing_still(starts, lengths, progress_ns, limit_ms * 1e6)
    hit = lengths > limit_ms * 1e6
    return sorted(
        (
            {
                "component": name,
                "at_ms": round((int(s) - t0_ns) / 1e6, 1),
                "for_ms": round(int(d) / 1e6, 1),
                "threshold_ms": limit_ms,
            }
            for s, d in zip(starts[hit], lengths[hit])
        ),
        key=lambda e: e["at_ms"],
    )

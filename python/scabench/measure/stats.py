"""Statistics of repeated runs, in one place: the summary of a figure over K
runs (median, mean ± σ, min … max, a 95 % confidence interval of the median)
and whether two sets of runs differ (`scabench compare`).

The figures a benchmark headlines are listed once, in HEADLINE. The run
summary, its warnings, `scabench compare`, the JSON and the CSV all iterate
that list, so a new headline figure (a latency percentile, say) is one more
Figure line there.

The formulas are the textbook ones, computed by scipy where it has them:
- σ is the sample standard deviation (n - 1 in the denominator);
- the 95 % confidence interval is the median's, from order statistics
  (median_interval): the k-th smallest and k-th largest run, with the
  largest k whose coverage, by the binomial law of how many runs fall
  below the true median, is still 95 % or more. Why this and not the
  mean ± t·σ/√n: the runs are few and skewed (a disturbed run is long,
  none is much shorter), and that interval assumes a normal law; with 2
  runs its t of 12.7 gave a negative time (-99.98 ms … 246.7 ms). The
  order-statistics interval assumes nothing of the law, and its ends are
  runs that happened, so it never leaves the figure's range: a time is
  never negative, a count never fractional. It needs 6 runs (with 5,
  min … max covers the median only 93.75 % of the time): with fewer,
  there is no interval, and the summary says that n is too small;
- two sets differ significantly when Student's two-sample t-test (pooled
  variance) rejects equal means at 95 % AND the means are further apart
  than either set's σ. The second condition is pyperf's: with many runs the
  t-test alone calls differences far below the run-to-run noise
  significant, and a reader cares about differences the noise cannot hide.
"""

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scabench.run.results import RunResult, StageResult

CONFIDENCE = 0.95
# A figure whose runs spread more than this (σ over the mean) is worth a
# warning: its median is not a figure to quote on its own.
SPREAD_WARN_CV = 0.05


@dataclass(frozen=True)
class Figure:
    """A headline figure of a run: its key in the JSON and CSV, the words
    the terminal shows, its unit ("ms": a duration in milliseconds, scaled
    when printed; "x": a ratio; "count": packets) and how a RunResult gives
    it (None where the run has no value); means: what it is, in words, for
    the legend under a table that shows it (report/tables.figure_legend)."""

    key: str
    label: str
    unit: str
    of: Callable
    means: str = ""

    @property
    def term(self) -> str:
        """The word the legend defines: the label, less the process a
        per-process figure names ("CPU per packet: stage1")."""
        return self.label.split(": ")[0]


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000.0


def _last_stage(result: RunResult) -> StageResult | None:
    return result.stages[-1] if result.stages else None


# The words of the floor, the ratio and each process's CPU per packet, also
# said where a run's table defines them (report/tables.LEGEND).
FLOOR_MEANS = "least time the hardware allows for the last packet"
RATIO_MEANS = "last packet / floor (1: ideal)"
CPU_MEANS = "a process's CPU over the run's window / the packets it handled (its work and what its hops cost)"

HEADLINE = (
    Figure(
        "last_packet_ms",
        "last packet",
        "ms",
        lambda r: getattr(_last_stage(r), "last_packet_ms", None),
        "when the last stage finished its last packet, from the first send",
    ),
    Figure("overhead_ratio", "ratio", "x", lambda r: r.overhead_ratio, RATIO_MEANS),
    Figure(
        "packets_reordered",
        "packets reordered",
        "count",
        lambda r: getattr(_last_stage(r), "reordered_from_original", None),
        "the last stage's arrivals whose packet is not the one sent in that position",
    ),
    # Deep queues buy throughput with latency: the worst packets' wait shows it.
    Figure(
        "latency_p99_ms",
        "latency p99",
        "ms",
        lambda r: _ms(getattr(r.end_to_end_latency_us, "p99", None)),
        "99 % of packets took at most this from the start of their send to done at the last stage",
    ),
)


def process_figures(runs: Sequence[RunResult]) -> tuple["Figure", ...]:
    """A figure per process of the runs: its CPU per packet, what each hop
    costs (RunResult.process_cpu_per_packet_ms), in the order the runs name
    the processes. Keys `cpu_per_packet_ms_<process>`."""
    names = dict.fromkeys(name for r in runs for name in r.process_cpu_per_packet_ms())
    return tuple(
        Figure(
            f"cpu_per_packet_ms_{name}",
            f"CPU per packet: {name}",
            "ms",
            lambda r, name=name: r.process_cpu_per_packet_ms().get(name),
            CPU_MEANS,
        )
        for name in names
    )


PATH_MEANS = {
    "latency_p50_ms": "half the packets of a source's stream took at most this from the start of their send "
    "to done at a sink",
    "latency_p99_ms": "99 % of the packets of a source's stream took at most this from the start of their send "
    "to done at a sink",
    "lost": "a stream's packets that never reached a sink, less those dropped on purpose on the way",
    "dropped": "a stream's packets a drop fan-out dropped on the way to a sink",
}


def _path_value(result: RunResult, source: str, sink: str, key: str) -> float | None:
    path = next((p for p in result.paths or [] if (p.source, p.sink) == (source, sink)), None)
    if path is None:
        return None
    if key.startswith("latency_"):
        us = getattr(path.latency_us, key.split("_")[1], None)
        return _ms(us)
    return getattr(path, key)


def path_figures(runs: Sequence[RunResult]) -> tuple["Figure", ...]:
    """Figures per (source, sink) path of a graph (RunResult.paths): its
    latency p50 and p99, its lost packets and, where a run dropped any, its
    dropped ones. None for a waveform of one path: its figures are the
    headline ones (the end-to-end latency is that path's). Keys
    `<figure>_<source>-><sink>`."""
    pairs = list(dict.fromkeys((p.source, p.sink) for r in runs for p in r.paths or []))
    if len(pairs) < 2:
        return ()
    dropping = {(p.source, p.sink) for r in runs for p in r.paths or [] if p.dropped}
    out = []
    for source, sink in pairs:
        keys = ["latency_p50_ms", "latency_p99_ms", "lost"] + (["dropped"] if (source, sink) in dropping else [])
        for key in keys:
            words = "path " + key.replace("_ms", "").replace("_", " ")
            out.append(
                Figure(
                    f"{key}_{source}->{sink}",
                    f"{words}: {source}->{sink}",
                    "ms" if key.endswith("_ms") else "count",
                    lambda r, a=source, b=sink, k=key: _path_value(r, a, b, k),
                    PATH_MEANS[key],
                )
            )
    return tuple(out)


def figures_of(runs: Sequence[RunResult]) -> tuple["Figure", ...]:
    """Every figure a set of runs is summarised and compared by: the
    headline figures, each path's of a graph with several, then each
    process's CPU per packet."""
    return HEADLINE + path_figures(runs) + process_figures(runs)


@dataclass(frozen=True)
class Summary:
    """One figure over n runs. With one run there is no spread: stdev is
    None; with fewer than interval_runs() there is no interval: ci95 is None
    and ci95_why says so."""

    n: int
    median: float | None = None
    mean: float | None = None
    stdev: float | None = None
    min: float | None = None
    max: float | None = None
    ci95: tuple | None = None  # (low, high) of the median (median_interval)

    @property
    def ci95_why(self) -> str | None:
        """Why there is no interval, in words; None when there is one."""
        if self.ci95 is not None:
            return None
        return f"n = {self.n}: too few runs for a 95 % interval (it takes {interval_runs()})"

    @property
    def cv(self) -> float | None:
        """σ over the mean (None without a spread, or with a mean of 0)."""
        if self.stdev is None or not self.mean:
            return None
        return self.stdev / abs(self.mean)

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "median": self.median,
            "mean": self.mean,
            "stdev": self.stdev,
            "min": self.min,
            "max": self.max,
            "ci95": list(self.ci95) if self.ci95 else None,
            "ci95_why": self.ci95_why,
            "cv": self.cv,
        }


def _scipy() -> Any:
    """scipy.stats, imported on first use: it takes a second or more to
    import, which every command would pay otherwise."""
    from scipy import stats

    return stats


def _values(values: Iterable[float | None]) -> list[float]:
    """The values a figure has: None and NaN (no value in that run) left out."""
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def _order_coverage(n: int, k: int) -> float:
    """How often [k-th smallest, k-th largest] of n runs holds the true
    median: 1 - 2·P(at most k - 1 of n runs fall below it), each run below
    it with probability 1/2 (a continuous law)."""
    return 1.0 - 2.0 * sum(math.comb(n, i) for i in range(k)) / 2**n


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The distribution-free confidence interval of the median of a sample
    (the module docstring): (k-th smallest, k-th largest) for the largest k
    whose coverage is still `confidence`; None when even (min, max) covers
    less (fewer than interval_runs() values)."""
    v = sorted(values)
    n, k = len(v), 0
    while k < n // 2 and _order_coverage(n, k + 1) >= confidence:
        k += 1
    return (v[k - 1], v[n - k]) if k else None


def interval_runs(confidence: float = CONFIDENCE) -> int:
    """The fewest runs that have a median interval at `confidence`."""
    n = 1
    while _order_coverage(n, 1) < confidence:
        n += 1
    return n


def describe(values: Iterable[float | None]) -> "Summary":
    """The Summary of a sample."""
    v = _values(values)
    if not v:
        return Summary(0)
    a = np.asarray(v)
    if len(v) == 1:
        return Summary(1, v[0], v[0], None, v[0], v[0], None)
    return Summary(
        len(v),
        float(np.median(a)),
        float(a.mean()),
        float(a.std(ddof=1)),
        float(a.min()),
        float(a.max()),
        median_interval(v),
    )


def summarise(runs: Sequence[RunResult], figures: Iterable["Figure"] = HEADLINE) -> dict[str, "Summary"]:
    """{figure key: Summary} over RunResults."""
    return {f.key: describe([f.of(r) for r in runs]) for f in figures}


@dataclass(frozen=True)
class Comparison:
    """B against A for one figure."""

    a: Summary
    b: Summary
    ratio: float | None  # mean of B over mean of A
    difference: float | None  # mean of B minus mean of A
    t: float | None  # Student's t (pooled variance); None when it cannot be computed
    p: float | None
    significant: bool | None  # None: cannot tell (fewer than two runs on a side)
    why: str  # the rule's verdict in words

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a.as_dict(),
            "b": self.b.as_dict(),
            "ratio": self.ratio,
            "difference": self.difference,
            "t": self.t,
            "p": self.p,
            "significant": self.significant,
            "why": self.why,
        }


def compare(a_values: Iterable[float | None], b_values: Iterable[float | None]) -> "Comparison":
    """Whether B differs from A (the rule in the module docstring)."""
    a_v, b_v = _values(a_values), _values(b_values)
    a, b = describe(a_v), describe(b_v)
    if not a.n or not b.n:
        return Comparison(a, b, None, None, None, None, None, "no value on one side")
    assert a.mean is not None and b.mean is not None  # set for any n > 0
    difference = b.mean - a.mean
    ratio = b.mean / a.mean if a.mean else None
    if a.n < 2 or b.n < 2:
        return Comparison(
            a, b, ratio, difference, None, None, None, "one run on a side: no spread to judge by (use --runs)"
        )
    assert a.stdev is not None and b.stdev is not None  # set for any n > 1
    beyond = abs(difference) > max(a.stdev, b.stdev)
    if a.stdev == 0 and b.stdev == 0:
        # No spread at all (counts, typically): the t-test is undefined and
        # any difference is beyond the noise.
        same = difference == 0
        return Comparison(
            a,
            b,
            ratio,
            difference,
            None,
            None,
            not same,
            "identical on every run" if same else "different, and constant on every run",
        )
    test = _scipy().ttest_ind(b_v, a_v, equal_var=True)
    t, p = float(test.statistic), float(test.pvalue)
    by_t = p < 1 - CONFIDENCE
    if by_t and beyond:
        why = f"t-test p = {p:.3g} < {1 - CONFIDENCE:.2f} and the difference exceeds both σ"
    elif by_t:
        why = f"t-test p = {p:.3g}, but the difference is within one σ"
    else:
        why = f"t-test p = {p:.3g} ≥ {1 - CONFIDENCE:.2f}"
    return Comparison(a, b, ratio, difference, t, p, by_t and beyond, why)

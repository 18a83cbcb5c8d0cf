"""What the studies' plots share."""

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from scabench.units import duration_us

# Every study's figures are written at this resolution.
PLOT_DPI = 110


def save_figure(fig: Any, path: str | os.PathLike) -> Path:
    """Writes a figure as a PNG at PLOT_DPI and closes it: pyplot keeps
    every figure it made until it is closed, and a study draws many."""
    import matplotlib.pyplot as plt  # the figure's maker has loaded it already

    path = Path(path)
    fig.savefig(path, dpi=PLOT_DPI)
    plt.close(fig)
    return path


def runs_label(counts: Iterable[int]) -> str:
    """What a plotted median stands on, for a legend: its run count, and
    whether whiskers show a spread (only where there were several runs)."""
    counts = sorted(set(counts))
    if not counts:
        return "no run"
    if counts == [1]:
        return "one run each, so no spread"
    many = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"median of {many} runs, whiskers min–max" + (" where more than one" if counts[0] == 1 else "")


def whiskers(spreads: Sequence[Any]) -> tuple[list[int], list[list[float]]]:
    """Which of the plotted medians get whiskers, and how long: (indices,
    [below, above]) for the spreads (measure.campaign.Spread) that stand on
    several runs. One run has no spread, and a whisker of zero length would
    still draw caps that look like one."""
    several = [i for i, s in enumerate(spreads) if s is not None and s.n > 1 and s.median is not None]
    return several, [
        [spreads[i].median - spreads[i].min for i in several],
        [spreads[i].max - spreads[i].median for i in several],
    ]


# The mantissas tried, fewest first, for a log axis's labelled ticks: the
# decades alone serve an axis that spans several, 2 and 5 one that spans a
# decade or two, every digit one that spans less than a factor of 5.
_LOG_MANTISSAS = ((1.0,), (1.0, 2.0, 5.0), tuple(float(m) for m in range(1, 10)))
READABLE_TICKS = 3  # the labelled ticks a log axis gets where it can (two where only two are round)
_MOST_TICKS = 8  # more decades than this are thinned, so that labels do not overlap


def log_ticks(vmin: float, vmax: float) -> list[float]:
    """The labelled ticks of a log axis from vmin to vmax: at least
    two of them wherever the axis spans anything, so that a narrow range
    (send times of 40 to 60 µs, counts of 1 and 2) is never left without
    labels, as matplotlib's decade ticks leave it. Decades where they give
    READABLE_TICKS, then 1-2-5 of each decade, then every digit; then the
    first of these that gave two, else evenly spaced round numbers (a range
    narrower than one digit)."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    lo, hi = sorted((vmin, vmax))
    if not (hi > 0 and np.isfinite(lo) and np.isfinite(hi)):
        return []
    lo = max(lo, hi * 1e-12)
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    two = None  # the first candidate with two ticks: better than evenly spaced ones, worse than three
    for mantissas in _LOG_MANTISSAS:
        ticks = [m * 10.0**e for e in decades for m in mantissas if lo <= m * 10.0**e <= hi]
        if len(ticks) > _MOST_TICKS and mantissas == _LOG_MANTISSAS[0]:
            ticks = ticks[:: math.ceil(len(ticks) / _MOST_TICKS)]
        if len(ticks) >= READABLE_TICKS:
            return ticks
        two = two or (ticks if len(ticks) == 2 else None)
    return two or [float(v) for v in MaxNLocator(nbins=READABLE_TICKS + 1).tick_values(lo, hi) if lo <= v <= hi]


def log_axis_labels(axis: Any, time_us: bool = False) -> None:
    """Readable labels on a log axis, whatever its span: ticks from
    log_ticks, a time in µs scaled (10 µs, 1 ms), a count as a number
    (2, 10, 40), never 2×10⁰. Minor ticks stay unlabelled: the labelled
    ones are chosen so as not to overlap."""
    from matplotlib.ticker import FuncFormatter, Locator, NullFormatter

    class ReadableLogLocator(Locator):
        def __call__(self) -> list[float]:
            assert self.axis is not None  # set once the locator is given to an axis
            return self.tick_values(*self.axis.get_view_interval())

        def tick_values(self, vmin: float, vmax: float) -> list[float]:
            return log_ticks(vmin, vmax)

    def plain(v: float, _: Any = None) -> str:
        if time_us:
            return duration_us(v)
        return f"{v:,.0f}" if v >= 1 and float(v).is_integer() else f"{v:,.3g}"

    axis.set_major_locator(ReadableLogLocator())
    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_formatter(NullFormatter())

"""What the studies' plots share."""
import math

from scabench.units import duration_us


def runs_label(counts):
    """What a plotted median stands on, for a legend: its run count, and
    whether whiskers show a spread (only where there were several runs)."""
    counts = sorted(set(counts))
    if not counts:
        return "no run"
    if counts == [1]:
        return "one run each, so no spread"
    many = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"median of {many} runs, whiskers min–max" + (" where more than one" if counts[0] == 1 else "")


def whiskers(spreads):
    """Which of the plotted medians get whiskers, and how long: (indices,
    [below, above]) for the spreads (measure.campaign.Spread) that stand on
    several runs. One run has no spread, and a whisker of zero length would
    still draw caps that look like one."""
    several = [i for i, s in enumerate(spreads) if s is not None and s.n > 1 and s.median is not None]
    return several, [[spreads[i].median - spreads[i].min for i in several],
                     [spreads[i].max - spreads[i].median for i in several]]


def _at_2_and_5(v):
    """Whether a minor tick of a log axis is at 2 or 5 of its decade."""
    return v > 0 and round(v / 10 ** math.floor(math.log10(v)), 6) in (2, 5)


def log_axis_labels(axis, time_us=False, minor=True):
    """Plain labels on a log axis: a time in µs scaled (10 µs, 1 ms), a
    count as a number (2, 10, 40), never 2×10⁰. Minor ticks are labelled
    only at 2 and 5 of each decade (readable where the axis spans a decade
    or two, too few to overlap), or not at all (minor=False: an axis that
    can span six decades)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    def plain(v, _=None):
        if time_us:
            return duration_us(v)
        return f"{v:,.0f}" if v >= 1 else f"{v:g}"
    axis.set_major_formatter(FuncFormatter(plain))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: plain(v) if _at_2_and_5(v) else "") if minor
                             else NullFormatter())

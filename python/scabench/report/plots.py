"""What the studies' plots share."""


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

"""Figures as people read them on a terminal: a duration in the unit that
suits it (ns, µs, ms, s), a data rate in bit/s, kbit/s ... Ebit/s, a
ratio and a count as themselves. One place, so every table scales alike.

The JSON and CSV keep the raw figures in their fixed units (the key says
which: `_ms`, `_us`, `_bps`); only what is printed is scaled."""

import math

# A duration's units, as multiples of a millisecond, largest first.
_TIME = (("s", 1000.0), ("ms", 1.0), ("µs", 1e-3), ("ns", 1e-6))
_RATE = (
    ("Ebit/s", 1e18),
    ("Pbit/s", 1e15),
    ("Tbit/s", 1e12),
    ("Gbit/s", 1e9),
    ("Mbit/s", 1e6),
    ("kbit/s", 1e3),
    ("bit/s", 1.0),
)
MISSING = "–"


def _number(x):
    """Four figures or so: 189.2, 12.30, 5.123; a whole number as one (30, 1000)."""
    x = float(f"{x:.12g}")  # 0.41 ms in µs is 409.99999999999994: a whole number
    size = abs(x)
    if size >= 1000 or x == int(x):
        return f"{x:.0f}"
    return f"{x:.1f}" if size >= 100 else f"{x:.2f}" if size >= 10 else f"{x:.3f}"


def _missing(x):
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def time_unit(ms):
    """The unit a duration of `ms` milliseconds reads best in."""
    size = abs(ms or 0.0)
    return next(((name, f) for name, f in _TIME if size >= f), _TIME[-1] if size else ("ms", 1.0))


def duration(ms, unit=None):
    """A duration given in milliseconds, e.g. 189226.5 µs -> "189.2 ms".
    unit: (name, factor) from time_unit() to print several figures alike."""
    if _missing(ms):
        return MISSING
    name, factor = unit or time_unit(ms)
    return f"{_number(ms / factor)} {name}"


def duration_us(us, unit=None):
    return duration(None if _missing(us) else us / 1000.0, unit)


def duration_spread(median, low, high):
    """A median duration with its range over the runs, one unit for all
    three (the median's): "663.9 ms (663.2–664.6)"; the median alone where
    the range is none (one run, or runs that agree). In milliseconds."""
    if _missing(median):
        return MISSING
    unit = time_unit(median)
    if _missing(low) or _missing(high) or low == high:
        return duration(median, unit)
    return f"{duration(median, unit)} ({_number(low / unit[1])}–{_number(high / unit[1])})"


def bit_rate(bps):
    """A data rate in bit/s, scaled: 1366122 -> "1.366 Mbit/s"."""
    if _missing(bps):
        return MISSING
    name, factor = next(((n, f) for n, f in _RATE if abs(bps) >= f), _RATE[-1])
    return f"{_number(bps / factor)} {name}"


def ratio(x):
    return MISSING if _missing(x) else f"{x:.3f}"


def percent(x):
    return MISSING if _missing(x) else f"{x:.1f} %"


def count(x):
    """A count; a mean of counts keeps one decimal."""
    if _missing(x):
        return MISSING
    return f"{x:.0f}" if float(x) == int(x) else f"{x:.1f}"


def figure(value, unit, scale=None):
    """A figure in its Figure.unit (measure/stats.py): "ms", "x" or "count"."""
    if unit == "ms":
        return duration(value, scale)
    if unit == "x":
        return ratio(value)
    return count(value)


def wall_time(s):
    """A wall-clock span for progress lines: "12 s", "3.4 min", "1.5 h"."""
    if _missing(s):
        return MISSING
    if s < 60:
        return f"{s:.0f} s"
    return f"{s / 60:.1f} min" if s < 3600 else f"{s / 3600:.1f} h"

"""Figures in the unit that suits them, for people: a duration given in µs
is written in ns, µs, ms or s, with three significant digits."""
import math

_UNITS = ((1e6, "s"), (1e3, "ms"), (1.0, "µs"), (1e-3, "ns"))


def duration_us(us):
    """'63.1 ns', '850 µs', '5.03 ms', '1.20 s'; '–' for None. The unit is picked after
    rounding, so 999.96 µs is '1.00 ms', not '1000 µs'."""
    if us is None or (isinstance(us, float) and math.isnan(us)):
        return "–"
    v = float(us)
    for scale, unit in _UNITS:
        if abs(v) >= scale * 0.9995 or unit == "ns":
            if unit == "s" and abs(v / scale) >= 999.5:
                return f"{v / scale:.0f} s"
            x = float(f"{v / scale:.3g}")  # three significant digits, then the decimals they need
            if x == 0:
                return f"0 {unit}"
            decimals = max(0, 2 - math.floor(math.log10(abs(x))))
            return f"{x:.{decimals}f} {unit}"
    raise AssertionError("unreachable")

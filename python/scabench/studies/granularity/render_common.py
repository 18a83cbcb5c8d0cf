"""What every part of the granularity report shares: number formatting and
lookups on the lab's result (its rows, FUNC's row, a placement's label and
key, a % of the cores as µs per packet). Reads the result only, its rows
typed (rows.py)."""

# The study's abbreviations (the seed's), defined once for the terminal and
# the report: each is said where it is first used (terms_line).
TERMS = {
    "PR": "packet rate, packets per second",
    "N": "taps of each FIR filter",
    "B": "floats per packet",
    "FUNC": "the nine filters in one plain program, no components",
    "W2…W11": "the same work as M components, source and sink included (W2: all filters in one component; "
    "W3, W5, W11: 1, 3, 9 filter components)",
    "U": "user CPU, % of the cores",
    "U+S": "user + system CPU, % of the cores",
    "CSR": "context switches per second",
    "SRC, SNK": "the test application's source and sink",
    "C_tr": "CPU of one transfer: source → sink, less the source alone and the sink's own work",
}


def terms_line(*names: str) -> str:
    """The definitions of these abbreviations, in one line: "PR: packet rate,
    packets per second; ...". Every name must be one of TERMS."""
    return "; ".join(f"{name}: {TERMS[name]}" for name in names)


def fmt(v, digits=2):
    return "–" if v is None else f"{v:.{digits}f}"


def cost(v: float | None, digits: int = 2, unit: str = "") -> str:
    """A CPU cost found as a difference of two noisy measurements (a
    configuration less FUNC, source and sink less the source alone): below
    zero it is no cost but noise, and is said so, "within noise (−12.0 µs)",
    never shown as a (negative) cost."""
    if v is None:
        return "–"
    if v < 0:
        return f"within noise (−{-v:.{digits}f}{unit})"
    return f"{v:.{digits}f}{unit}"


def linear(a: float, b: float, digits: int = 2) -> str:
    """A fitted a + b·B, with its sign where b is negative ("100 − 5.21·B")."""
    return f"{a:.0f} {'−' if b < 0 else '+'} {abs(b):.{digits}f}·B"


def placement_label(row):
    if row.placement == "process":
        return f"process per component, {row.transport}"
    return {"collocated": "collocated (one process)", "standalone": "standalone"}[row.placement]


def placement_key(row):
    return f"{row.placement}/{row.transport}"


def rows_where(result, **match):
    """The FIR rows (FirRow) whose attributes hold the given values."""
    return [r for r in result["configurations"] if all(getattr(r, k) == v for k, v in match.items())]


def func_row(result, experiment, **match):
    found = rows_where(result, experiment=experiment, config="FUNC", **match)
    return found[0] if found else None


def us_per_packet(pct, result):
    """A workload % as µs of CPU per packet."""
    plan = result["plan"]
    return pct / 100.0 * len(plan["cores"]) / plan["pr"] * 1e6

"""What every part of the granularity report shares: number formatting and
lookups on the lab's result (its rows, FUNC's row, a placement's label and
key, a % of the cores as µs per packet). Reads the result only, its rows
typed (rows.py)."""


def fmt(v, digits=2):
    return "–" if v is None else f"{v:.{digits}f}"


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

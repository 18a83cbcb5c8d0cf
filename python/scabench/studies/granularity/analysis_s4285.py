"""The STANAG 4285 part's analysis: at each symbol rate, the widest split
over the narrowest (and over the plain program), and how much of that
overhead is left once the components are collocated
(result["stanag4285"]["summary"]). A function of the lab's rows
(S4285Rows, lab_s4285.py) only."""

from scabench.studies.granularity.analysis import find_row

NARROW, WIDE = 2, 11  # the seed's headline compares these splits


def _ratio(a, b):
    return a / b if a is not None and b is not None and b > 0 else None


def _difference(a, b):
    return a - b if a is not None and b is not None else None


def summarise(rows):
    """At each symbol rate: 11 over 2 components (and 11 over the plain
    program), user and user+system, per placement; and the leftover, how
    much of the 11-vs-2 overhead with a process per component remains once
    the components are collocated: (collocated 11 − collocated 2) /
    (process 11 − process 2)."""
    ratios, leftover = [], []
    for rate in sorted({r.symbol_rate for r in rows}):
        plain = find_row(rows, symbol_rate=rate, config="plain")
        at = {}
        for placement in ("process", "collocated"):
            narrow = find_row(rows, symbol_rate=rate, components=NARROW, placement=placement)
            wide = find_row(rows, symbol_rate=rate, components=WIDE, placement=placement)
            if not (narrow and wide):
                continue
            at[placement] = (narrow, wide)
            entry = {"symbol_rate": rate, "placement": placement}
            for part in ("user", "total"):
                pct = f"{part}_pct"
                entry[f"{part}_wide_vs_narrow"] = _ratio(getattr(wide, pct), getattr(narrow, pct))
                entry[f"{part}_wide_vs_plain"] = _ratio(getattr(wide, pct), getattr(plain, pct)) if plain else None
            ratios.append(entry)
        if len(at) == 2:
            entry = {"symbol_rate": rate}
            for part in ("user", "total"):
                pct = f"{part}_pct"
                (p_narrow, p_wide), (c_narrow, c_wide) = at["process"], at["collocated"]
                process_overhead = _difference(getattr(p_wide, pct), getattr(p_narrow, pct))
                collocated_overhead = _difference(getattr(c_wide, pct), getattr(c_narrow, pct))
                entry[f"{part}_process_overhead_pct"] = process_overhead
                entry[f"{part}_collocated_overhead_pct"] = collocated_overhead
                entry[f"{part}_left_collocated"] = _ratio(collocated_overhead, process_overhead)
            leftover.append(entry)
    return {"narrow": NARROW, "wide": WIDE, "ratios": ratios, "leftover": leftover}

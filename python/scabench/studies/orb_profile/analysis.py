"""What `scabench profile`'s numbers mean: statistics of the timed rounds,
the fixed-plus-per-byte fit of the size sweep, where block processing stops
paying, and the figures derived from a whole result (Eq. 1 per case, cycles
per element). Pure functions on measured numbers; measure.py measures them."""

import numpy as np

from scabench.run.metrics import percentile
from scabench.studies.orb_profile import datarate
from scabench.studies.orb_profile.plan import CASES_BY_NAME


def summarize_rounds(rounds, tsc_hz):
    """Per-round medians and p99s of per-call cycle counts; the result is the
    median of the round medians and the p99 over every call of the rounds."""
    if not rounds or any(len(r) == 0 for r in rounds):
        raise ValueError("every round needs at least one call")
    medians = [float(np.median(r)) for r in rounds]
    p99s = [percentile(r, 99) for r in rounds]
    pooled = np.concatenate([np.asarray(r, dtype=float) for r in rounds])
    median_cycles = float(np.median(medians))
    p99_cycles = percentile(pooled, 99)
    return {
        "median_cycles": median_cycles,
        "p99_cycles": p99_cycles,
        "median_ns": cycles_to_ns(median_cycles, tsc_hz),
        "p99_ns": cycles_to_ns(p99_cycles, tsc_hz),
        "round_median_cycles": medians,
        "round_p99_cycles": p99s,
        "calls_per_round": [len(r) for r in rounds],
    }


def cycles_to_ns(cycles, tsc_hz):
    return float(cycles) * 1e9 / tsc_hz


def fit_fixed_and_per_byte(payload_bytes, cost):
    """cost ≈ fixed + per_byte · bytes, by least squares on relative error
    (each point weighted by 1/cost), so that the small calls, which carry
    the fixed cost, count as much as the big ones. Returns (fixed, per_byte,
    worst relative residual)."""
    x = np.asarray(payload_bytes, dtype=float)
    y = np.asarray(cost, dtype=float)
    if len(x) < 2 or len(np.unique(x)) < 2:
        raise ValueError("the fit needs at least two different sizes")
    w = 1.0 / y
    design = np.column_stack([np.ones_like(x), x]) * w[:, None]
    (fixed, per_byte), *_ = np.linalg.lstsq(design, y * w, rcond=None)
    residual = float(np.max(np.abs((fixed + per_byte * x - y) / y)))
    return float(fixed), float(per_byte), residual


def block_size_analysis(fixed_ns, per_byte_ns, sweep, share=0.10):
    """Where block processing stops paying: by the fit, the block at which the
    fixed cost falls to `share` of the call (fixed = share · (fixed +
    per_byte · B), so B = fixed · (1 - share) / (share · per_byte)); by
    measurement, the smallest block whose throughput is within `share` of
    the best measured."""
    best = max(p["mb_per_s"] for p in sweep)
    measured = next(p for p in sweep if p["mb_per_s"] >= (1 - share) * best)
    # A per-byte cost that adds under 1 % to the biggest call of the sweep is
    # none at all (collocated calls hand the servant the caller's buffer).
    largest = max(p["payload_bytes"] for p in sweep)
    has_per_byte = per_byte_ns * largest > 0.01 * fixed_ns
    model_bytes = fixed_ns * (1 - share) / (share * per_byte_ns) if has_per_byte else None
    # The slope between the two largest blocks: what a byte costs where the
    # fixed cost no longer matters, measured rather than fitted.
    last, previous = sorted(sweep, key=lambda p: p["payload_bytes"])[-2:][::-1]
    largest_ns_per_byte = (
        ((last["median_ns"] - previous["median_ns"]) / (last["payload_bytes"] - previous["payload_bytes"]))
        if "median_ns" in last
        else None
    )
    return {
        "share": share,
        "has_per_byte_cost": bool(has_per_byte),
        "largest_blocks_ns_per_byte": largest_ns_per_byte,
        "model_bytes": model_bytes,
        "asymptotic_mb_per_s": 1e3 / per_byte_ns if has_per_byte else None,
        "measured_bytes": measured["payload_bytes"] if has_per_byte else None,
        "measured_elements": measured["elements"] if has_per_byte else None,
        "best_measured_mb_per_s": best,
    }


def derive(result):
    """Adds to each transport the figures computed from its measurements:
    Eq. 1 per case, cycles per element, the sweep fit and the block size."""
    hz = result["tsc"]["hz"]
    for t in result["transports"].values():
        null = t["cases"]["null"]["median_cycles"]
        for name, m in t["cases"].items():
            case = CASES_BY_NAME[name]
            m["elements"] = case.elements
            m["payload_bytes"] = case.payload_bytes
            m["datarate_bps"] = (
                float(datarate.max_data_rate(m["median_cycles"], hz, case.elements)) if case.elements else None
            )
            if case.elements > 1:
                m["cycles_per_element"] = m["median_cycles"] / case.elements
                m["marginal_cycles_per_element"] = (m["median_cycles"] - null) / case.elements
        sweep = t["sweep"]
        fixed_ns, per_byte_ns, worst = fit_fixed_and_per_byte(
            [p["payload_bytes"] for p in sweep], [p["median_ns"] for p in sweep]
        )
        t["fit"] = {
            "fixed_ns": fixed_ns,
            "per_byte_ns": per_byte_ns,
            "fixed_cycles": fixed_ns * hz / 1e9,
            "per_byte_cycles": per_byte_ns * hz / 1e9,
            "worst_relative_residual": worst,
            "points": len(sweep),
        }
        t["block_size"] = block_size_analysis(fixed_ns, per_byte_ns, sweep)
    return result

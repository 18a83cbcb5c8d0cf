"""The granularity study's analysis: from the lab's measurements to the
figures the report shows. aggregate averages a point's runs; model_parameters
and apply_models put models (1) and (2) (models.py) on every configuration;
summarise gives the W11/FUNC ratios, the CPU per hop, the goal and the models'
errors (result["summary"]). The rows are FirRows (rows.py). Functions of the
measurements only: nothing here runs a process or waits for the machine."""

from typing import Any

from scabench.measure.window import user_split
from scabench.studies.granularity import models as gm
from scabench.studies.granularity.seed import SEED
from scabench.studies.granularity.workloads import WORKLOADS


def aggregate(runs):
    """The mean of several windows; the user split from all their ticks."""
    n = len(runs)
    mean = lambda key: sum(r[key] for r in runs) / n  # noqa: E731
    out = {
        k: mean(k)
        for k in ("total_pct", "csw_per_s", "sar_user_pct", "sar_total_pct", "system_csw_per_s", "foreign_pct")
    }
    out["user_sample_s"] = sum(r["user_sample_s"] for r in runs)
    out["system_sample_s"] = sum(r["system_sample_s"] for r in runs)
    out["split_source"] = runs[0]["split_source"]
    out["user_pct"] = out["total_pct"] * user_split(out["user_sample_s"], out["system_sample_s"])
    out["system_pct"] = out["total_pct"] - out["user_pct"]
    out["runs"] = [
        {
            k: r[k]
            for k in (
                "user_pct",
                "total_pct",
                "csw_per_s",
                "foreign_pct",
                "window_s",
                "user_sample_s",
                "system_sample_s",
            )
        }
        for r in runs
    ]
    # Per process: the mean of each process's share, by name (the last run's names).
    names = [q["name"] for q in runs[-1]["processes"]]
    out["processes"] = []
    for name in names:
        found = [q for r in runs for q in r["processes"] if q["name"] == name]
        out["processes"].append(
            {
                "name": name,
                **{
                    k: sum(q[k] for q in found) / len(found)
                    for k in ("user_pct", "system_pct", "total_pct", "csw_per_s")
                },
            }
        )
    checksums = {r.get("checksum") for r in runs}
    out["checksum"] = checksums.pop() if len(checksums) == 1 else None
    for k in ("work_ns_per_packet", "sink_ns_per_packet", "send_us_p50"):
        if runs[0].get(k) is not None:
            out[k] = sum(r[k] for r in runs) / n
    return out


def model_parameters(calibration, test, test_cold=None):
    """Model (1) and (2) parameters in ns (and cycles), from the calibration
    and the test application (warm; and cold, for model (1)'s bracket)."""
    f = calibration["f_hz"]
    src = test["src"]
    params = {
        "f_hz": f,
        "src": src,
        "snk": calibration["snk"],
        "to_seq": calibration["to_seq"],
        "from_seq": calibration["from_seq"],
        "conversions_per_hop": {"to": 0, "from": 0},
        "transfer": {
            k: {"user": v["user"], "system": v["system"], "total": v["total"]} for k, v in test["transfer"].items()
        },
        "cs_direct_ns": calibration["ctxsw"]["direct_ns"],
        "cs_indirect_c": SEED["cs_indirect_c"],
        "l2_bytes": calibration["l2_bytes"],
        "read_bytes_per_s": calibration["membw"]["read_bytes_per_s"],
        "write_bytes_per_s": calibration["membw"]["write_bytes_per_s"],
        "test_pr": test["pr"],
    }
    if test_cold:
        params["cold"] = {
            "test_pr": test_cold["pr"],
            "src": test_cold["src"],
            "transfer": {
                k: {"user": v["user"], "system": v["system"], "total": v["total"]}
                for k, v in test_cold["transfer"].items()
            },
        }
    return params


def apply_models(row, params, cores):
    """Model (1) and (2) predictions (user and user+system %) for one row
    (a FirRow, rows.py). C_CL is the FUNC program's own FIR time at this
    (N, B) (the seed measured it with OProfile in its standalone program)."""
    ncores = len(cores)
    filters = WORKLOADS[row.workload].filters
    point = f"{row.workload}:{row.taps}x{row.samples}"
    if row.config == "FUNC":
        params.setdefault("c_cl_ns", {})[point] = row.work_ns_per_packet / filters
    c_cl = params.setdefault("c_cl_ns", {}).get(point, 0.0)
    b = row.samples
    key = "collocated/none" if row.placement == "collocated" else f"process/{row.transport}"
    tr = params["transfer"].get(key, {"user": {"a": 0, "b": 0}, "total": {"a": 0, "b": 0}})
    snk = gm.Linear(**params["snk"])(b)
    common = dict(
        components=row.components,
        filters=filters,
        c_cl=c_cl,
        c_snk=snk,
        c_to=gm.Linear(**params["to_seq"])(b),
        c_from=gm.Linear(**params["from_seq"])(b),
        k_to=params["conversions_per_hop"]["to"],
        k_from=params["conversions_per_hop"]["from"],
    )
    user_ns = gm.model1_ns(c_src=max(0.0, params["src"]["user_ns"]), c_tr=gm.Linear(**tr["user"]).cost(b), **common)
    total_ns = gm.model1_ns(c_src=params["src"]["total_ns"], c_tr=gm.Linear(**tr["total"]).cost(b), **common)
    cold = params.get("cold")
    if cold:
        tr_cold = cold["transfer"].get(key, {"total": {"a": 0, "b": 0}})
        cold_ns = gm.model1_ns(c_src=cold["src"]["total_ns"], c_tr=gm.Linear(**tr_cold["total"]).cost(b), **common)
        row.model1_cold_total_pct = gm.pct(cold_ns, row.pr, ncores)
    indirect = gm.indirect_cs_ns(
        row.components,
        b,
        params["l2_bytes"],
        params["read_bytes_per_s"],
        params["write_bytes_per_s"],
        params["cs_indirect_c"],
    )
    row.N, row.B, row.PR = row.taps, row.samples, row.pr
    row.model1_user_pct = gm.pct(user_ns, row.pr, ncores)
    row.model1_total_pct = gm.pct(total_ns, row.pr, ncores)
    row.cs_indirect_ns = indirect
    row.model2_user_pct = gm.model2_pct(row.model1_user_pct, row.csw_per_s, params["cs_direct_ns"], indirect, ncores)
    row.model2_total_pct = gm.model2_pct(row.model1_total_pct, row.csw_per_s, params["cs_direct_ns"], indirect, ncores)
    # The cost per context switch that would close model (1)'s gap on its own.
    gap = row.total_pct - row.model1_total_pct
    row.implied_cs_ns = gap / 100.0 * ncores / row.csw_per_s * 1e9 if row.csw_per_s > 0 else None


GOALS = {"collocated": 1.10, "process": 1.5}


def goal_analysis(result, per_hop):
    """Where W11/FUNC at the smallest N·B stands against the goal (1.10
    collocated, 1.5 process per component), and the N·B at which the measured
    per-hop cost would meet it. FUNC's CPU per packet is its fixed part (the
    timer, the sink) plus its filters, whose cost FUNC measures itself on its
    thread clock and which grows in proportion to N·B (the slope between the
    Fig. 6 points); H hops at h µs each meet ratio R once H·h <= (R - 1)·FUNC."""
    plan = result["plan"]
    rows = result["configurations"]
    to_us = lambda v: v / 100.0 * len(plan["cores"]) / plan["pr"] * 1e6  # noqa: E731
    funcs = sorted((r for r in rows if r.experiment == "fig6" and r.config == "FUNC"), key=lambda r: r.nb)
    if not funcs:
        return []
    work = lambda r: (r.work_ns_per_packet or 0.0) / 1000.0  # noqa: E731
    first = funcs[0]
    slope = (work(funcs[-1]) - work(first)) / (funcs[-1].nb - first.nb) if len(funcs) > 1 else (work(first) / first.nb)
    fixed = to_us(first.total_pct) - work(first)
    out = []
    for h in per_hop:
        if h["nb"] != first.nb or h["placement"] not in GOALS:
            continue
        goal = GOALS[h["placement"]]
        widest = find_row(
            rows, experiment="fig6", nb=first.nb, config=h["widest"], placement=h["placement"], transport=h["transport"]
        )
        hops = widest.components - 1
        func_us = to_us(first.total_pct)
        ratio = widest.total_pct / first.total_pct
        needed_func_us = hops * max(h["vs_func_total_us"], 0.0) / (goal - 1)
        out.append(
            {
                "placement": h["placement"],
                "transport": h["transport"],
                "goal": goal,
                "nb": first.nb,
                "ratio": ratio,
                "met": ratio <= goal,
                "per_hop_us": h["vs_func_total_us"],
                "hops": hops,
                "func_us": func_us,
                "func_fixed_us": fixed,
                "func_us_per_nb": slope,
                # what one hop may cost for the goal at this N·B
                "allowed_per_hop_us": (goal - 1) * func_us / hops,
                # the N·B at which FUNC is heavy enough for the measured hop cost
                "nb_needed": ((needed_func_us - fixed) / slope) if slope > 0 and ratio > goal else None,
            }
        )
    return out


def find_row(rows, **match):
    """The first row (FirRow or S4285Row) whose attributes hold the given values, or None."""
    return next((r for r in rows if all(getattr(r, k) == v for k, v in match.items())), None)


def summarise(result):
    """W11/FUNC ratios, per-hop costs, and model errors at low and high B."""
    rows = result["configurations"]
    plan = result["plan"]
    out: dict[str, list[Any]] = {"ratios": [], "per_hop": [], "model_error": []}
    placements = [tuple(p) for p in plan["placements"]]
    for nb in plan["fig6_nb"]:
        func = find_row(rows, experiment="fig6", config="FUNC", nb=nb)
        for placement, transport in placements:
            for config in plan["fig6_configs"]:
                w = find_row(rows, experiment="fig6", config=config, nb=nb, placement=placement, transport=transport)
                if not (func and w and func.total_pct > 0):
                    continue
                out["ratios"].append(
                    {
                        "nb": nb,
                        "config": config,
                        "placement": placement,
                        "transport": transport,
                        "ratio_total": w.total_pct / func.total_pct,
                        "ratio_user": w.user_pct / func.user_pct if func.user_pct else None,
                        "seed_ratio_total": SEED["w11_func_ratio"].get(nb) if config == "W11" else None,
                    }
                )
            # Per hop: slope of the workload over the hops, W2..W11, as µs of CPU per packet per hop.
            ws = [
                find_row(rows, experiment="fig6", config=c, nb=nb, placement=placement, transport=transport)
                for c in plan["fig6_configs"]
            ]
            ws = [w for w in ws if w]
            if func and ws:
                to_us = lambda v: v / 100.0 * len(plan["cores"]) / plan["pr"] * 1e6  # noqa: E731
                xs = [w.components - 1 for w in ws]
                fit_total = gm.fit_linear(xs, [to_us(w.total_pct) for w in ws])
                fit_user = gm.fit_linear(xs, [to_us(w.user_pct) for w in ws])
                widest = max(ws, key=lambda w: w.components)
                out["per_hop"].append(
                    {
                        "nb": nb,
                        "placement": placement,
                        "transport": transport,
                        "slope_total_us": fit_total.b if len(ws) > 1 else None,
                        "slope_user_us": fit_user.b if len(ws) > 1 else None,
                        "vs_func_total_us": (to_us(widest.total_pct) - to_us(func.total_pct)) / (widest.components - 1),
                        "vs_func_user_us": (to_us(widest.user_pct) - to_us(func.user_pct)) / (widest.components - 1),
                        "widest": widest.config,
                    }
                )
    out["goal"] = goal_analysis(result, out["per_hop"])
    fig7 = [r for r in rows if r.experiment == "fig7" and r.config != "FUNC"]
    if fig7:
        bs = sorted({r.samples for r in fig7})
        for b in (bs[0], bs[-1]):
            for r in (r for r in fig7 if r.samples == b):
                func = find_row(rows, experiment="fig7", config="FUNC", samples=b)
                entry = {"samples": b, "config": r.config, "placement": r.placement, "transport": r.transport}
                for part in ("user", "total"):
                    measured = getattr(r, f"{part}_pct")
                    overhead = measured - (getattr(func, f"{part}_pct") if func else 0.0)
                    for m in ("model1", "model2", "model1_cold"):
                        # model (1) cold is total only, and there only with a cold test application
                        predicted = getattr(r, f"{m}_{part}_pct", None)
                        if predicted is None:
                            continue
                        entry[f"{m}_{part}_error_pct"] = 100.0 * (predicted - measured) / measured if measured else None
                        base = "model1_cold" if m == "model1_cold" else "model1"
                        model_overhead = predicted - (getattr(func, f"{base}_{part}_pct") if func else 0.0)
                        entry[f"{m}_{part}_overhead_share"] = model_overhead / overhead if overhead > 0 else None
                    entry[f"measured_{part}_pct"] = measured
                out["model_error"].append(entry)
    return out


def model_errors(summary: dict) -> list[dict]:
    """The summary's model comparisons, each once. summarise compares the
    lowest and the highest B of the sweep, and where the sweep has a single
    B it writes that B's entries twice; the result files keep that form
    (their bytes are the format), so the readers take each entry once."""
    seen, out = set(), []
    for e in summary["model_error"]:
        key = (e["samples"], e["config"], e["placement"], e["transport"])
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out

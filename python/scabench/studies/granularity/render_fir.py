"""The granularity report's FIR sections (seed Figs. 6 to 10, Table 2, the
CPU per hop and the goal), as Markdown, from the lab's result (its rows are
FirRows, rows.py) and the summary it stored (result["summary"]).

The per-workload sections take the workload's name, so another N·B
workload's rows render through the same code: add it to workloads.WORKLOADS
and its rows get a ratio table and a bar chart of their own."""

from typing import Any

from scabench.report.markdown import md_table
from scabench.studies.granularity import models as gm
from scabench.studies.granularity.analysis import GOALS, model_errors
from scabench.studies.granularity.figures import plot_bars, plot_models, plot_sweep
from scabench.studies.granularity.render_common import (
    cost,
    fmt,
    func_row,
    linear,
    placement_key,
    placement_label,
    rows_where,
    us_per_packet,
)
from scabench.studies.granularity.seed import SEED
from scabench.studies.granularity.workloads import WORKLOADS


def section_ratios(result, workload):
    """The W/FUNC ratios of the seed's Fig. 6 experiment, with the goal."""
    plan = result["plan"]
    lines = []
    rows = []
    for nb in plan["fig6_nb"]:
        func = func_row(result, "fig6", workload=workload, nb=nb)
        if not func:
            continue
        for r in rows_where(result, experiment="fig6", workload=workload, nb=nb):
            if r.config == "FUNC":
                continue
            ratio = r.total_pct / func.total_pct if func.total_pct else None
            widest = r.config == WORKLOADS[workload].configs[-1]
            seed = SEED["w11_func_ratio"].get(nb) if widest and workload == "fir" else None
            goal = GOALS.get(r.placement) if widest and nb == min(plan["fig6_nb"]) else None
            verdict = None
            if goal and ratio is not None:
                verdict = "**reproduced**" if ratio <= goal else "**not reproduced**"
            spread = round_spread(r, func) if "fig6_repeats" in plan else ""  # older results: not in turn
            rows.append(
                [
                    f"{r.config}/FUNC",
                    nb,
                    placement_label(r),
                    fmt(ratio) + spread,
                    fmt(r.user_pct / func.user_pct if func.user_pct else None),
                    fmt(seed) if seed else None,
                    f"≤ {goal} {verdict}" if goal else None,
                ]
            )
    lines.append(md_table(["ratio", "N·B", "placement", "U+S ratio", "U ratio", "seed (U+S)", "goal"], rows))
    if any("(" in str(r[3]) for r in rows):
        lines += [
            "",
            "In brackets: the lowest and highest U+S ratio of a round (FUNC and every configuration "
            "measured in turn, one run each per round).",
        ]
    return "\n".join(lines)


def round_spread(row, func):
    """ " (lowest–highest)" of the ratios round by round, where FUNC and the
    row were measured in turn over several rounds (Lab.fig6_point); else
    nothing."""
    pairs = list(zip(row.runs, func.runs))
    if len(pairs) < 2 or len(row.runs) != len(func.runs):
        return ""
    ratios = [w["total_pct"] / f["total_pct"] for w, f in pairs if f["total_pct"] > 0]
    return f" ({fmt(min(ratios))}–{fmt(max(ratios))})" if ratios else ""


def section_fig6(result, workload, out_dir):
    plan = result["plan"]
    parts = []
    for nb in plan["fig6_nb"]:
        func = func_row(result, "fig6", workload=workload, nb=nb)
        rows = []
        for r in rows_where(result, experiment="fig6", workload=workload, nb=nb):
            ratio = r.total_pct / func.total_pct if func and func.total_pct else None
            rows.append(
                [
                    r.config,
                    r.components,
                    placement_label(r),
                    fmt(r.user_pct, 3),
                    fmt(r.total_pct, 3),
                    fmt(us_per_packet(r.total_pct, result), 1),
                    fmt(r.csw_per_s, 0),
                    fmt(ratio),
                    fmt(r.model1_total_pct, 3),
                    fmt(r.model2_total_pct, 3),
                    fmt(r.model1_cold_total_pct, 3),
                    fmt(r.foreign_pct, 1),
                    {True: "yes", False: "**no**", None: "–"}[r.output_matches_func],
                ]
            )
        taps = func.taps if func else nb // plan["fig6_samples"]
        parts.append(f"### N·B = {nb} (N = {taps}, B = {plan['fig6_samples']}, PR = {plan['pr']})\n")
        parts.append(
            md_table(
                [
                    "config",
                    "M",
                    "placement",
                    "U %",
                    "U+S %",
                    "µs/packet",
                    "CSR /s",
                    "U+S / FUNC",
                    "model (1) U+S %",
                    "model (2) U+S %",
                    "model (1) cold U+S %",
                    "foreign %",
                    "output = FUNC",
                ],
                rows,
            )
        )
        parts.append(f"\n![Fig. 6, N·B = {nb}]({plot_bars(result, workload, nb, out_dir)})\n")
    return "\n".join(parts)


def section_parameters(result):
    p = result["parameters"]
    cal = result["calibration"]
    f = p["f_hz"]
    cyc = lambda ns: gm.cycles(ns, f)  # noqa: E731
    seed = SEED["table2"]
    rows = [
        [
            "seed, sar",
            "user",
            "0 (assumed)",
            "0 (assumed)",
            f"{seed['sar']['user']['to_seq_b']}·B",
            f"{seed['sar']['user']['from_seq_b']}·B",
            f"{seed['sar']['user']['tr_a']} + {seed['sar']['user']['tr_b']}·B",
        ],
        [
            "seed, OProfile",
            "user",
            seed["oprofile"]["user"]["src"],
            seed["oprofile"]["user"]["snk"],
            f"{seed['oprofile']['user']['to_seq_b']}·B",
            f"{seed['oprofile']['user']['from_seq_b']}·B",
            f"{seed['oprofile']['user']['tr_a']} + {seed['oprofile']['user']['tr_b']}·B",
        ],
        [
            "seed, sar",
            "system",
            "0 (assumed)",
            "0 (assumed)",
            "≈ 0",
            "≈ 0",
            f"{seed['sar']['system']['tr_a']} + {seed['sar']['system']['tr_b']}·B",
        ],
        [
            "seed, OProfile",
            "system",
            "≈ 0",
            "≈ 0",
            "≈ 0",
            "≈ 0",
            f"{seed['oprofile']['system']['tr_a']} + {seed['oprofile']['system']['tr_b']}·B",
        ],
    ]
    src, snk = p["src"], gm.Linear(**p["snk"])
    to, frm = gm.Linear(**p["to_seq"]), gm.Linear(**p["from_seq"])
    for key, t in p["transfer"].items():
        for part in ("user", "system"):
            tr = gm.Linear(**t[part])
            rows.append(
                [
                    f"here, {key.replace('/none', '')}",
                    part,
                    f"{cyc(src[f'{part}_ns']):.0f}",
                    linear(cyc(snk.a), cyc(snk.b)) if part == "user" else "0",
                    linear(cyc(to.a), cyc(to.b)) if part == "user" else "0",
                    linear(cyc(frm.a), cyc(frm.b)) if part == "user" else "0",
                    linear(cyc(tr.a), cyc(tr.b)),
                ]
            )
    cold = p.get("cold")
    if cold:
        for key, t in cold["transfer"].items():
            tr = gm.Linear(**t["total"])
            rows.append(
                [
                    f"here, cold, {key.replace('/none', '')}",
                    "user+system",
                    f"{cyc(cold['src']['total_ns']):.0f}",
                    linear(cyc(snk.a), cyc(snk.b)),
                    "–",
                    "–",
                    linear(cyc(tr.a), cyc(tr.b)),
                ]
            )
    ctx = cal["ctxsw"]
    text = [
        md_table(["source", "part", "C_SRC", "C_SNK", "C_toSeq", "C_fromSeq", "C_tr"], rows),
        "",
        f"Cycles at f = {f / 1e9:.2f} GHz here and 1.86 GHz in the seed; B in floats. "
        f'The test application ran at PR = {result["test_application"]["pr"]} packets/s ("here": warm, a '
        "packet every few ms, model (1)'s no-loss parameters)"
        + (
            f' and at {cold["test_pr"]} packets/s ("cold": the experiments\' rate, 25 ms of idle before each '
            "packet, in which this VM's core serves other guests; user and system apart are too rough there "
            "to print)"
            if cold
            else ""
        )
        + ". "
        "C_SRC is the source alone (timer wake-up, packet header, record); C_SNK the checksum sink's work "
        "(thread CPU clock, in process); C_toSeq and C_fromSeq an element-by-element copy between a float "
        "array and a `FloatSequence`, as OSSIE's components did. scabench's ports do neither conversion "
        "(the sender's buffer is lent to the ORB and the receiver reads the ORB's buffer), so the models "
        "here count **0** conversions per hop; the ORB's own copies are in C_tr's b·B. "
        "C_tr = (source → sink) − C_SRC − C_SNK, fitted over B; collocated, where that difference of two "
        "windows cannot resolve a few µs, C_tr is the median duration of the two-way push (a direct call on "
        "the source's thread, so CPU) less C_SNK.",
        "",
        md_table(
            ["context switch", "here", "seed"],
            [
                [
                    "direct cost C_CSd",
                    f"{ctx['direct_ns'] / 1000:.2f} µs = {cyc(ctx['direct_ns']):.0f} cycles",
                    "5 µs = 9300 cycles (estimate; 3.8 µs measured on a 2 GHz Xeon [6])",
                ],
                [
                    "measured by",
                    "two processes on one core passing a byte through pipes "
                    f"({ctx['round_trip_ns'] / 1000:.2f} µs a round trip = 2 switches) minus the same pipe "
                    f"traffic in one process ({ctx['same_process_ns'] / 1000:.2f} µs)",
                    "literature",
                ],
                [
                    "indirect cost C_CSi",
                    f"c = {p['cs_indirect_c']} × (write B + read 2B floats + 10 kB code) "
                    f"at {p['write_bytes_per_s'] / 1e9:.1f} / {p['read_bytes_per_s'] / 1e9:.1f} GB/s, when "
                    f"M·(12·B + 10 kB) > L2 = {p['l2_bytes'] >> 10} KiB, else 0",
                    "the same, c = 0.02",
                ],
            ],
        ),
        "",
        "![transfer cost](transfer.png)",
    ]
    return "\n".join(text)


def section_sweep(result, workload, out_dir):
    rows = rows_where(result, experiment="fig7", workload=workload)
    if not rows:
        return "No B sweep in this plan."
    table = []
    for r in sorted(rows, key=lambda r: (r.samples, r.config != "FUNC", r.config, placement_key(r))):
        table.append(
            [
                r.samples,
                r.taps,
                r.config,
                placement_label(r),
                fmt(r.user_pct),
                fmt(r.total_pct),
                fmt(r.csw_per_s, 0),
                fmt(r.model1_user_pct),
                fmt(r.model2_user_pct),
                fmt(r.model1_total_pct),
                fmt(r.model2_total_pct),
                {True: "yes", False: "**no**", None: "–"}[r.output_matches_func],
            ]
        )
    name = plot_sweep(result, workload, out_dir)
    return "\n".join(
        [
            md_table(
                [
                    "B",
                    "N",
                    "config",
                    "placement",
                    "U %",
                    "U+S %",
                    "CSR /s",
                    "model (1) U",
                    "model (2) U",
                    "model (1) U+S",
                    "model (2) U+S",
                    "output = FUNC",
                ],
                table,
            ),
            "",
            f"![Fig. 7]({name})",
        ]
    )


def section_models(result, workload, out_dir):
    widest = WORKLOADS[workload].configs[-1]
    name = plot_models(result, workload, widest, out_dir)
    errors = [e for e in model_errors(result["summary"]) if e["config"] == widest]
    rows = []
    for e in errors:
        rows.append(
            [
                e["samples"],
                f"{e['placement']}/{e['transport']}".replace("/none", ""),
                fmt(e["measured_user_pct"]),
                fmt(e["model1_user_error_pct"], 0),
                fmt(e["model2_user_error_pct"], 0),
                fmt(e["model1_user_overhead_share"]),
                fmt(e["model2_user_overhead_share"]),
                fmt(e["measured_total_pct"]),
                fmt(e["model1_total_error_pct"], 0),
                fmt(e["model2_total_error_pct"], 0),
                fmt(e["model1_total_overhead_share"]),
                fmt(e["model2_total_overhead_share"]),
                fmt(e.get("model1_cold_total_error_pct"), 0),
                fmt(e.get("model1_cold_total_overhead_share")),
            ]
        )
    implied = [
        r
        for r in result["configurations"]
        if r.config == widest and r.placement == "process" and r.implied_cs_ns is not None
    ]
    cs_rows = [
        [
            r.experiment,
            r.B if r.B is not None else r.samples,
            r.taps,
            r.transport,
            fmt(r.csw_per_s, 0),
            fmt(r.implied_cs_ns / 1000, 1),
        ]
        for r in implied
    ]
    text = [
        f"{widest} at the lowest and the highest B of the sweep. Error: (model − measured) / measured. "
        "Share of the overhead: (model − model (1) of FUNC) / (measured − measured FUNC), the part of "
        "the extra CPU over FUNC that the model accounts for (the seed's claim: model (1) predicts the "
        "major part at low B).",
        "",
        md_table(
            [
                "B",
                "placement",
                "U % measured",
                "model (1) error %",
                "model (2) error %",
                "model (1) share",
                "model (2) share",
                "U+S % measured",
                "model (1) error %",
                "model (2) error %",
                "model (1) share",
                "model (2) share",
                "model (1) cold error %",
                "model (1) cold share",
            ],
            rows,
        ),
    ]
    if name:
        text.append(f"\n![models]({name})")
    if cs_rows:
        direct = result["parameters"]["cs_direct_ns"] / 1000
        text += [
            "",
            f"What one context switch would have to cost for the switches alone to close model (1)'s gap "
            f"(U+S), {widest} with a process per component, against the {direct:.2f} µs measured as the direct "
            "cost:",
            "",
            md_table(["experiment", "B", "N", "transport", "CSR /s", "implied µs per switch"], cs_rows),
        ]
    return "\n".join(text)


def section_per_hop(result):
    f = result["parameters"]["f_hz"]
    rows = []
    for h in result["summary"]["per_hop"]:
        rows.append(
            [
                h["nb"],
                f"{h['placement']}/{h['transport']}".replace("/none", ""),
                cost(h["vs_func_total_us"]),
                f"{gm.cycles(h['vs_func_total_us'] * 1000, f):.0f}" if h["vs_func_total_us"] >= 0 else "–",
                cost(h["vs_func_user_us"]),
                cost(h["slope_total_us"]),
                cost(h["slope_user_us"]),
            ]
        )
    return "\n".join(
        [
            "CPU per packet per hop, µs: (widest configuration − FUNC) / its hops, and the slope of a line "
            "through W2…W11 against their hops (M − 1). A difference below zero is noise of the two "
            'measurements, not a cost: it says "within noise".',
            "",
            md_table(
                [
                    "N·B",
                    "placement",
                    "U+S µs/hop vs FUNC",
                    "cycles/hop",
                    "U µs/hop vs FUNC",
                    "U+S slope µs/hop",
                    "U slope µs/hop",
                ],
                rows,
            ),
        ]
    )


def section_findings(result):
    """The headline numbers, in words, computed from the rows."""
    summary = result["summary"]
    out = []
    by: dict[Any, Any] = {}
    for r in summary["ratios"]:
        if r["seed_ratio_total"] is not None:
            by.setdefault(r["nb"], []).append(r)
    for nb, rs in sorted(by.items()):
        parts = ", ".join(
            f"{r['ratio_total']:.2f} {r['placement']}" + (f"/{r['transport']}" if r["transport"] != "none" else "")
            for r in rs
        )
        out.append(f"- W11/FUNC (U+S) at N·B = {nb}: {parts}; the seed measured {rs[0]['seed_ratio_total']}.")
    hops = [h for h in summary["per_hop"] if h["nb"] == min(result["plan"]["fig6_nb"])]
    if hops:
        out.append(
            "- One hop costs (U+S, per packet): "
            + ", ".join(
                f"{cost(h['vs_func_total_us'], 1, ' µs')} {h['placement']}"
                + (f"/{h['transport']}" if h["transport"] != "none" else "")
                for h in hops
            )
            + "; FUNC's whole packet costs "
            + f"{us_per_packet(func_row(result, 'fig6', nb=hops[0]['nb']).total_pct, result):.1f} µs."
        )
    for g in summary.get("goal", []):
        out.append(
            f"- Goal W11/FUNC ≤ {g['goal']} {g['placement']}"
            + (f"/{g['transport']}" if g["transport"] != "none" else "")
            + f": {'met' if g['met'] else 'not met'} ({g['ratio']:.2f}); "
            + f"a hop may cost {g['allowed_per_hop_us']:.2f} µs"
            + (
                f", or FUNC would need N·B ≈ {g['nb_needed']:.3g} at the measured hop cost."
                if g.get("nb_needed")
                else "."
            )
        )
    errs = [e for e in model_errors(summary) if e["config"] == "W11" and e["placement"] == "process"]
    for e in errs:
        share1, share2 = e["model1_total_overhead_share"], e["model2_total_overhead_share"]
        cold = e.get("model1_cold_total_overhead_share")
        if share1 is None:
            continue
        out.append(
            f"- W11 {e['transport']}, B = {e['samples']}: model (1) accounts for {100 * share1:.0f} % of the "
            f"overhead over FUNC, model (2) for {100 * share2:.0f} %"
            + (f", model (1) with cold parameters for {100 * cold:.0f} %" if cold is not None else "")
            + f" (U+S; model (1) is {e['model1_total_error_pct']:+.0f} % off the whole workload)."
        )
    implied = sorted(
        r.implied_cs_ns
        for r in result["configurations"]
        if r.config == "W11" and r.placement == "process" and r.implied_cs_ns
    )
    if implied:
        out.append(
            f"- For context switches alone to close model (1)'s gap on W11 with a process per component, "
            f"each would have to cost {implied[len(implied) // 2] / 1000:.1f} µs (median); the direct cost "
            f"measured is {result['parameters']['cs_direct_ns'] / 1000:.2f} µs."
        )
    return "\n".join(out)


def section_goal(result):
    rows = []
    for g in result["summary"].get("goal", []):
        rows.append(
            [
                f"{g['placement']}/{g['transport']}".replace("/none", ""),
                g["nb"],
                fmt(g["ratio"]),
                f"≤ {g['goal']}",
                "**reproduced**" if g["met"] else "**not reproduced**",
                cost(g["per_hop_us"]),
                fmt(g["allowed_per_hop_us"]),
                fmt(g["func_us"], 1),
                f"{g['nb_needed']:.0f}" if g["nb_needed"] is not None else "–",
            ]
        )
    if not rows:
        return "No Fig. 6 point in this plan."
    return "\n".join(
        [
            "W11/FUNC (U+S) at the smallest N·B against the goal. A hop may cost at most (goal − 1) × FUNC / hops; "
            "the last column is the N·B at which FUNC would be heavy enough for the measured cost of a hop "
            "(FUNC's CPU per packet: its fixed part, timer and sink, plus its filters, which grow with N·B at the "
            "rate FUNC's own thread clock shows between the Fig. 6 points).",
            "",
            md_table(
                [
                    "placement",
                    "N·B",
                    "W11/FUNC",
                    "goal",
                    "",
                    "µs per hop (measured)",
                    "µs per hop (allowed)",
                    "FUNC µs/packet",
                    "N·B needed",
                ],
                rows,
            ),
        ]
    )


def section_processes(result, workload):
    plan = result["plan"]
    nb = min(plan["fig6_nb"])
    widest = WORKLOADS[workload].configs[-1]
    parts = []
    for r in rows_where(result, experiment="fig6", workload=workload, nb=nb, config=widest):
        rows = [
            [q["name"], fmt(q["user_pct"], 3), fmt(q["system_pct"], 3), fmt(q["total_pct"], 3), fmt(q["csw_per_s"], 0)]
            for q in r.processes
        ]
        parts.append(f"**{widest}, {placement_label(r)}** (N·B = {nb})\n")
        parts.append(md_table(["process", "U %", "S %", "U+S %", "switches /s"], rows) + "\n")
    return "\n".join(parts)

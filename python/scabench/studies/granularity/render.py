"""The granularity report: Markdown + HTML (report.py) with matplotlib PNGs,
from the result of granularity.Lab.run().

Sections are functions of the result, and the per-workload ones take the
workload's name, so another N·B workload's rows render through the same
code: add it to workloads.WORKLOADS and its rows get a ratio table and a bar
chart of their own. The STANAG 4285 transmitter (result["stanag4285"]) has
a section of its own (section_s4285); a result with only that part renders
only it."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from scabench.studies.granularity import models as gm  # noqa: E402
from scabench.studies.granularity.analysis import GOALS  # noqa: E402
from scabench.report.markdown import md_table, write_report  # noqa: E402
from scabench.studies.granularity.seed import SEED  # noqa: E402
from scabench.studies.granularity.workloads import WORKLOADS  # noqa: E402

COLOURS = {"process/tcp": "#1f5fa8", "process/unix": "#4aa3df", "collocated/none": "#2e8b57",
           "standalone/none": "#777777"}


def _f(v, digits=2):
    return "–" if v is None else f"{v:.{digits}f}"


def _placement(row):
    if row["placement"] == "process":
        return f"process per component, {row['transport']}"
    return {"collocated": "collocated (one process)", "standalone": "standalone"}[row["placement"]]


def _key(row):
    return f"{row['placement']}/{row['transport']}"


def _rows(result, **match):
    return [r for r in result["configurations"] if all(r.get(k) == v for k, v in match.items())]


def _b_axis(ax, bs):
    """A log B axis labelled at the packet sizes measured."""
    ax.set_xscale("log")
    ax.set_xticks(bs)
    ax.set_xticklabels([str(b) for b in bs], fontsize=8)
    ax.xaxis.set_minor_formatter(NullFormatter())


def _func(result, experiment, **match):
    found = _rows(result, experiment=experiment, config="FUNC", **match)
    return found[0] if found else None


def _us(pct, result):
    """A workload % as µs of CPU per packet."""
    plan = result["plan"]
    return pct / 100.0 * len(plan["cores"]) / plan["pr"] * 1e6


# ------------------------------------------------------------------ figures

def plot_bars(result, workload, nb, out_dir):
    """Seed Fig. 6: U and U+S of FUNC and each configuration, per placement."""
    rows = _rows(result, experiment="fig6", workload=workload, nb=nb)
    func = _func(result, "fig6", workload=workload, nb=nb)
    configs = [c for c in WORKLOADS[workload].configs if any(r["config"] == c for r in rows)]
    keys = [k for k in COLOURS if any(_key(r) == k for r in rows if r["config"] != "FUNC")]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / max(1, len(keys))
    if func:
        ax.bar(-1, func["total_pct"], 0.5, color=COLOURS["standalone/none"], alpha=0.35)
        ax.bar(-1, func["user_pct"], 0.5, color=COLOURS["standalone/none"], label="FUNC")
    for i, key in enumerate(keys):
        xs, user, total = [], [], []
        for j, c in enumerate(configs):
            r = next((r for r in rows if r["config"] == c and _key(r) == key), None)
            if r:
                xs.append(j + (i - (len(keys) - 1) / 2) * width)
                user.append(r["user_pct"])
                total.append(r["total_pct"])
        label = key.replace("/none", "").replace("process/", "process, ")
        ax.bar(xs, total, width, color=COLOURS[key], alpha=0.35)
        ax.bar(xs, user, width, color=COLOURS[key], label=label)
    ax.set_xticks([-1] + list(range(len(configs))), ["FUNC"] + configs)
    ax.set_ylabel("CPU workload (% of the core)")
    ax.set_title(f"{workload}: N·B = {nb}, B = {result['plan']['fig6_samples']}, PR = {result['plan']['pr']}"
                 " (solid: user, light: user+system)", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    name = f"fig6_{workload}_nb{nb}.png"
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=110)
    plt.close(fig)
    return name


def plot_sweep(result, workload, out_dir):
    """Seed Fig. 7: U and U+S against B, one panel per placement."""
    rows = _rows(result, experiment="fig7", workload=workload)
    if not rows:
        return None
    keys = [k for k in COLOURS if k != "standalone/none" and any(_key(r) == k for r in rows)]
    configs = [c for c in WORKLOADS[workload].configs if any(r["config"] == c for r in rows)]
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.8), sharey=True, squeeze=False)
    markers = dict(zip(WORKLOADS[workload].configs, "osD^v<>"))
    for ax, key in zip(axes[0], keys):
        func = sorted((r for r in rows if r["config"] == "FUNC"), key=lambda r: r["samples"])
        ax.plot([r["samples"] for r in func], [r["total_pct"] for r in func], "k--", label="FUNC U+S")
        for c in configs:
            pts = sorted((r for r in rows if r["config"] == c and _key(r) == key), key=lambda r: r["samples"])
            line, = ax.plot([r["samples"] for r in pts], [r["total_pct"] for r in pts], marker=markers[c],
                            label=f"{c} U+S")
            ax.plot([r["samples"] for r in pts], [r["user_pct"] for r in pts], marker=markers[c], ls=":",
                    color=line.get_color(), alpha=0.7, label=f"{c} U")
        _b_axis(ax, sorted({r["samples"] for r in rows}))
        ax.set_xlabel("B (floats per packet)")
        ax.set_title(key.replace("/none", "").replace("/", ", "), fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("CPU workload (% of the core)")
    axes[0][-1].legend(fontsize=7, ncol=2)
    name = f"fig7_{workload}.png"
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=110)
    plt.close(fig)
    return name


def plot_models(result, workload, config, out_dir):
    """Seed Figs. 9 and 10: measured vs model (1) vs model (2) against B."""
    rows = _rows(result, experiment="fig7", workload=workload, config=config)
    if not rows:
        return None
    keys = [k for k in COLOURS if any(_key(r) == k for r in rows)]
    funcs = sorted(_rows(result, experiment="fig7", workload=workload, config="FUNC"), key=lambda r: r["samples"])
    fig, axes = plt.subplots(2, len(keys), figsize=(4.2 * len(keys), 6.4), sharex=True, squeeze=False)
    for col, key in enumerate(keys):
        pts = sorted((r for r in rows if _key(r) == key), key=lambda r: r["samples"])
        bs = [r["samples"] for r in pts]
        for row_i, part in enumerate(("user", "total")):
            ax = axes[row_i][col]
            ax.plot([r["samples"] for r in funcs], [r[f"{part}_pct"] for r in funcs], ":", color="#777777",
                    label="FUNC measured")
            ax.plot(bs, [r[f"{part}_pct"] for r in pts], "D-", color="#b22222", label="measured")
            ax.plot(bs, [r[f"model1_{part}_pct"] for r in pts], "o-", color="#555555", label="model (1)")
            ax.plot(bs, [r[f"model2_{part}_pct"] for r in pts], "s--", color="#1f5fa8", label="model (2)")
            if part == "total" and all("model1_cold_total_pct" in r for r in pts):
                ax.plot(bs, [r["model1_cold_total_pct"] for r in pts], "^:", color="#8a5a00",
                        label="model (1), cold parameters")
                ax.legend(fontsize=7)
            _b_axis(ax, bs)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.set_title(f"{config}, {key.replace('/none', '').replace('/', ', ')}: "
                         f"{'user' if part == 'user' else 'user+system'}", fontsize=9)
            if row_i == 1:
                ax.set_xlabel("B (floats per packet)")
            if col == 0:
                ax.set_ylabel("% of the core")
    axes[0][0].legend(fontsize=8)
    name = f"models_{workload}_{config}.png"
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=110)
    plt.close(fig)
    return name


def plot_transfer(result, out_dir):
    """C_tr against B from the test application, with the fitted lines."""
    transfer = result["test_application"]["transfer"]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for key, t in transfer.items():
        xs = [q["samples"] for q in t["points"]]
        colour = COLOURS.get(key, None)
        ax.plot(xs, [q["tr_total_ns"] / 1000 for q in t["points"]], "o", color=colour)
        ax.plot(xs, [q["tr_user_ns"] / 1000 for q in t["points"]], "x", color=colour)
        fit_t, fit_u = gm.Linear(**t["total"]), gm.Linear(**t["user"])
        grid = [min(xs), max(xs)]
        ax.plot(grid, [fit_t(x) / 1000 for x in grid], "-", color=colour, label=f"{key.replace('/none', '')} U+S")
        ax.plot(grid, [fit_u(x) / 1000 for x in grid], ":", color=colour, label=f"{key.replace('/none', '')} U")
    ax.set_xlabel("B (floats per packet)")
    ax.set_ylabel("C_tr (µs of CPU per transfer)")
    ax.set_title("Test application (seed Fig. 8): cost of one transfer", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    name = "transfer.png"
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=110)
    plt.close(fig)
    return name


# ------------------------------------------------------------------ sections

def section_ratios(result, workload):
    """The W/FUNC ratios of the seed's Fig. 6 experiment, with the goal."""
    plan = result["plan"]
    lines = []
    rows = []
    for nb in plan["fig6_nb"]:
        func = _func(result, "fig6", workload=workload, nb=nb)
        if not func:
            continue
        for r in _rows(result, experiment="fig6", workload=workload, nb=nb):
            if r["config"] == "FUNC":
                continue
            ratio = r["total_pct"] / func["total_pct"] if func["total_pct"] else None
            widest = r["config"] == WORKLOADS[workload].configs[-1]
            seed = SEED["w11_func_ratio"].get(nb) if widest and workload == "fir" else None
            goal = GOALS.get(r["placement"]) if widest and nb == min(plan["fig6_nb"]) else None
            verdict = None
            if goal and ratio is not None:
                verdict = "**reproduced**" if ratio <= goal else "**not reproduced**"
            rows.append([f"{r['config']}/FUNC", nb, _placement(r), _f(ratio), _f(r["user_pct"] / func["user_pct"]
                         if func["user_pct"] else None), _f(seed) if seed else None,
                         f"≤ {goal} {verdict}" if goal else None])
    lines.append(md_table(["ratio", "N·B", "placement", "U+S ratio", "U ratio", "seed (U+S)", "goal"], rows))
    return "\n".join(lines)


def section_fig6(result, workload, out_dir):
    plan = result["plan"]
    parts = []
    for nb in plan["fig6_nb"]:
        func = _func(result, "fig6", workload=workload, nb=nb)
        rows = []
        for r in _rows(result, experiment="fig6", workload=workload, nb=nb):
            ratio = r["total_pct"] / func["total_pct"] if func and func["total_pct"] else None
            rows.append([r["config"], r["components"], _placement(r), _f(r["user_pct"], 3), _f(r["total_pct"], 3),
                         _f(_us(r["total_pct"], result), 1), _f(r["csw_per_s"], 0), _f(ratio),
                         _f(r["model1_total_pct"], 3), _f(r["model2_total_pct"], 3),
                         _f(r.get("model1_cold_total_pct"), 3), _f(r["foreign_pct"], 1),
                         {True: "yes", False: "**no**", None: "–"}[r["output_matches_func"]]])
        taps = func["taps"] if func else nb // plan["fig6_samples"]
        parts.append(f"### N·B = {nb} (N = {taps}, B = {plan['fig6_samples']}, PR = {plan['pr']})\n")
        parts.append(md_table(["config", "M", "placement", "U %", "U+S %", "µs/packet", "CSR /s", "U+S / FUNC",
                               "model (1) U+S %", "model (2) U+S %", "model (1) cold U+S %", "foreign %",
                               "output = FUNC"], rows))
        parts.append(f"\n![Fig. 6, N·B = {nb}]({plot_bars(result, workload, nb, out_dir)})\n")
    return "\n".join(parts)


def section_parameters(result):
    p = result["parameters"]
    cal = result["calibration"]
    f = p["f_hz"]
    cyc = lambda ns: gm.cycles(ns, f)  # noqa: E731
    seed = SEED["table2"]
    rows = [
        ["seed, sar", "user", "0 (assumed)", "0 (assumed)", f"{seed['sar']['user']['to_seq_b']}·B",
         f"{seed['sar']['user']['from_seq_b']}·B", f"{seed['sar']['user']['tr_a']} + {seed['sar']['user']['tr_b']}·B"],
        ["seed, OProfile", "user", seed["oprofile"]["user"]["src"], seed["oprofile"]["user"]["snk"],
         f"{seed['oprofile']['user']['to_seq_b']}·B", f"{seed['oprofile']['user']['from_seq_b']}·B",
         f"{seed['oprofile']['user']['tr_a']} + {seed['oprofile']['user']['tr_b']}·B"],
        ["seed, sar", "system", "0 (assumed)", "0 (assumed)", "≈ 0", "≈ 0",
         f"{seed['sar']['system']['tr_a']} + {seed['sar']['system']['tr_b']}·B"],
        ["seed, OProfile", "system", "≈ 0", "≈ 0", "≈ 0", "≈ 0",
         f"{seed['oprofile']['system']['tr_a']} + {seed['oprofile']['system']['tr_b']}·B"],
    ]
    src, snk = p["src"], gm.Linear(**p["snk"])
    to, frm = gm.Linear(**p["to_seq"]), gm.Linear(**p["from_seq"])
    for key, t in p["transfer"].items():
        for part in ("user", "system"):
            tr = gm.Linear(**t[part])
            rows.append([f"here, {key.replace('/none', '')}", part,
                         f"{cyc(src[f'{part}_ns']):.0f}",
                         f"{cyc(snk.a):.0f} + {cyc(snk.b):.2f}·B" if part == "user" else "0",
                         f"{cyc(to.a):.0f} + {cyc(to.b):.2f}·B" if part == "user" else "0",
                         f"{cyc(frm.a):.0f} + {cyc(frm.b):.2f}·B" if part == "user" else "0",
                         f"{cyc(tr.a):.0f} + {cyc(tr.b):.2f}·B"])
    cold = p.get("cold")
    if cold:
        for key, t in cold["transfer"].items():
            tr = gm.Linear(**t["total"])
            rows.append([f"here, cold, {key.replace('/none', '')}", "user+system", f"{cyc(cold['src']['total_ns']):.0f}",
                         f"{cyc(snk.a):.0f} + {cyc(snk.b):.2f}·B", "–", "–", f"{cyc(tr.a):.0f} + {cyc(tr.b):.2f}·B"])
    ctx = cal["ctxsw"]
    text = [md_table(["source", "part", "C_SRC", "C_SNK", "C_toSeq", "C_fromSeq", "C_tr"], rows), "",
            f"Cycles at f = {f / 1e9:.2f} GHz here and 1.86 GHz in the seed; B in floats. "
            f"The test application ran at PR = {result['test_application']['pr']} packets/s (\"here\": warm, a "
            "packet every few ms, model (1)'s no-loss parameters)"
            + (f" and at {cold['test_pr']} packets/s (\"cold\": the experiments' rate, 25 ms of idle before each "
               "packet, in which this VM's core serves other guests; user and system apart are too rough there "
               "to print)" if cold else "") + ". "
            "C_SRC is the source alone (timer wake-up, packet header, record); C_SNK the checksum sink's work "
            "(thread CPU clock, in process); C_toSeq and C_fromSeq an element-by-element copy between a float "
            "array and a `FloatSequence`, as OSSIE's components did. scabench's ports do neither conversion "
            "(the sender's buffer is lent to the ORB and the receiver reads the ORB's buffer), so the models "
            "here count **0** conversions per hop; the ORB's own copies are in C_tr's b·B. "
            "C_tr = (source → sink) − C_SRC − C_SNK, fitted over B; collocated, where that difference of two "
            "windows cannot resolve a few µs, C_tr is the median duration of the two-way push (a direct call on "
            "the source's thread, so CPU) less C_SNK.", "",
            md_table(["context switch", "here", "seed"],
                     [["direct cost C_CSd", f"{ctx['direct_ns'] / 1000:.2f} µs = {cyc(ctx['direct_ns']):.0f} cycles",
                       "5 µs = 9300 cycles (estimate; 3.8 µs measured on a 2 GHz Xeon [6])"],
                      ["measured by", "two processes on one core passing a byte through pipes "
                       f"({ctx['round_trip_ns'] / 1000:.2f} µs a round trip = 2 switches) minus the same pipe "
                       f"traffic in one process ({ctx['same_process_ns'] / 1000:.2f} µs)", "literature"],
                      ["indirect cost C_CSi", f"c = {p['cs_indirect_c']} × (write B + read 2B floats + 10 kB code) "
                       f"at {p['write_bytes_per_s'] / 1e9:.1f} / {p['read_bytes_per_s'] / 1e9:.1f} GB/s, when "
                       f"M·(12·B + 10 kB) > L2 = {p['l2_bytes'] >> 10} KiB, else 0", "the same, c = 0.02"]]),
            "", "![transfer cost](transfer.png)"]
    return "\n".join(text)


def section_sweep(result, workload, out_dir):
    rows = _rows(result, experiment="fig7", workload=workload)
    if not rows:
        return "No B sweep in this plan."
    table = []
    for r in sorted(rows, key=lambda r: (r["samples"], r["config"] != "FUNC", r["config"], _key(r))):
        table.append([r["samples"], r["taps"], r["config"], _placement(r), _f(r["user_pct"]), _f(r["total_pct"]),
                      _f(r["csw_per_s"], 0), _f(r["model1_user_pct"]), _f(r["model2_user_pct"]),
                      _f(r["model1_total_pct"]), _f(r["model2_total_pct"]),
                      {True: "yes", False: "**no**", None: "–"}[r["output_matches_func"]]])
    name = plot_sweep(result, workload, out_dir)
    return "\n".join([md_table(["B", "N", "config", "placement", "U %", "U+S %", "CSR /s", "model (1) U",
                                "model (2) U", "model (1) U+S", "model (2) U+S", "output = FUNC"], table),
                      "", f"![Fig. 7]({name})"])


def section_models(result, workload, out_dir):
    widest = WORKLOADS[workload].configs[-1]
    name = plot_models(result, workload, widest, out_dir)
    errors = [e for e in result["summary"]["model_error"] if e["config"] == widest]
    rows = []
    for e in errors:
        rows.append([e["samples"], f"{e['placement']}/{e['transport']}".replace("/none", ""),
                     _f(e["measured_user_pct"]), _f(e["model1_user_error_pct"], 0), _f(e["model2_user_error_pct"], 0),
                     _f(e["model1_user_overhead_share"]), _f(e["model2_user_overhead_share"]),
                     _f(e["measured_total_pct"]), _f(e["model1_total_error_pct"], 0),
                     _f(e["model2_total_error_pct"], 0), _f(e["model1_total_overhead_share"]),
                     _f(e["model2_total_overhead_share"]), _f(e.get("model1_cold_total_error_pct"), 0),
                     _f(e.get("model1_cold_total_overhead_share"))])
    implied = [r for r in result["configurations"] if r["config"] == widest and r["placement"] == "process"
               and r.get("implied_cs_ns") is not None]
    cs_rows = [[r["experiment"], r["B"] if "B" in r else r["samples"], r["taps"], r["transport"], _f(r["csw_per_s"], 0),
                _f(r["implied_cs_ns"] / 1000, 1)] for r in implied]
    text = [f"{widest} at the lowest and the highest B of the sweep. Error: (model − measured) / measured. "
            "Share of the overhead: (model − model (1) of FUNC) / (measured − measured FUNC), the part of "
            "the extra CPU over FUNC that the model accounts for (the seed's claim: model (1) predicts the "
            "major part at low B).", "",
            md_table(["B", "placement", "U % measured", "model (1) error %", "model (2) error %",
                      "model (1) share", "model (2) share", "U+S % measured", "model (1) error %",
                      "model (2) error %", "model (1) share", "model (2) share", "model (1) cold error %",
                      "model (1) cold share"], rows)]
    if name:
        text.append(f"\n![models]({name})")
    if cs_rows:
        direct = result["parameters"]["cs_direct_ns"] / 1000
        text += ["", f"What one context switch would have to cost for the switches alone to close model (1)'s gap "
                 f"(U+S), {widest} with a process per component, against the {direct:.2f} µs measured as the direct "
                 "cost:", "", md_table(["experiment", "B", "N", "transport", "CSR /s", "implied µs per switch"],
                                       cs_rows)]
    return "\n".join(text)


def section_per_hop(result):
    f = result["parameters"]["f_hz"]
    rows = []
    for h in result["summary"]["per_hop"]:
        rows.append([h["nb"], f"{h['placement']}/{h['transport']}".replace("/none", ""),
                     _f(h["vs_func_total_us"]), f"{gm.cycles(h['vs_func_total_us'] * 1000, f):.0f}",
                     _f(h["vs_func_user_us"]), _f(h["slope_total_us"]), _f(h["slope_user_us"])])
    return "\n".join([
        "CPU per packet per hop, µs: (widest configuration − FUNC) / its hops, and the slope of a line "
        "through W2…W11 against their hops (M − 1).", "",
        md_table(["N·B", "placement", "U+S µs/hop vs FUNC", "cycles/hop", "U µs/hop vs FUNC",
                  "U+S slope µs/hop", "U slope µs/hop"], rows)])


def section_findings(result):
    """The headline numbers, in words, computed from the rows."""
    summary = result["summary"]
    out = []
    by = {}
    for r in summary["ratios"]:
        if r["seed_ratio_total"] is not None:
            by.setdefault(r["nb"], []).append(r)
    for nb, rs in sorted(by.items()):
        parts = ", ".join(f"{r['ratio_total']:.2f} {r['placement']}" + (f"/{r['transport']}" if r['transport'] != "none"
                                                                      else "") for r in rs)
        out.append(f"- W11/FUNC (U+S) at N·B = {nb}: {parts}; the seed measured {rs[0]['seed_ratio_total']}.")
    hops = [h for h in summary["per_hop"] if h["nb"] == min(result["plan"]["fig6_nb"])]
    if hops:
        out.append("- One hop costs (U+S, per packet): " + ", ".join(
            f"{h['vs_func_total_us']:.1f} µs {h['placement']}" + (f"/{h['transport']}" if h['transport'] != "none"
                                                                 else "") for h in hops)
            + f"; FUNC's whole packet costs {_us(_func(result, 'fig6', nb=hops[0]['nb'])['total_pct'], result):.1f} µs.")
    for g in summary.get("goal", []):
        out.append(f"- Goal W11/FUNC ≤ {g['goal']} {g['placement']}"
                   + (f"/{g['transport']}" if g["transport"] != "none" else "")
                   + f": {'met' if g['met'] else 'not met'} ({g['ratio']:.2f}); a hop may cost {g['allowed_per_hop_us']:.2f} µs"
                   + (f", or FUNC would need N·B ≈ {g['nb_needed']:.3g} at the measured hop cost."
                      if g.get("nb_needed") else "."))
    errs = [e for e in summary["model_error"] if e["config"] == "W11" and e["placement"] == "process"]
    for e in errs:
        share1, share2 = e["model1_total_overhead_share"], e["model2_total_overhead_share"]
        cold = e.get("model1_cold_total_overhead_share")
        if share1 is None:
            continue
        out.append(f"- W11 {e['transport']}, B = {e['samples']}: model (1) accounts for {100 * share1:.0f} % of the "
                   f"overhead over FUNC, model (2) for {100 * share2:.0f} %"
                   + (f", model (1) with cold parameters for {100 * cold:.0f} %" if cold is not None else "")
                   + f" (U+S; model (1) is {e['model1_total_error_pct']:+.0f} % off the whole workload).")
    implied = sorted(r["implied_cs_ns"] for r in result["configurations"]
                     if r["config"] == "W11" and r["placement"] == "process" and r.get("implied_cs_ns"))
    if implied:
        out.append(f"- For context switches alone to close model (1)'s gap on W11 with a process per component, "
                   f"each would have to cost {implied[len(implied) // 2] / 1000:.1f} µs (median); the direct cost "
                   f"measured is {result['parameters']['cs_direct_ns'] / 1000:.2f} µs.")
    return "\n".join(out)


def section_goal(result):
    rows = []
    for g in result["summary"].get("goal", []):
        rows.append([f"{g['placement']}/{g['transport']}".replace("/none", ""), g["nb"], _f(g["ratio"]),
                     f"≤ {g['goal']}", "**reproduced**" if g["met"] else "**not reproduced**",
                     _f(g["per_hop_us"]), _f(g["allowed_per_hop_us"]), _f(g["func_us"], 1),
                     f"{g['nb_needed']:.0f}" if g["nb_needed"] is not None else "–"])
    if not rows:
        return "No Fig. 6 point in this plan."
    return "\n".join([
        "W11/FUNC (U+S) at the smallest N·B against the goal. A hop may cost at most (goal − 1) × FUNC / hops; "
        "the last column is the N·B at which FUNC would be heavy enough for the measured cost of a hop "
        "(FUNC's CPU per packet: its fixed part, timer and sink, plus its filters, which grow with N·B at the "
        "rate FUNC's own thread clock shows between the Fig. 6 points).", "",
        md_table(["placement", "N·B", "W11/FUNC", "goal", "", "µs per hop (measured)", "µs per hop (allowed)",
                  "FUNC µs/packet", "N·B needed"], rows)])


def section_processes(result, workload):
    plan = result["plan"]
    nb = min(plan["fig6_nb"])
    widest = WORKLOADS[workload].configs[-1]
    parts = []
    for r in _rows(result, experiment="fig6", workload=workload, nb=nb, config=widest):
        rows = [[q["name"], _f(q["user_pct"], 3), _f(q["system_pct"], 3), _f(q["total_pct"], 3),
                 _f(q["csw_per_s"], 0)] for q in r["processes"]]
        parts.append(f"**{widest}, {_placement(r)}** (N·B = {nb})\n")
        parts.append(md_table(["process", "U %", "S %", "U+S %", "switches /s"], rows) + "\n")
    return "\n".join(parts)


# ------------------------------------------------------------------ STANAG 4285

S4285_PLACEMENTS = {"standalone": COLOURS["standalone/none"], "process": COLOURS["process/tcp"],
                    "collocated": COLOURS["collocated/none"]}


def _s4285_label(row):
    if row["config"] == "plain":
        return "plain program"
    return f"{row['components']} components, " + ("a process each" if row["placement"] == "process" else "collocated")


def _total_spread(row):
    """The median U+S, and the runs' lowest–highest when there are several."""
    low, high = row["total_spread"]
    return f"{row['total_pct']:.3f}" + (f" ({low:.3f}–{high:.3f})" if len(row["runs"]) > 1 else "")


def plot_s4285(result, out_dir):
    """The seed's Figs. 3 and 4 in one: per symbol rate, U (solid) and U+S
    (light, with the runs' spread) of the plain program and every split."""
    rows = result["stanag4285"]["configurations"]
    rates = sorted({r["symbol_rate"] for r in rows})
    configs = sorted({(r["components"], r["config"]) for r in rows})
    fig, axes = plt.subplots(1, len(rates), figsize=(max(6.5, 4.0 * len(rates)), 3.8), squeeze=False)
    for ax, rate in zip(axes[0], rates):
        width = 0.38
        for j, (_, config) in enumerate(configs):
            found = [r for r in rows if r["symbol_rate"] == rate and r["config"] == config]
            for r in found:
                shift = 0.0 if r["placement"] == "standalone" else (-width / 2 if r["placement"] == "process"
                                                                   else width / 2)
                colour = S4285_PLACEMENTS[r["placement"]]
                low, high = r["total_spread"]
                ax.bar(j + shift, r["total_pct"], width, color=colour, alpha=0.35,
                       yerr=[[r["total_pct"] - low], [high - r["total_pct"]]], capsize=2)
                if r["user_pct"] is not None:
                    ax.bar(j + shift, r["user_pct"], width, color=colour)
        ax.set_xticks(range(len(configs)), ["plain" if c == "plain" else c.replace("split", "") for _, c in configs])
        ax.set_title(f"{rate} symbols/s ({rate / 256:.3g} frames/s)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_xlabel("components")
    axes[0][0].set_ylabel("CPU workload (% of the core)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in S4285_PLACEMENTS.values()]
    axes[0][-1].legend(handles, ["plain program", "a process per component", "collocated"], fontsize=7)
    fig.suptitle("STANAG 4285 transmitter (seed Figs. 3 and 4): solid user, light user+system", fontsize=9)
    name = "s4285.png"
    fig.tight_layout()
    fig.savefig(Path(out_dir) / name, dpi=110)
    plt.close(fig)
    return name


def s4285_findings(result):
    """The headline numbers in words, computed from the summary."""
    part = result["stanag4285"]
    seed = SEED["s4285"]
    summary = part["summary"]
    wide, narrow = summary["wide"], summary["narrow"]
    out = []
    for r in summary["ratios"]:
        where = "with a process per component" if r["placement"] == "process" else "collocated"
        out.append(f"- {r['symbol_rate']} symbols/s, {where}: {wide} components cost "
                   f"{_f(r['user_wide_vs_narrow'])}× the {narrow}-component user workload and "
                   f"{_f(r['total_wide_vs_narrow'])}× its user+system; {_f(r['user_wide_vs_plain'])}× and "
                   f"{_f(r['total_wide_vs_plain'])}× the plain program's.")
    for e in summary["leftover"]:
        left = e["total_left_collocated"]
        out.append(f"- {e['symbol_rate']} symbols/s: collocating the components leaves "
                   + (f"{100 * left:.0f} %" if left is not None else "an undefined share (no overhead with processes)")
                   + f" of the {wide}-vs-{narrow} user+system overhead ({_f(e['total_collocated_overhead_pct'], 3)} "
                   f"of {_f(e['total_process_overhead_pct'], 3)} percentage points).")
    out.append(f"- The seed: user workload about {seed['user_11_vs_2']}× from 2 to 11 components, more than "
               f"{seed['user_11_vs_plain_above']}× from the non-SCA program to 11, and larger still in user+system "
               "(rate not stated; its bars are not in the text).")
    return "\n".join(out)


def section_s4285(result, out_dir):
    """The seed's section 3.2: the STANAG 4285 transmitter as a plain program
    and as 2, 7 and 11 components, at three symbol rates."""
    part = result["stanag4285"]
    plan = result["plan"]
    seed = SEED["s4285"]
    rows = part["configurations"]
    summary = part["summary"]
    wide, narrow = summary["wide"], summary["narrow"]
    tick_s = result["tick_us"] / 1e6
    rates = sorted({r["symbol_rate"] for r in rows})
    windows = ", ".join(f"{next(r for r in rows if r['symbol_rate'] == rate)['window_s']:.2f} s at {rate}"
                        for rate in rates)
    text = [
        "## STANAG 4285 transmitter (seed section 3.2, Figs. 3 and 4)",
        "",
        f"The real waveform's transmitter in mode {part['mode']}, one frame (256 symbols) per packet, paced by "
        "its data source at each symbol rate; the plain program `scabench-s4285` does the same work with no "
        "middleware. Every configuration is measured as the FIR load is: the same core, a steady window of its "
        "processes after the warm-up (the plain program's too, not its whole-life CPU), frames dithered within "
        f"one tick, two-way calls over TCP between processes, and each run's audio checked against the plain "
        f"program's. Windows, in whole frame periods: {windows} symbols/s. U+S is the median of the runs, "
        "with their lowest and highest; U is that median split in the proportion of all the runs' tick "
        "samples together, whose count is given: at a few tenths of a % of a core a window holds only a "
        "handful of ticks, and U there is a rough sample (– where no tick fell at all).",
        "",
        "### Findings",
        "",
        s4285_findings(result),
        "",
        f"### {wide} over {narrow} components, and over the plain program",
        "",
    ]
    ratio_rows = [[r["symbol_rate"], "process per component" if r["placement"] == "process" else "collocated",
                   _f(r["user_wide_vs_narrow"]), _f(r["total_wide_vs_narrow"]), _f(r["user_wide_vs_plain"]),
                   _f(r["total_wide_vs_plain"])] for r in summary["ratios"]]
    text += [md_table(["symbols/s", "placement", f"U {wide}/{narrow}", f"U+S {wide}/{narrow}", f"U {wide}/plain",
                       f"U+S {wide}/plain"], ratio_rows),
             "",
             f"The seed's text (its Figs. 3 and 4 are images whose values it does not give): user workload "
             f"about {seed['user_11_vs_2']}× from 2 to 11 components, more than {seed['user_11_vs_plain_above']}× "
             "from the non-SCA program to 11 components, and a larger difference still in user+system. It ran at "
             f"{', '.join(map(str, seed['symbol_rates']))} symbols/s ({seed['frames_per_s_at_the_lowest_rate']} "
             f"frames/s at the lowest, paced by an audio card), measured with `{seed['measured_with']}`, on "
             f"{SEED['cpu']}.",
             "",
             "### How much of the overhead is left once collocated",
             "",
             f"(collocated {wide} − collocated {narrow}) / (process {wide} − process {narrow}): the share of the "
             f"{wide}-vs-{narrow} overhead that remains when every component is in one process (calls direct, no "
             "transport, no switches between processes). Percentage points of the core.",
             ""]
    left_rows = []
    for e in summary["leftover"]:
        left_rows.append([e["symbol_rate"], _f(e["user_process_overhead_pct"], 3),
                          _f(e["user_collocated_overhead_pct"], 3),
                          _f(None if e["user_left_collocated"] is None else 100 * e["user_left_collocated"], 0),
                          _f(e["total_process_overhead_pct"], 3), _f(e["total_collocated_overhead_pct"], 3),
                          _f(None if e["total_left_collocated"] is None else 100 * e["total_left_collocated"], 0)])
    text += [md_table(["symbols/s", "U overhead, processes", "U overhead, collocated", "U left %",
                       "U+S overhead, processes", "U+S overhead, collocated", "U+S left %"], left_rows),
             "", "### Every configuration", ""]
    table = []
    for r in sorted(rows, key=lambda r: (r["symbol_rate"], r["components"], r["placement"] != "process")):
        table.append([r["symbol_rate"], _s4285_label(r), _f(r["user_pct"], 3), _total_spread(r),
                      _f(r["us_per_frame"], 1), _f(r["csw_per_s"], 0),
                      f"{(r['user_sample_s'] + r['system_sample_s']) / tick_s:.0f}", _f(r["foreign_pct"], 1),
                      {True: "yes", False: "**no**", None: "–"}[r["output_matches_plain"]]])
    text += [md_table(["symbols/s", "configuration", "U %", "U+S % (runs' range)", "U+S µs/frame", "CSR /s", "ticks",
                       "foreign %", "audio = plain"], table),
             "", f"![STANAG 4285, seed Figs. 3 and 4]({plot_s4285(result, out_dir)})", "",
             f"### CPU per process at {rates[-1]} symbols/s", ""]
    for r in (r for r in rows if r["symbol_rate"] == rates[-1] and r["placement"] in ("standalone", "process")):
        procs = [[q["name"], _f(q["user_pct"], 3), _f(q["system_pct"], 3), _f(q["total_pct"], 3),
                  _f(q["csw_per_s"], 0)] for q in r["processes"]]
        text += [f"**{_s4285_label(r)}**", "", md_table(["process", "U %", "S %", "U+S %", "switches /s"], procs), ""]
    return "\n".join(text)


def render(result, out_dir):
    """Writes the PNGs, report.md and report.html; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plan = result["plan"]
    env = result["environment"]
    s4285 = result.get("stanag4285")
    has_fir = result.get("test_application") is not None
    rows = result["configurations"] + (s4285["configurations"] if s4285 else [])
    kept = sum(r["foreign_pct"] > plan["foreign_limit_pct"] for r in rows)
    workloads = [w for w in WORKLOADS if any(r["workload"] == w for r in result["configurations"])]
    text = [
        "# Component granularity and CPU workload",
        "",
        "Reproduces *Effects of SCA component granularity on processor workload* (the seed) on this machine: "
        "the same functional work split into more components, run at a fixed packet rate, and the CPU it "
        "costs, measured" + (" and modelled" if has_fir else "") + ".",
        "",
        f"Machine: {env['cpu_model']}, {env['online_cpus']} CPUs, kernel {env['kernel']}, omniORB "
        f"{env['omniorb_version']}. Every run on CPU {', '.join(map(str, plan['cores']))} (percentages are of "
        f"that core, as the seed's single processor); the harness on the others. Plan `{plan['name']}`: "
        f"{plan['warmup_s']} s warm-up then a steady window, "
        + (f"{plan['window_s']} s for the FIR load at PR = {plan['pr']} packets/s, {plan['repeats']} run(s) per "
           f"Fig. 6 point and {plan['fig7_repeats']} per Fig. 7 point; " if has_fir else "")
        + (f"whole frame periods for the STANAG 4285 transmitter, {plan['s4285_repeats']} run(s) per point; "
           if s4285 else "")
        + f"{result['runs']} runs of which {result['runs_redone']} were redone for foreign load "
        f"(> {plan['foreign_limit_pct']} % of the core), {result['duration_s'] / 60:.1f} min in all. "
        f"Calls: {plan['call'] if has_fir else 'twoway'} `pushPacket`, as OSSIE's ports. "
        + (f"**{kept} of {len(rows)} rows were kept with more foreign load than that** (the redo budget "
           "was spent): their foreign % is in the tables, and they are the least trustworthy."
           if kept else "No row kept foreign load above the limit."),
        "",
        "U+S is exact: the scheduler's nanosecond run time of every thread of the run, so it is the figure "
        "the ratios and the model comparisons lean on. The U/S split is the kernel's tick sample "
        f"({1e6 / result['tick_us']:.0f} Hz), as sar's is, with each packet dithered within one tick so that "
        "the sample does not alias with the source's period. Even so, treat U and S as rough on this machine: "
        "the run's costs come in bursts of a few µs to a few hundred µs woken from idle, the samples are few "
        "(a few dozen per window at a few % of a core), and in this VM a wake-up's kernel time tends to be "
        "charged to user (the source alone, nearly all timer wake-up, samples as all user). "
        "The `sar` columns of the JSON show the per-core view of the same windows.",
    ]
    if not has_fir:
        text += ["", section_s4285(result, out_dir)]
        return write_report(out_dir, "Component granularity and CPU workload", "\n".join(text) + "\n")
    plot_transfer(result, out_dir)
    if "fir" in workloads:
        text += ["", "## Findings", "", section_findings(result)]
    for w in workloads:
        text += ["", f"## {WORKLOADS[w].title}: W/FUNC", "", section_ratios(result, w),
                 "", f"## {WORKLOADS[w].title}: seed Fig. 6", "", section_fig6(result, w, out_dir)]
    text += ["", "## Model (1) parameters beside the seed's Table 2", "", section_parameters(result)]
    for w in workloads:
        text += ["", f"## {WORKLOADS[w].title}: B sweep (seed Fig. 7)", "",
                 f"N chosen at each B so that FUNC is about {plan['fig7_target_pct']} % of the core.", "",
                 section_sweep(result, w, out_dir),
                 "", f"## {WORKLOADS[w].title}: measured vs the models (seed Figs. 9 and 10)", "",
                 section_models(result, w, out_dir)]
    text += ["", "## CPU per hop", "", section_per_hop(result), "", "## The goal", "", section_goal(result)]
    for w in workloads:
        text += ["", f"## {WORKLOADS[w].title}: CPU per process", "", section_processes(result, w)]
    text += ["", "## The models", "",
             "Model (1), the lower bound, for M components (source and sink included), at PR packets/s "
             "(docs/architecture.md):", "",
             "    WL_i  = 100 · PR / f · [9·C_CL + C_SRC + C_SNK + (M−1)·(k_to·C_toSeq + C_tr) + (M−2)·k_from·C_fromSeq]",
             "    WL_CS = WL_i + 100 · CSR · (C_CSd + C_CSi) / f", "",
             "C_CL is one FIR load as the FUNC program spends it (its thread CPU in the filters / 9); "
             "C_tr = a + b·B from the test application of the same placement and transport; "
             "k_to = k_from = 0 here (1 in OSSIE); CSR is each run's own measured switch rate."]
    if s4285:
        text += ["", section_s4285(result, out_dir)]
    return write_report(out_dir, "Component granularity and CPU workload", "\n".join(text) + "\n")

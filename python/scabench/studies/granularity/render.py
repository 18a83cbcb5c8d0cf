"""The granularity report: Markdown + HTML (scabench.report.markdown) with
matplotlib PNGs, from the result of lab.Lab.run() or the JSON it was written
to (read back by rows.read_result, which types its rows). Rendering reads
the result, the summary included (result["summary"],
result["stanag4285"]["summary"]), and never imports the lab nor recomputes
the analysis.

This module assembles the report; the FIR sections are in render_fir.py, the
STANAG 4285 transmitter's in render_s4285.py, the PNGs in figures.py. A
result with only the STANAG 4285 part renders only it."""

from pathlib import Path

from scabench.report.markdown import CONTENTS, write_report
from scabench.studies.granularity.figures import plot_transfer
from scabench.studies.granularity.render_common import terms_line
from scabench.studies.granularity.render_fir import (
    section_fig6,
    section_findings,
    section_goal,
    section_models,
    section_parameters,
    section_per_hop,
    section_processes,
    section_ratios,
    section_sweep,
)
from scabench.studies.granularity.render_s4285 import s4285_findings, section_s4285
from scabench.studies.granularity.workloads import WORKLOADS

# Every abbreviation the report uses, said once above its answer, which
# already uses most of them.
REPORT_TERMS = terms_line("PR", "N", "B", "FUNC", "W2…W11", "U", "U+S", "CSR", "SRC, SNK", "C_tr")


def render(result, out_dir):
    """Writes the PNGs, report.md and report.html; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    plan = result["plan"]
    env = result["environment"]
    s4285 = result.get("stanag4285")
    has_fir = result.get("test_application") is not None
    rows = result["configurations"] + (s4285["configurations"] if s4285 else [])
    kept = sum(r.foreign_pct > plan["foreign_limit_pct"] for r in rows)
    workloads = [w for w in WORKLOADS if any(r.workload == w for r in result["configurations"])]
    caveat = (
        f"**{kept} of {len(rows)} rows were kept with more foreign load than the limit** (the redo budget "
        "was spent): their foreign % is in the tables, and they are the least trustworthy."
        if kept
        else ""
    )
    conditions = [
        "## Conditions",
        "",
        f"Machine: {env['cpu_model']}, {env['online_cpus']} CPUs, kernel {env['kernel']}, omniORB "
        f"{env['omniorb_version']}. Every run on CPU {', '.join(map(str, plan['cores']))} (percentages are of "
        f"that core, as the seed's single processor); the harness on the others. Plan `{plan['name']}`: "
        f"{plan['warmup_s']} s warm-up then a steady window, "
        + (
            f"{plan['window_s']} s for the FIR load at PR = {plan['pr']} packets/s, "
            f"{plan.get('fig6_repeats', plan['repeats'])} run(s) per Fig. 6 point and "
            f"{plan['fig7_repeats']} per Fig. 7 point; "
            if has_fir
            else ""
        )
        + (
            f"whole frame periods for the STANAG 4285 transmitter, {plan['s4285_repeats']} run(s) per point; "
            if s4285
            else ""
        )
        + f"{result['runs']} runs of which {result['runs_redone']} were redone for foreign load "
        f"(> {plan['foreign_limit_pct']} % of the core), {result['duration_s'] / 60:.1f} min in all. "
        f"Calls: {plan['call'] if has_fir else 'twoway'} `pushPacket`, as OSSIE's ports. "
        + (caveat or "No row kept foreign load above the limit."),
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
    # The answer first (the findings, before the contents), then the
    # evidence; how it was measured last.
    answer = []
    if has_fir and "fir" in workloads:
        answer += [f"**{WORKLOADS['fir'].title}, split into more components:**", "", section_findings(result), ""]
    if s4285:
        answer += ["**The STANAG 4285 transmitter, split into more components:**", "", s4285_findings(result), ""]
    text = (
        [
            "# Component granularity and CPU workload",
            "",
            f"*Terms: {REPORT_TERMS}.*",
            "",
            *answer,
            "Reproduces *Effects of SCA component granularity on processor workload* (the seed) on this machine: "
            "the same functional work split into more components, run at a fixed packet rate, and the CPU it "
            "costs, measured" + (" and modelled" if has_fir else "") + ". How it was measured is under "
            "Conditions, at the end.",
        ]
        + (["", caveat] if caveat else [])
        + ["", CONTENTS]
    )
    if not has_fir:
        text += ["", section_s4285(result, out_dir), ""] + conditions
        return write_report(out_dir, "Component granularity and CPU workload", "\n".join(text) + "\n")
    plot_transfer(result, out_dir)
    for w in workloads:
        text += [
            "",
            f"## {WORKLOADS[w].title}: W/FUNC",
            "",
            section_ratios(result, w),
            "",
            f"## {WORKLOADS[w].title}: seed Fig. 6",
            "",
            section_fig6(result, w, out_dir),
        ]
    text += ["", "## Model (1) parameters beside the seed's Table 2", "", section_parameters(result)]
    for w in workloads:
        text += [
            "",
            f"## {WORKLOADS[w].title}: B sweep (seed Fig. 7)",
            "",
            f"N chosen at each B so that FUNC is about {plan['fig7_target_pct']} % of the core.",
            "",
            section_sweep(result, w, out_dir),
            "",
            f"## {WORKLOADS[w].title}: measured vs the models (seed Figs. 9 and 10)",
            "",
            section_models(result, w, out_dir),
        ]
    text += ["", "## CPU per hop", "", section_per_hop(result), "", "## The goal", "", section_goal(result)]
    for w in workloads:
        text += ["", f"## {WORKLOADS[w].title}: CPU per process", "", section_processes(result, w)]
    text += [
        "",
        "## The models",
        "",
        "Model (1), the lower bound, for M components (source and sink included), at PR packets/s "
        "(docs/architecture.md):",
        "",
        "    WL_i  = 100 · PR / f · [9·C_CL + C_SRC + C_SNK + (M−1)·(k_to·C_toSeq + C_tr) + (M−2)·k_from·C_fromSeq]",
        "    WL_CS = WL_i + 100 · CSR · (C_CSd + C_CSi) / f",
        "",
        "C_CL is one FIR load as the FUNC program spends it (its thread CPU in the filters / 9); "
        "C_tr = a + b·B from the test application of the same placement and transport; "
        "k_to = k_from = 0 here (1 in OSSIE); CSR is each run's own measured switch rate.",
    ]
    if s4285:
        text += ["", section_s4285(result, out_dir)]
    text += [""] + conditions
    return write_report(out_dir, "Component granularity and CPU workload", "\n".join(text) + "\n")

"""The granularity report's STANAG 4285 section (seed section 3.2, Figs. 3
and 4), as Markdown, from result["stanag4285"] (its rows are S4285Rows,
rows.py) and the summary the lab stored with it."""

from scabench.report.markdown import md_table
from scabench.studies.granularity.figures import plot_s4285
from scabench.studies.granularity.render_common import fmt
from scabench.studies.granularity.seed import SEED


def _s4285_label(row):
    if row.config == "plain":
        return "plain program"
    return f"{row.components} components, " + ("a process each" if row.placement == "process" else "collocated")


def _total_spread(row):
    """The median U+S, and the runs' lowest–highest when there are several."""
    low, high = row.total_spread
    return f"{row.total_pct:.3f}" + (f" ({low:.3f}–{high:.3f})" if len(row.runs) > 1 else "")


def s4285_findings(result):
    """The headline numbers in words, computed from the summary."""
    part = result["stanag4285"]
    seed = SEED["s4285"]
    summary = part["summary"]
    wide, narrow = summary["wide"], summary["narrow"]
    out = []
    for r in summary["ratios"]:
        where = "with a process per component" if r["placement"] == "process" else "collocated"
        out.append(
            f"- {r['symbol_rate']} symbols/s, {where}: {wide} components cost "
            f"{fmt(r['user_wide_vs_narrow'])}× the {narrow}-component user workload and "
            f"{fmt(r['total_wide_vs_narrow'])}× its user+system; {fmt(r['user_wide_vs_plain'])}× and "
            f"{fmt(r['total_wide_vs_plain'])}× the plain program's."
        )
    for e in summary["leftover"]:
        left = e["total_left_collocated"]
        out.append(
            f"- {e['symbol_rate']} symbols/s: collocating the components leaves "
            + (f"{100 * left:.0f} %" if left is not None else "an undefined share (no overhead with processes)")
            + f" of the {wide}-vs-{narrow} user+system overhead ({fmt(e['total_collocated_overhead_pct'], 3)} "
            f"of {fmt(e['total_process_overhead_pct'], 3)} percentage points)."
        )
    out.append(
        f"- The seed: user workload about {seed['user_11_vs_2']}× from 2 to 11 components, more than "
        f"{seed['user_11_vs_plain_above']}× from the non-SCA program to 11, and larger still in user+system "
        "(rate not stated; its bars are not in the text)."
    )
    return "\n".join(out)


def section_s4285(result, out_dir):
    """The seed's section 3.2: the STANAG 4285 transmitter as a plain program
    and as 2, 7 and 11 components, at three symbol rates."""
    part = result["stanag4285"]
    seed = SEED["s4285"]
    rows = part["configurations"]
    summary = part["summary"]
    wide, narrow = summary["wide"], summary["narrow"]
    tick_s = result["tick_us"] / 1e6
    rates = sorted({r.symbol_rate for r in rows})
    windows = ", ".join(f"{next(r for r in rows if r.symbol_rate == rate).window_s:.2f} s at {rate}" for rate in rates)
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
        f"### {wide} over {narrow} components, and over the plain program",
        "",
    ]
    ratio_rows = [
        [
            r["symbol_rate"],
            "process per component" if r["placement"] == "process" else "collocated",
            fmt(r["user_wide_vs_narrow"]),
            fmt(r["total_wide_vs_narrow"]),
            fmt(r["user_wide_vs_plain"]),
            fmt(r["total_wide_vs_plain"]),
        ]
        for r in summary["ratios"]
    ]
    text += [
        md_table(
            [
                "symbols/s",
                "placement",
                f"U {wide}/{narrow}",
                f"U+S {wide}/{narrow}",
                f"U {wide}/plain",
                f"U+S {wide}/plain",
            ],
            ratio_rows,
        ),
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
        "",
    ]
    left_rows = []
    for e in summary["leftover"]:
        left_rows.append(
            [
                e["symbol_rate"],
                fmt(e["user_process_overhead_pct"], 3),
                fmt(e["user_collocated_overhead_pct"], 3),
                fmt(None if e["user_left_collocated"] is None else 100 * e["user_left_collocated"], 0),
                fmt(e["total_process_overhead_pct"], 3),
                fmt(e["total_collocated_overhead_pct"], 3),
                fmt(None if e["total_left_collocated"] is None else 100 * e["total_left_collocated"], 0),
            ]
        )
    text += [
        md_table(
            [
                "symbols/s",
                "U overhead, processes",
                "U overhead, collocated",
                "U left %",
                "U+S overhead, processes",
                "U+S overhead, collocated",
                "U+S left %",
            ],
            left_rows,
        ),
        "",
        "### Every configuration",
        "",
    ]
    table = []
    for r in sorted(rows, key=lambda r: (r.symbol_rate, r.components, r.placement != "process")):
        table.append(
            [
                r.symbol_rate,
                _s4285_label(r),
                fmt(r.user_pct, 3),
                _total_spread(r),
                fmt(r.us_per_frame, 1),
                fmt(r.csw_per_s, 0),
                f"{(r.user_sample_s + r.system_sample_s) / tick_s:.0f}",
                fmt(r.foreign_pct, 1),
                {True: "yes", False: "**no**", None: "–"}[r.output_matches_plain],
            ]
        )
    text += [
        md_table(
            [
                "symbols/s",
                "configuration",
                "U %",
                "U+S % (runs' range)",
                "U+S µs/frame",
                "CSR /s",
                "ticks",
                "foreign %",
                "audio = plain",
            ],
            table,
        ),
        "",
        f"![STANAG 4285, seed Figs. 3 and 4]({plot_s4285(result, out_dir)})",
        "",
        f"### CPU per process at {rates[-1]} symbols/s",
        "",
    ]
    for r in (r for r in rows if r.symbol_rate == rates[-1] and r.placement in ("standalone", "process")):
        procs = [
            [q["name"], fmt(q["user_pct"], 3), fmt(q["system_pct"], 3), fmt(q["total_pct"], 3), fmt(q["csw_per_s"], 0)]
            for q in r.processes
        ]
        text += [f"**{_s4285_label(r)}**", "", md_table(["process", "U %", "S %", "U+S %", "switches /s"], procs), ""]
    return "\n".join(text)

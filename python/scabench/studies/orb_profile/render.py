"""Tables, plots and the report of `scabench profile`, with the ORB profiling
paper's figures (seed_data.orb_profile) printed beside ours."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from scabench import units
from scabench.console import add_rows, table, text
from scabench.report.markdown import CONTENTS, md_table, write_report
from scabench.report.plots import log_axis_labels, save_figure
from scabench.report.results_file import CsvTable
from scabench.studies.orb_profile import (
    datarate,
    seed,
)
from scabench.studies.orb_profile.plan import CASES, TYPES

KINDS = (("basic", "Basic marsh."), ("array", "Array marsh."), ("sequence", "Sequence marsh."))
SEED_LABEL = "seed (720 MHz DSP)"


def _n(v, digits=0):
    if v is None:
        return None
    return f"{v:,.{digits}f}"


def _transports(result):
    return list(result["transports"])


def table1_rows(result):
    """The paper's Table 1 layout: one row per argument kind and source, one
    column per type; cycles of a round trip (ours: median of round medians)."""
    rows = []
    for kind, label in KINDS:
        rows.append([f"{label} — {SEED_LABEL}"] + [_n(seed.TABLE1_CYCLES[kind][t]) for t in TYPES])
        for tr in _transports(result):
            cases = result["transports"][tr]["cases"]
            rows.append([f"{label} — {tr}"] + [_n(cases[f"{kind}-{t}"]["median_cycles"]) for t in TYPES])
    return ["", "Octet", "Short", "Float", "Double"], rows


def invocation_rows(result):
    hz = result["tsc"]["hz"]
    rows = [
        [
            SEED_LABEL + ", null two-way",
            _n(seed.NULL_CALL_US * seed.CLOCK_HZ / 1e6),
            units.duration_us(seed.NULL_CALL_US),
            None,
            None,
        ]
    ]
    for tr in _transports(result):
        for name, label in (
            ("null", "null two-way"),
            ("oneway", "oneway send (empty)"),
            ("sequence-double-oneway", "oneway send, 1024 doubles"),
        ):
            m = result["transports"][tr]["cases"][name]
            rows.append(
                [
                    f"{tr}, {label}",
                    _n(m["median_cycles"]),
                    units.duration_us(m["median_ns"] / 1e3),
                    _n(m["p99_cycles"]),
                    units.duration_us(m["p99_ns"] / 1e3),
                ]
            )
    del hz
    return ["", "cycles (median)", "time (median)", "cycles (p99)", "time (p99)"], rows


def latency_rows(result):
    header = ["case"] + [f"{tr} median / p99 (µs)" for tr in _transports(result)]
    rows = []
    for c in CASES:
        rows.append(
            [c.name]
            + [
                f"{result['transports'][tr]['cases'][c.name]['median_ns'] / 1e3:.2f} / "
                f"{result['transports'][tr]['cases'][c.name]['p99_ns'] / 1e3:.2f}"
                for tr in _transports(result)
            ]
        )
    return header, rows


def per_element_rows(result):
    header = ["", SEED_LABEL] + [f"{tr} (total / 1024; above null)" for tr in _transports(result)]
    rows = []
    for kind in ("array", "sequence"):
        for t in TYPES:
            row = [f"{kind} {t}", f"{seed.TABLE1_CYCLES[kind][t] / seed.ELEMENTS:.1f}"]
            for tr in _transports(result):
                m = result["transports"][tr]["cases"][f"{kind}-{t}"]
                row.append(f"{m['cycles_per_element']:.2f}; {m['marginal_cycles_per_element']:.2f}")
            rows.append(row)
    return header, rows


def table2_rows(result):
    rows = [
        [f"{SEED_LABEL}, {r['configuration']}", None, None, _n(r["cycles"]), units.duration_us(r["us"])]
        for r in seed.TABLE2
    ]
    for tr in _transports(result):
        f = result["transports"][tr]["first_call"]
        rows.append(
            [
                tr,
                _n(f["first_cycles"]),
                _n(f["steady_cycles"]),
                _n(f["setup_cycles"]),
                units.duration_us(f["setup_ns"] / 1e3),
            ]
        )
    return ["", "first call (cycles)", "later calls (cycles)", "set-up (cycles)", "set-up (time)"], rows


def datarate_rows(result):
    header = ["case", "elements"] + [f"{tr} (bit/s)" for tr in _transports(result)]
    rows = []
    for ex in seed.EQ1_EXAMPLES:
        bps = datarate.max_data_rate_bps(ex["cycles"], seed.CLOCK_HZ, ex["elements"])
        rows.append(
            [f"{SEED_LABEL}: {ex['cycles']} cycles", ex["elements"], f"{bps:,} (paper: {ex['bps']:,})"]
            + [None] * (len(_transports(result)) - 1)
        )
    for c in CASES:
        if not c.elements:
            continue
        rows.append(
            [c.name, c.elements]
            + [_n(result["transports"][tr]["cases"][c.name]["datarate_bps"]) for tr in _transports(result)]
        )
    return header, rows


def _small(v):
    text = f"{v:.4f}"
    return "0.0000" if text == "-0.0000" else text


def _pad(n, to):
    return -(-n // to) * to


def wire_rows(result):
    remote = [tr for tr in _transports(result) if result["transports"][tr]["wire"]]
    if not remote:
        return None, []
    header = (
        ["case", "payload"]
        + [f"{tr} request" for tr in remote]
        + [
            "envelope",
            "CDR body",
            "payload padded to 4 (the paper's CDR)",
            "payload padded to 8 (the paper's ORB)",
            "reply",
        ]
    )
    rows = []
    for c in CASES:
        w = [result["transports"][tr]["wire"]["cases"][c.name] for tr in remote]
        body = w[0]["request_body_bytes"]
        payload = c.payload_bytes
        rows.append(
            [c.name, payload]
            + [x["request_bytes"] for x in w]
            + [
                w[0]["request_envelope_bytes"],
                body,
                _pad(payload, 4),
                _pad(payload, 8),
                w[0]["reply_bytes"] or "none (oneway)",
            ]
        )
    return header, rows


def sweep_rows(result, tr):
    t = result["transports"][tr]
    w = t["wire"]["cases"] if t["wire"] else {}
    rows = []
    for p in t["sweep"]:
        wire = w.get(f"sweep-{p['elements']}")
        rows.append(
            [
                p["elements"],
                p["payload_bytes"],
                wire["request_bytes"] if wire else None,
                f"{p['median_ns'] / 1e3:.2f}",
                f"{p['p99_ns'] / 1e3:.2f}",
                f"{p['mb_per_s']:.1f}" if moves_bytes(tr) else "– (no bytes move)",
            ]
        )
    return ["doubles", "payload bytes", "request bytes on the wire", "median (µs)", "p99 (µs)", "MB/s"], rows


def moves_bytes(transport):
    """Whether a call over the transport moves its payload: collocated, the
    ORB makes a direct call that hands over a reference to the caller's
    sequence, so payload bytes / time is no throughput."""
    return transport != "collocated"


def fit_rows(result):
    rows = []
    for tr in _transports(result):
        f, b = result["transports"][tr]["fit"], result["transports"][tr]["block_size"]
        largest = b.get("largest_blocks_ns_per_byte")
        rows.append(
            [
                tr,
                _n(f["fixed_cycles"]),
                units.duration_us(f["fixed_ns"] / 1e3),
                _small(f["per_byte_cycles"]),
                _small(f["per_byte_ns"]),
                _n(b["asymptotic_mb_per_s"]) if b["asymptotic_mb_per_s"] else "no per-byte cost",
                f"{100 * f['worst_relative_residual']:.0f} %",
                _small(largest) if b["has_per_byte_cost"] and largest is not None else "–",
                _n(b["model_bytes"]) if b["model_bytes"] else "never",
                f"{b['measured_bytes']:,} ({b['measured_elements']:,} doubles)"
                if b["measured_bytes"]
                else "never (no per-byte cost)",
            ]
        )
    header = [
        "transport",
        "fixed (cycles)",
        "fixed (time)",
        "per byte (cycles)",
        "per byte (ns)",
        "asymptote (MB/s)",
        "worst residual",
        "per byte, two largest blocks (ns)",
        "fixed < 10 % from (bytes, fit)",
        "within 10 % of best MB/s from (measured)",
    ]
    return header, rows


def spread_rows(result):
    rows = []
    for tr in _transports(result):
        t = result["transports"][tr]
        if not t.get("spread"):
            continue
        for name, m in t["spread"].items():
            pinned = t["cases"][name]
            rows.append(
                [
                    tr,
                    name,
                    _n(pinned["median_cycles"]),
                    _n(m["median_cycles"]),
                    f"{m['median_cycles'] / pinned['median_cycles']:.2f}",
                ]
            )
    return ["transport", "case", "one core (cycles)", "any core (cycles)", "ratio"], rows


# --- plots -----------------------------------------------------------------


def plot_fig8(result, path):
    """Like the paper's Fig. 8: cycles by type and argument kind, one panel
    per source (the paper's DSP, then each of our transports)."""
    panels = [(SEED_LABEL, seed.TABLE1_CYCLES)] + [
        (tr, {k: {t: result["transports"][tr]["cases"][f"{k}-{t}"]["median_cycles"] for t in TYPES} for k, _ in KINDS})
        for tr in _transports(result)
    ]
    # One logarithmic cycle axis for every panel: the sources differ by
    # hundreds of times (a direct call against a DSP's round trip), and
    # separate linear axes would draw them the same height.
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), sharey=True)
    x = np.arange(len(TYPES))
    for ax, (title, data) in zip(np.atleast_1d(axes), panels):
        for i, (kind, label) in enumerate(KINDS):
            ax.bar(x + (i - 1) * 0.27, [data[kind][t] for t in TYPES], 0.27, label=label)
        ax.set_xticks(x, [t.capitalize() for t in TYPES])
        ax.set_title(title)
        ax.set_yscale("log")
        ax.grid(axis="y", alpha=0.3, which="both")
        ax.set_axisbelow(True)  # the grid behind the bars, not striped across them
        log_axis_labels(ax.yaxis)  # 10,000 rather than 10⁴
    # Bars on a log axis start at its bottom: a decade under the smallest
    # value, so the smallest bar still shows.
    smallest = min(v for _, data in panels for kind, _ in KINDS for v in data[kind].values())
    np.atleast_1d(axes)[0].set_ylim(bottom=10 ** (np.floor(np.log10(smallest)) - 1))
    np.atleast_1d(axes)[0].set_ylabel("cycles per round trip (log scale, shared)")
    handles, labels = np.atleast_1d(axes)[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(KINDS), fontsize=8)  # above the bars, not on them
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    save_figure(fig, path)


def plot_sweep(result, path):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for tr in _transports(result):
        t = result["transports"][tr]
        x = np.array([p["payload_bytes"] for p in t["sweep"]], dtype=float)
        y = np.array([p["median_ns"] for p in t["sweep"]]) / 1e3
        (line,) = ax1.loglog(x, y, "o", label=tr)
        xs = np.geomspace(x.min(), x.max(), 100)
        ax1.loglog(
            xs, (t["fit"]["fixed_ns"] + t["fit"]["per_byte_ns"] * xs) / 1e3, "-", color=line.get_color(), alpha=0.6
        )
        if moves_bytes(tr):
            ax2.semilogx(x, [p["mb_per_s"] for p in t["sweep"]], "o-", label=tr, color=line.get_color())
    ax1.set_xlabel("payload per call (bytes of doubles, log scale)")
    ax1.set_ylabel("round trip (median, log scale)")
    ax1.set_title("Size sweep, with the fixed + per-byte fit")
    ax2.set_xlabel("payload per call (bytes of doubles, log scale)")
    ax2.set_ylabel("MB/s (10⁶ bytes/s, log scale)")
    ax2.set_yscale("log")
    ax2.set_title("Throughput of one client, two-way calls")
    if "collocated" in result["transports"]:
        ax2.text(
            0.98,
            0.03,
            "collocated not shown:\na direct call moves no bytes",
            transform=ax2.transAxes,
            ha="right",
            fontsize=8,
            color="#555",
        )
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, which="both")
        ax.legend()
        log_axis_labels(ax.xaxis)
    log_axis_labels(ax1.yaxis, time_us=True)  # 100 ns, 10 µs rather than 10⁻¹, 10¹
    log_axis_labels(ax2.yaxis)
    fig.tight_layout()
    save_figure(fig, path)


# --- text ------------------------------------------------------------------


def _conditions(result):
    env, plan, tsc = result["environment"], result["plan"], result["tsc"]
    foreign = [p for t in result["transports"].values() for m in t["cases"].values() for p in m["foreign_pct"]]
    spoiled = sum(m["spoiled_rounds"] for t in result["transports"].values() for m in t["cases"].values())
    redone = sum(a - 1 for t in result["transports"].values() for m in t["cases"].values() for a in m["attempts"])
    calls = [c for t in result["transports"].values() for m in t["cases"].values() for c in m["calls_per_round"]]
    return [
        f"- Machine: {env['cpu_model']}, {env['online_cpus']} CPUs, kernel {env['kernel']}, "
        f"omniORB {env['omniorb_version']}.",
        f"- Cycles are the time-stamp counter, measured at {tsc['hz'] / 1e6:.1f} MHz against CLOCK_MONOTONIC "
        f"(reference cycles, not core cycles); timing nothing costs {tsc['timer_overhead_cycles']} cycles, "
        "included in every figure.",
        f"- Client and server on CPU {plan['core']} (the paper ran both as tasks of one processor); "
        "collocated is one process, where omniORB makes a direct call.",
        f"- Per case: warm-up, then {plan['rounds']} rounds of {min(calls)}–{max(calls)} calls (each round about "
        f"{plan['round_s'] * 1e3:.0f} ms); figures are the median of the round medians and the p99 of all calls.",
        f"- Foreign load: a round during which other processes used ≥ {plan['foreign_threshold_pct']:.0f} % of "
        f"CPU {plan['core']} (all CPUs for the any-core runs) was redone "
        f"(up to {plan['max_attempts']} attempts, the cleanest kept): {redone} rounds redone, "
        f"{spoiled} still above the threshold; median foreign load over kept rounds "
        f"{np.median(foreign):.1f} %.",
        f"- Whole run: {result['elapsed_s']} s.",
    ]


def build_markdown(result, fig8_name="fig8-cycles.png", sweep_name="size-sweep.png"):
    out = [
        "# ORB profile: what omniORB costs per call and per byte",
        "",
        answer(result),
        "",
        f"Reproduces the ORB profiling paper (“{seed.TITLE}”) on this machine, for every transport, and goes "
        "further (size sweep, fixed and per-byte costs). The paper's figures are printed beside ours: "
        f"{seed.PLATFORM}. How it was measured is under Conditions, at the end.",
        "",
        CONTENTS,
    ]
    h, r = table1_rows(result)
    out += [
        "",
        "## Table 1: cycles of a round trip carrying the argument",
        "",
        "Arrays and sequences have 1024 elements; servants are empty.",
        "",
        md_table(h, r),
    ]
    out += [
        "",
        f"![cycles by type and argument kind]({fig8_name})",
        "",
        "The panels share one logarithmic cycle axis: the sources differ by hundreds of times, which "
        f"separate linear axes would hide. The seed's cycles are its {seed.CLOCK_HZ / 1e6:.0f} MHz DSP's, ours "
        f"the time-stamp counter's at {result['tsc']['hz'] / 1e6:.0f} MHz.",
    ]
    h, r = invocation_rows(result)
    out += ["", "## Invocation and oneway send", "", md_table(h, r)]
    h, r = latency_rows(result)
    out += ["", "## Every case in time", "", md_table(h, r)]
    h, r = per_element_rows(result)
    out += [
        "",
        "## Cycles per element",
        "",
        "Total / 1024 is how the paper counts (65.9 cycles per float); “above null” takes the null call out first.",
        "",
        md_table(h, r),
    ]
    h, r = table2_rows(result)
    out += [
        "",
        "## Table 2: the first call on a new reference",
        "",
        "Each sample is a fresh client process: its first call opens the connection (omniORB first sends a "
        "LocateRequest), later calls reuse it. Set-up = first call − median of the next calls; median of "
        f"{result['plan']['first_samples']} processes.",
        "",
        md_table(h, r),
    ]
    h, r = datarate_rows(result)
    out += [
        "",
        "## Eq. 1: the data rate the middleware allows",
        "",
        "T_m = D_t·S_s/(N_p·n) with S_s = 8 samples per symbol and n = 1 bit per symbol; the bound is 1/T_m. "
        "D_t is the measured median round trip.",
        "",
        md_table(h, r),
    ]
    h, r = wire_rows(result)
    if h:
        setup = next(t["wire"]["setup_messages"] for t in result["transports"].values() if t["wire"])
        out += [
            "",
            "## Bytes on the wire per message",
            "",
            "Measured by a relay that forwards the connection and cuts it into GIOP messages: request = GIOP "
            "header (12) + request header (id, flags, object key, operation, service contexts) + padding to 8 "
            "+ CDR body. Messages over about 8 KiB go out as a Request frame and a Fragment frame; the envelope "
            "then includes the fragment's 16-byte header. Reading the CDR body: one octet costs one byte (no "
            "padding at the end of a message), a sequence adds a 4-byte length, and doubles after it are "
            "aligned to 8. The two padded columns apply the paper's rules to the payload, for comparison. "
            "Loopback TCP adds its own segment headers, not counted here.",
            "",
            md_table(h, r),
            "",
            "Connection set-up messages: " + ", ".join(f"{m['type']} {m['bytes']} B" for m in setup) + ".",
        ]
    h, r = fit_rows(result)
    out += [
        "",
        "## Beyond the paper: fixed and per-byte cost",
        "",
        "Sequences of 1 to "
        f"{max(result['plan']['sweep_elements']):,} doubles, two-way. Fit: cost = fixed + per byte × payload "
        "bytes, least squares on relative error. Block processing stops paying once the fixed cost is a small "
        "part of the call: the table gives the block from which it is under 10 % by the fit, and the smallest "
        "measured block within 10 % of the best measured throughput.",
        "",
        md_table(h, r),
        "",
        f"![size sweep]({sweep_name})",
    ]
    for tr in _transports(result):
        h, r = sweep_rows(result, tr)
        out += ["", f"### Size sweep, {tr}", "", md_table(h, r)]
    h, r = spread_rows(result)
    if r:
        out += [
            "",
            "## One core or any core",
            "",
            "The same calls with client and server free to run on any core. On a virtual machine a wake-up "
            "of a peer on another, idle, core can cost more than the call.",
            "",
            md_table(h, r),
        ]
    out += ["", "## Conditions", ""] + _conditions(result)
    return "\n".join(out) + "\n"


def answer(result):
    """The report's answer, first: what a call costs here beside the paper's
    DSP (in time: the cycles are of different clocks), and the fixed and
    per-byte cost of a call that moves bytes."""
    parts = []
    for tr in _transports(result):
        t = result["transports"][tr]
        seq = t["cases"]["sequence-double"]
        text = (
            f"{tr} {units.duration_us(seq['median_ns'] / 1e3)} ({_n(seq['median_cycles'])} cycles; null call "
            f"{units.duration_us(t['cases']['null']['median_ns'] / 1e3)})"
        )
        if moves_bytes(tr) and t["fit"]["per_byte_ns"] > 0:
            text += (
                f", {units.duration_us(t['fit']['fixed_ns'] / 1e3)} a call plus {t['fit']['per_byte_ns']:.2f} ns a byte"
            )
        parts.append(text)
    dsp = seed.TABLE1_CYCLES["sequence"]["double"]
    return (
        f"**A round trip carrying a sequence of 1024 doubles: {'; '.join(parts)}. On the paper's DSP: "
        f"{units.duration_us(dsp / seed.CLOCK_HZ * 1e6)} ({_n(dsp)} cycles at {seed.CLOCK_HZ / 1e6:.0f} MHz; null "
        f"call {units.duration_us(seed.NULL_CALL_US)}).**"
    )


def write_profile_report(result, out_dir):
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plot_fig8(result, out / "fig8-cycles.png")
    plot_sweep(result, out / "size-sweep.png")
    return write_report(out, "scabench profile", build_markdown(result))


def profile_view(result):
    """The terminal summary: Table 1, the invocations, Table 2 and the fit."""
    h, r = table1_rows(result)
    out = [add_rows(table(*h, title="Table 1: cycles of a round trip (median of round medians)"), r), ""]
    h, r = invocation_rows(result)
    out += [add_rows(table(*h), r), ""]
    h, r = table2_rows(result)
    out += [add_rows(table(*h, title="Table 2: first call on a new reference"), r), ""]
    h, r = fit_rows(result)
    keep = [0, 1, 2, 3, 4, 6, 7, 8]
    out += [
        add_rows(
            table(*[h[i] for i in keep], title="Fixed and per-byte cost (sequences of doubles)"),
            [[x[i] for i in keep] for x in r],
        )
    ]
    return out


def format_profile(result, wide=False):
    return text(profile_view(result), wide)


def profile_csv(result: dict) -> CsvTable:
    """Every case on every transport, one row each, as measured (`--csv`)."""
    header = [
        "transport",
        "case",
        "elements",
        "payload_bytes",
        "median_cycles",
        "p99_cycles",
        "median_ns",
        "p99_ns",
        "datarate_bps",
    ]
    rows = []
    for tr in _transports(result):
        cases = result["transports"][tr]["cases"]
        for c in CASES:
            m = cases.get(c.name)
            if m is not None:
                rows.append(
                    [
                        tr,
                        c.name,
                        c.elements,
                        c.payload_bytes,
                        m.get("median_cycles"),
                        m.get("p99_cycles"),
                        m.get("median_ns"),
                        m.get("p99_ns"),
                        m.get("datarate_bps"),
                    ]
                )
    return header, rows

"""The granularity report's figures (matplotlib PNGs): the seed's Figs. 6 and
7, the models against the measurements (its Figs. 9 and 10), the test
application's cost of a transfer (its Fig. 8) and the STANAG 4285
transmitter (its Figs. 3 and 4). Each plot writes one PNG into out_dir and
returns its file name."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import NullFormatter

from scabench.report.plots import runs_label, save_figure
from scabench.studies.granularity import models as gm
from scabench.studies.granularity.render_common import func_row, placement_key, rows_where
from scabench.studies.granularity.workloads import WORKLOADS

COLOURS = {
    "process/tcp": "#1f5fa8",
    "process/unix": "#4aa3df",
    "process/shm": "#c0712b",
    "collocated/none": "#2e8b57",
    "standalone/none": "#777777",
}

S4285_PLACEMENTS = {
    "standalone": COLOURS["standalone/none"],
    "process": COLOURS["process/tcp"],
    "collocated": COLOURS["collocated/none"],
}


def _b_axis(ax, bs):
    """A log B axis labelled at the packet sizes measured."""
    ax.set_xscale("log")
    ax.set_xticks(bs)
    ax.set_xticklabels([str(b) for b in bs], fontsize=8)
    ax.xaxis.set_minor_formatter(NullFormatter())


def plot_bars(result, workload, nb, out_dir):
    """Seed Fig. 6: U and U+S of FUNC and each configuration, per placement."""
    rows = rows_where(result, experiment="fig6", workload=workload, nb=nb)
    func = func_row(result, "fig6", workload=workload, nb=nb)
    configs = [c for c in WORKLOADS[workload].configs if any(r.config == c for r in rows)]
    keys = [k for k in COLOURS if any(placement_key(r) == k for r in rows if r.config != "FUNC")]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / max(1, len(keys))
    if func:
        ax.bar(-1, func.total_pct, 0.5, color=COLOURS["standalone/none"], alpha=0.35)
        ax.bar(-1, func.user_pct, 0.5, color=COLOURS["standalone/none"], label="FUNC")
    for i, key in enumerate(keys):
        xs, user, total = [], [], []
        for j, c in enumerate(configs):
            r = next((r for r in rows if r.config == c and placement_key(r) == key), None)
            if r:
                xs.append(j + (i - (len(keys) - 1) / 2) * width)
                user.append(r.user_pct)
                total.append(r.total_pct)
        label = key.replace("/none", "").replace("process/", "process, ")
        ax.bar(xs, total, width, color=COLOURS[key], alpha=0.35)
        ax.bar(xs, user, width, color=COLOURS[key], label=label)
    ax.set_xticks([-1] + list(range(len(configs))), ["FUNC"] + configs)
    ax.set_ylabel("CPU workload (% of the core)")
    ax.set_title(
        f"{workload}: N·B = {nb}, B = {result['plan']['fig6_samples']}, PR = {result['plan']['pr']}"
        " (solid: user, light: user+system)",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    name = f"fig6_{workload}_nb{nb}.png"
    fig.tight_layout()
    save_figure(fig, Path(out_dir) / name)
    return name


def plot_sweep(result, workload, out_dir):
    """Seed Fig. 7: U and U+S against B, one panel per placement."""
    rows = rows_where(result, experiment="fig7", workload=workload)
    if not rows:
        return None
    keys = [k for k in COLOURS if k != "standalone/none" and any(placement_key(r) == k for r in rows)]
    configs = [c for c in WORKLOADS[workload].configs if any(r.config == c for r in rows)]
    fig, axes = plt.subplots(1, len(keys), figsize=(4.2 * len(keys), 3.8), sharey=True, squeeze=False)
    markers = dict(zip(WORKLOADS[workload].configs, "osD^v<>"))
    for ax, key in zip(axes[0], keys):
        func = sorted((r for r in rows if r.config == "FUNC"), key=lambda r: r.samples)
        ax.plot([r.samples for r in func], [r.total_pct for r in func], "k--", label="FUNC U+S")
        for c in configs:
            pts = sorted((r for r in rows if r.config == c and placement_key(r) == key), key=lambda r: r.samples)
            (line,) = ax.plot([r.samples for r in pts], [r.total_pct for r in pts], marker=markers[c], label=f"{c} U+S")
            ax.plot(
                [r.samples for r in pts],
                [r.user_pct for r in pts],
                marker=markers[c],
                ls=":",
                color=line.get_color(),
                alpha=0.7,
                label=f"{c} U",
            )
        _b_axis(ax, sorted({r.samples for r in rows}))
        ax.set_xlabel("B (floats per packet)")
        ax.set_title(key.replace("/none", "").replace("/", ", "), fontsize=9)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("CPU workload (% of the core)")
    axes[0][-1].legend(fontsize=7, ncol=2)
    name = f"fig7_{workload}.png"
    fig.tight_layout()
    save_figure(fig, Path(out_dir) / name)
    return name


def plot_models(result, workload, config, out_dir):
    """Seed Figs. 9 and 10: measured vs model (1) vs model (2) against B."""
    rows = rows_where(result, experiment="fig7", workload=workload, config=config)
    if not rows:
        return None
    keys = [k for k in COLOURS if any(placement_key(r) == k for r in rows)]
    funcs = sorted(rows_where(result, experiment="fig7", workload=workload, config="FUNC"), key=lambda r: r.samples)
    fig, axes = plt.subplots(2, len(keys), figsize=(4.2 * len(keys), 6.4), sharex=True, squeeze=False)
    for col, key in enumerate(keys):
        pts = sorted((r for r in rows if placement_key(r) == key), key=lambda r: r.samples)
        bs = [r.samples for r in pts]
        for row_i, part in enumerate(("user", "total")):
            ax = axes[row_i][col]
            ax.plot(
                [r.samples for r in funcs],
                [getattr(r, f"{part}_pct") for r in funcs],
                ":",
                color="#777777",
                label="FUNC measured",
            )
            ax.plot(bs, [getattr(r, f"{part}_pct") for r in pts], "D-", color="#b22222", label="measured")
            ax.plot(bs, [getattr(r, f"model1_{part}_pct") for r in pts], "o-", color="#555555", label="model (1)")
            ax.plot(bs, [getattr(r, f"model2_{part}_pct") for r in pts], "s--", color="#1f5fa8", label="model (2)")
            if part == "total" and all(r.model1_cold_total_pct is not None for r in pts):
                ax.plot(
                    bs,
                    [r.model1_cold_total_pct for r in pts],
                    "^:",
                    color="#8a5a00",
                    label="model (1), cold parameters",
                )
                ax.legend(fontsize=7)
            _b_axis(ax, bs)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            ax.set_title(
                f"{config}, {key.replace('/none', '').replace('/', ', ')}: "
                f"{'user' if part == 'user' else 'user+system'}",
                fontsize=9,
            )
            if row_i == 1:
                ax.set_xlabel("B (floats per packet)")
            if col == 0:
                ax.set_ylabel("% of the core")
    axes[0][0].legend(fontsize=8)
    name = f"models_{workload}_{config}.png"
    fig.tight_layout()
    save_figure(fig, Path(out_dir) / name)
    return name


def plot_transfer(result, out_dir):
    """C_tr, the CPU one transfer costs (source → sink less the source alone
    and the sink's work), against B from the test application, with the
    fitted lines; a difference below zero is marked as noise, not a cost."""
    transfer = result["test_application"]["transfer"]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    noise = []  # (B, µs): differences below zero, which are noise and no cost
    for key, t in transfer.items():
        xs = [q["samples"] for q in t["points"]]
        colour = COLOURS.get(key)
        for part, marker in (("tr_total_ns", "o"), ("tr_user_ns", "x")):
            costs = [(x, q[part] / 1000) for x, q in zip(xs, t["points"]) if q[part] >= 0]
            noise += [(x, q[part] / 1000) for x, q in zip(xs, t["points"]) if q[part] < 0]
            ax.plot([x for x, _ in costs], [v for _, v in costs], marker, color=colour)
        fit_t, fit_u = gm.Linear(**t["total"]), gm.Linear(**t["user"])
        grid = [min(xs), max(xs)]
        ax.plot(grid, [fit_t(x) / 1000 for x in grid], "-", color=colour, label=f"{key.replace('/none', '')} U+S")
        ax.plot(grid, [fit_u(x) / 1000 for x in grid], ":", color=colour, label=f"{key.replace('/none', '')} U")
    if noise:
        # Drawn on the zero line, hollow, with the difference beside it: a
        # reader sees that it was measured and that it is no cost.
        ax.plot(
            [x for x, _ in noise],
            [0] * len(noise),
            "o",
            markerfacecolor="none",
            markeredgecolor="#777",
            label="below zero: within noise",
        )
        for x, v in noise:
            ax.annotate(f"−{-v:.0f} µs", (x, 0), textcoords="offset points", xytext=(4, 4), fontsize=7, color="#555")
        ax.set_ylim(bottom=0)
    ax.set_xlabel("B (floats per packet)")
    ax.set_ylabel("C_tr (µs of CPU per transfer)")
    ax.set_title("Test application (seed Fig. 8): cost of one transfer", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    name = "transfer.png"
    fig.tight_layout()
    save_figure(fig, Path(out_dir) / name)
    return name


def plot_s4285(result, out_dir):
    """The seed's Figs. 3 and 4 in one: per symbol rate, U (solid) and U+S
    (light, with the runs' spread) of the plain program and every split."""
    rows = result["stanag4285"]["configurations"]
    rates = sorted({r.symbol_rate for r in rows})
    configs = sorted({(r.components, r.config) for r in rows})
    fig, axes = plt.subplots(1, len(rates), figsize=(max(6.5, 4.0 * len(rates)), 3.8), squeeze=False)
    for ax, rate in zip(axes[0], rates):
        width = 0.38
        for j, (_, config) in enumerate(configs):
            found = [r for r in rows if r.symbol_rate == rate and r.config == config]
            for r in found:
                shift = 0.0 if r.placement == "standalone" else (-width / 2 if r.placement == "process" else width / 2)
                colour = S4285_PLACEMENTS[r.placement]
                low, high = r.total_spread
                several = len(r.runs) > 1  # one run has no spread to draw
                ax.bar(
                    j + shift,
                    r.total_pct,
                    width,
                    color=colour,
                    alpha=0.35,
                    yerr=[[r.total_pct - low], [high - r.total_pct]] if several else None,
                    capsize=2,
                )
                if r.user_pct is not None:
                    ax.bar(j + shift, r.user_pct, width, color=colour)
        ax.set_xticks(range(len(configs)), ["plain" if c == "plain" else c.replace("split", "") for _, c in configs])
        ax.set_title(f"{rate} symbols/s ({rate / 256:.3g} frames/s)", fontsize=9)
        ax.grid(axis="y", alpha=0.3)
        ax.set_xlabel("components")
    axes[0][0].set_ylabel("CPU workload (% of the core)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in S4285_PLACEMENTS.values()]
    axes[0][-1].legend(handles, ["plain program", "a process per component", "collocated"], fontsize=7)
    fig.suptitle(
        "STANAG 4285 transmitter (seed Figs. 3 and 4): solid user, light user+system "
        f"({runs_label(len(r.runs) for r in rows)})",
        fontsize=9,
    )
    name = "s4285.png"
    fig.tight_layout()
    save_figure(fig, Path(out_dir) / name)
    return name

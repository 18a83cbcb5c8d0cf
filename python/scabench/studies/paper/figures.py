"""The report's figures (PNG, drawn with matplotlib's non-interactive backend)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from scabench.studies.paper.published import (SETUPS, TABLE1, paper_figure, paper_ratio, paper_table,  # noqa: E402
                                              published)


def send_time_histogram(path, title, send_us, paper_note=None):
    """The producer's send times of one run, log-binned like the paper's
    Figs 9-16 (which span 6 µs to 100 ms), with the share under each decade."""
    s = np.asarray(send_us, dtype=float)
    s = s[s > 0]
    fig, (ax, ax_time) = plt.subplots(1, 2, figsize=(11, 3.6), gridspec_kw={"width_ratios": [3, 2]})
    if s.size:
        lo, hi = max(1.0, s.min() * 0.8), s.max() * 1.25
        bins = np.logspace(np.log10(lo), np.log10(hi), 50)
        ax.hist(s, bins=bins, color="#3b6ea8")
        ax.set_xscale("log")
        ax.set_yscale("log")
        for q, style in ((50, "--"), (90, ":"), (99, "-.")):
            v = np.percentile(s, q)
            ax.axvline(v, color="#a4161a", linestyle=style, linewidth=1, label=f"p{q} {v:,.0f} µs")
        ax.legend(fontsize=8)
        ax_time.plot(np.arange(s.size), s, ".", markersize=2, color="#3b6ea8")
        ax_time.set_yscale("log")
    ax.set_xlabel("send time (µs)")
    ax.set_ylabel("packets")
    ax.set_title(title, fontsize=10)
    ax_time.set_xlabel("packet")
    ax_time.set_ylabel("send time (µs)")
    ax_time.set_title("per packet, in order", fontsize=10)
    if paper_note:
        fig.text(0.01, 0.01, paper_note, fontsize=7, color="#555")
    fig.tight_layout(rect=(0, 0.05 if paper_note else 0, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def overview(path, rows):
    """Time of the last packet over the floor, ours beside the paper's, per
    experiment and set-up. rows: [(label, ours_ratio, (lo, hi), paper_ratio)]."""
    fig, ax = plt.subplots(figsize=(11, 3.8))
    x = np.arange(len(rows))
    ours = [r[1] or 0 for r in rows]
    err = np.array([[max(0.0, (r[1] or 0) - r[2][0]), max(0.0, r[2][1] - (r[1] or 0))] for r in rows]).T
    paper = [r[3] if r[3] is not None else np.nan for r in rows]
    ax.bar(x - 0.2, ours, 0.4, yerr=err, capsize=3, label="scabench (median, min-max)", color="#3b6ea8")
    ax.bar(x + 0.2, paper, 0.4, label="paper", color="#c9a227")
    ax.axhline(1.0, color="#444", linewidth=0.8)
    ax.set_xticks(x, [r[0] for r in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("last packet / floor")
    ax.legend(fontsize=8)
    ax.set_title("Time of the last packet at stage 3, over the set-up's floor", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure_note(experiment, setup):
    number, fig = paper_figure(experiment, setup)
    if not number:
        return None
    shares = ", ".join(f"{p} % under {t} µs" for t, p in fig.get("share_under_us", {}).items())
    extras = [f"min {fig['min_us']:,} µs" if "min_us" in fig else "",
              f"mean {fig['mean_us']:,} µs" if "mean_us" in fig else "",
              f"max {fig['max_us']:,} µs" if "max_us" in fig else ""]
    return f"paper, Fig. {number} ({published()['setup'][setup]['label']}): " + ", ".join(
        x for x in [shares] + extras if x)


def draw_figures(out, entries):
    """The send-time histogram of the median run of each Table 1 experiment
    and set-up, and the overview. Returns {key: file name}."""
    figures = {}
    rows = []
    for exp in TABLE1:
        for setup in SETUPS:
            e = entries.get(f"{exp}@{setup}")
            if not e:
                continue
            s = e.summary
            label = e.config.setup_label
            if s:
                run = e.runs[s.median_run]
                name = f"send-times-{exp}-{setup}.png"
                number, _ = paper_table(exp, setup)
                send_time_histogram(out / name, f"{exp} on {label}: producer send times (median run)",
                                    run.producer.send_us_all, figure_note(exp, setup))
                figures[f"{exp}@{setup}"] = name
                ratio = s.overhead_ratio
                rows.append((f"{exp} {label}", ratio.median, (ratio.min, ratio.max), paper_ratio(exp, setup)))
            else:
                rows.append((f"{exp} {label}", None, (0, 0), paper_ratio(exp, setup)))
    figures["overview"] = "overview.png"
    overview(out / "overview.png", rows)
    return figures

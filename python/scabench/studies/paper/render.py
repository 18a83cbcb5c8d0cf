"""report.md for `scabench paper`: our figures beside the paper's, claim by claim."""

from scabench.report import latency
from scabench.report.campaign import campaign_csv
from scabench.report.markdown import CONTENTS, md_table
from scabench.studies.paper.claims import DIFFERS, NOT_REPRODUCED, NOT_RUN, REPRODUCED, VERDICT_LEGEND, VERDICTS
from scabench.studies.paper.published import (
    PAPER_PACKETS,
    SETUPS,
    TABLE1,
    paper_figure,
    paper_ratio,
    paper_table,
    published,
)

TITLE = "The messaging-semantics paper, reproduced by scabench"
SEND_STATEMENTS = (
    ("min", "fastest send"),
    ("p50", "median"),
    ("p90", "90th percentile"),
    ("mean_fastest_90pct", "mean of the fastest 90 %"),
    ("mean_slowest_10pct", "mean of the slowest 10 %"),
    ("max", "slowest send"),
)


def _num(v, digits=0):
    if v is None:
        return "–"
    if digits == 0 and 0 < abs(v) < 10 and v != int(v):
        digits = 2  # a send that took 0.3 ms must not print as 0
    return f"{v:,.{digits}f}"


def _spread(s, digits=0):
    """median (min–max) of a Spread, or just the value when every run agreed."""
    if s is None or s.median is None:
        return "–"
    if s.n <= 1 or s.min == s.max:
        return _num(s.median, digits)
    return f"{_num(s.median, digits)} ({_num(s.min, digits)}–{_num(s.max, digits)})"


def _experiment_title(exp):
    e = published()["experiment"][exp]
    return (
        f"{'one-way' if e['call'] == 'oneway' else 'two-way'}, producer waits {e['producer_wait_ms']} ms, "
        f"{'a' if e['worker'] else 'no'} worker thread"
    )


def headline(entries):
    rows = []
    # A row that was not run names its set-up as the ones that were (the campaign's label).
    labels = {e.config.setup: e.config.setup_label for e in entries.values()}
    for exp in TABLE1:
        for setup in SETUPS:
            e = entries.get(f"{exp}@{setup}")
            number, table = paper_table(exp, setup)
            s = e.summary if e else None
            last = s.stages[-1] if s else None
            rows.append(
                [
                    exp,
                    labels.get(setup, setup),
                    _spread(last.last_packet_ms) if last else ("failed" if e else "not run"),
                    _spread(s.overhead_ratio, 3) if s else "–",
                    latency.p50_p99(latency.end_to_end(e.runs)) if s else "–",
                    f"{last.reordered_from_previous.median:.0f} / {last.reordered_from_original.median:.0f}"
                    if last
                    else "–",
                    f"{table['last_packet_ms'][-1]:,.0f}",
                    f"{paper_ratio(exp, setup):.3f}",
                    f"{table['reordered_from_previous'][-1]} / {table['reordered_from_original'][-1]}",
                    f"Table\u00a0{number}",
                ]
            )
    header = [
        "exp",
        "set-up",
        "last packet, stage 3 (ms)",
        "× floor",
        "latency p50 / p99",
        "reordered prev / orig",
        f"paper, {PAPER_PACKETS} packets (ms)",
        "paper × floor",
        "paper reordered",
        "paper",
    ]
    return md_table(header, rows)


def latency_table(entries):
    """End-to-end latency of each Table 1 experiment and set-up, over its runs."""
    rows = []
    for exp in TABLE1:
        for setup in SETUPS:
            e = entries.get(f"{exp}@{setup}")
            if not e or not e.summary:
                continue
            lat = latency.end_to_end(e.runs)
            rows.append(
                [exp, e.config.setup_label, latency.measured_runs(lat)]
                + [latency.spread_cell(lat, q) for q in latency.QUANTILES]
            )
    if not any(row[2] for row in rows):
        return latency.NOT_MEASURED
    return md_table(["exp", "set-up", "runs", "p50", "p90", "p99", "max"], rows)


def paper_layout(entry, exp, setup):
    """One experiment on one set-up in the layout of the paper's Tables 2-13."""
    s = entry.summary
    number, table = paper_table(exp, setup)
    label = published()["setup"][setup]["label"]
    stage_names = [st.name for st in s.stages]
    header = ["", "producer"] + stage_names
    producer_paper = table.get("producer_last_ms")
    rows = [
        ["time of last packet (ms), scabench", _spread(s.producer_last_sent_ms)]
        + [_spread(st.last_packet_ms) for st in s.stages],
        [f"… paper ({label}, {PAPER_PACKETS} packets)", _num(producer_paper, 2) if producer_paper else "–"]
        + [f"{v:,.2f}" for v in table["last_packet_ms"]],
        ["reordered with previous, scabench", "–"] + [_spread(st.reordered_from_previous) for st in s.stages],
        ["… paper", "–"] + [str(v) for v in table["reordered_from_previous"]],
        ["reordered with original, scabench", "–"] + [_spread(st.reordered_from_original) for st in s.stages],
        ["… paper", "–"] + [str(v) for v in table["reordered_from_original"]],
        ["most ORB threads in a stage at once", "–"] + [_num(st.max_server_threads.max) for st in s.stages],
    ]
    for row, span in (("latency since send, p50 / p99", "since_send"), ("latency in the stage, p50 / p99", "in_stage")):
        cells = [latency.p50_p99(latency.at_stage(entry.runs, i, span)) for i in range(len(s.stages))]
        if any(c != "–" for c in cells):  # results written before runs measured latency have none
            rows.append([row, "–"] + cells)
    floor = published()["setup"][setup]["floor_ms"]
    return (
        f"**{entry.config.setup_label}** (paper: Table {number}, {label}); floor {s.floor_ms:,.0f} ms, "
        f"ratio {_spread(s.overhead_ratio, 3)} (paper: floor {floor:,.0f} ms, ratio "
        f"{paper_ratio(exp, setup):.3f}); {s.runs} run(s)\n\n" + md_table(header, rows)
    )


def send_statements(entry, exp, setup):
    s = entry.summary
    number, fig = paper_figure(exp, setup)
    rows = [[label, _num(s.send_us.get(key), 1)] for key, label in SEND_STATEMENTS]
    rows += [[f"share under {t} µs", f"{v:.0f} %"] for t, v in s.send_share_under_us.items()]
    text = md_table(["producer send time (µs), median over runs", "scabench"], rows)
    if number:
        paper = [f"{p} % under {t} µs" for t, p in fig.get("share_under_us", {}).items()]
        if "fastest_pct" in fig:
            paper.append(
                f"fastest {fig['fastest_pct']} % average {fig['mean_fastest_us']} µs, the rest "
                f"{fig['mean_slowest_us']:,} µs"
            )
        for key, label in (("min_us", "fastest"), ("mean_us", "mean"), ("max_us", "slowest")):
            if key in fig:
                paper.append(f"{label} {fig[key]:,} µs")
        text += f"\n\nThe paper (Fig. {number}): " + "; ".join(paper) + "."
    return text


def slides(entries):
    rows = []
    for name, test in published()["slides"].items():
        e = entries.get(f"{test['experiment']}@multicore")
        s = e.summary if e else None
        ours_t = " / ".join(_num(st.last_packet_ms.median) for st in s.stages) if s else "–"
        ours_r = " / ".join(_num(st.reordered_from_previous.median) for st in s.stages) if s else "–"
        rows.append(
            [
                name.replace("test", "test "),
                test["experiment"],
                ours_t,
                " / ".join(f"{v:,.0f}" for v in test["last_arrival_ms"]),
                ours_r,
                " / ".join(str(v) for v in test["reordered"]),
            ]
        )
    return md_table(
        [
            "slides",
            "= experiment",
            "scabench last packet, stages 1/2/3 (ms)",
            f"slides (4 cores, {PAPER_PACKETS} packets)",
            "scabench reordered from previous",
            "slides reordered",
        ],
        rows,
    )


def _config_label(e):
    """The configuration's id, with its set-up unless multi-core, and the
    configuration whose runs it shows."""
    c = e.config
    label = c.id + ("" if c.setup == "multicore" else f", {c.setup_label}")
    return label + (f" (= {e.same_as.split('@')[0]})" if e.same_as else "")


def config_table(entries, names):
    rows = []
    for name in names:
        e = entries.get(name)
        if not e:
            continue
        s, c = e.summary, e.config
        if not s:
            rows.append([c.id, c.title, "failed", "–", "–", "–", "–", "–"])
            continue
        last = s.stages[-1]
        rows.append(
            [
                _config_label(e),
                c.title,
                _spread(last.last_packet_ms),
                _spread(s.overhead_ratio, 3),
                latency.p50_p99(latency.end_to_end(e.runs)),
                f"{_spread(last.reordered_from_previous)} / {_spread(last.reordered_from_original)}",
                _num(s.send_us.get("p50"), 0),
                _num(s.stages[0].max_server_threads.max),
            ]
        )
    return md_table(
        [
            "config",
            "what",
            "last packet, stage 3 (ms)",
            "× floor",
            "latency p50 / p99",
            "reordered prev / orig (stage 3)",
            "median send (µs)",
            "ORB threads in stage 1",
        ],
        rows,
    )


def ordered_table(entries, names):
    """The orderly strategies: how close to the floor, and whether every
    stage's output stays in order."""
    rows = []
    for name in names:
        e = entries[name]
        s, c = e.summary, e.config
        if not s:
            rows.append([c.id, c.title, "failed", "–", "–", "–", "–", "–", "–"])
            continue
        out_of_order = int(sum(st.output_reordered_from_previous.max for st in s.stages))
        skipped = sum(r.stages[i].skipped or 0 for r in e.runs for i in range(len(s.stages)))
        held = max(r.stages[i].held_peak or 0 for r in e.runs for i in range(len(s.stages)))
        rows.append(
            [
                _config_label(e),
                c.title,
                _spread(s.stages[-1].last_packet_ms),
                _spread(s.overhead_ratio, 3),
                latency.p50_p99(latency.end_to_end(e.runs)),
                _spread(s.stages[0].reordered_from_previous),
                str(out_of_order),
                str(skipped),
                str(held),
            ]
        )
    return md_table(
        [
            "config",
            "what",
            "last packet, stage 3 (ms)",
            "× floor",
            "latency p50 / p99",
            "arrivals reordered at stage 1",
            "outputs reordered, all stages (worst run)",
            "skipped",
            "most held by a port",
        ],
        rows,
    )


def _multicore_cores(entries):
    """How many cores the multi-core set-up had: any of its entries says."""
    return next((len(e.config.cores) for n, e in entries.items() if n.endswith("@multicore")), "?")


def claim_tally(claims):
    """The answer, in one sentence: how the judged claims came out, and how
    many were not run, counted apart (the terminal prints it too)."""
    counts = {v: sum(1 for c in claims if c.verdict == v) for v in VERDICTS}
    judged = len(claims) - counts[NOT_RUN]
    text = (
        f"Claims: {counts[REPRODUCED]} reproduced, {counts[DIFFERS]} differ (explained), "
        f"{counts[NOT_REPRODUCED]} not reproduced, of the {judged} judged."
    )
    if counts[NOT_RUN]:
        text += (
            f" {counts[NOT_RUN]} of {len(claims)} not run: a configuration they need was not measured, "
            "so they are neither reproduced nor refuted."
        )
    return text


# What to look for in each timeline: what the experiment's policy makes the
# stages do (the figure shows what they did).
TIMELINE_NOTES = {
    "exp1": "one-way, no worker: the producer's sends return at once and stage 1 takes packets on many ORB "
    "threads at once, working them side by side; look at how long stages 2 and 3 stand empty (the empty "
    "pipeline) and at the hatched packets that overtook others on the way",
    "exp5": "two-way, no worker: each send returns only once all three stages are done with the packet, so one "
    "packet is in the pipeline at a time: each stage works, then waits (lighter) while the stages after it work",
    "exp6": "two-way with a worker: a stage's upcall only queues the packet, so the producer runs ahead, the "
    "queues fill (the thin lines) and the three stages work side by side",
}


def timelines_section(figures):
    """The timelines of the experiments that show the paper's phenomena
    (figures.TIMELINES), each with what to look for; none drawn: a line saying why."""
    drawn = [(exp, figures[f"timeline:{exp}"]) for exp in TIMELINE_NOTES if f"timeline:{exp}" in figures]
    out = ["## Timelines: the first packets", ""]
    if not drawn:
        return out + [
            "None drawn: exp1, exp5 and exp6 were not run, or their runs were kept before results held "
            "their first packets.",
            "",
        ]
    out += [
        "Each experiment's median run, its first packets: a lane per component, a bar per packet from the start "
        "of its work to done, in the packet's colour at every stage, lighter while the stage was sending it on "
        "(a two-way call waits there for the stages after it); a thin line under a lane is a packet waiting in "
        "a worker queue, a hatched bar a packet that arrived out of order, and in work the share of the time "
        "shown in which the stage worked a packet. Gaps are idle time (docs/reference/trace.md).",
        "",
    ]
    for exp, name in drawn:
        out += [f"**{exp}**: {TIMELINE_NOTES[exp]}.", "", f"![{exp}: the first packets]({name})", ""]
    return out


def render(entries, claims, meta, figures):
    """The whole report. figures: {"overview": file, "exp1@multicore": file, ...}."""
    env = meta["environment"]
    cores = _multicore_cores(entries)
    # Experiments of Table 1 with no configuration in the campaign (--only):
    # a line says so, where a section each would say "not run" twice.
    missing = [exp for exp in TABLE1 if not any(f"{exp}@{setup}" in entries for setup in SETUPS)]
    out = [
        "# The messaging-semantics paper, reproduced by scabench",
        "",
        f"**{claim_tally(claims)}**",
        "",
        f'Paper: "How different messaging semantics can affect SCA applications performances" (SDR\'10), and the '
        f"same authors' slides. Measured {meta['finished_at']} on {env['cpu_model']} ({env['online_cpus']} CPUs, "
        f"Linux {env['kernel']}, omniORB {env['omniorb_version']}), {meta['packets']} packets per run, "
        f"{meta['runs']} run(s) per configuration{' (quick mode)' if meta['quick'] else ''}; the whole campaign took "
        f"{meta['elapsed_s'] / 60:.1f} min.",
        "",
        CONTENTS,
        "",
        "## Claims",
        "",
        f"Each claim of the paper, judged on this machine's runs, with the figures that decide it. {VERDICT_LEGEND}.",
        "",
        md_table(
            ["claim", "verdict", "deciding figures"],
            [[c.claim, f"**{c.verdict}**", c.evidence] for c in sorted(claims, key=lambda c: c.verdict == NOT_RUN)],
        ),
        "",
        "## Headline: the six experiments of Table 1",
        "",
        "The paper ran on 4 cores and on 1; here the multi-core set-up is this machine's "
        f"{cores} cores. The floor is the "
        "least time the hardware allows for the last packet: on few cores the CPU bound (3 stages × N × 5 ms over "
        "the cores), otherwise the pipeline bound (N × 5 ms + 10 ms). Times are medians over the runs with the "
        "range in brackets."
        + (
            f" These runs sent {meta['packets']} packets, the paper's {PAPER_PACKETS}: compare the ratios to the "
            "floor, not the times, and the reordering counts as a share of the packets."
            if meta["packets"] != PAPER_PACKETS
            else ""
        ),
        "",
        headline(entries),
        "",
        *([f"Not run in this campaign, so left out below: {', '.join(missing)}.", ""] if missing else []),
        f"![last packet over the floor]({figures['overview']})",
        "",
        "## Latency per packet",
        "",
        "The ratio says how soon the last packet was done; latency says how long each packet took: from the "
        'start of its send at the producer to done at stage 3 (docs/architecture.md, "Metrics"). Deep queues '
        "buy throughput with latency: a worker queue of 64 packets of 5 ms can hold a packet for 320 ms per stage. "
        "Each figure is the median over the runs, with the range in brackets; percentiles are numpy's linear ones.",
        "",
        latency_table(entries),
        "",
    ]
    if "latency" in figures:
        out += [f"![latency per packet]({figures['latency']})", ""]
    out += timelines_section(figures)
    for exp in (e for e in TABLE1 if e not in missing):
        out += [f"## {exp}: {_experiment_title(exp)}", ""]
        for setup in SETUPS:
            e = entries.get(f"{exp}@{setup}")
            if not e or not e.summary:
                out += [
                    f"{setup}: no successful run ({'; '.join(f.error for f in e.failures)})"
                    if e
                    else f"{setup}: not run",
                    "",
                ]
                continue
            out += [paper_layout(e, exp, setup), "", send_statements(e, exp, setup), ""]
            if f"{exp}@{setup}" in figures:
                out += [f"![producer send times, {exp} on {e.config.setup_label}]({figures[f'{exp}@{setup}']})", ""]
    out += [
        "## The slides' four tests",
        "",
        "The slides ran four of the six experiments again on the 4-core machine. Our figures are those of the "
        "same experiments on the multi-core set-up above. The slides give the time of the last arrival and one "
        "reordering count without naming which; we set our count from previous beside it.",
        "",
        slides(entries),
        "",
    ]
    groups = [
        (
            "collocated",
            "## Collocation (sections 4.1 and 5.2)",
            "Every component in one process: calls become direct calls on the caller's thread.",
        ),
        (
            "sync",
            "## The four sync scopes, without and with a worker",
            "The paper describes SYNC_NONE, SYNC_WITH_TRANSPORT, SYNC_WITH_SERVER and SYNC_WITH_TARGET but measures "
            "only the second. Producer does not wait; multi-core set-up.",
        ),
        ("claims", "## Configurations behind other claims", ""),
        (
            "beyond",
            "## Beyond the paper: ordered one-way, built",
            "The paper's section 5.1 remedies (sequence numbers, a reorder buffer that skips late packets, "
            "watermark flow control), which it describes but never builds, and a credit window, beside its "
            "two-way + worker answer (experiments/ordering/). Multi-core set-up unless a row says otherwise; one-way "
            "calls go into omniORB's multi-threaded dispatch, so arrivals are scrambled and the reorder buffers "
            "must restore order. The rows marked batch run every host under Linux's SCHED_BATCH policy (the "
            "spec's [run] scheduler), so that a thread waking to take a packet does not preempt a stage's work.",
        ),
    ]
    for group, title, intro in groups:
        names = [n for n, e in entries.items() if e.config.group == group]
        if names:
            table = ordered_table(entries, names) if group == "beyond" else config_table(entries, names)
            out += [title, ""] + ([intro, ""] if intro else []) + [table, ""]
    out += [
        "## Method",
        "",
        "- Every configuration runs over real processes (one per component unless collocated), omniORB over "
        "giop:tcp on 127.0.0.1; the multi-core set-up uses every core, the single-core set-up CPU 0.",
        f"- Before each run the campaign waits until other processes use less than {meta['quiet_below_pct']:.0f} % "
        f"of the run's cores; a run during which they used more than {meta['redo_above_pct']:.0f} % is redone "
        f"(at most {meta['max_redos']} times).",
        "- Reordering counts follow the paper's definitions; times are from the producer's first send to the "
        "moment each stage finished forwarding its last packet.",
        "",
    ]
    redone = [
        (n, r.redone_for_foreign_load_pct)
        for n, e in entries.items()
        if not e.same_as
        for r in e.runs
        if r.redone_for_foreign_load_pct
    ]
    failures = [(n, f) for n, e in entries.items() if not e.same_as for f in e.failures]
    out.append(
        f"Runs redone for foreign load: {len(redone)}"
        + (" (" + "; ".join(f"{n}: {', '.join(f'{p:.0f} %' for p in ps)}" for n, ps in redone) + ")" if redone else "")
        + "."
    )
    out.append("")
    out.append(
        f"Failed runs: {len(failures)}"
        + ("" if not failures else " (" + "; ".join(f"{n}: {f.error}" for n, f in failures) + ")")
        + "."
    )
    out.append("")
    return "\n".join(out)


def paper_csv(entries):
    """`scabench paper --csv`: a row per configuration, its figures with
    their spreads and run counts, and for the six experiments of Table 1
    the paper's own time of the last packet and ratio beside them."""

    def paper(e):
        c = e.config
        table1 = c.id in TABLE1 and c.setup in SETUPS and not c.collocated
        return {
            "paper_last_packet_ms": paper_table(c.id, c.setup)[1]["last_packet_ms"][-1] if table1 else None,
            "paper_overhead_ratio": paper_ratio(c.id, c.setup) if table1 else None,
        }

    return campaign_csv(entries, last=paper)

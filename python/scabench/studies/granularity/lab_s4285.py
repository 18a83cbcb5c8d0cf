"""The STANAG 4285 part of `scabench granularity`: the seed's real waveform
(its section 3.2, Figs. 3 and 4). The transmitter's work per frame is fixed,
so instead of the FIR's N and B this part sweeps the symbol rate: at each
rate it measures the plain program (the seed's non-SCA version) and the 2-,
7- and 11-component splits, with a process per component and collocated,
under the FIR lab's discipline (Lab.measured: the plan's cores, a steady
window after the warm-up, repeats, runs with foreign load redone).

The plain program is measured like the splits: a window of its process's
threads, not its whole-life rusage. Each frame is dithered within one
scheduler tick (as the FIR source's packets), since the frame periods here
(106.7, 10 and 4 ms) are whole or half multiples of a 4 ms tick. Windows are
whole frame periods, so every window holds the same number of frames.

Calls are always two-way: every block keeps state, so frames must stay in
order (experiments/stanag4285/README.md)."""

import statistics

from scabench.measure.window import user_split
from scabench.studies.granularity.analysis_s4285 import summarise
from scabench.studies.granularity.rows import S4285Row
from scabench.waveforms.stanag4285 import SYMBOLS_PER_FRAME, load_split, plain_argv

DATA_SEED = 4285  # the random user bytes, the same for the plain program and every split


def frame_rate(symbol_rate):
    return symbol_rate / SYMBOLS_PER_FRAME


def window_s(plan, symbol_rate):
    """At least s4285_window_s and s4285_window_frames frames, in whole frame periods."""
    fr = frame_rate(symbol_rate)
    wanted = max(plan.s4285_window_s, plan.s4285_window_frames / fr)
    return max(1, round(wanted * fr)) / fr


def run(lab):
    """Measures every configuration of the plan; the result's "stanag4285"."""
    p = lab.plan
    lab.log(
        f"STANAG 4285 ({p.s4285_mode}): symbol rates {list(p.s4285_rates)}, plain program and "
        f"{', '.join(map(str, p.s4285_splits))} components"
    )
    rows = []
    for rate in p.s4285_rates:
        fr = frame_rate(rate)
        window = window_s(p, rate)
        frames = lab.packets_for(fr, p.warmup_s, window)
        dither = lab.dither_us(fr)
        settings = dict(mode=p.s4285_mode, packets=frames, symbol_rate=rate, seed=DATA_SEED, dither_us=dither)
        where = dict(symbol_rate=rate, frame_rate=fr, frames=frames, window_s=window, dither_us=dither)

        def plain_once():
            m, report = lab.run_program_window(
                plain_argv(**settings), "plain", p.warmup_s, window, 60 + frames / fr, announces_start=False
            )
            return {**m, "checksum": report["audio_digest"]}

        m = lab.measured(f"plain {rate}/s", plain_once, p.s4285_repeats)
        plain = _row("plain", 1, "standalone", "none", where, m, lab, reference=None)
        rows.append(plain)
        for components in p.s4285_splits:
            for placement in p.s4285_placements:

                def split_once(components=components, placement=placement):
                    spec = load_split(components, placement == "collocated", **settings)
                    m = lab.run_spec_window(spec, p.warmup_s, window)
                    digest = next((s["audio_digest"] for s in m["stats"].values() if "audio_digest" in s), None)
                    return {**m, "checksum": digest}

                m = lab.measured(f"split{components} {placement} {rate}/s", split_once, p.s4285_repeats)
                rows.append(
                    _row(
                        f"split{components}",
                        components,
                        placement,
                        "tcp" if placement == "process" else "none",
                        where,
                        m,
                        lab,
                        reference=plain.audio_digest,
                    )
                )
    return {"mode": p.s4285_mode, "call": "twoway", "configurations": rows, "summary": summarise(rows)}


def _row(config, components, placement, transport, where, m, lab, reference):
    """One configuration: the median of its runs' U+S and their spread (U+S
    is exact per run); U is that median split in the proportion of every
    run's tick samples together, since one run's few ticks are too rough
    alone (so U has no spread of its own: the tick count says how rough it
    is), and unknown (None) when no tick fell on any run."""
    runs = m["runs"]
    total = statistics.median(r["total_pct"] for r in runs)
    sampled = m["user_sample_s"] + m["system_sample_s"] > 0
    user = total * user_split(m["user_sample_s"], m["system_sample_s"]) if sampled else None
    ncores = len(lab.plan.cores)
    row = S4285Row(
        workload="s4285",
        config=config,
        components=components,
        placement=placement,
        transport=transport,
        mode=lab.plan.s4285_mode,
        **where,
        user_pct=user,
        system_pct=None if user is None else total - user,
        total_pct=total,
        csw_per_s=statistics.median(r["csw_per_s"] for r in runs),
        total_spread=[min(r["total_pct"] for r in runs), max(r["total_pct"] for r in runs)],
        us_per_frame=total / 100.0 * ncores / where["frame_rate"] * 1e6,
        audio_digest=m["checksum"],
        output_matches_plain=None if reference is None else m["checksum"] == reference,
        **{
            k: m[k]
            for k in (
                "foreign_pct",
                "sar_user_pct",
                "sar_total_pct",
                "system_csw_per_s",
                "user_sample_s",
                "system_sample_s",
                "split_source",
                "runs",
                "processes",
            )
        },
    )
    lab.log(
        f"  {where['symbol_rate']:6d} symbols/s {config:8s} {placement:10s} "
        f"U {'–' if user is None else f'{user:.3f}':>7s} %  U+S {total:7.3f} %  CSR {row.csw_per_s:7.0f}/s"
    )
    return row

"""The STANAG 4285 part of the granularity lab: the 11-vs-2 ratios and the
overhead left once collocated on known numbers, the window in whole frame
periods (the tiny plan's run over real processes:
system/test_granularity_s4285_run.py)."""

from dataclasses import replace

import pytest

from scabench.errors import ScabenchError
from scabench.studies.granularity import lab_s4285
from scabench.studies.granularity.analysis_s4285 import summarise
from scabench.studies.granularity.lab import Lab
from scabench.studies.granularity.plan import PLANS
from scabench.studies.granularity.rows import S4285Row


def row(config, components, placement, rate, user, total):
    """A row as the lab makes it; what the summary does not read is left at zero."""
    return S4285Row(
        workload="s4285",
        config=config,
        components=components,
        placement=placement,
        transport="tcp" if placement == "process" else "none",
        mode="2400L",
        symbol_rate=rate,
        frame_rate=rate / 256,
        frames=0,
        window_s=0.0,
        dither_us=0,
        user_pct=user,
        system_pct=None if user is None else total - user,
        total_pct=total,
        csw_per_s=0.0,
        total_spread=[total, total],
        us_per_frame=0.0,
        audio_digest="",
        output_matches_plain=None,
        foreign_pct=0.0,
        sar_user_pct=0.0,
        sar_total_pct=0.0,
        system_csw_per_s=0.0,
        user_sample_s=0.0,
        system_sample_s=0.0,
        split_source="taskstats",
        runs=[],
        processes=[],
    )


def test_ratios_and_the_overhead_left_once_collocated():
    rows = [
        row("plain", 1, "standalone", 64000, 1.0, 1.25),
        row("split2", 2, "process", 64000, 2.0, 3.0),
        row("split11", 11, "process", 64000, 5.0, 9.0),
        row("split2", 2, "collocated", 64000, 1.5, 2.0),
        row("split11", 11, "collocated", 64000, 2.1, 3.5),
        row("split7", 7, "process", 64000, 4.0, 6.0),
    ]
    summary = summarise(rows)
    process, collocated = summary["ratios"]
    assert process["placement"] == "process" and collocated["placement"] == "collocated"
    assert process["user_wide_vs_narrow"] == pytest.approx(2.5)
    assert process["total_wide_vs_narrow"] == pytest.approx(3.0)
    assert process["user_wide_vs_plain"] == pytest.approx(5.0)
    assert process["total_wide_vs_plain"] == pytest.approx(7.2)
    assert collocated["total_wide_vs_narrow"] == pytest.approx(1.75)
    (left,) = summary["leftover"]
    # user: (2.1 - 1.5) / (5 - 2); user+system: (3.5 - 2) / (9 - 3)
    assert left["user_left_collocated"] == pytest.approx(0.2)
    assert left["total_left_collocated"] == pytest.approx(0.25)
    assert left["total_process_overhead_pct"] == pytest.approx(6.0)
    assert left["total_collocated_overhead_pct"] == pytest.approx(1.5)


def test_no_overhead_or_no_tick_leaves_the_share_undefined():
    rows = [
        row("split2", 2, "process", 2400, None, 0.4),
        row("split11", 11, "process", 2400, 0.9, 0.4),
        row("split2", 2, "collocated", 2400, 0.2, 0.2),
        row("split11", 11, "collocated", 2400, 0.3, 0.3),
    ]
    summary = summarise(rows)
    assert summary["ratios"][0]["user_wide_vs_narrow"] is None  # no tick on split2: U unknown
    assert summary["ratios"][0]["user_wide_vs_plain"] is None  # no plain program measured
    (left,) = summary["leftover"]
    assert left["user_left_collocated"] is None
    assert left["total_left_collocated"] is None  # processes showed no overhead to share
    # Without both placements at a rate there is no leftover to compute.
    assert summarise(rows[:2])["leftover"] == []


def test_the_window_is_whole_frame_periods():
    plan = replace(PLANS["default"], s4285_window_s=3.0, s4285_window_frames=64)
    assert lab_s4285.window_s(plan, 2400) == pytest.approx(64 * 256 / 2400)  # 64 frames outlast 3 s at 9.375/s
    assert lab_s4285.window_s(plan, 64000) == pytest.approx(750 * 256 / 64000)  # 3 s is 750 frames
    assert lab_s4285.window_s(replace(plan, s4285_window_frames=0), 2400) == pytest.approx(28 * 256 / 2400)


def test_an_unknown_part_is_refused_in_one_line():
    with pytest.raises(ScabenchError, match=r"plan parts \['fm'\]: each must be one of fir, s4285"):
        Lab(replace(PLANS["tiny"], parts=("fm",))).run()

"""The granularity lab over real processes: the FIR program against a
reference cascade, the rate regulator, and the tiny plan end to end (its
report and CSV read back without the lab); the arithmetic and the window
measurement on known numbers: unit/test_granularity.py."""

import csv
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import scabench as scabench_cli
from test_granularity import LAB_MODULES, NO_LAB, func, lowpass

from scabench.model.spec_toml import parse_spec
from scabench.run.runner import run_spec
from scabench.studies.granularity.rows import read_result


def test_func_output_matches_a_reference_cascade():
    taps, samples, packets = 15, 300, 4
    packet = (100.0 * np.sin(0.01 * np.arange(samples))).astype(np.float32).astype(np.float64)
    x = np.tile(packet, packets)  # the source sends the same packet each time
    h = lowpass(taps)
    for _ in range(9):
        x = np.convolve(x, h)[: x.size]
    report = func("--filters", 9, "--taps", taps, "--samples", samples, "--period-us", 0, "--packets", packets)
    assert report["packets"] == packets
    assert report["checksum"] == pytest.approx(x.sum(), rel=1e-6)


def test_func_holds_its_packet_rate():
    # Packet i is not sent before start + i * period (dither only delays),
    # so 21 packets take at least 20 periods. (The schedule's arithmetic and
    # its catching up after a late packet are tested in core_test.cpp.)
    start = time.monotonic()
    report = func(
        "--filters", 1, "--taps", 4, "--samples", 64, "--period-us", 10000, "--packets", 21, "--dither-us", 2000
    )
    assert report["packets"] == 21
    assert time.monotonic() - start >= 0.2


def test_producer_holds_its_packet_rate():
    # 31 packets every 10 ms on an absolute schedule: the last one is due 300
    # ms after the schedule's origin, never sent before. The times count from
    # the first packet, which a busy machine may send a few ms after that
    # origin (the schedule then catches up), so the span can fall short of
    # 300 ms by that much; without pacing it would be a few ms in all.
    doc = {
        "run": {"sample_type": "float", "cores": "all"},
        "component": [
            {"name": "src", "kind": "producer", "packets": 31, "samples": 64, "period_us": 10000},
            {"name": "snk", "kind": "sink"},
        ],
        "chain": ["src", "snk"],
        "policy": {"call": "twoway"},
    }
    result = run_spec(parse_spec(doc, "schedule.toml"))
    assert result.producer.sent == 31
    assert result.producer.last_sent_ms >= 270


def test_tiny_granularity_run(tiny_granularity):
    out, result = tiny_granularity
    for name in (
        "report.md",
        "report.html",
        "transfer.png",
        "fig6_fir_nb20000.png",
        "fig7_fir.png",
        "models_fir_W11.png",
    ):
        if name == "models_fir_W11.png":
            continue  # the tiny plan sweeps W3 only
        assert (out / name).is_file(), name
    rows = read_result(result)["configurations"]
    assert {(r.config, r.placement, r.transport) for r in rows} >= {
        ("FUNC", "standalone", "none"),
        ("W3", "process", "unix"),
        ("W3", "collocated", "none"),
    }
    for r in rows:
        assert r.analysed and None not in (
            r.user_pct,
            r.total_pct,
            r.csw_per_s,
            r.model1_user_pct,
            r.model1_total_pct,
            r.model2_user_pct,
            r.model2_total_pct,
        ), r.config
        assert r.output_matches_func is True, r
        assert 0 < r.total_pct < 100 and r.user_pct <= r.total_pct + 1e-9
        assert r.model2_total_pct >= r.model1_total_pct
    assert all(not math.isnan(r.total_pct) for r in rows)
    assert "W3/FUNC" in (out / "report.md").read_text()
    # The rows have the keys, in the order, of the same plan's rows written before they were typed
    # (data/README.md); so has the rest of the result.
    before = json.loads((Path(__file__).parents[1] / "data" / "granularity.json").read_text())
    assert list(result) == ["scabench", *before]  # and the scabench that measured it, first
    assert [list(r) for r in result["configurations"]] == [list(r) for r in before["configurations"]]
    assert [list(r) for r in result["stanag4285"]["configurations"]] == [
        list(r) for r in before["stanag4285"]["configurations"]
    ]


def test_fig6_measures_func_and_the_configurations_in_turn():
    # Round by round, FUNC then each configuration, so that both sides of a
    # W/FUNC ratio share the machine's minutes; the report's range is the
    # rounds' lowest and highest ratio, around the ratio of the means.
    from dataclasses import replace

    from scabench.studies.granularity.lab import Lab
    from scabench.studies.granularity.plan import PLANS
    from scabench.studies.granularity.render_fir import round_spread

    lab = Lab(replace(PLANS["tiny"], fig6_repeats=2, placements=(("collocated", "none"),)), log=lambda m: None)
    order = []
    run_func, run_layout = lab._run_func, lab._run_layout
    lab._run_func = lambda *a: (order.append("FUNC"), run_func(*a))[1]
    lab._run_layout = lambda layout, *a: (order.append(layout.name), run_layout(layout, *a))[1]
    func, w3 = lab.fig6_point(taps=10, samples=2000)
    assert order == ["FUNC", "W3", "FUNC", "W3"]
    assert (func.config, w3.config, len(func.runs), len(w3.runs)) == ("FUNC", "W3", 2, 2)
    assert w3.output_matches_func is True
    low, high = (float(v) for v in round_spread(w3, func).strip(" ()").split("–"))
    assert low - 0.005 <= w3.total_pct / func.total_pct <= high + 0.005
    assert round_spread(w3, replace(func, runs=func.runs[:1])) == ""  # not in turn: no range


def test_the_report_renders_from_the_json_without_the_lab(tiny_granularity, tmp_path):
    # In an interpreter where the lab cannot be imported, the JSON the run
    # wrote renders the very report the run rendered from its result (so the
    # stored summary is all the report needs); and so does --from-json.
    out, _ = tiny_granularity
    written = out.parent / "g.json"
    proc = subprocess.run(
        [sys.executable, "-c", NO_LAB.format(lab=sorted(LAB_MODULES)), written, tmp_path / "alone"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "alone" / "report.md").read_text() == (out / "report.md").read_text()
    assert sorted(p.name for p in (tmp_path / "alone").iterdir()) == sorted(p.name for p in out.iterdir())
    proc = scabench_cli("granularity", "--from-json", written, "--out", tmp_path / "cli")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert (tmp_path / "cli" / "report.md").read_text() == (out / "report.md").read_text()


def test_the_csv_has_a_row_per_configuration_measured(tiny_granularity, tmp_path):
    # Written by the run (typed rows) and again from its JSON (plain rows): the same table.
    out, result = tiny_granularity
    rows = list(csv.DictReader((out.parent / "g.csv").open()))
    parts = [r["part"] for r in rows]
    assert parts == ["fir"] * len(result["configurations"]) + ["s4285"] * len(result["stanag4285"]["configurations"])
    assert [float(r["total_pct"]) for r in rows if r["part"] == "fir"] == [
        c["total_pct"] for c in result["configurations"]
    ]
    proc = scabench_cli(
        "granularity", "--from-json", out.parent / "g.json", "--out", tmp_path / "r", "--csv", tmp_path / "again.csv"
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert (tmp_path / "again.csv").read_text() == (out.parent / "g.csv").read_text()

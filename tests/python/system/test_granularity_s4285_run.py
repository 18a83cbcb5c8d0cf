"""The STANAG 4285 part of the granularity lab over real processes: the
tiny plan's run measures every configuration, and its part alone renders
(the arithmetic on known numbers: unit/test_granularity_s4285.py)."""

import json

from scabench.studies.granularity.render import render
from scabench.studies.granularity.rows import read_result


def test_tiny_run_measures_every_configuration(tiny_granularity, tmp_path):
    out, written = tiny_granularity
    result = read_result(written)
    part = result["stanag4285"]
    plan = result["plan"]
    rows = part["configurations"]
    expected = {("plain", "standalone")} | {
        (f"split{n}", p) for n in plan["s4285_splits"] for p in plan["s4285_placements"]
    }
    for rate in plan["s4285_rates"]:
        at = [r for r in rows if r.symbol_rate == rate]
        assert {(r.config, r.placement) for r in at} == expected
        for r in at:
            assert r.total_pct > 0 and r.csw_per_s > 0, r.config
            assert r.frames * 256 / rate > plan["warmup_s"] + r.window_s  # the stream outlasts the window
            assert r.processes and all(q["total_pct"] >= 0 for q in r.processes)
            if r.config != "plain":
                assert r.output_matches_plain is True, r
                assert len(r.processes) == (r.components if r.placement == "process" else 1)
        plain = next(r for r in at if r.config == "plain")
        assert [q["name"] for q in plain.processes] == ["plain"]  # its own process, over the window
        assert plain.window_s == next(r for r in at if r.config != "plain").window_s
    assert {(r["symbol_rate"], r["placement"]) for r in part["summary"]["ratios"]} == {
        (rate, p) for rate in plan["s4285_rates"] for p in ("process", "collocated")
    }
    text = (out / "report.md").read_text()
    assert "## STANAG 4285 transmitter" in text and "11 over 2 components" in text
    assert (out / "s4285.png").is_file()

    # The STANAG part alone (what --only s4285 writes) renders without the FIR sections.
    alone = {
        k: v
        for k, v in written.items()
        if k not in ("calibration", "test_application", "test_application_cold", "parameters")
    }
    alone["configurations"] = []
    render(read_result(json.loads(json.dumps(alone))), tmp_path)
    text = (tmp_path / "report.md").read_text()
    assert "## STANAG 4285 transmitter" in text and "Fig. 6" not in text

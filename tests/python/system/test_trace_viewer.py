"""A real run's trace opened in a real viewer: the Performance panel of the
DevTools that Chromium carries, driven by scripts/open_trace.js through
puppeteer-core. Skipped where any of them is missing (node, puppeteer-core
on NODE_PATH, Chromium at $CHROMIUM or /usr/bin/chromium): none of them is
a dependency of scabench. The viewer must take the file and show the span
the file holds."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, pipeline_toml, scabench

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def _viewer_missing() -> str | None:
    if shutil.which("node") is None:
        return "no node"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}"
    found = subprocess.run(["node", "-e", "require.resolve('puppeteer-core')"], capture_output=True)
    return "no puppeteer-core on NODE_PATH" if found.returncode else None


@pytest.mark.skipif(_viewer_missing() is not None, reason=str(_viewer_missing()))
def test_a_trace_opens_in_chromiums_trace_viewer_with_its_whole_span(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=12, work_us=2000, stages=2, policy='call = "oneway"'))
    trace = tmp_path / "run.trace.json"
    assert scabench("run", spec, "--trace", trace).returncode == 0
    timed = [e for e in json.loads(trace.read_text())["traceEvents"] if e["ph"] != "M"]
    span_ms = (max(e["ts"] + e.get("dur", 0) for e in timed) - min(e["ts"] for e in timed)) / 1000
    shot = tmp_path / "viewer.png"
    opened = subprocess.run(
        ["node", str(REPO / "scripts" / "open_trace.js"), str(trace), str(shot)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert opened.returncode == 0, opened.stdout + opened.stderr
    shown = json.loads(opened.stdout.strip().splitlines()[-1])["range"]  # "1,365.29 ms"
    number, unit = re.fullmatch(r"([\d,.]+)\s*(μs|ms|s)", shown).groups()
    value_ms = float(number.replace(",", "")) * {"μs": 1e-3, "ms": 1.0, "s": 1e3}[unit]
    # As precise as the viewer words it: three figures at least.
    assert value_ms == pytest.approx(span_ms, rel=0.01), (shown, span_ms)
    assert shot.read_bytes()[:4] == b"\x89PNG"

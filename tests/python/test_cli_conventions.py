"""The command line's conventions: --version, the version in every result
file, spec lookup by name, validate, the component catalogue, scaled units,
tables that fit, CSV beside JSON, help summaries."""
import json
import subprocess

import pytest

from conftest import REPO, scabench
from scabench import __version__, units, version
from scabench.report.results_file import write_json
from scabench.run.results import RunResult


def head_commit():
    return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_version_names_the_release_and_the_commit():
    proc = scabench("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"scabench {__version__} (commit {head_commit()}")


def test_outside_a_git_checkout_the_commit_is_unknown(tmp_path, monkeypatch):
    monkeypatch.setattr(version, "REPO_ROOT", tmp_path)
    version.commit.cache_clear()
    try:
        assert version.version_info() == {"version": __version__, "commit": "unknown"}
    finally:
        version.commit.cache_clear()


def test_every_result_file_names_the_scabench_that_wrote_it(tmp_path):
    doc = json.loads(write_json({"status": "ok", "configs": {}}, tmp_path / "a.json").read_text())
    assert list(doc)[0] == "scabench"
    assert doc["scabench"]["version"] == __version__
    assert doc["scabench"]["commit"].startswith(head_commit())
    # A document written again keeps the version that measured it.
    again = json.loads(write_json({"scabench": {"version": "0.0.1", "commit": "abc"}, "x": 1},
                                  tmp_path / "b.json").read_text())
    assert again["scabench"] == {"version": "0.0.1", "commit": "abc"}



def test_a_run_result_keeps_the_scabench_that_measured_it_and_old_ones_still_load():
    from test_results import ok_run
    run = ok_run()
    doc = run.as_dict()
    assert "scabench" not in doc  # as results were written before
    assert RunResult.from_dict(doc) == run
    run.scabench = {"version": "0.0.1", "commit": "abc"}
    doc = run.as_dict()
    assert list(doc)[0] == "scabench" and RunResult.from_dict(doc) == run


@pytest.mark.parametrize("ms, printed", [(189226.5 / 1000, "189.2 ms"), (5123.4, "5.123 s"), (0.0123, "12.30 µs"),
                                         (30.0, "30 ms"), (0.000674, "674 ns"), (0.0, "0 ms"), (None, "–"),
                                         (-2.5, "-2.500 ms"), (7_200_000.0, "7200 s")])
def test_durations_are_scaled(ms, printed):
    assert units.duration(ms) == printed


@pytest.mark.parametrize("bps, printed", [(800000000000000000, "800 Pbit/s"), (1366122, "1.366 Mbit/s"),
                                          (999, "999 bit/s"), (2.5e9, "2.500 Gbit/s"), (0, "0 bit/s")])
def test_rates_are_scaled(bps, printed):
    assert units.bit_rate(bps) == printed


def test_several_figures_print_in_one_unit():
    scale = units.time_unit(1500.0)
    assert [units.duration(v, scale) for v in (1500.0, 20.0)] == ["1.500 s", "0.020 s"]

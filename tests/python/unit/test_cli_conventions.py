"""The command line's conventions: --version, the version in every result
file, spec lookup by name, validate, the component catalogue, scaled units,
tables that fit, CSV beside JSON, help summaries."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, pipeline_toml, scabench

from scabench import __version__, units, version
from scabench.cli import main
from scabench.errors import SpecError
from scabench.model.load import find_spec
from scabench.paths import program
from scabench.report.results_file import stamped, write_json
from scabench.run.results import RunResult


def head_commit():
    return subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()


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


def test_a_document_names_the_scabench_that_made_it_and_keeps_it(tmp_path):
    doc = json.loads(write_json(stamped({"status": "ok", "configs": {}}), tmp_path / "a.json").read_text())
    assert list(doc)[0] == "scabench"
    assert doc["scabench"]["version"] == __version__
    assert doc["scabench"]["commit"].startswith(head_commit())
    # Written again (a report re-rendered), a document keeps what measured it, or that nothing was recorded.
    for kept in ({"scabench": {"version": "0.0.1", "commit": "abc"}, "x": 1}, {"status": "ok"}):
        assert json.loads(write_json(kept, tmp_path / "b.json").read_text()) == kept


def test_a_run_result_keeps_the_scabench_that_measured_it_and_old_ones_still_load():
    from test_results import ok_run

    run = ok_run()
    doc = run.as_dict()
    assert "scabench" not in doc  # as results were written before
    assert RunResult.from_dict(doc) == run
    run.scabench = {"version": "0.0.1", "commit": "abc"}
    doc = run.as_dict()
    assert list(doc)[0] == "scabench" and RunResult.from_dict(doc) == run


@pytest.mark.parametrize(
    "ms, printed",
    [
        (189226.5 / 1000, "189.2 ms"),
        (5123.4, "5.123 s"),
        (0.0123, "12.30 µs"),
        (30.0, "30 ms"),
        (0.000674, "674 ns"),
        (0.0, "0 ms"),
        (None, "–"),
        (-2.5, "-2.500 ms"),
        (7_200_000.0, "7200 s"),
    ],
)
def test_durations_are_scaled(ms, printed):
    assert units.duration(ms) == printed


@pytest.mark.parametrize(
    "bps, printed",
    [
        (800000000000000000, "800 Pbit/s"),
        (1366122, "1.366 Mbit/s"),
        (999, "999 bit/s"),
        (2.5e9, "2.500 Gbit/s"),
        (0, "0 bit/s"),
    ],
)
def test_rates_are_scaled(bps, printed):
    assert units.bit_rate(bps) == printed


def test_several_figures_print_in_one_unit():
    scale = units.time_unit(1500.0)
    assert [units.duration(v, scale) for v in (1500.0, 20.0)] == ["1.500 s", "0.020 s"]


@pytest.mark.parametrize(
    "median, low, high, printed",
    [
        (663.9, 663.2, 664.6, "663.9 ms (663.2–664.6)"),
        (1004.0, 990.0, 1020.0, "1.004 s (0.990–1.020)"),
        (0.5, 0.41, 0.6, "500 µs (410–600)"),
        (5.0, 5.0, 5.0, "5 ms"),
        (5.0, None, None, "5 ms"),
        (None, 1.0, 2.0, "–"),
    ],
)
def test_a_duration_and_its_range_print_in_the_medians_unit(median, low, high, printed):
    assert units.duration_spread(median, low, high) == printed


# --- help ------------------------------------------------------------------------


def test_help_summaries_are_whole():
    proc = scabench("--help")
    assert proc.returncode == 0, proc.stderr
    listing = " ".join(proc.stdout.split())
    for name, command in main.commands.items():
        assert command.short_help, f"{name} has no short_help: click would cut its docstring"
        assert f"{name} {' '.join(command.short_help.split())}" in listing
    commands = proc.stdout.split("Commands:")[1]
    assert "..." not in commands  # click's mark of a summary it cut


# --- specs by name ------------------------------------------------------------------


def test_a_spec_is_found_by_its_name_from_any_directory(tmp_path):
    assert find_spec("exp6") == REPO / "experiments" / "paper" / "exp6.toml"
    # This checkout's package, wherever the command runs from.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "scabench.cli", "validate", "exp6", "split2"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("ok") and "experiments/paper/exp6.toml" in lines[0]
    assert "experiments/stanag4285/split2.toml" in lines[1]


def test_a_path_wins_over_a_name_and_several_matches_are_refused(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "same.toml").write_text("")
    (tmp_path / "a" / "alone.toml").write_text("")
    assert find_spec("alone", tmp_path) == tmp_path / "a" / "alone.toml"
    with pytest.raises(SpecError, match=r"names several specs .*: a/same.toml, b/same.toml; give the path"):
        find_spec("same", tmp_path)
    with pytest.raises(SpecError, match=r"no spec of that name .*\(names: alone, same\)"):
        find_spec("other", tmp_path)
    with pytest.raises(SpecError, match="no spec of that name"):
        find_spec("*", tmp_path)  # a name is compared, not globbed
    assert find_spec("x/same", tmp_path) == Path("x/same")  # a path is a path, found or not
    assert find_spec("same.toml", tmp_path) == Path("same.toml")


def test_validate_says_one_line_per_spec_and_exits_2_on_a_bad_one(write_spec):
    good = write_spec(pipeline_toml(packets=7, stages=2, work_us=2000), "good.toml")
    bad = write_spec(pipeline_toml(policy='call = "sideways"'), "bad.toml")
    proc = scabench("validate", good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        f"ok   {good}: 3 components, 2 connections, 3 processes, 7 packets, floor 16 ms"
    ]
    proc = scabench("validate", good, bad, "no-spec-has-this-name")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 3 and lines[0].startswith("ok")
    assert lines[1].startswith(f"bad  {bad}: policy.call:") and "twoway" in lines[1]
    assert lines[2].startswith("bad  no-spec-has-this-name: no such file")


def test_validate_checks_the_memory_a_run_needs(write_spec):
    huge = write_spec(
        pipeline_toml(packets=5000, stages=1, policy="worker = 4000").replace("samples = 256", "samples = 8000000")
    )
    proc = scabench("validate", huge)
    assert proc.returncode == 2 and "GiB of memory" in proc.stdout


def test_validate_names_each_sources_packets_and_counts_processes_in_words():
    proc = scabench("validate", "experiments/graphs/receiver-collocated.toml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ": 7 components, 6 connections, 1 process, packets data 200, control 40, floor " in proc.stdout


# --- the catalogue ------------------------------------------------------------------


def test_components_lists_every_kind_and_the_policy_within_100_columns():
    proc = scabench("components")
    assert proc.returncode == 0, proc.stderr
    described = json.loads(
        subprocess.run([str(program("scabench-host")), "--describe"], capture_output=True, text=True, check=True).stdout
    )
    names = {line.split()[0] for line in proc.stdout.splitlines() if line.strip()}
    assert set(described["kinds"]) <= names
    assert set(described["policy"]) <= names
    assert max(len(line) for line in proc.stdout.splitlines()) <= 100


def test_components_says_what_uses_provides_and_side_are():
    """The catalogue's "uses", "provides" and "side" columns are SCA's words,
    which it did not define."""
    lines = scabench("components", "--wide").stdout.splitlines()  # a row on one line
    kinds_end = next(i for i, line in enumerate(lines) if line.startswith("external "))
    assert lines[kinds_end + 1] == (
        "uses: a kind's output ports (it sends through them); provides: its input ports (it receives)"
    )
    assert "side: the end of a connection the key acts on: the uses port, the provides port, or both" in lines
    # Each kind's sample types in one order, the Python kinds' as the C++ ones'.
    types = {line.split()[0]: line[line.index("double") :].split()[:4] for line in lines if " double, " in line}
    assert types["py-stage"] == types["stage"] == ["double,", "float,", "octet,", "short"]


def test_components_of_a_kind_gives_types_defaults_and_ranges():
    proc = scabench("components", "producer", "--wide")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line.strip()}
    # The ranges configure enforces, whole numbers as a person reads them.
    assert rows["packets"][1:6] == ["integer", "1,000", "1", "to", "4,294,967,295"]
    assert rows["period_us"][1:6] == ["integer", "0", "0", "to", "4,294,967,295"]
    assert rows["drop_packet"][1:5] == ["integer", "-1", "-1", "up"]
    # A range that depends on the sample type gives each type's.
    assert "double: 1 to 8,388,096;" in proc.stdout and "octet: 1 to 67,104,768" in proc.stdout
    assert "record_capacity" not in rows and "out.call" not in rows  # the runner's and the [policy] table's


def test_components_of_a_kind_lists_its_typed_ports():
    lines = scabench("components", "merge", "--wide").stdout.splitlines()
    rows = {line.split()[0]: line.split() for line in lines if line.strip()}
    assert rows["in_a"][1:4] == rows["in_b"][1:4] == ["provides", "sample", "yes"]
    assert rows["out"][1:5] == ["uses", "sample", "no", "every"]
    assert rows["sample"][:3] == ["sample", "types:", "double,"]
    encoder = scabench("components", "s4285-encoder", "--wide").stdout
    assert "in     provides    octet   yes" in encoder and "sample types" not in encoder  # its own type


def test_components_shows_names_booleans_and_depths_as_a_spec_writes_them():
    stage = scabench("components", "stage", "--wide").stdout
    assert next(line for line in stage.splitlines() if line.startswith("work ")).split()[1:7] == [
        "string",
        "cpu",
        "none",
        "|",
        "cpu",
        "|",
    ]
    sink = scabench("components", "sink", "--wide").stdout
    assert next(line for line in sink.splitlines() if line.startswith("checksum")).split()[1:3] == ["boolean", "false"]
    rows = {
        line.split()[0]: line.split() for line in scabench("components", "--wide").stdout.splitlines() if line.strip()
    }
    # values, then the default: a depth of 0 is written false (no worker), not 0
    assert rows["worker"][1:11] == ["provides", "false", "|", "true", "(64)", "|", "1", "to", "65,536", "false"]
    assert rows["packet_length"][2:5] == ["0", "to", "67,104,768"]


# --- colour -----------------------------------------------------------------------


def _on_a_terminal(*args):
    """A command's stdout when it is a terminal (a pseudo-terminal)."""
    import pty

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    env.update(
        TERM="xterm-256color",
        COLUMNS="100",
        PYTHONPATH=os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")]),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", *args], stdout=slave, stderr=subprocess.PIPE, cwd=REPO, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode()


def test_colour_on_a_terminal_only():
    assert "\x1b[" in _on_a_terminal("validate", "exp6")
    piped = scabench("validate", "exp6")
    assert piped.returncode == 0 and "\x1b[" not in piped.stdout

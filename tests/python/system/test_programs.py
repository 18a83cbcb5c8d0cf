"""Every program built from cpp/programs answers --help: its usage on stdout,
nothing on stderr, exit status 0, and it starts nothing (no ORB call, no
measurement). A bad command line gets one line saying why, then the usage,
on stderr, and exit status 2. The programs are read from CMakeLists.txt, so
a new one is covered as soon as it is built."""

import json
import re
import subprocess

import pytest

from scabench.paths import REPO_ROOT, program


def programs():
    """{binary: source} of every add_executable whose source is in cpp/programs."""
    cmake = (REPO_ROOT / "CMakeLists.txt").read_text()
    return dict(re.findall(r"add_executable\((\S+) (cpp/programs/\S+\.cpp)", cmake))


def test_every_program_source_is_built():
    built = set(programs().values())
    # A program is a source in cpp/programs, or a folder there of its parts with its main.cpp (launcher/).
    folder = REPO_ROOT / "cpp" / "programs"
    sources = {
        f"cpp/programs/{p.relative_to(folder)}" for pattern in ("*.cpp", "*/main.cpp") for p in folder.glob(pattern)
    }
    assert built == sources and len(built) >= 7


@pytest.mark.parametrize("name", sorted(programs()))
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_is_the_usage_on_stdout_and_exit_0(name, flag):
    done = subprocess.run([str(program(name)), flag], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith(f"usage: {name} ") and len(done.stdout.splitlines()) >= 2, done.stdout


# A command line each program cannot use (none of them reaches an ORB call).
BAD = {
    "scabench-calibrate": ["weigh"],
    "scabench-func": ["--filters"],
    "scabench-host": ["--colour", "blue"],
    "scabench-hostile": ["--port", "in"],
    "scabench-launch": ["only-one.json"],
    "scabench-profile": ["sprint"],
    "scabench-s4285": ["--colour", "blue"],
}


@pytest.mark.parametrize("name", sorted(programs()))
def test_a_bad_command_line_is_one_line_then_the_usage_and_exit_2(name):
    done = subprocess.run([str(program(name))] + BAD[name], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", done.stdout
    why, usage = done.stderr.split("\n", 1)
    assert why.startswith(f"{name}: ") and usage.startswith(f"usage: {name} "), done.stderr


def test_the_launcher_refuses_a_plan_value_out_of_bounds_in_one_line_before_it_starts_anything(tmp_path):
    """The launcher holds each value of the plan to the bounds the plan's
    schema gives it (the runner's spec checks give the same): a bad plan is
    one line naming the file, the key and what is valid, and exit 2."""
    plan = json.loads((REPO_ROOT / "docs" / "plan.example.json").read_text())
    plan["run_dir"] = str(tmp_path / "run")  # made by nothing: the launcher stops before
    plan["externals"][0]["bind_timeout_s"] = 900
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    done = subprocess.run(
        [str(program("scabench-launch")), str(path), str(tmp_path / "manifest.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"scabench-launch: {path}: plan: externals[0].bind_timeout_s: 900 is out of bounds: it must be more "
        "than 0 and at most 600 (docs/plan.schema.json)"
    ]
    assert not (tmp_path / "run").exists() and not (tmp_path / "manifest.json").exists()

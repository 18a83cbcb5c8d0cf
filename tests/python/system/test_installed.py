"""scabench installed as a package (`pip install ./python`, not editable)
into a fresh environment and used from outside the source tree: the specs
and the IDL come with it, the programs are found through SCABENCH_BIN_DIR or
PATH (docs/api.md, "Installed"), and a waveform runs over real processes.

Offline and quick: the new environment sees this one's packages (numpy,
omniORBpy, pip, and setuptools and wheel for the build) through a .pth file,
so pip builds and installs scabench alone, from a copy of the checkout's
python/, idl/ and experiments/."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest
from conftest import REPO

from scabench.paths import bin_dir

SCRIPT = """
import json, sys
import scabench
from scabench import paths
wf = scabench.load("exp6")
for stage in ("stage1", "stage2", "stage3"):
    wf[stage].set(work_us=200)
result = wf.run(packets=4)
print(json.dumps({"package": scabench.__file__, "source": str(wf.source), "experiments": str(paths.experiments_dir()),
                  "idl": str(paths.idl_dir()), "checkout": paths.checkout() is not None, "status": result.status,
                  "received": [s.received for s in result.stages], "commit": result.scabench["commit"]}))
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A venv with scabench installed from a copy of the checkout; returns its folder."""
    root = tmp_path_factory.mktemp("installed")
    src = root / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    shutil.copytree(REPO / "python", src / "python", symlinks=True, ignore=ignore)
    for folder in ("experiments", "idl"):
        shutil.copytree(REPO / folder, src / folder, ignore=ignore)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # This environment's packages, after the new one's own: pip, the dependencies, and the build's setuptools and
    # wheel (python[test]; scripts/setup.sh installs them).
    build = [importlib.util.find_spec(name) for name in ("setuptools", "wheel")]
    assert all(build), "building scabench's wheel offline needs setuptools and wheel: run scripts/setup.sh"
    folders = dict.fromkeys([sysconfig.get_paths()["purelib"], *(str(Path(s.origin).parents[1]) for s in build)])
    (Path(site) / "deps.pth").write_text("".join(f"{f}\n" for f in folders))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCABENCH_BIN_DIR")}
    pip = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            str(src / "python"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=root,
    )
    assert pip.returncode == 0, pip.stderr
    return venv


def run_in(venv, args, env_extra, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCABENCH_BIN_DIR")}
    env.update({"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "XDG_CACHE_HOME": str(cwd / "cache"), **env_extra})
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


def test_an_installed_scabench_runs_a_waveform_from_anywhere(installed, tmp_path):
    site = next((installed / "lib").glob("python3*/site-packages"))
    proc = run_in(
        installed, [str(installed / "bin" / "python"), "-c", SCRIPT], {"SCABENCH_BIN_DIR": str(bin_dir())}, tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["package"] == str(site / "scabench" / "__init__.py")
    assert out["source"] == str(site / "scabench" / "bundled" / "experiments" / "paper" / "exp6.toml")
    assert out["experiments"] == str(site / "scabench" / "bundled" / "experiments")
    assert out["idl"] == str(site / "scabench" / "bundled" / "idl")
    assert out["checkout"] is False and out["commit"] == "unknown"
    assert out["status"] == "ok" and out["received"] == [4, 4, 4]

    # The package carries every spec and SAD of the checkout, and the IDL (and, beside a program in
    # Python such as RhGain's, the bytecode pip compiles at install: not the checkout's).
    def files(folder):
        return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts)

    bundled = site / "scabench" / "bundled"
    assert files(bundled / "experiments") == files(REPO / "experiments")
    assert {p.name for p in (bundled / "idl").iterdir()} >= {"cf.idl", "scabench.idl", "node.idl"}


def test_an_installed_scabench_finds_the_programs_on_path(installed, tmp_path):
    """Without SCABENCH_BIN_DIR: scabench-host's folder on PATH (a cmake
    --install prefix's bin); the Python stage's stubs generated from the
    package's IDL into the user's cache; and without either, one line."""
    scabench = str(installed / "bin" / "scabench")
    sad = (
        next((installed / "lib").glob("python3*/site-packages")) / "scabench/bundled/experiments/sad/waveforms/"
        "exp1/exp1.sad.xml"
    )
    on_path = run_in(
        installed,
        [scabench, "validate", "exp6", "pyline", sad],
        {"PATH": f"{installed / 'bin'}:{bin_dir()}:/usr/bin:/bin"},
        tmp_path,
    )
    assert on_path.returncode == 0, on_path.stdout + on_path.stderr
    assert [line.split()[0] for line in on_path.stdout.splitlines()] == ["ok", "ok", "ok"]
    assert list((tmp_path / "cache" / "scabench" / "python-idl").iterdir())  # the stubs, outside any checkout
    nowhere = run_in(installed, [scabench, "validate", "exp6"], {}, tmp_path)
    assert nowhere.returncode == 2
    assert nowhere.stdout.strip() == (
        "bad  scabench-host is not found: set SCABENCH_BIN_DIR to the folder of "
        "scabench's programs (a build's build/bin), or put the bin folder of `cmake "
        "--install build --prefix P` on PATH"
    )


# The programs on PATH after set-up, and `cmake --install` (CMakeLists.txt, "install").

BUILD = REPO / "build"
# Programs built that a user does not run by name: the tests', the hostile
# peer of the tests, and the peers' programs, which `scabench peers` runs
# from the build. Every other program built is put on PATH.
RUN_BY_SCABENCH_OR_TESTS = ("*-tests", "scabench-hostile", "scabench-peer-*")


def _install(prefix):
    return subprocess.run(
        ["cmake", "--install", str(BUILD), "--prefix", str(prefix)], capture_output=True, text=True, timeout=120
    )


def test_setup_puts_every_program_a_user_runs_on_path(tmp_path):
    """`scabench-host --library ... --describe`, as the README gives it,
    failed after set-up: only `scabench` was linked onto PATH."""
    on_path = tmp_path / "bin"
    on_path.mkdir()
    env = {**os.environ, "SCABENCH_INSTALL_BIN": str(on_path)}
    for _ in range(2):  # idempotent
        link = subprocess.run(
            [str(REPO / "scripts" / "link-programs.sh")], capture_output=True, text=True, env=env, timeout=60
        )
        assert link.returncode == 0 and link.stdout == "", link.stdout + link.stderr
    linked = sorted(p.name for p in on_path.iterdir())
    built = sorted(p.name for p in (BUILD / "bin").iterdir())
    assert [p for p in built if not any(Path(p).match(g) for g in RUN_BY_SCABENCH_OR_TESTS)] == [
        p for p in linked if p != "scabench"
    ]
    assert (on_path / "scabench").resolve() == (REPO / ".venv" / "bin" / "scabench").resolve()
    # What `cmake --install` installs is what set-up links: one list (build/programs.txt).
    assert _install(tmp_path / "prefix").returncode == 0
    assert sorted(p.name for p in (tmp_path / "prefix" / "bin").iterdir()) == [p for p in linked if p != "scabench"]
    # The README's command, by name, runs the build's program.
    path = {**env, "PATH": f"{on_path}:/usr/bin:/bin"}
    assert shutil.which("scabench-host", path=path["PATH"]) == str(on_path / "scabench-host")
    assert (on_path / "scabench-host").resolve() == (BUILD / "bin" / "scabench-host").resolve()
    describe = subprocess.run(["scabench-host", "--describe"], capture_output=True, text=True, env=path, timeout=60)
    assert describe.returncode == 0, describe.stderr
    assert {"producer", "stage", "sink"} <= set(json.loads(describe.stdout)["kinds"])


def _files_outside_build(since_ns):
    """The checkout's files (outside build/ and git's own) written since then."""
    written = []
    for folder, dirs, files in os.walk(REPO):
        if Path(folder) == REPO:
            dirs[:] = [d for d in dirs if d not in ("build", ".git")]
        written += [Path(folder, f) for f in files if os.lstat(Path(folder, f)).st_mtime_ns >= since_ns]
    return written


def test_installing_to_a_prefix_writes_nothing_outside_the_build_folder(tmp_path):
    """The checkout stays as it was: install_manifest.txt, which lists what
    was installed, goes into the build folder like the rest of the build's
    outputs; everything else into the prefix."""
    before = time.time_ns()
    installed = _install(tmp_path / "prefix")
    assert installed.returncode == 0, installed.stderr
    assert _files_outside_build(before) == []
    listed = (BUILD / "install_manifest.txt").read_text().split()
    assert listed and all(Path(f).is_relative_to(tmp_path / "prefix") for f in listed)
    host = subprocess.run(
        [str(tmp_path / "prefix" / "bin" / "scabench-host"), "--describe"], capture_output=True, text=True, timeout=60
    )
    assert host.returncode == 0 and "producer" in json.loads(host.stdout)["kinds"]


def test_a_copied_build_folder_refuses_to_install_and_leaves_the_original_alone(tmp_path):
    """A copied checkout installed the original build's files and wrote the
    original's install_manifest.txt: its build folder names the original by
    absolute path. The install refuses, before it copies anything, and says
    how to configure a build of the copy's own."""
    copy = tmp_path / "copy"
    # The build folder's own files (its programs and objects are not needed to be refused).
    shutil.copytree(
        BUILD,
        copy / "build",
        symlinks=True,
        ignore=shutil.ignore_patterns("bin", "lib", "CMakeFiles", "python-idl", "idl", "*.o", "install_manifest.txt"),
    )
    manifest = BUILD / "install_manifest.txt"
    was = manifest.stat().st_mtime_ns if manifest.exists() else None
    before = time.time_ns()
    proc = subprocess.run(
        ["cmake", "--install", str(copy / "build"), "--prefix", str(tmp_path / "prefix")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0
    said = " ".join(proc.stderr.split())
    assert f"the build folder {copy / 'build'} was configured in {BUILD} and copied" in said, said
    assert (
        f"Configure a fresh build in the copy: cmake -E rm -rf {copy / 'build'} && cmake -S {copy} -B "
        f"{copy / 'build'} -G Ninja"
    ) in said
    assert not (tmp_path / "prefix").exists() and not (copy / "build" / "install_manifest.txt").exists()
    assert (manifest.stat().st_mtime_ns if manifest.exists() else None) == was  # the original's, untouched
    assert _files_outside_build(before) == []


def test_setup_in_a_copied_checkout_says_its_build_folder_is_the_originals(tmp_path):
    """Set-up in a copy would build and link programs that load the
    original's runtime: it says so, exit 2, before it installs anything."""
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "scripts", copy / "scripts")
    (copy / "build").mkdir()
    (copy / "build" / "CMakeCache.txt").write_text((BUILD / "CMakeCache.txt").read_text())
    proc = subprocess.run(["bash", str(copy / "scripts" / "setup.sh")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"setup: build/ was configured in {BUILD} and copied here; remove it (rm -rf build) and run setup again"
    ]
    assert sorted(p.name for p in copy.iterdir()) == ["build", "scripts"]

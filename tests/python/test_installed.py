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
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # This environment's packages, after the new one's own: pip, the dependencies, and the build's setuptools and
    # wheel (python[test]; scripts/setup.sh installs them).
    build = [importlib.util.find_spec(name) for name in ("setuptools", "wheel")]
    assert all(build), "building scabench's wheel offline needs setuptools and wheel: run scripts/setup.sh"
    folders = dict.fromkeys([sysconfig.get_paths()["purelib"], *(str(Path(s.origin).parents[1]) for s in build)])
    (Path(site) / "deps.pth").write_text("".join(f"{f}\n" for f in folders))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCABENCH_BIN_DIR")}
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                          "--no-build-isolation", str(src / "python")], capture_output=True, text=True, timeout=600,
                         env=env, cwd=root)
    assert pip.returncode == 0, pip.stderr
    return venv


def run_in(venv, args, env_extra, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SCABENCH_BIN_DIR")}
    env.update({"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "XDG_CACHE_HOME": str(cwd / "cache"), **env_extra})
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


def test_an_installed_scabench_runs_a_waveform_from_anywhere(installed, tmp_path):
    site = next((installed / "lib").glob("python3*/site-packages"))
    proc = run_in(installed, [str(installed / "bin" / "python"), "-c", SCRIPT],
                  {"SCABENCH_BIN_DIR": str(bin_dir())}, tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["package"] == str(site / "scabench" / "__init__.py")
    assert out["source"] == str(site / "scabench" / "bundled" / "experiments" / "paper" / "exp6.toml")
    assert out["experiments"] == str(site / "scabench" / "bundled" / "experiments")
    assert out["idl"] == str(site / "scabench" / "bundled" / "idl")
    assert out["checkout"] is False and out["commit"] == "unknown"
    assert out["status"] == "ok" and out["received"] == [4, 4, 4]
    # The package carries every spec and SAD of the checkout, and the IDL.
    shipped = sorted(p.relative_to(REPO / "experiments") for p in (REPO / "experiments").rglob("*") if p.is_file())
    bundled = site / "scabench" / "bundled"
    assert sorted(p.relative_to(bundled / "experiments") for p in (bundled / "experiments").rglob("*")
                  if p.is_file()) == shipped
    assert {p.name for p in (bundled / "idl").iterdir()} >= {"cf.idl", "scabench.idl", "node.idl"}


def test_an_installed_scabench_finds_the_programs_on_path(installed, tmp_path):
    """Without SCABENCH_BIN_DIR: scabench-host's folder on PATH (a cmake
    --install prefix's bin); the Python stage's stubs generated from the
    package's IDL into the user's cache; and without either, one line."""
    scabench = str(installed / "bin" / "scabench")
    sad = next((installed / "lib").glob("python3*/site-packages")) / "scabench/bundled/experiments/sad/waveforms/" \
        "exp1/exp1.sad.xml"
    on_path = run_in(installed, [scabench, "validate", "exp6", "pyline", sad],
                     {"PATH": f"{installed / 'bin'}:{bin_dir()}:/usr/bin:/bin"}, tmp_path)
    assert on_path.returncode == 0, on_path.stdout + on_path.stderr
    assert [line.split()[0] for line in on_path.stdout.splitlines()] == ["ok", "ok", "ok"]
    assert list((tmp_path / "cache" / "scabench" / "python-idl").iterdir())  # the stubs, outside any checkout
    nowhere = run_in(installed, [scabench, "validate", "exp6"], {}, tmp_path)
    assert nowhere.returncode == 2
    assert nowhere.stdout.strip() == ("bad  scabench-host is not found: set SCABENCH_BIN_DIR to the folder of "
                                      "scabench's programs (a build's build/bin), or put the bin folder of `cmake "
                                      "--install build --prefix P` on PATH")

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from scabench.paths import bin_dir

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
# unit/: no process started, seconds in all (`make test-unit`, `pytest -m "not system"`);
# system/: tests that start real processes (omniNames, hosts, the launcher, runs of the
# command line or the library). Every test under system/ is marked `system`.
SYSTEM = HERE / "system"
# This folder (its helper modules) is on sys.path through this conftest; the two test
# folders are too, so that a test module may import another's helpers across them.
sys.path[1:1] = [str(HERE / "unit"), str(SYSTEM)]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SYSTEM in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.system)


# The transports whose hops keep every policy's semantics: the semantic tests
# run over each (the `transport` fixture). unix is tcp's twin through omniORB
# (test_end_to_end.test_every_transport covers it).
SEMANTIC_TRANSPORTS = ("tcp", "shm")


def pipeline_toml(
    *,
    packets=20,
    work="cpu",
    work_us=1000,
    stages=3,
    period_us=0,
    policy="",
    placement="",
    run="",
    extra="",
    transport=None,
):
    """A producer -> stages pipeline spec, like the paper's, but small."""
    names = ["producer"] + [f"stage{i + 1}" for i in range(stages)]
    text = f"chain = {names!r}\n".replace("'", '"')
    text += f"[run]\n{run}\n" + (f'transport = "{transport}"\n' if transport else "")
    text += f'[[component]]\nname = "producer"\nkind = "producer"\npackets = {packets}\nsamples = 256\n'
    text += f"period_us = {period_us}\n"
    for n in names[1:]:
        text += f'[[component]]\nname = "{n}"\nkind = "stage"\nwork = "{work}"\nwork_us = {work_us}\n'
    text += f"[policy]\n{textwrap.dedent(policy)}\n"
    if placement:
        text += f"[placement]\n{placement}\n"
    return text + extra


@pytest.fixture(params=SEMANTIC_TRANSPORTS)
def transport(request):
    """Each transport a policy's semantics must hold over (a test taking it runs once per transport)."""
    return request.param


@pytest.fixture
def write_spec(tmp_path):
    def write(text, name="spec.toml"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


def scabench(*args, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "scabench.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def _parent(pid):
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def descends_from(pid, root):
    while pid > 1:
        if pid == root:
            return True
        pid = _parent(pid)
    return False


def run_processes(marker, root=None):
    """Processes whose command line holds `marker`; with `root`, only that
    process's descendants: other runs on the machine (another checkout's
    benchmark, say) have hosts with the same names and must be left alone."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmd and (root is None or descends_from(int(pid), root)):
            found.append((int(pid), cmd))
    return found


@pytest.fixture(scope="session")
def tiny_granularity(tmp_path_factory):
    """One `scabench granularity` run with the tiny plan (both parts, over
    real processes), shared by the tests that read its report and JSON."""
    out = tmp_path_factory.mktemp("granularity")
    proc = scabench(
        "granularity",
        "--plan",
        "tiny",
        "--out",
        out / "report",
        "--json",
        out / "g.json",
        "--csv",
        out / "g.csv",
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out / "report", json.loads((out / "g.json").read_text())


# The runtime installed into a prefix and examples/cpp-component built against
# it: one of each per session, shared by the plugin and SAD tests (each takes
# the better part of a minute on 2 cores).
CPP_COMPONENT_EXAMPLE = REPO / "examples" / "cpp-component"


def check_command(args, **kwargs):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=900, **kwargs)
    assert proc.returncode == 0, f"{' '.join(map(str, args))}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="session")
def installed(tmp_path_factory):
    """The runtime's build tree (the one whose programs the tests run)
    installed into a fresh prefix."""
    build = bin_dir().parent
    if not (build / "cmake_install.cmake").is_file():
        pytest.skip(f"{bin_dir()} is not in a CMake build tree; nothing to install")
    prefix = tmp_path_factory.mktemp("prefix")
    check_command(["cmake", "--install", build, "--prefix", prefix])
    return prefix


@pytest.fixture(scope="session")
def gain_library(installed, tmp_path_factory):
    """examples/cpp-component configured and built out of tree against the
    installed package, once per session: its libgain.so."""
    build = tmp_path_factory.mktemp("gain-build")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    check_command(
        [
            "cmake",
            "-S",
            CPP_COMPONENT_EXAMPLE,
            "-B",
            build,
            *generator,
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
            f"-DCMAKE_PREFIX_PATH={installed}",
        ]
    )
    check_command(["cmake", "--build", build])
    library = build / "libgain.so"
    assert library.is_file()
    return library

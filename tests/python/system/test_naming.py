"""The run's Naming Service: every run binds its components, the SCA way, in
a context of its own in a real omniNames; a held run keeps them up for an
outside tool to resolve until Ctrl-C."""

import json
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import REPO, pipeline_toml

from scabench.model.load import load_spec
from scabench.run import processes
from scabench.run.runner import run_spec

needs_tools = pytest.mark.skipif(
    shutil.which("nameclt") is None or shutil.which("catior") is None,
    reason="omniORB's nameclt and catior (Debian package omniorb) are not installed",
)


def nameclt(corbaloc, *args):
    out = subprocess.run(
        ["nameclt", "-ORBInitRef", f"NameService={corbaloc}", *args], capture_output=True, text=True, timeout=30
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_run_names_its_naming_service_and_removes_it(write_spec):
    result = run_spec(load_spec(write_spec(pipeline_toml(packets=5, stages=2), name="chain.toml")))
    naming = result.naming
    assert re.fullmatch(r"corbaloc::127\.0\.0\.1:\d+/NameService", naming["corbaloc"])
    assert naming["context"] == "chain_1"
    port = int(naming["corbaloc"].split(":")[3].split("/")[0])
    assert (
        subprocess.run(["ss", "-ltn", f"sport = :{port}"], capture_output=True, text=True).stdout.count("LISTEN") == 0
    ), "the Naming Service outlived its run"


@needs_tools
def test_a_held_run_is_resolved_by_name_from_outside_then_released(write_spec, tmp_path):
    spec = write_spec(pipeline_toml(packets=8, stages=2), name="chain.toml")
    out = tmp_path / "held.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(spec), "--hold", "--json", str(out)],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    tag = processes.owner_tag(proc.pid)
    line = ""
    deadline = time.monotonic() + 60
    while "held:" not in line and time.monotonic() < deadline:
        line = proc.stderr.readline()
        assert line or proc.poll() is None, "the command ended before holding"
    corbaloc = re.search(r"(corbaloc::\S+/NameService)", line).group(1)
    context = re.search(r"context (\S+);", line).group(1)
    assert context == "chain_1"
    assert set(nameclt(corbaloc, "list", context).split()) == {"producer", "stage1", "stage2"}
    ior = nameclt(corbaloc, "resolve", f"{context}/stage2").strip()
    described = subprocess.run(["catior", ior], capture_output=True, text=True, timeout=30).stdout
    assert 'Type ID: "IDL:CF/Resource:1.0"' in described
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr
    assert "stage2" in stdout and "ratio" in stdout
    assert json.loads(out.read_text())["status"] == "ok"
    assert processes.tagged_processes(tag) == {}


def test_the_host_answers_help_and_refuses_bad_exec_parameters():
    from scabench.paths import program

    out = subprocess.run([str(program("scabench-host")), "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "NAMING_CONTEXT_IOR" in out.stdout
    out = subprocess.run(
        [
            str(program("scabench-host")),
            "NAMING_CONTEXT_IOR",
            "corbaloc::127.0.0.1:1/NameService",
            "NAME_BINDING",
            "s",
            "COMPONENT_IDENTIFIER",
            "s_1",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2 and "KIND" in out.stderr.splitlines()[0]


@needs_tools
def test_a_host_started_the_sca_way_binds_itself(tmp_path):
    from scabench.paths import program
    from scabench.run.naming import NamingService

    with NamingService(tmp_path) as names:
        host = processes.spawn(
            [
                str(program("scabench-host")),
                "NAMING_CONTEXT_IOR",
                names.corbaloc,
                "COMPONENT_IDENTIFIER",
                "stage1_1",
                "NAME_BINDING",
                "stage1",
                "KIND",
                "stage",
                "RECORD_DIR",
                str(tmp_path),
            ]
        )
        try:
            deadline = time.monotonic() + 30
            while "stage1" not in nameclt(names.corbaloc, "list") and time.monotonic() < deadline:
                time.sleep(0.1)
            ior = nameclt(names.corbaloc, "resolve", "stage1").strip()
            described = subprocess.run(["catior", ior], capture_output=True, text=True, timeout=30).stdout
            assert 'Type ID: "IDL:CF/Resource:1.0"' in described
        finally:
            processes.stop(host)

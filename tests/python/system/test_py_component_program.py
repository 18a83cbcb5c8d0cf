"""The execute protocol of a Python component program (`scabench-py-stage`):
its parameters, its name in the naming context, and its end, by
releaseObject(), by a signal, or with its parent. Against a real omniNames;
every process started here is ended by its PID."""

import os
import signal
import subprocess
import sys
import time
import tomllib

import pytest

# The fixtures (context, make_sink, naming, orb, start_stage) are imported for pytest to find.
from py_components_world import (  # noqa: F401
    LOOPBACK,
    WAIT_S,
    alive,
    bound,
    context,
    end_process,
    make_sink,
    naming,
    orb,
    stage_command,
    start_stage,
)

from scabench.paths import REPO_ROOT
from scabench.run.processes import free_port


def test_release_unbinds_the_name_and_exits_0(start_stage):
    stage = start_stage(binding="stage7")
    res = stage.resolve()
    assert res._get_identifier() == "stage7:waveform_1"
    res.initialize()
    res.start()
    res.releaseObject()
    assert not stage.bound()  # gone by the time releaseObject returns
    assert stage.proc.wait(WAIT_S) == 0
    assert stage.stderr() == ""


def test_sigterm_ends_it_cleanly_and_unbinds(start_stage):
    stage = start_stage()
    stage.resolve()
    os.kill(stage.proc.pid, signal.SIGTERM)
    assert stage.proc.wait(WAIT_S) == 128 + signal.SIGTERM
    assert not stage.bound()
    assert "Traceback" not in stage.stderr()


def test_it_dies_with_its_parent(tmp_path, context):
    ctx, ior = context
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys; p = subprocess.Popen(sys.argv[1:]); print(p.pid, flush=True); p.wait()",
            *stage_command(),
            "NAMING_CONTEXT_IOR",
            ior,
            "COMPONENT_IDENTIFIER",
            "orphan:w",
            "NAME_BINDING",
            "orphan",
            *LOOPBACK,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    child = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + WAIT_S
        while not bound(ctx, "orphan"):
            assert time.monotonic() < deadline, "never bound"
            time.sleep(0.05)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + WAIT_S
        while alive(child):
            assert time.monotonic() < deadline, "outlived its parent"
            time.sleep(0.05)
        assert not bound(ctx, "orphan")  # it ended cleanly: SIGTERM
    finally:
        end_process(parent)
        if alive(child):
            os.kill(child, signal.SIGKILL)


@pytest.mark.parametrize(
    "args, why",
    [
        ([], "missing NAMING_CONTEXT_IOR, COMPONENT_IDENTIFIER, NAME_BINDING"),
        (["NAMING_CONTEXT_IOR", "IOR:00", "COMPONENT_IDENTIFIER", "a"], "missing NAME_BINDING"),
        (["NAMING_CONTEXT_IOR", "IOR:00", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING"], "'NAME_BINDING' has no value"),
        (
            ["NAMING_CONTEXT_IOR", "x", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b", "SAMPLE_TYPE", "int"],
            "SAMPLE_TYPE 'int'",
        ),
        (
            ["NAMING_CONTEXT_IOR", "x", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b", "-ORBtraceLevel"],
            "ORB option -ORBtraceLevel has no value",
        ),
        (
            ["NAMING_CONTEXT_IOR", "x", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b", "KIND", "fir"],
            "KIND 'fir': this program serves 'stage'",
        ),
        (
            ["NAMING_CONTEXT_IOR", "not-an-ior", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b"],
            "not an object reference",
        ),
        (
            [
                "NAMING_CONTEXT_IOR",
                "x",
                "COMPONENT_IDENTIFIER",
                "a",
                "NAME_BINDING",
                "b",
                "RECORD_DIR",
                "/nonexistent/x",
            ],
            "RECORD_DIR '/nonexistent/x' is not a directory",
        ),
        (
            ["NAMING_CONTEXT_IOR", "x", "COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b"]
            + ["EVENTS_FILE", "/nonexistent/x/events"],
            "EVENTS_FILE '/nonexistent/x/events': its folder does not exist",
        ),
    ],
)
def test_bad_parameters_get_one_line_and_exit_2(args, why):
    done = subprocess.run(stage_command() + args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and why in done.stderr, done.stderr


def test_help_and_an_unusable_context(orb, make_sink):
    done = subprocess.run(stage_command() + ["--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "NAMING_CONTEXT_IOR" in done.stdout and "NAME_BINDING" in done.stdout
    base = ["COMPONENT_IDENTIFIER", "a", "NAME_BINDING", "b"] + LOOPBACK
    # Another kind of object: not a naming context.
    _, sink_ref = make_sink()
    done = subprocess.run(
        stage_command() + ["NAMING_CONTEXT_IOR", orb.object_to_string(sink_ref)] + base,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "not a CosNaming naming context" in done.stderr, done.stderr
    # Nothing listens there: it cannot be reached.
    done = subprocess.run(
        stage_command() + ["NAMING_CONTEXT_IOR", f"corbaloc::127.0.0.1:{free_port()}/NameService"] + base,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "cannot reach the naming context" in done.stderr, done.stderr


def test_the_console_script_is_declared():
    scripts = tomllib.loads((REPO_ROOT / "python" / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["scabench-py-stage"] == "scabench.components.stage:main"

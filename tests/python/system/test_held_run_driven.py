"""An outside tool drives a held run: `scabench run SPEC --hold` keeps the
components up once the stream has ended; a CORBA client of its own (this
test, with omniORBpy) finds them by name in the run's Naming Service and
drives them through CF::Resource, then releases the run by closing the
command's standard input (docs/how-to/held-runs.md, "Driving a held run from a tool")."""

import json
import re
import signal
import subprocess
import sys

import pytest
from conftest import REPO
from omniORB import CORBA

# The orb fixture is imported for pytest to find.
from py_components_world import S, end_process, name, orb, props  # noqa: F401

from scabench.run import processes

PYLINE = REPO / "experiments" / "open" / "pyline.toml"


def values(properties):
    return {p.id: p.value.value() for p in properties}


@pytest.fixture
def held_run(tmp_path):
    out = tmp_path / "held.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "run", str(PYLINE), "--packets", "30", "--hold", "--json", str(out)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert "held:" in line, line + proc.stderr.read()
        corbaloc = re.search(r"(corbaloc::\S+/NameService)", line).group(1)
        context = re.search(r"context (\S+);", line).group(1)
        yield proc, corbaloc, context, out
    finally:
        end_process(proc)


def test_a_tool_resolves_queries_reconfigures_and_restarts_a_held_component(orb, held_run):
    proc, corbaloc, context, out = held_run
    tag = processes.owner_tag(proc.pid)
    root = orb.string_to_object(corbaloc)._narrow(S.CosNaming.NamingContext)
    waveform = root.resolve(name(context))._narrow(S.CosNaming.NamingContext)
    bound = {b.binding_name[0].id for b in waveform.list(100)[0]}
    assert bound == {"producer", "stage1", "stage2", "stage3", "sink"}

    # The C++ stage: its properties, the run's configuration among them.
    stage3 = waveform.resolve(name("stage3"))._narrow(S.CF.Resource)
    assert stage3._get_identifier() == "stage3"
    now = values(stage3.query([]))
    assert now["work"] == "none" and now["in.dispatch"] == "pool" and now["out.call"] == "twoway"
    # A property the stage lets change while it runs (the stage's work), and
    # one it does not (a port's policy) until it is stopped.
    stage3.configure(props(work_us=250))
    assert values(stage3.query([S.CF.DataType("work_us", CORBA.Any(CORBA.TC_null, None))])) == {"work_us": 250}
    with pytest.raises(S.CF.PropertySet.InvalidConfiguration, match="cannot change while the component is started"):
        stage3.configure(props(in__packet_length=16))
    stage3.stop()
    stage3.configure(props(in__packet_length=16))
    stage3.start()
    with pytest.raises(S.CF.PortSupplier.UnknownPort):
        stage3.getPort("sideways")

    # The Python stage answers the same interface, with its exec identifier.
    stage2 = waveform.resolve(name("stage2"))._narrow(S.CF.Resource)
    assert stage2._get_identifier() == f"stage2:{context}"
    assert values(stage2.query([]))["work"] == "none"
    stage2.stop()
    stage2.start()

    # End of input releases the run; what it measured stands (read before the restart).
    proc.stdin.close()
    assert proc.wait(60) == 0, proc.stderr.read()
    result = json.loads(out.read_text())
    assert result["status"] == "ok"
    assert [s["received"] for s in result["stages"]] == [30, 30, 30, 30]
    assert processes.tagged_processes(tag) == {}


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_to_a_run_held_from_an_open_pipe_interrupts_it(held_run, signum, code):
    """Where a pipe is the release, a signal is an interruption: the command
    exits 128 + its number, with the result written and nothing left, and
    Python does not abort at exit on the thread that watches the pipe."""
    proc, _, _, out = held_run
    tag = processes.owner_tag(proc.pid)
    proc.send_signal(signum)
    assert proc.wait(60) == code  # stdin stays open: closing it would release the run instead
    err = proc.stderr.read()
    assert "Fatal Python error" not in err and f"interrupted by {signal.Signals(signum).name}" in err, err
    result = json.loads(out.read_text())
    assert result["status"] == "interrupted"
    assert [s["received"] for s in result["stages"]] == [30, 30, 30, 30]
    assert processes.tagged_processes(tag) == {}

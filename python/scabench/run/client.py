"""A CORBA client of running components from this process, as a launcher
is one: omniNames started as a run starts it, the ORB's reference to its
root context, `scabench-py-stage` processes started with the SCA execute
parameters, sink servants that keep what they receive, and CF::Properties
and packet headers built here. The tests that drive components directly
and the cost scripts (scripts/py_hop_cost.py, scripts/node_cost.py) stand
on it. Every process started here is ended by its PID."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omniORB import CORBA

from scabench.components import idl
from scabench.run.naming import NamingService as RunNamingService

S = idl.load()
CosNaming = S.CosNaming
WAIT_S = 15.0
LOOPBACK = ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
INTERFACES = {"octet": "dataOctet", "short": "dataShort", "float": "dataFloat", "double": "dataDouble"}
TOKEN = 0x5CAB_E4C4_0000_0001  # this process's connection token when it sends into a stage


def stage_command() -> list[str]:
    """The installed console script (scripts/setup.sh's pip install puts it
    beside the interpreter); the same entry point as a module where this
    interpreter's environment was installed from another checkout."""
    script = Path(sys.executable).parent / "scabench-py-stage"
    return [str(script)] if script.exists() else [sys.executable, "-m", "scabench.components.stage"]


def end_process(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """Ends a process this process started, by its PID: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(grace_s)


class NamingService:
    """omniNames as a run starts it (scabench.run.naming), its data under
    `folder`, on a free loopback port (or `port`), and the ORB's reference
    to its root context."""

    def __init__(self, folder: Path, orb: Any, port: int | None = None):
        self.service = RunNamingService(folder, port=port).__enter__()
        self.port, self.proc = self.service.port, self.service.proc
        deadline = time.monotonic() + WAIT_S
        try:
            while True:
                try:
                    obj = orb.string_to_object(f"corbaloc::127.0.0.1:{self.port}/NameService")
                    self.root = obj._narrow(CosNaming.NamingContext)
                    break
                except (CORBA.TRANSIENT, CORBA.OBJECT_NOT_EXIST, CORBA.COMM_FAILURE):
                    # Listening before its NameService object is active (or, on the port of an
                    # earlier service, this ORB's connection to that one broke).
                    log = self.service.dir / "omniNames.log"
                    assert self.proc is not None and self.proc.poll() is None, log.read_text()
                    assert time.monotonic() < deadline, "omniNames did not start"
                    time.sleep(0.05)
        except BaseException:
            self.close()  # one that fails here is never closed by its caller
            raise

    def close(self) -> None:
        self.service.__exit__(None, None, None)


def name(text: str) -> list:
    return [CosNaming.NameComponent(text, "")]


def bound(ctx: Any, text: str) -> bool:
    try:
        ctx.resolve(name(text))
        return True
    except CosNaming.NamingContext.NotFound:
        return False


def sink_class(sample_type: str) -> type:
    base: Any = getattr(S.data__POA, INTERFACES[sample_type])  # the generated skeleton, known at run time only

    class Sink(base):
        """Keeps every packet as it arrives: (header, samples, how it came)."""

        def __init__(self) -> None:
            self.packets: list[tuple[Any, Any, str]] = []
            self.token: Any = None  # what its sender attached
            self.detached: Any = None  # what its sender detached
            self.cond = threading.Condition()

        def _take(self, header: Any, data: Any, call: str) -> None:
            with self.cond:
                self.packets.append((header, data, call))
                self.cond.notify_all()

        def pushPacket(self, header: Any, data: Any) -> None:
            self._take(header, data, "twoway")

        def pushPacketOneway(self, header: Any, data: Any) -> None:
            self._take(header, data, "oneway")

        def syncMarker(self) -> None:
            pass

        def attachSender(self, token: Any, flow: Any) -> None:
            assert flow is None
            self.token = token
            self.detached = None

        def detachSender(self, token: Any) -> None:
            self.detached = token

        def wait_for(self, predicate: Callable[[list], bool], timeout: float = WAIT_S) -> list:
            with self.cond:
                assert self.cond.wait_for(lambda: predicate(self.packets), timeout), (
                    f"sink: condition not met; it has {len(self.packets)} packets"
                )
                return list(self.packets)

        def data(self) -> list:
            return [p for p in self.packets if not p[0].end_of_stream]

        def ends(self) -> list:
            return [p for p in self.packets if p[0].end_of_stream]

    return Sink


def header(
    seq: int,
    link: int | None = None,
    eos: bool = False,
    stream: int = 7,
    send_time: int | None = None,
    token: int = TOKEN,
) -> Any:
    """A packet header as the sending port stamps it: link sequence = seq unless given."""
    return S.data.PacketHeader(
        stream, seq, send_time if send_time is not None else 1_000_000 + seq, eos, seq if link is None else link, token
    )


def props(**values: Any) -> list:
    """CF::Properties from keyword arguments: str, int (long long), float
    (double), or a ready CORBA.Any; '__' in a name stands for '.'."""
    out = []
    for key, v in values.items():
        if not isinstance(v, CORBA.Any):
            v = CORBA.Any({str: CORBA.TC_string, int: CORBA.TC_longlong, float: CORBA.TC_double}[type(v)], v)
        out.append(S.CF.DataType(key.replace("__", "."), v))
    return out


class StageProcess:
    """`scabench-py-stage` started with the execute parameters; resolve()
    finds its CF::Resource by name in the context, as a launcher does."""

    def __init__(
        self,
        tmp_path: Path,
        context: Any,
        context_ior: str,
        binding: str = "stage1",
        sample_type: str | None = None,
        extra: tuple | list = (),
        command: list[str] | None = None,
    ):
        self.context, self.binding = context, binding
        self.identifier = f"{binding}:waveform_1"
        args = ["NAMING_CONTEXT_IOR", context_ior, "COMPONENT_IDENTIFIER", self.identifier, "NAME_BINDING", binding]
        if sample_type:
            args += ["SAMPLE_TYPE", sample_type]
        self.out_path, self.err_path = tmp_path / f"{binding}.out", tmp_path / f"{binding}.err"
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen(
                (command or stage_command()) + args + list(extra) + LOOPBACK, stdout=out, stderr=err
            )

    def resolve(self) -> Any:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                return self.context.resolve(name(self.binding))._narrow(S.CF.Resource)
            except CosNaming.NamingContext.NotFound:
                assert self.proc.poll() is None, f"stage exited {self.proc.returncode}: {self.stderr()}"
                assert time.monotonic() < deadline, "the stage never bound its name"
                time.sleep(0.05)

    def bound(self) -> bool:
        return bound(self.context, self.binding)

    def cpu_s(self) -> float:
        """User + system CPU of the process so far (/proc, clock ticks)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stdout(self) -> str:
        return self.out_path.read_text()

    def _stat_events(self) -> dict[str, str]:
        return {w[2]: w[3] for w in (line.split(maxsplit=3) for line in self.stdout().splitlines()) if w[0] == "stat"}

    def stats(self) -> dict[str, int]:
        """The counts among the `stat NAME KEY VALUE` events it wrote: {KEY: VALUE}."""
        return {key: int(value) for key, value in self._stat_events().items() if key != "connections"}

    def connections(self) -> dict[str, Any]:
        """Its per-connection counts: the `stat NAME connections JSON` event."""
        return json.loads(self._stat_events()["connections"])

    def stderr(self) -> str:
        return self.err_path.read_text()

    def close(self) -> None:
        end_process(self.proc)

"""The run's CORBA Naming Service: omniORB's omniNames, one per run, on
loopback (or, on network hosts, on an address every namespace reaches), its
data files in the run's directory (docs/architecture.md, "Naming"); or the
Naming Service of a domain the spec names, shared with others (Domain).

The launcher binds a context for the waveform instance in it, and every
component under its name in that context, as an SCA domain does; an outside
tool resolves them there while a run is held (`scabench run --hold`). The
service is one of the run's processes: it dies with the command and is
removed with the run's directory."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Literal, Self

from scabench.errors import RunError
from scabench.run import processes

START_TIMEOUT_S = 10.0
# Where a tool looks for a Naming Service it is not told of: omniNames' own
# default port on this machine (`scabench top` without --naming).
DEFAULT_NAMING = "corbaloc::127.0.0.1:2809/NameService"
ATTEMPTS = 3  # a free port can be taken between choosing it and binding it


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


class NamingService:
    """with NamingService(run_dir) as names: names.corbaloc. `port`: this
    one rather than a free one (a service started again at an address its
    clients know)."""

    def __init__(self, run_dir: str | os.PathLike, host: str = "127.0.0.1", port: int | None = None) -> None:
        self.dir = Path(run_dir) / "naming"
        self.host = host
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self._asked_port = port

    @property
    def corbaloc(self) -> str:
        return f"corbaloc::{self.host}:{self.port}/NameService"

    def __enter__(self) -> Self:
        binary = shutil.which("omniNames")
        if binary is None:
            raise RunError(
                "the Naming Service omniNames is not installed (Debian package omniorb-nameserver; "
                "scripts/setup.sh installs it)"
            )
        self.dir.mkdir(parents=True, exist_ok=True)
        for _ in range(ATTEMPTS):
            self.port = port = self._asked_port or processes.free_port()
            log = open(self.dir / "omniNames.log", "w")
            self.proc = proc = processes.spawn(
                [
                    binary,
                    "-start",
                    str(port),
                    "-always",
                    "-datadir",
                    str(self.dir),
                    "-nohostname",
                    "-ORBendPoint",
                    f"giop:tcp:{self.host}:{port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            log.close()
            deadline = time.monotonic() + START_TIMEOUT_S
            while proc.poll() is None and time.monotonic() < deadline:
                if _accepts(self.host, port):
                    return self
                time.sleep(0.02)
            processes.stop(proc)
        tail = (self.dir / "omniNames.log").read_text(errors="replace").strip().splitlines()[-1:]
        raise RunError(f"the Naming Service did not start: {tail[0] if tail else 'no output'}")

    def __exit__(self, *exc: object) -> Literal[False]:
        if self.proc is not None:
            processes.stop(self.proc, grace_s=2.0)
            self.proc = None
        return False

    def describe(self, context: str) -> dict[str, Any]:
        return {"corbaloc": self.corbaloc, "context": context}


class Domain:
    """The Naming Service of a domain the spec names ([domain] naming): its
    nodes are registered there, and the run's waveform context is made there,
    under the first instance number no other run holds (the launcher)."""

    def __init__(self, corbaloc: str) -> None:
        self.corbaloc = corbaloc

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        return False

    def describe(self, context: str) -> dict[str, Any]:
        return {"corbaloc": self.corbaloc, "context": context, "shared": True}

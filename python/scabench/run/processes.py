"""The processes a run starts, so that none outlives the command that owns it
(docs/architecture.md, "Faults").

Every program scabench starts goes through spawn(), which
  - asks the kernel to SIGKILL the child when this process dies, even by
    SIGKILL (PR_SET_PDEATHSIG; the launcher asks the same for its hosts, so
    killing the command takes the whole tree down at once);
  - puts it in a session of its own, so that Ctrl-C in a terminal reaches
    only the command, which then takes the run down in order instead of
    every process dying at once in some order;
  - marks it with the owner's tag (OWNER_ENV, inherited by the launcher's
    hosts), and run directories carry the same tag in their names.
A command that dies anyway leaves tagged processes and directories behind
whose owner is gone; remove_leftovers() ends and removes those, and every
run calls it before it starts. Shared-memory rings (transport shm) are named
with the same tag (SHM_PREFIX in /dev/shm); a sending port removes the name
once its receiver has mapped the ring, so only a process that died between
the two leaves one, and remove_leftovers() removes it too. Leftovers of a
live owner (another scabench command running beside this one) are left
alone."""

import ctypes
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from scabench.errors import RunError

OWNER_ENV = "SCABENCH_RUN_OWNER"
RUN_DIR_PREFIX = "scabench-run-"
# A ring's name (cpp/runtime/include/scabench/runtime/shm_ring.hpp, kNamePrefix):
# scabench-shm-<owner tag>-<pid>-<n>, a file of /dev/shm.
SHM_PREFIX = "scabench-shm-"
SHM_DIR = Path("/dev/shm")
_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child must not load libraries


def _start_time(pid: int) -> int | None:
    """The kernel's start time of a process (clock ticks since boot): with the
    pid, it names the process even after the pid is reused."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def owner_tag(pid: int | None = None) -> str:
    pid = pid or os.getpid()
    return f"{pid}.{_start_time(pid)}"


def owner_alive(tag: str) -> bool:
    pid, _, start = tag.partition(".")
    return pid.isdigit() and str(_start_time(int(pid))) == start


def spawn(argv: Sequence[str], preexec: Callable[[], None] | None = None, **popen_kwargs: Any) -> subprocess.Popen:
    """subprocess.Popen(argv, ...) for a program of the run (see the module
    docstring). `preexec` runs in the child after the death signal is set."""
    parent = os.getpid()

    def child_setup() -> None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the owner died before the line above
            os._exit(1)
        if preexec:
            preexec()

    env = {**(popen_kwargs.pop("env", None) or os.environ), OWNER_ENV: owner_tag()}
    try:
        return subprocess.Popen(argv, preexec_fn=child_setup, start_new_session=True, env=env, **popen_kwargs)
    except OSError as exc:  # not there, not executable, not a program this machine runs
        raise ProgramNotStarted(argv[0], exc) from None
    except subprocess.SubprocessError as exc:  # the child's set-up (preexec) failed before the exec
        raise ProgramNotStarted(argv[0], exc) from None


class ProgramNotStarted(RunError):
    """A program of the run could not be started at all (the exec failed):
    one line naming it and the system's reason, instead of the traceback an
    OSError from Popen gives. `cause` keeps the OSError (a node maps its
    errno to a CF error number), or the SubprocessError of a child whose
    set-up failed before the exec."""

    def __init__(self, program: str, cause: OSError | subprocess.SubprocessError) -> None:
        self.cause = cause
        reason = (cause.strerror if isinstance(cause, OSError) else None) or str(cause)
        hint = " (is it executable?)" if isinstance(cause, PermissionError) else ""
        super().__init__(f"cannot start {program}: {reason}{hint}", component=Path(program).name)


def stop(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after grace_s; waits for the exit either way."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def free_port() -> int:
    """A TCP port free on loopback now (the system's choice; another
    process may take it before it is bound again, as with any such port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_run_dir() -> Path:
    """A private (0700) directory for one run, named after its owner."""
    return Path(tempfile.mkdtemp(prefix=f"{RUN_DIR_PREFIX}{owner_tag()}-"))


def _tag_of(pid: int | str) -> str | None:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:  # gone, or not ours to read
        return None
    for item in environ.split(b"\0"):
        if item.startswith(OWNER_ENV.encode() + b"="):
            return item.split(b"=", 1)[1].decode(errors="replace")
    return None


def tagged_processes(tag: str | None = None) -> dict[int, str]:
    """{pid: tag} of the processes scabench started (those of `tag` only, if
    given). The command's own process is never in it."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            t = _tag_of(entry.name)
            if t is not None and (tag is None or t == tag):
                out[int(entry.name)] = t
    return out


def remove_leftovers() -> list[str]:
    """Ends the processes and removes the run directories of scabench
    commands that died without cleaning up. Returns what it removed."""
    removed = []
    for pid, tag in tagged_processes().items():
        if not owner_alive(tag):
            try:
                os.kill(pid, signal.SIGKILL)
                removed.append(f"process {pid}")
            except (ProcessLookupError, PermissionError):
                pass
    pattern = re.compile(rf"{re.escape(RUN_DIR_PREFIX)}(\d+\.\d+)-")
    for d in Path(tempfile.gettempdir()).glob(f"{RUN_DIR_PREFIX}*"):
        m = pattern.match(d.name)
        if m and not owner_alive(m.group(1)):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    removed += remove_rings(lambda tag: not owner_alive(tag))
    return removed


def shm_rings(tag: str | None = None) -> dict[Path, str]:
    """The shared-memory rings left in /dev/shm (of `tag` only, if given): {path: owner tag}."""
    pattern = re.compile(rf"{re.escape(SHM_PREFIX)}(\d+\.\d+)-")
    out = {}
    for f in SHM_DIR.glob(f"{SHM_PREFIX}*") if SHM_DIR.is_dir() else ():
        m = pattern.match(f.name)
        if m and (tag is None or m.group(1) == tag):
            out[f] = m.group(1)
    return out


def remove_rings(dead: Callable[[str], bool]) -> list[str]:
    """Removes the rings whose owner tag `dead(tag)` says is gone."""
    removed = []
    for f, tag in shm_rings().items():
        if dead(tag):
            try:
                f.unlink()
                removed.append(str(f))
            except OSError:
                pass
    return removed


def run_program(
    argv: Sequence[str], timeout: float, preexec: Callable[[], None] | None = None, check: bool = False
) -> subprocess.CompletedProcess:
    """subprocess.run(argv, capture_output=True, text=True, ...) for a
    program started by spawn(): it dies with the command, and with an
    exception here (a timeout, Interrupted) it is killed on the way out."""
    proc = spawn(argv, preexec=preexec, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, argv, out, err)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


class LineReader:
    """The lines a child writes on a pipe, each waited for with a deadline.
    It reads the pipe's descriptor raw, with its own buffer: a buffered
    reader (Popen's stdout) can take several lines off the pipe at once, and
    select() on the pipe then waits for a line that is already in the reader."""

    def __init__(self, fd: Any) -> None:
        self.fd = fd if isinstance(fd, int) else fd.fileno()
        self.pending = b""

    def line(self, timeout_s: float) -> str | None:
        """The next line without its newline; None when the writer closed
        the pipe first; TimeoutError when none came within timeout_s."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self.pending:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError(f"no line within {timeout_s:g} s")
            chunk = os.read(self.fd, 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode(errors="replace")

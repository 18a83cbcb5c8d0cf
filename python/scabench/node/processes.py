"""The processes a node starts, and what they cost.

Each program is started by run.processes.spawn(): in a session (and so a
process group) of its own, SIGKILLed by the kernel when the agent dies
(PR_SET_PDEATHSIG), tagged with the agent as its owner. The kernel sends
that signal when the *thread* that forked the child ends, not the process:
execute runs on an ORB thread, which omniORB may retire once idle, so every
fork happens on one spawner thread that lives as long as the agent.

A reaper thread collects every child that exits. It looks without reaping
first (waitid WNOWAIT): while the child is a zombie its pid, and so its
process group, cannot be reused, so what the program left in its group is
SIGKILLed without the risk of hitting a stranger; then wait4 reaps it and
keeps its rusage, the whole process's CPU and context switches, threads that
ended included. While a process runs, its CPU is the kernel's CPU clock of
the whole process (to the nanosecond, ended threads included), split into
user and system in the proportion /proc or taskstats give
(measure.window.process_snapshot: whole clock ticks, or taskstats, which
answers only in the machine's first network namespace), and its switches
are those of its live threads (the kernel keeps no per-process count of the
switches of threads that have ended until the process ends).

Each process gets a directory of its own in the node's private one, and
runs in it: its stdout and stderr go there ("stdout", "stderr"), and so
does what it writes to its working directory (scabench-host's packet
records). read_file() serves a part of one such file, by its name alone, to
a launcher on another machine (NodeDevice.watch). The files of the last
FILES_KEPT ended processes are kept; older ones are removed, their records
stay listed."""

import os
import resource
import shutil
import signal
import stat
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from scabench.measure.window import process_snapshot
from scabench.run import processes

REAP_PERIOD_S = 0.1
KILL_WAIT_S = 10.0  # after SIGKILL, what a process still gets to be gone (a task stuck in the kernel)
ENDED_KEPT = 4096  # ended processes listed, the oldest forgotten first
FILES_KEPT = 64  # ended processes whose directories are kept (a run's records are fetched once it ends)
ERROR_TAIL_BYTES = 4096
ERROR_TAIL_CHARS = 300


@dataclass
class Started:
    pid: int
    program: str
    identifier: str
    proc: subprocess.Popen = field(repr=False)
    directory: Path  # its own: its working directory, stdout, stderr and what it writes there
    running: bool = True
    exit_status: int = 0  # once ended: the exit code, or minus the signal
    usage: tuple = (0.0, 0.0, 0)  # once ended: (user s, system s, context switches) from rusage
    ended: threading.Event = field(default_factory=threading.Event, repr=False)
    files_kept: bool = True  # its directory is still there

    def figures(self):
        """(user s, system s, context switches) so far."""
        if not self.running:
            return self.usage
        snap = process_snapshot(self.pid)
        total = _cpu_clock_s(self.pid)
        if snap is None or total is None:  # between its exit and the reaper's next look
            return self.usage
        user, system = snap["user_sample_s"], snap["system_sample_s"]
        share = user / (user + system) if user + system > 0 else 1.0
        return (total * share, total * (1.0 - share), sum(cs for _, cs in snap["threads"].values()))

    def error_tail(self):
        try:
            with open(self.directory / "stderr", "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - ERROR_TAIL_BYTES))
                lines = [x for x in f.read().decode(errors="replace").splitlines() if x.strip()]
        except OSError:
            return ""
        return lines[-1][-ERROR_TAIL_CHARS:] if lines else ""


class ProcessTable:
    def __init__(self, workdir, log):
        self.workdir, self.log = Path(workdir), log
        self._spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="spawner")
        self._lock = threading.Lock()
        self._started = {}  # pid -> Started, oldest first
        self._count = 0
        self._closed = threading.Event()
        self._reaper = threading.Thread(target=self._reap_loop, name="reaper", daemon=True)
        self._reaper.start()

    # --- starting ----------------------------------------------------------------

    def start(self, argv, program, identifier, cpus, stack_bytes=None, batch=False, nice=None):
        """Starts argv on `cpus` (with that stack limit, with batch under
        SCHED_BATCH, and with that nice value); returns its pid. OSError (and
        subprocess.SubprocessError) when it cannot be started."""
        return self._spawner.submit(self._spawn, argv, program, identifier, cpus, stack_bytes, batch, nice).result()

    def _spawn(self, argv, program, identifier, cpus, stack_bytes, batch, nice):
        def in_child():  # between fork and exec: system calls only
            os.sched_setaffinity(0, cpus)
            if stack_bytes is not None:
                resource.setrlimit(resource.RLIMIT_STACK, (stack_bytes, resource.getrlimit(resource.RLIMIT_STACK)[1]))
            if batch:  # every thread the program makes inherits it
                os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
            if nice is not None:  # likewise
                os.setpriority(os.PRIO_PROCESS, 0, nice)

        with self._lock:
            self._count += 1
            directory = self.workdir / f"{self._count:05d}-{program}"
        directory.mkdir(mode=0o700)
        with open(directory / "stdout", "wb") as out, open(directory / "stderr", "wb") as err:
            proc = processes.spawn(
                argv, preexec=in_child, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=directory, close_fds=True
            )
        with self._lock:
            self._started[proc.pid] = Started(proc.pid, program, identifier, proc, directory)
            ended = [s for s in self._started.values() if not s.running]
            for s in ended[: max(0, len(ended) - ENDED_KEPT)]:
                del self._started[s.pid]
            for s in ended[: max(0, len(ended) - FILES_KEPT)]:
                if s.files_kept:
                    shutil.rmtree(s.directory, ignore_errors=True)
                    s.files_kept = False
        return proc.pid

    # --- ending ------------------------------------------------------------------

    def get(self, pid):
        with self._lock:
            return self._started.get(pid)

    def terminate(self, pid, grace_s):
        """SIGTERM to the process's group; SIGKILL after grace_s. Returns once
        it has been reaped (or KILL_WAIT_S after the SIGKILL)."""
        self._end([self.get(pid)], grace_s)

    def stop_all(self, grace_s):
        """Ends every running process at once, as terminate does. Returns how many were running."""
        with self._lock:
            running = [s for s in self._started.values() if s.running]
        self._end(running, grace_s)
        return len(running)

    def _end(self, started, grace_s):
        started = [s for s in started if s is not None and s.running]
        for s in started:
            _signal_group(s.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for s in started:
            s.ended.wait(max(0.0, deadline - time.monotonic()))
        for s in started:
            if not s.ended.is_set():
                self.log(f"pid {s.pid} ({s.program}) outlived SIGTERM by {grace_s:g} s: SIGKILL")
                _signal_group(s.pid, signal.SIGKILL)
        for s in started:
            s.ended.wait(KILL_WAIT_S)

    def _reap_loop(self):
        while not self._closed.wait(REAP_PERIOD_S):
            with self._lock:
                running = [s for s in self._started.values() if s.running]
            for s in running:
                self._collect(s)

    def _collect(self, s):
        try:
            info = os.waitid(os.P_PID, s.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            s.running = False  # reaped elsewhere: nothing more to learn
            s.ended.set()
            return
        if info is None:
            return
        # A zombie: its group id is still its own, so this reaches only what it left behind.
        _signal_group(s.pid, signal.SIGKILL)
        _, status, ru = os.wait4(s.pid, 0)
        s.exit_status = os.waitstatus_to_exitcode(status)
        s.proc.returncode = s.exit_status  # reaped here: Popen must not wait for it again
        s.usage = (ru.ru_utime, ru.ru_stime, ru.ru_nvcsw + ru.ru_nivcsw)
        s.running = False
        s.ended.set()
        self.log(f"pid {s.pid} ({s.program}) ended: {exit_text(s.exit_status)}")

    # --- reading -----------------------------------------------------------------

    def read_file(self, started, name, offset, max_bytes):
        """(exists, size, bytes from offset, at most max_bytes) of the file
        `name` in the process's own directory. A name is one plain file name;
        links are not followed: nothing outside the directory is served."""
        try:
            fd = os.open(started.directory / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            return False, 0, b""
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return False, 0, b""
            data = os.pread(fd, max_bytes, offset) if offset < info.st_size and max_bytes else b""
            return True, info.st_size, data
        finally:
            os.close(fd)

    def records(self):
        with self._lock:
            return list(self._started.values())

    def running(self):
        with self._lock:
            return sum(1 for s in self._started.values() if s.running)

    def close(self):
        self._closed.set()
        self._reaper.join()
        self._spawner.shutdown(wait=True)


def _cpu_clock_s(pid):
    """The CPU time of a whole process, from its kernel CPU clock
    (clock_getcpuclockid's: the process-wide scheduler clock of pid)."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except OSError:
        return None


def exit_text(status):
    """'exit 0', or the name of the signal that ended it."""
    if status >= 0:
        return f"exit {status}"
    try:
        return signal.Signals(-status).name
    except ValueError:
        return f"signal {-status}"


def _signal_group(pid, signum):
    try:
        os.killpg(pid, signum)
    except (ProcessLookupError, PermissionError):
        pass  # gone already

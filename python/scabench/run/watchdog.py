"""Finds a stopped or hung process of a run within seconds, names it, and
ends the run (docs/architecture.md, "Faults").

The launcher already notices a host that dies. What it cannot notice is a
process that stays alive but does nothing: a host or the launcher itself
stopped (SIGSTOP, a debugger), or a host that no longer moves packets. A
thread of the command watches, every POLL_S:
  - the state of the launcher and of each host (/proc/PID/stat): stopped
    for longer than STOPPED_LIMIT_S is a fault;
  - the progress of the stream: the packets every component has taken and
    finished (the counters at the head of its record file). Once the stream
    has started, no change in any of them for `hang_limit_s` is a fault,
    named after the components holding a packet they do not finish.
On a fault it ends the launcher (SIGTERM; SIGKILL if it does not go; the
hosts die with it) and keeps the reason for the runner to report. A run that
merely slows down is not a fault here: stalls.py measures it after the run."""

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Self

import numpy as np

from scabench.run.records import HEADER

POLL_S = 0.2
STOPPED_LIMIT_S = 3.0
LAUNCHER_GRACE_S = 3.0
# With processes on nodes the launcher ends them through their nodes, which
# give a process 5 s after SIGTERM (a stopped one takes all of it).
LAUNCHER_GRACE_NODES_S = 10.0


def process_state(pid: int) -> str | None:
    """One letter (R, S, D, T, t, Z, ...) or None when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def host_components(pid: int) -> list[str]:
    """The components a process of the run serves, from its command line: a
    scabench-host's --component NAME:KIND:TYPE, an external program's
    NAME_BINDING NAME (the SCA exec parameters)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []
    return [
        argv[i + 1].split(":")[0] if a == "--component" else argv[i + 1]
        for i, a in enumerate(argv[:-1])
        if a in ("--component", "NAME_BINDING")
    ]


def progress(run_dir: Path) -> dict[str, tuple[int, int]]:
    """{component: (taken, finished)} from the record files' headers: a
    component on a node has its header copied here as it goes
    (<name>.progress, by the launcher's poll) until its records come back."""
    out = {}
    for path in sorted(Path(run_dir).glob("*.progress")) + sorted(Path(run_dir).glob("*.rec")):
        try:
            header = np.fromfile(path, dtype=HEADER, count=1)
        except (OSError, ValueError):
            continue
        if header.size:
            out[path.stem] = (int(header[0]["claimed"]), int(header[0]["completed"]))
    return out


class Watchdog(threading.Thread):
    """with Watchdog(launcher_proc, run_dir, hang_limit_s) as dog: ...; then
    dog.fault is None, or (component, reason)."""

    def __init__(
        self,
        launcher: subprocess.Popen,
        run_dir: Path,
        hang_limit_s: float,
        order: Sequence[str] = (),
        packets: dict[str, int] | None = None,
        stopped_limit_s: float = STOPPED_LIMIT_S,
        feeds_external: dict[str, str] | None = None,
        launcher_grace_s: float = LAUNCHER_GRACE_S,
    ) -> None:
        """order: the components in pipeline order (the hang names the last
        one holding a packet: those before it wait on it); packets: what
        each packet source sends. Once they have sent it all and no one holds
        a packet, the stream is draining or done, and stillness is no fault.
        feeds_external: {component: the external component it sends to},
        which has no record file: a hang there shows as its sender's."""
        super().__init__(name="scabench-watchdog", daemon=True)
        self.launcher, self.run_dir = launcher, run_dir
        self.hang_limit_s, self.stopped_limit_s = hang_limit_s, stopped_limit_s
        self.order, self.packets = list(order), dict(packets or {})
        self.feeds_external = dict(feeds_external or {})
        self.launcher_grace_s = launcher_grace_s
        self.fault: tuple[str, str] | None = None
        self._done = threading.Event()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self._done.set()
        self.join()
        return False

    def run(self) -> None:
        stopped_since: dict[int, float] = {}
        last, moved_at = None, None
        while not self._done.wait(POLL_S):
            if self.launcher.poll() is not None:
                return
            now = time.monotonic()
            lpid = self.launcher.pid
            watched = {lpid: ("", f"scabench-launch (pid {lpid})")}
            for pid in children(lpid):
                names = host_components(pid)
                watched[pid] = (names[0] if names else "", f"component {', '.join(names) or '?'} (pid {pid})")
            for pid, (component, who) in watched.items():
                if process_state(pid) in ("T", "t"):
                    since = stopped_since.setdefault(pid, now)
                    if now - since >= self.stopped_limit_s:
                        if pid != lpid:
                            os.kill(pid, signal.SIGKILL)  # a stopped host would hold up the launcher's teardown
                        return self._end(
                            component,
                            f"{who} has been stopped for {now - since:.0f} s "
                            "(SIGSTOP or a debugger); the run was ended",
                        )
                else:
                    stopped_since.pop(pid, None)
            counts = progress(self.run_dir)
            if counts != last:
                started = any(finished for _, finished in counts.values())
                last, moved_at = counts, (now if started else None)
            elif moved_at is not None and now - moved_at >= self.hang_limit_s:
                fault = self._hang(counts, now - moved_at)
                if fault:
                    return self._end(*fault)

    def _hang(self, counts: dict[str, tuple[int, int]], still_s: float) -> tuple[str, str] | None:
        rank = {name: i for i, name in enumerate(self.order)}
        holding = sorted(
            (n for n, (taken, finished) in counts.items() if taken > finished), key=lambda n: rank.get(n, len(rank))
        )
        unsent = [n for n, packets in self.packets.items() if counts.get(n, (0, 0))[1] < packets]
        if not holding and not unsent:
            return None
        handled = ", ".join(f"{n} {counts[n][1]}" for n in sorted(counts, key=lambda n: rank.get(n, len(rank))))
        if holding:
            culprit, why = holding[-1], f"component {holding[-1]} holds a packet it does not finish"
            if culprit in self.feeds_external:
                why += (
                    f" (it sends to the external component {self.feeds_external[culprit]}, whose own packets "
                    "the run cannot see)"
                )
            if len(holding) > 1:
                why += f" ({', '.join(holding[:-1])} wait on it)"
        else:
            culprit, why = unsent[0], f"component {unsent[0]} stopped sending"
        return culprit, f"no packet moved for {still_s:.0f} s: {why} (finished: {handled}); the run was ended"

    def _end(self, component: str, reason: str) -> None:
        self.fault = (component, reason)
        pid = self.launcher.pid
        if process_state(pid) in ("T", "t"):
            os.kill(pid, signal.SIGKILL)  # a stopped launcher cannot take its hosts down; PDEATHSIG does
            return
        self.launcher.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.launcher_grace_s
        while self.launcher.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.launcher.poll() is None:
            self.launcher.kill()

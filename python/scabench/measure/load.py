"""CPU load on this machine from anyone but us.

Benchmarks on a shared machine need two things: wait until the machine is
quiet before measuring, and know afterwards how much CPU others took while we
measured, so a spoiled run can be redone. Busy time comes from /proc/stat;
our own share (this process and all its descendants) from /proc/PID/stat, so
what is left is foreign."""

import os
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Self

_TICK = os.sysconf("SC_CLK_TCK")


def core_jiffies(cores: Iterable[int] | None = None) -> list[int]:
    """/proc/stat jiffies (user nice system idle iowait irq softirq steal):
    the machine's total line, or summed over the given CPUs."""
    total = [0] * 8
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu"):
                break
            name, *fields = line.split()
            if (name == "cpu") != (cores is None) or (cores is not None and int(name[3:]) not in cores):
                continue
            for i, v in enumerate(fields[:8]):
                total[i] += int(v)
    return total


def busy_jiffies(fields: Sequence[int]) -> int:
    """The one definition of busy every meter uses (the launcher's too):
    everything but idle and iowait. Steal counts as busy: the hypervisor
    gave the core to someone else."""
    return sum(fields) - fields[3] - fields[4]


def _busy_and_total_ticks(cores: Iterable[int] | None = None) -> tuple[int, int]:
    fields = core_jiffies(cores)
    return busy_jiffies(fields), sum(fields)


def _children_of() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    return children


def own_ticks(root_pid: int | None = None) -> int:
    """CPU jiffies (user + system, own and reaped children) of root_pid and
    every live descendant."""
    root_pid = root_pid or os.getpid()
    children = _children_of()
    total, stack = 0, [root_pid]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
        except OSError:
            pass
        stack.extend(children.get(pid, []))
    return total


class ForeignLoadMeter:
    """Start it, run the measurement, then read foreign_pct(): the CPU others
    used meanwhile, in % of the cores watched."""

    def __init__(self, cores: Iterable[int] | None = None) -> None:
        self.cores = set(cores) if cores is not None else None

    def start(self) -> Self:
        self._busy, self._total = _busy_and_total_ticks(self.cores)
        self._own = own_ticks()
        return self

    def foreign_pct(self) -> float:
        busy, total = _busy_and_total_ticks(self.cores)
        own = own_ticks()
        elapsed = total - self._total
        if elapsed <= 0:
            return 0.0
        # Our own ticks can land on unwatched cores; never count them as negative foreign.
        foreign = max(0, (busy - self._busy) - (own - self._own))
        return 100.0 * foreign / elapsed


def busy_pct(interval_s: float = 0.5, cores: Iterable[int] | None = None) -> float:
    """Foreign CPU busy % over a short interval."""
    meter = ForeignLoadMeter(cores).start()
    time.sleep(interval_s)
    return meter.foreign_pct()


def wait_for_quiet(
    threshold_pct: float = 10.0,
    interval_s: float = 0.5,
    timeout_s: float = 60.0,
    cores: Iterable[int] | None = None,
    on_wait: Callable[[float], None] | None = None,
) -> tuple[bool, float]:
    """Blocks until others use less than threshold_pct of the CPUs for one
    interval, or timeout_s passes. Returns (quiet, last_busy_pct)."""
    deadline = time.monotonic() + timeout_s
    while True:
        pct = busy_pct(interval_s, cores)
        if pct < threshold_pct:
            return True, pct
        if time.monotonic() >= deadline:
            return False, pct
        if on_wait:
            on_wait(pct)

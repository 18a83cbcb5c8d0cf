"""CPU workload over a steady window, measured the way `sar -u` and `vmstat`
measure it, plus the same figures for the run's own processes.

Two views of one window:

- the cores (`sar -u -P`): user and user+system share of the cores the run is
  on, from /proc/stat. Everything that ran there counts, so it is only the
  run's workload when nothing else ran; whatever else ran is "foreign".
- the run's processes (`pidstat`): the CPU of every thread of the given
  processes. The total comes from /proc/PID/task/TID/schedstat, which the
  scheduler keeps in nanoseconds (the tick-based figures of /proc/PID/stat
  have 10 ms steps, too coarse for a process that uses 0.1 % of a core); the
  user/system split is that of the scheduler's tick samples (taskstats, or
  /proc/PID/stat where taskstats cannot be had), summed over the run's
  processes, as sar's split is a tick sample too.
  The split is sampled: only the total is exact (see user_split).
  Context switches are the threads' voluntary + involuntary switches
  (/proc/PID/task/TID/status), the run's own share of vmstat's `cs`.

Percentages are of the cores watched (one core: % of that core, like the
seed's single-processor machine). The run's workload is the second view;
the first is kept beside it to show that they agree on a quiet machine."""

import os
import socket
import struct
import time
from collections.abc import Iterable, Sequence
from typing import Any

from scabench.measure.load import busy_jiffies, core_jiffies

TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


class TaskStats:
    """The kernel's taskstats for a whole process (generic netlink, root
    only): the raw tick samples of user and system time, in µs, of every
    thread, ended ones included. /proc/PID/stat only has them rescaled to the
    process's whole-life run time, whose changes over a window are not the
    window's split. None when the kernel or the user cannot have them."""

    _GENL_ID_CTRL, _CTRL_CMD_GETFAMILY, _CTRL_ATTR_FAMILY_NAME, _CTRL_ATTR_FAMILY_ID = 0x10, 3, 2, 1
    _CMD_GET, _CMD_ATTR_TGID, _TYPE_AGGR_TGID, _TYPE_STATS = 1, 2, 5, 3
    _UTIME, _STIME = 152, 160  # offsets in struct taskstats (stable since version 1)

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
        self.sock.bind((0, 0))
        self.seq = 0
        reply = self._request(
            self._GENL_ID_CTRL, self._CTRL_CMD_GETFAMILY, self._attr(self._CTRL_ATTR_FAMILY_NAME, b"TASKSTATS\0")
        )
        self.family = struct.unpack_from("H", reply[self._CTRL_ATTR_FAMILY_ID])[0]

    @staticmethod
    def _attr(kind: int, payload: bytes) -> bytes:
        length = 4 + len(payload)
        return struct.pack("HH", length, kind) + payload + b"\0" * (-length % 4)

    @staticmethod
    def _attrs(buf: bytes) -> dict[int, bytes]:
        out, i = {}, 0
        while i + 4 <= len(buf):
            length, kind = struct.unpack_from("HH", buf, i)
            if length < 4:
                break
            out[kind & 0x3FFF] = buf[i + 4 : i + length]
            i += (length + 3) & ~3
        return out

    def _request(self, family: int, cmd: int, payload: bytes) -> dict[int, bytes]:
        self.seq += 1
        body = struct.pack("BBH", cmd, 1, 0) + payload
        self.sock.send(struct.pack("IHHII", 16 + len(body), family, 1, self.seq, 0) + body)
        data = self.sock.recv(65536)
        length, kind = struct.unpack_from("IH", data)
        if kind == 2:  # NLMSG_ERROR
            raise OSError(-struct.unpack_from("i", data, 16)[0], "taskstats request refused")
        return self._attrs(data[20:length])

    def user_system_us(self, pid: int) -> tuple[int, int]:
        reply = self._request(self.family, self._CMD_GET, self._attr(self._CMD_ATTR_TGID, struct.pack("I", pid)))
        stats = self._attrs(reply[self._TYPE_AGGR_TGID])[self._TYPE_STATS]
        return struct.unpack_from("Q", stats, self._UTIME)[0], struct.unpack_from("Q", stats, self._STIME)[0]

    _shared: "TaskStats | str | None" = "unset"

    @classmethod
    def shared(cls) -> "TaskStats | None":
        if cls._shared == "unset":
            try:
                cls._shared = cls()
            except OSError:
                cls._shared = None
        assert not isinstance(cls._shared, str)  # tried just above
        return cls._shared


def _system_ctxt() -> int:
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("ctxt "):
                return int(line.split()[1])
    return 0


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def process_snapshot(pid: int) -> dict[str, Any] | None:
    """One process: its tick-based user/system (whole process, ended threads
    included) and, per live thread, run time (ns) and context switches."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    snap: dict[str, Any] = {
        "user_sample_s": int(fields[11]) * TICK_S,
        "system_sample_s": int(fields[12]) * TICK_S,
        "split_source": "proc-stat",
        "threads": {},
    }
    stats = TaskStats.shared()
    if stats is not None:
        try:
            user_us, system_us = stats.user_system_us(pid)
            snap.update(user_sample_s=user_us / 1e6, system_sample_s=system_us / 1e6, split_source="taskstats")
        except (OSError, KeyError, struct.error):
            pass
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        tids = []
    for tid in tids:
        sched = _read(f"/proc/{pid}/task/{tid}/schedstat")
        status = _read(f"/proc/{pid}/task/{tid}/status")
        if sched is None or status is None:
            continue
        switches = 0
        for line in status.splitlines():
            if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                switches += int(line.split()[1])
        snap["threads"][tid] = (int(sched.split()[0]), switches)
    return snap


class Snapshot:
    def __init__(self, pids: Iterable[int], cores: Sequence[int]) -> None:
        self.wall = time.monotonic()
        self.cores = core_jiffies(cores)
        self.ctxt = _system_ctxt()
        self.processes = {pid: process_snapshot(pid) for pid in pids}


def _process_delta(
    before: dict[str, Any] | None, after: dict[str, Any] | None, wall: float, ncores: int
) -> dict[str, Any] | None:
    if before is None or after is None:
        return None
    run_ns = switches = 0
    for tid, (ns, cs) in after["threads"].items():
        ns0, cs0 = before["threads"].get(tid, (0, 0))  # a thread born in the window counts whole
        run_ns += ns - ns0
        switches += cs - cs0
    du = after["user_sample_s"] - before["user_sample_s"]
    ds = after["system_sample_s"] - before["system_sample_s"]
    user_share = user_split(du, ds)
    cpu_s = run_ns / 1e9
    scale = 100.0 / (wall * ncores)
    return {
        "cpu_s": cpu_s,
        "user_pct": cpu_s * user_share * scale,
        "system_pct": cpu_s * (1 - user_share) * scale,
        "total_pct": cpu_s * scale,
        "csw_per_s": switches / wall,
        "threads": len(after["threads"]),
        "user_sample_s": du,
        "system_sample_s": ds,
        "split_source": after["split_source"],
    }


def user_split(user_sample: float, system_sample: float) -> float:
    """The user share of CPU time from tick samples: the scheduler tick (250 Hz
    here) charges a whole tick to user or system, so only the total is exact
    and the split is a sample, summed over every process of the run (and over
    repeats) to have more of them. No sample at all: taken as user."""
    total = user_sample + system_sample
    return user_sample / total if total > 0 else 1.0


def window_result(
    before: "Snapshot", after: "Snapshot", names: Sequence[str] | None = None, ncores: int = 1
) -> dict[str, Any]:
    """The workload between two snapshots (see the module's docstring)."""
    wall = after.wall - before.wall
    d = [a - b for a, b in zip(after.cores, before.cores)]
    jiffies = sum(d) or 1
    user, nice, system, idle, iowait, irq, softirq, steal = d
    core_user = 100.0 * (user + nice) / jiffies
    core_total = 100.0 * (user + nice + system + irq + softirq) / jiffies
    processes = []
    for i, pid in enumerate(before.processes):
        delta = _process_delta(before.processes[pid], after.processes.get(pid), wall, ncores)
        if delta is not None:
            delta.update({"pid": pid, "name": names[i] if names else str(pid)})
            processes.append(delta)
    own_total = sum(p["total_pct"] for p in processes)
    user_sample = sum(p["user_sample_s"] for p in processes)
    system_sample = sum(p["system_sample_s"] for p in processes)
    own_user = own_total * user_split(user_sample, system_sample)
    return {
        "window_s": wall,
        "user_pct": own_user,
        "total_pct": own_total,
        "system_pct": own_total - own_user,
        "user_sample_s": user_sample,
        "system_sample_s": system_sample,
        "split_source": processes[0]["split_source"] if processes else None,
        "csw_per_s": sum(p["csw_per_s"] for p in processes),
        "sar_user_pct": core_user,
        "sar_total_pct": core_total,
        "steal_pct": 100.0 * steal / jiffies,
        "system_csw_per_s": (after.ctxt - before.ctxt) / wall,
        "foreign_pct": max(0.0, 100.0 * busy_jiffies(d) / jiffies - own_total),
        "processes": processes,
    }


def tick_us(default: int = 4000) -> int:
    """The scheduler tick (1 / CONFIG_HZ), from the jiffies counter in
    /proc/timer_list; `default` where that cannot be read."""

    def jiffies() -> int | None:
        text = _read("/proc/timer_list") or ""
        for line in text.splitlines():
            if line.startswith("jiffies:"):
                return int(line.split()[1])
        return None

    a, t0 = jiffies(), time.monotonic()
    time.sleep(0.2)
    b, t1 = jiffies(), time.monotonic()
    if a is None or b is None or b <= a:
        return default
    hz = (b - a) / (t1 - t0)
    return int(round(1e6 / min((100, 250, 300, 1000), key=lambda h: abs(h - hz))))


def measure_window(
    pids: Iterable[int], cores: Sequence[int], warmup_s: float, window_s: float, names: Sequence[str] | None = None
) -> dict[str, Any]:
    """Waits warmup_s, then measures the given processes and cores for window_s."""
    time.sleep(warmup_s)
    before = Snapshot(pids, cores)
    time.sleep(window_s)
    after = Snapshot(pids, cores)
    return window_result(before, after, names, len(cores))

"""`scabench run --live`: a run's figures while it goes on (run/live.py
samples them), drawn as a dashboard on a terminal and as plain lines
elsewhere (a log, a pipe), so a held or long run is never a black box."""

import math
import sys
from typing import IO, Any

from rich.console import Group
from rich.live import Live
from rich.text import Text

from scabench.console import BAD, MUTED, WARN, console, table
from scabench.run.live import LiveSample
from scabench.units import bit_rate, duration, duration_us, wall_time

# Off a terminal: a line every this many seconds of the run, and the last.
PLAIN_EVERY_S = 2.0


def _maybe(value: float | None, fmt: str, missing: str = "-") -> str:
    return missing if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, fmt)


def headline(sample: LiveSample) -> str:
    if sample.watching:
        return f"{wall_time(sample.elapsed_s)} watching {sample.watching}: {len(sample.components)} components"
    left = f", {wall_time(sample.time_left_s)} left" if sample.time_left_s is not None else ""
    return f"{wall_time(sample.elapsed_s)} elapsed: sent {sample.sent} of {sample.to_send}{left}"


def dashboard(sample: LiveSample) -> Group:
    """The dashboard: the run's progress, its components, its connections
    and the latency so far at each sink."""
    comps = table(
        "component",
        "kind",
        "taken",
        "done",
        "holding",
        "pkt/s",
        "bit/s",
        "threads",
        "reordered",
        "refused",
        "since last",
        "CPU %",
        title="components",
    )
    stalls = []
    for c in sample.components:
        comps.add_row(
            c.name,
            c.kind,
            str(c.taken),
            str(c.finished),
            Text(str(c.holding), style=WARN if c.holding > 1 else ""),
            f"{c.packets_per_s:.0f}",
            bit_rate(c.bits_per_s),
            str(c.threads_seen),
            Text(str(c.reordered), style=BAD if c.reordered else ""),
            Text(str(c.refused), style=BAD if c.refused else ""),
            duration(None if c.since_last_s is None else c.since_last_s * 1000.0),
            _maybe(c.cpu_percent, ".0f"),
        )
        if c.stalled_s is not None:
            stalls.append(
                Text(
                    f"stall: {c.name} holds {c.holding}, and nothing in the run finished for {c.stalled_s:.1f} s",
                    style=BAD,
                )
            )
    conns = table("connection", "packets", "pkt/s", title="connections")
    for k in sample.connections:
        conns.add_row(k.id, str(k.packets), f"{k.packets_per_s:.0f}")
    parts: list[Any] = [Text(headline(sample), style="bold"), comps, conns]
    if sample.latency:
        lat = table("sink", "packets", "p50", "p99", "max", title="latency since send, so far")
        for p in sample.latency:
            lat.add_row(p.sink, str(p.packets), duration_us(p.p50_us), duration_us(p.p99_us), duration_us(p.max_us))
        parts.append(lat)
    parts.extend(stalls)
    parts.append(Text("holding: packets taken and not yet finished (a worker's queue, or calls in progress)", MUTED))
    return Group(*parts)


def plain_line(sample: LiveSample) -> str:
    """One line per sample, for a log: progress, then per component what it
    holds, its rate, threads seen and reordered so far, and its CPU."""
    parts = [headline(sample)]
    for c in sample.components:
        cpu = f" cpu {c.cpu_percent:.0f}%" if c.cpu_percent is not None else ""
        stall = f" STALL {c.stalled_s:.1f}s" if c.stalled_s is not None else ""
        parts.append(
            f"{c.name}: done {c.finished} holding {c.holding} {c.packets_per_s:.0f}/s "
            f"threads {c.threads_seen} reordered {c.reordered}{cpu}{stall}"
        )
    for p in sample.latency:
        parts.append(f"{p.sink} p50 {duration_us(p.p50_us)} p99 {duration_us(p.p99_us)}")
    return " | ".join(parts)


class LiveView:
    """The on_sample of run_spec: a dashboard redrawn in place on a terminal
    (rich's Live, on stderr so that stdout keeps the run's table), plain
    lines every PLAIN_EVERY_S elsewhere. `with LiveView(): run_spec(...)`."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.console = console(stream or sys.stderr)
        self.terminal = self.console.is_terminal
        self.live = Live(console=self.console, refresh_per_second=4, transient=False) if self.terminal else None
        self.last_plain_s = -math.inf
        self.last: LiveSample | None = None
        self.last_said = False

    def __enter__(self) -> "LiveView":
        if self.live is not None:
            self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()
        elif self.last is not None and not self.last_said:
            self._plain(self.last)

    def __call__(self, sample: LiveSample) -> None:
        self.last, self.last_said = sample, False
        if self.live is not None:
            self.live.update(dashboard(sample))
        elif sample.elapsed_s - self.last_plain_s >= PLAIN_EVERY_S:
            self._plain(sample)

    def _plain(self, sample: LiveSample) -> None:
        self.last_plain_s, self.last_said = sample.elapsed_s, True
        self.console.print(plain_line(sample), markup=False, soft_wrap=True, highlight=False)

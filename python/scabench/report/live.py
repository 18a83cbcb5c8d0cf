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
from scabench.run.live import ComponentSample, LiveSample
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


# Depths a run has only where its policy makes them (shared-memory rings,
# credits): their columns appear once a sample has shown one above zero.
FLOW_DEPTHS = (("ring_depth", "ring"), ("credits_outstanding", "credits"))


def _count(value: int | None, warn_above: int = 0) -> Text:
    if value is None:
        return Text("-", MUTED)
    return Text(str(value), style=WARN if value > warn_above else "")


def _threads(c: ComponentSample) -> str:
    """Threads that took its packets so far / its process's threads now."""
    seen = str(c.threads_seen) if c.threads_seen else "-"
    return seen if c.threads_now is None else f"{seen}/{c.threads_now}"


def flow_depths_shown(sample: LiveSample) -> set[str]:
    """The FLOW_DEPTHS a sample shows above zero somewhere."""
    return {key for key, _ in FLOW_DEPTHS if any((getattr(c, key) or 0) > 0 for c in sample.components)}


def dashboard(sample: LiveSample, flow_depths: set[str] | None = None) -> Group:
    """The dashboard: the run's progress, its components (with their depths
    now: the record header's gauges, or the ports' statistics), its
    connections and the latency so far at each sink. `flow_depths`: the
    FLOW_DEPTHS columns to show (those of this sample if not given)."""
    shown = flow_depths_shown(sample) if flow_depths is None else flow_depths
    extra = [(key, title) for key, title in FLOW_DEPTHS if key in shown]
    comps = table(
        "component",
        "kind",
        "taken",
        "done",
        "queued",
        "reorder",
        "calls",
        *[title for _, title in extra],
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
            _count(c.queued, 1),
            _count(c.reorder_held),
            _count(c.upcalls, 1),
            *[_count(getattr(c, key)) for key, _ in extra],
            f"{c.packets_per_s:.0f}",
            bit_rate(c.bits_per_s),
            _threads(c),
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
        at, to = ("component", "arrival") if sample.latency_to == "arrival" else ("sink", "done")
        lat = table(at, "packets", "p50", "p99", "max", title=f"latency since send to {to}, so far")
        for p in sample.latency:
            lat.add_row(p.sink, str(p.packets), duration_us(p.p50_us), duration_us(p.p99_us), duration_us(p.max_us))
        parts.append(lat)
    parts.extend(stalls)
    parts.append(Text(LEGEND + "".join(f"; {FLOW_LEGEND[key]}" for key, _ in extra), MUTED))
    return Group(*parts)


LEGEND = (
    "now: queued in its worker queues, reorder held in its reorder buffers, calls in its ports; "
    "threads: seen taking its packets/its process's now"
)
FLOW_LEGEND = {
    "ring_depth": "ring: messages ahead in its shared-memory rings out, at its last send",
    "credits_outstanding": "credits: sent on its credits connections, not yet acknowledged",
}


def _depths(c: ComponentSample) -> str:
    """Its depths now, for a plain line: those it has (none before the gauges)."""
    named = (
        ("queued", c.queued),
        ("reorder", c.reorder_held),
        ("calls", c.upcalls),
        ("ring", c.ring_depth),
        ("credits", c.credits_outstanding),
    )
    said = [f"{name} {value}" for name, value in named if value is not None and (value or name == "queued")]
    return " ".join(said) if said else f"holding {c.holding}"


def plain_line(sample: LiveSample) -> str:
    """One line per sample, for a log: progress, then per component its
    depths now, its rate, threads seen and reordered so far, and its CPU."""
    parts = [headline(sample)]
    for c in sample.components:
        cpu = f" cpu {c.cpu_percent:.0f}%" if c.cpu_percent is not None else ""
        stall = f" STALL {c.stalled_s:.1f}s" if c.stalled_s is not None else ""
        parts.append(
            f"{c.name}: done {c.finished} {_depths(c)} {c.packets_per_s:.0f}/s "
            f"threads {_threads(c)} reordered {c.reordered}{cpu}{stall}"
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
        self.flow_depths: set[str] = set()  # FLOW_DEPTHS seen so far: their columns stay

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
        self.flow_depths |= flow_depths_shown(sample)
        if self.live is not None:
            self.live.update(dashboard(sample, self.flow_depths))
        elif sample.elapsed_s - self.last_plain_s >= PLAIN_EVERY_S:
            self._plain(sample)

    def _plain(self, sample: LiveSample) -> None:
        self.last_plain_s, self.last_said = sample.elapsed_s, True
        self.console.print(plain_line(sample), markup=False, soft_wrap=True, highlight=False)

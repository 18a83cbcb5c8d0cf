"""A run's figures while it goes on: what `scabench run --live` shows.

Nothing is added to the components for it. Every port already writes one
record per packet into a memory-mapped file (records.py), and a record's
slot is claimed, its arrival written, and its done time filled in as the
packet goes. So a reader that maps the same files sees each component's
packets as they happen, at the cost of reading them: the components pay
nothing more than they already do (docs/findings/cost-of-looking.md).

Each `sample()` reads only what was written since the last one, and the
records it saw not yet done, so a sample costs what the packets since the
last one and those in progress cost, however long the run; it keeps bounded
state: counters, the thread ids seen, the last sequence per stream, the
slots in progress, and the latency so far as a histogram of fixed
log-spaced bins (LATENCY_BINS), not a list of packets. A record's arrival
time is written last (record_log.cpp), so a record whose arrival is set is
whole.

What a sample says, per component:
- taken / finished, and `holding` (taken - finished): with a worker queue,
  the packets queued plus the one in work; with a thread per call, the
  calls in progress, one ORB thread each;
- rates over the last interval (packets, elements and bits per second);
- threads seen so far (the distinct threads that took its packets);
- reordered so far, as the run's table counts "reordered (previous)"
  (docs/reference/metrics.md): arrivals whose sequence is not the previous
  arrival's of the same stream + 1;
- refused, and the flow counters the record header keeps (held peak,
  suspends, send stalls);
- its depths now, from the header's gauges, which the runtime keeps as
  they change (records.GAUGES): the packets in its worker queues
  (`queued`), in its reorder buffers (`reorder_held`), its calls in
  progress (`upcalls`), the messages ahead in its shared-memory rings
  (`ring_depth`) and its credits outstanding (`credits_outstanding`);
  None for a record file written before the gauges;
- time since its last packet was finished, and a stall as it happens: work
  held and none finished for longer than stalls.threshold_ms allows;
- its process's CPU over the last interval and its threads now (/proc);
and per connection the packets and rate at its receiver, per sink the
latency since send to done so far (p50 / p99 / max: the table's "send →
done"), and the run's time left at
the sources' pace so far."""

import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from scabench import latency_bins
from scabench.model import graph
from scabench.model.pipeline import packet_bytes, property_value, stage_work
from scabench.model.spec import Spec
from scabench.run.graph_figures import connection_numbers, stream_of
from scabench.run.metrics import reordered_from_previous
from scabench.run.records import HEADER, MAGIC, RECORD, REFUSAL_REASONS, gauges_of, header_dtype
from scabench.run.stalls import threshold_ms
from scabench.run.watchdog import children, host_components

# Latency bins' edges in µs: 20 per decade from 1 µs to 1000 s, plus a bin
# each side (latency_bins.py: the one definition, which the ports' share).
LATENCY_BINS = np.array(latency_bins.EDGES_US)
SAMPLE_S = 0.5
_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class ComponentSample:
    name: str
    kind: str
    taken: int = 0
    finished: int = 0
    holding: int = 0
    packets_per_s: float = 0.0
    bits_per_s: float = 0.0
    threads_seen: int = 0
    busiest: int = 0  # the most packets it held at once so far (the header's max_concurrent)
    reordered: int = 0
    refused: int = 0
    held_peak: int = 0  # the resequencer's most held packets
    suspends: int = 0
    send_stalls: int = 0
    since_last_s: float | None = None  # since its last packet finished; None before the first
    stalled_s: float | None = None  # work held and nothing finished for this long, beyond its threshold
    cpu_percent: float | None = None  # its process's, over the last interval (several components may share one)
    pid: int | None = None
    # Depths now (the record header's gauges, records.GAUGES; over CORBA the
    # ports' statistics keywords); None where the source has no such figure.
    queued: int | None = None  # in its worker queues
    reorder_held: int | None = None  # in its reorder buffers
    upcalls: int | None = None  # calls in its provides ports
    ring_depth: int | None = None  # in its shared-memory rings out
    credits_outstanding: int | None = None  # sent on its credits connections, not yet acknowledged
    threads_now: int | None = None  # its process's threads (scabench top: the process_threads keyword)


@dataclass
class ConnectionSample:
    id: str
    sender: str
    receiver: str
    packets: int = 0
    packets_per_s: float = 0.0


@dataclass
class PathLatency:
    sink: str
    packets: int
    p50_us: float
    p99_us: float
    max_us: float


@dataclass
class LiveSample:
    elapsed_s: float
    sent: int
    to_send: int
    time_left_s: float | None
    components: list[ComponentSample] = field(default_factory=list)
    connections: list[ConnectionSample] = field(default_factory=list)
    latency: list[PathLatency] = field(default_factory=list)
    watching: str = ""  # what `scabench top` watches (a run --live sample watches its own run: "")
    # Where `latency` ends: "done" at the sinks (run --live, from the records),
    # "arrival" at each component's provides ports (scabench top, over CORBA).
    latency_to: str = "done"

    def component(self, name: str) -> ComponentSample:
        return next(c for c in self.components if c.name == name)


def percentile_of_histogram(counts: np.ndarray, q: float) -> float:
    """The q-th percentile (0..100) of values binned into LATENCY_BINS
    (counts: one per bin, plus one below the first and one above the last
    edge), as the upper edge of the bin it falls in: an overestimate by at
    most one bin (12 %)."""
    total = int(counts.sum())
    if total == 0:
        return float("nan")
    rank = max(1, int(np.ceil(q / 100.0 * total)))
    index = int(np.searchsorted(np.cumsum(counts), rank))
    edges = np.concatenate(([LATENCY_BINS[0]], LATENCY_BINS, [np.inf]))
    return float(edges[min(index + 1, edges.size - 1)])


class _RecordFile:
    """One component's record file, mapped, read a little more each time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        first = np.fromfile(path, dtype=HEADER, count=1)[0]
        dtype = header_dtype(int(first["header_size"]))  # with the gauges, or a file written before them
        self.header = np.memmap(path, dtype=dtype, mode="r", shape=(1,))
        capacity = int(self.header[0]["capacity"])
        self.records = np.memmap(path, dtype=RECORD, mode="r", offset=dtype.itemsize, shape=(capacity,))
        self.arrived = 0  # records whose arrival has been looked at
        self.checked = 0  # records looked at for their done time (below `arrived`)
        self.pending = np.empty(0, np.int64)  # those of them not done when last looked at

    def claimed(self) -> int:
        return min(int(self.header[0]["claimed"]), self.records.shape[0])


class _ComponentState:
    def __init__(self, name: str) -> None:
        self.name = name
        self.file: _RecordFile | None = None
        self.threads: set[int] = set()
        self.previous: dict[int, int] = {}  # stream -> the sequence of its last arrival
        self.reordered = 0
        self.per_connection: dict[int, int] = {}
        self.last_done_ns = 0
        self.finished_before = 0
        self.cpu_ticks_before: int | None = None


class LiveSampler:
    """Reads a run's record files as it goes (see the module docstring).
    `sample()` may be called from any one thread, as often as wanted."""

    def __init__(self, spec: Spec, run_dir: Path, launcher_pid: int | None = None) -> None:
        self.spec, self.run_dir, self.launcher_pid = spec, Path(run_dir), launcher_pid
        self.sources = graph.sources(spec)
        self.sinks = graph.sinks(spec)
        self.numbers = connection_numbers(spec)
        self.bits_per_packet = 8 * packet_bytes(spec)
        self.work_ms = {name: work[0] for name, work in stage_work(spec).items()}
        self.to_send = sum(int(property_value(c, "packets") or 0) for c in spec.packet_sources())
        self.stream_source = {stream_of(spec, s): s for s in self.sources}
        self.state = {c.name: _ComponentState(c.name) for c in spec.components if c.external is None}
        self.latency = {sink: np.zeros(LATENCY_BINS.size + 1, np.int64) for sink in self.sinks}
        self.started = time.monotonic()
        self.last_sample = self.started
        self.connection_before: dict[str, int] = {}

    # -- reading -------------------------------------------------------

    def _file(self, st: _ComponentState) -> _RecordFile | None:
        if st.file is None:
            path = self.run_dir / f"{st.name}.rec"
            try:
                if path.stat().st_size >= HEADER.itemsize and self._header_ready(path):
                    st.file = _RecordFile(path)
            except (OSError, ValueError):
                return None
        return st.file

    @staticmethod
    def _header_ready(path: Path) -> bool:
        header = np.fromfile(path, dtype=HEADER, count=1)
        return bool(header.size) and header[0]["magic"] == MAGIC and int(header[0]["capacity"]) > 0

    def _send_times(self, stream: int) -> np.ndarray | None:
        source = self.stream_source.get(stream)
        st = self.state.get(source) if source is not None else None
        f = self._file(st) if st is not None else None
        return None if f is None else f.records["arrive_ns"]

    def _read_arrivals(self, st: _ComponentState, f: _RecordFile, is_source: bool) -> None:
        end = f.claimed()
        if end <= f.arrived:
            return
        new = np.array(f.records[f.arrived : end])
        unwritten = np.flatnonzero(new["arrive_ns"] == 0)
        if unwritten.size:  # a slot claimed, its arrival not yet written: read it next time
            new = new[: unwritten[0]]
        if not new.size:
            return
        f.arrived += new.size
        st.threads.update(int(t) for t in np.unique(new["thread_id"]))
        if is_source:
            return
        streams = (new["flags"] >> 16).astype(np.int64)
        for number, count in zip(*np.unique(new["flags"] & 0xFFFF, return_counts=True), strict=True):
            st.per_connection[int(number)] = st.per_connection.get(int(number), 0) + int(count)
        for stream in np.unique(streams):
            seq = new["sequence"][streams == stream].astype(np.int64)
            st.reordered += _reordered_after(st.previous.get(int(stream)), seq)
            st.previous[int(stream)] = int(seq[-1])

    def _read_done(self, st: _ComponentState, f: _RecordFile) -> None:
        """Looks again at the records not done when last looked at, and at
        those that arrived since: each is counted once, when it is done."""
        # The new ones by a slice (a copy of a contiguous range), the few in
        # progress by their indices.
        new = np.array(f.records[f.checked : f.arrived])
        old = f.records[f.pending] if f.pending.size else new[:0]
        new_done, old_done = new["done_ns"] != 0, old["done_ns"] != 0
        f.pending = np.concatenate((f.pending[~old_done], f.checked + np.flatnonzero(~new_done)))
        f.checked = f.arrived
        finished = np.concatenate((old[old_done], new[new_done]))
        if not finished.size:
            return
        st.last_done_ns = max(st.last_done_ns, int(finished["done_ns"].max()))
        if st.name in self.latency:
            streams = (finished["flags"] >> 16).astype(np.int64)
            for stream in np.unique(streams):
                mine = finished[streams == stream]
                self._add_latency(st.name, int(stream), mine["sequence"].astype(np.int64), mine["done_ns"])

    def _add_latency(self, sink: str, stream: int, seq: np.ndarray, done_ns: np.ndarray) -> None:
        """Since send to done at the sink, as the run's table measures it
        (runner: "send → done")."""
        sent = self._send_times(stream)
        if sent is None:
            return
        # A source numbers its packets 0, 1, ... in send order: record k is packet k.
        known = (seq >= 0) & (seq < sent.shape[0])
        send_ns = np.asarray(sent[seq[known]], np.int64)
        valid = send_ns > 0
        us = (np.asarray(done_ns, np.int64)[known][valid] - send_ns[valid]) / 1000.0
        self.latency[sink] += np.bincount(np.searchsorted(LATENCY_BINS, us), minlength=LATENCY_BINS.size + 1)

    def _processes(self) -> dict[str, tuple[int, int, int]]:
        """{component: (pid, CPU ticks so far, threads now)} of the run's hosts."""
        if self.launcher_pid is None:
            return {}
        out = {}
        for pid in children(self.launcher_pid):
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                # proc(5)'s fields 14, 15 (utime, stime) and 20 (num_threads), counted after the name
                ticks, threads = int(fields[11]) + int(fields[12]), int(fields[17])
            except (OSError, IndexError, ValueError):
                continue
            for name in host_components(pid):
                out[name] = (pid, ticks, threads)
        return out

    # -- the sample ------------------------------------------------------

    def sample(self) -> LiveSample:
        now = time.monotonic()
        interval = max(now - self.last_sample, 1e-6)
        self.last_sample = now
        now_ns = time.monotonic_ns()
        processes = self._processes()
        components = []
        for c in self.spec.components:
            st = self.state.get(c.name)
            if st is None:
                continue
            out = ComponentSample(c.name, c.kind)
            f = self._file(st)
            if f is not None:
                header = f.header[0]
                self._read_arrivals(st, f, c.name in self.sources)
                self._read_done(st, f)
                out.taken, out.finished = int(header["claimed"]), int(header["completed"])
                out.holding = max(0, out.taken - out.finished)
                out.packets_per_s = (out.finished - st.finished_before) / interval
                out.bits_per_s = out.packets_per_s * self.bits_per_packet
                st.finished_before = out.finished
                out.threads_seen = len(st.threads)
                out.busiest = int(header["max_concurrent"])
                out.reordered = st.reordered
                out.refused = sum(int(header[f"refused_{reason}"]) for reason in REFUSAL_REASONS)
                out.held_peak, out.suspends = int(header["held_peak"]), int(header["suspends"])
                out.send_stalls = int(header["send_stalls"])
                gauges = gauges_of(header)
                if gauges is not None:
                    out.queued, out.reorder_held = gauges["worker_queued"], gauges["reorder_held"]
                    out.upcalls, out.ring_depth = gauges["upcalls"], gauges["ring_depth"]
                    out.credits_outstanding = gauges["credits_outstanding"]
                if st.last_done_ns:
                    out.since_last_s = max(0.0, (now_ns - st.last_done_ns) / 1e9)
            if c.name in processes:
                pid, ticks, out.threads_now = processes[c.name]
                out.pid = pid
                if st.cpu_ticks_before is not None:
                    out.cpu_percent = 100.0 * (ticks - st.cpu_ticks_before) / _TICKS / interval
                st.cpu_ticks_before = ticks
            components.append(out)
        self._mark_stalls(components, now_ns)
        connections = []
        for conn in self.spec.connections:
            st = self.state.get(conn.provides[0])
            packets = st.per_connection.get(self.numbers[conn.id], 0) if st is not None else 0
            rate = (packets - self.connection_before.get(conn.id, 0)) / interval
            self.connection_before[conn.id] = packets
            connections.append(ConnectionSample(conn.id, conn.uses[0], conn.provides[0], packets, rate))
        latency = [
            PathLatency(
                sink,
                int(counts.sum()),
                percentile_of_histogram(counts, 50),
                percentile_of_histogram(counts, 99),
                percentile_of_histogram(counts, 100),
            )
            for sink, counts in self.latency.items()
            if counts.sum()
        ]
        sent = sum(next((x.finished for x in components if x.name == s), 0) for s in self.sources)
        elapsed = now - self.started
        time_left = None
        if 0 < sent < self.to_send:
            time_left = (self.to_send - sent) * elapsed / sent
        return LiveSample(elapsed, sent, self.to_send, time_left, components, connections, latency)

    def _mark_stalls(self, components: list[ComponentSample], now_ns: int) -> None:
        """A stall as stalls.py defines it, as it happens: a component holds
        work while nothing in the whole run has finished anything for longer
        than its threshold. One that holds work while others go on is held
        back by flow control (a source blocked on a full queue), not stalled."""
        last_ns = max((st.last_done_ns for st in self.state.values()), default=0)
        if not last_ns:
            return
        still_ms = max(0.0, (now_ns - last_ns) / 1e6)
        for c in components:
            if c.holding and still_ms > threshold_ms(self.work_ms.get(c.name), max(1, c.busiest)):
                c.stalled_s = still_ms / 1000.0


def _reordered_after(previous: int | None, seq: np.ndarray) -> int:
    """metrics.reordered_from_previous over a stream's arrivals read so far,
    counted on the new ones only: `previous` is the sequence of the arrival
    before them (None before the stream's first)."""
    if previous is None:
        return reordered_from_previous(seq)
    return reordered_from_previous(np.concatenate(([previous], seq))) - reordered_from_previous([previous])


class LiveWatch(threading.Thread):
    """with LiveWatch(sampler, on_sample): calls on_sample(sampler.sample())
    every `every_s` while the run goes on, and once more at its end."""

    def __init__(
        self, sampler: LiveSampler, on_sample: Callable[[LiveSample], None], every_s: float = SAMPLE_S
    ) -> None:
        super().__init__(name="scabench-live", daemon=True)
        self.sampler, self.on_sample, self.every_s = sampler, on_sample, every_s
        self._done = threading.Event()
        self.error: BaseException | None = None

    def __enter__(self) -> "LiveWatch":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self.join()
        if self.error is not None:  # said once: the run went on without its view
            print(f"scabench: the live view stopped: {self.error!r}; the run went on and was measured", file=sys.stderr)

    def run(self) -> None:
        try:
            while not self._done.wait(self.every_s):
                self.on_sample(self.sampler.sample())
            self.on_sample(self.sampler.sample())
        except Exception as exc:  # the view must never take the run down: keep the error, stop looking
            self.error = exc


def as_dict(sample: LiveSample) -> dict[str, object]:
    """A sample as plain data (the Python API, a JSON line)."""
    return asdict(sample)

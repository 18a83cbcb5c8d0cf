"""What one run gives, typed: RunResult and its parts (docs/architecture.md,
"Result JSON").

as_dict() gives the result JSON's object, keys in the order the file has
them; from_dict() reads one back (a study's kept runs, re-rendered). The
JSON tells a missing key from a null, so the fields say which they are:
- a field without a default is always written (None as null);
- optional(): left out while None (only a failed run has "error", only a
  run on network hosts has "network");
- figure(): one of a run's figures, which exist once its records were
  analysed; all of them are written, null where a figure has no value, or
  none of them (a run that failed before).
A new optional key is one more optional() field, in the place its key takes
in the file, so results written without it read and write back unchanged.
from_dict() refuses keys it does not know rather than drop them: a result
rewritten from it would lose them."""
from dataclasses import dataclass, field, fields


def optional():
    """A key a result may lack: left out of the JSON while None."""
    return field(default=None, metadata={"omit": "if None"})


def figure():
    """A figure of an analysed run (RunResult.analysed)."""
    return field(default=None, metadata={"omit": "unless analysed"})


def _plain(value):
    if hasattr(value, "as_dict"):
        return value.as_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _as_dict(obj, analysed=True):
    out = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        omit = f.metadata.get("omit")
        if (omit == "if None" and value is None) or (omit == "unless analysed" and not analysed):
            continue
        out[f.name] = _plain(value)
    return out


def _from_dict(cls, doc, read=None):
    """cls from its JSON object; read: {key: function} for the keys that hold
    typed values (applied unless the value is null)."""
    if not isinstance(doc, dict):
        raise ValueError(f"{cls.__name__}: expected an object, not {type(doc).__name__}")
    known = {f.name for f in fields(cls)}
    unknown = [k for k in doc if k not in known]
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown key(s) {', '.join(map(repr, unknown))}")
    read = read or {}
    try:
        return cls(**{k: (read[k](v) if k in read and v is not None else v) for k, v in doc.items()})
    except TypeError as exc:  # a required key is missing
        raise ValueError(f"{cls.__name__}: {exc}") from None


class _Typed:
    """as_dict() and from_dict() for a part of a result (see the module docstring)."""

    def as_dict(self):
        return _as_dict(self)

    @classmethod
    def from_dict(cls, doc):
        return _from_dict(cls, doc)


@dataclass
class StageResult(_Typed):
    """One stage (a component with an input), from its record file."""
    name: str
    kind: str
    received: int
    last_packet_ms: float | None        # None: it finished no packet
    reordered_from_previous: int
    reordered_from_original: int
    output_reordered_from_previous: int  # in the order it finished packets
    max_server_threads: int
    distinct_receiving_threads: int
    # Ordering and flow-control counts from the record file's header; None in
    # results written before the runtime counted them.
    reorder_buffer_peak: int | None = optional()
    skipped: int | None = optional()
    late: int | None = optional()
    duplicates: int | None = optional()
    held_peak: int | None = optional()
    flow_suspends: int | None = optional()
    send_stalls: int | None = optional()
    # What its ports refused from peers (docs/trust-model.md): the total and
    # by reason; None in results written before ports counted refusals.
    refused: int | None = optional()
    refused_by: dict | None = optional()
    # With more than one connection into it (fan-in): each connection's
    # figures (ConnectionResult), in the spec's order; the stage's own
    # reordering counts are then their sum. None otherwise, and in results
    # written before.
    connections: list | None = optional()

    @classmethod
    def from_dict(cls, doc):
        return _from_dict(cls, doc, {"connections": lambda cs: [ConnectionResult.from_dict(c) for c in cs]})


@dataclass
class ConnectionResult(_Typed):
    """One connection into a stage that has several (fan-in), from the
    stage's records: each packet's record names the connection it came in
    on. Order is counted within the connection, per stream."""
    id: str                       # the spec's connection id, "p1.out->stage1.in"
    sent: int | None              # packets the sending component handled (a source: sent); None: no records
    received: int
    reordered_from_previous: int
    reordered_from_original: int


@dataclass
class ProducerResult(_Typed):
    """The first packet source: what it sent and how long each send took."""
    name: str
    sent: int
    last_sent_ms: float | None
    send_us: dict                # metrics.send_time_stats: {"min", "p50", ...}; {} if nothing was sent
    send_share_under_us: dict    # {threshold (µs, as text): % of sends faster}
    send_us_all: list            # every send, in order (µs)
    send_stalls: int | None = optional()
    refused: int | None = optional()     # as StageResult's
    refused_by: dict | None = optional()


@dataclass
class CpuUsage(_Typed):
    """The run's CPU: the launcher's count of the hosts' CPU, and their
    rusage at exit, summed."""
    run_cpu_s: float
    user_s: float
    system_s: float
    voluntary_ctxsw: int
    involuntary_ctxsw: int


@dataclass
class NetworkResult(_Typed):
    """Network hosts (run/network.py): where each host was, the link, and
    the link emulator's CPU once the run ended."""
    hosts: list                  # per host: netns, address, published
    link: dict                   # delay_ms, jitter_ms
    emulator: str
    emulator_cpu_s: float | None = optional()  # counted as the run's own, not foreign


@dataclass
class RunResult:
    """One run of a spec (runner.run_spec); a failed or interrupted run keeps
    what it had: its stages and producer over the packets handled (its other
    figures null)."""
    status: str                  # "ok", "failed" or "interrupted"
    spec: dict                   # the resolved spec (Spec.describe())
    environment: dict            # cores, CPU model, kernel, ORB version
    floor_ms: float
    started_at: float            # time.time() at launch
    network: NetworkResult | None = optional()
    naming: dict | None = optional()  # the run's Naming Service: corbaloc and the waveform's context
    hosts: list | None = optional()  # the launcher's record of each host; None if it left no manifest
    overhead_ratio: float | None = figure()  # None if no last stage finished a packet
    foreign_cpu_pct: float | None = figure()
    stages: list | None = figure()           # StageResult, in pipeline order
    producer: ProducerResult | None = figure()  # None (written {}) without a packet source
    cpu: CpuUsage | None = figure()
    window_s: float | None = figure()        # from start() to the last end of stream
    stats: dict | None = figure()            # figures components reported: {component: {key: value}}
    # Stretches in which a component held work and finished none (run/stalls.py).
    stalls: list | None = optional()
    stalled: bool | None = optional()
    # Packets or signals the ports refused from peers, and whether there were
    # none: a run with refusals is not reported as clean.
    refusals: int | None = optional()
    clean: bool | None = optional()
    window: dict | None = optional()         # what run_spec's on_start measured
    error: str | None = optional()
    failed_component: str | None = optional()
    # How the campaign's guard kept the run (measure/campaign.py).
    attempt: int | None = optional()
    redone_for_foreign_load_pct: list | None = optional()
    machine_was_quiet: bool | None = optional()

    @property
    def analysed(self):
        """The run's records were read: its figures exist."""
        return self.stages is not None

    def as_dict(self):
        out = _as_dict(self, self.analysed)
        if self.analysed and self.producer is None:
            out["producer"] = {}
        return out

    @classmethod
    def from_dict(cls, doc):
        return _from_dict(cls, doc, {
            "network": NetworkResult.from_dict,
            "stages": lambda stages: [StageResult.from_dict(s) for s in stages],
            "producer": lambda p: ProducerResult.from_dict(p) if p else None,
            "cpu": CpuUsage.from_dict,
        })

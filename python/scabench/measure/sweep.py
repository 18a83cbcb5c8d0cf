"""A sweep (`scabench sweep SPEC --grid KEY=V1,V2 ...`): every point of the
crossed grids measured K times under the guard (measure/repeat.py), and the
answer to the paper's question for this pipeline: the fastest configuration
that kept every packet in order (and met the latency bound, if given). On a
graph, every sink counts: every stream in order at every sink, no packet
lost on any path, and none dropped by a drop fan-out (such a point is not
lossless, so never the answer).

A grid key is what the run command's overrides take, under one name each:
- `policy.KEY`: a policy key on every connection, as `--policy KEY=VALUE`
  (`policy.call=oneway,twoway`, `policy.worker=false,16,64`);
- `run.KEY`: a run setting, as the run command's flags: `run.packets`,
  `run.cores` (a value's CPUs joined by `+`: `run.cores=0,0+1`),
  `run.scheduler`, `run.transport`, `run.pin`, `run.collocated`,
  `run.link_delay_ms`, `run.link_jitter_ms`;
- `COMPONENT.KEY`: a component property, as `--set` (`stage1.work_us=500,1000`).

Every point is built and checked before the first run, so a bad key or
value stops the sweep at once. The document is handed to `save` after every
run kept. A sweep cut short (Ctrl-C, SIGTERM, a point whose runs all
failed, a killed process) resumes from that document: the same spec and
grid keep every run it measured, a point cut half-way through its K runs
included, and measure only the runs missing; another spec, grid or packet
count is refused, since resuming would mix two measurements (kept_runs)."""

import itertools
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO, TypedDict

from scabench.console import Progress
from scabench.errors import RunError, SpecError
from scabench.interrupts import Interrupted
from scabench.measure import stats
from scabench.measure.guard import GuardSettings
from scabench.measure.repeat import Benchmark, estimate_s, run_benchmark
from scabench.model.checks import override_value, parse_cores
from scabench.model.order import guarantees_order
from scabench.model.overrides import Overrides, apply_overrides
from scabench.model.pipeline import producer_packets, source_period_ms
from scabench.model.resources import check_memory
from scabench.run.results import RunResult
from scabench.run.trace import traces_at_point
from scabench.version import version_info

if TYPE_CHECKING:
    from scabench.model.spec import Spec

WHERE = "--grid"
# The most points a sweep takes. Each point is a spec planned and checked
# before the first run and then measured K times for seconds each: a grid
# beyond this is a slip (two axes of a thousand values), not a plan.
MAX_POINTS = 10_000
# The run command's flags, as grid keys run.KEY (the module docstring).
GRID_RUN_KEYS = ("packets", "cores", "scheduler", "transport", "pin", "collocated", "link_delay_ms", "link_jitter_ms")


@dataclass(frozen=True)
class Axis:
    key: str
    values: tuple


def parse_grid(items: Iterable[str]) -> list["Axis"]:
    """["policy.call=oneway,twoway", ...] -> [Axis]; SpecError on a malformed
    item or a key given twice."""
    pairs: list[tuple[str, list[Any]]] = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = [v.strip() for v in text.split(",")]
        if not sep or not key or not all(values):
            raise SpecError(
                WHERE, item, "use KEY=V1,V2,... (e.g. policy.call=oneway,twoway or stage1.work_us=500,1000)"
            )
        if any(k == key for k, _ in pairs):
            raise SpecError(WHERE, key, "given twice; list every value in one --grid")
        pairs.append((key, [override_value(v) for v in values]))
    return grid_axes(pairs)


def grid_axes(pairs: Iterable[tuple[str, Any]] | dict[str, Any], where: str = WHERE) -> list["Axis"]:
    """[(key, [values])] (or a dict: {key: [values]}) -> [Axis], the values
    as a TOML table would hold them; SpecError on a key that is not
    SCOPE.KEY, no value, or a value listed twice."""
    axes = []
    for key, values in pairs.items() if isinstance(pairs, dict) else pairs:
        if not isinstance(key, str) or "." not in key:
            raise SpecError(where, str(key), "use policy.KEY, run.KEY or COMPONENT.KEY")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise SpecError(where, key, f"{values!r}: give the values to sweep as a list")
        values = list(values)
        if not values:
            raise SpecError(where, key, "no value to sweep; give one or more")
        seen = [json.dumps(v, sort_keys=True, default=str) for v in values]
        if len(set(seen)) < len(seen):
            raise SpecError(where, key, f"a value is listed twice in {values!r}")
        axes.append(Axis(key, tuple(values)))
    if not axes:
        raise SpecError(where, "", "give at least one --grid KEY=V1,V2,...")
    count = math.prod(len(a.values) for a in axes)  # the points, counted without making them
    if count > MAX_POINTS:
        sizes = " × ".join(str(len(a.values)) for a in axes)
        raise SpecError(
            where,
            "",
            f"{count:,} points ({sizes} values) is more than a sweep takes ({MAX_POINTS:,}); sweep fewer values",
        )
    return axes


def grid_points(axes: Sequence["Axis"]) -> list[dict[str, Any]]:
    """The crossed grids: one {key: value} per point, the first axis slowest."""
    return [dict(zip((a.key for a in axes), combo)) for combo in itertools.product(*(a.values for a in axes))]


def value_text(value: Any) -> str:
    """A grid value as it is written on the command line and in a spec:
    true and false in lower case, the rest as themselves."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def label_of(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={value_text(v)}" for k, v in settings.items())


class _RunFields(TypedDict, total=False):
    """The Overrides fields a `run.KEY` grid key sets, by the field's name."""

    packets: int
    cores: list[int]
    scheduler: str
    transport: str
    pin: bool
    collocated: bool


def overrides_of(settings: dict[str, Any], packets: int | None = None) -> tuple[Overrides, dict[str, str]]:
    """One point's settings (and --packets, which its run.packets overrides)
    as the run command's overrides, and what a refusal of each names: the
    grid key it came from."""
    fields: _RunFields = {}
    where = {"packets": "--packets"}
    policy: dict[str, Any] = {}
    properties: dict[str, dict[str, Any]] = {}
    network: dict[str, float] = {}
    if packets:
        fields["packets"] = packets
    for key, value in settings.items():
        scope, _, name = key.partition(".")
        if scope == "policy":
            policy[name] = value
            where["policy"] = f"{WHERE} policy"
        elif scope == "run":
            field_name = _run_field(fields, network, name, value)
            where.setdefault(field_name, f"{WHERE} {key}")
            if field_name == "packets":
                where["packets"] = f"{WHERE} {key}"
        else:
            properties.setdefault(scope, {})[name] = value
            where["properties"] = WHERE
    return Overrides(**fields, policy=policy, properties=properties, network=network or None), where


def apply(spec: "Spec", settings: dict[str, Any]) -> "Spec":
    """The spec with one point's settings applied, with the same checks as
    the run command's overrides (model/overrides.py)."""
    return apply_overrides(spec, *overrides_of(settings))


def _run_field(fields: _RunFields, network: dict[str, float], name: str, value: Any) -> str:
    """Puts a run.KEY value where Overrides holds it; the field's name."""
    if name == "packets":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SpecError(WHERE, "run.packets", f"{value!r} is not a whole number of packets, at least 1")
        fields["packets"] = value
    elif name == "cores":
        # On the command line a value's CPUs are joined by "+"; from code, a list.
        fields["cores"] = parse_cores(
            value if isinstance(value, list) else str(value).replace("+", ","), WHERE, "run.cores"
        )
    elif name == "scheduler":
        fields["scheduler"] = str(value)
    elif name == "transport":
        fields["transport"] = str(value)
    elif name in ("pin", "collocated"):
        if not isinstance(value, bool):
            raise SpecError(WHERE, f"run.{name}", f"{value!r} is not valid; use true or false")
        if name == "pin":
            fields["pin"] = value
        else:
            fields["collocated"] = value
    elif name in ("link_delay_ms", "link_jitter_ms"):
        network[name.replace("link_", "")] = value
        return "network"
    else:
        raise SpecError(
            WHERE, f"run.{name}", f"not a run key; use one of: {', '.join('run.' + k for k in GRID_RUN_KEYS)}"
        )
    return name


@dataclass
class Point:
    """One point of the plan: its settings, and its spec, checked."""

    settings: dict[str, Any]
    spec: "Spec"

    @property
    def label(self) -> str:
        return label_of(self.settings)

    @property
    def packets(self) -> int:
        return producer_packets(self.spec)

    def outputs(self) -> list[str]:
        """The components whose packets leave the pipeline (no outgoing connection)."""
        feeding = {c.uses[0] for c in self.spec.connections}
        return [c.name for c in self.spec.components if c.name not in feeding]


def plan(load: Callable[[], "Spec"], axes: Sequence["Axis"], packets: int | None = None) -> list["Point"]:
    """Every point, each on its own spec from `load()` with --packets and the
    point's settings applied and the memory checked: a bad key or value is a
    SpecError before anything runs."""
    points = []
    for settings in grid_points(axes):
        spec = apply_overrides(load(), *overrides_of(settings, packets))
        check_memory(spec)
        points.append(Point(settings, spec))
    return points


def reordered_at_outputs(run: RunResult, outputs: Iterable[str]) -> int | None:
    """The most packets out of order at any output of one run (counted
    against the source's order, in the order the output handled them: what
    a resequencing port handed on, not what reached it); None where the run
    has no figures."""
    if not run.stages:
        return None
    if run.paths:  # every stream at every sink, each route into it apart (run/graph_figures.py)
        return max(p.reordered for p in run.paths)

    def handled(stage: Any) -> int:
        done = stage.output_reordered_from_original
        return stage.reordered_from_original if done is None else done  # results written before

    return max([handled(s) for s in run.stages if s.name in outputs] or [handled(run.stages[-1])])


def missing_at_outputs(run: RunResult) -> dict[str, int | None] | None:
    """The packets of one run that did not reach a sink, over every path
    (RunResult.paths): {"lost": ..., "dropped": ...}, each summed over the
    paths (lost None where a path could not tell); None for a run without
    paths (written before, or never analysed)."""
    if not run.paths:
        return None
    lost = [p.lost for p in run.paths]
    return {"lost": None if None in lost else sum(lost), "dropped": sum(p.dropped for p in run.paths)}


def unpaced(spec: "Spec") -> bool:
    """Whether every packet source of a spec sends as fast as it can (no
    period): its packets then wait behind the slowest stage, and their
    latency measures that queue."""
    sources = spec.packet_sources()
    return bool(sources) and all(source_period_ms(c) == 0 for c in sources)


def _plain(value: Any) -> Any:
    """A value as it reads back from the JSON (tuples as lists), to compare
    what is planned with what was kept."""
    return json.loads(json.dumps(value))


def settings_key(settings: dict[str, Any]) -> str:
    """A point's settings as one comparable text, whatever their order."""
    return json.dumps(_plain(settings), sort_keys=True)


def _grid_text(grid: dict[str, Any]) -> str:
    return " ".join(f"{k}={','.join(map(value_text, v))}" for k, v in grid.items())


def _same_grid(a: Any, b: dict[str, Any]) -> bool:
    """The same keys, each with the same values (in any order): the same points."""

    def norm(grid: dict[str, Any]) -> dict[str, list[str]]:
        return {k: sorted(json.dumps(v) for v in values) for k, values in grid.items()}

    return isinstance(a, dict) and all(isinstance(v, list) for v in a.values()) and norm(a) == norm(_plain(b))


@dataclass
class SweepPoint:
    """One measured point of a sweep: its settings and the benchmark of its
    runs (measure/repeat.py). as_dict() is the point as results.json keeps it."""

    label: str
    settings: dict[str, Any]
    runs_asked: int
    packets: int
    status: str  # the benchmark's: "ok", "failed" or "interrupted"; "partial" while measured
    outputs: list  # the components whose packets leave the pipeline
    reordered_at_outputs: list  # per run: the most packets out of order at any output
    benchmark: Benchmark
    # Whether the point's policies guarantee order at every output, and why
    # (model/order.py); None in results written before.
    order_guaranteed: bool | None = None
    order_why: str | None = None
    unpaced: bool | None = None  # no source paced: latency is queueing (unpaced()); None: written before
    # Per run: the packets that did not reach a sink (missing_at_outputs);
    # None in results written before.
    missing_at_outputs: list | None = None

    @classmethod
    def measured(cls, point: "Point", bench: Benchmark) -> Self:
        """The point as measured: a planned Point and its Benchmark."""
        outputs = point.outputs()
        guaranteed, why = guarantees_order(point.spec)
        return cls(
            point.label,
            point.settings,
            bench.runs_asked,
            point.packets,
            bench.status,
            outputs,
            [reordered_at_outputs(r, outputs) for r in bench.runs],
            bench,
            guaranteed,
            why,
            unpaced(point.spec),
            [missing_at_outputs(r) for r in bench.runs],
        )

    def per_run(self) -> dict[str, list[Any]]:
        """{figure: [its value in each run]} for what the answer weighs:
        the last packet, the latency p99 and the whole run's CPU per packet
        (RunResult.cpu_per_packet_ms, in µs as sweeps have kept it)."""
        by_key = {f.key: f for f in stats.HEADLINE}
        return {
            **{k: [by_key[k].of(r) for r in self.benchmark.runs] for k in ("last_packet_ms", "latency_p99_ms")},
            "cpu_per_packet_us": [
                None if (ms := r.cpu_per_packet_ms()) is None else 1e3 * ms for r in self.benchmark.runs
            ],
        }

    def summary(self) -> dict[str, stats.Summary]:
        """{headline figure key: stats.Summary} over the point's runs."""
        return self.benchmark.summary()

    def as_dict(self) -> dict[str, Any]:
        """The point as results.json keeps it (plain JSON, with its summary)."""
        return {
            "label": self.label,
            "settings": self.settings,
            "runs_asked": self.runs_asked,
            "packets": self.packets,
            "status": self.status,
            "outputs": self.outputs,
            "reordered_at_outputs": self.reordered_at_outputs,
            "order_guaranteed": self.order_guaranteed,
            "order_why": self.order_why,
            "unpaced": self.unpaced,
            "missing_at_outputs": self.missing_at_outputs,
            "summary": {k: s.as_dict() for k, s in self.summary().items()},
            "per_run": self.per_run(),
            "benchmark": self.benchmark.as_dict(),
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        """The point from what as_dict wrote."""
        return cls(
            doc["label"],
            doc["settings"],
            doc["runs_asked"],
            doc["packets"],
            doc["status"],
            doc["outputs"],
            doc["reordered_at_outputs"],
            Benchmark.from_dict(doc["benchmark"]),
            doc.get("order_guaranteed"),
            doc.get("order_why"),
            doc.get("unpaced"),
            doc.get("missing_at_outputs"),
        )


def point_record(point: "Point", bench: Benchmark, status: str | None = None) -> dict[str, Any]:
    """A point as the document keeps it (plain JSON): measured, or being
    measured (status "partial": the runs kept so far)."""
    measured = SweepPoint.measured(point, bench)
    if status is not None:
        measured.status = status
    return measured.as_dict()


def point_row(point: dict[str, Any], keys: Sequence[str], max_latency_ms: float | None = None) -> dict[str, Any]:
    """A point of the document (plain JSON) as a row of a table: its
    settings under their grid keys, its label, runs and status, each headline
    figure's median, min and max over its runs, the most packets reordered,
    and whether it qualifies for the answer."""
    reordered = [r for r in point["reordered_at_outputs"] if r is not None]
    summary = point.get("summary") or {}
    return {
        **{k: point["settings"].get(k) for k in keys},
        "label": point["label"],
        "runs": len(point["reordered_at_outputs"]),
        "status": point["status"],
        **{f"{f.key}_{s}": (summary.get(f.key) or {}).get(s) for f in stats.HEADLINE for s in ("median", "min", "max")},
        "reordered_max": max(reordered) if reordered else None,
        "qualifies": why_not(point, max_latency_ms) is None,
    }


@dataclass
class Answer:
    """The paper's question answered for a sweep (answer()): the fastest
    point whose policies guarantee order and that kept every packet in order
    (within the latency bound), the runner-up, and why each other point was
    left out. best and runner_up are {label, settings, the headline figures'
    medians, cpu_per_packet_us, order_why, runs}, or None. tie: when the
    fastest is not significantly faster than the runner-up (compare's rule),
    {"why": the rule's verdict, "preferred_by": "cpu_per_packet_us",
    "latency_p99_ms" or None, "reason": in words}; best is then the one
    preferred. warnings: what the figures cannot say (an unpaced source)."""

    max_latency_ms: float | None
    best: dict | None
    runner_up: dict | None
    qualified: int
    excluded: list  # [{"label", "why"}]
    tie: dict | None = None
    warnings: list = field(default_factory=list)


@dataclass
class SweepResult:
    """A sweep, typed: what results.json holds (as_dict() writes it again).
    `reused`: the points a resume took whole from an earlier document (the
    runs it kept of others are in their benchmarks)."""

    spec: str
    grid: dict  # {key: [values]}
    runs: int
    warmup: int
    packets: int | None
    max_latency_ms: float | None
    status: str  # "ok", or "failed" / "interrupted" with the points measured so far
    points: list  # SweepPoint, in grid order
    answer: Answer | None  # None until every point is measured
    scabench: dict | None = None
    reused: int = 0

    @property
    def best(self) -> "SweepPoint | None":
        """The point the answer chose, or None."""
        label = self.answer.best["label"] if self.answer and self.answer.best else None
        return next((p for p in self.points if p.label == label), None)

    def rows(self) -> list[dict[str, Any]]:
        """A row per point (point_row): what `scabench sweep` writes to sweep.csv.
        pandas.DataFrame(sweep.rows()) loads them."""
        return [point_row(p.as_dict(), list(self.grid), self.max_latency_ms) for p in self.points]

    def run_rows(self) -> list[dict[str, Any]]:
        """A row per run of every point: the point's settings and label, then
        Benchmark.rows()."""
        return [
            {**{k: p.settings.get(k) for k in self.grid}, "label": p.label, **row}
            for p in self.points
            for row in p.benchmark.rows()
        ]

    def as_dict(self) -> dict[str, Any]:
        """The document `scabench sweep` writes to results.json."""
        return {
            **({"scabench": self.scabench} if self.scabench else {}),
            "status": self.status,
            "sweep": {
                "spec": self.spec,
                "grid": self.grid,
                "runs": self.runs,
                "warmup": self.warmup,
                "packets": self.packets,
                "max_latency_ms": self.max_latency_ms,
            },
            "points": [p.as_dict() for p in self.points],
            "answer": asdict(self.answer) if self.answer is not None else None,
        }

    @classmethod
    def from_dict(cls, doc: dict[str, Any], reused: int = 0) -> Self:
        """The sweep from its document (results.json, or what run_sweep returned)."""
        s = doc["sweep"]
        return cls(
            s["spec"],
            s["grid"],
            s["runs"],
            s["warmup"],
            s.get("packets"),
            s.get("max_latency_ms"),
            doc["status"],
            [SweepPoint.from_dict(p) for p in doc["points"]],
            Answer(**doc["answer"]) if doc.get("answer") else None,
            doc.get("scabench"),
            reused,
        )


def kept_runs(
    previous: dict[str, Any] | None,
    where: Any,
    spec_name: str,
    axes: Sequence["Axis"],
    points: Sequence["Point"],
    runs: int,
) -> dict[str, Any]:
    """What an earlier sweep saved in the same --out that this one may keep:
    {settings_key: Benchmark} of each point it measured, wholly or in part
    (the runs of a point cut short by a signal or a failure). A document of
    another spec, another grid, a spec that resolves differently now (edited,
    or other --packets) or more runs per point than asked is a SpecError:
    resuming it would mix two measurements."""
    if previous is None:
        return {}
    afresh = f"to start afresh, give another --out or delete {where}"
    s, kept_points = previous.get("sweep"), previous.get("points")
    if not isinstance(s, dict) or not isinstance(kept_points, list):
        raise SpecError(where, "", f"is not the results of a sweep; {afresh}")
    was_of = s.get("spec")
    if was_of is None or Path(str(was_of)).resolve() != Path(spec_name).resolve():
        raise SpecError(where, "", f"holds a sweep of {was_of}, not of {spec_name}; {afresh}")
    grid = {a.key: list(a.values) for a in axes}
    if not _same_grid(s.get("grid"), grid):
        was = _grid_text(s["grid"]) if isinstance(s.get("grid"), dict) else "?"
        raise SpecError(
            where,
            "",
            f"holds a sweep over the grid {was}, not {_grid_text(grid)}; give the same "
            f"--grid values to resume it; {afresh}",
        )
    planned = {settings_key(p.settings): p for p in points}
    out = {}
    for record in kept_points:
        try:
            key, bench = settings_key(record["settings"]), Benchmark.from_dict(record["benchmark"])
        except (KeyError, TypeError, ValueError) as exc:
            raise SpecError(
                where, "", f"holds a point that cannot be read back ({type(exc).__name__}: {exc}); {afresh}"
            ) from None
        point = planned.get(key)
        if point is None:
            raise SpecError(where, "", f"holds a point ({record.get('label')}) that the grid does not; {afresh}")
        if record.get("packets") != point.packets:
            raise SpecError(
                where,
                "",
                f"holds point {point.label} measured with {record.get('packets')} packets "
                f"a run, not {point.packets} (--packets); {afresh}",
            )
        now = {k: v for k, v in _plain(point.spec.describe()).items() if k != "file"}
        if {k: v for k, v in (bench.spec or {}).items() if k != "file"} != now:
            raise SpecError(
                where,
                "",
                f"holds point {point.label} measured on {was_of} as it was then, which "
                f"differs from the spec now (edited since?); {afresh}",
            )
        if len(bench.runs) > runs:
            raise SpecError(
                "--runs",
                str(runs),
                f"{where} holds {len(bench.runs)} runs of point {point.label}; "
                f"give --runs {len(bench.runs)} or more to resume it; {afresh}",
            )
        if bench.runs:
            out[key] = bench
    return out


@dataclass
class Resumed:
    """What a sweep kept from the one before it in the same --out."""

    points: int = 0  # points measured in full before, not measured again
    partial: int = 0  # points with some of their runs before (cut short, or fewer --runs), kept
    partial_runs: int = 0  # the runs kept of those

    def __bool__(self) -> bool:
        return bool(self.points or self.partial)

    def line(self, total: int, where: Any) -> str:
        parts = []
        if self.points:
            parts.append(f"{self.points} of {total} point(s) were measured already and skipped")
        if self.partial:
            parts.append(
                f"{self.partial_runs} run(s) of {self.partial} point(s) without all their runs were kept, "
                "and only the runs missing measured"
            )
        return f"resumed from {where}: " + "; ".join(parts)


def run_sweep(
    spec_name: str,
    axes: Sequence["Axis"],
    points: Sequence["Point"],
    runs: int,
    warmup: int,
    settings: GuardSettings,
    save: Callable[[dict[str, Any]], Any],
    previous: dict[str, Any] | None = None,
    max_latency_ms: float | None = None,
    packets: int | None = None,
    say: Any = None,
    stream: TextIO | None = None,
    where: Any = "results.json",
) -> tuple[dict[str, Any], "Resumed"]:
    """Measures every point of the grid, K runs each; calls save(doc) after
    every kept run, so that a sweep cut short anywhere (a signal, a point
    that failed, a killed process) loses at most the run it was in.
    `previous`: the document such a sweep saved (in `where`): its points'
    runs are kept and only the runs missing are measured (kept_runs says
    when it may not be resumed). Returns the document and a Resumed. save
    returns where it wrote the document. RunError and Interrupted carry the
    document so far as their result, saved already."""
    kept = kept_runs(previous, where, spec_name, axes, points, runs)
    doc = {
        "scabench": version_info(),
        "status": "running",
        "sweep": {
            "spec": spec_name,
            "grid": {a.key: list(a.values) for a in axes},
            "runs": runs,
            "warmup": warmup,
            "packets": packets,
            "max_latency_ms": max_latency_ms,
        },
        "points": [],
        "answer": None,
    }
    # Every point with runs kept stays in the document from the start: a
    # sweep cut short again before it reaches them must not lose them.
    records = {
        i: point_record(p, kept[settings_key(p.settings)], "partial")
        for i, p in enumerate(points)
        if settings_key(p.settings) in kept
    }

    def save_now() -> Any:
        doc["points"] = [records[i] for i in sorted(records)]
        return save(doc)

    resumed = Resumed()

    def left(point: "Point") -> int:
        """The runs a point still needs, its warm-up included (none once it has them all)."""
        have = len(kept[settings_key(point.settings)].runs) if settings_key(point.settings) in kept else 0
        return runs - have + warmup if have < runs else 0

    total = sum(estimate_s(p.spec) * left(p) for p in points)
    with Progress(total, "sweep", stream) as progress:
        for i, point in enumerate(points):
            label = f"point {i + 1}/{len(points)} {point.label}"
            done = kept.get(settings_key(point.settings))
            if done is not None and len(done.runs) >= runs:
                records[i] = point_record(point, _continued(done, runs), "ok")
                resumed.points += 1
                progress.say(f"{label}: measured already ({runs} run(s)), skipped")
                continue
            if done is not None:
                resumed.partial += 1
                resumed.partial_runs += len(done.runs)
                progress.say(f"{label}: {len(done.runs)} of {runs} run(s) measured already; measuring the rest")

            def keep(bench: Benchmark, i: int = i, point: Point = point) -> None:
                records[i] = point_record(point, bench, "partial")
                save_now()

            try:
                with traces_at_point(f"p{i + 1:0{len(str(len(points)))}d}", point.label):
                    bench = run_benchmark(
                        point.spec,
                        runs,
                        warmup,
                        settings,
                        progress=progress,
                        label=f"{label}: ",
                        done=done,
                        on_run=keep,
                    )
            except (RunError, Interrupted) as exc:
                records[i] = point_record(point, exc.result)
                doc["status"] = "interrupted" if isinstance(exc, Interrupted) else "failed"
                saved = save_now()
                exc.result = doc
                if isinstance(exc, Interrupted):
                    exc.saved_to = saved
                raise
            records[i] = point_record(point, bench)
            save_now()
    doc["status"] = "ok"
    # The answer from every point, whether measured now or kept from before
    # (a sweep measured whole before reaches here without having saved).
    doc["points"] = [records[i] for i in sorted(records)]
    doc["answer"] = answer(doc["points"], max_latency_ms)
    save_now()
    return doc, resumed


def _continued(bench: Benchmark, runs: int) -> Benchmark:
    """A point measured in full before, as this sweep keeps it."""
    bench.status, bench.error, bench.failed_run, bench.runs_asked = "ok", None, None, runs
    return bench


def _median(point: dict[str, Any], key: str) -> Any:
    return ((point.get("summary") or {}).get(key) or {}).get("median")


def why_not(point: dict[str, Any], max_latency_ms: float | None = None) -> str | None:
    """Why a measured point cannot be the answer, in words; None if it can.
    The answer rests on what the policies guarantee (model/order.py); what
    the runs showed can only take a point out."""
    if point.get("status") != "ok" or not point.get("reordered_at_outputs"):
        return f"did not finish ({point.get('status')})"
    reordered = point["reordered_at_outputs"]
    if any(r is None for r in reordered) or _median(point, "last_packet_ms") is None:
        return "finished no packet at an output"
    if any(reordered):
        return f"reordered packets (up to {max(reordered)} in a run)"
    missing = [m for m in point.get("missing_at_outputs") or [] if m is not None]
    if any(m["lost"] for m in missing):
        return f"lost packets (up to {max(m['lost'] or 0 for m in missing)} in a run)"
    if any(m["dropped"] for m in missing):
        # A drop fan-out drops on purpose, but the point is then not lossless.
        return f"dropped packets on a drop fan-out (up to {max(m['dropped'] for m in missing)} in a run): not lossless"
    if any(m["lost"] is None for m in missing):
        return "could not count the packets lost on the way to a sink"
    if not point.get("order_guaranteed"):
        why = point.get("order_why") or "its order guarantee was not recorded (measured by an earlier version)"
        return f"{why}; kept order in {len(reordered)} run(s) by chance"
    if max_latency_ms is not None:
        p99 = _median(point, "latency_p99_ms")
        if p99 is None:
            return "no latency measured"
        if p99 > max_latency_ms:
            return f"latency p99 {p99:.3g} ms over the {max_latency_ms:g} ms bound"
    return None


def _per_run(point: dict[str, Any], key: str) -> list[Any]:
    return (point.get("per_run") or {}).get(key) or []


# What a tie is settled by, in turn: the first that differs significantly
# (compare's rule) decides. (key, words, unit)
TIE_BREAKERS = (("cpu_per_packet_us", "CPU per packet", "µs"), ("latency_p99_ms", "latency p99", "ms"))


def settle_tie(
    fastest: dict[str, Any], runner_up: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None:
    """When the fastest point is not significantly faster than the runner-up
    (stats.compare, the rule `scabench compare` applies): None if it is;
    else (preferred, other, tie) with tie as Answer.tie says."""
    by_time = stats.compare(_per_run(fastest, "last_packet_ms"), _per_run(runner_up, "last_packet_ms"))
    if by_time.significant:
        return None
    for key, words, unit in TIE_BREAKERS:
        c = stats.compare(_per_run(fastest, key), _per_run(runner_up, key))
        if c.significant:
            assert c.difference is not None  # a significant difference has a value
            low, high = (fastest, runner_up) if c.difference > 0 else (runner_up, fastest)
            reason = (
                f"{low['label']} is preferred: its {words} is lower ({_median_of(low, key):.4g} against "
                f"{_median_of(high, key):.4g} {unit}, medians; {c.why})"
            )
            return low, high, {"why": by_time.why, "preferred_by": key, "reason": reason}
    reason = (
        "neither CPU per packet nor latency p99 tells them apart either; the lower median last packet is listed first"
    )
    return fastest, runner_up, {"why": by_time.why, "preferred_by": None, "reason": reason}


def _median_of(point: dict[str, Any], key: str) -> float | None:
    values = [v for v in _per_run(point, key) if v is not None]
    return stats.describe(values).median if values else float("nan")


def answer(points: Sequence[dict[str, Any]], max_latency_ms: float | None = None) -> dict[str, Any]:
    """The paper's question for this pipeline: the fastest point (lowest
    median last packet) whose policies guarantee order at every output, that
    kept 0 packets reordered at every output in every run (on a graph,
    every stream at every sink), lost and dropped none on any path and, given a
    bound, had a median latency p99 within it; with the runner-up, and why
    every other point was left out. When the two are not told apart by
    compare's rule, it says they tie and prefers the one that costs less
    CPU per packet, else the one with the lower latency (settle_tie). Plain
    JSON."""
    excluded = [{"label": p["label"], "why": w} for p in points if (w := why_not(p, max_latency_ms))]
    ok = sorted((p for p in points if why_not(p, max_latency_ms) is None), key=lambda p: _median(p, "last_packet_ms"))
    tie = None
    if len(ok) > 1 and (settled := settle_tie(ok[0], ok[1])) is not None:
        ok[0], ok[1], tie = settled

    def pick(p: dict[str, Any] | None) -> dict[str, Any] | None:
        if p is None:
            return None
        return {
            "label": p["label"],
            "settings": p["settings"],
            **{f.key: _median(p, f.key) for f in stats.HEADLINE},
            "cpu_per_packet_us": _median_of(p, "cpu_per_packet_us")
            if any(v is not None for v in _per_run(p, "cpu_per_packet_us"))
            else None,
            "order_why": p.get("order_why"),
            "runs": len(p["reordered_at_outputs"]),
        }

    return {
        "max_latency_ms": max_latency_ms,
        "best": pick(ok[0] if ok else None),
        "runner_up": pick(ok[1] if len(ok) > 1 else None),
        "qualified": len(ok),
        "excluded": excluded,
        "tie": tie,
        "warnings": unpaced_warnings(points),
    }


def unpaced_warnings(points: Sequence[dict[str, Any]]) -> list[str]:
    """A warning when the points' source sends unpaced: their latency p99 is
    then time in queues, not the pipeline's latency."""
    flat_out = [p["label"] for p in points if p.get("unpaced")]
    if not flat_out:
        return []
    where = "at every point" if len(flat_out) == len(points) else f"at {', '.join(flat_out)}"
    return [
        f"The source is unpaced (no period) {where}: packets wait in queues behind the slowest stage, so each "
        "such point's latency p99 measures that queueing, not the pipeline's latency. Give the source a "
        "period (its period_us) to measure latency."
    ]

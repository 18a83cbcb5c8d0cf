"""A sweep (`scabench sweep SPEC --grid KEY=V1,V2 ...`): every point of the
crossed grids measured K times under the guard (measure/repeat.py), and the
answer to the paper's question for this pipeline: the fastest configuration
that kept every packet in order (and met the latency bound, if given).

A grid key is what the run command's overrides take, under one name each:
- `policy.KEY`: a policy key on every connection, as `--policy KEY=VALUE`
  (`policy.call=oneway,twoway`, `policy.worker=0,16,64`);
- `run.KEY`: a run setting, as the run command's flags: `run.packets`,
  `run.cores` (a value's CPUs joined by `+`: `run.cores=0,0+1`),
  `run.scheduler`, `run.pin`, `run.collocated`, `run.link_delay_ms`,
  `run.link_jitter_ms`;
- `COMPONENT.KEY`: a component property, as `--set` (`stage1.work_us=500,1000`).

Every point is built and checked before the first run, so a bad key or
value stops the sweep at once. The document is handed to `save` after every
point; a document from an earlier, interrupted sweep gives back the points
it measured with the same settings, runs and packets (a resume)."""
import itertools
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from scabench.console import Progress
from scabench.errors import RunError, SpecError
from scabench.interrupts import Interrupted
from scabench.measure import stats
from scabench.measure.repeat import Benchmark, estimate_s, run_benchmark
from scabench.model.checks import override_value, parse_cores
from scabench.model.pipeline import producer_packets
from scabench.model.resources import check_memory
from scabench.version import version_info

WHERE = "--grid"
# The run command's flags, as grid keys (the module docstring).
RUN_KEYS = ("packets", "cores", "scheduler", "pin", "collocated", "link_delay_ms", "link_jitter_ms")


@dataclass(frozen=True)
class Axis:
    key: str
    values: tuple


def parse_grid(items):
    """["policy.call=oneway,twoway", ...] -> [Axis]; SpecError on a malformed
    item or a key given twice."""
    pairs = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        values = [v.strip() for v in text.split(",")]
        if not sep or not key or not all(values):
            raise SpecError(WHERE, item, "use KEY=V1,V2,... (e.g. policy.call=oneway,twoway or stage1.work_us=500,1000)")
        if any(k == key for k, _ in pairs):
            raise SpecError(WHERE, key, "given twice; list every value in one --grid")
        pairs.append((key, [override_value(v) for v in values]))
    return grid_axes(pairs)


def grid_axes(pairs, where=WHERE):
    """[(key, [values])] (or a dict: {key: [values]}) -> [Axis], the values
    as a TOML table would hold them; SpecError on a key that is not
    SCOPE.KEY, no value, or a value listed twice."""
    axes = []
    for key, values in (pairs.items() if isinstance(pairs, dict) else pairs):
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
    return axes


def grid_points(axes):
    """The crossed grids: one {key: value} per point, the first axis slowest."""
    return [dict(zip((a.key for a in axes), combo)) for combo in itertools.product(*(a.values for a in axes))]


def label_of(settings):
    return ", ".join(f"{k}={v}" for k, v in settings.items())


def apply(spec, settings):
    """Applies one point's settings to a freshly loaded spec, with the same
    checks as the run command's overrides; returns the spec."""
    policy = {}
    for key, value in settings.items():
        scope, _, name = key.partition(".")
        where = f"{WHERE} {key}"
        if scope == "policy":
            policy[name] = value
        elif scope == "run":
            _apply_run(spec, name, value, where)
        else:
            spec.with_properties(scope, {name: value}, where=WHERE)
    if policy:
        spec.with_policy(policy, where=f"{WHERE} policy")
    return spec


def _apply_run(spec, name, value, where):
    if name == "packets":
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SpecError(WHERE, "run.packets", f"{value!r} is not a whole number of packets, at least 1")
        spec.with_packets(value, where)
    elif name == "cores":
        # On the command line a value's CPUs are joined by "+"; from code, a list.
        spec.with_cores(parse_cores(value if isinstance(value, list) else str(value).replace("+", ","), WHERE,
                                    "run.cores"))
    elif name == "scheduler":
        spec.with_scheduler(str(value), where)
    elif name in ("pin", "collocated"):
        if not isinstance(value, bool):
            raise SpecError(WHERE, f"run.{name}", f"{value!r} is not valid; use true or false")
        if name == "pin":
            spec.with_pin(value)
        elif value:
            spec.collocate()
    elif name in ("link_delay_ms", "link_jitter_ms"):
        spec.with_network({name.replace("link_", ""): value}, where)
    else:
        raise SpecError(WHERE, f"run.{name}", f"not a run key; use one of: {', '.join('run.' + k for k in RUN_KEYS)}")


@dataclass
class Point:
    """One point of the plan: its settings, and its spec, checked."""
    settings: dict
    spec: object

    @property
    def label(self):
        return label_of(self.settings)

    @property
    def packets(self):
        return producer_packets(self.spec)

    def outputs(self):
        """The components whose packets leave the pipeline (no outgoing connection)."""
        feeding = {c.uses[0] for c in self.spec.connections}
        return [c.name for c in self.spec.components if c.name not in feeding]


def plan(load, axes, packets=None):
    """Every point, each on its own spec from `load()` with --packets and the
    point's settings applied and the memory checked: a bad key or value is a
    SpecError before anything runs."""
    points = []
    for settings in grid_points(axes):
        spec = load()
        if packets:
            spec.with_packets(packets)
        apply(spec, settings)
        check_memory(spec)
        points.append(Point(settings, spec))
    return points


def reordered_at_outputs(run, outputs):
    """The most packets out of order at any output of one run (counted
    against the source's order); None where the run has no figures."""
    if not run.stages:
        return None
    at = [s.reordered_from_original for s in run.stages if s.name in outputs] or [run.stages[-1].reordered_from_original]
    return max(at)


def key_of(settings, runs, packets):
    """What makes a measured point the same as a planned one: a resume reuses it."""
    return json.dumps({"settings": settings, "runs": runs, "packets": packets}, sort_keys=True)


@dataclass
class SweepPoint:
    """One measured point of a sweep: its settings and the benchmark of its
    runs (measure/repeat.py). as_dict() is the point as results.json keeps it."""
    label: str
    settings: dict
    runs_asked: int
    packets: int
    status: str                  # the benchmark's: "ok", "failed" or "interrupted"
    outputs: list                # the components whose packets leave the pipeline
    reordered_at_outputs: list   # per run: the most packets out of order at any output
    benchmark: Benchmark

    @classmethod
    def measured(cls, point, bench):
        """The point as measured: a planned Point and its Benchmark."""
        outputs = point.outputs()
        return cls(point.label, point.settings, bench.runs_asked, point.packets, bench.status, outputs,
                   [reordered_at_outputs(r, outputs) for r in bench.runs], bench)

    def summary(self):
        """{headline figure key: stats.Summary} over the point's runs."""
        return self.benchmark.summary()

    def as_dict(self):
        """The point as results.json keeps it (plain JSON, with its summary)."""
        return {"label": self.label, "settings": self.settings, "runs_asked": self.runs_asked,
                "packets": self.packets, "status": self.status, "outputs": self.outputs,
                "reordered_at_outputs": self.reordered_at_outputs,
                "summary": {k: s.as_dict() for k, s in self.summary().items()},
                "benchmark": self.benchmark.as_dict()}

    @classmethod
    def from_dict(cls, doc):
        """The point from what as_dict wrote."""
        return cls(doc["label"], doc["settings"], doc["runs_asked"], doc["packets"], doc["status"], doc["outputs"],
                   doc["reordered_at_outputs"], Benchmark.from_dict(doc["benchmark"]))


def point_record(point, bench):
    """A measured point as the document keeps it (plain JSON)."""
    return SweepPoint.measured(point, bench).as_dict()


def point_row(point, keys, max_latency_ms=None):
    """A point of the document (plain JSON) as a row of a table: its
    settings under their grid keys, its label, runs and status, each headline
    figure's median, min and max over its runs, the most packets reordered,
    and whether it qualifies for the answer."""
    reordered = [r for r in point["reordered_at_outputs"] if r is not None]
    summary = point.get("summary") or {}
    return {**{k: point["settings"].get(k) for k in keys}, "label": point["label"],
            "runs": len(point["reordered_at_outputs"]), "status": point["status"],
            **{f"{f.key}_{s}": (summary.get(f.key) or {}).get(s) for f in stats.HEADLINE for s in ("median", "min", "max")},
            "reordered_max": max(reordered) if reordered else None,
            "qualifies": why_not(point, max_latency_ms) is None}


@dataclass
class Answer:
    """The paper's question answered for a sweep (answer()): the fastest
    point that kept every packet in order (within the latency bound), the
    runner-up, and why each other point was left out. best and runner_up are
    {label, settings, the headline figures' medians, runs}, or None."""
    max_latency_ms: float | None
    best: dict | None
    runner_up: dict | None
    qualified: int
    excluded: list               # [{"label", "why"}]


@dataclass
class SweepResult:
    """A sweep, typed: what results.json holds (as_dict() writes it again).
    `reused`: the points a resume took from an earlier document."""
    spec: str
    grid: dict                   # {key: [values]}
    runs: int
    warmup: int
    packets: int | None
    max_latency_ms: float | None
    status: str                  # "ok", or "failed" / "interrupted" with the points measured so far
    points: list                 # SweepPoint, in grid order
    answer: Answer | None        # None until every point is measured
    scabench: dict | None = None
    reused: int = 0

    @property
    def best(self):
        """The point the answer chose, or None."""
        label = self.answer.best["label"] if self.answer and self.answer.best else None
        return next((p for p in self.points if p.label == label), None)

    def rows(self):
        """A row per point (point_row): what `scabench sweep` writes to sweep.csv.
        pandas.DataFrame(sweep.rows()) loads them."""
        return [point_row(p.as_dict(), list(self.grid), self.max_latency_ms) for p in self.points]

    def run_rows(self):
        """A row per run of every point: the point's settings and label, then
        Benchmark.rows()."""
        return [{**{k: p.settings.get(k) for k in self.grid}, "label": p.label, **row}
                for p in self.points for row in p.benchmark.rows()]

    def as_dict(self):
        """The document `scabench sweep` writes to results.json."""
        return {**({"scabench": self.scabench} if self.scabench else {}), "status": self.status,
                "sweep": {"spec": self.spec, "grid": self.grid, "runs": self.runs, "warmup": self.warmup,
                          "packets": self.packets, "max_latency_ms": self.max_latency_ms},
                "points": [p.as_dict() for p in self.points],
                "answer": asdict(self.answer) if self.answer is not None else None}

    @classmethod
    def from_dict(cls, doc, reused=0):
        """The sweep from its document (results.json, or what run_sweep returned)."""
        s = doc["sweep"]
        return cls(s["spec"], s["grid"], s["runs"], s["warmup"], s.get("packets"), s.get("max_latency_ms"),
                   doc["status"], [SweepPoint.from_dict(p) for p in doc["points"]],
                   Answer(**doc["answer"]) if doc.get("answer") else None, doc.get("scabench"), reused)


def run_sweep(spec_name, axes, points, runs, warmup, settings, save, previous=None, max_latency_ms=None,
              packets=None, say=None, stream=None):
    """Measures every point not already in `previous` (a document this
    function saved before); calls save(doc) after every point. Returns the
    document and how many points were reused. save returns where it wrote
    the document. RunError and Interrupted
    carry the document so far as their result, saved already."""
    was_of = ((previous or {}).get("sweep") or {}).get("spec")
    if was_of is not None and Path(str(was_of)).resolve() != Path(spec_name).resolve():
        # Measuring on would write over another spec's sweep.
        raise SpecError("--out", "results.json", f"holds a sweep of {was_of}, not of {spec_name}; give another --out")
    old = {key_of(p.get("settings"), p.get("runs_asked"), p.get("packets")): p
           for p in (previous or {}).get("points") or [] if isinstance(p, dict) and p.get("status") == "ok"}
    doc = {"scabench": version_info(), "status": "running",
           "sweep": {"spec": spec_name, "grid": {a.key: list(a.values) for a in axes}, "runs": runs,
                     "warmup": warmup, "packets": packets, "max_latency_ms": max_latency_ms},
           "points": [], "answer": None}
    todo = [p for p in points if key_of(p.settings, runs, p.packets) not in old]
    reused = 0
    total = sum(estimate_s(p.spec) * (runs + warmup) for p in todo)
    with Progress(total, "sweep", stream) as progress:
        for i, point in enumerate(points, 1):
            was = old.get(key_of(point.settings, runs, point.packets))
            if was is not None:
                doc["points"].append(was)
                reused += 1
                progress.say(f"point {i}/{len(points)} {point.label}: measured already, skipped")
                continue
            try:
                bench = run_benchmark(point.spec, runs, warmup, settings, progress=progress,
                                      label=f"point {i}/{len(points)} {point.label}: ")
            except (RunError, Interrupted) as exc:
                doc["points"].append(point_record(point, exc.result))
                doc["status"] = "interrupted" if isinstance(exc, Interrupted) else "failed"
                saved = save(doc)
                exc.result = doc
                if isinstance(exc, Interrupted):
                    exc.saved_to = saved
                raise
            doc["points"].append(point_record(point, bench))
            save(doc)
    doc["status"] = "ok"
    doc["answer"] = answer(doc["points"], max_latency_ms)
    save(doc)
    return doc, reused


def _median(point, key):
    return ((point.get("summary") or {}).get(key) or {}).get("median")


def why_not(point, max_latency_ms=None):
    """Why a measured point cannot be the answer, in words; None if it can."""
    if point.get("status") != "ok" or not point.get("reordered_at_outputs"):
        return f"did not finish ({point.get('status')})"
    reordered = point["reordered_at_outputs"]
    if any(r is None for r in reordered) or _median(point, "last_packet_ms") is None:
        return "finished no packet at an output"
    if any(reordered):
        return f"reordered packets (up to {max(reordered)} in a run)"
    if max_latency_ms is not None:
        p99 = _median(point, "latency_p99_ms")
        if p99 is None:
            return "no latency measured"
        if p99 > max_latency_ms:
            return f"latency p99 {p99:.3g} ms over the {max_latency_ms:g} ms bound"
    return None


def answer(points, max_latency_ms=None):
    """The paper's question for this pipeline: the fastest point (lowest
    median last packet) that kept 0 packets reordered at every output in
    every run and, given a bound, had a median latency p99 within it; with
    the runner-up, and why every other point was left out. Plain JSON."""
    excluded = [{"label": p["label"], "why": w} for p in points if (w := why_not(p, max_latency_ms))]
    ok = sorted((p for p in points if why_not(p, max_latency_ms) is None), key=lambda p: _median(p, "last_packet_ms"))

    def pick(p):
        if p is None:
            return None
        return {"label": p["label"], "settings": p["settings"],
                **{f.key: _median(p, f.key) for f in stats.HEADLINE}, "runs": len(p["reordered_at_outputs"])}
    return {"max_latency_ms": max_latency_ms, "best": pick(ok[0] if ok else None),
            "runner_up": pick(ok[1] if len(ok) > 1 else None), "qualified": len(ok), "excluded": excluded}

"""Benchmarking one spec (`scabench run SPEC --runs K`): W warm-up runs, then
K runs under the studies' measurement guard (measure/guard.py: a quiet
machine first, a disturbed or stalled run redone, the cleanest kept),
summarised with measure/stats.py and warned about in words.

The guarded run itself is shared with the campaigns (measure/campaign.py),
so a user's spec is measured exactly as a study's configurations are."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Self, TextIO

from scabench.console import Progress
from scabench.errors import RunError
from scabench.interrupts import Interrupted
from scabench.measure import stats
from scabench.measure.guard import Guard, Guarded, GuardSettings
from scabench.model.pipeline import floor_of
from scabench.run.results import RunResult
from scabench.run.runner import run_spec
from scabench.units import figure
from scabench.version import version_info

if TYPE_CHECKING:
    from scabench.model.spec import Spec

# Start-up and teardown of a run's processes, beyond the pipeline itself (s);
# only used for the estimate of the time left.
RUN_SETUP_S = 1.5
# The most runs (and warm-up runs) one command or library call measures per
# configuration: far more than any statistics here want (a 95 % interval
# narrows as 1/sqrt(n): 10 000 runs is already 100 times narrower than one),
# and a count beyond it is a typing mistake, not a plan (10^20 runs would
# show 3.4e15 hours left).
MAX_RUNS = 10_000


def estimate_s(spec: "Spec") -> float:
    """About how long one run of the spec takes (s), for the time left."""
    return floor_of(spec) / 1000.0 * 1.05 + RUN_SETUP_S


def guard_settings(quiet_wait_s: float = GuardSettings.quiet_wait_s) -> GuardSettings:
    """The studies' guard (the campaigns' defaults); a failed run is redone
    too: a start-up can lose a race with a busy machine."""
    return GuardSettings(quiet_wait_s=quiet_wait_s, retry_errors=(RunError,))


def flaw_of(result: RunResult) -> str | None:
    """A run that stalled (run/stalls.py), that was not clean (ports refused
    what a peer sent, docs/trust-model.md; packets sent never arrived) is
    redone like a disturbed one."""
    if result.clean is False:
        return result.why_not_clean()
    stalls = result.stalls or []
    if not stalls:
        return None
    worst = max(stalls, key=lambda e: e["for_ms"])
    return f"{worst['component']} stalled {worst['for_ms']:.0f} ms"


def guarded_run(run_once: Callable[[], RunResult], guard: Guard, label: str) -> tuple[RunResult, Guarded, list[str]]:
    """One run under the guard. Returns the kept RunResult, which records
    how it was kept (attempt, the foreign load of the attempts thrown away,
    whether the machine was quiet), the guard's Guarded, and the flaws seen
    in every attempt (kept or not). RunError if every attempt failed."""
    seen = []

    def flaws(result: RunResult) -> str | None:
        flaw = flaw_of(result)
        if flaw:
            seen.append(flaw)
        return flaw

    kept = guard.measure(run_once, foreign_of=lambda r: r.foreign_cpu_pct or 0.0, label=label, flaw_of=flaws)
    result = kept.value
    result.attempt = kept.attempts
    result.redone_for_foreign_load_pct = kept.discarded_foreign_pct
    result.machine_was_quiet = kept.machine_was_quiet
    return result, kept, seen


# The order of the figures in a progress line: the latency p99 beside the
# ratio, since deep queues buy the one with the other.
RUN_LINE = ("last_packet_ms", "overhead_ratio", "latency_p99_ms", "packets_reordered")


def run_line(result: RunResult) -> str:
    """A run's headline figures on one line, for progress, each scaled."""
    by_key = {f.key: f for f in stats.HEADLINE}
    return ", ".join(f"{f.label} {figure(f.of(result), f.unit)}" for f in (by_key[k] for k in RUN_LINE))


@dataclass
class Benchmark:
    """K runs of one spec and how they were kept: the JSON of `scabench run
    --runs` (as_dict; from_dict reads it back for `scabench compare`)."""

    status: str  # "ok", "failed" or "interrupted"
    spec: dict  # the resolved spec (Spec.describe())
    runs_asked: int
    warmup: int
    guard: dict  # the GuardSettings used, as numbers
    runs: list = field(default_factory=list)  # RunResult, as kept
    redone_for: list = field(default_factory=list)  # {"run": i, "flaw": text}: attempts thrown away for a flaw
    error: str | None = None  # why it stopped early (failed, interrupted)
    failed_run: RunResult | None = None  # what the run that failed (or was cut) had measured
    scabench: dict | None = field(default_factory=version_info)  # what measured it (None: not recorded)

    def figures(self) -> tuple[stats.Figure, ...]:
        """The figures the runs are summarised by (stats.figures_of): the
        headline figures, then each process's CPU per packet."""
        return stats.figures_of(self.runs)

    def summary(self) -> dict[str, stats.Summary]:
        """{figure key: stats.Summary} over the kept runs, for every figure of
        figures()."""
        return stats.summarise(self.runs, self.figures())

    def warnings(self) -> list[str]:
        """What makes the figures doubtful, in words (warnings_of)."""
        return warnings_of(self.runs, self.guard, self.redone_for, self.runs_asked)

    def rows(self) -> list[dict[str, Any]]:
        """A row per kept run: its number, status and attempts, its figures
        (figures(): the headline ones, then each process's CPU per packet)
        and the foreign load, CPU and window it was measured over.
        pandas.DataFrame(bench.rows()) loads them."""
        figures = self.figures()
        return [
            {
                "run": i,
                "status": r.status,
                "attempt": r.attempt or 1,
                **{f.key: f.of(r) for f in figures},
                "foreign_cpu_pct": r.foreign_cpu_pct,
                "window_s": r.window_s,
                "run_cpu_s": r.cpu.run_cpu_s if r.cpu is not None else None,
                "stalled": bool(r.stalls),
            }
            for i, r in enumerate(self.runs, 1)
        ]

    def stage_rows(self) -> list[dict[str, Any]]:
        """A row per component of every kept run: the run's number, then
        RunResult.rows()."""
        return [{"run": i, **row} for i, r in enumerate(self.runs, 1) for row in r.rows()]

    def summary_rows(self) -> list[dict[str, Any]]:
        """A row per figure (figures()): its summary over the kept runs (what
        `scabench run --runs K --csv` writes)."""
        rows = []
        summary = self.summary()
        for f in self.figures():
            s = summary[f.key]
            low, high = s.ci95 if s.ci95 else (None, None)
            rows.append(
                {
                    "figure": f.key,
                    "unit": f.unit,
                    "n": s.n,
                    "median": s.median,
                    "mean": s.mean,
                    "stdev": s.stdev,
                    "min": s.min,
                    "max": s.max,
                    "ci95_low": low,
                    "ci95_high": high,
                    "ci95_why": s.ci95_why,
                    "cv": s.cv,
                }
            )
        return rows

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `scabench run --runs K`: every run, the summary and the warnings."""
        out = {
            **({"scabench": self.scabench} if self.scabench else {}),
            "status": self.status,
            "spec": self.spec,
            "benchmark": {"runs": self.runs_asked, "warmup": self.warmup, "guard": self.guard},
            "summary": {k: s.as_dict() for k, s in self.summary().items()},
            "warnings": self.warnings(),
            "redone_for": self.redone_for,
            "runs": [r.as_dict() for r in self.runs],
        }
        if self.error is not None:
            out["error"] = self.error
        if self.failed_run is not None:
            out["failed_run"] = self.failed_run.as_dict()
        return out

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        """The document as_dict wrote (summary and warnings are derived, so
        they are computed again). ValueError if it is not one."""
        known = {
            "scabench",
            "status",
            "spec",
            "benchmark",
            "summary",
            "warnings",
            "redone_for",
            "runs",
            "error",
            "failed_run",
        }
        if not isinstance(doc, dict) or "benchmark" not in doc or set(doc) - known:
            raise ValueError("not a benchmark document")
        b = doc["benchmark"]
        failed = doc.get("failed_run")
        return cls(
            doc["status"],
            doc["spec"],
            b["runs"],
            b["warmup"],
            b["guard"],
            [RunResult.from_dict(r) for r in doc["runs"]],
            doc.get("redone_for", []),
            doc.get("error"),
            RunResult.from_dict(failed) if failed else None,
            doc.get("scabench"),
        )


def guard_dict(settings: GuardSettings) -> dict[str, Any]:
    return {
        f.name: getattr(settings, f.name)
        for f in fields(settings)
        if isinstance(getattr(settings, f.name), (int, float)) and getattr(settings, f.name) is not None
    }


def warnings_of(
    runs: list[RunResult],
    guard: dict[str, Any],
    redone_for: Sequence[dict[str, Any]] = (),
    runs_asked: int | None = None,
) -> list[str]:
    """What makes the figures of these runs doubtful, in words: a large
    spread, runs that other processes disturbed or that were redone for it,
    a machine that was never quiet, stalls, refusals. `guard`: the settings
    the runs were kept under (guard_dict), or {} for a single run without
    the guard (whose table flags its own stalls and refusals)."""
    out = []
    n = len(runs)
    limit = guard.get("redo_above_pct", GuardSettings.redo_above_pct)
    if runs_asked is not None and n < runs_asked:
        out.append(f"only {n} of the {runs_asked} runs asked for were kept")
    spread = [
        f"{f.label} {100 * s.cv:.1f} %"
        for f, s in zip(stats.HEADLINE, stats.summarise(runs).values())
        if s.cv is not None and s.cv > stats.SPREAD_WARN_CV
    ]
    if spread:
        out.append(
            f"the runs spread by more than {100 * stats.SPREAD_WARN_CV:.0f} % (σ/mean): {', '.join(spread)}; "
            "quote these with their spread (more runs or a quieter machine narrow it)"
        )
    disturbed = [p for p in (r.foreign_cpu_pct for r in runs) if p is not None and p > limit]
    if disturbed:
        which = "the run" if n == 1 else f"{len(disturbed)} of {n} runs"
        out.append(
            f"other processes used up to {max(disturbed):.1f} % of the run's cores during {which} (more "
            f"than {limit:g} %): the times are not the pipeline's alone"
            + ("" if guard else "; --runs K waits for a quiet machine and redoes disturbed runs")
        )
    redone = [r for r in runs if (r.attempt or 1) > 1]
    if redone:
        loads = sorted(p for r in redone for p in (r.redone_for_foreign_load_pct or []))
        span = f"{loads[0]:g} %" if loads[0] == loads[-1] else f"{loads[0]:g}–{loads[-1]:g} %"
        out.append(
            f"{len(redone)} of {n} runs were redone: {sum((r.attempt or 1) - 1 for r in redone)} attempt(s) thrown "
            f"away, during which others used {span} of the cores"
        )
    not_quiet = [r for r in runs if r.machine_was_quiet is False]
    if not_quiet:
        out.append(
            f"the machine was still busy (others above {guard.get('quiet_below_pct', 0):g} % of the cores) "
            f"after waiting {guard.get('quiet_wait_s', 0):g} s, before {len(not_quiet)} run(s)"
        )
    kept = list(enumerate(runs, 1)) if guard else []  # a single run's table flags these itself
    stalled = [(i, s) for i, r in kept for s in r.stalls or []]
    if stalled:
        i, worst = max(stalled, key=lambda e: e[1]["for_ms"])
        which = "the run" if n == 1 else f"{len({i for i, _ in stalled})} of {n} runs"
        out.append(
            f"{which} stalled {len(stalled)} time(s) (a component held work and finished none for a while; "
            f"the longest: {worst['component']}, {worst['for_ms']:.0f} ms, in run {i}), on every attempt: "
            "their times are not the pipeline's"
        )
    refused = [(i, r.refusals) for i, r in kept if r.refusals]
    if refused:
        out.append(
            f"ports refused packets or signals from peers in {len(refused)} of {n} runs (up to "
            f"{max(x or 0 for _, x in refused)} in one; docs/trust-model.md)"
        )
    cut = [(i, r) for i, r in kept if r.missing]
    if cut:
        i, first = cut[0]
        out.append(
            f"packets sent never arrived in {len(cut)} of {n} runs (run {i}: {first.why_not_clean()}): "
            "their figures cover only what arrived"
        )
    below = [r for r in runs if r.overhead_ratio is not None and r.overhead_ratio < 1]
    if below:
        # A ratio under the least time the hardware allows is never shown bare:
        # each run says which of the floor's assumptions it broke.
        why = list(
            dict.fromkeys(
                w
                for r in below
                for w in (r.below_floor_why or ["the result does not say why (written before runs did)"])
            )
        )
        which = "the run" if n == 1 else f"{len(below)} of {n} runs"
        out.append(
            f"the ratio is below 1 in {which} (lowest {min(r.overhead_ratio or 0.0 for r in below):.3f}), so the "
            f"floor's model does not hold for it: {'; '.join(why)}"
        )
    if redone_for:
        shown = "; ".join(f"run {f['run']}: {f['flaw']}" for f in redone_for[:3])
        more = f"; and {len(redone_for) - 3} more" if len(redone_for) > 3 else ""
        out.append(f"{len(redone_for)} attempt(s) thrown away for what was seen in them ({shown}{more})")
    return out


def run_benchmark(
    spec: "Spec",
    runs: int,
    warmup: int = 0,
    settings: GuardSettings | None = None,
    stream: TextIO | None = None,
    run_once: Callable[[], RunResult] | None = None,
    progress: Any = None,
    label: str = "",
    done: Any = None,
    on_run: Callable[..., Any] | None = None,
) -> "Benchmark":
    """W warm-up runs (not kept), then `runs` guarded runs of `spec`; returns
    the Benchmark. A run that fails on every attempt raises RunError, and a
    termination signal Interrupted, each carrying the Benchmark so far as
    its result (the command writes it). `progress`: a console.Progress to
    advance instead of one of its own (a sweep's, over all its points), and
    `label` to put before each of its lines.

    `done`: a Benchmark of the same spec cut short earlier (a sweep's point
    being resumed): its kept runs count towards `runs`, and only the rest
    are measured (after the warm-up, if any are left). `on_run(bench)` is
    called after every kept run, so that a caller can save each run as soon
    as it is measured."""
    settings = settings or guard_settings()
    run_once = run_once or (lambda: run_spec(spec))
    bench = Benchmark("ok", spec.describe(), runs, warmup, guard_dict(settings))
    if done is not None:
        bench.runs, bench.redone_for = list(done.runs[:runs]), [r for r in done.redone_for if r["run"] <= runs]
    left = runs - len(bench.runs)
    each = estimate_s(spec)
    if progress is None:
        with Progress(each * ((warmup + left) if left else 0), "runs", stream) as progress:
            return _measure(bench, run_once, settings, spec.cores, each, progress, label, on_run)
    return _measure(bench, run_once, settings, spec.cores, each, progress, label, on_run)


def _measure(
    bench: "Benchmark",
    run_once: Callable[[], RunResult],
    settings: GuardSettings,
    cores: Sequence[int],
    each: float,
    progress: Any,
    label: str,
    on_run: Callable[..., Any] | None,
) -> "Benchmark":
    runs, warmup, first = bench.runs_asked, bench.warmup, len(bench.runs)
    guard = Guard(settings, cores=cores, log=progress.say)
    try:
        for i in range(warmup if first < runs else 0):
            progress.advance(each, f"{label}warm-up {i + 1}/{warmup}: {run_line(run_once())}")
        for i in range(first, runs):
            which = f"{label}run {i + 1}/{runs}"
            result, kept, seen = guarded_run(run_once, guard, which)
            if kept.flaw in seen:
                seen.remove(kept.flaw)  # the kept run's own flaw is in its result
            bench.redone_for += [{"run": i + 1, "flaw": f} for f in seen]
            bench.runs.append(result)
            note = f" (attempt {kept.attempts})" if kept.attempts > 1 else ""
            progress.advance(each, f"{which}: {run_line(result)}{note}")
            if on_run is not None:
                on_run(bench)
    except (RunError, Interrupted) as exc:
        bench.status = "interrupted" if isinstance(exc, Interrupted) else "failed"
        bench.error = str(exc) if isinstance(exc, RunError) else f"interrupted by {exc.name}"
        bench.failed_run = exc.result
        exc.result = bench
        raise
    return bench

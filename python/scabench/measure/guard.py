"""The measurement guard every study uses: wait for a quiet machine, measure,
redo a measurement that other processes disturbed (or that stalled), keep
the cleanest.

A benchmark on a shared machine cannot stop others from running; it can
start when they are quiet, know afterwards how much CPU they took while it
measured (the foreign load, scabench.measure.load), and measure again when
that was too much. A measurement that stays disturbed after the last redo is
kept, the cleanest of its attempts, and says so: the study reports it rather
than waiting forever.

What a study chooses (GuardSettings): how quiet is quiet, how long to wait
for it, how much foreign load spoils a measurement, how many redos one
measurement may take, and how many redos the whole study may take (a busy
machine must not stretch a 20-minute study to hours)."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scabench.errors import RunError
from scabench.interrupts import Interrupted
from scabench.measure.load import ForeignLoadMeter, wait_for_quiet


@dataclass(frozen=True)
class GuardSettings:
    quiet_below_pct: float = 3.0  # start once others use less than this share of the watched cores...
    quiet_wait_s: float = 120.0  # ...or once this long has passed (0: do not wait)
    quiet_interval_s: float = 0.5  # the interval over which "quiet" is judged
    redo_above_pct: float = 3.0  # redo a measurement during which others used more than this
    max_redos: int = 3  # redos of one measurement, at most
    redo_budget: float | None = None  # redos of the whole study, at most this share of its measurements
    retry_errors: tuple = ()  # exception types that a redo may cure (a run that failed)


@dataclass
class Guarded:
    """A kept measurement and how it was obtained."""

    value: Any
    foreign_pct: float
    attempts: int = 1  # measurements made for this one (1: no redo)
    discarded_foreign_pct: list = field(default_factory=list)  # foreign load of the attempts thrown away
    machine_was_quiet: bool = True  # the last wait for quiet ended quiet (True when not waiting)
    disturbed: bool = False  # kept although others took more than allowed
    flaw: str | None = None  # kept although flaw_of found this in it (every attempt had one)

    def run_fields(self) -> dict[str, Any]:
        """What a study keeps, beside its figures, of each run it keeps: how
        the guard obtained it (load_summary reads these back)."""
        return {
            "foreign_pct": self.foreign_pct,
            "attempts": self.attempts,
            "redone_for_foreign_load_pct": self.discarded_foreign_pct,
            "machine_was_quiet": self.machine_was_quiet,
            "disturbed": self.disturbed,
            "flaw": self.flaw,
        }


class Guard:
    """One guard per study: it counts measurements and redos over the study."""

    def __init__(
        self,
        settings: GuardSettings = GuardSettings(),
        cores: Sequence[int] | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.cores = cores  # the cores watched (None: all)
        self.log = log or (lambda message: None)
        self.measurements = 0
        self.redos = 0

    def _budget_left(self) -> bool:
        budget = self.settings.redo_budget
        return budget is None or self.redos < budget * max(self.measurements, 20)

    def measure(
        self,
        run_once: Callable[[], Any],
        foreign_of: Callable[[Any], float] | None = None,
        label: str = "",
        flaw_of: Callable[[Any], str | None] | None = None,
    ) -> "Guarded":
        """Runs run_once() until others leave it undisturbed, at most
        1 + max_redos times; returns the cleanest as a Guarded.

        foreign_of(value) gives the foreign load a measurement saw (a run
        measures it over its own window); without it the guard meters the
        watched cores around run_once. flaw_of(value), if given, names what
        else spoils a measurement (a run that stalled), or gives None: a
        flawed measurement is redone like a disturbed one, and the cleanest
        is an unflawed one first, the least disturbed second. An exception
        in retry_errors is retried like a disturbed measurement, and raised
        if no attempt succeeded."""
        s = self.settings
        best, discarded, quiet = None, [], True
        for attempt in range(1, s.max_redos + 2):
            if s.quiet_wait_s > 0:
                quiet, _ = wait_for_quiet(s.quiet_below_pct, s.quiet_interval_s, s.quiet_wait_s, self.cores)
            meter = None if foreign_of else ForeignLoadMeter(self.cores).start()
            self.measurements += 1
            try:
                value = run_once()
            except s.retry_errors as exc:
                if attempt > s.max_redos and best is None:
                    raise
                self.log(f"{label}: failed ({exc}); trying again")
                continue
            if foreign_of is not None:
                pct = float(foreign_of(value))
            else:
                assert meter is not None  # started whenever foreign_of is not given
                pct = float(meter.foreign_pct())
            flaw = flaw_of(value) if flaw_of else None
            if best is None or (flaw is not None, pct) < (best.flaw is not None, best.foreign_pct):
                if best is not None:
                    discarded.append(round(best.foreign_pct, 1))
                best = Guarded(value, pct, machine_was_quiet=quiet, flaw=flaw)
            else:
                discarded.append(round(pct, 1))
            if (pct <= s.redo_above_pct and flaw is None) or attempt > s.max_redos:
                break
            why = flaw or f"others used {pct:.1f} % of the cores"
            if not self._budget_left():
                self.log(f"{label}: {why}; redo budget spent, kept")
                break
            self.redos += 1
            self.log(f"{label}: {why}; redoing")
        assert best is not None  # the last attempt raised if no attempt succeeded
        best.attempts, best.discarded_foreign_pct = attempt, discarded
        best.disturbed = best.foreign_pct > s.redo_above_pct
        return best


def measure_or_record_failure(
    guard: "Guard",
    run_once: Callable[[], Any],
    *,
    failures: list[dict[str, Any]],
    round_no: int,
    doc: dict[str, Any],
    save: Callable[..., Any],
    progress: Any,
    each_s: float,
    label: str,
    foreign_of: Callable[[Any], float] | None = None,
    flaw_of: Callable[[Any], str | None] | None = None,
) -> "Guarded | None":
    """One run of a study under the guard, for a study that keeps every run
    in a document saved after each: the kept run, or None once a failed run
    (RunError) is recorded in `failures`, said on `progress` and saved. An
    interruption is recorded too, and raised on with the document and where
    save("interrupted") put it."""
    try:
        return guard.measure(run_once, foreign_of=foreign_of, label=label, flaw_of=flaw_of)
    except RunError as exc:
        failures.append({"round": round_no, "error": str(exc)})
        progress.advance(each_s, f"{label}: FAILED: {exc}")
        save()
        return None
    except Interrupted as exc:
        failures.append({"round": round_no, "error": f"interrupted by {exc.name}"})
        exc.result = doc
        exc.saved_to = save("interrupted")
        raise

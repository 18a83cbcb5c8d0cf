"""The measurement guard (scabench.measure.guard): redo what others
disturbed, keep the cleanest, count redos against the study's budget."""

import pytest

from scabench.errors import RunError
from scabench.measure.guard import Guard, GuardSettings

NO_WAIT = dict(quiet_wait_s=0, redo_above_pct=3.0)


def measurements(*foreign):
    """run_once giving values 0, 1, 2, ... whose foreign load is foreign[i]."""
    made = []

    def run_once():
        made.append(len(made))
        return made[-1]

    return run_once, (lambda i: foreign[i]), made


def test_an_undisturbed_measurement_is_taken_once():
    run_once, foreign_of, made = measurements(1.0)
    kept = Guard(GuardSettings(**NO_WAIT, max_redos=3)).measure(run_once, foreign_of)
    assert (kept.value, kept.attempts, kept.discarded_foreign_pct, kept.disturbed) == (0, 1, [], False)


def test_a_disturbed_measurement_is_redone_and_the_clean_one_kept():
    run_once, foreign_of, made = measurements(40.0, 2.0)
    kept = Guard(GuardSettings(**NO_WAIT, max_redos=3)).measure(run_once, foreign_of)
    assert (kept.value, kept.foreign_pct, kept.attempts, kept.discarded_foreign_pct) == (1, 2.0, 2, [40.0])
    assert not kept.disturbed


def test_after_the_last_redo_the_cleanest_is_kept_and_marked():
    run_once, foreign_of, made = measurements(40.0, 9.0, 30.0)
    kept = Guard(GuardSettings(**NO_WAIT, max_redos=2)).measure(run_once, foreign_of)
    assert made == [0, 1, 2]
    assert (kept.value, kept.foreign_pct, kept.attempts) == (1, 9.0, 3)
    assert sorted(kept.discarded_foreign_pct) == [30.0, 40.0]
    assert kept.disturbed


def test_the_study_budget_caps_redos():
    guard = Guard(GuardSettings(**NO_WAIT, max_redos=5, redo_budget=0.1))  # 2 redos over the first 20
    kept = [guard.measure(*measurements(50.0, 50.0, 50.0, 50.0, 50.0, 50.0)[:2]) for _ in range(3)]
    assert [k.attempts for k in kept] == [3, 1, 1]
    assert guard.redos == 2


def test_a_failure_the_settings_retry_is_redone_then_raised():
    calls = []

    def failing():
        calls.append(1)
        raise RunError("stage1 died", "stage1")

    guard = Guard(GuardSettings(**NO_WAIT, max_redos=2, retry_errors=(RunError,)))
    with pytest.raises(RunError, match="stage1 died"):
        guard.measure(failing, lambda v: 0.0)
    assert len(calls) == 3


def test_a_failure_after_a_kept_measurement_keeps_it():
    outcomes = iter([("ok", 50.0), RunError("late failure")])

    def run_once():
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    guard = Guard(GuardSettings(**NO_WAIT, max_redos=1, retry_errors=(RunError,)))
    kept = guard.measure(run_once, lambda v: v[1])
    assert kept.value == ("ok", 50.0) and kept.disturbed


def test_other_errors_are_not_retried():
    def broken():
        raise ValueError("bug")

    with pytest.raises(ValueError):
        Guard(GuardSettings(**NO_WAIT, retry_errors=(RunError,))).measure(broken, lambda v: 0.0)


def test_without_a_reading_of_its_own_the_guard_meters_the_cores():
    kept = Guard(GuardSettings(quiet_wait_s=0, redo_above_pct=100.0)).measure(lambda: sum(range(10000)))
    assert kept.value == sum(range(10000))
    assert 0.0 <= kept.foreign_pct <= 100.0

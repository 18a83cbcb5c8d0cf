"""How loaded the machine was during a guarded study (measure/guard.py): the
summary every study's report gives of it, from the runs it kept, and the
report section that shows it. One place, so that every study says it the
same way and a study's old files read the same as its new ones."""

from collections.abc import Sequence
from typing import Any

from scabench.measure.campaign import spread
from scabench.report.markdown import md_table


def load_summary(runs: Sequence[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The foreign load during the kept runs (each holding
    Guarded.run_fields()), how many were redone for it, and how many started
    without the machine turning quiet first. A field that runs saved before
    it existed do not hold reads as its default."""
    return {
        "runs": len(runs),
        "foreign_pct": spread([r["foreign_pct"] for r in runs]).as_dict(),
        "redone": sum(1 for r in runs if r.get("attempts", 1) > 1),
        "redos": sum(r.get("attempts", 1) - 1 for r in runs),
        "disturbed": sum(1 for r in runs if r["disturbed"]),
        "flawed": sum(1 for r in runs if r.get("flaw")),
        "started_busy": sum(1 for r in runs if not r.get("machine_was_quiet", True)),
        "loadavg_start": meta.get("loadavg_start"),
        "loadavg_end": meta.get("loadavg_end"),
    }


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _loadavg(values: Sequence[float] | None) -> str:
    return "–" if not values else " ".join(f"{x:.2f}" for x in values)


def load_section(load: dict[str, Any], guard: dict[str, Any] | None) -> list[str]:
    """The report's "How loaded the machine was": what the guard did (from
    its settings as the study saved them; a study saved without them shows
    only the table) and the load_summary() as a table."""
    text = ["## How loaded the machine was", ""]
    if guard:
        budget = guard.get("redo_budget")
        text += [
            f"Each run waited for the run's cores to be quiet (others below {guard['quiet_below_pct']:g} % for "
            f"{guard['quiet_interval_s']:g} s, at most {guard['quiet_wait_s']:g} s) and was redone when others "
            f"took more than {guard['redo_above_pct']:g} % of the cores while it ran (at most "
            f"{guard['max_redos']} redos a run"
            + (f", redos of the whole study at most {budget:.0%} of its runs" if budget is not None else "")
            + "); the cleanest attempt is kept.",
            "",
        ]
    foreign = load["foreign_pct"]
    text += [
        md_table(
            [
                "kept runs",
                "foreign load % (median, min–max)",
                "runs redone",
                "redos",
                "kept although disturbed",
                "kept although stalled",
                "started on a busy machine",
                "load average at start",
                "at end",
            ],
            [
                [
                    load["runs"],
                    f"{_pct(foreign['median'])} ({_pct(foreign['min'])}–{_pct(foreign['max'])})",
                    load["redone"],
                    load["redos"],
                    load["disturbed"],
                    load["flawed"],
                    load["started_busy"],
                    _loadavg(load["loadavg_start"]),
                    _loadavg(load["loadavg_end"]),
                ]
            ],
        ),
        "",
    ]
    return text

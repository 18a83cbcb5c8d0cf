"""A campaign's configurations as CSV rows (`scabench paper --csv`,
`scabench link-delay --csv`): one row per configuration, each figure with
its spread over the runs (median, min, max) and the run count, raw in the
unit its column names (`_ms`, `_pct`, `_s`). The campaign's studies add
their own columns in front (a link delay, a model)."""

from collections.abc import Callable
from typing import Any

from scabench.measure.campaign import CampaignEntry, Spread, spread
from scabench.report.results_file import CsvTable


def _latency_ms(entry: CampaignEntry, q: str) -> Spread:
    """A quantile of each run's end-to-end latency (ms), over the runs."""
    return spread(
        [getattr(r.end_to_end_latency_us, q) / 1000.0 if r.end_to_end_latency_us else None for r in entry.runs]
    )


# The figures every row gives, each as its Spread over an entry's runs: the
# last stage's, and the whole run's.
FIGURES = {
    "last_packet_ms": lambda e: e.summary.stages[-1].last_packet_ms,
    "overhead_ratio": lambda e: e.summary.overhead_ratio,
    "latency_p50_ms": lambda e: _latency_ms(e, "p50"),
    "latency_p99_ms": lambda e: _latency_ms(e, "p99"),
    "reordered_from_previous": lambda e: e.summary.stages[-1].reordered_from_previous,
    "reordered_from_original": lambda e: e.summary.stages[-1].reordered_from_original,
    "foreign_cpu_pct": lambda e: e.summary.foreign_cpu_pct,
    "cpu_s": lambda e: e.summary.cpu_s,
}
STATS = ("median", "min", "max")


def _count(figure: str, value: Any) -> Any:
    """A count's median is a whole number of packets but for an even run
    count's midpoint: written as one where it is."""
    if figure.startswith("reordered") and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def status_of(entry: CampaignEntry) -> str:
    if entry.interrupted:
        return "interrupted"
    return "ok" if entry.summary else "failed"


def campaign_csv(
    entries: dict[str, CampaignEntry],
    first: Callable[[CampaignEntry], dict[str, Any]] | None = None,
    last: Callable[[CampaignEntry], dict[str, Any]] | None = None,
) -> CsvTable:
    """(header, rows) for write_csv: a row per configuration of `entries`
    ({name: CampaignEntry}, summarised). `first(entry)` and `last(entry)`
    give a study's own columns, before and after the common ones, as dicts
    with the same keys for every entry."""
    first, last = first or (lambda e: {}), last or (lambda e: {})
    some = next(iter(entries.values()), None)
    header = (
        list(first(some) if some else {})
        + ["config", "id", "group", "setup", "cores", "title", "same_as", "status", "runs", "failures", "floor_ms"]
        + [f"{f}_{s}" for f in FIGURES for s in STATS]
        + ["output_reordered_max"]
        + list(last(some) if some else {})
    )
    rows = []
    for name, e in entries.items():
        c, s = e.config, e.summary
        row = list(first(e).values()) + [
            name,
            c.id,
            c.group,
            c.setup,
            " ".join(map(str, c.cores)),
            c.title,
            e.same_as,
            status_of(e),
            len(e.runs),
            len(e.failures),
            s.floor_ms if s else None,
        ]
        figures = {f: of(e) for f, of in FIGURES.items()} if s else {}
        row += [_count(f, getattr(figures[f], st)) if s else None for f in FIGURES for st in STATS]
        # Any stage's outputs out of order, in the worst run: 0 for an ordered strategy.
        row.append(max((st.output_reordered_from_previous.max or 0 for st in s.stages), default=0) if s else None)
        rows.append(row + list(last(e).values()))
    return header, rows

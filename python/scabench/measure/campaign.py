"""Campaigns: many configurations, each run K times, carefully.

A campaign file (experiments/paper/campaign.toml) lists configurations: a
spec, changes to it (policy keys, collocation, pinning) and the set-ups (core
lists) to run it on. For every run the campaign
  1. waits until other processes leave the run's cores quiet,
  2. runs the spec over real processes (runner.run_spec),
  3. redoes the run if others took more CPU than allowed meanwhile,
and it shows progress with an estimate of the time left. Results are
summarised as the median with the spread (min and max) over the runs.

A campaign's entries are CampaignEntry objects: the configuration, its runs
(RunResults), its failures and, once summarised, its ConfigSummary; written
to results.json as their as_dict() (entries_from_json reads them back).
"""

import json
import math
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

import numpy as np

from scabench import units
from scabench.console import BAD, Progress
from scabench.errors import RunError, SpecError
from scabench.interrupts import Interrupted
from scabench.measure import repeat
from scabench.measure.guard import Guard, GuardSettings
from scabench.model.checks import parse_cores
from scabench.model.load import load_spec
from scabench.model.overrides import Overrides, apply_overrides
from scabench.model.spec import Spec
from scabench.model.spec_toml import read_toml
from scabench.run.results import RunResult
from scabench.run.runner import run_spec
from scabench.typed import Typed, figure, from_dict, list_of, optional, state

if TYPE_CHECKING:
    from scabench.model.spec import Spec

MEASURE_KEYS = ("runs", "packets", "quick_packets", "quiet_below_pct", "quiet_wait_s", "redo_above_pct", "max_redos")
CONFIG_KEYS = (
    "id",
    "group",
    "title",
    "spec",
    "policy",
    "component",
    "collocated",
    "pin",
    "scheduler",
    "network",
    "setups",
)


@dataclass
class Measure:
    runs: int = 3
    packets: int = 1000
    quick_packets: int = 100
    quiet_below_pct: float = 3.0
    quiet_wait_s: float = 120.0
    redo_above_pct: float = 3.0
    max_redos: int = 3

    def guard_settings(self) -> GuardSettings:
        # A failed run is redone too: a start-up can lose a race with a busy machine.
        return GuardSettings(
            quiet_below_pct=self.quiet_below_pct,
            quiet_wait_s=self.quiet_wait_s,
            redo_above_pct=self.redo_above_pct,
            max_redos=self.max_redos,
            retry_errors=(RunError,),
        )


@dataclass
class Config(Typed):
    """One configuration on one set-up: a spec, its changes, the cores."""

    id: str
    group: str
    spec_file: Path
    setup: str
    setup_label: str
    cores: list
    title: str = ""
    policy: dict = field(default_factory=dict)
    component: dict = field(default_factory=dict)  # {name: {property: value}}
    collocated: bool = False
    pin: bool = False
    network: dict | None = None  # {delay_ms, jitter_ms}: network hosts behind emulated links
    scheduler: str | None = None  # None: the spec's

    @cached_property
    def key(self) -> str:
        """Configurations that resolve to the same spec are the same run.
        (Computed once: it loads and resolves the spec.)"""
        return json.dumps(self.load(1).describe(), sort_keys=True)

    @property
    def name(self) -> str:
        return f"{self.id}@{self.setup}"

    # Its object in results.json (an entry's "config"): these keys, "spec"
    # being the spec file's path as text and "name" id@setup.
    JSON_KEYS = (
        "name",
        "id",
        "group",
        "title",
        "spec",
        "setup",
        "setup_label",
        "cores",
        "policy",
        "component",
        "collocated",
        "pin",
        "scheduler",
        "network",
    )

    def as_dict(self) -> dict[str, Any]:
        return {k: str(self.spec_file) if k == "spec" else getattr(self, k) for k in self.JSON_KEYS}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        if not isinstance(doc, dict):
            raise ValueError(f"Config: expected an object, not {type(doc).__name__}")
        unknown = [k for k in doc if k not in cls.JSON_KEYS]
        missing = [k for k in cls.JSON_KEYS if k not in doc]
        if unknown or missing:
            raise ValueError(
                f"Config: {'unknown' if unknown else 'missing'} key(s) {', '.join(map(repr, unknown or missing))}"
            )
        config = cls(spec_file=Path(doc["spec"]), **{k: v for k, v in doc.items() if k not in ("name", "spec")})
        if config.name != doc["name"]:
            raise ValueError(f"Config: name {doc['name']!r} is not id@setup ({config.name!r})")
        return config

    def load(self, packets: int | None) -> Spec:
        """Its spec, with its changes and `packets` (None: the spec's own),
        checked (model/overrides.py)."""
        at = f"config {self.id}"
        overrides = Overrides(
            packets=packets,
            cores=self.cores,
            policy=self.policy,
            properties=self.component,
            collocated=self.collocated,
            pin=True if self.pin else None,
            scheduler=self.scheduler,
            network=self.network,
        )
        where = {
            "packets": "--packets",
            "policy": f"{at}: policy",
            "properties": f"{at}: component",
            "collocated": f"{at}: collocated",
            "network": f"{at}: network",
            "scheduler": f"{at}: scheduler",
        }
        return apply_overrides(load_spec(self.spec_file), overrides, where)


@dataclass
class Campaign:
    path: Path
    measure: Measure
    configs: list


def load_campaign(path: str | os.PathLike) -> "Campaign":
    """Reads a campaign file; every error names the file, the key and what is valid."""
    path = Path(path)
    doc = read_toml(path)
    for key in doc:
        if key not in ("measure", "setup", "config"):
            raise SpecError(path, key, "unknown table; valid: measure, setup, config")
    measure = Measure()
    for key, value in doc.get("measure", {}).items():
        if key not in MEASURE_KEYS:
            raise SpecError(path, f"measure.{key}", f"unknown key; valid: {', '.join(MEASURE_KEYS)}")
        expected = type(getattr(measure, key))
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or value < 0
            or (expected is int and not isinstance(value, int))
        ):
            raise SpecError(path, f"measure.{key}", f"must be a {'whole ' if expected is int else ''}number >= 0")
        setattr(measure, key, expected(value))
    if measure.runs < 1:
        raise SpecError(path, "measure.runs", "must be at least 1")
    setups = {}
    for name, table in doc.get("setup", {}).items():
        if set(table) - {"label", "cores"}:
            raise SpecError(path, f"setup.{name}", "unknown key; valid: label, cores")
        setups[name] = (table.get("label", name), parse_cores(table.get("cores", "all"), path, f"setup.{name}.cores"))
    configs, seen = [], set()
    for i, item in enumerate(doc.get("config", [])):
        where = f"config[{i}]"
        for key in item:
            if key not in CONFIG_KEYS:
                raise SpecError(path, f"{where}.{key}", f"unknown key; valid: {', '.join(CONFIG_KEYS)}")
        if not isinstance(item.get("id"), str) or not item["id"]:
            raise SpecError(path, f"{where}.id", "a name is required")
        if item["id"] in seen:
            raise SpecError(path, f"{where}.id", f"{item['id']!r} is used twice")
        seen.add(item["id"])
        spec_file = path.parent / str(item.get("spec", ""))
        if not spec_file.is_file():
            raise SpecError(path, f"{where}.spec", f"{spec_file} does not exist")
        chosen = item.get("setups", list(setups))
        for s in chosen:
            if s not in setups:
                raise SpecError(path, f"{where}.setups", f"{s!r} is not a set-up; declared: {', '.join(setups)}")
        for s in chosen:
            configs.append(
                Config(
                    item["id"],
                    item.get("group", ""),
                    spec_file,
                    s,
                    setups[s][0],
                    setups[s][1],
                    item.get("title", ""),
                    dict(item.get("policy", {})),
                    dict(item.get("component", {})),
                    bool(item.get("collocated", False)),
                    bool(item.get("pin", False)),
                    _network_table(item, path, where),
                    item.get("scheduler"),
                )
            )
    for c in configs:  # catches bad policy keys before any run starts
        c.load(measure.packets)
    return Campaign(path, measure, configs)


def _network_table(item: dict[str, Any], path: Any, where: str) -> dict[str, Any] | None:
    if "network" not in item:
        return None
    if not isinstance(item["network"], dict):
        raise SpecError(path, f"{where}.network", "must be a table like {delay_ms = 10}")
    return dict(item["network"])


def estimate_s(config: "Config", packets: int | None) -> float:
    return repeat.estimate_s(config.load(packets))


def run_campaign(
    campaign: "Campaign",
    runs: int,
    packets: int | None,
    on_config_done: Callable[..., Any] | None = None,
    progress_stream: TextIO = sys.stderr,
) -> dict[str, "CampaignEntry"]:
    """Runs every distinct configuration `runs` times. Returns {config.name:
    CampaignEntry}, not yet summarised. on_config_done(entries,
    status="partial") saves them after each configuration and returns where;
    when Interrupted, with status="interrupted", and the exception carries
    the entries and that path."""
    distinct: dict[Any, Any] = {}
    for c in campaign.configs:
        distinct.setdefault(c.key, c)
    total = sum(estimate_s(c, packets) * runs for c in distinct.values())
    with Progress(total, "campaign", progress_stream) as progress:
        progress.say(
            f"{len(campaign.configs)} configurations ({len(distinct)} distinct) x {runs} run(s) of "
            f"{packets} packets; about {units.wall_time(total)}"
        )
        return _run_configs(campaign, runs, packets, progress, on_config_done)


def _run_configs(
    campaign: "Campaign", runs: int, packets: int | None, progress: Any, on_config_done: Callable[..., Any] | None
) -> dict[str, "CampaignEntry"]:
    m = campaign.measure
    by_key: dict[Any, Any]
    by_key, out, n_done, n_total = {}, {}, 0, len({c.key for c in campaign.configs}) * runs
    for c in campaign.configs:
        if c.key in by_key:
            out[c.name] = by_key[c.key].shown_as(c)
            continue
        results: list[Any]
        failures: list[Any]
        results, failures = [], []
        guard = Guard(m.guard_settings(), cores=c.cores, log=progress.say)
        for r in range(runs):
            n_done += 1
            try:
                result, failure = _careful_run(
                    c, packets, guard, progress, f"[{n_done}/{n_total}] {c.name} run {r + 1}/{runs}"
                )
            except Interrupted as exc:
                # Keep the runs done so far, this configuration's included,
                # and the interrupted run as a failure.
                failures.append(RunFailure(f"interrupted by {exc.name}", "", partial=exc.result))
                out[c.name] = CampaignEntry(c, results, failures, interrupted=True)
                exc.result = out
                if on_config_done:
                    exc.saved_to = on_config_done(out, status="interrupted")
                raise
            if result is not None:
                results.append(result)
            if failure is not None:
                failures.append(failure)
        entry = CampaignEntry(c, results, failures)
        by_key[c.key] = entry
        out[c.name] = entry
        if on_config_done:
            on_config_done(out)
    progress.say(f"done in {units.wall_time(progress.elapsed_s)}")
    return out


def _careful_run(
    c: Config, packets: int | None, guard: Guard, progress: Any, label: str
) -> tuple[RunResult | None, "RunFailure | None"]:
    """One run under the guard: after waiting for quiet, redone while others
    load the cores or when it failed. Returns (result or None, failure or None)."""
    estimated = estimate_s(c, packets)
    try:
        result, kept, _ = repeat.guarded_run(lambda: run_spec(c.load(packets)), guard, label)
    except RunError as exc:
        progress.advance(estimated, f"{label}: FAILED: {exc}", style=BAD)
        return None, RunFailure(str(exc), exc.component)
    note = f", foreign load {kept.foreign_pct:.0f} % (the cleanest of {kept.attempts} runs)" if kept.disturbed else ""
    note += f", {kept.flaw} (every one of {kept.attempts} runs)" if kept.flaw else ""
    progress.advance(estimated, f"{label}: {repeat.run_line(result)}{note}")
    return result, None


@dataclass
class Spread(Typed):
    """The median, min and max of a figure over the runs that have it (n);
    all None when none has."""

    median: float | None
    min: float | None
    max: float | None
    n: int


def spread(values: Iterable[float | None]) -> "Spread":
    """The Spread of the values given (None and NaN left out)."""
    v = [x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    if not v:
        return Spread(None, None, None, 0)
    return Spread(float(np.median(v)), float(min(v)), float(max(v)), len(v))


# The figures of each stage that a summary gives (StageSummary, in this order).
STAGE_FIGURES = (
    "last_packet_ms",
    "received",
    "reordered_from_previous",
    "reordered_from_original",
    "output_reordered_from_previous",
    "max_server_threads",
)


@dataclass
class StageSummary(Typed):
    """One stage's figures over the runs."""

    name: str
    last_packet_ms: Spread
    received: Spread
    reordered_from_previous: Spread
    reordered_from_original: Spread
    output_reordered_from_previous: Spread
    max_server_threads: Spread

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        return from_dict(cls, doc, {k: Spread.from_dict for k in STAGE_FIGURES})


@dataclass
class ConfigSummary(Typed):
    """What summarise() gives of a configuration's runs: every figure the
    paper reports, as a Spread, and the median run (by ratio), whose send
    times feed the histograms."""

    runs: int  # how many runs it summarises
    floor_ms: float
    overhead_ratio: Spread
    foreign_cpu_pct: Spread
    producer_last_sent_ms: Spread
    send_us: dict  # {statistic of ProducerResult.send_us: median over the runs}
    send_share_under_us: dict  # {threshold (µs, as text): median % of sends faster}
    stages: list  # StageSummary, in pipeline order
    cpu_s: Spread  # user + system CPU of the run's hosts
    emulator_cpu_s: Spread  # the link emulator's CPU (n = 0 without network hosts)
    median_run: int  # index into the entry's runs

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        spreads = ("overhead_ratio", "foreign_cpu_pct", "producer_last_sent_ms", "cpu_s", "emulator_cpu_s")
        return from_dict(cls, doc, {"stages": list_of(StageSummary), **{k: Spread.from_dict for k in spreads}})


def summarise(runs: list[RunResult]) -> "ConfigSummary | None":
    """The ConfigSummary of runs (RunResults); None without a run."""
    if not runs:
        return None
    # The runs summarised are analysed (RunResult.analysed): their figures, typed optional, are set.
    analysed: list[Any] = list(runs)
    first = analysed[0]
    stages = [
        StageSummary(s.name, *(spread([getattr(r.stages[i], k) for r in analysed]) for k in STAGE_FIGURES))
        for i, s in enumerate(first.stages)
    ]
    ratios = [r.overhead_ratio for r in analysed]
    median_run = int(np.argsort(ratios)[len(ratios) // 2]) if all(x is not None for x in ratios) else 0
    send_keys = first.producer.send_us.keys() if first.producer else ()
    share_keys = first.producer.send_share_under_us.keys() if first.producer else ()
    return ConfigSummary(
        runs=len(analysed),
        floor_ms=first.floor_ms,
        overhead_ratio=spread(ratios),
        foreign_cpu_pct=spread([r.foreign_cpu_pct for r in analysed]),
        producer_last_sent_ms=spread([r.producer.last_sent_ms if r.producer else None for r in analysed]),
        send_us={k: spread([r.producer.send_us[k] for r in analysed]).median for k in send_keys},
        send_share_under_us={
            k: spread([r.producer.send_share_under_us[k] for r in analysed]).median for k in share_keys
        },
        stages=stages,
        cpu_s=spread([r.cpu.user_s + r.cpu.system_s for r in analysed]),
        emulator_cpu_s=spread([r.network.emulator_cpu_s if r.network else None for r in analysed]),
        median_run=median_run,
    )


@dataclass
class RunFailure(Typed):
    """A run the guard could not keep: the error, the component it names
    ("" if none), and for a run cut by a termination signal what it had
    measured (a RunResult)."""

    error: str
    component: str | None
    partial: RunResult | None = optional()

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        return from_dict(cls, doc, {"partial": RunResult.from_dict})


@dataclass
class CampaignEntry(Typed):
    """One configuration of a campaign, as results.json keeps it under the
    configuration's name: the configuration, its runs and failures, and its
    summary once summarise() ran (null when no run succeeded). A
    configuration that resolves to the spec of one before it shows that
    one's runs (same_as: its name); the configuration a termination signal
    cut is interrupted."""

    config: Config
    runs: list  # RunResult, in the order they ran
    failures: list  # RunFailure
    same_as: str | None = optional()
    interrupted: bool | None = optional()
    summary: ConfigSummary | None = figure()
    # Whether summarise() ran: the entries saved while the campaign runs have
    # no "summary" key, the entries of the finished campaign have one.
    summarised: bool = state(False)

    @property
    def analysed(self) -> bool:
        return self.summarised

    def summarise(self) -> Self:
        """Summarises its runs (again, if it was); returns itself."""
        self.summary, self.summarised = summarise(self.runs), True
        return self

    def shown_as(self, config: Config) -> Self:
        """This entry under another configuration of the same spec (sharing its runs)."""
        return replace(self, config=config, same_as=self.config.name)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Self:
        entry = from_dict(
            cls,
            doc,
            {
                "config": Config.from_dict,
                "runs": list_of(RunResult),
                "failures": list_of(RunFailure),
                "summary": ConfigSummary.from_dict,
            },
        )
        entry.summarised = "summary" in doc
        return entry


def entries_from_json(entries: dict[str, Any], entry_type: type[CampaignEntry] = CampaignEntry) -> dict[str, Any]:
    """A campaign's entries as results.json keeps them ({name: object}), read
    back as entry_type (a CampaignEntry, or a study's own kind of it).
    ValueError if one is not what this tool wrote."""
    return {name: entry_type.from_dict(e) for name, e in entries.items()}

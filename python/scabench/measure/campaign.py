"""Campaigns: many configurations, each run K times, carefully.

A campaign file (experiments/paper/campaign.toml) lists configurations: a
spec, changes to it (policy keys, collocation, pinning) and the set-ups (core
lists) to run it on. For every run the campaign
  1. waits until other processes leave the run's cores quiet,
  2. runs the spec over real processes (runner.run_spec),
  3. redoes the run if others took more CPU than allowed meanwhile,
and it shows progress with an estimate of the time left. Results are
summarised as the median with the spread (min and max) over the runs.

A campaign's entries are plain dicts, as results.json keeps them
({config, runs, failures, summary, same_as?}); their runs are RunResults
(entries_from_json reads them back).
"""
import json
import math
import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from scabench.errors import RunError, SpecError
from scabench.interrupts import Interrupted
from scabench.measure.guard import Guard, GuardSettings
from scabench.model.pipeline import floor_of
from scabench.run.results import RunResult
from scabench.run.runner import run_spec
from scabench.model.spec import load_spec, parse_cores, read_toml

MEASURE_KEYS = ("runs", "packets", "quick_packets", "quiet_below_pct", "quiet_wait_s", "redo_above_pct", "max_redos")
CONFIG_KEYS = ("id", "group", "title", "spec", "policy", "component", "collocated", "pin", "scheduler", "network",
               "setups")
# Start-up and teardown of a run's processes, beyond the pipeline itself (s);
# only used for the estimate of the time left.
RUN_SETUP_S = 1.5


@dataclass
class Measure:
    runs: int = 3
    packets: int = 1000
    quick_packets: int = 100
    quiet_below_pct: float = 3.0
    quiet_wait_s: float = 120.0
    redo_above_pct: float = 3.0
    max_redos: int = 3

    def guard_settings(self):
        # A failed run is redone too: a start-up can lose a race with a busy machine.
        return GuardSettings(quiet_below_pct=self.quiet_below_pct, quiet_wait_s=self.quiet_wait_s,
                             redo_above_pct=self.redo_above_pct, max_redos=self.max_redos,
                             retry_errors=(RunError,))


@dataclass
class Config:
    id: str
    group: str
    spec_file: Path
    setup: str
    setup_label: str
    cores: list
    title: str = ""
    policy: dict = field(default_factory=dict)
    component: dict = field(default_factory=dict)   # {name: {property: value}}
    collocated: bool = False
    pin: bool = False
    network: dict | None = None   # {delay_ms, jitter_ms}: network hosts behind emulated links
    scheduler: str | None = None  # None: the spec's

    @cached_property
    def key(self):
        """Configurations that resolve to the same spec are the same run.
        (Computed once: it loads and resolves the spec.)"""
        return json.dumps(self.load(1).describe(), sort_keys=True)

    @property
    def name(self):
        return f"{self.id}@{self.setup}"

    def load(self, packets):
        spec = load_spec(self.spec_file).with_cores(self.cores).with_packets(packets)
        if self.policy:
            spec.with_policy(self.policy, where=f"config {self.id}: policy")
        for name, properties in self.component.items():
            spec.with_properties(name, properties, where=f"config {self.id}: component")
        if self.collocated:
            spec.collocate()
        if self.pin:
            spec.with_pin(True)
        if self.network is not None:
            spec.with_network(self.network, where=f"config {self.id}: network")
        if self.scheduler is not None:
            spec.with_scheduler(self.scheduler, where=f"config {self.id}: scheduler")
        return spec


@dataclass
class Campaign:
    path: Path
    measure: Measure
    configs: list


def load_campaign(path):
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
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0 or \
                (expected is int and not isinstance(value, int)):
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
            configs.append(Config(item["id"], item.get("group", ""), spec_file, s, setups[s][0], setups[s][1],
                                  item.get("title", ""), dict(item.get("policy", {})), dict(item.get("component", {})),
                                  bool(item.get("collocated", False)), bool(item.get("pin", False)),
                                  _network_table(item, path, where), item.get("scheduler")))
    for c in configs:  # catches bad policy keys before any run starts
        c.load(measure.packets)
    return Campaign(path, measure, configs)


def _network_table(item, path, where):
    if "network" not in item:
        return None
    if not isinstance(item["network"], dict):
        raise SpecError(path, f"{where}.network", "must be a table like {delay_ms = 10}")
    return dict(item["network"])


def estimate_s(config, packets):
    return floor_of(config.load(packets)) / 1000.0 * 1.05 + RUN_SETUP_S


class Progress:
    """One line per run on stderr: what runs, what it gave, and the time left."""

    def __init__(self, total_s, stream=sys.stderr):
        self.total_s, self.done_s, self.started = total_s, 0.0, time.monotonic()
        self.stream = stream

    def say(self, text):
        print(text, file=self.stream, flush=True)

    def advance(self, estimated_s):
        self.done_s += estimated_s
        elapsed = time.monotonic() - self.started
        left = max(0.0, self.total_s - self.done_s) * (elapsed / self.done_s if self.done_s else 1.0)
        return elapsed, left


def run_campaign(campaign, runs, packets, on_config_done=None, progress_stream=sys.stderr):
    """Runs every distinct configuration `runs` times. Returns
    {config.name: {"config": ..., "runs": [RunResult, ...], "failures": [...]}}.
    on_config_done(entries, status="partial") saves them after each
    configuration and returns where; when Interrupted, with
    status="interrupted", and the exception carries the entries and that path."""
    m = campaign.measure
    distinct = {}
    for c in campaign.configs:
        distinct.setdefault(c.key, c)
    total = sum(estimate_s(c, packets) * runs for c in distinct.values())
    progress = Progress(total, progress_stream)
    progress.say(f"{len(campaign.configs)} configurations ({len(distinct)} distinct) x {runs} run(s) of "
                 f"{packets} packets; about {total / 60:.0f} min")
    by_key, out, n_done, n_total = {}, {}, 0, len(distinct) * runs
    for c in campaign.configs:
        if c.key in by_key:
            out[c.name] = {**by_key[c.key], "config": describe_config(c), "same_as": by_key[c.key]["config"]["name"]}
            continue
        results, failures = [], []
        guard = Guard(m.guard_settings(), cores=c.cores, log=progress.say)
        for r in range(runs):
            n_done += 1
            try:
                result, failure = _careful_run(c, packets, guard, progress,
                                               f"[{n_done}/{n_total}] {c.name} run {r + 1}/{runs}")
            except Interrupted as exc:
                # Keep the runs done so far, this configuration's included,
                # and the interrupted run as a failure.
                failures.append({"error": f"interrupted by {exc.name}", "component": "",
                                 **({"partial": exc.result} if exc.result else {})})
                out[c.name] = {"config": describe_config(c), "runs": results, "failures": failures,
                               "interrupted": True}
                exc.result = out
                if on_config_done:
                    exc.saved_to = on_config_done(out, status="interrupted")
                raise
            if result is not None:
                results.append(result)
            if failure is not None:
                failures.append(failure)
        entry = {"config": describe_config(c), "runs": results, "failures": failures}
        by_key[c.key] = entry
        out[c.name] = entry
        if on_config_done:
            on_config_done(out)
    elapsed, _ = progress.advance(0)
    progress.say(f"done in {elapsed / 60:.1f} min")
    return out


def describe_config(c):
    return {"name": c.name, "id": c.id, "group": c.group, "title": c.title, "spec": str(c.spec_file),
            "setup": c.setup, "setup_label": c.setup_label, "cores": c.cores, "policy": c.policy,
            "component": c.component,
            "collocated": c.collocated, "pin": c.pin, "scheduler": c.scheduler, "network": c.network}


def _careful_run(c, packets, guard, progress, label):
    """One run under the guard: after waiting for quiet, redone while others
    load the cores or when it failed. Returns (result or None, failure or None)."""
    estimated = estimate_s(c, packets)
    try:
        kept = guard.measure(lambda: run_spec(c.load(packets)), foreign_of=lambda r: r.foreign_cpu_pct or 0.0,
                             label=label, flaw_of=flaw_of)
    except RunError as exc:
        progress.advance(estimated)
        progress.say(f"{label}: FAILED: {exc}")
        return None, {"error": str(exc), "component": exc.component}
    result, foreign = kept.value, kept.foreign_pct
    result.attempt = kept.attempts
    result.redone_for_foreign_load_pct = kept.discarded_foreign_pct
    result.machine_was_quiet = kept.machine_was_quiet
    elapsed, left = progress.advance(estimated)
    last = result.stages[-1]
    note = f", foreign load {foreign:.0f} % (the cleanest of {kept.attempts} runs)" if kept.disturbed else ""
    note += f", {kept.flaw} (every one of {kept.attempts} runs)" if kept.flaw else ""
    progress.say(f"{label}: last packet {last.last_packet_ms:.0f} ms, ratio {result.overhead_ratio:.3f}, "
                 f"reordered {last.reordered_from_previous}/{last.reordered_from_original}{note}"
                 f"  [{elapsed / 60:.1f} min, ~{left / 60:.1f} min left]")
    return result, None


def flaw_of(result):
    """A run that stalled (run/stalls.py) or in which ports refused what a
    peer sent (docs/trust-model.md) is redone like a disturbed one."""
    if result.clean is False:
        return f"ports refused {result.refusals} packets or signals from peers"
    stalls = result.stalls or []
    if not stalls:
        return None
    worst = max(stalls, key=lambda e: e["for_ms"])
    return f"{worst['component']} stalled {worst['for_ms']:.0f} ms"


def spread(values):
    """Median, min and max of the values given (None when there are none)."""
    v = [x for x in values if x is not None and not (isinstance(x, float) and math.isnan(x))]
    if not v:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": float(np.median(v)), "min": float(min(v)), "max": float(max(v)), "n": len(v)}


def entries_from_json(entries):
    """A campaign's entries as results.json keeps them, with their runs read
    back as RunResults (in place; returns them). ValueError if a run is not
    one this tool wrote."""
    for e in entries.values():
        e["runs"] = [RunResult.from_dict(r) for r in e["runs"]]
    return entries


def summarise(runs):
    """Median and spread over runs (RunResults) of every figure the paper reports."""
    if not runs:
        return None
    first = runs[0]
    stages = []
    for i, s in enumerate(first.stages):
        stages.append({"name": s.name, **{k: spread([getattr(r.stages[i], k) for r in runs]) for k in (
            "last_packet_ms", "received", "reordered_from_previous", "reordered_from_original",
            "output_reordered_from_previous", "max_server_threads")}})
    ratios = [r.overhead_ratio for r in runs]
    median_run = int(np.argsort(ratios)[len(ratios) // 2]) if all(x is not None for x in ratios) else 0
    send_keys = first.producer.send_us.keys() if first.producer else ()
    share_keys = first.producer.send_share_under_us.keys() if first.producer else ()
    return {
        "runs": len(runs),
        "floor_ms": first.floor_ms,
        "overhead_ratio": spread(ratios),
        "foreign_cpu_pct": spread([r.foreign_cpu_pct for r in runs]),
        "producer_last_sent_ms": spread([r.producer.last_sent_ms if r.producer else None for r in runs]),
        "send_us": {k: spread([r.producer.send_us[k] for r in runs])["median"] for k in send_keys},
        "send_share_under_us": {k: spread([r.producer.send_share_under_us[k] for r in runs])["median"]
                                for k in share_keys},
        "stages": stages,
        "cpu_s": spread([r.cpu.user_s + r.cpu.system_s for r in runs]),
        "emulator_cpu_s": spread([r.network.emulator_cpu_s if r.network else None for r in runs]),
        "median_run": median_run,
    }

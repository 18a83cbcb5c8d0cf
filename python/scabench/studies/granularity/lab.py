"""`scabench granularity`: the same functional work split into more
components costs more CPU. By how much, and how much of it the seed's two
models explain (docs/architecture.md, "Granularity"; the seed is
"Effects of SCA component granularity on processor workload").

Every run is on the same core(s) (default: CPU 0, the seed's single
processor) while this process and the launcher keep to the others. The
source emits PR packets per second on an absolute timer schedule (the seed
used an audio card). After a warm-up the lab measures a steady window of the
run's processes (scabench.measure.window, the way sar -u does). Each point
is repeated; a run during which other processes took more than a few % of
the core is redone.

The steps:
  1. calibrate: in-process costs (FIR, sink, conversions, context switch,
     memory bandwidth, L2 size, clock);
  2. test application (seed Fig. 8): source alone, and source -> sink at a
     few packet sizes for each placement and transport: C_SRC and C_tr = a + b*B;
  3. Fig. 6: FUNC, W2, W3, W5, W11 at N*B = 20000 and 100000, B = 2000, PR = 40;
  4. Fig. 7: a B sweep with N chosen so that FUNC is about 10 %;
  5. both models for every configuration measured;
  6. the STANAG 4285 transmitter (seed section 3.2, Figs. 3 and 4): the plain
     program and its 2-, 7- and 11-component splits at three symbol rates
     (lab_s4285.py).
Plan.parts (plan.py) chooses the FIR steps (1-5, "fir"), the transmitter
("s4285"), or both.

This module measures: the Lab and its process control. analysis.py puts
the models on what it measured (step 5) and summarises it (result["summary"]);
render.py writes the report from the result (or its JSON) and never imports
this module.
"""

import json
import math
import os
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scabench.errors import RunError, ScabenchError
from scabench.interrupts import Interrupted
from scabench.measure.guard import Guard, GuardSettings
from scabench.measure.load import wait_for_quiet
from scabench.measure.window import measure_window, tick_us
from scabench.model.spec_toml import parse_spec
from scabench.paths import program
from scabench.run.environment import cpu_hz, describe_environment, l2_bytes
from scabench.run.processes import run_program, spawn
from scabench.run.runner import run_spec
from scabench.studies.granularity import lab_s4285
from scabench.studies.granularity import models as gm
from scabench.studies.granularity.analysis import aggregate, apply_models, model_parameters, summarise
from scabench.studies.granularity.plan import PARTS
from scabench.studies.granularity.render_common import cost, terms_line
from scabench.studies.granularity.rows import FirRow
from scabench.studies.granularity.seed import SEED
from scabench.studies.granularity.workloads import WORKLOADS, Layout
from scabench.version import version_info


def _log_default(message):
    print(message, flush=True)


@contextmanager
def _harness_off(cores):
    """Keeps this process (and the launcher it forks) off the measured cores."""
    before = os.sched_getaffinity(0)
    others = before - set(cores)
    if others:
        os.sched_setaffinity(0, others)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


class Lab:
    def __init__(self, plan, log=_log_default):
        self.plan = plan
        self.workload = WORKLOADS[plan.workload]
        self.log = log
        # Each run measures its own steady window, foreign load included; a
        # short quiet wait, as a point takes seconds, not minutes.
        self.guard = Guard(
            GuardSettings(
                quiet_below_pct=plan.foreign_limit_pct,
                quiet_wait_s=3.0,
                quiet_interval_s=0.3,
                redo_above_pct=plan.foreign_limit_pct,
                max_redos=plan.max_redo,
                redo_budget=plan.redo_budget,
            ),
            cores=plan.cores,
            log=log,
        )
        self.tick_us = tick_us()
        self.fir_rows = []

    def dither_us(self, pr):
        """Each packet is dithered within one scheduler tick (at most its
        period), so that the tick samples the user/system split without
        aliasing with the source's period."""
        return min(self.tick_us, int(round(1e6 / pr)))

    # ------------------------------------------------------------ one run

    def packets_for(self, pr, warmup_s, window_s):
        return int(math.ceil(pr * (warmup_s + window_s + 0.5))) + 2

    def _spec(self, layout, placement, transport):
        names = [n for n, _, _ in layout.components]
        doc = {
            "experiment": {"name": f"granularity {self.workload.name} {layout.name} {placement} {transport}"},
            "run": {
                "sample_type": self.workload.sample_type,
                "transport": "tcp" if transport == "none" else transport,
                "cores": list(self.plan.cores),
                "timeout_s": 120,
            },
            "component": [{"name": n, "kind": k, **props} for n, k, props in layout.components],
            "chain": names,
            "policy": {"call": self.plan.call},
        }
        if placement == "collocated":
            doc["placement"] = {"hosts": [names]}
        return parse_spec(doc, Path(f"granularity/{self.workload.name}-{layout.name}.toml"))

    def _run_layout(self, layout, placement, transport, warmup_s, window_s):
        result = self.run_spec_window(self._spec(layout, placement, transport), warmup_s, window_s)
        checksum = next((float(s["checksum"]) for s in result["stats"].values() if "checksum" in s), None)
        return {**result, "checksum": checksum}

    def run_spec_window(self, spec, warmup_s, window_s):
        """Runs spec on the plan's cores and measures a steady window of its
        processes: the window, the run's stats and its median send time."""
        cores = self.plan.cores
        spec = spec.with_cores(list(cores))
        with _harness_off(cores):
            result = run_spec(spec, on_start=lambda pids, names: measure_window(pids, cores, warmup_s, window_s, names))
        if not result.window:
            raise RunError(f"{spec.path.stem}: the stream never started")
        send = result.producer.send_us if result.producer else {}
        return {**result.window, "stats": result.stats, "send_us_p50": send.get("p50")}

    def run_program_window(self, argv, name, warmup_s, window_s, timeout_s, announces_start):
        """Runs a standalone program on the plan's cores and measures a steady
        window of it, from its "started PID" line if it announces one, else
        from its launch; returns the window and its last stdout line as JSON."""
        cores = set(self.plan.cores)
        with _harness_off(cores):
            proc = spawn(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                preexec=lambda: os.sched_setaffinity(0, cores),
            )
            try:
                pid = proc.pid
                if announces_start:
                    assert proc.stdout is not None and proc.stderr is not None  # pipes, just above
                    line = proc.stdout.readline()
                    if not line.startswith("started"):
                        raise RunError(f"{argv[0]} did not start: {proc.stderr.read().strip()}")
                    pid = int(line.split()[1])
                window = measure_window([pid], sorted(cores), warmup_s, window_s, [name])
                out, err = proc.communicate(timeout=timeout_s)
            except BaseException:
                proc.kill()
                proc.wait()
                raise
        if proc.returncode != 0:
            raise RunError(f"{argv[0]} failed ({proc.returncode}): {err.strip()}")
        return window, json.loads(out.strip().splitlines()[-1])

    def _run_func(self, taps, samples, pr, warmup_s, window_s, packets):
        argv = self.workload.func_argv(taps, samples, int(round(1e6 / pr)), packets, self.dither_us(pr))
        window, report = self.run_program_window(
            argv, "func", warmup_s, window_s, 60 + packets / pr, announces_start=True
        )
        # The functional work's own CPU per packet: "work_ns_per_packet" (any
        # workload's FUNC program), or the FIR program's "fir_ns_per_packet".
        work = report.get("work_ns_per_packet", report.get("fir_ns_per_packet"))
        return {
            **window,
            "checksum": report["checksum"],
            "work_ns_per_packet": work,
            "sink_ns_per_packet": report.get("sink_ns_per_packet", 0.0),
        }

    def measured(self, what, run_once, repeats):
        """Repeats run_once under the guard (a disturbed run is redone, within
        the plan's budget; the cleanest is kept). Returns the mean of the
        runs, with the tick samples summed for the user split."""
        return self.measured_in_turn([(what, run_once)], repeats)[0]

    def measured_in_turn(self, points, repeats):
        """Several points, (what, run_once) each, measured in turn: one run of
        each, then the next round, so that every point's runs spread over the
        same minutes. A ratio of two points measured minutes apart is a ratio
        of two states of a shared machine (at 40 packets/s most of a run's CPU
        is its wake-up and cold caches, which others' work moves by tens of
        %); in turn, the same drift lands on both. The aggregate of each."""
        runs: list[list[Any]] = [[] for _ in points]
        for _ in range(repeats):
            for i, (what, run_once) in enumerate(points):
                runs[i].append(
                    self.guard.measure(run_once, foreign_of=lambda m: m["foreign_pct"], label=f"    {what}").value
                )
        return [aggregate(r) for r in runs]

    # ------------------------------------------------------------ steps

    def calibrate(self, samples_points):
        cal = program("scabench-calibrate")
        core = self.plan.cores[0]

        def run(*args):
            with _harness_off(self.plan.cores):
                out = run_program(
                    [str(cal), *map(str, args)],
                    check=True,
                    timeout=120,
                    preexec=lambda: os.sched_setaffinity(0, {core}),
                )
            return json.loads(out.stdout)

        self.log("calibrating: context switch, memory, conversions, sink")
        ctx = run("ctxsw", "--core", core)
        mem = run("membw", "--mib", 128)
        conv = [run("convert", "--samples", b) for b in samples_points]
        sink = [run("sink", "--samples", b) for b in samples_points]
        xs = [c["samples"] for c in conv]
        return {
            "f_hz": cpu_hz(),
            "l2_bytes": l2_bytes(core),
            "ctxsw": ctx,
            "membw": mem,
            "convert": conv,
            "sink": sink,
            "to_seq": gm.fit_linear(xs, [c["to_seq_ns"] for c in conv]).as_dict(),
            "from_seq": gm.fit_linear(xs, [c["from_seq_ns"] for c in conv]).as_dict(),
            "snk": gm.fit_linear(xs, [s["ns_per_packet"] for s in sink]).as_dict(),
        }

    def fir_warm_ns(self, taps, samples):
        cal = program("scabench-calibrate")
        core = self.plan.cores[0]
        with _harness_off(self.plan.cores):
            out = run_program(
                [
                    str(cal),
                    "fir",
                    "--filters",
                    str(self.workload.filters),
                    "--taps",
                    str(taps),
                    "--samples",
                    str(samples),
                ],
                check=True,
                timeout=120,
                preexec=lambda: os.sched_setaffinity(0, {core}),
            )
        return json.loads(out.stdout)["ns_per_packet"]

    def test_application(self, snk_fit, pr):
        """The seed's Fig. 8: a source and a sink at PR packets/s. C_SRC from
        the source alone; C_tr(B) = (source -> sink) - C_SRC - C_SNK(B),
        fitted a + b*B, user and system apart, for each placement and transport."""
        p = self.plan
        period = int(round(1e6 / pr))
        packets = self.packets_for(pr, p.test_warmup_s, p.test_window_s)

        def per_packet(m):
            # ns of CPU per packet, user and total, from the window's % of the cores
            scale = 1e9 * len(p.cores) / 100.0 / pr
            return {
                "user_ns": m["user_pct"] * scale,
                "total_ns": m["total_pct"] * scale,
                "csw_per_packet": m["csw_per_s"] / pr,
            }

        self.log(f"test application (seed Fig. 8): PR {pr}/s")
        self.log(f"  ({terms_line('PR', 'SRC, SNK', 'C_tr', 'B')})")
        dither = self.dither_us(pr)
        src_layout = Layout(
            "SRC",
            (("src", "producer", {"packets": packets, "samples": 1000, "period_us": period, "dither_us": dither}),),
        )
        src = self.measured(
            "SRC", lambda: self._run_layout(src_layout, "process", "tcp", p.test_warmup_s, p.test_window_s), p.repeats
        )
        src_pp = per_packet(src)
        self.log(f"  SRC alone: {src_pp['total_ns'] / 1000:.2f} µs/packet")
        transfers = {}
        for placement, transport in p.placements:
            points = []
            for b in p.test_samples:
                layout = Layout(
                    "SRC-SNK",
                    (
                        (
                            "src",
                            "producer",
                            {"packets": packets, "samples": b, "period_us": period, "dither_us": dither},
                        ),
                        ("snk", "sink", {"checksum": True}),
                    ),
                )
                m = self.measured(
                    f"SRC->SNK {placement} {transport} B={b}",
                    lambda: self._run_layout(layout, placement, transport, p.test_warmup_s, p.test_window_s),
                    p.repeats,
                )
                pp = per_packet(m)
                snk = gm.Linear(**snk_fit)(b)
                user = pp["user_ns"] - src_pp["user_ns"] - snk
                total = pp["total_ns"] - src_pp["total_ns"] - snk
                # Collocated, the two-way push is a direct call on the source's
                # thread: its duration (median) is its CPU, sink included, exact
                # where the window difference above cannot resolve a few µs.
                call = m["send_us_p50"] * 1000 - snk if m.get("send_us_p50") is not None else None
                if placement == "collocated" and call is not None:
                    user = total = call
                points.append(
                    {
                        "samples": b,
                        "per_packet_user_ns": pp["user_ns"],
                        "per_packet_total_ns": pp["total_ns"],
                        "tr_user_ns": user,
                        "tr_system_ns": total - user,
                        "tr_total_ns": total,
                        "call_ns": call,
                        "csw_per_packet": pp["csw_per_packet"],
                        "foreign_pct": m["foreign_pct"],
                    }
                )
                self.log(
                    f"  SRC->SNK {placement:10s} {transport:4s} B={b:6d}: C_tr {cost(total / 1000, 2, ' µs')} "
                    f"(user {cost(user / 1000, 2, ' µs')})"
                )
            xs = [q["samples"] for q in points]
            transfers[f"{placement}/{transport}"] = {
                "placement": placement,
                "transport": transport,
                "points": points,
                "user": gm.fit_linear(xs, [q["tr_user_ns"] for q in points]).as_dict(),
                "system": gm.fit_linear(xs, [q["tr_system_ns"] for q in points]).as_dict(),
                "total": gm.fit_linear(xs, [q["tr_total_ns"] for q in points]).as_dict(),
                "csw_per_packet": sum(q["csw_per_packet"] for q in points) / len(points),
            }
        return {
            "pr": pr,
            "src": {
                "user_ns": src_pp["user_ns"],
                "system_ns": src_pp["total_ns"] - src_pp["user_ns"],
                "total_ns": src_pp["total_ns"],
                "csw_per_packet": src_pp["csw_per_packet"],
            },
            "transfer": transfers,
        }

    def func_point(self, experiment, taps, samples, repeats):
        """FUNC at one (N, B): its row, and its measurement."""
        p = self.plan
        packets = self.packets_for(p.pr, p.warmup_s, p.window_s)
        func = self.measured(
            f"FUNC N={taps} B={samples}",
            lambda: self._run_func(taps, samples, p.pr, p.warmup_s, p.window_s, packets),
            repeats,
        )
        self.log(
            f"  {experiment} N={taps:6d} B={samples:6d} FUNC                 "
            f"U {func['user_pct']:6.2f} %  U+S {func['total_pct']:6.2f} %"
        )
        return self._row(experiment, "FUNC", 1, "standalone", "none", taps, samples, func, func["checksum"]), func

    def config_points(self, experiment, taps, samples, configs, repeats, func):
        """Every configuration and placement at one (N, B), FUNC measured."""
        return self._config_rows(
            experiment,
            taps,
            samples,
            self._config_layouts(configs, taps, samples),
            self.measured_in_turn(self._config_runs(configs, taps, samples), repeats),
            func,
        )

    def _config_layouts(self, configs, taps, samples):
        p = self.plan
        packets = self.packets_for(p.pr, p.warmup_s, p.window_s)
        return [
            (
                self.workload.layout(config, taps, samples, int(round(1e6 / p.pr)), packets, self.dither_us(p.pr)),
                placement,
                transport,
            )
            for config in configs
            for placement, transport in p.placements
        ]

    def _config_runs(self, configs, taps, samples):
        """(what, run_once) for every configuration and placement at one (N, B)."""
        p = self.plan
        return [
            (
                f"{layout.name} {placement} {transport}",
                lambda layout=layout, placement=placement, transport=transport: self._run_layout(
                    layout, placement, transport, p.warmup_s, p.window_s
                ),
            )
            for layout, placement, transport in self._config_layouts(configs, taps, samples)
        ]

    def _config_rows(self, experiment, taps, samples, layouts, measured, func):
        rows = []
        for (layout, placement, transport), m in zip(layouts, measured):
            rows.append(
                self._row(
                    experiment, layout.name, layout.count, placement, transport, taps, samples, m, func["checksum"]
                )
            )
            self.log(
                f"  {experiment} N={taps:6d} B={samples:6d} {layout.name:4s} {placement:10s} {transport:4s} "
                f"U {m['user_pct']:6.2f} %  U+S {m['total_pct']:6.2f} %  CSR {m['csw_per_s']:7.0f}/s"
            )
        return rows

    def fig6_point(self, taps, samples):
        """FUNC and every configuration and placement at one (N, B) of Fig. 6,
        measured in turn (measured_in_turn): the W/FUNC ratios are the
        study's answer, so FUNC's runs share the configurations' minutes."""
        p = self.plan
        packets = self.packets_for(p.pr, p.warmup_s, p.window_s)
        func_run = (
            f"FUNC N={taps} B={samples}",
            lambda: self._run_func(taps, samples, p.pr, p.warmup_s, p.window_s, packets),
        )
        func, *configs = self.measured_in_turn(
            [func_run] + self._config_runs(p.fig6_configs, taps, samples), p.fig6_repeats
        )
        self.log(
            f"  fig6 N={taps:6d} B={samples:6d} FUNC                 "
            f"U {func['user_pct']:6.2f} %  U+S {func['total_pct']:6.2f} %"
        )
        row = self._row("fig6", "FUNC", 1, "standalone", "none", taps, samples, func, func["checksum"])
        layouts = self._config_layouts(p.fig6_configs, taps, samples)
        return [row] + self._config_rows("fig6", taps, samples, layouts, configs, func)

    def _row(self, experiment, config, components, placement, transport, taps, samples, m, func_checksum):
        return FirRow(
            experiment=experiment,
            workload=self.workload.name,
            config=config,
            components=components,
            placement=placement,
            transport=transport,
            taps=taps,
            samples=samples,
            nb=taps * samples,
            pr=self.plan.pr,
            **{
                k: m[k]
                for k in (
                    "user_pct",
                    "system_pct",
                    "total_pct",
                    "csw_per_s",
                    "sar_user_pct",
                    "sar_total_pct",
                    "system_csw_per_s",
                    "foreign_pct",
                    "user_sample_s",
                    "system_sample_s",
                    "split_source",
                    "runs",
                    "processes",
                )
            },
            checksum=m.get("checksum"),
            output_matches_func=(m.get("checksum") == func_checksum) if m.get("checksum") is not None else None,
            work_ns_per_packet=m.get("work_ns_per_packet"),
            sink_ns_per_packet=m.get("sink_ns_per_packet"),
        )

    def choose_taps(self, samples):
        """N such that FUNC is about fig7_target_pct % at this B: solved on
        the warm FIR cost (linear in N), then corrected by FUNC itself."""
        p = self.plan
        budget_ns = p.fig7_target_pct / 100.0 * len(p.cores) / p.pr * 1e9
        taps = max(1, int(budget_ns / (self.workload.filters * samples * 0.05)))
        for _ in range(2):
            ns = self.fir_warm_ns(taps, samples)
            taps = max(1, int(round(taps * budget_ns / ns)))
        return taps

    # ------------------------------------------------------------ the whole

    def run_fir(self):
        """Steps 1-5: calibration, the test application, Figs. 6 and 7 and
        the models; the result's FIR keys."""
        p = self.plan
        calibration = self.calibrate(sorted(set(p.test_samples) | {p.fig6_samples} | set(p.fig7_samples)))
        test = self.test_application(calibration["snk"], p.test_pr)
        test_cold = self.test_application(calibration["snk"], p.test_pr_cold) if p.test_pr_cold else None
        rows = self.fir_rows  # `+=` below extends it in place: an interrupted study keeps the rows so far
        self.log(f"Fig. 6: N*B in {list(p.fig6_nb)}, B = {p.fig6_samples}, PR = {p.pr}")
        self.log(f"  ({terms_line('N', 'FUNC', 'W2…W11', 'U', 'U+S', 'CSR')})")
        for nb in p.fig6_nb:
            taps = max(1, nb // p.fig6_samples)
            rows += self.fig6_point(taps, p.fig6_samples)
        self.log(f"Fig. 7: B in {list(p.fig7_samples)}, FUNC at about {p.fig7_target_pct} %")
        for b in p.fig7_samples:
            taps = self.choose_taps(b)
            row, func = self.func_point("fig7", taps, b, p.fig7_repeats)
            # FUNC decides: when it is off the target, scale N once and measure FUNC again.
            if abs(func["total_pct"] - p.fig7_target_pct) > 0.05 * p.fig7_target_pct and func["total_pct"] > 0:
                taps = max(1, int(round(taps * p.fig7_target_pct / func["total_pct"])))
                self.log(f"  FUNC at {func['total_pct']:.2f} %: N -> {taps}")
                row, func = self.func_point("fig7", taps, b, p.fig7_repeats)
            rows += [row] + self.config_points("fig7", taps, b, p.fig7_configs, p.fig7_repeats, func)
        params = model_parameters(calibration, test, test_cold)
        for row in rows:
            apply_models(row, params, p.cores)
        return {
            "calibration": calibration,
            "test_application": test,
            "test_application_cold": test_cold,
            "parameters": params,
            "configurations": rows,
        }

    def run(self):
        p = self.plan
        if not p.parts or not set(p.parts) <= set(PARTS):
            raise ScabenchError(f"plan parts {list(p.parts)}: each must be one of {', '.join(PARTS)}")
        started = time.time()
        quiet, busy = wait_for_quiet(threshold_pct=p.foreign_limit_pct, interval_s=0.5, timeout_s=20.0, cores=p.cores)
        result = {
            "scabench": version_info(),
            "command": "granularity",
            "plan": {k: (list(v) if isinstance(v, tuple) else v) for k, v in p.__dict__.items()},
            "environment": describe_environment(p.cores),
            "started_at": started,
            "quiet_at_start": {"quiet": quiet, "foreign_pct": busy},
            "seed": {**SEED, "w11_func_ratio": {str(k): v for k, v in SEED["w11_func_ratio"].items()}},
            "configurations": [],
        }
        try:
            if "fir" in p.parts:
                result.update(self.run_fir())
            if "s4285" in p.parts:
                result["stanag4285"] = lab_s4285.run(self)
        except Interrupted as exc:
            # What was measured stays: the FIR points so far (without the
            # models, which need the whole step) and whatever part finished.
            exc.result = {
                **result,
                "status": "interrupted",
                "configurations": list(self.fir_rows),
                "duration_s": time.time() - started,
                "runs": self.guard.measurements,
            }
            raise
        result.update(
            {
                "duration_s": time.time() - started,
                "runs": self.guard.measurements,
                "tick_us": self.tick_us,
                "runs_redone": self.guard.redos,
            }
        )
        result["summary"] = summarise(result)
        return result

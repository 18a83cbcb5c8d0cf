"""The scabench command line."""

import contextlib
import math
import os
import select
import shutil
import signal
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

import click
from rich.text import Text

from scabench import __version__, interrupts, units
from scabench.console import BAD, GOOD, MUTED, VERDICT_STYLES, add_rows, console, show, table
from scabench.errors import RunError, ScabenchError
from scabench.files import check_writable
from scabench.interrupts import Interrupted
from scabench.measure.guard import GuardSettings
from scabench.measure.repeat import MAX_RUNS, Benchmark, guard_settings, run_benchmark
from scabench.model import graph
from scabench.model.checks import parse_cores, parse_overrides, parse_property_overrides
from scabench.model.load import find_spec, load_spec
from scabench.model.overrides import Overrides, apply_overrides
from scabench.model.pipeline import floor_caveat, floor_parts, producer_packets, property_value
from scabench.model.resources import check_memory
from scabench.model.sad.descriptor import SDRROOT_VARIABLE
from scabench.model.sad.export import export_sad
from scabench.model.spec import SCHEDULERS, Spec
from scabench.model.transport import TRANSPORTS
from scabench.report.live import LiveView
from scabench.report.results_file import CsvTable, read_json, read_runs, records_table, write_csv, write_json
from scabench.report.tables import benchmark_csv, benchmark_view, run_view, stage_rows
from scabench.run.naming import DEFAULT_NAMING
from scabench.run.results import RunResult
from scabench.run.runner import run_spec
from scabench.run.trace import DEFAULT_PACKETS, TraceRequest, tracing
from scabench.version import commit


def finite(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A number option must be finite: nan and inf compare false with any range."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--version: asks git for the commit only when asked (every command would pay for it otherwise)."""
    if value and not ctx.resilient_parsing:
        click.echo(f"scabench {__version__} (commit {commit()})")
        ctx.exit()


# click 8.2 and later raise this for a group given no command; 8.1 prints the help itself.
NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class Commands(click.Group):
    """The command group, ending every command the same way on a termination
    signal: 128 + its number (130 for Ctrl-C), also where it comes outside a
    command's exit_codes (while a report is written, say). click's own
    handling would print "Aborted!" and exit 1."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Bad usage (an unknown option, a value outside a choice, a missing
        argument) is one line and exit 2, like every other bad input: click's
        own prints the usage and a hint around the error."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NO_ARGS_IS_HELP as exc:  # `scabench` alone: the help, as before
            exc.show()
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            click.echo(f"error: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            # Ctrl-C while the command line is read (an eager --version asks
            # git): 130, as everywhere else.
            if isinstance(exc.__context__, KeyboardInterrupt) or isinstance(exc.__cause__, KeyboardInterrupt):
                click.echo("interrupted by SIGINT", err=True)
                sys.exit(130)
            click.echo("Aborted!", err=True)
            sys.exit(1)
        # Without standalone mode click returns the code ctx.exit() was given
        # (0 for --version and --help), or a command's return value: None.
        sys.exit(code if type(code) is int else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except Interrupted as exc:
            click.echo(f"interrupted by {exc.name}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:  # Ctrl-C before the handlers were installed
            click.echo("interrupted by SIGINT", err=True)
            sys.exit(130)


@click.group(cls=Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    "-V",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=show_version,
    help="Print the version and the git commit, then exit.",
)
@click.option(
    "--sdrroot",
    type=click.Path(file_okay=False),
    help="The SDR root a SAD's /-rooted files are read under (DIR/dom/...); default: $SDRROOT.",
)
def main(sdrroot: str | None) -> None:
    """scabench: SCA component pipelines over real omniORB, measured."""
    # Every command that reads a SAD, and every process a command starts,
    # reads the SDR root where REDHAWK's tools do: $SDRROOT.
    if sdrroot is not None:
        os.environ[SDRROOT_VARIABLE] = sdrroot
    # SIGINT, SIGTERM and SIGHUP unwind through the runs, which stop their
    # processes and keep what they measured (scabench.interrupts).
    interrupts.install()


@contextmanager
def exit_codes(
    failed: str = "run failed",
    partial_json: str | os.PathLike | None = None,
    interrupted_json: str | os.PathLike | None = None,
) -> Iterator[None]:
    """One way for every command to end on an error: a failed run exits 1
    (saying where its partial result went), a bad input exits 2, each with
    one line and no traceback. A termination signal exits 128 + its number,
    after writing what was measured to interrupted_json (unless the command
    wrote it elsewhere itself)."""
    interrupted_json = interrupted_json or partial_json
    try:
        yield
    except Interrupted as exc:
        if interrupted_json and exc.result is not None and exc.saved_to is None:
            exc.saved_to = write_json(exc.result, interrupted_json)
        kept = f"; what was measured is in {exc.saved_to}" if exc.saved_to else ""
        click.echo(f"interrupted by {exc.name}{kept}", err=True)
        sys.exit(exc.exit_code)
    except RunError as exc:
        click.echo(f"{failed}: {exc}", err=True)
        if partial_json:
            click.echo(f"partial result written to {partial_json}", err=True)
        sys.exit(1)
    except ScabenchError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)


SPEC_HELP = "A spec: its path, or the name of one in experiments/ (e.g. exp6)."


def study_json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--json",
        "json_path",
        type=click.Path(dir_okay=False),
        help="Write the study's result here too (every run, the summaries; always in OUT/results.json).",
    )(f)


def study_csv_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    return click.option(
        "--csv",
        "csv_path",
        type=click.Path(dir_okay=False),
        help=f"Write the study's rows as CSV here: {what}, each figure's median, min and max and the run count.",
    )


def study_out_option(default: str, help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A study's --out folder: its default and what goes there."""
    return click.option(
        "--out", "out_dir", default=default, show_default=True, type=click.Path(file_okay=False), help=help_text
    )


def guarded_study_options(csv_what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options every study run under the guard shares (peers, bulk):
    writing the report again from its results, --json and --csv, and the
    hidden knobs the tests and the quick benchmarks turn (packets per run, the
    wait for a quiet machine, redos)."""

    def apply(f: Callable[..., Any]) -> Callable[..., Any]:
        options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
            click.option(
                "--from-results", is_flag=True, help="Run nothing: write the report again from OUT/results.json."
            ),
            click.option("--packets", type=click.IntRange(min=2), hidden=True),
            click.option("--quiet-wait-s", type=click.FloatRange(min=0), hidden=True, callback=finite),
            click.option("--max-redos", type=click.IntRange(min=0), hidden=True),
            study_json_option,
            study_csv_option(csv_what),
        ]
        for option in reversed(options):
            f = option(f)
        return f

    return apply


def campaign_file_option(default: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A campaign study's --campaign file, and the one it runs without it."""
    return click.option(
        "--campaign", "campaign_file", type=click.Path(dir_okay=False), help=f"Campaign file (default {default})."
    )


# A campaign study's --packets: every run's packet count, its quick one below it.
study_packets_option = click.option(
    "--packets", type=click.IntRange(min=2), help="Packets per run (default 1000; 100 with --quick)."
)


def check_outputs(
    json_path: str | Path | None,
    csv_path: str | None,
    out_dir: str | None = None,
    trace_path: str | Path | None = None,
    report_dir: str | None = None,
) -> None:
    """Every output of a command, made once before anything runs and
    removed again (check_writable): its --json, --csv and --trace files and
    its --out and --report folders. Every command that writes goes through here."""
    for folder, flag in ((out_dir, "--out"), (report_dir, "--report")):
        if folder is not None:
            check_writable(folder, flag, folder=True)
    for path, flag in ((json_path, "--json"), (csv_path, "--csv"), (trace_path, "--trace")):
        if path:
            check_writable(path, flag)


# Where a study's --trace writes its runs' traces, in its --out folder.
TRACES = "traces"

# A run's trace (run/trace.py): how many of each stream's first packets it holds.
trace_packets_option = click.option(
    "--trace-packets",
    type=click.IntRange(min=1),
    default=DEFAULT_PACKETS,
    show_default=True,
    metavar="N",
    help="With --trace: the trace holds each stream's first N packets (the file says so).",
)


def study_trace_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """A study's --trace: a trace file per run, in OUT/traces."""
    return click.option(
        "--trace",
        "trace",
        is_flag=True,
        help="Write each run's packets as a Chrome trace (Perfetto, chrome://tracing) in OUT/traces/, "
        "a file per run numbered in the order they ran: NNN-SPEC.trace.json "
        "(a sweep's also by its point and the run there: NNN-SPEC-pPP-rR.trace.json).",
    )(f)


def trace_request(target: str | Path | None, packets: int, per_run: bool = False) -> TraceRequest | None:
    """What --trace asks for (None: no trace); --trace-packets alone is refused."""
    if target is None:
        if packets != DEFAULT_PACKETS:
            raise ScabenchError("--trace-packets: says how many packets a trace holds; give --trace too")
        return None
    return TraceRequest(Path(target), packets, per_run)


def traced(request: TraceRequest | None) -> AbstractContextManager[Any]:
    """The runs inside write their traces where `request` says (none without one)."""
    return tracing(request) if request is not None else nullcontext()


def trace_lines(request: TraceRequest | None) -> list[str]:
    """Where the traces went, and how to open them; how many could not be written."""
    if request is None:
        return []
    lost = [f"trace: {len(request.unwritten)} not written (see the warning)"] if request.unwritten else []
    if not request.written:
        return lost
    if len(request.written) == 1:
        return [f"trace: {request.written[0]} (open it in ui.perfetto.dev or chrome://tracing)", *lost]
    return [
        f"trace: {len(request.written)} files in {request.target} (open them in ui.perfetto.dev or chrome://tracing)",
        *lost,
    ]


def write_study_outputs(
    results: str | os.PathLike, json_path: str | None, csv_path: str | None, csv_table: Callable[[], CsvTable]
) -> list[str]:
    """A study's --json (a copy of its results.json) and --csv (csv_table(),
    called only if asked); returns the lines that say where they went."""
    lines = []
    if json_path:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(results, json_path)
        lines.append(f"result written to {json_path}")
    if csv_path:
        lines.append(f"rows written to {write_csv(*csv_table(), csv_path)}")
    return lines


# What a refusal of each of the run command's overrides names: its flag.
RUN_FLAGS = {
    "packets": "--packets",
    "cores": "--cores",
    "policy": "--policy",
    "properties": "--set",
    "collocated": "--collocated",
    "pin": "--pin",
    "scheduler": "--scheduler",
    "transport": "--transport",
    "network": "--link-delay",
}


def load_named_spec(name: str) -> Spec:
    return load_spec(find_spec(name))


@main.command(short_help="Run a spec over real processes (--runs K: a benchmark with statistics).")
@click.argument("spec_file", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option("--packets", type=click.IntRange(min=1), help="Packets each producer sends (overrides the spec).")
@click.option("--cores", help='CPUs to run on, e.g. "0" (single core) or "0,1" (overrides the spec).')
@click.option(
    "--policy",
    "policy_items",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a policy key on every connection, e.g. sync=server or worker=16 (repeatable).",
)
@click.option(
    "--set",
    "set_items",
    multiple=True,
    metavar="COMPONENT.KEY=VALUE",
    help="Override a component property, e.g. producer.period_us=7500 (repeatable).",
)
@click.option("--collocated", is_flag=True, help="Place every component in one process (direct calls).")
@click.option("--pin", is_flag=True, help="Pin each process to one core, in turn.")
@click.option(
    "--scheduler",
    type=click.Choice(SCHEDULERS),
    help="How Linux schedules the hosts: normal, or batch (SCHED_BATCH: no preemption on wake-up).",
)
@click.option(
    "--transport",
    type=click.Choice(TRANSPORTS),
    help="What carries the hops between processes: tcp, unix sockets, or shm (samples in shared "
    "memory, CORBA for control); overrides the spec.",
)
@click.option(
    "--link-delay",
    type=click.IntRange(min=0, max=10000),
    metavar="MS",
    help="Run each process on a network host of its own, behind a link with this one-way delay (ms).",
)
@click.option(
    "--link-jitter",
    type=click.IntRange(min=0, max=10000),
    metavar="MS",
    help="Jitter on those links (ms, at most the delay).",
)
@click.option(
    "--runs",
    type=click.IntRange(min=1, max=MAX_RUNS),
    help="Run K times under the studies' guard (a quiet machine first; a disturbed or stalled run "
    "redone) and print the median, mean ± σ, min … max and 95 % interval of the headline figures.",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0, max=MAX_RUNS),
    default=0,
    show_default=True,
    help="Runs before the K runs, not kept (with --runs).",
)
@click.option(
    "--quiet-wait",
    type=click.FloatRange(min=0, max=3600),
    default=GuardSettings.quiet_wait_s,
    show_default=True,
    metavar="S",
    callback=finite,
    help="With --runs: how long to wait for a quiet machine before each run (s).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Write the result here (with --runs: every run and the summary).",
)
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    help="Write the table as CSV here: a row per component (with --runs: a row per headline figure).",
)
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False),
    help="Write the run's report here: report.md and report.html, with the waveform drawn as a graph "
    "(waveform.svg, waveform.png), each connection labelled with its policy and measured rate and latency "
    "(with --runs: the last kept run's).",
)
@click.option(
    "--timeline",
    is_flag=True,
    help="With --report: draw the first packets of each stream as a timeline in it "
    "(a lane per component, a bar per packet's work; packets out of order marked).",
)
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(),
    metavar="FILE",
    help="Write the run's packets here as a Chrome trace (Perfetto, chrome://tracing): a track per "
    "component and thread, each packet's time queued, in work and sending, arrows from hop to hop. "
    "With --runs K, FILE is a folder: a file per run, numbered in the order they ran (NNN-SPEC.trace.json).",
)
@trace_packets_option
@click.option(
    "--hold",
    is_flag=True,
    help="Once the stream has ended, keep the components up and bound in the run's Naming Service "
    "(its corbaloc is printed) until Ctrl-C, or, where stdin is a pipe, until it is closed "
    "(a signal then interrupts the run: exit 128 + its number).",
)
@click.option(
    "--live",
    is_flag=True,
    help="Show the run's figures while it goes on (on stderr): each component's packets, what it holds, "
    "rates, threads, reordering, CPU and stalls, each connection's rate, the latency so far and the time "
    "left; a dashboard on a terminal, a plain line every 2 s elsewhere.",
)
def run(
    spec_file: str,
    packets: int | None,
    cores: str | None,
    policy_items: tuple[str, ...],
    set_items: tuple[str, ...],
    collocated: bool,
    pin: bool,
    scheduler: str | None,
    transport: str | None,
    link_delay: int | None,
    link_jitter: int | None,
    runs: int | None,
    warmup: int,
    quiet_wait: float,
    json_path: str | None,
    csv_path: str | None,
    report_dir: str | None,
    timeline: bool,
    trace_path: str | None,
    trace_packets: int,
    hold: bool,
    live: bool,
) -> None:
    """Run SPEC over real processes and print its table.

    SPEC is the path of a spec, or the name of one in experiments/ (exp6).
    With --runs K it is a benchmark: K runs, each after waiting for a quiet
    machine and redone if other processes disturbed it or it stalled, then
    the statistics of the headline figures and warnings in words."""
    with exit_codes(partial_json=json_path):
        # One run's trace is a file; K runs' a folder of a file per run.
        check_outputs(json_path, csv_path, trace_path=None if runs else trace_path, report_dir=report_dir)
        if trace_path and runs:
            check_writable(trace_path, "--trace", folder=True)
        if timeline and not report_dir:
            raise ScabenchError("--timeline: draws the timeline in the run's report; give --report DIR too")
        request = trace_request(trace_path, trace_packets, per_run=bool(runs))
        if hold and runs:
            raise ScabenchError("--hold keeps one run's components up; it cannot be used with --runs")
        if live and runs:
            raise ScabenchError("--live watches one run; it cannot be used with --runs")
        if warmup and not runs:
            raise ScabenchError("--warmup: warm-up runs come before the --runs K runs; give --runs too")
        spec = load_named_spec(spec_file)
        link: dict[str, float] = {
            k: v for k, v in (("delay_ms", link_delay), ("jitter_ms", link_jitter)) if v is not None
        }
        overrides = Overrides(
            packets=packets or None,
            cores=parse_cores(cores, "--cores") if cores is not None else None,
            policy=parse_overrides(policy_items, "--policy") if policy_items else {},
            properties=parse_property_overrides(set_items, "--set"),
            collocated=collocated,
            pin=True if pin else None,
            scheduler=scheduler or None,
            transport=transport or None,
            network=link or None,
        )
        spec = apply_overrides(spec, overrides, RUN_FLAGS)
        result: Benchmark | RunResult
        try:
            with traced(request):
                if runs:
                    result = run_benchmark(spec, runs, warmup, guard_settings(quiet_wait))
                else:
                    with LiveView() if live else contextlib.nullcontext() as view:
                        result = run_spec(spec, on_hold=announce_hold if hold else None, on_sample=view)
        except RunError as exc:
            if json_path and exc.result is not None:
                write_json(exc.result, json_path)  # a failed run keeps what it measured
            for line in trace_lines(request):
                click.echo(line, err=True)
            raise
    if json_path:
        write_json(result, json_path)
    if csv_path:
        write_csv(*(benchmark_csv(result) if isinstance(result, Benchmark) else stage_rows(result)), csv_path)
    report = _run_report(result, report_dir, timeline) if report_dir else None
    show(benchmark_view(result) if isinstance(result, Benchmark) else run_view(result))
    for path in (json_path, csv_path):
        if path:
            click.echo(f"result written to {path}")
    for line in trace_lines(request):
        click.echo(line)
    if report is not None:
        click.echo(f"report: {report[0]} and {report[1]}")


def _run_report(result: Benchmark | RunResult, out_dir: str, timeline: bool) -> tuple[Path, Path] | None:
    """`run --report`: the run's page with its waveform drawn (report/graph.py)
    and, with --timeline, its first packets; with --runs, the last kept
    run's. None where no run was measured."""
    from scabench.report.graph import write_run_report  # graphviz only here

    runs = result.runs if isinstance(result, Benchmark) else [result]
    if not runs or not runs[-1].analysed:
        return None
    return write_run_report(runs[-1], out_dir, len(runs) if isinstance(result, Benchmark) else None, timeline)


@main.command(short_help="Measure a spec over crossed grids of settings; the fastest in order.")
@click.argument("spec_file", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option(
    "--grid",
    "grid_items",
    multiple=True,
    required=True,
    metavar="KEY=V1,V2,...",
    help="Values of one key to sweep (repeatable; the grids are crossed, at most 10,000 points): "
    "policy.KEY (every connection, "
    "e.g. policy.call=oneway,twoway), run.KEY (packets, cores with CPUs joined by +, scheduler, "
    "transport, pin, collocated, link_delay_ms, link_jitter_ms) or COMPONENT.KEY (e.g. stage1.work_us=500,1000).",
)
@click.option(
    "--runs",
    type=click.IntRange(min=1, max=MAX_RUNS),
    default=3,
    show_default=True,
    help="Runs per point, under the guard.",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0, max=MAX_RUNS),
    default=0,
    show_default=True,
    help="Runs before each point's runs, not kept.",
)
@click.option("--packets", type=click.IntRange(min=1), help="Packets each producer sends (overrides the spec).")
@click.option(
    "--max-latency-ms",
    type=click.FloatRange(min=0, min_open=True),
    callback=finite,
    metavar="L",
    help="The answer must have a median latency p99 of at most L ms.",
)
@click.option(
    "--quiet-wait",
    type=click.FloatRange(min=0, max=3600),
    default=GuardSettings.quiet_wait_s,
    show_default=True,
    metavar="S",
    callback=finite,
    help="How long to wait for a quiet machine before each run (s).",
)
@click.option(
    "--out",
    "out_dir",
    default="results/sweep",
    show_default=True,
    type=click.Path(file_okay=False),
    help="Where results.json, sweep.csv, sweep.png and report.md/.html go; a sweep cut short resumes here.",
)
@study_json_option
@study_csv_option("a row per point (also in OUT/sweep.csv)")
@study_trace_option
@trace_packets_option
@click.option(
    "--timeline",
    is_flag=True,
    help="Draw the answer's first packets as a timeline in the report (its median run; OUT/timeline.png).",
)
@click.option("--wide", is_flag=True, help="Print the table at its full width instead of within 100 columns.")
def sweep(
    spec_file: str,
    grid_items: tuple[str, ...],
    runs: int,
    warmup: int,
    packets: int | None,
    max_latency_ms: float | None,
    quiet_wait: float,
    out_dir: str,
    json_path: str | None,
    csv_path: str | None,
    trace: bool,
    trace_packets: int,
    timeline: bool,
    wide: bool,
) -> None:
    """Run SPEC at every point of the crossed --grid values (at most 10,000
    points), K runs each under the guard, and answer: the fastest
    configuration (lowest median last packet) whose policies guarantee
    order at every output and that kept 0 packets reordered there in every
    run (and met --max-latency-ms). When the fastest is not significantly
    faster than the runner-up (compare's rule) the answer says they tie
    and prefers the lower CPU per packet, else the lower latency. Running
    the same command again with the same --out resumes it: every run
    measured is kept, a point cut short half-way included, and only the
    runs missing are measured; another spec, grid or --packets is refused
    (give another --out)."""
    from scabench.measure.sweep import parse_grid, plan, run_sweep
    from scabench.report.sweep import sweep_csv, sweep_view, write_sweep_report  # matplotlib only here

    results = Path(out_dir) / "results.json"
    with exit_codes(partial_json=results):
        check_outputs(json_path, csv_path, out_dir)
        check_writable(results, "--out")
        request = trace_request(Path(out_dir) / TRACES if trace else None, trace_packets, per_run=True)
        axes = parse_grid(grid_items)
        points = plan(lambda: load_named_spec(spec_file), axes, packets)
        previous = read_json(results, "--out", "points") if results.exists() else None
        with traced(request):
            doc, resumed = run_sweep(
                str(points[0].spec.path),
                axes,
                points,
                runs,
                warmup,
                guard_settings(quiet_wait),
                lambda d: write_json(d, results),
                previous,
                max_latency_ms,
                packets,
                where=results,
            )
    if resumed:
        click.echo(resumed.line(len(points), results), err=True)
    table_path = write_csv(*sweep_csv(doc), Path(out_dir) / "sweep.csv")
    md, html = write_sweep_report(doc, out_dir, timeline)
    saved = write_study_outputs(results, json_path, csv_path, lambda: sweep_csv(doc))
    show(
        sweep_view(doc)
        + ["", f"report: {md}, {html}; table: {table_path}; data: {results}", *saved, *trace_lines(request)],
        console(wide=wide),
    )


@main.command(short_help="Compare results of scabench run: figures side by side, whether they differ.")
@click.argument("files", nargs=-1, required=True, metavar="A.json B.json [...]")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the comparison here.")
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    help="Write the comparison as CSV here: a row per figure and file compared with A.",
)
@click.option("--wide", is_flag=True, help="Print the table at its full width instead of within 100 columns.")
def compare(files: tuple[str, ...], json_path: str | None, csv_path: str | None, wide: bool) -> None:
    """Compare the results of `scabench run --json` (best of --runs K): the
    headline figures side by side, B / A of their means, and whether each
    file differs from A significantly: Student's two-sample t-test at 95 %
    and a difference beyond both standard deviations (pyperf's rule)."""
    from scabench.report.tables import Compared, compare_view, compare_warnings

    with exit_codes():
        if len(files) < 2:
            raise ScabenchError("compare: give two result files or more (scabench run SPEC --runs K --json FILE)")
        check_outputs(json_path, csv_path)
        names = [chr(ord("A") + i) if i < 26 else f"F{i + 1}" for i in range(len(files))]
        runs, own = {}, {}
        for n, path in zip(names, files):
            runs[n], own[n], _ = read_runs(path, n)
            if not runs[n]:
                raise ScabenchError(f"{n}: {path} holds no run that finished")
        result = Compared(names, list(files), runs, compare_warnings(names, runs, own))
    if json_path:
        write_json(result, json_path)
    if csv_path:
        write_csv(*result.csv(), csv_path)
    show(compare_view(result), console(wide=wide))
    for written in (json_path, csv_path):
        if written:
            click.echo(f"comparison written to {written}")


@main.command(short_help="Check specs without running them (exit 2 if any is bad).")
@click.argument("specs", nargs=-1, required=True, metavar="SPEC...")
def validate(specs: tuple[str, ...]) -> None:
    """Check each SPEC (a path, or a name in experiments/) as `scabench run`
    does before it starts a process: every table, key and value, the
    connections, the placement, the packet sizes, and the memory the run
    would need. Prints one line per spec; exits 2 if any is bad."""
    bad = 0
    for name in specs:
        try:
            spec = load_named_spec(name)
            check_memory(spec)
        except ScabenchError as exc:
            bad += 1
            show([Text.assemble(("bad", BAD), f"  {exc}")])
            continue
        caveat = floor_caveat(spec)
        floor = floor_parts(spec)
        # A chain has one route, which its floor's words need not name.
        branches = any(len(v) > 1 for v in (*graph.successors(spec).values(), *graph.predecessors(spec).values()))
        processes = spec.process_count()
        show(
            [
                Text.assemble(
                    ("ok ", GOOD),
                    f"  {spec.path}: {len(spec.components)} components, "
                    f"{len(spec.connections)} connections, {processes} process{'es' if processes != 1 else ''}, "
                    f"{_packets_text(spec)}, floor {units.duration(floor.floor_ms)}"
                    + (f": {floor.statement()}" if branches and floor.critical_path else "")
                    + (f" ({caveat})" if caveat else ""),
                )
            ]
        )
    sys.exit(2 if bad else 0)


def _packets_text(spec: Spec) -> str:
    """What the spec's packet sources send: "200 packets", or each
    source's where there are several ("packets data 200, control 40")."""
    sources = spec.packet_sources()
    if len(sources) > 1:
        return "packets " + ", ".join(f"{c.name} {property_value(c, 'packets')}" for c in sources)
    return f"{producer_packets(spec)} packets"


@main.command(short_help="The component kinds, their ports and properties, and the connection policy.")
@click.argument("kind", required=False)
@click.option("--wide", is_flag=True, help="Print the tables at their full width instead of within 100 columns.")
def components(kind: str | None, wide: bool) -> None:
    """The catalogue of the runtime (`scabench-host --describe`): every
    component kind with its ports, and the policy keys of a connection; with
    KIND, that kind's properties with their types, defaults and ranges."""
    from scabench.report.catalogue import kind_view, kinds_view

    with exit_codes():
        # An empty name is a name, and no kind has it: refused, not taken for none.
        view = kind_view(kind) if kind is not None else kinds_view()
    show(view, console(wide=wide))


def granularity_csv(result: dict) -> CsvTable:
    """Every configuration of a granularity result, FIR and STANAG 4285, a row each."""

    def plain(row: Any) -> dict:  # a typed row as the lab makes it, or its JSON as read back
        return row.as_dict() if hasattr(row, "as_dict") else row

    rows = [{"part": "fir", **plain(r)} for r in result.get("configurations", [])]
    rows += [{"part": "s4285", **plain(r)} for r in (result.get("stanag4285") or {}).get("configurations", [])]
    return records_table(rows, first=("part",))


@main.command("export-sad", short_help="Write a spec as an SCA waveform (SAD, SPD, PRF, SCD, sidecar).")
@click.argument("spec_file", metavar="SPEC", type=click.Path(dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Where components/<Name>/ and waveforms/<name>/ go.",
)
def export_sad_command(spec_file: str, out_dir: str) -> None:
    """Write a spec as an SCA waveform: its SAD, an SPD, PRF and SCD per component kind, and the sidecar
    of run settings (README, "Waveforms as SCA SAD XML")."""
    with exit_codes():
        check_outputs(None, None, out_dir)
        exported = export_sad(load_named_spec(spec_file), out_dir)
    click.echo(
        f"wrote {exported.sad}, its sidecar {exported.sidecar.name}, and {len(exported.packages)} component "
        f"package(s) under {Path(out_dir) / 'components'}"
    )


def announce_hold(naming: dict[str, str]) -> None:
    """Says where the held components are, then waits for the release: the
    end of standard input where it is a pipe (a tool that drives the run
    releases it by closing the pipe), else Ctrl-C (a terminal, /dev/null).
    Any other signal (Ctrl-C too, where a pipe is the release) interrupts
    the command as it would any other: exit 128 + its number, the result
    written with status "interrupted"."""
    piped = _stdin_is_pipe()
    closed, stop = threading.Event(), threading.Event()
    watcher = threading.Thread(target=_watch_for_end_of_input, args=(closed, stop), daemon=True) if piped else None
    if watcher is not None:
        watcher.start()
    release = "closing its standard input" if piped else "Ctrl-C"
    click.echo(
        f"held: the components are bound in the Naming Service at {naming['corbaloc']}, "
        f"context {naming['context']}; {release} releases them",
        err=True,
    )
    try:
        # main() installed the handlers: the release ends the wait, not the command.
        interrupts.wait(closed, releases=() if piped else (signal.SIGINT,))
    finally:
        stop.set()
        if watcher is not None:
            watcher.join()


def _watch_for_end_of_input(closed: threading.Event, stop: threading.Event) -> None:
    """Sets `closed` at the end of standard input. It reads the descriptor
    itself (select, os.read), not sys.stdin: a thread blocked in the
    buffered reader holds its lock, and the interpreter, closing sys.stdin
    at exit, then aborts ("_enter_buffered_busy"). It looks every 0.2 s
    whether to stop, so it is joined, not left blocked, when the hold ends."""
    fd = sys.stdin.fileno()
    while not stop.is_set():
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready and not os.read(fd, 65536):  # what a tool writes is not for us; its end is
            closed.set()
            return


def _stdin_is_pipe() -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):  # no stdin, or closed
        return False


@main.command(short_help="Reproduce the messaging-semantics paper and judge its claims.")
@click.option("--quick", is_flag=True, help="Fewer packets and one run per configuration: a few minutes.")
@click.option(
    "--runs",
    type=click.IntRange(min=1, max=MAX_RUNS),
    help="Runs per configuration and set-up (default 3; 1 with --quick).",
)
@study_packets_option
@click.option("--only", help="Comma-separated configuration ids to run (default: all of the campaign).")
@campaign_file_option("experiments/paper/campaign.toml")
@study_out_option("results/paper", "Where report.md, report.html, the PNGs and results.json go.")
@click.option(
    "--from-results",
    is_flag=True,
    help="Run nothing: judge the claims and write the report again from OUT/results.json.",
)
@study_json_option
@study_csv_option("a row per configuration and set-up")
@study_trace_option
@trace_packets_option
def paper(
    quick: bool,
    runs: int | None,
    packets: int | None,
    only: str | None,
    campaign_file: str | None,
    out_dir: str,
    from_results: bool,
    json_path: str | None,
    csv_path: str | None,
    trace: bool,
    trace_packets: int,
) -> None:
    """Reproduce the messaging-semantics paper and judge its claims."""
    from scabench.studies.paper.claims import VERDICT_LEGEND
    from scabench.studies.paper.measure import rerender, run_paper  # matplotlib is only needed here
    from scabench.studies.paper.render import claim_tally, paper_csv

    with exit_codes():
        check_outputs(json_path, csv_path, out_dir)
        request = trace_request(Path(out_dir) / TRACES if trace else None, trace_packets, per_run=True)
        if from_results:
            if request is not None:
                raise ScabenchError("--trace: traces runs as they run; --from-results runs nothing")
            entries, claims = rerender(out_dir)
        else:
            with traced(request):
                entries, claims = run_paper(
                    out_dir,
                    quick=quick,
                    runs=runs,
                    packets=packets,
                    only=[i.strip() for i in only.split(",") if i.strip()] if only else None,
                    campaign_file=campaign_file,
                )
    verdicts = table("claim", ("verdict", {"justify": "left"}))
    for c in claims:
        verdicts.add_row(c.id, Text(c.verdict, style=VERDICT_STYLES.get(c.verdict, "")))
    saved = write_study_outputs(Path(out_dir) / "results.json", json_path, csv_path, lambda: paper_csv(entries))
    show(
        [
            verdicts,
            Text(f"{VERDICT_LEGEND}. Each claim in words, with the figures that decide it: the report.", style=MUTED),
            claim_tally(claims),
            f"report: {out_dir}/report.html (and report.md, results.json)",
            *saved,
            *trace_lines(request),
        ]
    )


@main.command("link-delay", short_help="Two-way + worker against credits across network hosts with link delay.")
@click.option("--quick", is_flag=True, help="100 packets and one run per row: about a minute.")
@click.option("--runs", type=click.IntRange(min=1, max=MAX_RUNS), help="Runs per row (default 3; 1 with --quick).")
@study_packets_option
@campaign_file_option("experiments/ordering/link-delay.toml")
@study_out_option("results/link-delay", "Where report.md, report.html, the PNG and results.json go.")
@click.option("--from-results", is_flag=True, help="Run nothing: write the report again from OUT/results.json.")
@study_json_option
@study_csv_option("a row per strategy and link delay")
@study_trace_option
@trace_packets_option
def link_delay(
    quick: bool,
    runs: int | None,
    packets: int | None,
    campaign_file: str | None,
    out_dir: str,
    from_results: bool,
    json_path: str | None,
    csv_path: str | None,
    trace: bool,
    trace_packets: int,
) -> None:
    """Two-way + worker vs credits across network hosts with link delay."""
    from scabench.studies.link_delay.analysis import headline
    from scabench.studies.link_delay.measure import rerender, run_link_delay  # matplotlib is only needed here
    from scabench.studies.link_delay.render import link_delay_csv

    with exit_codes():
        check_outputs(json_path, csv_path, out_dir)
        request = trace_request(Path(out_dir) / TRACES if trace else None, trace_packets, per_run=True)
        if from_results and request is not None:
            raise ScabenchError("--trace: traces runs as they run; --from-results runs nothing")
        with traced(request):
            doc = (
                rerender(out_dir)
                if from_results
                else run_link_delay(out_dir, quick=quick, runs=runs, packets=packets, campaign_file=campaign_file)
            )
    ratios = table("link delay", *(f"{name}: ratio (model)" for name in ("two-way + worker", "credits")))
    for row in headline(doc):
        label = "loopback" if row.delay_ms is None else f"{row.delay_ms} ms"
        add_rows(
            ratios,
            [
                [label]
                + [
                    f"{units.ratio(figures.ratio.median)} ("
                    + "–".join(units.ratio(m) for m in sorted(set(round(v, 3) for v in figures.model_ratio)))
                    + ")"
                    if figures is not None
                    else None
                    for figures in (row.twoway_worker, row.credits)
                ]
            ],
        )
    saved = write_study_outputs(Path(out_dir) / "results.json", json_path, csv_path, lambda: link_delay_csv(doc))
    show([ratios, f"report: {out_dir}/report.html (and report.md, results.json)", *saved, *trace_lines(request)])


@main.command(short_help="What the ORB costs per call and per byte, on every transport.")
@click.option("--quick", is_flag=True, help="Fewer and shorter rounds, a shorter size sweep (about 20 s).")
@study_out_option("results/profile", "Directory for report.md, report.html, the plots and profile.json.")
@click.option(
    "--json", "json_path", type=click.Path(dir_okay=False), help="Write the result here (default: OUT/profile.json)."
)
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    help="Write every case on every transport as CSV here (cycles, ns, bit/s).",
)
@click.option("--wide", is_flag=True, help="Print the tables at their full width instead of within 100 columns.")
def profile(quick: bool, out_dir: str, json_path: str | None, csv_path: str | None, wide: bool) -> None:
    """What the ORB costs per call and per byte, on every transport."""
    from scabench.studies.orb_profile.measure import run_profile
    from scabench.studies.orb_profile.plan import Plan
    from scabench.studies.orb_profile.render import profile_csv, profile_view, write_profile_report

    with exit_codes("profile failed", interrupted_json=json_path or Path(out_dir) / "profile.json"):
        check_outputs(json_path or Path(out_dir) / "profile.json", csv_path, out_dir)
        result = run_profile(Plan.quick() if quick else Plan(), log=lambda m: click.echo(m, err=True))
    written = write_json(result, json_path or Path(out_dir) / "profile.json")
    if csv_path:
        write_csv(*profile_csv(result), csv_path)
    md_path, html_path = write_profile_report(result, out_dir)
    show(
        profile_view(result)
        + ["", f"report: {md_path}, {html_path}; result: {written}" + (f"; CSV: {csv_path}" if csv_path else "")],
        console(wide=wide),
    )


@main.command(short_help="One hop's bulk throughput over tcp, unix and shm, beside memcpy.")
@click.option("--quick", is_flag=True, help="Three sizes (1K, 64K, 1M), fewer packets, one round: under a minute.")
@click.option("--cores", default="all", show_default=True, help='CPUs the hop runs on: "0" (one core), "0,1"...')
@click.option(
    "--runs", type=click.IntRange(min=1, max=MAX_RUNS), help="Rounds, each running every case once (default 3)."
)
@click.option("--sizes", help="Packet sizes in bytes, K and M for 1024 and 1024² (default 1K,4K,16K,64K,256K,1M,4M).")
@click.option("--transports", help="Some of tcp, unix, shm, comma-separated (default all three).")
@study_out_option("results/bulk", "Where report.md, report.html and results.json go.")
@guarded_study_options("a row per transport, call and size")
@click.option("--wide", is_flag=True, help="Print the tables at their full width instead of within 100 columns.")
def bulk(
    quick: bool,
    cores: str,
    runs: int | None,
    sizes: str | None,
    transports: str | None,
    out_dir: str,
    from_results: bool,
    packets: int | None,
    quiet_wait_s: float | None,
    max_redos: int | None,
    json_path: str | None,
    csv_path: str | None,
    wide: bool,
) -> None:
    """One hop's bulk throughput: bytes per second over tcp, unix and shm, two-way and one-way, at packet
    sizes 1 KB to 4 MB, beside this machine's memcpy bandwidth and REDHAWK's published BulkIO figures."""
    from scabench.studies.bulk.analysis import bulk_csv_rows, parse_sizes, parse_transports
    from scabench.studies.bulk.measure import rerender_bulk, run_bulk
    from scabench.studies.bulk.render import bulk_view

    with exit_codes("bulk failed", interrupted_json=Path(out_dir) / "results.json"):
        check_outputs(json_path, csv_path, out_dir)
        chosen_sizes = parse_sizes(sizes) if sizes is not None else None
        chosen_transports = parse_transports(transports) if transports is not None else None
        doc = (
            rerender_bulk(out_dir)
            if from_results
            else run_bulk(
                out_dir,
                parse_cores(cores, "--cores"),
                quick=quick,
                runs=runs,
                sizes=chosen_sizes,
                transports=chosen_transports,
                packets=packets,
                quiet_wait_s=quiet_wait_s,
                max_redos=max_redos,
                log=lambda m: click.echo(m, err=True),
            )
        )
    saved = write_study_outputs(Path(out_dir) / "results.json", json_path, csv_path, lambda: bulk_csv_rows(doc))
    show(bulk_view(doc) + [f"report: {out_dir}/report.html (and report.md, results.json)", *saved], console(wide=wide))


@main.command(short_help="The data rate the middleware allows (Eq. 1 of the ORB profiling paper).")
@click.option(
    "--cycles",
    type=click.FloatRange(min=0, min_open=True),
    required=True,
    callback=finite,
    help="D_t: cycles of one call carrying the packet.",
)
@click.option(
    "--clock-mhz",
    type=click.FloatRange(min=0, min_open=True),
    required=True,
    callback=finite,
    help="Clock of the cycle count, in MHz.",
)
@click.option("--elements", type=click.IntRange(min=1), required=True, help="N_p: samples per call.")
@click.option("--samples-per-symbol", type=click.IntRange(min=1), default=8, show_default=True, help="S_s.")
@click.option("--bits-per-symbol", type=click.IntRange(min=1), default=1, show_default=True, help="n.")
def datarate(cycles: float, clock_mhz: float, elements: int, samples_per_symbol: int, bits_per_symbol: int) -> None:
    """The data rate the middleware allows (Eq. 1 of the ORB profiling paper):
    T_m = D_t·S_s/(N_p·n); prints 1/T_m in bit/s, rounded down."""
    from fractions import Fraction

    from scabench.studies.orb_profile.datarate import max_data_rate_bps

    clock_hz = Fraction(str(clock_mhz)) * 1_000_000
    bps = max_data_rate_bps(Fraction(str(cycles)), clock_hz, elements, samples_per_symbol, bits_per_symbol)
    click.echo(f"{units.bit_rate(bps)} ({bps} bit/s)")  # scaled to read, exact as the paper quotes it


def snr_list(ctx: click.Context, param: click.Parameter, value: str) -> list[float]:
    """--snr: comma-separated dB values."""
    try:
        snrs = [float(v) for v in value.split(",")]
    except ValueError:
        raise click.BadParameter(f"must be dB values separated by commas, like -3,0,3,6, not {value!r}") from None
    if not all(math.isfinite(v) for v in snrs):
        raise click.BadParameter("must be finite numbers")
    return snrs


@main.command("s4285-ber", short_help="STANAG 4285 bit error rate against SNR, through the plain program.")
@click.option(
    "--mode",
    "modes",
    multiple=True,
    default=("600S", "2400S"),
    show_default=True,
    help="A mode (75S..2400S, 75L..2400L, 1200U..3600U); repeat for several.",
)
@click.option(
    "--snr",
    "snrs",
    default="-3,0,3,6,9,12,15",
    show_default=True,
    callback=snr_list,
    help="SNRs in a 3 kHz band, dB, comma-separated (Es/N0 is 0.97 dB more).",
)
@click.option(
    "--profile",
    type=click.Choice(["none", "two-path", "harsh"]),
    default="none",
    show_default=True,
    help="The channel's static multipath.",
)
@click.option("--frames", type=click.IntRange(min=1), default=300, show_default=True, help="Frames sent per point.")
@click.option("--seed", type=int, default=4285, show_default=True, help="The source's seed.")
@click.option("--channel-seed", type=int, default=1, show_default=True, help="The noise's seed.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the rows as JSON here.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), help="Write the rows as CSV here.")
def s4285_ber(
    modes: tuple[str, ...],
    snrs: list[float],
    profile: str,
    frames: int,
    seed: int,
    channel_seed: int,
    json_path: str | None,
    csv_path: str | None,
) -> None:
    """Bit error rate of the STANAG 4285 receiver against SNR: for each mode
    and SNR, the plain program (no middleware) sends FRAMES frames through the
    channel (PROFILE, white noise at the SNR in 3 kHz) into the receiver and
    counts the bit errors of what comes back against the source's bytes."""
    from scabench.waveforms.stanag4285 import BER_COLUMNS, ber_table

    with exit_codes("s4285-ber failed", interrupted_json=None):
        check_outputs(json_path, csv_path)
        rows = ber_table(
            list(modes),
            snrs,
            profile=profile,
            frames=frames,
            seed=seed,
            channel_seed=channel_seed,
            log=lambda m: click.echo(m, err=True),
        )
    view = table("mode", "profile", "SNR 3 kHz", "Es/N0", "frames", "bits", "errors", "BER")
    add_rows(
        view,
        [
            [
                r["mode"],
                r["profile"],
                f"{r['snr_db']:g} dB",
                f"{r['esn0_db']:.2f} dB",
                r["frames"],
                r["bits"],
                r["bit_errors"],
                f"{r['ber']:.2e}",
            ]
            for r in rows
        ],
    )
    lines: list[Any] = [view]
    if json_path:
        lines.append(f"rows written to {write_json(rows, json_path)}")
    if csv_path:
        lines.append(
            f"rows written to {write_csv(list(BER_COLUMNS), [[r[k] for k in BER_COLUMNS] for r in rows], csv_path)}"
        )
    show(lines)


@main.command(short_help="CPU workload against the number of components and the packet size.")
@click.option("--quick", is_flag=True, help="A short plan (about two minutes) instead of the default (about 20 min).")
@click.option("--plan", "plan_name", type=click.Choice(["default", "quick", "tiny"]), hidden=True)
@click.option(
    "--only",
    type=click.Choice(["fir", "s4285"]),
    help="Run one part: the FIR load (seed Figs. 6-10) or the STANAG 4285 transmitter (seed Figs. 3-4).",
)
@study_out_option("results/granularity", "Where report.md, report.html and the PNGs go.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False),
    help="Write every configuration measured here (default: OUT/granularity.json).",
)
@click.option("--cores", help='CPUs the runs use (default "0": one core, as the seed\'s machine).')
@click.option(
    "--call",
    type=click.Choice(["twoway", "oneway"]),
    default="twoway",
    show_default=True,
    help="The call of every connection (OSSIE's pushPacket is two-way).",
)
@click.option(
    "--csv",
    "csv_path",
    type=click.Path(dir_okay=False),
    help="Write every configuration measured as CSV here (a row each; part: fir or s4285).",
)
@click.option(
    "--from-json",
    "from_json",
    type=click.Path(dir_okay=False, exists=True),
    help="Measure nothing: render the report again from a JSON this command wrote.",
)
def granularity(
    quick: bool,
    plan_name: str | None,
    only: str | None,
    out_dir: str,
    json_path: str | None,
    csv_path: str | None,
    cores: str | None,
    call: str,
    from_json: str | None,
) -> None:
    """CPU workload against the number of components and the packet size,
    with the seed's models (1) and (2); and the STANAG 4285 transmitter's
    against its number of components and symbol rate."""
    from dataclasses import replace

    from scabench.studies.granularity.lab import Lab
    from scabench.studies.granularity.plan import PLANS
    from scabench.studies.granularity.render import render
    from scabench.studies.granularity.rows import read_result

    if from_json:
        with exit_codes():
            check_outputs(None, csv_path, out_dir)
            result = read_json(from_json, "--from-json", "summary")
            try:
                md, html = render(read_result(result), out_dir)
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise ScabenchError(
                    f"--from-json: {from_json} is not a whole granularity result ({type(exc).__name__}: {exc})"
                ) from None
        if csv_path:
            write_csv(*granularity_csv(result), csv_path)
        click.echo(f"report: {md} and {html}")
        return
    plan = PLANS[plan_name or ("quick" if quick else "default")]
    with exit_codes(interrupted_json=json_path or Path(out_dir) / "granularity.json"):
        check_outputs(json_path or Path(out_dir) / "granularity.json", csv_path, out_dir)
        if cores is not None:
            plan = replace(plan, cores=parse_cores(cores, "--cores"))
        plan = replace(plan, call=call)
        if only:
            plan = replace(plan, parts=(only,))
        if len(plan.cores) >= len(os.sched_getaffinity(0)):
            click.echo("note: the runs use every CPU, so the harness shares them", err=True)
        result = Lab(plan, log=click.echo).run()
    written = write_json(result, json_path or Path(out_dir) / "granularity.json")
    if csv_path:
        write_csv(*granularity_csv(result), csv_path)
    md, html = render(result, out_dir)
    click.echo("")
    for r in result["summary"]["ratios"]:
        if r["seed_ratio_total"] is not None:
            click.echo(
                f"W11/FUNC (U+S) at N*B={r['nb']}, {r['placement']} {r['transport']}: "
                f"{r['ratio_total']:.2f} (seed {r['seed_ratio_total']})"
            )
    s4285 = result.get("stanag4285")
    for r in s4285["summary"]["ratios"] if s4285 else []:
        fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
        click.echo(
            f"STANAG 4285 11/2 components at {r['symbol_rate']} symbols/s, {r['placement']}: "
            f"U {fmt(r['user_wide_vs_narrow'])}, U+S {fmt(r['total_wide_vs_narrow'])} "
            f"(seed: U about {result['seed']['s4285']['user_11_vs_2']})"
        )
    click.echo(f"report: {md} and {html}; data: {written}")


@main.command(short_help="The live view of a running waveform, read over CORBA from its ports' statistics.")
@click.argument("target", metavar="NAME-OR-URL")
@click.option(
    "--naming",
    metavar="CORBALOC",
    help=f"The Naming Service that NAME is bound in (a held run prints its corbaloc); default {DEFAULT_NAMING}.",
)
@click.option(
    "--every",
    type=click.FloatRange(min=0.1, max=3600),
    default=1.0,
    show_default=True,
    metavar="S",
    callback=finite,
    help="Seconds between samples.",
)
@click.option(
    "--samples",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Stop after this many samples (0: until Ctrl-C).",
)
def top(target: str, naming: str | None, every: float, samples: int) -> None:
    """Watch a running waveform: NAME is its naming context (a held run's,
    `exp6_1`; `a/b` for a nested one) in the Naming Service given by
    --naming, or NAME-OR-URL a corbaname:, corbaloc: or IOR: URL of a
    context or of one component. Each component's ports are asked for
    their statistics (BulkIO's PortStatistics) at every sample; a dashboard
    on a terminal, a plain line every 2 s elsewhere. Ctrl-C ends it."""
    from scabench.run.top import PortStatisticsSampler  # the ORB and its stubs: only for this command

    with exit_codes():
        sampler = PortStatisticsSampler(target, naming)
        taken = 0
        with LiveView(sys.stdout) as view:
            try:
                while True:
                    view(sampler.sample())
                    taken += 1
                    if samples and taken >= samples:
                        break
                    time.sleep(every)
            except Interrupted:
                pass  # Ctrl-C is how top ends


@main.command(short_help="A node agent: starts components on this machine for a domain (an SCA DeviceManager).")
@click.option(
    "--domain",
    required=True,
    metavar="CORBALOC",
    help="The domain's Naming Service, e.g. corbaloc::10.0.0.1:2809/NameService.",
)
@click.option("--name", required=True, help="The node's name in the domain: it registers as nodes/NAME.")
@click.option("--cores", help='The CPUs it offers, e.g. "0,1" (default: all it may use); its processes run on them.')
@click.option(
    "--memory-mib",
    type=click.IntRange(min=1),
    metavar="N",
    help="The memory it offers, MiB (default: what the machine has available now).",
)
@click.option(
    "--listen",
    default="127.0.0.1",
    show_default=True,
    metavar="HOST[:PORT]",
    help="Where the node listens (loopback unless told; see docs/trust-model.md before you widen it).",
)
@click.option(
    "--component-ports",
    metavar="LO-HI",
    help="The ports its components listen on (for a firewall); default: any free port.",
)
@click.option(
    "--publish",
    metavar="HOST",
    help="The address its references carry, where others reach it by another than --listen's "
    "(a NAT, a proxy); the ports stay its own.",
)
@click.option(
    "--allow",
    multiple=True,
    metavar="PROGRAM",
    help="A program execute may start, besides scabench-host and scabench-py-stage (repeatable).",
)
@click.option(
    "--heartbeat-s",
    type=click.FloatRange(min=0.05, max=60),
    default=1.0,
    show_default=True,
    callback=finite,
    metavar="S",
    help="How often it checks in with the domain's Naming Service.",
)
@click.option(
    "--grace-s",
    type=click.FloatRange(min=0.1, max=3600),
    default=10.0,
    show_default=True,
    callback=finite,
    metavar="S",
    help="How long the Naming Service may not answer before the node stops its processes and exits.",
)
@click.option(
    "--domain-manager",
    metavar="REF",
    help="A REDHAWK DomainManager to register with (registerDeviceManager and registerDevice at start, "
    "unregistered at exit): "
    "its IOR or corbaloc, or its name in the domain's Naming Service, e.g. REDHAWK_DEV/REDHAWK_DEV.",
)
@click.option(
    "--domain-manager-check-s",
    type=click.FloatRange(min=0.05, max=3600),
    callback=finite,
    metavar="S",
    help="How often (at a heartbeat) the node asks its DomainManager whether it still lists it, and "
    "registers again where it does not (a DomainManager restarted without its data, or moved); default 5.",
)
@click.option(
    "--min-nice",
    type=click.IntRange(min=-20, max=19),
    metavar="N",
    help="The lowest nice value execute's PRIORITY may give a process (default: the node's own; "
    "lower only where this user may: see docs/trust-model.md).",
)
@click.option(
    "--accept-loaded",
    is_flag=True,
    help="Let load copy a component's files from the file system the caller gives (a REDHAWK domain's "
    "FileManager: a component's implementation folder, or one file) into the node's cache, and execute run "
    "them: code sent over the wire, so off unless given (docs/trust-model.md). Without it load takes only "
    "the programs installed here (--allow).",
)
def node(
    domain: str,
    name: str,
    cores: str | None,
    memory_mib: int | None,
    listen: str,
    component_ports: str | None,
    publish: str | None,
    allow: tuple[str, ...],
    heartbeat_s: float,
    grace_s: float,
    domain_manager: str | None,
    min_nice: int | None,
    accept_loaded: bool,
    domain_manager_check_s: float | None,
) -> None:
    """Serve this machine to a domain as an SCA node: a DeviceManager and an
    ExecutableDevice registered under nodes/NAME in the domain's Naming
    Service, which start component programs here (load, execute, terminate),
    allocate its cores and memory, and report their processes' CPU; with
    --accept-loaded also the files a domain loads from its file system (a
    REDHAWK component's implementation), run by the name they were loaded
    by. Runs
    until DeviceManager.shutdown() or Ctrl-C; exits 1, its processes stopped,
    when the Naming Service has not answered for --grace-s."""
    from scabench.node.agent import Agent
    from scabench.node.settings import make_settings

    code: int | str | None = 0
    try:
        with exit_codes("node failed"):
            settings = make_settings(
                domain,
                name,
                cores,
                memory_mib,
                listen,
                component_ports,
                allow,
                heartbeat_s,
                grace_s,
                publish,
                domain_manager,
                min_nice,
                accept_loaded,
                domain_manager_check_s,
            )
            Agent(settings, log=lambda line: click.echo(line)).serve()
    except SystemExit as exc:
        code = exc.code
    sys.stdout.flush()
    sys.stderr.flush()
    # No interpreter finalization once omniORB has run: its threads winding
    # down then can abort the process (components/program.py, main).
    os._exit(code if isinstance(code, int) else 1)


@main.command(short_help="The paper's pipeline on peer frameworks beside scabench's ordered strategies.")
@click.option("--quick", is_flag=True, help="100 packets, one round: a couple of minutes (--grain: a short grid).")
@click.option("--cores", default="all", show_default=True, help='CPUs the peers run on: "0" (one core), "0,1"...')
@click.option(
    "--runs",
    type=click.IntRange(min=1, max=MAX_RUNS),
    help="Rounds, each running every peer once (default 3, --grain 2; 1 with --quick).",
)
@click.option("--only", help="Comma-separated peers to run (default: every peer installed).")
@click.option(
    "--grain",
    is_flag=True,
    help="Run the pipeline at every grain: work per packet (--grain-work) by packet size (--grain-sizes), "
    "with the ordered strategies over tcp, unix, shm and collocated.",
)
@click.option(
    "--grain-work",
    help="With --grain: work per packet and stage, µs, comma-separated (default 5000,500,50,5,0; --quick 50,0).",
)
@click.option(
    "--grain-sizes",
    help="With --grain: samples per packet, comma-separated (default 16,1024,65536; --quick 1024).",
)
@study_out_option("results/peers", "Where report.md, report.html, the PNG and results.json go.")
@guarded_study_options("a row per peer (--grain: per point and peer)")
def peers(
    quick: bool,
    cores: str,
    runs: int | None,
    only: str | None,
    grain: bool,
    grain_work: str | None,
    grain_sizes: str | None,
    out_dir: str,
    from_results: bool,
    packets: int | None,
    quiet_wait_s: float | None,
    max_redos: int | None,
    json_path: str | None,
    csv_path: str | None,
) -> None:
    """The paper's pipeline on peer frameworks (threads, ZeroMQ, GNU Radio) beside scabench's ordered strategies;
    with --grain, at every work per packet and packet size."""
    from scabench.studies.peers.measure import rerender, run_peers  # matplotlib is only needed here
    from scabench.studies.peers.render import peers_csv, peers_view

    with exit_codes():
        check_outputs(json_path, csv_path, out_dir)
        peer_ids = [i.strip() for i in only.split(",")] if only is not None else None
        if grain or grain_work is not None or grain_sizes is not None:
            if not grain:
                raise ScabenchError("--grain-work and --grain-sizes need --grain")
            doc = _peers_grain(
                out_dir,
                cores,
                quick,
                runs,
                peer_ids,
                grain_work,
                grain_sizes,
                from_results,
                packets,
                quiet_wait_s,
                max_redos,
            )
        else:
            doc = (
                rerender(out_dir)
                if from_results
                else run_peers(
                    out_dir,
                    parse_cores(cores, "--cores"),
                    quick=quick,
                    runs=runs,
                    packets=packets,
                    only=peer_ids,
                    quiet_wait_s=quiet_wait_s,
                    max_redos=max_redos,
                    log=lambda m: click.echo(m, err=True),
                )
            )
    if grain:
        from scabench.studies.peers.grain_analysis import grain_csv_rows
        from scabench.studies.peers.grain_render import grain_view

        view, csv_table = grain_view(doc), lambda: grain_csv_rows(doc)
    else:
        view, csv_table = peers_view(doc), lambda: peers_csv(doc)
    saved = write_study_outputs(Path(out_dir) / "results.json", json_path, csv_path, csv_table)
    show(view + [f"report: {out_dir}/report.html (and report.md, results.json)", *saved])


def _peers_grain(
    out_dir: str,
    cores: str,
    quick: bool,
    runs: int | None,
    peer_ids: list[str] | None,
    grain_work: str | None,
    grain_sizes: str | None,
    from_results: bool,
    packets: int | None,
    quiet_wait_s: float | None,
    max_redos: int | None,
) -> dict[str, Any]:
    """`scabench peers --grain`: its options checked, then the study run (or its report rewritten)."""
    from scabench.studies.peers.grain_analysis import parse_sizes, parse_work
    from scabench.studies.peers.grain_measure import rerender_grain, run_grain

    work = parse_work(grain_work) if grain_work is not None else None
    sizes = parse_sizes(grain_sizes) if grain_sizes is not None else None
    if from_results:
        return rerender_grain(out_dir)
    return run_grain(
        out_dir,
        parse_cores(cores, "--cores"),
        quick=quick,
        runs=runs,
        packets=packets,
        only=peer_ids,
        work_us=work,
        samples=sizes,
        quiet_wait_s=quiet_wait_s,
        max_redos=max_redos,
        log=lambda m: click.echo(m, err=True),
    )


if __name__ == "__main__":
    main()

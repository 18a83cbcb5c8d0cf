"""The scabench command line."""
import math
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from scabench import interrupts
from scabench.errors import RunError, ScabenchError
from scabench.interrupts import Interrupted
from scabench.report.results_file import check_writable, read_json, write_json
from scabench.run.runner import run_spec
from scabench.model.checks import parse_cores, parse_overrides, parse_property_overrides
from scabench.model.spec import load_spec
from scabench.report.tables import format_run


def finite(ctx, param, value):
    """A number option must be finite: nan and inf compare false with any range."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """scabench: SCA component pipelines over real omniORB, measured."""
    # SIGINT, SIGTERM and SIGHUP unwind through the runs, which stop their
    # processes and keep what they measured (scabench.interrupts).
    interrupts.install()


@contextmanager
def exit_codes(failed="run failed", partial_json=None, interrupted_json=None):
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


@main.command()
@click.argument("spec_file", type=click.Path(dir_okay=False))
@click.option("--packets", type=click.IntRange(min=1), help="Packets each producer sends (overrides the spec).")
@click.option("--cores", help='CPUs to run on, e.g. "0" (single core) or "0,1" (overrides the spec).')
@click.option("--policy", "policy_items", multiple=True, metavar="KEY=VALUE",
              help="Override a policy key on every connection, e.g. sync=server or worker=16 (repeatable).")
@click.option("--set", "set_items", multiple=True, metavar="COMPONENT.KEY=VALUE",
              help="Override a component property, e.g. producer.period_us=7500 (repeatable).")
@click.option("--collocated", is_flag=True, help="Place every component in one process (direct calls).")
@click.option("--pin", is_flag=True, help="Pin each process to one core, in turn.")
@click.option("--scheduler", type=click.Choice(["normal", "batch"]),
              help="How Linux schedules the hosts: normal, or batch (SCHED_BATCH: no preemption on wake-up).")
@click.option("--link-delay", type=click.IntRange(min=0, max=10000), metavar="MS",
              help="Run each process on a network host of its own, behind a link with this one-way delay (ms).")
@click.option("--link-jitter", type=click.IntRange(min=0, max=10000), metavar="MS",
              help="Jitter on those links (ms, at most the delay).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the result here.")
@click.option("--hold", is_flag=True,
              help="Once the stream has ended, keep the components up and bound in the run's Naming Service "
                   "(its corbaloc is printed) until Ctrl-C.")
def run(spec_file, packets, cores, policy_items, set_items, collocated, pin, scheduler, link_delay, link_jitter,
        json_path, hold):
    """Run one spec over real processes and print its table."""
    with exit_codes(partial_json=json_path):
        if json_path:
            check_writable(json_path, "--json")
        spec = load_spec(spec_file)
        if packets:
            spec.with_packets(packets)
        if cores is not None:
            spec.with_cores(parse_cores(cores))
        if policy_items:
            spec.with_policy(parse_overrides(policy_items))
        for name, properties in parse_property_overrides(set_items).items():
            spec.with_properties(name, properties)
        if collocated:
            spec.collocate()
        if pin:
            spec.with_pin(True)
        if scheduler:
            spec.with_scheduler(scheduler)
        link = {k: v for k, v in (("delay_ms", link_delay), ("jitter_ms", link_jitter)) if v is not None}
        if link:
            spec.with_network(link)
        try:
            result = run_spec(spec, on_hold=announce_hold if hold else None)
        except RunError as exc:
            if json_path and exc.result is not None:
                write_json(exc.result, json_path)  # a failed run keeps what it measured
            raise
    if json_path:
        write_json(result, json_path)
    click.echo(format_run(result))
    if json_path:
        click.echo(f"result written to {json_path}")


def announce_hold(naming):
    """Says where the held components are, then waits for Ctrl-C."""
    click.echo(f"held: the components are bound in the Naming Service at {naming['corbaloc']}, "
               f"context {naming['context']}; Ctrl-C releases them", err=True)
    interrupts.wait()  # main() installed the handlers: Ctrl-C ends the wait, not the command


@main.command()
@click.option("--quick", is_flag=True, help="Fewer packets and one run per configuration: a few minutes.")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per configuration and set-up (default 3; 1 with --quick).")
@click.option("--packets", type=click.IntRange(min=2), help="Packets per run (default 1000; 100 with --quick).")
@click.option("--only", help="Comma-separated configuration ids to run (default: all of the campaign).")
@click.option("--campaign", "campaign_file", type=click.Path(dir_okay=False),
              help="Campaign file (default experiments/paper/campaign.toml).")
@click.option("--out", "out_dir", default="results/paper", show_default=True, type=click.Path(file_okay=False),
              help="Where report.md, report.html, the PNGs and results.json go.")
@click.option("--from-results", is_flag=True,
              help="Run nothing: judge the claims and write the report again from OUT/results.json.")
def paper(quick, runs, packets, only, campaign_file, out_dir, from_results):
    """Reproduce the messaging-semantics paper and judge its claims."""
    from scabench.studies.paper.measure import rerender, run_paper  # matplotlib is only needed here
    with exit_codes():
        if from_results:
            entries, claims = rerender(out_dir)
        else:
            entries, claims = run_paper(out_dir, quick=quick, runs=runs, packets=packets,
                                        only=[i.strip() for i in only.split(",") if i.strip()] if only else None,
                                        campaign_file=campaign_file)
    width = max(len(c.id) for c in claims)
    for c in claims:
        click.echo(f"{c.id.ljust(width)}  {c.verdict}")
    click.echo(f"report: {out_dir}/report.html (and report.md, results.json)")


@main.command("link-delay")
@click.option("--quick", is_flag=True, help="100 packets and one run per row: about a minute.")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per row (default 3; 1 with --quick).")
@click.option("--packets", type=click.IntRange(min=2), help="Packets per run (default 1000; 100 with --quick).")
@click.option("--campaign", "campaign_file", type=click.Path(dir_okay=False),
              help="Campaign file (default experiments/ordering/link-delay.toml).")
@click.option("--out", "out_dir", default="results/link-delay", show_default=True, type=click.Path(file_okay=False),
              help="Where report.md, report.html, the PNG and results.json go.")
@click.option("--from-results", is_flag=True, help="Run nothing: write the report again from OUT/results.json.")
def link_delay(quick, runs, packets, campaign_file, out_dir, from_results):
    """Two-way + worker vs credits across network hosts with link delay."""
    from scabench.studies.link_delay.analysis import headline
    from scabench.studies.link_delay.measure import rerender, run_link_delay  # matplotlib is only needed here
    with exit_codes():
        doc = rerender(out_dir) if from_results else run_link_delay(
            out_dir, quick=quick, runs=runs, packets=packets, campaign_file=campaign_file)
    for row in headline(doc):
        label = "loopback" if row["delay_ms"] is None else f"{row['delay_ms']} ms"
        parts = [f"{name} {row[key]['ratio']['median']:.3f} x floor (model "
                 + "-".join(f"{m:.3f}" for m in sorted(set(round(v, 3) for v in row[key]['model_ratio']))) + ")"
                 for key, name in (("twoway_worker", "two-way + worker"), ("credits", "credits")) if key in row]
        click.echo(f"{label:>9}: " + "; ".join(parts))
    click.echo(f"report: {out_dir}/report.html (and report.md, results.json)")


@main.command()
@click.option("--quick", is_flag=True, help="Fewer and shorter rounds, a shorter size sweep (about 20 s).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/profile", show_default=True,
              help="Directory for report.md, report.html, the plots and profile.json.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Write the result here (default: OUT/profile.json).")
def profile(quick, out_dir, json_path):
    """What the ORB costs per call and per byte, on every transport."""
    from scabench.studies.orb_profile.measure import run_profile
    from scabench.studies.orb_profile.plan import Plan
    from scabench.studies.orb_profile.render import format_profile, write_profile_report
    with exit_codes("profile failed", interrupted_json=json_path or Path(out_dir) / "profile.json"):
        check_writable(json_path or Path(out_dir) / "profile.json", "--json")
        result = run_profile(Plan.quick() if quick else Plan(), log=lambda m: click.echo(m, err=True))
    json_path = write_json(result, json_path or Path(out_dir) / "profile.json")
    md_path, html_path = write_profile_report(result, out_dir)
    click.echo(format_profile(result))
    click.echo(f"\nreport: {md_path}, {html_path}; result: {json_path}")


@main.command()
@click.option("--cycles", type=click.FloatRange(min=0, min_open=True), required=True, callback=finite,
              help="D_t: cycles of one call carrying the packet.")
@click.option("--clock-mhz", type=click.FloatRange(min=0, min_open=True), required=True, callback=finite,
              help="Clock of the cycle count, in MHz.")
@click.option("--elements", type=click.IntRange(min=1), required=True, help="N_p: samples per call.")
@click.option("--samples-per-symbol", type=click.IntRange(min=1), default=8, show_default=True, help="S_s.")
@click.option("--bits-per-symbol", type=click.IntRange(min=1), default=1, show_default=True, help="n.")
def datarate(cycles, clock_mhz, elements, samples_per_symbol, bits_per_symbol):
    """The data rate the middleware allows (Eq. 1 of the ORB profiling paper):
    T_m = D_t·S_s/(N_p·n); prints 1/T_m in bit/s, rounded down."""
    from scabench.studies.orb_profile.datarate import max_data_rate_bps
    from fractions import Fraction
    clock_hz = Fraction(str(clock_mhz)) * 1_000_000
    click.echo(f"{max_data_rate_bps(Fraction(str(cycles)), clock_hz, elements, samples_per_symbol, bits_per_symbol)}"
               " bit/s")


@main.command()
@click.option("--quick", is_flag=True, help="A short plan (about two minutes) instead of the default (about 20 min).")
@click.option("--plan", "plan_name", type=click.Choice(["default", "quick", "tiny"]), hidden=True)
@click.option("--only", type=click.Choice(["fir", "s4285"]),
              help="Run one part: the FIR load (seed Figs. 6-10) or the STANAG 4285 transmitter (seed Figs. 3-4).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/granularity", show_default=True,
              help="Where report.md, report.html and the PNGs go.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Write every configuration measured here (default: OUT/granularity.json).")
@click.option("--cores", help='CPUs the runs use (default "0": one core, as the seed\'s machine).')
@click.option("--call", type=click.Choice(["twoway", "oneway"]), default="twoway", show_default=True,
              help="The call of every connection (OSSIE's pushPacket is two-way).")
@click.option("--from-json", "from_json", type=click.Path(dir_okay=False, exists=True),
              help="Measure nothing: render the report again from a JSON this command wrote.")
def granularity(quick, plan_name, only, out_dir, json_path, cores, call, from_json):
    """CPU workload against the number of components and the packet size,
    with the seed's models (1) and (2); and the STANAG 4285 transmitter's
    against its number of components and symbol rate."""
    from dataclasses import replace

    from scabench.studies.granularity.lab import Lab
    from scabench.studies.granularity.plan import PLANS
    from scabench.studies.granularity.render import render

    if from_json:
        with exit_codes():
            result = read_json(from_json, "--from-json", "summary")
            try:
                md, html = render(result, out_dir)
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise ScabenchError(f"--from-json: {from_json} is not a whole granularity result "
                                    f"({type(exc).__name__}: {exc})") from None
        click.echo(f"report: {md} and {html}")
        return
    plan = PLANS[plan_name or ("quick" if quick else "default")]
    with exit_codes(interrupted_json=json_path or Path(out_dir) / "granularity.json"):
        check_writable(json_path or Path(out_dir) / "granularity.json", "--json")
        if cores is not None:
            plan = replace(plan, cores=parse_cores(cores))
        plan = replace(plan, call=call)
        if only:
            plan = replace(plan, parts=(only,))
        if len(plan.cores) >= len(os.sched_getaffinity(0)):
            click.echo("note: the runs use every CPU, so the harness shares them", err=True)
        result = Lab(plan, log=click.echo).run()
    json_path = write_json(result, json_path or Path(out_dir) / "granularity.json")
    md, html = render(result, out_dir)
    click.echo("")
    for r in result["summary"]["ratios"]:
        if r["seed_ratio_total"] is not None:
            click.echo(f"W11/FUNC (U+S) at N*B={r['nb']}, {r['placement']} {r['transport']}: "
                       f"{r['ratio_total']:.2f} (seed {r['seed_ratio_total']})")
    s4285 = result.get("stanag4285")
    for r in s4285["summary"]["ratios"] if s4285 else []:
        fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
        click.echo(f"STANAG 4285 11/2 components at {r['symbol_rate']} symbols/s, {r['placement']}: "
                   f"U {fmt(r['user_wide_vs_narrow'])}, U+S {fmt(r['total_wide_vs_narrow'])} "
                   f"(seed: U about {result['seed']['s4285']['user_11_vs_2']})")
    click.echo(f"report: {md} and {html}; data: {json_path}")


@main.command()
@click.option("--quick", is_flag=True, help="100 packets, one round: a couple of minutes.")
@click.option("--cores", default="all", show_default=True, help='CPUs the peers run on: "0" (one core), "0,1"...')
@click.option("--runs", type=click.IntRange(min=1), help="Rounds, each running every peer once (default 3; 1 with --quick).")
@click.option("--only", help="Comma-separated peers to run (default: every peer installed).")
@click.option("--out", "out_dir", default="results/peers", show_default=True, type=click.Path(file_okay=False),
              help="Where report.md, report.html, the PNG and results.json go.")
@click.option("--from-results", is_flag=True, help="Run nothing: write the report again from OUT/results.json.")
@click.option("--packets", type=click.IntRange(min=2), hidden=True)
@click.option("--quiet-wait-s", type=click.FloatRange(min=0), hidden=True, callback=finite)
@click.option("--max-redos", type=click.IntRange(min=0), hidden=True)
def peers(quick, cores, runs, only, out_dir, from_results, packets, quiet_wait_s, max_redos):
    """The paper's pipeline on peer frameworks (threads, ZeroMQ, GNU Radio) beside scabench's ordered strategies."""
    from scabench.studies.peers.measure import rerender, run_peers  # matplotlib is only needed here
    from scabench.studies.peers.render import format_peers
    with exit_codes():
        doc = rerender(out_dir) if from_results else run_peers(
            out_dir, parse_cores(cores), quick=quick, runs=runs, packets=packets,
            only=[i.strip() for i in only.split(",")] if only is not None else None,
            quiet_wait_s=quiet_wait_s, max_redos=max_redos, log=lambda m: click.echo(m, err=True))
    click.echo(format_peers(doc))
    click.echo(f"report: {out_dir}/report.html (and report.md, results.json)")


if __name__ == "__main__":
    main()

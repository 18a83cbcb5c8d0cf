"""The scabench command line."""
import sys

import click

from .errors import RunError, ScabenchError
from .runner import run_spec
from .spec import load_spec, parse_cores
from .tables import format_run


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """scabench: SCA component pipelines over real omniORB, measured."""


@main.command()
@click.argument("spec_file", type=click.Path(dir_okay=False))
@click.option("--packets", type=click.IntRange(min=1), help="Packets each producer sends (overrides the spec).")
@click.option("--cores", help='CPUs to run on, e.g. "0" (single core) or "0,1" (overrides the spec).')
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the result here.")
def run(spec_file, packets, cores, json_path):
    """Run one spec over real processes and print its table."""
    try:
        spec = load_spec(spec_file)
        if packets:
            spec.with_packets(packets)
        if cores:
            spec.with_cores(parse_cores(cores))
        result = run_spec(spec, json_path)
    except RunError as exc:
        click.echo(f"run failed: {exc}", err=True)
        if json_path:
            click.echo(f"partial result written to {json_path}", err=True)
        sys.exit(1)
    except ScabenchError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    click.echo(format_run(result))
    if json_path:
        click.echo(f"result written to {json_path}")


@main.command()
@click.option("--quick", is_flag=True, help="A short plan (about a minute) instead of the default (about 13 min).")
@click.option("--plan", "plan_name", type=click.Choice(["default", "quick", "tiny"]), hidden=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="results/granularity", show_default=True,
              help="Where report.md, report.html and the PNGs go.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False),
              help="Write every configuration measured here (default: OUT/granularity.json).")
@click.option("--cores", help='CPUs the runs use (default "0": one core, as the seed\'s machine).')
@click.option("--call", type=click.Choice(["twoway", "oneway"]), default="twoway", show_default=True,
              help="The call of every connection (OSSIE's pushPacket is two-way).")
@click.option("--from-json", "from_json", type=click.Path(dir_okay=False, exists=True),
              help="Measure nothing: render the report again from a JSON this command wrote.")
def granularity(quick, plan_name, out_dir, json_path, cores, call, from_json):
    """CPU workload against the number of components and the packet size,
    with the seed's models (1) and (2)."""
    import json
    from dataclasses import replace
    from pathlib import Path

    from .granularity import PLANS, Lab
    from .granularity_report import render

    if from_json:
        result = json.loads(Path(from_json).read_text())
        md, html = render(result, out_dir)
        click.echo(f"report: {md} and {html}")
        return
    plan = PLANS[plan_name or ("quick" if quick else "default")]
    try:
        if cores:
            plan = replace(plan, cores=parse_cores(cores))
        plan = replace(plan, call=call)
        if len(plan.cores) >= len(__import__("os").sched_getaffinity(0)):
            click.echo("note: the runs use every CPU, so the harness shares them", err=True)
        result = Lab(plan, log=click.echo).run()
    except RunError as exc:
        click.echo(f"run failed: {exc}", err=True)
        sys.exit(1)
    except ScabenchError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    json_path = Path(json_path or Path(out_dir) / "granularity.json")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(result, indent=1) + "\n")
    md, html = render(result, out_dir)
    click.echo("")
    for r in result["summary"]["ratios"]:
        if r["seed_ratio_total"] is not None:
            click.echo(f"W11/FUNC (U+S) at N*B={r['nb']}, {r['placement']} {r['transport']}: "
                       f"{r['ratio_total']:.2f} (seed {r['seed_ratio_total']})")
    click.echo(f"report: {md} and {html}; data: {json_path}")


if __name__ == "__main__":
    main()

"""The report of `scabench bulk`: the terminal's tables and report.md/report.html."""

import os
from pathlib import Path
from typing import Any

from scabench.console import add_rows, table
from scabench.report.markdown import environment_section, md_table, write_report
from scabench.studies.bulk.analysis import REDHAWK_SOURCE, bulk_table, reference_rows
from scabench.studies.machine_load import load_section, load_summary

TITLE = "One hop's bulk throughput beside memcpy"
LEGEND = (
    "each cell: median GB/s (10^9 bytes a second) through one hop (every packet's bytes over the time from the first "
    "send to the receiver's last packet), in brackets its share of memcpy's bandwidth at the same size, "
    "measured in the same study on the same cores (the limit: a hop copies each packet at least once). "
    "Packet sizes in KB and MB of 1024 and 1024²."
)


def notes(doc: dict[str, Any]) -> list[str]:
    """The failed runs, one line each."""
    return [
        f"{c['transport']} {c['call']} {c['size']} B: round {f['round']} failed: {f['error']}"
        for c in doc["cases"]
        for f in c["failures"]
    ]


def bulk_view(doc: dict[str, Any]) -> list[Any]:
    """The terminal's view (console.show prints it)."""
    meta = doc["meta"]
    header, rows = bulk_table(doc)
    return [
        f"one hop on cores {','.join(map(str, meta['cores']))}; {meta['runs']} round(s)",
        add_rows(table(*header), rows),
        LEGEND,
        *notes(doc),
        "",
        f"For reference, {REDHAWK_SOURCE}:",
        add_rows(table("transport", "packet", "throughput", "as the source gives it"), reference_rows()),
    ]


def render(doc: dict[str, Any]) -> str:
    meta = doc["meta"]
    kept_runs = [r for c in doc["cases"] for r in c["runs"]]
    header, rows = bulk_table(doc)
    packets = ", ".join(dict.fromkeys(f"{c['size']} B: {c['packets']}" for c in doc["cases"]))
    text = [
        f"# {TITLE}",
        "",
        f"A producer sends as fast as one hop takes packets to a stage that does no work (`{meta['spec']}`), "
        f"over {', '.join(meta['transports'])}, two-way and one-way, on cores "
        f"{','.join(map(str, meta['cores']))}; {meta['runs']} round(s), every case once a round. Finished "
        f"{meta.get('finished_at', '?')} in {meta.get('elapsed_s', 0) / 60:.1f} min.",
        "",
        md_table(header, rows),
        "",
        LEGEND,
        "",
        f"Packets per run: {packets}.",
        "",
    ]
    failed = notes(doc)
    if failed:
        text += ["Failed runs:", ""] + [f"- {line}" for line in failed] + [""]
    text += [
        "## REDHAWK's published figures",
        "",
        f"For reference, not measured here: {REDHAWK_SOURCE}.",
        "",
        md_table(["transport", "packet", "throughput", "as the source gives it"], reference_rows()),
        "",
        *load_section(load_summary(kept_runs, meta), meta.get("guard")),
        *environment_section(meta["environment"]),
    ]
    return "\n".join(text)


def write_bulk_report(doc: dict[str, Any], out_dir: str | os.PathLike) -> tuple[Path, Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_report(out, TITLE, render(doc))

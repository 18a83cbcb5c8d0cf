"""Plain-text tables for the terminal."""


def format_table(header, rows):
    """Left-aligned first column, right-aligned others."""
    cells = [header] + [[("" if v is None else str(v)) for v in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(v, digits=2):
    return "-" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def _count(v):
    """A count a result may lack (older results): "-"."""
    return "-" if v is None else v


def format_run(result):
    """The table of one run (a RunResult that ran: its figures exist)."""
    spec = result.spec
    exp = spec.get("experiment", {})
    title = exp.get("name", spec["file"]) + (f": {exp['title']}" if exp.get("title") else "")
    producer = result.producer
    stages = result.stages
    out = [title,
           f"cores {spec['cores']}, transport {spec['transport']}, {producer.sent if producer else 0} packets, "
           f"hosts {len(spec['hosts'])}" + (f", scheduler {spec['scheduler']}" if spec.get("scheduler", "normal") != "normal"
                                             else "")]
    for c in spec["connections"]:
        policy = f"call={c['call']}" + (f" sync={c['sync']}" if c["call"] == "oneway" else "")
        policy += f" dispatch={c['dispatch']} worker={c['worker_depth'] or 'no'}"
        if c["worker_depth"] and c.get("worker_resume", "auto") != "auto":
            policy += f" (resume at {c['worker_resume']})"
        if c.get("ordering", "arrival") != "arrival":
            policy += f" ordering={c['ordering']}(c={c['reorder_capacity']}, t={c['reorder_timeout_ms']:g} ms)"
        if c.get("flow", "none") != "none":
            policy += " flow=" + {"watermarks": f"watermarks({c['flow_low']}, {c['flow_high']})",
                                  "credits": f"credits({c['credits']})"}[c["flow"]]
        policy += f" ({c['placement']})"
        out.append(f"  {c['id']}: {policy}")
    if spec.get("network"):
        net = spec["network"]
        out.append(f"  network hosts: one namespace per process, links of {net['delay_ms']} ms one-way delay"
                   + (f" ± {net['jitter_ms']} ms" if net["jitter_ms"] else ""))
    header = [""] + ([producer.name] if producer else []) + [s.name for s in stages]
    rows = [
        ["time of last packet (ms)"] + ([_fmt(producer.last_sent_ms)] if producer else [])
        + [_fmt(s.last_packet_ms) for s in stages],
        ["received"] + ([producer.sent] if producer else []) + [s.received for s in stages],
        ["reordered from previous"] + (["-"] if producer else []) + [s.reordered_from_previous for s in stages],
        ["reordered from original"] + (["-"] if producer else []) + [s.reordered_from_original for s in stages],
        ["most server threads at once"] + (["-"] if producer else []) + [s.max_server_threads for s in stages],
    ]
    if any(c.get("ordering", "arrival") != "arrival" or c.get("flow", "none") != "none" for c in spec["connections"]):
        rows += [
            ["output reordered from previous"] + (["-"] if producer else [])
            + [s.output_reordered_from_previous for s in stages],
            ["most held at once"] + (["-"] if producer else []) + [_count(s.held_peak) for s in stages],
            ["reorder buffer peak"] + (["-"] if producer else []) + [_count(s.reorder_buffer_peak) for s in stages],
            ["skipped / late / duplicate"] + (["-"] if producer else [])
            + [f"{s.skipped or 0} / {s.late or 0} / {s.duplicates or 0}" for s in stages],
            ["times sender suspended"] + (["-"] if producer else []) + [_count(s.flow_suspends) for s in stages],
            ["sends that waited for flow"] + ([_count(producer.send_stalls)] if producer else [])
            + [_count(s.send_stalls) for s in stages],
        ]
    if result.clean is False:
        rows.append(["refused from peers"] + ([producer.refused or 0] if producer else [])
                    + [s.refused or 0 for s in stages])
    out += ["", format_table(header, rows), ""]
    fan_in = [s for s in stages if s.connections]
    for s in fan_in:
        out.append(f"{s.name}, per connection (its counts above are their sum, each stream on its own):")
        out.append(format_table(["", "sent", "received", "reordered from previous", "reordered from original"],
                                [[f"  {c.id}", _count(c.sent), c.received, c.reordered_from_previous,
                                  c.reordered_from_original] for c in s.connections]))
    if fan_in:
        out.append("")
    out.append(f"floor {_fmt(result.floor_ms, 1)} ms, ratio {_fmt(result.overhead_ratio, 3)}, "
               f"foreign CPU {_fmt(result.foreign_cpu_pct, 1)} %")
    for stall in result.stalls or []:
        out.append(f"STALLED: {stall['component']} held work and finished none for {stall['for_ms']:.0f} ms, "
                   f"from {stall['at_ms']:.0f} ms (threshold {stall['threshold_ms']:.0f} ms): "
                   "this run's times are not the pipeline's")
    if result.clean is False:
        out.append(_refusal_line(result, [producer] + stages))
    send = producer.send_us if producer else {}
    if send:
        out.append("producer send (µs): " + ", ".join(
            f"{k} {_fmt(send[k], 1)}" for k in ("min", "p50", "p90", "p99", "max")))
    cpu = result.cpu
    out.append(f"run CPU: user {cpu.user_s:.2f} s, system {cpu.system_s:.2f} s, context switches "
               f"{cpu.voluntary_ctxsw} voluntary / {cpu.involuntary_ctxsw} involuntary")
    if result.network:
        out.append(f"link emulator CPU: {result.network.emulator_cpu_s:.2f} s (on the run's cores; "
                   "not counted as foreign)")
    return "\n".join(out)


def _refusal_line(result, parts):
    """The marker of a run in which ports refused what peers sent."""
    by = {}
    for part in parts:
        for reason, n in ((part.refused_by if part else None) or {}).items():
            by[reason] = by.get(reason, 0) + n
    detail = ", ".join(f"{reason} {n}" for reason, n in by.items() if n)
    return (f"NOT CLEAN: ports refused {result.refusals or 0} packets or signals from peers ({detail}); "
            "see docs/trust-model.md")

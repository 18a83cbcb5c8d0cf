"""What a hop between processes costs in CPU, per packet: a producer sends
packets of B floats through K pass-through stages (work none) to a sink,
each component a host process of its own, over the real launcher and
hosts (docs/findings/hop-cost.md).

The CPU of each host comes from its getrusage at exit (user + system, and
its voluntary and involuntary context switches), which other load on the
machine moves far less than wall time. Each configuration runs twice, with
a short and a long stream; the difference over the extra packets leaves
start-up and shut-down out. With --stages 0,1 the difference between the
two chains is one more hop (a stage's receive and forward: what each of
W11's extra components adds). Medians of --repeats runs.

    .venv/bin/python scripts/hop_cost.py                       # 40 packets/s, twoway+oneway, tcp+unix
    .venv/bin/python scripts/hop_cost.py --rate 0 --cores all  # flat out on every core
    .venv/bin/python scripts/hop_cost.py --orb threadPoolWatchConnection=0 --json out.json

--orb KEY=VALUE adds -ORBKEY VALUE to every host (a candidate setting,
measured before it goes into the runner). --wrap perf or --wrap
callgrind runs every scabench-host under that tool through a wrapper in a
bin directory of its own (SCABENCH_BIN_DIR), and prints the system calls (perf stat's tracepoint counts) or
instructions (callgrind, by category) per packet.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from scabench.model.spec import parse_spec  # noqa: E402
from scabench.paths import bin_dir  # noqa: E402
from scabench.run import runner  # noqa: E402


def spec_for(call, transport, stages, samples, period_us, packets, cores, sync, collocated, dispatch):
    names = ["src"] + [f"stg{i + 1}" for i in range(stages)] + ["snk"]
    components = [{"name": "src", "kind": "producer", "packets": packets, "samples": samples,
                   "period_us": period_us}]
    components += [{"name": n, "kind": "stage", "work": "none"} for n in names[1:-1]]
    components += [{"name": "snk", "kind": "sink"}]
    policy = {"call": call, "dispatch": dispatch}
    if call == "oneway":
        policy["sync"] = sync
    doc = {"experiment": {"name": "hop-cost"},
           "run": {"sample_type": "float", "transport": transport, "cores": cores, "timeout_s": 600},
           "component": components, "chain": names, "policy": policy}
    if collocated:
        doc["placement"] = {"hosts": [names]}
    return parse_spec(doc, Path("hop-cost.toml"))


def run_once(spec):
    result = runner.run_spec(spec)
    lost = [s.name for s in result.stages if s.received != result.producer.sent]
    if lost:
        raise SystemExit(f"packets lost at {', '.join(lost)}")
    hosts = {}
    for h in result.hosts:
        u = h["rusage"]
        hosts["+".join(h["components"])] = {"user_s": u["user_s"], "system_s": u["system_s"],
                                            "vcsw": u["voluntary_ctxsw"], "ivcsw": u["involuntary_ctxsw"]}
    return {"hosts": hosts, "pids": {h["pid"]: "+".join(h["components"]) for h in result.hosts},
            "transport": result.spec["transport"], "foreign_pct": result.foreign_cpu_pct,
            "send_us_p50": result.producer.send_us.get("p50"), "wall_s": result.window_s}


def per_packet(short, long, extra):
    """Per packet of the long run's extra packets, per host: CPU µs (user,
    system, total) and switches."""
    out = {}
    for host, a in long["hosts"].items():
        b = short["hosts"][host]
        d = {k: (a[k] - b[k]) / extra for k in a}
        out[host] = {"user_us": d["user_s"] * 1e6, "system_us": d["system_s"] * 1e6,
                     "cpu_us": (d["user_s"] + d["system_s"]) * 1e6, "vcsw": d["vcsw"], "ivcsw": d["ivcsw"]}
    return out


def median_of(points):
    """Median per host and figure over repeats."""
    hosts = points[0].keys()
    return {h: {k: statistics.median(p[h][k] for p in points) for k in points[0][h]} for h in hosts}


def total(hosts):
    keys = next(iter(hosts.values())).keys()
    return {k: sum(h[k] for h in hosts.values()) for k in keys}


# ----------------------------------------------------------------- wrappers

# System calls are counted by the kernel's tracepoints (perf stat), which,
# unlike strace, leave the hosts' timing alone: omniORB's connection-watching
# thread polls in a loop whose length depends on it.
PERF_EVENTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults", "raw_syscalls:sys_enter"] + [
    f"syscalls:sys_enter_{name}" for name in ("poll", "ppoll", "epoll_wait", "recvfrom", "recvmsg", "sendto",
                                              "sendmsg", "read", "write", "writev", "futex", "clock_nanosleep")]

WRAPPERS = {
    "perf": (f'exec perf stat -x, -o "$SCABENCH_WRAP_OUT/perf.$$" -e {",".join(PERF_EVENTS)} -- "{{host}}" "$@"\n'),
    "callgrind": ('exec valgrind --tool=callgrind --callgrind-out-file="$SCABENCH_WRAP_OUT/callgrind.%p" '
                  '--dump-instr=no "{host}" "$@"\n'),
}


def make_wrapper_dir(tool, real_bin):
    d = Path(tempfile.mkdtemp(prefix=f"hop-{tool}-bin-"))
    for p in Path(real_bin).iterdir():
        if p.name != "scabench-host":
            (d / p.name).symlink_to(p)
    host = d / "scabench-host"
    real = Path(real_bin) / "scabench-host"
    # The spec check's `--describe` runs bare: only the run's hosts are measured.
    host.write_text(f'#!/bin/sh\ncase " $* " in *" --describe "*) exec "{real}" "$@";; esac\n'
                    + WRAPPERS[tool].format(host=real))
    host.chmod(0o755)
    return d


def perf_counts(out_dir, pids):
    """{host: {event: count}} from each host's perf stat (pids: {pid: host})."""
    counts = {}
    for f in Path(out_dir).glob("perf.*"):
        pid = int(f.name.split(".")[1])
        if pid not in pids:
            continue
        table = {}
        for line in f.read_text().splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[0] and not line.startswith("#"):
                try:
                    value = float(fields[0])
                except ValueError:
                    continue
                event = fields[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "syscalls")
                table[event] = value
        counts[pids[pid]] = table
    return counts


# Where an instruction counted by callgrind belongs (its function's own
# count, not its callees'); first match wins.
CATEGORIES = (
    ("start-up (dynamic loader)", r"dl-|_dl_|ld-linux"),
    ("ORB marshalling", r"cdrStream|cdrMemoryStream|operator<<=|operator>>=|marshal|octet_array|copyInputData|"
                        r"copyOutputData|InputOverrun|OutputOverrun|reserveOutputSpace|fetchInputData|"
                        r"PacketHeader::"),
    ("ORB connection watching (SocketCollection)", r"SocketCollection|SocketHolder|AcceptAndMonitor"),
    ("ORB stubs and skeletons (generated)", r"_impl_|_objref_|_pof_|_0RL_|scabenchSK"),
    ("runtime (ports, records, flow, queues)", r"scabench::|BoundedQueue|Resequencer"),
    ("copies (memcpy)", r"mem(cpy|move|set)"),
    ("locks and condition variables", r"pthread_(mutex|cond|rwlock)|futex|__lll|omni_(mutex|condition)"),
    ("heap", r"malloc|free|_int_|operator new|operator delete|tcache"),
    ("system call wrappers", r"\b(poll|recv|recvfrom|send|sendto|read|write|clock_nanosleep|syscall|"
                             r"__libc_|asynccancel|gettimeofday|clock_gettime)\b|asynccancel|__GI_"),
    ("ORB call path (GIOP, dispatch, POA, threads)", r"omni|giop|GIOP|CORBA|POA|_dispatch|_invoke|upcall"),
)


def callgrind_categories(path):
    """{category: instructions} of one callgrind output (each function's own count)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", str(path)],
                         capture_output=True, text=True).stdout
    totals = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        where = next((name for name, pattern in CATEGORIES if re.search(pattern, m.group(2))), "other")
        totals[where] = totals.get(where, 0) + int(m.group(1).replace(",", ""))
    return totals


def callgrind_by_host(out_dir, pids):
    """{host: {category: instructions}} for the run's hosts (pids: {pid: host});
    other scabench-host runs (the spec check's --describe) are left out."""
    out = {}
    for f in Path(out_dir).glob("callgrind.*"):
        pid = int(f.name.split(".")[1])
        if pid in pids:
            out[pids[pid]] = callgrind_categories(f)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--call", default="twoway,oneway")
    ap.add_argument("--sync", default="transport", help="for oneway calls")
    ap.add_argument("--dispatch", default="pool")
    ap.add_argument("--transport", default="tcp,unix", help="tcp, unix, or collocated")
    ap.add_argument("--rate", type=float, default=40.0, help="packets/s; 0: flat out")
    ap.add_argument("--samples", type=int, default=2000, help="floats per packet (the granularity study's B)")
    ap.add_argument("--stages", default="0", help="pass-through stages between producer and sink, e.g. 0,1")
    ap.add_argument("--packets", default=None, help="short,long stream (default: 1 s and 6 s at --rate, "
                                                    "2000,12000 flat out)")
    ap.add_argument("--cores", default="0", help='"all" or a list such as 0 or 0,1')
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--orb", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--wrap", choices=sorted(WRAPPERS), default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    for kv in args.orb:
        key, _, value = kv.partition("=")
        runner.BASE_ORB_OPTIONS = runner.BASE_ORB_OPTIONS + [f"-ORB{key}", value]
    cores = "all" if args.cores == "all" else [int(c) for c in args.cores.split(",")]
    if args.packets:
        short, long = (int(n) for n in args.packets.split(","))
    elif args.rate > 0:
        short, long = int(args.rate), int(args.rate * 6)
    else:
        short, long = 2000, 12000
    period_us = int(round(1e6 / args.rate)) if args.rate > 0 else 0
    wrap_out = None
    if args.wrap:
        wrap_out = Path(tempfile.mkdtemp(prefix=f"hop-{args.wrap}-out-"))
        os.environ["SCABENCH_WRAP_OUT"] = str(wrap_out)
        os.environ["SCABENCH_BIN_DIR"] = str(make_wrapper_dir(args.wrap, bin_dir()))

    report = {"args": vars(args), "orb_options": runner.BASE_ORB_OPTIONS, "points": []}
    for call in args.call.split(","):
        for transport in args.transport.split(","):
            chains = {}
            for stages in (int(s) for s in args.stages.split(",")):
                spec_args = dict(call=call, transport="tcp" if transport == "collocated" else transport,
                                 stages=stages, samples=args.samples, period_us=period_us, cores=cores,
                                 sync=args.sync, collocated=transport == "collocated", dispatch=args.dispatch)
                points, raw = [], []
                for _ in range(args.repeats):
                    runs = {}
                    for n in (short, long):
                        if wrap_out:
                            for f in wrap_out.iterdir():
                                f.unlink()
                        runs[n] = run_once(spec_for(packets=n, **spec_args))
                        if args.wrap == "perf":
                            runs[n]["perf"] = perf_counts(wrap_out, runs[n]["pids"])
                        elif args.wrap == "callgrind":
                            runs[n]["callgrind"] = callgrind_by_host(wrap_out, runs[n]["pids"])
                    points.append(per_packet(runs[short], runs[long], long - short))
                    raw.append(runs)
                hosts = median_of(points)
                point = {"call": call, "transport": raw[0][short]["transport"],
                         "placement": "collocated" if transport == "collocated" else "process",
                         "stages": stages, "rate": args.rate, "samples": args.samples, "packets": [short, long],
                         "hosts": hosts, "total": total(hosts),
                         "foreign_pct": [r[n]["foreign_pct"] for r in raw for n in r],
                         "send_us_p50": statistics.median(r[long]["send_us_p50"] for r in raw)}
                if args.wrap == "perf":
                    point["perf_per_packet"] = perf_per_packet(raw, short, long)
                if args.wrap == "callgrind":
                    point["instructions_per_packet"] = callgrind_per_packet(raw, short, long)
                chains[stages] = point
                report["points"].append(point)
                show(point)
            if len(chains) > 1:
                ks = sorted(chains)
                lo, hi = chains[ks[0]]["total"], chains[ks[-1]]["total"]
                hop = {k: (hi[k] - lo[k]) / (ks[-1] - ks[0]) for k in lo}
                report.setdefault("per_hop", []).append({"call": call, "transport": transport, **hop})
                print(f"  one more hop ({call}, {transport}): {hop['cpu_us']:.1f} µs CPU "
                      f"(user {hop['user_us']:.1f}, system {hop['system_us']:.1f}), "
                      f"{hop['vcsw']:.2f} voluntary + {hop['ivcsw']:.2f} involuntary switches per packet")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    if args.wrap:
        shutil.rmtree(os.environ["SCABENCH_BIN_DIR"], ignore_errors=True)
        shutil.rmtree(wrap_out, ignore_errors=True)


def callgrind_per_packet(raw, short, long):
    """{host: {category: instructions per packet}}, median over repeats."""
    per = []
    for r in raw:
        a, b = r[long]["callgrind"], r[short]["callgrind"]
        per.append({h: {c: (a[h].get(c, 0) - b[h].get(c, 0)) / (long - short) for c in set(a[h]) | set(b[h])}
                    for h in a})
    hosts = per[0].keys()
    return {h: {c: round(statistics.median(p[h].get(c, 0) for p in per))
                for c in sorted(set().union(*(p[h] for p in per)))} for h in hosts}


def perf_per_packet(raw, short, long):
    """{host: {event: per packet}} (task-clock in µs), median over repeats."""
    per = []
    for r in raw:
        a, b = r[long]["perf"], r[short]["perf"]
        per.append({h: {e: (a[h][e] - b[h].get(e, 0)) / (long - short) * (1e3 if e == "task-clock" else 1)
                        for e in a[h]} for h in a if h in b})
    hosts = per[0].keys()
    return {h: {e: round(statistics.median(p[h][e] for p in per), 3) for e in per[0][h]} for h in hosts}


def show(point):
    t = point["total"]
    print(f"{point['call']:7s} {point['transport']:5s} {point['placement']:10s} stages={point['stages']} "
          f"rate={point['rate']:g}: {t['cpu_us']:.1f} µs CPU/packet (user {t['user_us']:.1f}, system "
          f"{t['system_us']:.1f}), {t['vcsw']:.2f} vcsw + {t['ivcsw']:.2f} ivcsw; send p50 "
          f"{point['send_us_p50']:.1f} µs")
    for host, h in point["hosts"].items():
        print(f"    {host:8s} {h['cpu_us']:7.1f} µs  (user {h['user_us']:.1f}, system {h['system_us']:.1f})"
              f"  vcsw {h['vcsw']:.2f} ivcsw {h['ivcsw']:.2f}")
    for host, events in point.get("perf_per_packet", {}).items():
        shown = ", ".join(f"{e} {v:g}" for e, v in events.items() if abs(v) >= 0.01)
        print(f"    {host} per packet (perf stat; task-clock in µs): {shown}")
    if "instructions_per_packet" in point:
        for host, cats in point["instructions_per_packet"].items():
            shown = ", ".join(f"{c} {v}" for c, v in sorted(cats.items(), key=lambda kv: -kv[1]) if abs(v) >= 20)
            print(f"    {host} instructions/packet: total {sum(cats.values())}: {shown}")


if __name__ == "__main__":
    main()

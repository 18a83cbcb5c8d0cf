"""What a hop between processes costs in CPU, per packet: a producer sends
packets of B floats through K pass-through stages (work none) to a sink,
each component a host process of its own, over the real launcher and
hosts (docs/findings/hop-cost.md).

Each run measures a steady window (after a warm-up) of every host: its
threads' run time from /proc/PID/task/TID/schedstat (nanoseconds, what the
scheduler charged them, user and system together) and their voluntary and
involuntary context switches, divided by the packets the sink finished in
the window (its record file's header). CPU time moves far less with other
load on the machine than wall time does, though a busy machine still
inflates it (cold caches); the counts do not move. With --stages 0,1 the
difference between the two chains is one more hop (a stage's receive and
forward: what each of W11's extra components adds). Medians of --repeats
runs.

    .venv/bin/python scripts/hop_cost.py                       # 40 packets/s on CPU 0, as the granularity study
    .venv/bin/python scripts/hop_cost.py --rate 0 --cores all  # flat out on every core
    .venv/bin/python scripts/hop_cost.py --transport unix,shm  # a socket hop beside a shared-memory one
    .venv/bin/python scripts/hop_cost.py --orb connectionWatchPeriod=50000 --json out.json
    .venv/bin/python scripts/hop_cost.py --spec experiments/ordering/oneway-resequence-credits.toml \
        --spec-packets 200000 --set stage1.work_us=20 --set stage1.work_jitter_us=40 ... --perf --repeats 1

--orb KEY=VALUE adds -ORBKEY VALUE to every host, after the runner's own
options (a candidate setting, measured before it goes into the runner).
--perf counts each host's system calls, by call, over the same window
(perf stat on the kernel's tracepoints, which unlike strace leave the
hosts' timing alone). --callgrind runs every scabench-host under callgrind
(a wrapper in a bin directory of its own, SCABENCH_BIN_DIR) with a short
and a long stream and prints the instructions per packet of the long one's
extra packets, by category; --profile does the same with perf record's
CPU-clock samples (kernel and user: where each 50 µs of CPU fell). --spec measures a whole spec's runs instead
(its ratio, and per host and packet the rusage CPU and switches and, with
--perf, the counts of perf stat wrapped around each host).
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
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from scabench.model.spec import SCHEDULERS
from scabench.model.spec_toml import parse_spec
from scabench.paths import bin_dir
from scabench.run import runner
from scabench.run.watchdog import progress

PERF_EVENTS = ["task-clock", "context-switches", "cpu-migrations", "page-faults", "raw_syscalls:sys_enter"] + [
    f"syscalls:sys_enter_{name}"
    for name in (
        "poll",
        "ppoll",
        "epoll_wait",
        "recvfrom",
        "recvmsg",
        "sendto",
        "sendmsg",
        "read",
        "write",
        "writev",
        "futex",
        "clock_nanosleep",
        "sched_yield",
    )
]


def spec_for(
    call,
    transport,
    stages,
    samples,
    period_us,
    packets,
    cores,
    sync,
    collocated,
    dispatch,
    policy_items=(),
    scheduler="normal",
):
    names = ["src"] + [f"stg{i + 1}" for i in range(stages)] + ["snk"]
    components = [{"name": "src", "kind": "producer", "packets": packets, "samples": samples, "period_us": period_us}]
    components += [{"name": n, "kind": "stage", "work": "none"} for n in names[1:-1]]
    components += [{"name": "snk", "kind": "sink"}]
    policy = {"call": call, "dispatch": dispatch}
    if call == "oneway":
        policy["sync"] = sync
    doc = {
        "experiment": {"name": "hop-cost"},
        "run": {
            "sample_type": "float",
            "transport": transport,
            "cores": cores,
            "timeout_s": 600,
            "scheduler": scheduler,
        },
        "component": components,
        "chain": names,
        "policy": policy,
    }
    if collocated:
        doc["placement"] = {"hosts": [names]}
    spec = parse_spec(doc, Path("hop-cost.toml"))
    if policy_items:
        from scabench.model.checks import parse_overrides

        spec = spec.with_policy(parse_overrides(policy_items, "--policy"), where="--policy")
    return spec


# ------------------------------------------------------------------ window


def threads_of(pid):
    """(run ns, voluntary, involuntary switches) summed over a process's live threads."""
    ns = vol = invol = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            ns += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()[0])
            for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
                if line.startswith("voluntary_ctxt_switches"):
                    vol += int(line.split()[1])
                elif line.startswith("nonvoluntary_ctxt_switches"):
                    invol += int(line.split()[1])
        except OSError:
            continue  # a thread that ended meanwhile
    return ns, vol, invol


def record_dir(pid):
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return argv[argv.index("--record-dir") + 1]


def measure_window(pids, names, warmup_s, window_s, sink, perf):
    """Per host: CPU ns and switches over the window, perf counts if asked;
    and the packets the sink finished in it."""
    rundir = record_dir(pids[0])
    time.sleep(warmup_s)
    tmp = Path(tempfile.mkdtemp(prefix="hop-perf-"))
    before = {pid: threads_of(pid) for pid in pids}
    done0 = progress(rundir)[sink][1]
    if None in before.values():
        raise SystemExit("the stream ended before the window: a longer stream (--packets), or a shorter warm-up")
    t0 = time.monotonic()
    perfs = (
        [
            subprocess.Popen(
                [
                    "perf",
                    "stat",
                    "-x,",
                    "-o",
                    str(tmp / str(pid)),
                    "-e",
                    ",".join(PERF_EVENTS),
                    "-p",
                    str(pid),
                    "--",
                    "sleep",
                    str(window_s),
                ]
            )
            for pid in pids
        ]
        if perf
        else []
    )
    time.sleep(window_s)
    after = {pid: threads_of(pid) for pid in pids}
    done1 = progress(rundir)[sink][1]
    if None in after.values():
        raise SystemExit("the stream ended inside the window: a longer stream (--packets), or a shorter window")
    wall = time.monotonic() - t0
    for p in perfs:
        p.wait()
    hosts = {}
    for pid, name in zip(pids, names):
        b, a = before[pid], after[pid]
        hosts[name] = {"cpu_ns": a[0] - b[0], "vcsw": a[1] - b[1], "ivcsw": a[2] - b[2]}
        if perf:
            hosts[name]["perf"] = read_perf(tmp / str(pid))
    shutil.rmtree(tmp, ignore_errors=True)
    return {"hosts": hosts, "packets": done1 - done0, "wall_s": wall}


def read_perf(path):
    table = {}
    for line in Path(path).read_text().splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[0] and not line.startswith("#"):
            try:
                value = float(fields[0])
            except ValueError:
                continue
            event = fields[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "syscalls")
            table[event] = value * (1e3 if event == "task-clock" else 1)  # msec -> µs
    return table


def run_window(spec, warmup_s, window_s, perf):
    names = [n for n in spec.pipeline_order()]
    result = runner.run_spec(
        spec, on_start=lambda pids, hosts: measure_window(pids, hosts, warmup_s, window_s, names[-1], perf)
    )
    lost = [s.name for s in result.stages if s.received != result.producer.sent]
    if lost:
        raise SystemExit(f"packets lost at {', '.join(lost)}")
    w = result.window
    if not w or w["packets"] <= 0:
        raise SystemExit("no packet was finished in the window: a longer stream, or a shorter warm-up")
    n = w["packets"]
    hosts = {}
    for host, h in w["hosts"].items():
        name = host.split("-", 1)[1]
        hosts[name] = {"cpu_us": h["cpu_ns"] / 1e3 / n, "vcsw": h["vcsw"] / n, "ivcsw": h["ivcsw"] / n}
        for event, v in h.get("perf", {}).items():
            hosts[name][event] = v / n
    return {
        "hosts": hosts,
        "packets_in_window": n,
        "rate": n / w["wall_s"],
        "transport": result.spec["transport"],
        "foreign_pct": result.foreign_cpu_pct,
        "send_us_p50": result.producer.send_us.get("p50"),
    }


def guarded(run_once, args, cores):
    """Waits (at most --quiet-wait s) for other processes to use less than
    --quiet % of the run's cores, runs, and redoes a run that others
    disturbed by more than that (at most --redo times), keeping the least
    disturbed: the machine is shared, and CPU time, though far steadier than
    wall time, still grows with others' load (cold caches)."""
    from scabench.measure.load import wait_for_quiet

    best = None
    for _ in range(args.redo + 1):
        wait_for_quiet(args.quiet, 0.5, args.quiet_wait, None if cores == "all" else cores)
        r = run_once()
        if best is None or r["foreign_pct"] < best["foreign_pct"]:
            best = r
        if r["foreign_pct"] <= args.quiet:
            break
    return best


# --------------------------------------------------------------- callgrind

# Where an instruction counted by callgrind belongs (its function's own
# count, not its callees'); first match wins.
CATEGORIES = (
    ("start-up (dynamic loader)", r"dl-|_dl_|ld-linux"),
    (
        "ORB marshalling",
        r"cdrStream|cdrMemoryStream|operator<<=|operator>>=|marshal|octet_array|copyInputData|"
        r"copyOutputData|InputOverrun|OutputOverrun|reserveOutputSpace|fetchInputData|"
        r"PacketHeader::",
    ),
    ("ORB connection watching (SocketCollection)", r"SocketCollection|SocketHolder|AcceptAndMonitor"),
    ("ORB stubs and skeletons (generated)", r"_impl_|_objref_|_pof_|_0RL_|scabenchSK"),
    ("shared-memory ring", r"scabench::shm::"),
    ("runtime (ports, records, flow, queues)", r"scabench::|BoundedQueue|Resequencer"),
    ("copies (memcpy)", r"mem(cpy|move|set)"),
    ("locks and condition variables", r"pthread_(mutex|cond|rwlock)|futex|__lll|omni_(mutex|condition)"),
    ("heap", r"malloc|free|_int_|operator new|operator delete|tcache"),
    (
        "system call wrappers",
        r"\b(poll|recv|recvfrom|send|sendto|read|write|clock_nanosleep|syscall|"
        r"__libc_|gettimeofday|clock_gettime)\b|asynccancel|__GI_",
    ),
    ("ORB call path (GIOP, dispatch, POA, threads)", r"omni|giop|GIOP|CORBA|POA|_dispatch|_invoke|upcall"),
)


def callgrind_categories(path):
    """{category: instructions} of one callgrind output (each function's own count)."""
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", str(path)],
        capture_output=True,
        text=True,
    ).stdout
    totals = {}
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not m or "PROGRAM TOTALS" in line:
            continue
        where = next((name for name, pattern in CATEGORIES if re.search(pattern, m.group(2))), "other")
        totals[where] = totals.get(where, 0) + int(m.group(1).replace(",", ""))
    return totals


def wrapper_bin_dir(real_bin, wrap):
    """A bin directory whose scabench-host runs the real one under `wrap`
    (a command line ending where the program goes; the spec check's
    --describe runs bare)."""
    d = Path(tempfile.mkdtemp(prefix="hop-bin-"))
    for p in Path(real_bin).iterdir():
        if p.name != "scabench-host":
            (d / p.name).symlink_to(p)
    real = Path(real_bin) / "scabench-host"
    host = d / "scabench-host"
    host.write_text(
        f'#!/bin/sh\ncase " $* " in *" --describe "*) exec "{real}" "$@";; esac\nexec {wrap} "{real}" "$@"\n'
    )
    host.chmod(0o755)
    return d


def callgrind_wrap(out_dir):
    return f'valgrind --tool=callgrind --callgrind-out-file="{out_dir}/out.%p"'


# perf record's CPU-clock samples (every 50 µs of a thread's CPU), kernel and
# user alike: where the CPU went, by the function a sample fell in. In this VM
# a sample taken while interrupts are off lands where they come back on, so
# the scheduler's switch and wake-up show as finish_task_switch and
# _raw_spin_unlock_irqrestore.
PROFILE_PERIOD_US = 50
PROFILE_CATEGORIES = (
    (
        "kernel: context switch and wake-up",
        r"\[k\] (finish_task_switch|__schedule|schedule|_raw_spin_unlock_irq|"
        r"try_to_wake_up|ttwu|enqueue_|dequeue_|update_curr|pick_next|"
        r"select_task_rq|psi_|set_next_entity|put_prev|__switch_to|"
        r"switch_mm|native_sched|sched_)",
    ),
    ("kernel: futex", r"\[k\] .*futex"),
    (
        "kernel: poll and the watching thread's pipe",
        r"\[k\] (do_sys_poll|do_poll|sock_poll|tcp_poll|unix_poll|"
        r"pipe_poll|fdget|fput|poll_|__pollwait|pipe_|anon_pipe|"
        r"vfs_read|vfs_write|ksys_read|ksys_write)",
    ),
    (
        "kernel: the stages' work clock",
        r"\[k\] (thread_cpu_clock|posix_cpu_clock|cpu_clock_sample|"
        r"posix_clock|__x64_sys_clock_gettime)",
    ),
    (
        "kernel: copies",
        r"\[k\] (_copy_to_iter|_copy_from_iter|copy_user|rep_movs|memcpy|__memcpy|"
        r"_copy_from_user|_copy_to_user|skb_copy)",
    ),
    (
        "kernel: tcp/ip",
        r"\[k\] (tcp_|__tcp|ip_|__ip|inet|__inet|skb|__skb|kfree_skb|net_|__net|netif|"
        r"__netif|dev_|__dev|loopback|process_backlog|napi|sk_|__sk|sock_def|release_sock|"
        r"lock_sock|__release_sock|validate_xmit|nf_|ipv4|raw_v4|__alloc_skb|sock_wfree|"
        r"sock_rfree|__kfree_skb|handle_softirqs|do_softirq|__local_bh|_raw_spin_lock_bh|bbr_|"
        r"dst_|tcp4|__tcp4|ipv6|raw_local_deliver|__napi|ip_rcv|__xfrm|ktime_get_with_offset)",
    ),
    ("kernel: unix sockets", r"\[k\] (unix_|__unix|skb_recv|__skb_recv|__skb_try_recv|consume_skb)"),
    (
        "kernel: system call entry and exit",
        r"\[k\] (do_syscall|entry_SYSCALL|syscall_|exit_to_user|"
        r"__x64_sys|x64_sys_call|irqentry|__rseq|rseq_|__get_user|"
        r"fpregs|restore_fpregs|switch_fpu|__fdget|__fget|sock_sendmsg|"
        r"sock_recvmsg|__sys_|sock_read|sock_write|sockfd|"
        r"security_|apparmor|selinux|import_single|__check_object|"
        r"check_heap|__virt_addr|__x86_indirect|srso)",
    ),
    (
        "kernel: timers",
        r"\[k\] (hrtimer|__hrtimer|do_nanosleep|clock_nanosleep|tick_|timerqueue|"
        r"lapic|clockevents|read_tsc|ktime)",
    ),
    (
        "kernel: memory",
        r"\[k\] (kmem|kmalloc|__kmalloc|kfree|slab|__slab|___slab|page|__page|alloc_pages|"
        r"free_unref|mod_memcg|memcg|__mod|get_page|put_page|folio|exc_page_fault|"
        r"handle_mm_fault|do_user_addr_fault|__handle_mm_fault)",
    ),
    ("kernel: other", r"\[k\]"),
    ("omniORB", r"libomniORB|libomnithread"),
    ("clock reads (vDSO)", r"\[vdso\]"),
    ("runtime and stubs", r"libscabench|scabench-host"),
    ("libc (locks, heap, memcpy, syscall stubs)", r"libc\.so|libstdc\+\+"),
    ("start-up (dynamic loader)", r"ld-linux"),
)


def profile_wrap(out_dir):
    return f'perf record -q -e cpu-clock -c {PROFILE_PERIOD_US * 1000} -o "{out_dir}/out.$$"'


def profile_categories(path):
    """{category: CPU µs} of one perf record file, by where each sample fell."""
    out = subprocess.run(
        [
            "perf",
            "report",
            "-i",
            str(path),
            "--no-children",
            "--sort",
            "dso,sym",
            "-g",
            "none",
            "--stdio",
            "-F",
            "sample,dso,sym",
        ],
        capture_output=True,
        text=True,
    ).stdout
    totals = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\d+)\s+(\S+)\s+(\[[k.]\].*)$", line)
        if not m:
            continue
        where_text = f"{m.group(3)} {m.group(2)}"
        where = next((name for name, pattern in PROFILE_CATEGORIES if re.search(pattern, where_text)), "other")
        totals[where] = totals.get(where, 0) + int(m.group(1)) * PROFILE_PERIOD_US
    return totals


def run_wrapped(spec_of, short, long, out_dir, categories):
    """{host: {category: per packet}} of the long run's extra packets, from
    each host's wrapped output (out.PID) read by `categories`."""
    counts = {}
    for n in (short, long):
        for f in Path(out_dir).iterdir():
            f.unlink()
        result = runner.run_spec(spec_of(n))
        pids = {h["pid"]: "+".join(h["components"]) for h in result.hosts}
        counts[n] = {
            pids[int(f.name.split(".")[1])]: categories(f)
            for f in Path(out_dir).glob("out.*")
            if int(f.name.split(".")[1]) in pids
        }
    a, b = counts[long], counts[short]
    return {h: {c: (a[h].get(c, 0) - b[h].get(c, 0)) / (long - short) for c in set(a[h]) | set(b[h])} for h in a}


# --------------------------------------------------------------- whole spec


def run_whole_spec(args, extra):
    """--spec: the spec's runs (its own packets unless --spec-packets), with
    --set and --policy applied: each run's ratio, stalls, reordering and
    loss, and per host and packet its rusage CPU and context switches. The
    hosts' ORB options (--orb) are already in the runner's assembly."""
    from scabench.model.checks import check_network, parse_overrides, parse_property_overrides
    from scabench.model.load import load_spec
    from scabench.model.overrides import Overrides, apply_overrides

    runs = []
    perf_dir = None
    if args.perf:
        # Each host under perf stat, which follows every thread it starts (a
        # perf stat -p attached later would miss the ring's spare threads).
        perf_dir = Path(tempfile.mkdtemp(prefix="hop-spec-perf-"))
        wrap = f'perf stat -x, -o "{perf_dir}/out.$$" -e {",".join(PERF_EVENTS)} --'
        os.environ["SCABENCH_BIN_DIR"] = str(wrapper_bin_dir(bin_dir(), wrap))
    for i in range(args.repeats):
        spec = load_spec(Path(args.spec))
        if args.transport:  # --transport shm: the spec's own hops over shared memory
            spec.transport = args.transport
            check_network(spec)
        overrides = Overrides(
            packets=args.spec_packets or None,
            cores=[int(c) for c in args.cores.split(",")] if args.cores not in ("spec", "all") else None,
            policy=parse_overrides(args.policy, "--policy") if args.policy else {},
            properties=parse_property_overrides(args.set, "--set"),
            scheduler=args.scheduler if args.scheduler != "normal" else None,
        )
        spec = apply_overrides(
            spec,
            overrides,
            {"packets": "--spec-packets", "policy": "--policy", "properties": "--set", "scheduler": "--scheduler"},
        )
        result = runner.run_spec(spec, on_start=lambda pids, names: follow_threads(pids, names, perf_dir))
        packets = max(s.received or 0 for s in result.stages)
        followed = result.window or {}
        hosts = {}
        for h in result.hosts:
            ru = h.get("rusage") or {}
            hosts["+".join(h["components"])] = {
                "cpu_us": (ru.get("user_s", 0.0) + ru.get("system_s", 0.0)) / packets * 1e6,
                "user_us": ru.get("user_s", 0.0) / packets * 1e6,
                "system_us": ru.get("system_s", 0.0) / packets * 1e6,
                "vcsw": ru.get("voluntary_ctxsw", 0) / packets,
                "ivcsw": ru.get("involuntary_ctxsw", 0) / packets,
            }
        for name, f in followed.items():
            key = next((k for k in hosts if name.split("-", 1)[-1] in k.split("+")), name)
            if key in hosts:
                hosts[key]["threads"] = {
                    role: {"vcsw": v[0] / packets, "ivcsw": v[1] / packets, "n": v[2]}
                    for role, v in f["threads"].items()
                }
                hosts[key].update({event: v / packets for event, v in f.get("perf", {}).items()})
        last_ms = max((st.last_packet_ms or 0.0) for st in result.stages)
        run = {
            "transport": spec.transport,
            "ratio": result.overhead_ratio,
            "last_packet_ms": last_ms,
            "floor_ms": result.floor_ms,
            "stalls": result.stalls,
            "foreign_cpu_pct": result.foreign_cpu_pct,
            "received": [s.received for s in result.stages],
            "reordered": [s.reordered_from_original for s in result.stages],
            "output_reordered": [s.output_reordered_from_previous for s in result.stages],
            "cpu_s": sum(
                (h.get("rusage") or {}).get("user_s", 0.0) + (h.get("rusage") or {}).get("system_s", 0.0)
                for h in result.hosts
            ),
            "hosts": hosts,
        }
        runs.append(run)
        ratio = "no floor" if run["ratio"] is None else f"{run['ratio']:.3f} x floor"
        print(
            f"run {i + 1}: {ratio} ({run['last_packet_ms']:.0f} ms over {run['floor_ms']:.0f}), "
            f"received {run['received']}, reordered {run['reordered']} (output {run['output_reordered']}), "
            f"stalls {len(run['stalls'])}, "
            f"CPU {run['cpu_s']:.1f} s, foreign {run['foreign_cpu_pct'] or 0:.0f} %"
        )
        for host, h in hosts.items():
            print(
                f"    {host:12s} {h['cpu_us']:7.1f} µs/packet (user {h['user_us']:.1f}, system {h['system_us']:.1f}), "
                f"vcsw {h['vcsw']:.2f} ivcsw {h['ivcsw']:.2f}" + (f", futex {h['futex']:.2f}" if "futex" in h else "")
            )
            for role, t in sorted(h.get("threads", {}).items()):
                print(f"        {role:14s} x{t['n']:<3d} vcsw {t['vcsw']:.3f} ivcsw {t['ivcsw']:.3f}")
    return {"args": vars(args), "orb_options": extra, "runs": runs}


def follow_threads(pids, names, perf_dir):
    """--spec: each host's voluntary and involuntary switches by thread name
    (the runtime names its threads: sb-ring-rx, sb-reorder, sb-worker, ...;
    the rest are the ORB's and the main thread, under the program's name),
    read every 50 ms until the host exits, a thread's last reading kept; and
    with --perf (each host run under perf stat, its output in perf_dir named
    by the pid the launcher announced), perf stat's counts for the whole run."""
    hosts = {}
    for pid in pids:  # under perf stat, the host is perf's child
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            comm, children = "", []
        hosts[pid] = int(children[0]) if comm == "perf" and children else pid
    last = {pid: {} for pid in pids}  # tid -> (name, voluntary, involuntary)
    alive = set(pids)
    while alive:
        for pid in list(alive):
            host = hosts[pid]
            try:
                tids = os.listdir(f"/proc/{host}/task")
            except OSError:
                alive.discard(pid)
                continue
            for tid in tids:
                try:
                    comm = Path(f"/proc/{host}/task/{tid}/comm").read_text().strip()
                    v = i = 0
                    for line in Path(f"/proc/{host}/task/{tid}/status").read_text().splitlines():
                        if line.startswith("voluntary_ctxt_switches"):
                            v = int(line.split()[1])
                        elif line.startswith("nonvoluntary_ctxt_switches"):
                            i = int(line.split()[1])
                    last[pid][tid] = (comm if comm.startswith("sb-") else "orb+main", v, i)
                except OSError:
                    continue
        time.sleep(0.05)
    out = {}
    for pid, name in zip(pids, names):
        threads = {}
        for role, v, i in last[pid].values():
            t = threads.setdefault(role, [0, 0, 0])
            t[0] += v
            t[1] += i
            t[2] += 1
        out[name] = {"threads": threads}
        if perf_dir is not None:
            path = perf_dir / f"out.{pid}"
            for _ in range(100):  # perf writes once its host has exited
                if path.exists() and path.stat().st_size > 0:
                    break
                time.sleep(0.05)
            if path.exists():
                out[name]["perf"] = read_perf(path)
    return out


# -------------------------------------------------------------------- main


def median_hosts(points, of=statistics.median):
    """Median (or `of`) per host and figure over repeats."""
    hosts = points[0].keys()
    return {h: {k: of(p[h].get(k, 0.0) for p in points) for k in points[0][h]} for h in hosts}


def total(hosts):
    keys = set().union(*(h.keys() for h in hosts.values()))
    return {k: sum(h.get(k, 0.0) for h in hosts.values()) for k in keys}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--call", default="twoway,oneway")
    ap.add_argument("--sync", default="transport", help="for oneway calls")
    ap.add_argument("--dispatch", default="pool")
    ap.add_argument(
        "--scheduler",
        default="normal",
        choices=SCHEDULERS,
        help="the hosts' scheduling class (batch: a thread that wakes does not preempt)",
    )
    ap.add_argument(
        "--transport",
        default=None,
        help="tcp, unix, shm, collocated, or several (default tcp,unix; with --spec, the spec's own)",
    )
    ap.add_argument("--rate", type=float, default=40.0, help="packets/s; 0: flat out")
    ap.add_argument("--samples", type=int, default=2000, help="floats per packet (the granularity study's B)")
    ap.add_argument("--stages", default="0", help="pass-through stages between producer and sink, e.g. 0,1")
    ap.add_argument("--cores", default="0", help='"all" or a list such as 0 or 0,1')
    ap.add_argument("--warmup", type=float, default=1.0, help="seconds before the window")
    ap.add_argument("--window", type=float, default=5.0, help="seconds measured")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quiet", type=float, default=20.0, help="%% of the cores others may use (wait, redo)")
    ap.add_argument("--quiet-wait", type=float, default=20.0, help="seconds to wait for quiet before a run")
    ap.add_argument("--redo", type=int, default=2, help="runs redone when others used more than --quiet")
    ap.add_argument("--packets", type=int, default=400000, help="stream length flat out")
    ap.add_argument("--orb", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--perf", action="store_true", help="count system calls and switches with perf stat")
    ap.add_argument("--callgrind", action="store_true", help="instructions per packet instead of a window")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="where the CPU goes, kernel and user, from perf record samples, instead of a window",
    )
    ap.add_argument("--json", default=None)
    ap.add_argument("--spec", default=None, help="measure this spec's whole runs instead (per packet, per host)")
    ap.add_argument("--set", action="append", default=[], metavar="COMPONENT.KEY=VALUE", help="with --spec")
    ap.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a policy key on every connection, e.g. worker=16 or ordering=resequence",
    )
    ap.add_argument("--spec-packets", type=int, default=None, help="with --spec: packets per run")
    args = ap.parse_args()
    if args.spec and args.cores == "0":
        args.cores = "spec"  # a spec keeps its own cores unless told
    if args.transport is None and not args.spec:
        args.transport = "tcp,unix"

    extra = []
    for kv in args.orb:
        key, _, value = kv.partition("=")
        extra += [f"-ORB{key}", value]
    if extra:
        build = runner.build_assembly

        def with_extra(*a, **k):
            assembly = build(*a, **k)
            for h in assembly["hosts"]:
                h["orb_options"] = h["orb_options"] + extra
            return assembly

        runner.build_assembly = with_extra
    if args.spec:
        point = run_whole_spec(args, extra)
        if args.json:
            Path(args.json).write_text(json.dumps(point, indent=1))
        return
    cores = "all" if args.cores == "all" else [int(c) for c in args.cores.split(",")]
    period_us = int(round(1e6 / args.rate)) if args.rate > 0 else 0
    if args.rate > 0:
        packets = int(args.rate * (args.warmup + args.window + 1.5)) + 2
    else:
        packets = args.packets  # the stream may end inside the window: its packets are counted
    wrapped = "callgrind" if args.callgrind else "profile" if args.profile else None
    cg_out = None
    if wrapped:
        cg_out = Path(tempfile.mkdtemp(prefix=f"hop-{wrapped}-out-"))
        wrap = callgrind_wrap(cg_out) if args.callgrind else profile_wrap(cg_out)
        os.environ["SCABENCH_BIN_DIR"] = str(wrapper_bin_dir(bin_dir(), wrap))

    report = {"args": vars(args), "points": [], "per_hop": []}
    for call in args.call.split(","):
        for transport in args.transport.split(","):
            chains = {}
            for stages in (int(s) for s in args.stages.split(",")):

                def spec_of(n):
                    return spec_for(
                        call=call,
                        transport="tcp" if transport == "collocated" else transport,
                        stages=stages,
                        samples=args.samples,
                        period_us=period_us,
                        packets=n,
                        cores=cores,
                        sync=args.sync,
                        collocated=transport == "collocated",
                        dispatch=args.dispatch,
                        policy_items=args.policy,
                        scheduler=args.scheduler,
                    )

                point = {
                    "call": call,
                    "placement": "collocated" if transport == "collocated" else "process",
                    "stages": stages,
                    "rate": args.rate,
                    "samples": args.samples,
                    "dispatch": args.dispatch,
                    "policy": args.policy,
                    "orb_options": extra,
                }
                if wrapped:
                    short, long = (
                        (int(args.rate * 1) + 2, int(args.rate * args.window) + 2)
                        if args.rate > 0
                        else (2000, 2000 + args.packets // 10)
                    )
                    point["transport"] = spec_of(short).transport
                    if args.callgrind:
                        point["instructions_per_packet"] = run_wrapped(
                            spec_of, short, long, cg_out, callgrind_categories
                        )
                    else:
                        point["cpu_us_per_packet_by_where"] = run_wrapped(
                            spec_of, short, long, cg_out, profile_categories
                        )
                else:
                    runs = [
                        guarded(lambda: run_window(spec_of(packets), args.warmup, args.window, args.perf), args, cores)
                        for _ in range(args.repeats)
                    ]
                    point["transport"] = runs[0]["transport"]
                    point["hosts"] = median_hosts([r["hosts"] for r in runs])
                    point["total"] = total(point["hosts"])
                    # Others' load only ever adds CPU time (cold caches, steal): the least of the
                    # repeats is the closest to an undisturbed run.
                    point["least_cpu_us"] = min(total(r["hosts"])["cpu_us"] for r in runs)
                    point["runs"] = runs
                    point["rate_measured"] = statistics.median(r["rate"] for r in runs)
                    point["foreign_pct"] = [r["foreign_pct"] for r in runs]
                    point["send_us_p50"] = statistics.median(r["send_us_p50"] for r in runs)
                chains[stages] = point
                report["points"].append(point)
                show(point)
            if len(chains) > 1 and not wrapped:
                ks = sorted(chains)
                lo, hi = chains[ks[0]]["total"], chains[ks[-1]]["total"]
                hop = {k: (hi.get(k, 0.0) - lo.get(k, 0.0)) / (ks[-1] - ks[0]) for k in hi}
                hop["least_cpu_us"] = (chains[ks[-1]]["least_cpu_us"] - chains[ks[0]]["least_cpu_us"]) / (
                    ks[-1] - ks[0]
                )
                report["per_hop"].append(
                    {
                        "call": call,
                        "transport": chains[ks[0]]["transport"],
                        "placement": chains[ks[0]]["placement"],
                        **hop,
                    }
                )
                print(
                    f"  one more hop ({call}, {transport}): {hop['cpu_us']:.1f} µs CPU (least "
                    f"{hop['least_cpu_us']:.1f}), "
                    f"{hop['vcsw']:.2f} voluntary + {hop['ivcsw']:.2f} involuntary switches"
                    + (f", {hop['syscalls']:.1f} system calls" if "syscalls" in hop else "")
                    + " per packet"
                )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    if cg_out:
        shutil.rmtree(os.environ["SCABENCH_BIN_DIR"], ignore_errors=True)
        shutil.rmtree(cg_out, ignore_errors=True)


def show(point):
    head = (
        f"{point['call']:7s} {point['transport']:5s} {point['placement']:10s} stages={point['stages']} "
        f"rate={point['rate']:g}"
    )
    for key, what, least in (
        ("instructions_per_packet", "instructions/packet", 20),
        ("cpu_us_per_packet_by_where", "CPU µs/packet (perf samples)", 0.05),
    ):
        if key in point:
            print(head)
            for host, cats in point[key].items():
                shown = ", ".join(
                    f"{c} {v:.{0 if least >= 1 else 1}f}"
                    for c, v in sorted(cats.items(), key=lambda kv: -kv[1])
                    if abs(v) >= least
                )
                print(f"    {host} {what}: total {sum(cats.values()):.{0 if least >= 1 else 1}f}: {shown}")
            return
    t = point["total"]
    print(
        f"{head} ({point['rate_measured']:.0f}/s): {t['cpu_us']:.1f} µs CPU/packet (least "
        f"{point['least_cpu_us']:.1f}), {t['vcsw']:.2f} vcsw + "
        f"{t['ivcsw']:.2f} ivcsw; send p50 {point['send_us_p50']:.1f} µs; foreign "
        + "/".join(f"{f:.0f}" for f in point["foreign_pct"])
        + " %"
    )
    for host, h in point["hosts"].items():
        extra = "".join(
            f", {e} {h[e]:.2f}" for e in h if e not in ("cpu_us", "vcsw", "ivcsw", "task-clock") and abs(h[e]) >= 0.01
        )
        print(f"    {host:8s} {h['cpu_us']:7.1f} µs  vcsw {h['vcsw']:.2f} ivcsw {h['ivcsw']:.2f}{extra}")


if __name__ == "__main__":
    main()

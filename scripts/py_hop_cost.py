"""What one hop through a stage costs, Python against C++: a client here
pushes two-way packets (work none) through `scabench-py-stage` and through
the C++ stage in `scabench-host`, each forwarding two-way to a sink here.
Both paths have the same two socket hops and the same client and sink; the
difference is the stage. Two figures per path: the round trip per packet
(wall clock: on a busy machine it moves with the load) and the CPU the
stage's process spent per packet (user + system, from /proc: what the
stage itself costs, nearly unmoved by other load). Medians of `--rounds`
interleaved rounds of `--packets` packets, per sample count.

    .venv/bin/python scripts/py_hop_cost.py [--packets 2000] [--rounds 7] [--samples 16,1024]
"""

import argparse
import itertools
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from omniORB import CORBA

from scabench.paths import program
from scabench.run.client import (
    LOOPBACK,
    TOKEN,
    NamingService,
    S,
    StageProcess,
    end_process,
    header,
    name,
    props,
    sink_class,
)


def cpu_s(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def per_packet_us(port, links, n, data, pid=None):
    """(wall, CPU of process `pid`) per packet, microseconds; links: the connection's link counter."""
    c0, t0 = cpu_s(pid) if pid else 0.0, time.perf_counter()
    for _ in range(n):
        link = next(links)
        port.pushPacket(header(link), data)
    wall = time.perf_counter() - t0
    return wall / n * 1e6, ((cpu_s(pid) - c0) / n * 1e6 if pid else 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--packets", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--samples", default="16,1024")
    args = ap.parse_args()
    orb = CORBA.ORB_init(["hop"] + LOOPBACK, CORBA.ORB_ID)
    poa = orb.resolve_initial_references("RootPOA")
    poa._get_the_POAManager().activate()
    tmp = Path(tempfile.mkdtemp(prefix="py-hop-"))
    naming = NamingService(tmp / "naming", orb)
    ctx = naming.root.bind_new_context(name("hop_1"))
    sink = sink_class("double")()
    poa.activate_object(sink)
    sink_ref = poa.servant_to_reference(sink)
    py = StageProcess(tmp, ctx, orb.object_to_string(ctx), binding="py")
    read_fd, write_fd = os.pipe()
    host = subprocess.Popen(
        [
            str(program("scabench-host")),
            "--host",
            "h",
            "--status-fd",
            str(write_fd),
            "--record-dir",
            str(tmp),
            "--component",
            "cxx:stage:double",
        ]
        + LOOPBACK,
        pass_fds=(write_fd,),
    )
    os.close(write_fd)
    status = os.fdopen(read_fd)
    try:
        cxx = orb.string_to_object(status.readline().split()[2])._narrow(S.CF.Resource)
        stages = {"python": py.resolve(), "c++": cxx}
        sizes = [int(n) for n in args.samples.split(",")]
        total = len(sizes) * (200 + args.packets * args.rounds) + 16  # the C++ stage's records
        ports = {}
        for key, res in stages.items():
            res.configure(props(work="none") + (props(record_capacity=total) if res is cxx else []))
            res.getPort("out")._narrow(S.CF.Port).connectPort(sink_ref, "to-sink")
            ports[key] = res.getPort("in")._narrow(S.data.dataDouble)
            ports[key].attachSender(TOKEN, None)  # this client is the in-port's sender
            res.start()
        links = {k: itertools.count() for k in ports}
        pids = {"python": py.proc.pid, "c++": host.pid}
        print(
            f"two-way, work none, {args.packets} packets x {args.rounds} rounds, us per packet (median of rounds): "
            "round trip client to sink | CPU of the stage's process"
        )
        for n in sizes:
            data = [float(i) for i in range(n)]
            for k, port in ports.items():
                per_packet_us(port, links[k], 200, data)  # connections open, caches warm
            rounds = {k: [] for k in ports}
            for _ in range(args.rounds):  # interleaved: a burst of load elsewhere hits both alike
                for k, p in ports.items():
                    rounds[k].append(per_packet_us(p, links[k], args.packets, data, pids[k]))
            wall = {k: statistics.median(w for w, _ in v) for k, v in rounds.items()}
            cpu = {k: statistics.median(c for _, c in v) for k, v in rounds.items()}
            text = "   ".join(f"{k}: {wall[k]:6.1f} | {cpu[k]:5.1f}" for k in ports)
            print(
                f"{n:6d} doubles  {text}   python - c++: {wall['python'] - wall['c++']:6.1f} | "
                f"{cpu['python'] - cpu['c++']:5.1f}"
            )
        received = len(sink.packets)
        for res in stages.values():
            res.releaseObject()
        sent = sum(next(c) for c in links.values())  # each counter's next value is what it gave out
        assert received == sent, f"the sink got {received} of {sent} packets: some were refused"
    finally:
        end_process(host)
        py.close()
        naming.close()
        status.close()
        orb.destroy()


if __name__ == "__main__":
    main()

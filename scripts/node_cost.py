"""What a node costs and how fast it answers, on this machine: a real
omniNames, a `scabench node` (heartbeat 1 s) and a client here.

  - the agent's own CPU while idle (heartbeats only), over --idle-s;
  - execute to bound: from execute() to the component's name in the
    waveform's context, for scabench-py-stage and scabench-host, and
    terminate() to its return, --rounds of each;
  - each ended process's CPU as the node reports it (rusage);
  - node_alive() with a 1 s timeout on a hung node (SIGSTOP) and on a
    killed one.

    .venv/bin/python scripts/node_cost.py [--rounds 7] [--idle-s 30]
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from omniORB import CORBA

from scabench.errors import RunError
from scabench.run.client import LOOPBACK, NamingService, S, end_process, name, props
from scabench.run.nodes import node_alive, node_processes, resolve_node

CF, CosNaming = S.CF, S.CosNaming


def cpu_s(pid):
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spread_ms(values):
    return f"median {1000 * statistics.median(values):.0f} ms ({1000 * min(values):.0f}-{1000 * max(values):.0f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--idle-s", type=float, default=30.0)
    args = ap.parse_args()
    orb = CORBA.ORB_init(["node_cost"] + LOOPBACK, CORBA.ORB_ID)
    orb.resolve_initial_references("RootPOA")._get_the_POAManager().activate()
    tmp = Path(tempfile.mkdtemp(prefix="node-cost-"))
    naming = NamingService(tmp / "naming", orb)
    node = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scabench.cli",
            "node",
            "--name",
            "costs",
            "--domain",
            f"corbaloc::127.0.0.1:{naming.port}/NameService",
        ],
        stdout=open(tmp / "node.log", "w"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                device = resolve_node(naming.root, "costs").device
                break
            except RunError:
                assert node.poll() is None and time.monotonic() < deadline, (tmp / "node.log").read_text()
                time.sleep(0.1)
        time.sleep(2)
        c0, t0 = cpu_s(node.pid), time.monotonic()
        time.sleep(args.idle_s)
        c1, t1 = cpu_s(node.pid), time.monotonic()
        print(f"agent idle, heartbeat 1 s: {100 * (c1 - c0) / (t1 - t0):.2f} % of a core over {t1 - t0:.0f} s")

        ctx = naming.root.bind_new_context(name("waveform"))
        ior = orb.object_to_string(ctx)
        for program, extra in (("scabench-py-stage", {}), ("scabench-host", {"KIND": "stage"})):
            device.load(None, program, CF.LoadableDevice.EXECUTABLE)
            starts, ends = [], []
            for i in range(args.rounds):
                binding = f"{program}-{i}"
                t = time.monotonic()
                pid = device.execute(
                    program,
                    [],
                    props(NAMING_CONTEXT_IOR=ior, COMPONENT_IDENTIFIER=binding, NAME_BINDING=binding, **extra),
                )
                while True:
                    try:
                        ctx.resolve(name(binding))
                        break
                    except CosNaming.NamingContext.NotFound:
                        time.sleep(0.002)
                starts.append(time.monotonic() - t)
                t = time.monotonic()
                device.terminate(pid)
                ends.append(time.monotonic() - t)
            print(f"{program}: execute to bound {spread_ms(starts)}; terminate {spread_ms(ends)}; {args.rounds} rounds")
        records, _ = node_processes(device)
        print(
            "each ended process's CPU, user + system (s):",
            ", ".join(f"{r['user_s'] + r['system_s']:.3f}" for r in records),
        )

        os.kill(node.pid, signal.SIGSTOP)
        hung = []
        for _ in range(5):
            t = time.monotonic()
            assert not node_alive(device, 1.0)
            hung.append(time.monotonic() - t)
        os.kill(node.pid, signal.SIGCONT)
        print("hung node, node_alive(timeout 1 s) answers False after (s):", ", ".join(f"{h:.3f}" for h in hung))
        os.kill(node.pid, signal.SIGKILL)
        node.wait()
        dead = []
        for _ in range(5):
            t = time.monotonic()
            assert not node_alive(device, 1.0)
            dead.append(time.monotonic() - t)
        print(
            "killed node, node_alive(timeout 1 s) answers False after (ms):", ", ".join(f"{1000 * d:.1f}" for d in dead)
        )
    finally:
        end_process(node)
        naming.close()


if __name__ == "__main__":
    main()

"""What placing a component on a plain CF node costs, against a scabench
node and against the launcher's own machine: the same three-process
pipeline (a producer paced at 500 packets/s, two stages of 200 µs of CPU
each, two-way calls), its middle stage local, on a `scabench node`, or on
a plain CF::ExecutableDevice (examples/plain-gpp/plain_gpp.py), all on
this machine; --runs runs of --packets packets each. Printed per
placement: the packets delivered, the end-to-end latency's median and p99
(each the median over the runs), the node's process's CPU (its node's
records, or /proc for the plain one), and the CPU of the launcher with the
hosts it forked (this process's children's, over the run: between a
scabench node and a plain one, the same processes, so the difference is
the launcher's watching of the node: a watch round trip every 200 ms
against /proc and a file read every 50 ms).

    .venv/bin/python scripts/plain_node_cost.py [--packets 500] [--runs 3]
"""

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from omniORB import CORBA

from scabench.model.load import load_spec
from scabench.run.client import LOOPBACK, NamingService, end_process
from scabench.run.runner import run_spec

REPO = Path(__file__).resolve().parents[1]
PLAIN_GPP = REPO / "examples" / "plain-gpp" / "plain_gpp.py"
WAIT_S = 60


def _started(argv: list[str], log: Path, word: str) -> subprocess.Popen:
    with open(log, "w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + WAIT_S
    while word not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            end_process(proc)
            sys.exit(f"{argv[1]} did not start: {log.read_text().strip()}")
        time.sleep(0.05)
    return proc


def _spec(folder: Path, domain: str, node: str | None, packets: int):
    text = 'chain = ["producer", "stage1", "stage2"]\n'
    text += f'[[component]]\nname = "producer"\nkind = "producer"\npackets = {packets}\nsamples = 256\n'
    text += "period_us = 2000\n"
    for stage in ("stage1", "stage2"):
        text += f'[[component]]\nname = "{stage}"\nkind = "stage"\nwork = "cpu"\nwork_us = 200\n'
    text += '[policy]\ncall = "twoway"\n[placement]\nhosts = [["producer"], ["stage1"], ["stage2"]]\n'
    if node is not None:
        text += f'nodes = {{ {node} = ["stage1"] }}\n'
    text += f'[domain]\nnaming = "{domain}"\n'
    path = folder / f"{node or 'local'}.toml"
    path.write_text(text)
    return load_spec(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packets", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="plain-node-cost-"))
    orb = CORBA.ORB_init(["plain_node_cost"] + LOOPBACK, CORBA.ORB_ID)
    orb.resolve_initial_references("RootPOA")._get_the_POAManager().activate()
    naming = NamingService(folder / "domain", orb)
    domain = f"corbaloc::127.0.0.1:{naming.port}/NameService"
    started = []
    try:
        gpp = [sys.executable, str(PLAIN_GPP), "--naming", domain, "--name", "gpp"]
        started.append(_started(gpp, folder / "gpp.log", "bound"))
        node = [sys.executable, "-m", "scabench.cli", "node", "--domain", domain, "--name", "node"]
        started.append(_started(node, folder / "node.log", "registered in"))
        for where, label in ((None, "this machine"), ("node", "scabench node"), ("gpp", "plain CF node")):
            rows = []
            for _ in range(args.runs):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                result = run_spec(_spec(folder, domain, where, args.packets))
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                here = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                latency = result.end_to_end_latency_us
                assert latency is not None and result.stages is not None
                cpu = sum(n.user_s + n.system_s for n in result.nodes or [])
                rows.append((result.stages[-1].received, latency.p50, latency.p99, cpu, here))
            print(
                f"{label}: delivered {[r[0] for r in rows]}; latency median "
                f"{statistics.median(r[1] for r in rows):.0f} µs (runs {[round(r[1]) for r in rows]}), "
                f"p99 {statistics.median(r[2] for r in rows):.0f} µs; node process CPU "
                f"{[round(r[3], 3) for r in rows]} s; launcher and its hosts' CPU median "
                f"{statistics.median(r[4] for r in rows):.3f} s ({[round(r[4], 3) for r in rows]})",
                flush=True,
            )
    finally:
        for proc in started:
            end_process(proc)
        naming.close()


if __name__ == "__main__":
    main()

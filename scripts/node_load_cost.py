"""What a load from a domain's file system costs on a node, on this machine:
a real omniNames, a `scabench node --accept-loaded`, and a client here that
serves a CF::FileSystem (node/filesystem.py's, over a folder) as a domain's
FileManager.

  - load and unload of RhGain's implementation folder (the SDR root's
    /components/RhGain/python), --rounds of each;
  - load and unload of one file of --big-mib MiB in a folder, --big-rounds;
  - deploy to bound: load of RhGain's folder, executeLinked of its
    entrypoint with the SCA exec parameters, until its name is bound in the
    waveform's context; then terminate and unload. --deploys of them.

    .venv/bin/python scripts/node_load_cost.py [--rounds 50] [--big-mib 64] [--big-rounds 5] [--deploys 5]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import omniORB
from omniORB import CORBA

from scabench.node.filesystem import ProfileFileSystem
from scabench.run.client import LOOPBACK, NamingService, S, end_process, name, props
from scabench.run.nodes import node_alive, resolve_node

CF, CosNaming = S.CF, S.CosNaming
REPO = Path(__file__).resolve().parent.parent
DOM = REPO / "experiments" / "sdrroot" / "dom"
IMPLEMENTATION = "/components/RhGain/python"
ENTRYPOINT = IMPLEMENTATION + "/RhGain.py"
LOAD_TIMEOUT_MS = 120_000  # a big file's copy is one load call


def spread_ms(values):
    return f"median {1000 * statistics.median(values):.1f} ms ({1000 * min(values):.1f}-{1000 * max(values):.1f})"


def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def load_unload(device, fs, fileName, rounds):
    loads, unloads = [], []
    for _ in range(rounds):
        loads.append(timed(lambda: device.load(fs, fileName, CF.LoadableDevice.EXECUTABLE)))
        unloads.append(timed(lambda: device.unload(fileName)))
    return loads, unloads


def deploy_to_bound(device, fs, waveform, context_ior, rounds):
    times = []
    for i in range(rounds):
        binding = f"RhGain_{i}"
        start = time.perf_counter()
        device.load(fs, IMPLEMENTATION, CF.LoadableDevice.EXECUTABLE)
        parameters = props(NAMING_CONTEXT_IOR=context_ior, COMPONENT_IDENTIFIER=f"{binding}:w", NAME_BINDING=binding)
        pid = device.executeLinked(ENTRYPOINT, [], parameters, [IMPLEMENTATION])
        while True:
            try:
                waveform.resolve(name(binding))
                break
            except CosNaming.NamingContext.NotFound:
                time.sleep(0.002)
        times.append(time.perf_counter() - start)
        device.terminate(pid)
        device.unload(IMPLEMENTATION)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--big-mib", type=int, default=64)
    parser.add_argument("--big-rounds", type=int, default=5)
    parser.add_argument("--deploys", type=int, default=5)
    args = parser.parse_args()
    # What RhGain's process inherits from the node: python3 with omniORBpy, and this checkout's package.
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    os.environ["PYTHONPATH"] = str(REPO / "python")
    orb = CORBA.ORB_init(["node-load-cost", *LOOPBACK], CORBA.ORB_ID)
    poa = orb.resolve_initial_references("RootPOA")
    poa._get_the_POAManager().activate()
    folder = Path(tempfile.mkdtemp(prefix="node-load-cost-"))
    naming = NamingService(folder / "naming", orb)
    big = folder / "big" / "blob"
    big.mkdir(parents=True)
    (big / "data.bin").write_bytes(os.urandom(args.big_mib << 20))
    node = subprocess.Popen(
        [sys.executable, "-m", "scabench.cli", "node", "--name", "cost", "--accept-loaded"]
        + ["--domain", f"corbaloc::127.0.0.1:{naming.port}/NameService"],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                refs = resolve_node(naming.root, "cost")
                if node_alive(refs.device):
                    break
            except Exception:  # not registered yet
                pass
            if time.monotonic() > deadline or node.poll() is not None:
                sys.exit("the node did not register")
            time.sleep(0.05)
        device = refs.device
        omniORB.setClientCallTimeout(device, LOAD_TIMEOUT_MS)
        servants = [ProfileFileSystem(DOM, "domain"), ProfileFileSystem(folder / "big", "big")]
        rhgain_fs, big_fs = (poa.id_to_reference(poa.activate_object(s)) for s in servants)
        loads, unloads = load_unload(device, rhgain_fs, IMPLEMENTATION, args.rounds)
        print(f"RhGain's folder ({args.rounds} rounds): load {spread_ms(loads)}, unload {spread_ms(unloads)}")
        loads, unloads = load_unload(device, big_fs, "/blob", args.big_rounds)
        rate = args.big_mib / statistics.median(loads)
        print(
            f"{args.big_mib} MiB in a folder ({args.big_rounds} rounds): load {spread_ms(loads)} "
            f"({rate:.0f} MiB/s at the median), unload {spread_ms(unloads)}"
        )
        waveform = naming.root.bind_new_context(name("cost_waveform"))
        times = deploy_to_bound(device, rhgain_fs, waveform, orb.object_to_string(waveform), args.deploys)
        print(f"RhGain load + executeLinked to its name bound ({args.deploys} rounds): {spread_ms(times)}")
        refs.device_manager.shutdown()
        node.wait(30)
    finally:
        end_process(node)
        naming.close()


if __name__ == "__main__":
    main()

"""A plain CF::ExecutableDevice, playing the part of a REDHAWK GPP: written
from the project's idl/cf.idl, it implements what a launcher asks of a GPP
and nothing of scabench::node::NodeDevice. The launcher's tests of a plain
CF node (tests/python/system/test_plain_node.py) and scripts/plain_node_cost.py
run it; it also lets one try a placement on a plain node without REDHAWK
(README.md beside it).

    python plain_gpp.py --naming CORBALOC --name NAME
                        [--memory-mib N] [--no-mem-capacity] [--pid-offset N]
                        [--terminate-leaves-running] [--run-as USER]

It binds its device at nodes/NAME/device in the Naming Service (making the
contexts it needs) and prints "bound nodes/NAME/device" once it serves.
  operationalState   ENABLED
  allocateCapacity   the GPP's memCapacity (MiB, an integer), out of
                     --memory-mib; any other id, or memCapacity with
                     --no-mem-capacity (a device that has no such
                     capacity): InvalidCapacity
  deallocateCapacity gives it back
  load               as a GPP loads: the file named (an absolute name) is
                     looked up in the CF::FileSystem handed to it (exists,
                     list), then copied from it (open, sizeOf, read, close)
                     into the device's own cache directory at the same
                     name, executable when list says EXECUTABLE. A nil file
                     system, a name that is not absolute: InvalidFileName
                     CF_EINVAL; a file it does not hold: CF_ENOENT
  unload             one load undone; the last removes the copy
  execute            fork and exec of the loaded copy (cache directory +
                     name; a name not absolute: InvalidFileName CF_EINVAL,
                     one not loaded: CF_ENOENT), each parameter as
                     two arguments, its id then its value as a string, as a
                     GPP passes them; options must be empty or STACK_SIZE /
                     PRIORITY (InvalidOptions otherwise, which a GPP answers
                     to options it does not know). Answers the pid, plus
                     --pid-offset (a pid as another machine would answer it)
  terminate          SIGTERM, SIGKILL 5 s later; returns once it is gone
                     (with --terminate-leaves-running: returns and does
                     nothing, as a GPP's terminate that swallows a failure);
                     with --run-as USER (it must be root) the process runs
                     as that user, as under a GPP run as another user
Its children's stdout and stderr go to its own (the test's log). Each call
is printed ("call execute ...") for the tests to read. SIGTERM or SIGINT
ends it: its processes are terminated and its name unbound."""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from omniORB import CORBA

from scabench.components import idl

S = idl.load()
CF, CosNaming = S.CF, S.CosNaming
MEM_CAPACITY = "DCE:8dcef419-b440-4bcf-b893-cab79b6024fb"  # REDHAWK's GPP memCapacity
GRACE_S = 5.0


def _say(text):
    print(text, flush=True)


def _text(value):
    """A parameter's value as a GPP puts it on the command line."""
    v = value.value()
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class PlainGpp(S.CF__POA.ExecutableDevice):
    def __init__(self, cache, memory_mib, mem_capacity, pid_offset, terminate_leaves_running=False, user=None):
        self.terminate_leaves_running = terminate_leaves_running
        self.user = user  # whom its processes run as: None, its own user
        self.cache = Path(cache)  # where load copies programs to, at their names
        self.free_mib = memory_mib
        self.mem_capacity = mem_capacity
        self.pid_offset = pid_offset
        self.loaded = {}  # name -> how many loads are not unloaded
        self.children = {}  # the pid answered -> Popen
        self.lock = threading.Lock()

    # --- CF::Device
    def _get_operationalState(self):
        return CF.Device.ENABLED

    def _get_adminState(self):
        return CF.Device.UNLOCKED

    def _get_usageState(self):
        return CF.Device.IDLE

    def _get_label(self):
        return "plain GPP"

    def _mib(self, capacities):
        total = 0
        for c in capacities:
            value = c.value.value()
            if c.id != MEM_CAPACITY or not self.mem_capacity:
                raise CF.Device.InvalidCapacity(f"no capacity {c.id}", [c])
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise CF.Device.InvalidCapacity("memCapacity is a whole number of MiB", [c])
            total += value
        return total

    def allocateCapacity(self, capacities):
        _say(f"call allocateCapacity {[c.id for c in capacities]}")
        need = self._mib(capacities)
        with self.lock:
            if need > self.free_mib:
                return False
            self.free_mib -= need
        return True

    def deallocateCapacity(self, capacities):
        _say("call deallocateCapacity")
        need = self._mib(capacities)
        with self.lock:
            self.free_mib += need

    # --- CF::LoadableDevice
    def _copy(self, fileName):
        """Where load puts fileName, and execute runs it: the cache directory + the name."""
        if not fileName.startswith("/") or ".." in fileName.split("/"):
            raise CF.InvalidFileName(CF.CF_EINVAL, f"{fileName!r}: a GPP takes an absolute name")
        return self.cache / fileName.lstrip("/")

    def load(self, fs, fileName, loadKind):
        _say(f"call load {fileName}")
        if loadKind != CF.LoadableDevice.EXECUTABLE:
            raise CF.LoadableDevice.InvalidLoadKind()
        copy = self._copy(fileName)
        if fs is None:
            raise CF.InvalidFileName(CF.CF_EINVAL, f"load {fileName}: no file system to load it from")
        if not fs.exists(fileName):
            raise CF.InvalidFileName(CF.CF_ENOENT, f"{fileName} is not in the file system given")
        entries = [e for e in fs.list(fileName) if e.kind == CF.FileSystem.PLAIN]
        if not entries:
            raise CF.LoadableDevice.LoadFail(CF.CF_EISDIR, f"{fileName} is no plain file")
        with self.lock:
            if self.loaded.get(fileName):
                self.loaded[fileName] += 1
                return
        executable = any(p.id == "EXECUTABLE" and p.value.value() for p in entries[0].fileProperties)
        remote = fs.open(fileName, True)
        try:
            size = remote.sizeOf()
            copy.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            with open(copy, "wb") as out:
                while written < size:
                    # As a GPP copies: it counts what it asked, so a shorter answer is a broken copy.
                    asked = min(1 << 20, size - written)
                    data = remote.read(asked)
                    if len(data) != asked:
                        break
                    out.write(data)
                    written += asked
            if written != size:
                raise CF.LoadableDevice.LoadFail(CF.CF_EIO, f"{fileName}: {written} of {size} bytes read")
        finally:
            remote.close()
        copy.chmod(0o755 if executable else 0o644)
        with self.lock:
            self.loaded[fileName] = self.loaded.get(fileName, 0) + 1

    def unload(self, fileName):
        _say(f"call unload {fileName}")
        copy = self._copy(fileName)
        with self.lock:
            if not self.loaded.get(fileName):
                raise CF.InvalidFileName(CF.CF_ENOENT, f"{fileName} is not loaded")
            self.loaded[fileName] -= 1
            if self.loaded[fileName] == 0:
                del self.loaded[fileName]
                copy.unlink(missing_ok=True)

    # --- CF::ExecutableDevice
    def execute(self, name, options, parameters):
        program = self._copy(name)
        with self.lock:
            if not self.loaded.get(name):
                raise CF.InvalidFileName(CF.CF_ENOENT, f"{name} is not loaded")
        unknown = [
            o for o in options if o.id not in (CF.ExecutableDevice.STACK_SIZE_ID, CF.ExecutableDevice.PRIORITY_ID)
        ]
        if unknown:
            raise CF.ExecutableDevice.InvalidOptions(unknown)
        argv = [str(program)]
        for p in parameters:
            argv += [p.id, _text(p.value)]
        try:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, close_fds=True, user=self.user)
        except OSError as exc:
            raise CF.ExecutableDevice.ExecuteFail(CF.CF_EIO, str(exc)) from None
        answered = child.pid + self.pid_offset
        with self.lock:
            self.children[answered] = child
        _say(f"call execute {name} pid {child.pid} answered {answered}")
        return answered

    def executeLinked(self, name, options, parameters, deps):
        return self.execute(name, options, parameters)

    def terminate(self, processId):
        _say(f"call terminate {processId}")
        with self.lock:
            if self.terminate_leaves_running:  # a GPP's terminate that swallows its failure: the process runs on
                return
            child = self.children.pop(processId, None)
        if child is None:
            raise CF.ExecutableDevice.InvalidProcess(CF.CF_ESRCH, f"no process {processId}")
        _end(child)

    def end_all(self):
        with self.lock:
            children, self.children = list(self.children.values()), {}
        for child in children:
            _end(child)

    def reap(self):
        """Its children that ended are waited for (a GPP reaps its own)."""
        with self.lock:
            children = list(self.children.values())
        for child in children:
            child.poll()


def _end(child):
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(GRACE_S)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _bind(root, name, ref):
    context = root
    for part in ("nodes", name):
        path = [CosNaming.NameComponent(part, "")]
        try:
            context = context.bind_new_context(path)
        except CosNaming.NamingContext.AlreadyBound:
            context = context.resolve(path)._narrow(CosNaming.NamingContext)
    context.rebind([CosNaming.NameComponent("device", "")], ref)
    return context


def main():
    parser = argparse.ArgumentParser(description="a plain CF::ExecutableDevice, as a REDHAWK GPP")
    parser.add_argument("--naming", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--memory-mib", type=int, default=1 << 20)
    parser.add_argument("--no-mem-capacity", action="store_true")
    parser.add_argument("--pid-offset", type=int, default=0)
    parser.add_argument("--terminate-leaves-running", action="store_true")
    parser.add_argument("--run-as", metavar="USER")
    args = parser.parse_args()
    ending = threading.Event()
    for s in (signal.SIGTERM, signal.SIGINT):
        signal.signal(s, lambda *_: ending.set())
    orb = CORBA.ORB_init(["plain_gpp", "-ORBendPoint", "giop:tcp:127.0.0.1:"], CORBA.ORB_ID)
    poa = orb.resolve_initial_references("RootPOA")
    poa._get_the_POAManager().activate()
    cache = tempfile.mkdtemp(prefix=f"plain-gpp-{args.name}-")
    if args.run_as:
        os.chmod(cache, 0o755)  # its processes' user runs the copies
    device = PlainGpp(
        cache, args.memory_mib, not args.no_mem_capacity, args.pid_offset, args.terminate_leaves_running, args.run_as
    )
    poa.activate_object(device)
    root = orb.string_to_object(args.naming)._narrow(CosNaming.NamingContext)
    context = _bind(root, args.name, poa.servant_to_reference(device))
    _say(f"bound nodes/{args.name}/device")
    while not ending.is_set():
        device.reap()
        time.sleep(0.05)
    device.end_all()
    try:
        context.unbind([CosNaming.NameComponent("device", "")])
    except CORBA.Exception:
        pass
    orb.shutdown(True)
    shutil.rmtree(cache, ignore_errors=True)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()

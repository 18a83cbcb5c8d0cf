"""What the Python component tests stand on: a real omniNames, an omniORBpy
client ORB in the test process, a sink servant, and `scabench-py-stage`
processes started with the SCA execute parameters. Every process started
here is ended by its PID."""
import itertools
import os
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from omniORB import CORBA

from scabench.components import idl
from scabench.run.naming import NamingService as RunNamingService

S = idl.load()
CosNaming = S.CosNaming
WAIT_S = 15.0
LOOPBACK = ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
INTERFACES = {"octet": "dataOctet", "short": "dataShort", "float": "dataFloat", "double": "dataDouble"}


def stage_command():
    """The installed console script (scripts/setup.sh's pip install puts it
    beside the interpreter); the same entry point as a module where this
    interpreter's environment was installed from another checkout."""
    script = Path(sys.executable).parent / "scabench-py-stage"
    return [str(script)] if script.exists() else [sys.executable, "-m", "scabench.components.stage"]


def end_process(proc, grace_s=5.0):
    """Ends a process this test started, by its PID: SIGTERM, then SIGKILL."""
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(grace_s)


class NamingService:
    """omniNames as a run starts it (scabench.run.naming), its data under
    `folder`, on a free loopback port (or `port`), and the test ORB's
    reference to its root context."""

    def __init__(self, folder, orb, port=None):
        self.service = RunNamingService(folder, port=port).__enter__()
        self.port, self.proc = self.service.port, self.service.proc
        deadline = time.monotonic() + WAIT_S
        try:
            while True:
                try:
                    obj = orb.string_to_object(f"corbaloc::127.0.0.1:{self.port}/NameService")
                    self.root = obj._narrow(CosNaming.NamingContext)
                    break
                except (CORBA.TRANSIENT, CORBA.OBJECT_NOT_EXIST, CORBA.COMM_FAILURE):
                    # Listening before its NameService object is active (or, on the port of an
                    # earlier service, this ORB's connection to that one broke).
                    log = self.service.dir / "omniNames.log"
                    assert self.proc.poll() is None, log.read_text()
                    assert time.monotonic() < deadline, "omniNames did not start"
                    time.sleep(0.05)
        except BaseException:
            self.close()  # a fixture that fails here is never closed by its caller
            raise

    def close(self):
        self.service.__exit__(None, None, None)


def name(text):
    return [CosNaming.NameComponent(text, "")]


def bound(ctx, text):
    try:
        ctx.resolve(name(text))
        return True
    except CosNaming.NamingContext.NotFound:
        return False


def alive(pid):
    """Running (a zombie is not: it has ended, its parent has not reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def sink_class(sample_type):
    base = getattr(S.data__POA, INTERFACES[sample_type])

    class Sink(base):
        """Keeps every packet as it arrives: (header, samples, how it came)."""

        def __init__(self):
            self.packets = []
            self.token = None  # what its sender attached
            self.detached = None  # what its sender detached
            self.cond = threading.Condition()

        def _take(self, header, data, call):
            with self.cond:
                self.packets.append((header, data, call))
                self.cond.notify_all()

        def pushPacket(self, header, data):
            self._take(header, data, "twoway")

        def pushPacketOneway(self, header, data):
            self._take(header, data, "oneway")

        def syncMarker(self):
            pass

        def attachSender(self, token, flow):
            assert flow is None
            self.token = token
            self.detached = None

        def detachSender(self, token):
            self.detached = token

        def wait_for(self, predicate, timeout=WAIT_S):
            with self.cond:
                assert self.cond.wait_for(lambda: predicate(self.packets), timeout), \
                    f"sink: condition not met; it has {len(self.packets)} packets"
                return list(self.packets)

        def data(self):
            return [p for p in self.packets if not p[0].end_of_stream]

        def ends(self):
            return [p for p in self.packets if p[0].end_of_stream]

    return Sink


TOKEN = 0x5CAB_E4C4_0000_0001  # this process's connection token when it sends into a stage


def header(seq, link=None, eos=False, stream=7, send_time=None, token=TOKEN):
    """A packet header as the test's sending port stamps it: link sequence = seq unless given."""
    return S.data.PacketHeader(stream, seq, send_time if send_time is not None else 1_000_000 + seq, eos,
                               seq if link is None else link, token)


def samples(sample_type, n, seed):
    """n samples of every kind of bit pattern the type can carry (no NaN:
    omniORBpy carries a float through a Python float, which may quiet a
    signalling NaN), from a fixed seed."""
    import random
    rng = random.Random(seed)
    if sample_type == "octet":
        return bytes(rng.randrange(256) for _ in range(n))
    if sample_type == "short":
        return [rng.randrange(-32768, 32768) for _ in range(n)]
    fmt, size = ("<f", 4) if sample_type == "float" else ("<d", 8)
    special = [0.0, -0.0, float("inf"), float("-inf"), 1e-45 if size == 4 else 5e-324]
    out = []
    while len(out) < n:
        v = struct.unpack(fmt, rng.randbytes(size))[0]
        if v == v:
            out.append(v)
    return (special + out)[:n]


def as_bytes(sample_type, data):
    """The samples' bits, for a bit-for-bit comparison."""
    if sample_type == "octet":
        return bytes(data)
    code = {"short": "h", "float": "f", "double": "d"}[sample_type]
    return struct.pack(f"<{len(data)}{code}", *data)


def any_of(tc, value):
    return CORBA.Any(tc, value)


def props(**values):
    """CF::Properties from keyword arguments: str, int (long long), float
    (double), or a ready CORBA.Any; '__' in a name stands for '.'."""
    out = []
    for key, v in values.items():
        if not isinstance(v, CORBA.Any):
            v = CORBA.Any({str: CORBA.TC_string, int: CORBA.TC_longlong, float: CORBA.TC_double}[type(v)], v)
        out.append(S.CF.DataType(key.replace("__", "."), v))
    return out


class StageProcess:
    """`scabench-py-stage` started with the execute parameters; resolve()
    finds its CF::Resource by name in the context, as a launcher does."""

    def __init__(self, tmp_path, context, context_ior, binding="stage1", sample_type=None, extra=(), command=None):
        self.context, self.binding = context, binding
        self.identifier = f"{binding}:waveform_1"
        args = ["NAMING_CONTEXT_IOR", context_ior, "COMPONENT_IDENTIFIER", self.identifier, "NAME_BINDING", binding]
        if sample_type:
            args += ["SAMPLE_TYPE", sample_type]
        self.out_path, self.err_path = tmp_path / f"{binding}.out", tmp_path / f"{binding}.err"
        with open(self.out_path, "w") as out, open(self.err_path, "w") as err:
            self.proc = subprocess.Popen((command or stage_command()) + args + list(extra) + LOOPBACK,
                                         stdout=out, stderr=err)

    def resolve(self):
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                return self.context.resolve(name(self.binding))._narrow(S.CF.Resource)
            except CosNaming.NamingContext.NotFound:
                assert self.proc.poll() is None, f"stage exited {self.proc.returncode}: {self.stderr()}"
                assert time.monotonic() < deadline, "the stage never bound its name"
                time.sleep(0.05)

    def bound(self):
        return bound(self.context, self.binding)

    def cpu_s(self):
        """User + system CPU of the process so far (/proc, clock ticks)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stdout(self):
        return self.out_path.read_text()

    def stats(self):
        """The `stat NAME KEY VALUE` events it wrote: {KEY: VALUE}."""
        return {w[2]: int(w[3]) for w in (line.split() for line in self.stdout().splitlines()) if w[0] == "stat"}

    def stderr(self):
        return self.err_path.read_text()

    def close(self):
        end_process(self.proc)


_contexts = itertools.count(1)


def closed_at_end(make):
    """The body of a fixture that starts things for a test (`yield from`):
    it gives the test a function that calls make(...) and returns what that
    made, and closes everything made once the test ends."""
    started = []

    def start(*args, **kw):
        thing = make(*args, **kw)
        started.append(thing)
        return thing
    yield start
    for thing in started:
        thing.close()


# Fixtures: a test module imports the ones it uses. One ORB for the session
# (omniORBpy has one per process); one omniNames per module.
@pytest.fixture(scope="session")
def orb():
    orb = CORBA.ORB_init(["tests", "-ORBgiopMaxMsgSize", str(64 << 20)] + LOOPBACK, CORBA.ORB_ID)
    poa = orb.resolve_initial_references("RootPOA")
    poa._get_the_POAManager().activate()
    yield orb
    try:
        orb.destroy()
    except CORBA.BAD_INV_ORDER:
        pass  # each importing module has its own copy of this fixture, and omniORBpy one ORB: destroyed already


@pytest.fixture(scope="module")
def naming(orb, tmp_path_factory):
    service = NamingService(tmp_path_factory.mktemp("naming"), orb)
    yield service
    service.close()


@pytest.fixture
def start_naming(tmp_path, orb):
    """A test's own omniNames (a domain it may stop and start again):
    start_naming("domain", port=None) -> NamingService; each one started is
    closed when the test ends."""
    yield from closed_at_end(lambda folder, port=None: NamingService(tmp_path / folder, orb, port=port))


@pytest.fixture
def context(orb, naming):
    """A fresh naming context, as a launcher makes for a waveform instance: (context, its IOR)."""
    ctx = naming.root.bind_new_context(name(f"waveform_{next(_contexts)}"))
    return ctx, orb.object_to_string(ctx)


@pytest.fixture
def start_stage(tmp_path, context):
    yield from closed_at_end(lambda **kw: StageProcess(tmp_path, *context, **kw))


@pytest.fixture
def make_sink(orb):
    poa = orb.resolve_initial_references("RootPOA")

    def make(sample_type="double"):
        sink = sink_class(sample_type)()
        poa.activate_object(sink)
        return sink, poa.servant_to_reference(sink)
    return make

"""What the Python component tests stand on: a real omniNames, an omniORBpy
client ORB in the test process, a sink servant, and `scabench-py-stage`
processes started with the SCA execute parameters (scabench.run.client, the
same client the cost scripts use), as pytest fixtures. Every process started
here is ended by its PID."""

import itertools
import struct

import pytest
from omniORB import CORBA

from scabench.run.client import (  # noqa: F401 (re-exported)
    LOOPBACK,
    TOKEN,
    WAIT_S,
    NamingService,
    S,
    StageProcess,
    bound,
    end_process,
    header,
    name,
    props,
    sink_class,
    stage_command,
)


def alive(pid):
    """Running (a zombie is not: it has ended, its parent has not reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


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

"""The peers `scabench peers` sets side by side: what each one is, how it
runs the paper's pipeline, and what to install when it is missing.

Two kinds of peer:
- a program of cpp/peers/ (plain threads, ZeroMQ, GNU Radio), built by CMake
  only where its library is installed; it takes the pipeline on its command
  line and prints one JSON line (cpp/peers/peer.hpp);
- a scabench spec (the paper's exp6, the ordered one-way spec), run over real
  processes or collocated, exactly as `scabench run` runs it.

The pipeline itself (packets, samples, stages and their work) is read from
the paper's exp6 spec, so every peer runs the one scabench runs."""

from dataclasses import dataclass, field

from scabench.errors import ScabenchError
from scabench.paths import bin_dir, experiments_dir

EXP6 = experiments_dir() / "paper" / "exp6.toml"
CREDITS = experiments_dir() / "ordering" / "oneway-resequence-credits.toml"
# What a program peer's library needs, and how to get it.
INSTALL_ZMQ = (
    "ZeroMQ is not installed (Debian libzmq3-dev, cppzmq-dev): run scripts/setup.sh, which installs it and rebuilds"
)
INSTALL_GNURADIO = (
    "GNU Radio is not installed (Debian gnuradio-dev): run scripts/setup.sh --peers, which installs it and rebuilds"
)
INSTALL_BUILD = "build the runtime first (make build)"


@dataclass(frozen=True)
class Peer:
    id: str
    title: str
    how: str  # one sentence for the report: what moves the packets
    program: str | None = None  # a program peer: its name in the build's bin folder...
    args: tuple = ()  # ...its own arguments...
    depth: int | None = None  # ...and the packets a link holds (--depth)
    install: str = INSTALL_BUILD  # what to do when the program is missing
    spec: object = None  # a scabench peer: its spec file...
    collocated: bool = False  # ...every component in one process...
    transport: str | None = None  # ...or its hops over this transport (None: the spec's own)
    programs: tuple = field(default=("scabench-host", "scabench-launch"))

    @property
    def is_program(self):
        return self.program is not None


PEERS = (
    Peer(
        "threads",
        "C++ threads, bounded queues",
        "one thread per stage in one process, joined by blocking queues of 16 packets (scabench's BoundedQueue); "
        "no middleware",
        program="scabench-peer-threads",
        depth=16,
    ),
    Peer(
        "zmq-inproc",
        "ZeroMQ inproc",
        "one thread per stage in one process, ZeroMQ PUSH/PULL over inproc, high-water mark 4 on each side",
        program="scabench-peer-zmq",
        args=("--transport", "inproc"),
        depth=4,
        install=INSTALL_ZMQ,
    ),
    Peer(
        "zmq-ipc",
        "ZeroMQ ipc",
        "one process per stage, ZeroMQ PUSH/PULL over Unix-domain sockets, high-water mark 4 on each side",
        program="scabench-peer-zmq",
        args=("--transport", "ipc"),
        depth=4,
        install=INSTALL_ZMQ,
    ),
    Peer(
        "gnuradio",
        "GNU Radio blocks",
        "one flowgraph of C++ sync blocks under GNU Radio's thread-per-block scheduler, one packet per item, "
        "buffers of 16 packets",
        program="scabench-peer-gnuradio",
        depth=16,
        install=INSTALL_GNURADIO,
    ),
    Peer(
        "scabench-exp6",
        "scabench two-way + worker",
        "the paper's exp6 over CORBA, a process per component: two-way calls, pool dispatch, a worker queue of 64 "
        "per stage",
        spec=EXP6,
    ),
    Peer(
        "scabench-credits",
        "scabench one-way + resequence + credits",
        "experiments/ordering/oneway-resequence-credits.toml over CORBA, a process per component: one-way calls, "
        "a reorder buffer per port, a credit window of 32",
        spec=CREDITS,
    ),
    Peer(
        "scabench-exp6-shm",
        "scabench two-way + worker, shared memory",
        "exp6 with a process per component, the samples of each hop in a shared-memory ring and CORBA for "
        'control (transport = "shm")',
        spec=EXP6,
        transport="shm",
    ),
    Peer(
        "scabench-credits-shm",
        "scabench one-way + resequence + credits, shared memory",
        "the credits spec with a process per component, the samples of each hop in a shared-memory ring "
        '(transport = "shm")',
        spec=CREDITS,
        transport="shm",
    ),
    Peer(
        "scabench-exp6-collocated",
        "scabench two-way + worker, collocated",
        "exp6 with every component in one process: direct calls into the worker queues",
        spec=EXP6,
        collocated=True,
    ),
    Peer(
        "scabench-credits-collocated",
        "scabench one-way + resequence + credits, collocated",
        "the credits spec with every component in one process: direct calls into the reorder buffers",
        spec=CREDITS,
        collocated=True,
    ),
)
# `scabench peers --grain` sets every ordered strategy on every transport
# beside the peer frameworks: the paper's peers plus the hops over Unix
# sockets, which the paper's study leaves out (at 5 ms of work they differ
# from tcp by nothing it can see; at fine grain the hop is the cost).
GRAIN_PEERS = (
    *PEERS,
    Peer(
        "scabench-exp6-unix",
        "scabench two-way + worker, Unix sockets",
        "exp6 with a process per component, its hops over omniORB on Unix-domain sockets",
        spec=EXP6,
        transport="unix",
    ),
    Peer(
        "scabench-credits-unix",
        "scabench one-way + resequence + credits, Unix sockets",
        "the credits spec with a process per component, its hops over omniORB on Unix-domain sockets",
        spec=CREDITS,
        transport="unix",
    ),
)
BY_ID = {p.id: p for p in GRAIN_PEERS}


def select(only, among=PEERS):
    """The peers of `among` named in `only` (a list of ids), in the
    catalogue's order; all of them for None. An unknown id is a
    ScabenchError naming the valid ones."""
    if only is None:
        return list(among)
    ids = [p.id for p in among]
    unknown = [i for i in only if i not in ids]
    if unknown or not only:
        raise ScabenchError(f"--only: {unknown[0] if unknown else '(empty)'!r} is not a peer; peers: {', '.join(ids)}")
    return [p for p in among if p.id in only]


def missing_reason(peer):
    """Why the peer cannot run here (its program was not built), or None."""
    needed = (peer.program,) if peer.is_program else peer.programs
    for name in needed:
        if not (bin_dir() / name).is_file():
            return f"{bin_dir() / name} is missing: {peer.install}"
    return None

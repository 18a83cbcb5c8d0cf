"""Which transport each hop of a run uses, and the size of a shared-memory
ring (docs/architecture.md, "Shared-memory transport").

A spec's `[run] transport` is "tcp", "unix" or "shm". The ORBs of the run's
processes listen on loopback tcp, or on unix sockets in the run's directory
for both unix and shm: with shm, CORBA is the control plane (lifecycle,
connectPort, the attach that hands a ring over, flow-control signals) and
the samples of a hop between two of the runtime's hosts travel in a ring of
shared memory. What each hop uses:

  collocated  both ends in one host: a direct call, whatever the transport
  shm         transport shm, both ends in hosts of the runtime (scabench-host)
  unix, tcp   the processes' endpoint: transport unix or tcp, or a hop to or
              from an external component (its ports speak CORBA only) with
              transport shm; tcp between network hosts

Network hosts stand for other machines: shared memory cannot join them, and
a spec that asks for both is refused (checks.check_network).
"""
from scabench.errors import SpecError
from scabench.model.resources import packet_bytes

TRANSPORTS = ("tcp", "unix", "shm")
HOP_TRANSPORTS = ("shm", "unix", "tcp", "collocated")

# The ring's data area: the most sample bytes in flight on one connection,
# and the largest packet it takes (the runtime refuses a larger one with
# PacketTooLarge, naming the ring). Like a socket's buffers, a few hundred kB
# to a few MB; RING_PACKETS packets of the spec's largest at least, so that a
# one-way sender can run ahead of its receiver by a few packets. The bounds
# are the runtime's (cpp/runtime/include/scabench/runtime/shm_ring.hpp).
RING_MIN_BYTES = 1 << 20
RING_MAX_BYTES = 1 << 30
RING_PACKETS = 4
RING_ROUND = 64 << 10
# What a ring takes besides its data: the control block and 1024 slots of 64 bytes.
RING_CONTROL_BYTES = 68 << 10


def check_transport_name(path, where, transport):
    """A transport is one of TRANSPORTS; SpecError naming `where` otherwise."""
    if transport not in TRANSPORTS:
        raise SpecError(path, where, f"{transport!r} is not valid; use one of: {', '.join(TRANSPORTS)}")


def endpoint_transport(spec):
    """What the run's ORBs listen on: "tcp", or "unix" (for unix and shm)."""
    return "tcp" if spec.transport == "tcp" else "unix"


def process_transport(spec):
    """What a process's remote hops that are not shm use: its endpoint's
    transport, or tcp between network hosts (they stand for machines)."""
    return "tcp" if spec.network is not None else endpoint_transport(spec)


def hop_transport(spec, conn):
    """The transport a connection's packets use (the module's docstring)."""
    if spec.collocated(conn):
        return "collocated"
    # Network hosts cannot share memory (checks.check_network refuses shm with them).
    if spec.network is None and spec.transport == "shm" and \
            all(spec.host_of(end[0]) is not None for end in (conn.uses, conn.provides)):
        return "shm"
    return process_transport(spec)


def ring_bytes(spec):
    """The data area of every shared-memory ring of the run."""
    wanted = -(-RING_PACKETS * packet_bytes(spec) // RING_ROUND) * RING_ROUND
    return min(RING_MAX_BYTES, max(RING_MIN_BYTES, wanted))


def uses_properties(spec, conn):
    """The sending port's own properties for a hop's transport ({} unless shm)."""
    if hop_transport(spec, conn) != "shm":
        return {}
    port = conn.uses[1]
    return {f"{port}.transport": "shm", f"{port}.shm_bytes": ring_bytes(spec)}

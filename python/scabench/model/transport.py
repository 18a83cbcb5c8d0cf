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

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from scabench.errors import ScabenchError, SpecError
from scabench.model.catalog import component_kinds, shm_ring
from scabench.model.pipeline import packet_bytes

if TYPE_CHECKING:
    from scabench.model.spec import Connection, Spec

TRANSPORTS = ("tcp", "unix", "shm")
HOP_TRANSPORTS = ("shm", "unix", "tcp", "collocated")

# The ring's data area: the most sample bytes in flight on one connection,
# and the largest packet it takes (the runtime refuses a larger one with
# PacketTooLarge, naming the ring). Like a socket's buffers, a few hundred kB
# to a few MB: the runtime's own size for a ring (its default), grown to
# RING_PACKETS packets of the spec's largest so that a one-way sender can run
# ahead of its receiver by a few packets, in steps of RING_ROUND, and at most
# the runtime's largest. The default and the bounds are the runtime's
# (a uses port's shm_bytes in `scabench-host --describe`).
RING_PACKETS = 4
RING_ROUND = 64 << 10


@lru_cache(maxsize=1)
def ring_declaration() -> dict[str, Any]:
    """The runtime's declaration of a uses port's shm_bytes (its default,
    min and max): every uses port declares the same (out_port.cpp)."""
    for declared in component_kinds().values():
        for key, entry in declared["properties"].items():
            if key.endswith(".shm_bytes"):
                return entry
    raise ScabenchError(
        "scabench-host --describe declares no uses port's shm_bytes: the shared-memory ring's size cannot be chosen"
    )


def ring_overhead_bytes() -> int:
    """What a ring maps besides its data area (its control block and slots),
    as the runtime publishes it: a ring takes ring_bytes + this."""
    return int(shm_ring()["overhead_bytes"])


def check_transport_name(path: Any, where: str, transport: str) -> None:
    """A transport is one of TRANSPORTS; SpecError naming `where` otherwise."""
    if transport not in TRANSPORTS:
        raise SpecError(path, where, f"{transport!r} is not valid; use one of: {', '.join(TRANSPORTS)}")


def endpoint_transport(spec: "Spec") -> str:
    """What the run's ORBs listen on: "tcp", or "unix" (for unix and shm)."""
    return "tcp" if spec.transport == "tcp" else "unix"


def process_transport(spec: "Spec") -> str:
    """What a process's remote hops that are not shm use: its endpoint's
    transport, or tcp between network hosts (they stand for machines)."""
    return "tcp" if spec.network is not None else endpoint_transport(spec)


def hop_transport(spec: "Spec", conn: "Connection") -> str:
    """The transport a connection's packets use (the module's docstring)."""
    if spec.collocated(conn):
        return "collocated"
    # Network hosts cannot share memory (checks.check_network refuses shm with them).
    if (
        spec.network is None
        and spec.transport == "shm"
        and all(spec.host_of(end[0]) is not None for end in (conn.uses, conn.provides))
    ):
        return "shm"
    return process_transport(spec)


def check_bulkio_hops(spec: "Spec", where: str = "run.transport") -> None:
    """A BulkIO connection's packets are CORBA calls (BulkIO has no ring):
    one the run's transport would put in shared memory is refused, naming
    the connection. `where` names the key or flag that set the transport."""
    for conn in spec.connections:
        if conn.policy.protocol == "bulkio" and hop_transport(spec, conn) == "shm":
            raise SpecError(
                spec.path,
                where,
                f'{conn.id}: protocol = "bulkio" cannot travel over transport "shm" (BulkIO\'s packets are CORBA '
                'calls); use transport = "unix" or "tcp", or protocol = "scabench" on that connection',
            )


def ring_bytes(spec: "Spec") -> int:
    """The data area of every shared-memory ring of the run."""
    declared = ring_declaration()
    wanted = -(-RING_PACKETS * packet_bytes(spec) // RING_ROUND) * RING_ROUND
    return min(declared["max"], max(declared["default"], declared["min"], wanted))


def uses_properties(spec: "Spec", conn: "Connection") -> dict[str, Any]:
    """The sending port's own properties for a hop's transport ({} unless shm)."""
    if hop_transport(spec, conn) != "shm":
        return {}
    port = conn.uses[1]
    return {f"{port}.transport": "shm", f"{port}.shm_bytes": ring_bytes(spec)}

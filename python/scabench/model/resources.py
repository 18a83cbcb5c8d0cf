"""The memory a run needs, estimated from its spec before any process starts,
so that a spec the machine cannot hold is refused with one line instead of
a host killed by the kernel halfway through.

The estimate counts what scales with the spec, generously but not
absurdly:
  - every component's packet records: (its packets + 16) x 32 bytes, preallocated
    and touched at configure;
  - per connection, the packets its receiving port may hold at once: one in
    the handler, the worker queue, the reorder buffer, the flow-control
    window and the ORB threads in upcalls (omniORB's default pool when the
    dispatch does not bound it), at most the whole stream; each held twice
    (the ORB's receive buffer and the unmarshalled sequence), plus the
    sender's copy;
  - per hop over shared memory, its ring (transport.ring_bytes, held once:
    both processes map the same pages);
  - a fixed share per host process (the ORB and the libraries).
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from scabench.errors import SpecError
from scabench.model.pipeline import packet_bytes, packets_through
from scabench.model.policy import Policy
from scabench.model.transport import hop_transport, ring_bytes, ring_overhead_bytes

if TYPE_CHECKING:
    from scabench.model.spec import Spec

RECORD_BYTES = 32
RECORD_SLACK = 16  # the runner's record_capacity = packets + 16
HOST_BASE_BYTES = 32 << 20  # one host: the ORB, the libraries, its threads' stacks
ORB_POOL_DEFAULT = 100  # omniORB's maxServerThreadPoolSize
SHARE_OF_AVAILABLE = 0.8  # leave the rest to the machine


def held_per_connection(policy: Policy, packets: int) -> int:
    """The most packets a receiving port may hold at once (see the module docstring)."""
    threads = policy.max_server_threads_per_connection or ORB_POOL_DEFAULT
    held = 1 + policy.worker_depth + threads
    if policy.ordering == "resequence":
        held += policy.reorder_capacity
    held += max(policy.flow_high, policy.credits)
    return min(held, packets)


def _parts(spec):
    """{process (Spec.process_of): {part: bytes}}: each part of the estimate
    where it is held, the records and a connection's packets in the
    receiving process, the sender's copy in the sending one."""
    through = packets_through(spec)
    size = packet_bytes(spec)
    parts: dict[tuple[str, Any], dict[str, int]] = {}  # process -> {part: bytes}

    def add(process: tuple[str, Any], part: str, value: int) -> None:
        into = parts.setdefault(process, {})
        into[part] = into.get(part, 0) + value

    for c in spec.components:
        if c.external is None:
            add(spec.process_of(c.name), RECORDS, (through[c.name] + RECORD_SLACK) * RECORD_BYTES)
    for c in spec.connections:
        add(spec.process_of(c.provides[0]), IN_FLIGHT, 2 * held_per_connection(c.policy, through[c.uses[0]]) * size)
        add(spec.process_of(c.uses[0]), IN_FLIGHT, size)
    for i in range(len(spec.hosts)):
        add(("host", i), HOSTS, HOST_BASE_BYTES)
    for c in spec.connections:
        if hop_transport(spec, c) == "shm":  # the ring is shared; counted once, with the receiver
            add(spec.process_of(c.provides[0]), RINGS, ring_bytes(spec) + ring_overhead_bytes())
    return parts


RECORDS, IN_FLIGHT, HOSTS, RINGS = (
    "packet records (packets)",
    "packets in flight (samples x held per connection)",
    "host processes",
    "shared-memory rings",
)


def memory_needed(spec: "Spec") -> tuple[int, str]:
    """(bytes, the largest part as words) the run needs on this machine: its
    processes placed on nodes are each node's to hold (the launcher
    allocates it there)."""
    totals: dict[str, int] = {}
    for process, held in _parts(spec).items():
        if spec.node_of(spec.hosts[process[1]][0] if process[0] == "host" else process[1]) is not None:
            continue
        for part, value in held.items():
            totals[part] = totals.get(part, 0) + value
    return sum(totals.values()), max(totals, key=lambda part: totals[part], default=HOSTS)


def process_memory_bytes(spec: "Spec") -> dict[tuple[str, Any], int]:
    """{process (Spec.process_of): bytes} each process of the run needs
    (what a run allocates on the node a process is placed on,
    docs/architecture.md "Placement on nodes")."""
    return {process: sum(held.values()) for process, held in _parts(spec).items()}


def available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo, or None where it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_memory(spec: "Spec", available: int | None = None) -> None:
    """Refuses a spec whose run would need more memory than the machine has."""
    available = available if available is not None else available_bytes()
    if available is None:
        return
    need, largest = memory_needed(spec)
    if need > SHARE_OF_AVAILABLE * available:
        raise SpecError(
            spec.path,
            "",
            f"the run would need about {need / 2**30:.1f} GiB of memory, most of it "
            f"{largest}, and this machine has {available / 2**30:.1f} GiB available; lower the "
            "packets, the samples, or the packets a connection may hold (worker, reorder_capacity, "
            "flow, dispatch)",
        )

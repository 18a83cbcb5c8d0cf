"""The connection policy as the Python ports take it: the runtime's policy
keys (cpp/runtime/src/policy_schema.cpp, `scabench-host --describe` under
"policy"), declared on each port as `<port>.<key>` with the runtime's
defaults, so a launcher configures a Python component exactly as a C++ one.

What the Python ports implement:
- provides side: dispatch pool, pool:N and serial (the ORB's own threading,
  set per process by the launcher's -ORB options, as for a C++ host) and
  single (a SINGLE_THREAD_MODEL POA); no worker (the ORB thread runs the
  handler); ordering arrival; flow none; packet_length and max_calls (the
  C++ port's checks, ports.InPort);
- uses side: call twoway and oneway; sync none (a client-side queue and one
  sender thread), transport (omniORB's own oneway), server (the oneway, then
  the two-way syncMarker) and target (pushPacket); flow none; fanout
  sequential, parallel and drop with fanout_depth (ports.OutPort);
- both sides: protocol scabench only (BulkIO's data interfaces are the C++
  runtime's: docs/reference/bulkio.md).
Any other value the schema allows is refused at configure, naming the
property and what the Python ports support: a run never gets a policy it
did not ask for. The worker's and the reorder buffer's own parameters
(worker_resume, reorder_capacity, reorder_timeout_ms) are checked and kept
but act on nothing, as in the C++ port while the worker or the reorder
buffer is off. tests/python/system/test_py_components.py checks the keys and
defaults against the runtime's schema.
"""

import re

from scabench.components.message_limit import HEADER_ROOM
from scabench.components.properties import Refused, at_least, one_of

WORK_QUEUE_MAX = 65536  # the schema's bound on queue depths and windows
POOL_THREADS_MAX = 1000  # dispatch = "pool:N"
PACKET_SAMPLES_MAX = (
    64 << 20
) - HEADER_ROOM  # packet_length: the runtime's maxPacketSamples(1), what fits in a message

CALLS = ("twoway", "oneway")
FANOUTS = ("sequential", "parallel", "drop")
# The uses-side keys a connection takes from its port when it is made (ports.OutPort.connectPort).
CONNECTION_SETTINGS = ("call", "sync", "sync_none_depth", "fanout", "fanout_depth")
SYNCS = ("none", "transport", "server", "target")

# The Python ports are scabench's own data ports: a BulkIO connection needs
# the C++ runtime's ports on both of its Python-less ends.
PROTOCOL = (
    "protocol",
    "scabench",
    "what the port speaks on the wire: scabench (the project's data ports); bulkio is not supported by the "
    "Python runtime (Python components speak scabench only)",
    one_of("scabench", "bulkio", supported=("scabench",)),
)


def _dispatch(value):
    text = re.sub(r"\s+", "", value)
    m = re.fullmatch(r"pool:(\d{1,18})", text)
    if m:
        if not 1 <= int(m.group(1)) <= POOL_THREADS_MAX:
            raise Refused(f"{value!r}: N must be from 1 to {POOL_THREADS_MAX}")
        return
    if text not in ("pool", "serial", "single"):
        raise Refused(f"{value!r} is not valid; use pool, pool:N, serial or single")


def _worker(value):
    at_least(0, WORK_QUEUE_MAX)(value)
    if value != 0:
        raise Refused(
            f"{value} is not supported by the Python runtime (supported: 0, the ORB thread runs the "
            "handler; no worker queue)"
        )


def _worker_resume(value):
    text = value.strip()
    if text not in ("auto", "half") and not re.fullmatch(r"\d{1,18}", text):
        raise Refused(f"{value!r} is not valid; use auto, half or a queue level r >= 0")


def _flow(value):
    text = re.sub(r"\s+", "", value)
    if text == "none":
        return
    if re.fullmatch(r"watermarks\(\d{1,18},\d{1,18}\)|credits\(\d{1,18}\)", text):
        raise Refused(f"{value!r} is not supported by the Python runtime (supported: none)")
    raise Refused(f"{value!r} is not valid; use none, watermarks(lo, hi) or credits(w)")


# (key, default, description, check[, type]): the runtime's keys, defaults and
# types. As in the C++ ports: the policy table's counts are unsigned long, its
# one real a double, the rest strings; the runtime's own two (max_calls,
# sync_none_depth) long long. None of them changes while the component runs.
PROVIDES = (
    (
        "dispatch",
        "pool",
        "the threads that run upcalls into the provides port: pool, pool:N, serial (the ORB's "
        "threading, set by -ORB options) or single (a SINGLE_THREAD_MODEL POA)",
        _dispatch,
    ),
    (
        "worker",
        0,
        "worker queue depth; the Python runtime has none: 0 (the ORB thread runs the handler)",
        _worker,
        "unsigned long",
    ),
    ("worker_resume", "auto", "the worker queue's resume level; no effect without a worker", _worker_resume),
    (
        "ordering",
        "arrival",
        "arrival (packets go on as the ORB delivers them); resequence is not supported",
        one_of("arrival", "resequence", supported=("arrival",)),
    ),
    (
        "reorder_capacity",
        64,
        "the reorder buffer's size; no effect with ordering = arrival",
        at_least(1, WORK_QUEUE_MAX),
        "unsigned long",
    ),
    (
        "reorder_timeout_ms",
        50.0,
        "the reorder buffer's gap timeout; no effect with ordering = arrival",
        at_least(0, 600_000),
    ),
    ("flow", "none", "flow control: none (watermarks and credits are not supported)", _flow),
    (
        "packet_length",
        0,
        "samples every packet into the provides port must have; a packet of another length is "
        "refused and counted (0: any length)",
        at_least(0, PACKET_SAMPLES_MAX),
        "unsigned long",
    ),
    # Not a spec key: the bound on calls in progress, the runtime's own, as the C++ port has it.
    (
        "max_calls",
        128,
        "calls from the connection's sender the port serves at once; one more is refused and counted",
        at_least(1, 100_000),
    ),
    PROTOCOL,
)

USES = (
    ("call", "twoway", "twoway (pushPacket) or oneway (pushPacketOneway)", one_of(*CALLS)),
    (
        "sync",
        "transport",
        "when a one-way send returns: none (at once: a client-side queue and sender thread), "
        "transport (the bytes are in the socket), server (the server ORB has read the request), target (the "
        "servant has run)",
        one_of(*SYNCS),
    ),
    ("flow", "none", "flow control: none (watermarks and credits are not supported)", _flow),
    (
        "fanout",
        "sequential",
        "how the port's connections share a packet: sequential (one after another, in connect order, the "
        "caller waiting for each), parallel (a sender thread and a queue of fanout_depth per connection) or "
        "drop (as parallel, but a full queue drops the packet for that connection, counted)",
        one_of(*FANOUTS),
    ),
    (
        "fanout_depth",
        64,
        "packets each connection's queue holds (fanout = parallel or drop); no effect with sequential",
        at_least(1, WORK_QUEUE_MAX),
        "unsigned long",
    ),
    # Not a spec key: the sync=none queue's depth, as the C++ port has it.
    ("sync_none_depth", 1024, "packets the sync=none client queue holds before the caller blocks", at_least(1)),
    # Not spec keys: the transport of the connection, which the runner sets
    # as the C++ port has it; a Python port speaks CORBA only (orb), so the
    # runner never gives it shm.
    (
        "transport",
        "orb",
        "how the connection's packets travel: orb (CORBA calls); shm (a shared-memory ring) is not "
        "supported by the Python runtime",
        one_of("orb", "shm", supported=("orb",)),
    ),
    (
        "shm_bytes",
        1 << 20,
        "bytes of the shared-memory ring's data area (transport shm); no effect with orb",
        at_least(64 << 10, 1 << 30),
    ),
    PROTOCOL,
)


def declare(properties, port, keys):
    for key, default, description, check, *ptype in keys:
        properties.declare(f"{port}.{key}", default, description, check, type=ptype[0] if ptype else None)

"""Whether a resolved spec's policies GUARANTEE that packets reach each
output in the source's order, and why: decided from the policies alone,
never from what a run happened to show (docs/architecture.md, "Order
guaranteed by the policies").

The reasoning follows a packet from its source. A source sends its stream
in order from one thread. At each connection the question is whether the
receiving handler gets each stream's packets in the order the sender pushed
them, one at a time, and whether it runs on one thread at a time for the
whole connection (what the next hop may need: a one-way call from several
threads can go out on several ORB connections):

- `ordering = "resequence"`: one releaser per connection hands packets on
  in the sender's link order (a packet given up on is lost and counted as
  skipped, never delivered late). It restores the sender's order, so it
  helps only if the sender pushed in the source's order.
- collocated: a direct call on the sender's own thread (with `sync = "none"`
  on the port's one sending thread).
- the sender waits for the servant (`call = "twoway"`, or `sync = "target"`):
  a stream's next call starts once the previous one's upcall returned, on
  whatever transport and dispatch; a worker queue it fed is FIFO.
- one-way otherwise (`sync` none, transport or server):
  - over the shared-memory ring, packets are taken in the order published,
    and with one thread per connection (`serial`, `pool:1`, `single`: the
    runtime's ring documents it) handled in that order;
  - over CORBA, one thread per connection (`serial`, `pool:1`) serves one
    connection's requests in order; a stream stays on one connection when
    the port has one sending thread (`sync = "none"`), when the sender
    pushes from one thread, or with `sync = "server"` (its marker's reply
    comes after the upcall under one thread per connection);
  - into a pool of threads, calls of one connection overlap and can finish,
    or reach a worker queue, out of order; and `single` (the POA's
    single-thread model) serialises the servant without promising order.
    Neither guarantees order.
- an external component's own ports decide what it keeps: scabench cannot
  vouch for them.

A uses port with several connections (fan-out) hands each packet to every
one of them, as its `fanout` policy says, and each connection keeps order
by the rules above, given how it is pushed:

- `sequential`: the port's caller pushes to each connection in turn, in
  connect order; each connection sees the packets in the port's order, from
  the caller's thread(s), as a port with one connection would.
- `parallel`: a sender thread per connection takes its packets from a FIFO
  queue, in the port's order: each connection is pushed in order from one
  thread.
- `drop`: as parallel, but a full queue drops the packet for its connection
  alone. Order is kept among the packets that arrive, and packets may be
  lost: the guarantee says so (`may_lose`). This is the one loss the
  policies allow here; the rest of this module speaks of order only.

A component's handler runs on one thread at a time when its one connection
in delivers so, or when every connection in feeds one worker. Streams of a
fan-in are counted each on its own (docs/architecture.md, "Connections and
fan-in"), so several connections into one port keep each stream's order if
each connection does.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scabench.model.graph import fan_out
from scabench.model.policy import Policy
from scabench.model.transport import hop_transport

if TYPE_CHECKING:
    from scabench.model.spec import Spec


@dataclass(frozen=True)
class OrderGuarantee:
    """One output of a spec: whether its configuration guarantees that every
    stream reaches it in the source's order, and why, in a short reason."""

    output: str
    guaranteed: bool
    why: str
    # Whether the policies let a packet be dropped on its way here (a
    # fan-out port with fanout = "drop"): order, kept or not, is then about
    # the packets that arrive.
    may_lose: bool = False


@dataclass(frozen=True)
class _Hop:
    """What one connection does to order: whether it keeps each stream's
    order (given a sender that pushes it in order), whether it delivers on
    one thread at a time, and why, in words."""

    keeps: bool
    one_thread: bool
    why: str


def hop_order(policy: Policy, transport: str, sender_one_thread: bool) -> _Hop:
    """The rules of the module docstring for one connection: its Policy,
    its hop transport (model/transport.hop_transport) and whether its sender
    pushes from one thread at a time."""
    hop = _delivery(policy, transport, sender_one_thread)
    if hop.keeps and policy.worker_depth:
        # One worker thread per port, fed in order, takes the queue in order.
        return _Hop(True, True, hop.why + ", into a FIFO worker queue")
    return hop


def _delivery(policy, transport, sender_one_thread):
    if policy.ordering == "resequence":
        return _Hop(True, True, "resequenced (the reorder buffer releases packets in the sender's order)")
    if transport == "collocated":
        if policy.call == "oneway" and policy.sync == "none":
            return _Hop(True, True, "collocated (direct calls from the port's one sending thread)")
        return _Hop(True, sender_one_thread, "collocated (a direct call on the sender's thread)")
    if policy.call == "twoway" or policy.sync == "target":
        call = "two-way" if policy.call == "twoway" else "one-way with sync = target"
        return _Hop(True, sender_one_thread, f"{call} (the sender waits for each call's upcall before the next)")
    one_thread_each = policy.max_server_threads_per_connection == 1
    if transport == "shm":
        if one_thread_each or policy.dispatch == "single":
            return _Hop(
                True,
                True,
                f"one-way over the shared-memory ring with {policy.dispatch} dispatch "
                "(one thread takes its packets in order)",
            )
        return _Hop(
            False, False, f"one-way with {policy.dispatch} dispatch can reorder (upcalls of one connection overlap)"
        )
    if policy.dispatch == "single":
        return _Hop(
            False,
            False,
            "one-way into the single-thread POA can reorder (it serialises the servant but promises no order)",
        )
    if not one_thread_each:
        return _Hop(
            False, False, f"one-way with {policy.dispatch} dispatch can reorder (calls of one connection overlap)"
        )
    if policy.sync == "none":
        return _Hop(
            True,
            True,
            f"one-way with {policy.dispatch} dispatch from the port's one sending thread "
            "(one connection, served in order)",
        )
    if sender_one_thread:
        return _Hop(
            True,
            True,
            f"one-way with {policy.dispatch} dispatch from one sending thread (one connection, served in order)",
        )
    if policy.sync == "server":
        return _Hop(
            True,
            False,
            f"one-way, sync = server, {policy.dispatch} dispatch (each call's reply comes after its upcall)",
        )
    return _Hop(
        False,
        False,
        f"one-way with {policy.dispatch} dispatch from a sender that pushes from several "
        "threads can reorder (its calls may take several connections)",
    )


def fanout_push(policy: Policy, sender_one_thread: bool) -> tuple[bool, bool, str]:
    """How one connection of a fan-out port is pushed (the module
    docstring): (from one thread at a time, may lose packets, in words)."""
    if policy.fanout == "sequential":
        return sender_one_thread, False, "fan-out sequential (each connection in turn, in the port's order)"
    if policy.fanout == "parallel":
        return True, False, "fan-out parallel (a sender thread per connection, fed in order)"
    return (
        True,
        True,
        "fan-out drop (a sender thread per connection, fed in order; a full queue drops "
        "packets for its connection: order kept, packets may be lost)",
    )


def order_guarantees(spec: "Spec") -> list[OrderGuarantee]:
    """For each output of a resolved spec (a component that feeds nothing),
    whether its policies guarantee the source's order there, whether they
    let packets be lost on the way, and why."""
    flows: dict[str, tuple[bool, bool, bool, list[str]]] = {}
    fanned = {port for port in fan_out(spec.connections)}

    def flow(name):
        """(ordered, one_thread, may_lose, reasons) of the packets `name`'s
        handler gets and so pushes on: reasons are the hops' words, the
        first breaking one alone when order is not kept."""
        if name in flows:
            return flows[name]
        flows[name] = (False, False, False, [f"{name} is on a cycle"])  # a guard; specs are checked acyclic
        into = [c for c in spec.connections if c.provides[0] == name]
        if spec.component(name).external is not None:
            flows[name] = (False, False, False, [f"{name} is an external component: its own ports decide its order"])
            return flows[name]
        if not into:
            flows[name] = (True, True, False, [])  # a source sends its stream in order, from one thread
            return flows[name]
        ordered, lossy, reasons, hops = True, False, [], []
        for conn in into:
            up_ordered, up_one_thread, up_lossy, up_reasons = flow(conn.uses[0])
            pushed = []
            if tuple(conn.uses) in fanned:
                up_one_thread, drops, words = fanout_push(conn.policy, up_one_thread)
                up_lossy, pushed = up_lossy or drops, [words]
            lossy = lossy or up_lossy
            hop = hop_order(conn.policy, hop_transport(spec, conn), up_one_thread)
            hops.append(hop)
            if not up_ordered:
                ordered, reasons = False, up_reasons
                break
            if not hop.keeps:
                ordered, reasons = False, [f"{conn.id}: {hop.why}"]
                break
            reasons = list(dict.fromkeys(reasons + up_reasons + pushed + [hop.why]))
        one_port = len({c.provides[1] for c in into}) == 1
        one_thread = ordered and (
            hops[0].one_thread if len(into) == 1 else one_port and all(c.policy.worker_depth for c in into)
        )
        flows[name] = (ordered, one_thread, lossy, reasons)
        return flows[name]

    feeding = {c.uses[0] for c in spec.connections}
    out = []
    for comp in spec.components:
        if comp.name in feeding or not any(c.provides[0] == comp.name for c in spec.connections):
            continue
        ordered, _, lossy, reasons = flow(comp.name)
        out.append(OrderGuarantee(comp.name, ordered, "; ".join(reasons), lossy))
    return out


def guarantees_order(spec: "Spec") -> tuple[bool, str]:
    """Whether the spec's policies guarantee order at every output, and why
    (the reasons of order_guarantees, the outputs that cannot keep it first)."""
    each = order_guarantees(spec)
    broken = [g for g in each if not g.guaranteed]
    if broken:
        return False, "; ".join(dict.fromkeys(g.why for g in broken))
    return True, "; ".join(dict.fromkeys(g.why for g in each))

"""A domain's nodes as a launcher sees them (docs/architecture.md, "Nodes").

A node is a `scabench node` agent on some machine: an SCA DeviceManager with
one ExecutableDevice, registered in the domain's Naming Service as

    nodes/<name>/device_manager   CF::DeviceManager
    nodes/<name>/device           scabench::node::NodeDevice (a CF::ExecutableDevice)

(The launcher also drives a plain CF::ExecutableDevice bound at
nodes/<name>/device, a REDHAWK GPP, on its own machine:
cpp/programs/launcher/plain_nodes.cpp. This module speaks to scabench's.)

Its device loads, executes and terminates component programs, allocates the
node's capacities (CAPACITY_CORES, CAPACITY_MEMORY) and lists the processes
it started with their CPU and context switches. This module is the client's
side of that: where the names are, how to resolve them, and how to tell a
dead node from a live one. The agent (scabench.node) registers under the
same names; one place says what they are.

A node is alive while its device answers `operationalState` ENABLED within
the caller's timeout: node_alive(). A killed agent refuses the connection at
once; a hung one, or a machine that is gone, answers nothing and fails the
call at the timeout; an agent that has lost its domain's Naming Service
answers DISABLED until it comes back or the agent gives up (its grace).
Checked every P seconds, a dead node is noticed within P + timeout."""

from dataclasses import dataclass
from typing import Any

import omniORB
from omniORB import CORBA

from scabench.components import idl
from scabench.components.ports import describe
from scabench.errors import RunError, ScabenchError, one_line
from scabench.model.checks import DOMAIN_SCHEMES, NODE_NAME_RULE, is_node_name

S = idl.load()
CF, CosNaming = S.CF, S.CosNaming

NODES_CONTEXT = "nodes"
DEVICE_MANAGER = "device_manager"
DEVICE = "device"
CAPACITY_CORES = "cores"  # whole CPUs of the node's CPU list (an integer)
CAPACITY_MEMORY = "memory_mib"  # MiB of the memory the node offers (an integer)
ALIVE_TIMEOUT_S = 2.0


def check_node_name(name: str, where: str = "--name") -> str:
    if not is_node_name(name):
        raise ScabenchError(f"{where}: {one_line(name)!r} is not a node name: use {NODE_NAME_RULE}")
    return name


def node_path(name: str, leaf: str | None = None) -> list[Any]:
    """The CosNaming name of a node's context, or of one of its bindings."""
    path = [CosNaming.NameComponent(NODES_CONTEXT, ""), CosNaming.NameComponent(name, "")]
    return path + [CosNaming.NameComponent(leaf, "")] if leaf else path


def domain_root(orb: Any, domain: str, where: str = "--domain", timeout_s: float = ALIVE_TIMEOUT_S) -> Any:
    """The root naming context of the domain's Naming Service, given as a
    corbaloc (corbaloc::HOST:PORT/NameService). A string that names no object
    or another kind of object: ScabenchError (bad input); a service that
    does not answer: RunError."""
    shown = one_line(domain)
    if not domain.startswith(DOMAIN_SCHEMES):
        raise ScabenchError(
            f"{where}: {shown!r} is not an object reference; "
            "use corbaloc::HOST:PORT/NameService (or corbaloc:iiop:HOST:PORT/NameService)"
        )
    try:
        obj = orb.string_to_object(domain)
    except CORBA.Exception:
        obj = None
    if obj is None:
        raise ScabenchError(f"{where}: {shown!r} does not parse as a reference; use corbaloc::HOST:PORT/NameService")
    omniORB.setClientCallTimeout(obj, int(timeout_s * 1000))
    try:
        root = obj._narrow(CosNaming.NamingContext)
    except CORBA.SystemException as exc:
        raise RunError(f"the domain's Naming Service at {shown} does not answer: {describe(exc)}") from None
    if root is None:
        raise ScabenchError(f"{where}: {shown} is not a Naming Service (not a CosNaming naming context)")
    omniORB.setClientCallTimeout(root, int(timeout_s * 1000))
    return root


@dataclass
class NodeRefs:
    name: str
    device_manager: object  # CF::DeviceManager
    device: object  # scabench::node::NodeDevice


def resolve_node(root: Any, name: str) -> "NodeRefs":
    """A node's references, from the domain's root naming context. RunError
    names the node when it is not registered."""
    try:
        manager = root.resolve(node_path(name, DEVICE_MANAGER))._narrow(CF.DeviceManager)
        device = root.resolve(node_path(name, DEVICE))._narrow(S.node.NodeDevice)
    except CosNaming.NamingContext.NotFound:
        raise RunError(f"no node {name!r} is registered in the domain (nodes/{name})", component=name) from None
    except CORBA.SystemException as exc:
        raise RunError(f"node {name!r} does not answer: {describe(exc)}", component=name) from None
    return NodeRefs(name, manager, device)


def list_nodes(root: Any) -> list[str]:
    """The names registered under nodes/ (alive or not: see node_alive)."""
    try:
        context = root.resolve([CosNaming.NameComponent(NODES_CONTEXT, "")])._narrow(CosNaming.NamingContext)
    except CosNaming.NamingContext.NotFound:
        return []
    bindings, rest = context.list(1000)
    names = [b.binding_name[0].id for b in bindings]
    if rest is not None:
        while True:
            more, batch = rest.next_n(1000)
            names += [b.binding_name[0].id for b in batch]
            if not more:
                break
        rest.destroy()
    return sorted(names)


def node_alive(device: Any, timeout_s: float = ALIVE_TIMEOUT_S) -> bool:
    """True when the node's device answers operationalState ENABLED within
    timeout_s. Sets that call timeout on the reference given (omniORB keeps it
    per reference)."""
    omniORB.setClientCallTimeout(device, max(1, int(timeout_s * 1000)))
    try:
        return device._get_operationalState() == CF.Device.ENABLED
    except CORBA.SystemException:
        return False


def node_processes(device: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The node's process records as dicts, oldest first, and their totals
    (what the node's processes cost, for a run's results)."""
    records = [
        {
            "pid": r.pid,
            "program": r.program,
            "identifier": r.identifier,
            "running": r.running,
            "exit_status": None if r.running else r.exitStatus,
            "user_s": r.userSeconds,
            "system_s": r.systemSeconds,
            "context_switches": r.contextSwitches,
            "error_tail": r.errorTail,
        }
        for r in device.processes()
    ]
    totals = {
        "user_s": sum(r["user_s"] for r in records),
        "system_s": sum(r["system_s"] for r in records),
        "context_switches": sum(r["context_switches"] for r in records),
    }
    return records, totals

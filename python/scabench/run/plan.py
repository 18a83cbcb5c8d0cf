"""The deployment plan of a run: everything `scabench-launch` is handed,
worked out once from a spec (docs/plan.schema.json is its published form).

Per process: its components (each with every property configure sets), where
it runs (cores, scheduler, node), its ORB options and the memory it needs.
Per hop: both ends (component and port), the protocol the ports speak, the
transport its packets take, its ring, its policy and the properties each end
gets for it. The launcher reads the plan only through its parser
(cpp/programs/launcher/plan.cpp), which refuses one that breaks the schema.

A hop names its ends by port, and a port may appear in several hops: a
component with several named ports, or a uses port that feeds several
connections, needs no other shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scabench.model.catalog import PYTHON_KINDS
from scabench.model.graph import fan_out, start_order
from scabench.model.pipeline import packets_through
from scabench.model.policy import host_orb_options, one_connection_properties
from scabench.model.resources import process_memory_bytes
from scabench.model.transport import endpoint_transport, hop_transport, ring_bytes, uses_properties
from scabench.paths import program

if TYPE_CHECKING:
    from scabench.model.policy import Policy
    from scabench.model.spec import Connection, Spec
    from scabench.run.network import NetworkHosts

# How the launcher joins a hop's two ends: getPort on each, then the uses
# port's CF::Port::connectPort, the only way it knows. (Plans written before
# called this the hop's "protocol", "scabench"; what the ports speak on the
# wire is the policy's `protocol`, in the ends' properties.)
WIRING = "connectPort"
BULKIO = "bulkio"  # the policy's protocol for BulkIO's pushSRI/pushPacket (docs/reference/bulkio.md)
# Options every host gets. verifyObjectExistsAndType 0: the first call on a
# reference would otherwise be a LocateRequest round trip, even for a oneway.
BASE_ORB_OPTIONS = ["-ORBverifyObjectExistsAndType", "0", "-ORBgiopMaxMsgSize", str(64 << 20)]
# An external program that takes -ORB options gets what scabench-host sets
# for itself too: a unix socket only its owner may connect to.
EXTERNAL_ORB_OPTIONS = ["-ORBunixTransportPermission", "0600"]

Process = tuple[str, Any]  # Spec.process_of: ("host", index) or ("external", name)


@dataclass
class Placement:
    """Where a process runs: its CPU set (empty on a node: the node's CPUs
    are not this machine's), its scheduler, and its node (None: here)."""

    cores: list[int]
    scheduler: str
    node: str | None = None


@dataclass
class PlannedComponent:
    """A component as the launcher configures it: `properties` is every
    property configure sets, its own and those its hops give its ports."""

    name: str
    kind: str
    sample_type: str
    properties: dict[str, Any]
    library: str | None = None  # a plugin the host loads before creating it


@dataclass
class HostProcess:
    """A scabench-host process and the components it holds."""

    name: str
    placement: Placement
    orb_options: list[str]
    components: list[PlannedComponent]
    memory_bytes: int = 0


@dataclass
class ExternalComponent:
    """A component the launcher does not host: a program it starts with the
    SCA exec parameters (`exec`), or a reference someone else started (`ref`)."""

    component: PlannedComponent
    process: str | None = None  # the process's name (process_name); None for a reference
    ref: str | None = None
    release: bool = True
    exec: list[str] | None = None
    program: str | None = None  # on a node: the node's own program of that name
    placement: Placement | None = None
    bind_timeout_s: float = 30.0
    parameters: dict[str, str] = field(default_factory=dict)
    orb_options: list[str] = field(default_factory=list)
    memory_bytes: int = 0

    @property
    def name(self) -> str:
        return self.component.name


@dataclass
class HopEnd:
    """One end of a hop: a component's port, and the properties that hop
    gives that port."""

    component: str
    port: str
    properties: dict[str, Any]


@dataclass
class Hop:
    """A connection as deployed."""

    id: str
    uses: HopEnd
    provides: HopEnd
    transport: str  # model/transport.py HOP_TRANSPORTS
    policy: dict[str, Any]  # the resolved policy (Policy.as_dict)
    wiring: str = WIRING
    ring_bytes: int | None = None  # shm: the ring's data area


@dataclass
class NodeShare:
    """What the run allocates on a node (its processes' estimate)."""

    name: str
    memory_mib: int
    same_machine: bool  # a network host's node: this machine in a namespace


@dataclass
class Plan:
    run_dir: str
    host_binary: str
    timeout_s: float
    measure_cores: list[int]
    hosts: list[HostProcess]
    externals: list[ExternalComponent]
    nodes: list[NodeShare]
    # In the spec's order, which the launcher connects in: a receiving port
    # numbers its connections in the order they attach, and each record names
    # its connection by that number.
    hops: list[Hop]
    # Every component, in the order the launcher starts them; it stops them
    # in reverse, as an SCA application does (graph.start_order).
    start_order: list[str] = field(default_factory=list)
    naming: dict[str, Any] | None = None  # where the run binds (NamingService.describe)
    announce_start: bool = False
    hold: bool = False

    def to_json(self) -> dict[str, Any]:
        """The plan as scabench-launch reads it (docs/plan.schema.json)."""
        doc = {
            "run_dir": self.run_dir,
            "host_binary": self.host_binary,
            "timeout_s": self.timeout_s,
            "measure_cores": self.measure_cores,
            "hosts": [_host_json(h) for h in self.hosts],
            "externals": [_external_json(e) for e in self.externals],
            "nodes": [{"name": n.name, "memory_mib": n.memory_mib, "same_machine": n.same_machine} for n in self.nodes],
            "connections": [_hop_json(h) for h in self.hops],
            "start_order": self.start_order,
            "announce_start": self.announce_start,
            "hold": self.hold,
        }
        if self.naming is not None:
            doc["naming"] = self.naming
        return doc

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.to_json(), indent=2))


def process_cores(spec: Spec) -> list[list[int]]:
    """Each process's CPU set, the hosts' then the external programs' (in
    spec order): all run cores, or with pin one core each in turn."""
    count = spec.process_count()
    if spec.pin:
        return [[spec.cores[i % len(spec.cores)]] for i in range(count)]
    return [list(spec.cores) for _ in range(count)]


def process_name(spec: Spec, process: Process) -> str:
    """What the launcher calls a process of the run (Spec.process_of), as its
    record in the manifest names it: host<i>-<its components joined by +>,
    or exec-<NAME> for an external program (scabench-launch)."""
    kind, key = process
    return f"host{key}-" + "+".join(spec.hosts[key]) if kind == "host" else f"exec-{key}"


def process_nodes(spec: Spec, network: NetworkHosts | None = None) -> dict[Process, str]:
    """{process (Spec.process_of): node} of the processes placed on a node:
    the spec's placement.nodes, or with `network` (network.NetworkHosts)
    every host on the node of its namespace."""
    if network is not None:
        return {("host", i): network.node_name(i) for i in range(len(spec.hosts))}
    placed: dict[Process, str | None] = {("host", i): spec.node_of(members[0]) for i, members in enumerate(spec.hosts)}
    placed.update({("external", c.name): spec.node_of(c.name) for c in spec.externals()})
    return {process: node for process, node in placed.items() if node is not None}


def plan_of(spec: Spec, run_dir: Path, timeout_s: float, network: NetworkHosts | None = None) -> Plan:
    """What scabench-launch runs. A process placed on a node is started by
    the node (its entry says which; the node gives it its endpoint); with
    `network` (a network.NetworkHosts) every host is, each on the node of
    its namespace, listening behind its emulated link."""
    port_properties = _uses_port_properties(spec)
    hops = [_hop(spec, conn, port_properties[tuple(conn.uses)]) for conn in spec.connections]
    properties = {c.name: dict(c.properties) for c in spec.components}
    through = packets_through(spec)
    for c in spec.components:
        if c.external is None:  # the runtime's own property: an external component has no record file
            properties[c.name]["record_capacity"] = through[c.name] + 16
    incoming: dict[Process, list[Policy]] = {}  # process -> the policies of its remote connections in
    for hop, conn in zip(hops, spec.connections):
        for end in (hop.uses, hop.provides):
            properties[end.component].update(end.properties)
        # A hop over shared memory: no packet of it reaches the receiving ORB, whose dispatch it leaves alone.
        if hop.transport not in ("collocated", "shm"):
            incoming.setdefault(spec.process_of(conn.provides[0]), []).append(conn.policy)
    cores = process_cores(spec)
    on_node = process_nodes(spec, network)
    memory = process_memory_bytes(spec)

    def component(name: str) -> PlannedComponent:
        c = spec.component(name)
        return PlannedComponent(
            c.name, c.kind, spec.sample_type, properties[name], str(c.library) if c.library is not None else None
        )

    hosts = []
    for i, members in enumerate(spec.hosts):
        node = on_node.get(("host", i))
        hosts.append(
            HostProcess(
                name=process_name(spec, ("host", i)),
                # On a node the run's CPUs are this machine's: only a network host's
                # (this machine, in a namespace) are asked for there.
                placement=Placement(cores[i] if node is None or network is not None else [], spec.scheduler, node),
                orb_options=([] if node is not None else _endpoint(spec, run_dir, f"host{i}"))
                + BASE_ORB_OPTIONS
                + host_orb_options(incoming.get(("host", i), [])),
                components=[component(n) for n in members],
                memory_bytes=memory.get(("host", i), 0),
            )
        )
    externals = []
    exec_cores = iter(cores[len(spec.hosts) :])
    for c in spec.externals():
        ext = c.external
        assert ext is not None  # externals(): the components that have one
        if ext.ref is not None:
            externals.append(ExternalComponent(component(c.name), ref=ext.ref, release=ext.release))
            continue
        assert ext.program is not None  # an External is a reference or a program
        node = on_node.get(("external", c.name))
        own_cores = next(exec_cores)
        # On a node the program is the node's own, the endpoint the node's to give.
        endpoint = [] if node is not None else (_endpoint(spec, run_dir, f"exec-{c.name}") + EXTERNAL_ORB_OPTIONS)
        orb_options = endpoint + BASE_ORB_OPTIONS + host_orb_options(incoming.get(("external", c.name), []))
        externals.append(
            ExternalComponent(
                component(c.name),
                process=process_name(spec, ("external", c.name)),
                exec=list(ext.program),
                # On a node the node runs its own installation's program, by its name.
                program=(PYTHON_KINDS[c.kind].script if c.kind in PYTHON_KINDS else Path(ext.program[0]).name)
                if node is not None
                else None,
                placement=Placement(own_cores if node is None else [], spec.scheduler, node),
                bind_timeout_s=ext.bind_timeout_s,
                parameters={
                    "SAMPLE_TYPE": spec.sample_type,
                    **{k: v.replace("{run_dir}", str(run_dir)) for k, v in ext.parameters.items()},
                },
                orb_options=orb_options if ext.orb_options else [],
                memory_bytes=memory.get(("external", c.name), 0),
            )
        )
    on_nodes: dict[str, int] = {}  # node -> the bytes its processes need
    for process, need in memory.items():
        if process in on_node:
            on_nodes[on_node[process]] = on_nodes.get(on_node[process], 0) + need
    return Plan(
        run_dir=str(run_dir),
        host_binary=str(program("scabench-host")),
        timeout_s=timeout_s,
        measure_cores=list(spec.cores),
        hosts=hosts,
        externals=externals,
        # MiB, rounded up; a network host's node is this machine.
        nodes=[NodeShare(node, -(-need // (1 << 20)), network is not None) for node, need in on_nodes.items()],
        hops=hops,
        start_order=start_order(spec, spec.start_order),
    )


def build_assembly(spec: Spec, run_dir: Path, timeout_s: float, network: NetworkHosts | None = None) -> dict[str, Any]:
    """The plan of a run as scabench-launch reads it (plan_of, to_json)."""
    return plan_of(spec, run_dir, timeout_s, network).to_json()


def _uses_port_properties(spec: Spec) -> dict[tuple[str, str], dict[str, Any]]:
    """{uses port: the properties its hops give it}, worked out once a port:
    its connections agree on the sending side's keys (spec_toml checks it:
    one port, one setting), a port with one connection gets no fan-out keys
    (policy.one_connection_properties), and a port with a hop over shared memory makes
    its ring (transport.uses_properties). Every hop of the port carries the
    same, so that the launcher sets the port once whichever hop it reads."""
    fanned = fan_out(spec.connections)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    first: dict[tuple[str, str], tuple[Connection, dict[str, Any]]] = {}
    for conn in spec.connections:
        own = conn.policy.uses_properties(conn.uses[1])
        earlier, theirs = first.setdefault(tuple(conn.uses), (conn, dict(own)))
        if own != theirs:
            # The spec layer refuses it; a Spec built or changed another way
            # must not reach a run with one of the settings silently kept.
            differ = sorted(k for k in own.keys() | theirs.keys() if own.get(k) != theirs.get(k))
            raise ValueError(
                f"{earlier.id} and {conn.id} give one uses port different {', '.join(differ)}: "
                "a port has one setting (spec_toml._check_fan_out)"
            )
        port = out.setdefault(tuple(conn.uses), own if tuple(conn.uses) in fanned else one_connection_properties(own))
        port.update(uses_properties(spec, conn))
    return out


def _speaks_bulkio_only(spec: Spec, conn: Connection, component: str) -> bool:
    """Whether an end of a connection is a program of its own on a BulkIO
    hop: a BulkIO port written elsewhere (a REDHAWK component's), which has
    no place for scabench's policy keys and would refuse them as properties
    it does not have. Its end gets none; the policy is kept by scabench's end."""
    c = spec.component(component)
    return c.external is not None and c.kind == "external" and conn.policy.values.get("protocol") == BULKIO


def _hop(spec: Spec, conn: Connection, uses: dict[str, Any]) -> Hop:
    """A connection as deployed, its uses end with its port's properties (_uses_port_properties)."""
    transport = hop_transport(spec, conn)
    provides = conn.policy.provides_properties(conn.provides[1])
    if _speaks_bulkio_only(spec, conn, conn.provides[0]):
        provides = {}
    if _speaks_bulkio_only(spec, conn, conn.uses[0]):
        uses = {}
    return Hop(
        id=conn.id,
        uses=HopEnd(conn.uses[0], conn.uses[1], dict(uses)),
        provides=HopEnd(conn.provides[0], conn.provides[1], provides),
        transport=transport,
        policy=conn.policy.as_dict(),
        ring_bytes=ring_bytes(spec) if transport == "shm" else None,
    )


def _endpoint(spec: Spec, run_dir: Path, name: str) -> list[str]:
    """Where a process of the run listens: loopback tcp, or a unix socket in
    the run's directory (transport unix, and shm's control)."""
    if endpoint_transport(spec) == "tcp":
        return ["-ORBendPoint", "giop:tcp:127.0.0.1:"]
    return ["-ORBendPoint", f"giop:unix:{run_dir}/{name}.sock"]


def _placement_json(p: Placement) -> dict[str, Any]:
    return {"cores": p.cores, "scheduler": p.scheduler, **({"node": p.node} if p.node is not None else {})}


def _component_json(c: PlannedComponent) -> dict[str, Any]:
    entry = {"name": c.name, "kind": c.kind, "sample_type": c.sample_type, "properties": c.properties}
    if c.library is not None:
        entry["library"] = c.library
    return entry


def _host_json(h: HostProcess) -> dict[str, Any]:
    return {
        "name": h.name,
        **_placement_json(h.placement),
        "orb_options": h.orb_options,
        "memory_bytes": h.memory_bytes,
        "components": [_component_json(c) for c in h.components],
    }


def _external_json(e: ExternalComponent) -> dict[str, Any]:
    entry = _component_json(e.component)
    if e.ref is not None:
        entry.update(ref=e.ref, release=e.release)
        return entry
    if e.program is not None:
        entry["program"] = e.program
    assert e.placement is not None  # make_plan places every external it starts; only a reference has none
    entry.update(
        process=e.process,
        exec=e.exec,
        **_placement_json(e.placement),
        bind_timeout_s=e.bind_timeout_s,
        parameters=e.parameters,
        orb_options=e.orb_options,
        memory_bytes=e.memory_bytes,
    )
    return entry


def _hop_json(h: Hop) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": h.id,
        "wiring": h.wiring,
        "transport": h.transport,
        "uses": {"component": h.uses.component, "port": h.uses.port, "properties": h.uses.properties},
        "provides": {"component": h.provides.component, "port": h.provides.port, "properties": h.provides.properties},
        "policy": h.policy,
    }
    if h.ring_bytes is not None:
        entry["ring_bytes"] = h.ring_bytes
    return entry

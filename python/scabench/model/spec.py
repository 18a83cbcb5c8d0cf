"""The data model of a run spec: Spec, its components, connections and
external components, and the copies a caller makes of a spec with one
thing changed (`Spec.with_*`). Reading a spec's TOML tables is
model/spec_toml.py; finding and loading a spec file (a path, a name, a
SAD) is model/load.py.
key and turns the file into a Spec; `Spec.assembly` is what the launcher runs.

A spec (see experiments/paper/exp6.toml):

  [experiment]   name, title, and free-form notes
  [run]          sample_type, transport ("tcp" | "unix" | "shm": transport.py), cores ("all" | [..]),
                 pin (each process on its own core), scheduler ("normal" |
                 "batch": Linux SCHED_BATCH for every host), timeout_s,
                 start_order (components the launcher starts in that order,
                 stops in reverse; the others around them: graph.start_order)
  [[component]]  name, kind, and the kind's properties (scabench-host --describe);
                 library = "path/libx.so": the kind comes from that component
                 library (a plugin; the path relative to the spec's folder);
                 kind = "py-stage": the stage in Python, a program of its own;
                 kind = "external": exec = "program" (started with the SCA
                 exec parameters) or ref = "IOR:..." | "corbaloc:..." |
                 "corbaname:..." | a name with naming = "corbaloc:...", plus
                 its properties (see External)
  [policy]       the default policy of every connection (see policy.py)
  chain = [...]  connects each component's "out" to the next one's "in"
  [[connection]] from = "a.out", to = "b.in", plus policy keys that override [policy].
                 The waveform is a graph without loops: a uses port may feed
                 several connections (fan-out: its fanout policy says how),
                 a provides port take several (fan-in); the connections of
                 one port agree on that side's keys (one port, one setting);
                 both ends carry one sample type; every required provides
                 port is connected; every branch ends at a component that
                 records (model/spec_toml.py checks it all)
  [placement]    hosts = [["a", "b"], ["c"]]: components sharing a process
                 (default: one process per component, the paper's set-up);
                 nodes = { n1 = ["a", "b"], n2 = ["c"] }: the processes of
                 those components run on those nodes (`scabench node`); the
                 others on this machine
  [domain]       naming = "corbaloc::HOST:2809/NameService": the domain whose
                 nodes placement.nodes names
  [network]      delay_ms, jitter_ms: each process on a network host of its
                 own, behind an emulated link with this one-way delay (network.py)
"""

import copy
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scabench.errors import ScabenchError, SpecError
from scabench.files import check_writable
from scabench.model import graph
from scabench.model.catalog import EXTERNAL, kind_of, properties_of
from scabench.model.checks import (
    SAMPLE_BYTES,
    check_dispatch_per_host,
    check_external_property,
    check_network,
    check_nodes,
    check_property,
    check_python_ports,
    check_transport,
    network_settings,
    parse_cores,
    policy_of,
)
from scabench.model.link import LinkSettings
from scabench.model.policy import Policy, policy_tables
from scabench.model.transport import check_bulkio_hops, check_transport_name, hop_transport

# What a waveform built in code (scabench.Waveform, api.py) is called where a
# spec's file would be: in its errors and as its result's "file". A run
# names its naming context after NAME, as after a file's stem.
# Properties that name a file, by kind: a relative one is from the spec's
# folder (from the working directory for --set, and for a waveform built in
# code), made absolute here, since a component runs in a directory of its own.
FILE_PROPERTIES = {"producer": ("path",), "sink": ("capture",)}


def file_property(kind: str, key: str) -> bool:
    """Whether `key` of a component of `kind` names a file (FILE_PROPERTIES)."""
    return key in FILE_PROPERTIES.get(kind, ())


CODE_SOURCE = re.compile(r"<waveform ([A-Za-z0-9][A-Za-z0-9_.-]*)>")


def code_source(name: str) -> Path:
    """The stand-in for the file of a waveform built in code."""
    return Path(f"<waveform {name}>")


# The keys of a spec's [run] table.
RUN_TABLE_KEYS = ("sample_type", "transport", "cores", "pin", "scheduler", "timeout_s", "start_order")
# How Linux schedules the hosts' threads. "batch" (SCHED_BATCH) tells it they
# are throughput work: a thread that wakes (an ORB thread taking a packet)
# waits for the running one's slice instead of preempting it.
SCHEDULERS = ("normal", "batch")
SAMPLE_TYPES = tuple(SAMPLE_BYTES)
# How long an external program may take to bind its name, unless its spec
# says: a Python program starting on a busy machine takes seconds.
BIND_TIMEOUT_S = 30.0
# The most a spec may give it; the plan's schema (docs/plan.schema.json)
# says the same, and the launcher holds the plan to the schema.
BIND_TIMEOUT_MAX_S = 600.0


@dataclass
class External:
    """How the run gets a component that scabench-host does not host
    (docs/architecture.md, "External components"): a program the launcher
    starts with the SCA exec parameters, or a reference to a component
    someone else started. Either way it has no record file: the run measures
    its packets at the port of the component it feeds."""

    program: list[str] | None = None  # the program's argv before the exec parameters
    parameters: dict[str, str] = field(
        default_factory=dict
    )  # more exec parameters, KEY: text ({run_dir}: the run's directory)
    orb_options: bool = False  # it takes omniORB's -ORB options: the run's endpoint and dispatch, as a host
    bind_timeout_s: float = BIND_TIMEOUT_S
    ref: str | None = None  # IOR:, corbaloc: or corbaname: (a name in a Naming Service)
    release: bool = True  # releaseObject at the end; false: stopped and disconnected only

    def describe(self) -> dict[str, Any]:
        if self.ref is not None:
            return {"ref": self.ref, "release": self.release}
        return {
            "exec": self.program,
            "parameters": self.parameters,
            "orb_options": self.orb_options,
            "bind_timeout_s": self.bind_timeout_s,
        }


@dataclass
class Component:
    name: str
    kind: str
    properties: dict
    library: Path | None = None  # the component library (plugin) its kind comes from; None: built in
    external: External | None = None  # None: hosted by scabench-host


@dataclass
class Connection:
    uses: tuple  # (component, port)
    provides: tuple  # (component, port)
    policy: Policy
    # Where the spec declares it ("chain[0]", "connection[2]"), for the
    # errors that name it; not part of what the connection is.
    where: str = field(default="connection", compare=False, repr=False)
    # The protocol its ports' SCDs decided (a SAD's connection whose ports
    # name their repids; None: nothing but the policy decides). No policy
    # override may change it: the ports speak what their repids say.
    protocol_from_scds: str | None = field(default=None, compare=False, repr=False)

    @property
    def id(self) -> str:
        return f"{self.uses[0]}.{self.uses[1]}->{self.provides[0]}.{self.provides[1]}"


@dataclass
class Spec:
    path: Path
    experiment: dict
    sample_type: str
    transport: str
    cores: list
    pin: bool
    timeout_s: float
    components: list
    connections: list
    hosts: list = field(default_factory=list)
    network: LinkSettings | None = None  # None: every process on this machine's loopback
    scheduler: str = "normal"
    # Where processes run (docs/architecture.md, "Placement on nodes"): node
    # name -> the components whose processes it runs; the others run here.
    nodes: dict = field(default_factory=dict)
    domain: str | None = None  # the Naming Service the nodes are registered in (a corbaloc)
    # Components the launcher starts in this order (and stops in reverse),
    # the others around them in its safe order (graph.start_order); empty:
    # the safe order for all.
    start_order: list = field(default_factory=list)

    def component(self, name: str) -> Component:
        return next(c for c in self.components if c.name == name)

    def externals(self) -> list[Component]:
        return [c for c in self.components if c.external is not None]

    def process_count(self) -> int:
        """The processes the run starts for its components: one per host, and
        one per external program (a referenced component is someone else's)."""
        return len(self.hosts) + sum(
            c.external is not None and c.external.program is not None for c in self.externals()
        )

    def host_of(self, name: str) -> int | None:
        """The index of the host holding `name`; None for an external component."""
        return next((i for i, h in enumerate(self.hosts) if name in h), None)

    def process_of(self, name: str) -> tuple[str, Any]:
        """The process `name` runs in: ("host", index), or ("external", name)."""
        host = self.host_of(name)
        return ("host", host) if host is not None else ("external", name)

    def node_of(self, name: str) -> str | None:
        """The node a component's process runs on; None: this machine."""
        return next((node for node, members in self.nodes.items() if name in members), None)

    def collocated(self, conn: Connection) -> bool:
        host = self.host_of(conn.uses[0])
        return host is not None and host == self.host_of(conn.provides[0])

    def sources(self) -> list[str]:
        """Components no connection feeds (graph.sources)."""
        return graph.sources(self)

    def pipeline_order(self) -> list[str]:
        """Components in data-flow order, each after all that feed it (graph.topological_order)."""
        return graph.topological_order(self)

    def packet_sources(self) -> list[Component]:
        """Sources that send a counted stream (a `packets` property): the
        producer, the STANAG 4285 data source. In data-flow order."""
        return [
            self.component(n)
            for n in self.pipeline_order()
            if n in self.sources()
            and self.component(n).external is None
            and "packets" in properties_of(self.component(n))
        ]

    def check_packet_sizes(self, where: str = "component") -> None:
        """Every property whose range depends on the run's sample type (a
        packet's samples must fit in one ORB message), judged for it: the
        properties' own checks know no sample type."""
        for i, c in enumerate(self.components):
            declared = kind_of(c)
            for key, value in c.properties.items():
                if declared is not None and "by_sample_type" in declared["properties"].get(key, {}):
                    check_property(
                        self.path,
                        f"{where}[{i}].{key}" if where == "component" else where,
                        c.kind,
                        key,
                        value,
                        c.library,
                        self.sample_type,
                    )

    def check_recordings(self, where: str = "component") -> None:
        """A producer that plays a file plays a SigMF recording of the run's
        sample type, and a capture sink's files can be written: before any
        process starts (scabench/recording.py)."""
        # Imported here: the recording reader loads sigmf.
        from scabench.recording import DATATYPES, recording_base, recording_datatype

        for i, c in enumerate(self.components):
            at = lambda key: f"{where}[{i}].{key}" if where == "component" else f"{where}.{key}"  # noqa: E731
            if c.kind == "producer" and c.properties.get("signal") == "file":
                if not c.properties.get("path"):
                    raise SpecError(
                        self.path,
                        at("path"),
                        'signal = "file" plays the SigMF recording named by path (NAME or NAME.sigmf-meta)',
                    )
                try:
                    datatype = recording_datatype(c.properties["path"])
                except ScabenchError as exc:
                    raise SpecError(self.path, at("path"), str(exc)) from None
                if datatype != DATATYPES[self.sample_type]:
                    raise SpecError(
                        self.path,
                        at("path"),
                        f"the recording's datatype is {datatype}; a "
                        f"{self.sample_type} pipeline plays {DATATYPES[self.sample_type]} "
                        "(run.sample_type)",
                    )
            if c.kind == "sink" and c.properties.get("capture"):
                base = recording_base(c.properties["capture"])
                for ext in (".sigmf-data", ".sigmf-meta"):
                    try:
                        check_writable(f"{base}{ext}", at("capture"))
                    except ScabenchError as exc:
                        raise SpecError(self.path, at("capture"), str(exc).removeprefix(f"{at('capture')}: ")) from None

    # The copies of a spec with one thing changed, checked as the spec's own
    # tables are. `where` is what a refusal names for the value: the caller
    # knows where it came from (a command-line flag, a grid key, a campaign's
    # configuration); the spec it was called on is left as it was.
    def _copy(self) -> "Spec":
        return copy.deepcopy(self)

    def with_packets(self, packets: int, *, where: str) -> "Spec":
        """Every packet source (packet_sources) sending `packets`."""
        spec = self._copy()
        for c in spec.packet_sources():
            c.properties["packets"] = check_property(
                spec.path, where, c.kind, "packets", packets, c.library, spec.sample_type
            )
        return spec

    def with_cores(self, cores: list[int]) -> "Spec":
        """The run on these CPUs (checked by checks.parse_cores)."""
        spec = self._copy()
        spec.cores = list(cores)
        return spec

    def with_pin(self, pin: bool) -> "Spec":
        """Each process pinned to a core of its own, or not."""
        spec = self._copy()
        spec.pin = bool(pin)
        return spec

    def with_scheduler(self, scheduler: str, *, where: str) -> "Spec":
        """The hosts' threads under this Linux scheduler (SCHEDULERS)."""
        if scheduler not in SCHEDULERS:
            raise SpecError(self.path, where, f"{scheduler!r} is not valid; use one of: {', '.join(SCHEDULERS)}")
        spec = self._copy()
        spec.scheduler = scheduler
        return spec

    def with_transport(self, transport: str, *, where: str) -> "Spec":
        """The run's hops over tcp, unix or shm (model/transport.py)."""
        check_transport_name(self.path, where, transport)
        spec = self._copy()
        spec.transport = transport
        check_transport(spec, where)
        check_bulkio_hops(spec, where)
        return spec

    def with_policy(self, overrides: dict[str, Any], *, where: str) -> "Spec":
        """Policy keys (call, sync, dispatch, worker...) on every connection,
        on top of what the spec gave it."""
        spec = self._copy()
        for conn in spec.connections:
            decided = conn.protocol_from_scds
            if "protocol" in overrides and decided is not None and overrides["protocol"] != decided:
                raise SpecError(
                    spec.path,
                    f"{where}.protocol",
                    f"{overrides['protocol']!r}, but the ports of {conn.id} are {decided} ports by their SCDs' "
                    "repids, which decide its protocol; leave protocol out",
                )
            conn.policy = policy_of(overrides, conn.policy, spec.path, where)
        check_dispatch_per_host(spec)
        check_python_ports(spec, where)
        check_bulkio_hops(spec, where)
        return spec

    def with_properties(self, name: str, properties: dict[str, Any], *, where: str) -> "Spec":
        """Properties of the component `name` changed, checked like the
        spec's own (a refusal names f"{where}.{name}.{key}"); a relative
        file's path is from the working directory."""
        spec = self._copy()
        comp = next((c for c in spec.components if c.name == name), None)
        if comp is None:
            raise SpecError(
                spec.path, where, f"no component named {name!r}; declared: {', '.join(c.name for c in spec.components)}"
            )
        for key, value in properties.items():
            comp.properties[key] = checked_property(
                spec.path, f"{where}.{name}.{key}", comp, key, value, spec.sample_type, Path.cwd()
            )
        spec.check_packet_sizes(f"{where}.{name}")
        spec.check_recordings(f"{where}.{name}")
        if "stream_id" in properties:
            stamped = [c.name for c in spec.components if c.properties.get("stream_id") == comp.properties["stream_id"]]
            if len(stamped) > 1:
                raise SpecError(
                    spec.path,
                    f"{where}.{name}.stream_id",
                    f"{' and '.join(map(repr, stamped))} would both stamp stream {comp.properties['stream_id']}; "
                    "each source of a spec needs a stream id of its own",
                )
        return spec

    def with_network(self, table: dict[str, float], *, where: str) -> "Spec":
        """Every process on a network host of its own, behind links with the
        given delay_ms / jitter_ms (checked like a [network] table)."""
        spec = self._copy()
        spec.network = network_settings(
            {**(spec.network.describe() if spec.network else {}), **table}, spec.path, where
        )
        check_network(spec, where)
        check_nodes(spec, where)
        return spec

    def with_collocated(self, *, where: str) -> "Spec":
        """Every component of the runtime in one process: every call between
        them direct (external components stay where they are)."""
        spec = self._copy()
        spec.hosts = [[c.name for c in spec.components if c.external is None]]
        check_nodes(spec, where)
        return spec

    def run_table(self) -> dict[str, Any]:
        """The [run] table that says this spec's run settings, every key
        written ("all" for every usable CPU) but the start order, which a
        SAD says in its own elements (document adds it for a TOML spec)."""
        return {
            "sample_type": self.sample_type,
            "transport": self.transport,
            "cores": "all" if self.cores == parse_cores("all", self.path) else list(self.cores),
            "pin": self.pin,
            "scheduler": self.scheduler,
            "timeout_s": self.timeout_s,
        }

    def document(self) -> dict[str, Any]:
        """The spec as the tables of a TOML spec (what read_toml gives
        parse_spec): parsed again, it is this spec (`describe()` equal but for
        the file). Connections as [[connection]] tables, with [policy] the
        most common policy and each connection's own keys over it; library
        and exec paths absolute."""
        default, overrides = policy_tables(self.connections, self.path)
        doc: dict[str, Any] = {"experiment": dict(self.experiment)} if self.experiment else {}
        doc["run"] = self.run_table()
        if self.start_order:
            doc["run"]["start_order"] = list(self.start_order)
        doc["component"] = [_component_table(c) for c in self.components]
        doc["policy"] = default
        if self.connections:
            doc["connection"] = [
                {"from": ".".join(c.uses), "to": ".".join(c.provides), **overrides[c.id]} for c in self.connections
            ]
        if self.hosts != [[c.name] for c in self.components if c.external is None]:
            doc["placement"] = {"hosts": [list(h) for h in self.hosts]}
        if self.nodes:
            doc.setdefault("placement", {})["nodes"] = {node: list(members) for node, members in self.nodes.items()}
        if self.domain is not None:
            doc["domain"] = {"naming": self.domain}
        if self.network is not None:
            doc["network"] = self.network.describe()
        return doc

    def describe(self) -> dict[str, Any]:
        """The fully resolved spec, as stored with every result."""
        return {
            "file": str(self.path),
            "experiment": self.experiment,
            "sample_type": self.sample_type,
            "transport": self.transport,
            "cores": self.cores,
            "pin": self.pin,
            "scheduler": self.scheduler,
            "components": [
                {
                    "name": c.name,
                    "kind": c.kind,
                    **({"library": str(c.library)} if c.library else {}),
                    "properties": c.properties,
                    **({"external": c.external.describe()} if c.external is not None else {}),
                }
                for c in self.components
            ],
            "connections": [
                {
                    "id": c.id,
                    "placement": "collocated" if self.collocated(c) else "remote",
                    "transport": hop_transport(self, c),
                    **c.policy.as_dict(),
                }
                for c in self.connections
            ],
            "hosts": self.hosts,
            **({"nodes": self.nodes} if self.nodes else {}),
            **({"domain": self.domain} if self.domain else {}),
            **({"start_order": list(self.start_order)} if self.start_order else {}),
            "network": self.network.describe() if self.network else None,
        }


def _component_table(c):
    """A component's [[component]] table (Spec.document)."""
    table = {"name": c.name, "kind": c.kind}
    if c.library is not None:
        table["library"] = str(c.library)
    ext = c.external
    if c.kind == EXTERNAL and ext.ref is not None:
        table.update(ref=ext.ref, release=ext.release)
    elif c.kind == EXTERNAL:
        table.update(
            {
                "exec": ext.program[0],
                **({"parameters": dict(ext.parameters)} if ext.parameters else {}),
                "orb_options": ext.orb_options,
                "bind_timeout_s": ext.bind_timeout_s,
            }
        )
    return {**table, **c.properties}


def checked_property(
    path: str | Path, where: str, comp: Component, key: str, value: Any, sample_type: str, folder: Path
) -> Any:
    """A property's value, checked; a file's path made absolute from `folder`."""
    if comp.kind == EXTERNAL:
        return check_external_property(path, where, key, value)
    value = check_property(path, where, comp.kind, key, value, comp.library, sample_type)
    if file_property(comp.kind, key) and value and comp.library is None:
        value = os.path.abspath(folder / value)
    return value


def relative_root(path: str | Path) -> Path:
    """Where a spec's relative paths start: its file's folder; the working
    directory for a waveform built in code."""
    return Path.cwd() if CODE_SOURCE.fullmatch(str(path)) else Path(path).absolute().parent

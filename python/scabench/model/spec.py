"""Run specs: TOML files that describe components, connections with their
messaging policy, placement on processes and cores. `load_spec` checks every
key and turns the file into a Spec; `Spec.assembly` is what the launcher runs.

A spec (see experiments/paper/exp6.toml):

  [experiment]   name, title, and free-form notes
  [run]          sample_type, transport ("tcp" | "unix" | "shm": transport.py), cores ("all" | [..]),
                 pin (each process on its own core), scheduler ("normal" |
                 "batch": Linux SCHED_BATCH for every host), timeout_s
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
                 A uses port connects once; a provides port takes any number of
                 connections (fan-in: two producers into one stage's "in"), which
                 must agree on the receiving side's keys (one port, one setting)
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
import math
import os
import re
import shutil
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from scabench.errors import ScabenchError, SpecError
from scabench.model.catalog import EXTERNAL, PYTHON_KINDS, LibraryError, component_kinds, kind_names, kind_of
from scabench.model.checks import (
    SAMPLE_BYTES,
    check_dispatch_per_host,
    check_external_property,
    check_network,
    check_nodes,
    check_property,
    check_python_ports,
    check_transport,
    domain_settings,
    endpoint,
    network_settings,
    parse_cores,
    placement_nodes,
    policy_of,
    table_of,
)
from scabench.model.link import LinkSettings
from scabench.model.policy import Policy, policy_tables
from scabench.model.transport import check_transport_name, hop_transport
from scabench.paths import experiments_dir, python_program
from scabench.paths import program as runtime_program

# What a waveform built in code (scabench.Waveform, api.py) is called where a
# spec's file would be: in its errors and as its result's "file". A run
# names its naming context after NAME, as after a file's stem.
# Properties that name a file, by kind: a relative one is from the spec's
# folder (from the working directory for --set, and for a waveform built in
# code), made absolute here, since a component runs in a directory of its own.
FILE_PROPERTIES = {"producer": ("path",), "sink": ("capture",)}


def file_property(kind, key):
    """Whether `key` of a component of `kind` names a file (FILE_PROPERTIES)."""
    return key in FILE_PROPERTIES.get(kind, ())


CODE_SOURCE = re.compile(r"<waveform ([A-Za-z0-9][A-Za-z0-9_.-]*)>")


def code_source(name):
    """The stand-in for the file of a waveform built in code."""
    return Path(f"<waveform {name}>")


TOP_LEVEL = ("experiment", "run", "component", "policy", "chain", "connection", "placement", "domain", "network")
PLACEMENT_KEYS = ("hosts", "nodes")
RUN_KEYS = ("sample_type", "transport", "cores", "pin", "scheduler", "timeout_s")
# How Linux schedules the hosts' threads. "batch" (SCHED_BATCH) tells it they
# are throughput work: a thread that wakes (an ORB thread taking a packet)
# waits for the running one's slice instead of preempting it.
SCHEDULERS = ("normal", "batch")
SAMPLE_TYPES = tuple(SAMPLE_BYTES)


# How long an external program may take to bind its name, unless its spec
# says: a Python program starting on a busy machine takes seconds.
BIND_TIMEOUT_S = 30.0
# What an external component's [[component]] table may say besides its
# properties: how it is started or found.
EXEC_KEYS = ("exec", "parameters", "orb_options", "bind_timeout_s")
REF_KEYS = ("ref", "naming", "release")
REF_SCHEMES = ("IOR:", "corbaloc:", "corbaname:")
# Exec parameters the launcher gives every external program (SAMPLE_TYPE:
# the run's, as scabench's programs take it).
LAUNCHER_PARAMETERS = ("NAMING_CONTEXT_IOR", "COMPONENT_IDENTIFIER", "NAME_BINDING", "SAMPLE_TYPE")


@dataclass
class External:
    """How the run gets a component that scabench-host does not host
    (docs/architecture.md, "External components"): a program the launcher
    starts with the SCA exec parameters, or a reference to a component
    someone else started. Either way it has no record file: the run measures
    its packets at the port of the component it feeds."""
    program: list | None = None     # the program's argv before the exec parameters
    parameters: dict = field(default_factory=dict)  # more exec parameters, KEY: text ({run_dir}: the run's directory)
    orb_options: bool = False       # it takes omniORB's -ORB options: the run's endpoint and dispatch, as a host
    bind_timeout_s: float = BIND_TIMEOUT_S
    ref: str | None = None          # IOR:, corbaloc: or corbaname: (a name in a Naming Service)
    release: bool = True            # releaseObject at the end; false: stopped and disconnected only

    def describe(self):
        if self.ref is not None:
            return {"ref": self.ref, "release": self.release}
        return {"exec": self.program, "parameters": self.parameters, "orb_options": self.orb_options,
                "bind_timeout_s": self.bind_timeout_s}


@dataclass
class Component:
    name: str
    kind: str
    properties: dict
    library: Path | None = None   # the component library (plugin) its kind comes from; None: built in
    external: External | None = None  # None: hosted by scabench-host


@dataclass
class Connection:
    uses: tuple      # (component, port)
    provides: tuple  # (component, port)
    policy: Policy

    @property
    def id(self):
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
    network: LinkSettings | None = None   # None: every process on this machine's loopback
    scheduler: str = "normal"
    # Where processes run (docs/architecture.md, "Placement on nodes"): node
    # name -> the components whose processes it runs; the others run here.
    nodes: dict = field(default_factory=dict)
    domain: str | None = None   # the Naming Service the nodes are registered in (a corbaloc)

    def component(self, name):
        return next(c for c in self.components if c.name == name)

    def externals(self):
        return [c for c in self.components if c.external is not None]

    def process_count(self):
        """The processes the run starts for its components: one per host, and
        one per external program (a referenced component is someone else's)."""
        return len(self.hosts) + sum(c.external.program is not None for c in self.externals())

    def host_of(self, name):
        """The index of the host holding `name`; None for an external component."""
        return next((i for i, h in enumerate(self.hosts) if name in h), None)

    def process_of(self, name):
        """The process `name` runs in: ("host", index), or ("external", name)."""
        host = self.host_of(name)
        return ("host", host) if host is not None else ("external", name)

    def node_of(self, name):
        """The node a component's process runs on; None: this machine."""
        return next((node for node, members in self.nodes.items() if name in members), None)

    def collocated(self, conn):
        host = self.host_of(conn.uses[0])
        return host is not None and host == self.host_of(conn.provides[0])

    def sources(self):
        fed = {c.provides[0] for c in self.connections}
        return [c.name for c in self.components if c.name not in fed]

    def pipeline_order(self):
        """Components in data-flow order (sources first)."""
        order, seen = [], set()
        frontier = self.sources()
        while frontier:
            name = frontier.pop(0)
            if name in seen:
                continue
            seen.add(name)
            order.append(name)
            frontier += [c.provides[0] for c in self.connections if c.uses[0] == name]
        return order + [c.name for c in self.components if c.name not in seen]

    def packet_sources(self):
        """Sources that send a counted stream (a `packets` property): the
        producer, the STANAG 4285 data source. In data-flow order."""
        return [self.component(n) for n in self.pipeline_order()
                if n in self.sources() and self.component(n).external is None
                and "packets" in kind_of(self.component(n))["properties"]]

    def with_packets(self, packets, where="--packets"):
        for c in self.packet_sources():
            c.properties["packets"] = check_property(self.path, where, c.kind, "packets", packets, c.library,
                                                      self.sample_type)
        return self

    def check_packet_sizes(self, where="component"):
        """Every property whose range depends on the run's sample type (a
        packet's samples must fit in one ORB message), judged for it: the
        properties' own checks know no sample type."""
        for i, c in enumerate(self.components):
            declared = kind_of(c)
            for key, value in c.properties.items():
                if declared is not None and "by_sample_type" in declared["properties"].get(key, {}):
                    check_property(self.path, f"{where}[{i}].{key}" if where == "component" else where, c.kind, key,
                                   value, c.library, self.sample_type)

    def check_recordings(self, where="component"):
        """A producer that plays a file plays a SigMF recording of the run's
        sample type, and a capture sink's files can be written: before any
        process starts (scabench/recording.py)."""
        # Imported here: the recording reader loads sigmf, and results_file the run's modules.
        from scabench.recording import DATATYPES, recording_base, recording_datatype
        from scabench.report.results_file import check_writable
        for i, c in enumerate(self.components):
            at = (lambda key: f"{where}[{i}].{key}" if where == "component" else f"{where}.{key}")  # noqa: E731
            if c.kind == "producer" and c.properties.get("signal") == "file":
                if not c.properties.get("path"):
                    raise SpecError(self.path, at("path"), 'signal = "file" plays the SigMF recording named by path '
                                    '(NAME or NAME.sigmf-meta)')
                try:
                    datatype = recording_datatype(c.properties["path"])
                except ScabenchError as exc:
                    raise SpecError(self.path, at("path"), str(exc)) from None
                if datatype != DATATYPES[self.sample_type]:
                    raise SpecError(self.path, at("path"), f"the recording's datatype is {datatype}; a "
                                    f"{self.sample_type} pipeline plays {DATATYPES[self.sample_type]} "
                                    "(run.sample_type)")
            if c.kind == "sink" and c.properties.get("capture"):
                base = recording_base(c.properties["capture"])
                for ext in (".sigmf-data", ".sigmf-meta"):
                    try:
                        check_writable(f"{base}{ext}", at("capture"))
                    except ScabenchError as exc:
                        raise SpecError(self.path, at("capture"), str(exc).removeprefix(f"{at('capture')}: ")) \
                            from None

    def with_cores(self, cores):
        self.cores = cores
        return self

    def with_pin(self, pin):
        self.pin = bool(pin)
        return self

    def with_scheduler(self, scheduler, where="--scheduler"):
        if scheduler not in SCHEDULERS:
            raise SpecError(self.path, where, f"{scheduler!r} is not valid; use one of: {', '.join(SCHEDULERS)}")
        self.scheduler = scheduler
        return self

    def with_transport(self, transport, where="--transport"):
        """Carries the run's hops over tcp, unix or shm (model/transport.py)."""
        check_transport_name(self.path, where, transport)
        before, self.transport = self.transport, transport
        try:
            check_transport(self, where)
        except SpecError:
            self.transport = before  # a refused transport leaves the spec as it was
            raise
        return self

    def with_policy(self, overrides, where="--policy"):
        """Applies policy keys (call, sync, dispatch, worker) to every
        connection, on top of what the spec gave it."""
        for conn in self.connections:
            conn.policy = policy_of(overrides, conn.policy, self.path, where)
        check_dispatch_per_host(self)
        check_python_ports(self, where)
        return self

    def with_properties(self, name, properties, where="--set"):
        """Changes properties of the component `name`, checked like the spec's own."""
        comp = next((c for c in self.components if c.name == name), None)
        if comp is None:
            raise SpecError(self.path, where, f"no component named {name!r}; declared: "
                            f"{', '.join(c.name for c in self.components)}")
        for key, value in properties.items():
            comp.properties[key] = _property(self.path, f"{where}.{name}.{key}", comp, key, value, self.sample_type,
                                             Path.cwd())
        self.check_packet_sizes(f"{where}.{name}")
        self.check_recordings(f"{where}.{name}")
        return self

    def with_network(self, table, where="--link-delay"):
        """Runs every process on a network host of its own, behind links with
        the given delay_ms / jitter_ms (checked like a [network] table)."""
        self.network = network_settings({**(self.network.describe() if self.network else {}), **table}, self.path, where)
        check_network(self, where)
        check_nodes(self, where)
        return self

    def collocate(self, where="--collocated"):
        """Places every component of the runtime in one process: every call
        between them becomes direct (external components stay where they are)."""
        self.hosts = [[c.name for c in self.components if c.external is None]]
        check_nodes(self, where)
        return self

    def run_table(self):
        """The [run] table that says this spec's run settings, every key
        written ("all" for every usable CPU)."""
        return {"sample_type": self.sample_type, "transport": self.transport,
                "cores": "all" if self.cores == parse_cores("all") else list(self.cores), "pin": self.pin,
                "scheduler": self.scheduler, "timeout_s": self.timeout_s}

    def document(self):
        """The spec as the tables of a TOML spec (what read_toml gives
        parse_spec): parsed again, it is this spec (`describe()` equal but for
        the file). Connections as [[connection]] tables, with [policy] the
        most common policy and each connection's own keys over it; library
        and exec paths absolute."""
        default, overrides = policy_tables(self.connections, self.path)
        doc = {"experiment": dict(self.experiment)} if self.experiment else {}
        doc["run"] = self.run_table()
        doc["component"] = [_component_table(c) for c in self.components]
        doc["policy"] = default
        if self.connections:
            doc["connection"] = [{"from": ".".join(c.uses), "to": ".".join(c.provides), **overrides[c.id]}
                                 for c in self.connections]
        if self.hosts != [[c.name] for c in self.components if c.external is None]:
            doc["placement"] = {"hosts": [list(h) for h in self.hosts]}
        if self.nodes:
            doc.setdefault("placement", {})["nodes"] = {node: list(members) for node, members in self.nodes.items()}
        if self.domain is not None:
            doc["domain"] = {"naming": self.domain}
        if self.network is not None:
            doc["network"] = self.network.describe()
        return doc

    def describe(self):
        """The fully resolved spec, as stored with every result."""
        return {
            "file": str(self.path),
            "experiment": self.experiment,
            "sample_type": self.sample_type,
            "transport": self.transport,
            "cores": self.cores,
            "pin": self.pin,
            "scheduler": self.scheduler,
            "components": [{"name": c.name, "kind": c.kind, **({"library": str(c.library)} if c.library else {}),
                            "properties": c.properties,
                            **({"external": c.external.describe()} if c.external is not None else {})}
                           for c in self.components],
            "connections": [{"id": c.id, "placement": "collocated" if self.collocated(c) else "remote",
                             "transport": hop_transport(self, c), **c.policy.as_dict()} for c in self.connections],
            "hosts": self.hosts,
            **({"nodes": self.nodes} if self.nodes else {}),
            **({"domain": self.domain} if self.domain else {}),
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
        table.update({"exec": ext.program[0], **({"parameters": dict(ext.parameters)} if ext.parameters else {}),
                      "orb_options": ext.orb_options, "bind_timeout_s": ext.bind_timeout_s})
    return {**table, **c.properties}


# A spec or campaign is a few kB; anything near this is not one.
MAX_SPEC_BYTES = 1 << 20


def read_toml(path):
    """A TOML file as a dict. What is not one is a SpecError naming the file:
    missing, not a regular file (a named pipe would block the read), too
    large, not UTF-8, not valid TOML, or nested too deeply to parse."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise SpecError(path, "", "not a regular file; give the path of a .toml file")
        if info.st_size > MAX_SPEC_BYTES:
            raise SpecError(path, "", f"{info.st_size} bytes; a spec is a TOML file of at most {MAX_SPEC_BYTES}")
        with open(path, "rb") as f:
            return tomllib.loads(f.read().decode("utf-8"))
    except FileNotFoundError:
        raise SpecError(path, "", "no such file") from None
    except OSError as exc:
        raise SpecError(path, "", f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise SpecError(path, "", f"not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(path, "", f"not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(path, "", "nested too deeply to be a spec") from None


def load_spec(path):
    """A spec from a TOML file, or from an SCA waveform's SAD (a path ending
    in .sad.xml, with its sidecar; model/sad/load.py)."""
    # Imported here: the SAD loader builds on this module's parse_spec.
    from scabench.model.sad.load import SAD_SUFFIX, SIDECAR_SUFFIX, is_sad, load_sad
    path = Path(path)
    if is_sad(path):
        return load_sad(path)
    if path.name.endswith(SIDECAR_SUFFIX):
        raise SpecError(path, "", f"the run settings of a waveform's SAD, not a spec; give the SAD "
                        f"({path.name.removesuffix(SIDECAR_SUFFIX)}{SAD_SUFFIX})")
    return parse_spec(read_toml(path), path)


def find_spec(name, root=None):
    """The spec a command line names: a path to it, or, where no such file
    exists, a name matched exactly against the stems of the specs under
    experiments/ (`exp6` is experiments/paper/exp6.toml), so a bundled spec
    runs from any directory. None or several matches: a SpecError listing
    what there is."""
    path = Path(name)
    if path.exists() or path.suffix == ".toml" or len(path.parts) != 1:
        return path
    root = Path(root) if root is not None else experiments_dir()
    # A waveform's sidecar (exp6.sad.toml) is not a spec: its SAD is, by path.
    from scabench.model.sad.load import SIDECAR_SUFFIX
    specs = sorted(p for p in root.rglob("*.toml") if not p.name.endswith(SIDECAR_SUFFIX)) if root.is_dir() else []
    found = [p for p in specs if p.stem == name]  # compared, not globbed: a name may hold * or ?
    if len(found) == 1:
        return found[0]
    if found:
        raise SpecError(name, "", "names several specs in " + str(root) + ": "
                        + ", ".join(str(p.relative_to(root)) for p in found) + "; give the path of one")
    known = sorted({p.stem for p in specs})
    raise SpecError(name, "", f"no such file, and no spec of that name in {root}"
                    + (f" (names: {', '.join(known)})" if known else ""))


def parse_spec(doc, path):
    for key in doc:
        if key not in TOP_LEVEL:
            raise SpecError(path, key, f"unknown table; valid: {', '.join(TOP_LEVEL)}")
    run = table_of(doc, "run", path)
    for key in run:
        if key not in RUN_KEYS:
            raise SpecError(path, f"run.{key}", f"unknown key; valid: {', '.join(RUN_KEYS)}")
    sample_type = run.get("sample_type", "double")
    if sample_type not in SAMPLE_TYPES:
        raise SpecError(path, "run.sample_type", f"{sample_type!r} is not valid; use one of: {', '.join(SAMPLE_TYPES)}")
    transport = run.get("transport", "tcp")
    check_transport_name(path, "run.transport", transport)
    cores = parse_cores(run.get("cores", "all"), path, "run.cores")
    pin = run.get("pin", False)
    if not isinstance(pin, bool):
        raise SpecError(path, "run.pin", "must be true or false")
    scheduler = run.get("scheduler", "normal")
    if scheduler not in SCHEDULERS:
        raise SpecError(path, "run.scheduler", f"{scheduler!r} is not valid; use one of: {', '.join(SCHEDULERS)}")
    timeout = run.get("timeout_s", 0)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not 0 <= timeout <= 86400:
        raise SpecError(path, "run.timeout_s", "must be a number of seconds from 0 to 86400 (0: chosen from the floor)")

    components = _components(doc, path, sample_type)
    default_policy = policy_of(doc.get("policy", {}), None, path, "policy")
    connections = _connections(doc, path, components, default_policy)
    hosts, nodes = _placement(doc, path, components)
    _check_topology(path, components, connections)
    _check_externals(path, components, connections)
    _number_streams(components)
    network = network_settings(table_of(doc, "network", path), path, "network") if "network" in doc else None
    domain = domain_settings(table_of(doc, "domain", path), path) if "domain" in doc else None
    spec = Spec(path, table_of(doc, "experiment", path), sample_type, transport, cores, pin, float(timeout),
                components, connections, hosts, network, scheduler, nodes, domain)
    check_dispatch_per_host(spec)
    check_network(spec)
    check_nodes(spec)
    # Each node's components in the spec's order: where they come from (a
    # SAD's sidecar, a table) says nothing about order.
    spec.nodes = {node: [c.name for c in components if c.name in members] for node, members in nodes.items()}
    check_python_ports(spec)
    spec.check_packet_sizes()
    spec.check_recordings()
    return spec


def _components(doc, path, sample_type):
    kinds = kind_names()
    items = doc.get("component", [])
    if not isinstance(items, list) or not items:
        raise SpecError(path, "component", "declare at least one [[component]] with a name and a kind")
    components, seen = [], set()
    for i, item in enumerate(items):
        where = f"component[{i}]"
        if not isinstance(item, dict):
            raise SpecError(path, where, "must be a table: [[component]] with a name and a kind")
        name = item.get("name")
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            raise SpecError(path, f"{where}.name", "a name of letters, digits, - and _ is required")
        if name in seen:
            raise SpecError(path, f"{where}.name", f"{name!r} is used twice")
        seen.add(name)
        kind = item.get("kind")
        library = _library(item, path, where)
        if library is not None:
            if kind in PYTHON_KINDS or kind == EXTERNAL:
                raise SpecError(path, f"{where}.library", f"a {kind} component is a program of its own, not a kind "
                                "of a component library")
            _check_library_kind(kind, library, path, where)
        elif not isinstance(kind, str) or kind not in kinds:
            raise SpecError(path, f"{where}.kind", f"{kind!r} is not a component kind; valid: {', '.join(kinds)} "
                            "(a kind of a component library needs its library = \"path/lib.so\")")
        external = None
        if kind == EXTERNAL:
            external = _external(item, path, where)
        elif kind in PYTHON_KINDS:
            entry = PYTHON_KINDS[kind]
            external = External(python_program(entry.script, entry.module), {"KIND": entry.kind}, orb_options=True)
        comp = Component(name, kind, {}, library, external)
        for key, value in item.items():
            if key not in ("name", "kind", "library") and not (kind == EXTERNAL and key in EXEC_KEYS + REF_KEYS):
                comp.properties[key] = _property(path, f"{where}.{key}", comp, key, value, sample_type, _folder(path))
        components.append(comp)
    _check_libraries_apart(components, path)
    return components


def _property(path, where, comp, key, value, sample_type, folder):
    """A property's value, checked; a file's path made absolute from `folder`."""
    if comp.kind == EXTERNAL:
        return check_external_property(path, where, key, value)
    value = check_property(path, where, comp.kind, key, value, comp.library, sample_type)
    if file_property(comp.kind, key) and value and comp.library is None:
        value = os.path.abspath(folder / value)
    return value


def _folder(path):
    """Where a spec's relative paths start: its file's folder; the working
    directory for a waveform built in code."""
    return Path.cwd() if CODE_SOURCE.fullmatch(str(path)) else Path(path).absolute().parent


def _external(item, path, where):
    """An external component's External, from its [[component]] table."""
    if ("exec" in item) == ("ref" in item):
        raise SpecError(path, where, "an external component needs one of exec = \"path/to/program\" (started with "
                        "the SCA exec parameters) or ref = \"IOR:...\" | \"corbaloc:...\" | \"corbaname:...\" | a "
                        "name with naming = \"corbaloc::HOST:PORT/NameService\" (a component already running)")
    if "exec" in item:
        wrong = next((k for k in REF_KEYS if k in item), None)
        if wrong:
            raise SpecError(path, f"{where}.{wrong}", "goes with ref, not with exec")
        return External(program=[_program(item["exec"], path, f"{where}.exec")],
                        parameters=_parameters(item.get("parameters", {}), path, f"{where}.parameters"),
                        orb_options=_boolean(item.get("orb_options", False), path, f"{where}.orb_options"),
                        bind_timeout_s=_bind_timeout(item.get("bind_timeout_s", BIND_TIMEOUT_S), path,
                                                     f"{where}.bind_timeout_s"))
    wrong = next((k for k in EXEC_KEYS if k in item), None)
    if wrong:
        raise SpecError(path, f"{where}.{wrong}", "goes with exec, not with ref")
    return External(ref=_reference(item["ref"], item.get("naming"), path, where),
                    release=_boolean(item.get("release", True), path, f"{where}.release"))


# The runtime's programs a spec may exec by bare name (an external component).
RUNTIME_PROGRAMS = ("scabench-host",)


def _program(text, path, where):
    """The program's absolute path: a path (relative to the spec's folder),
    a program of the runtime's (RUNTIME_PROGRAMS) by name, or another bare
    name found on PATH; it must be an executable file."""
    if not isinstance(text, str) or not text.strip():
        raise SpecError(path, where, "must be the path of a program (relative to the spec's folder) or a name on PATH")
    if "/" in text:
        program = Path(text) if Path(text).is_absolute() else Path(path).parent / text
    elif text in RUNTIME_PROGRAMS:
        # scabench's own programs come from where the run's others do (paths.py:
        # a build, an install, SCABENCH_BIN_DIR), so a spec naming one works
        # wherever scabench does.
        try:
            program = runtime_program(text)
        except ScabenchError as exc:
            raise SpecError(path, where, str(exc)) from None
    else:
        found = shutil.which(text)
        if found is None:
            raise SpecError(path, where, f"no program {text!r} on PATH; give its path (relative to the spec's folder)")
        program = Path(found)
    if not program.is_file():
        raise SpecError(path, where, f"no such program: {program}")
    if not os.access(program, os.X_OK):
        raise SpecError(path, where, f"{program} is not executable")
    return os.path.abspath(program)


def _parameters(table, path, where):
    """More exec parameters (KEY = "value"); the launcher's own are not among them."""
    if not isinstance(table, dict):
        raise SpecError(path, where, "must be a table of exec parameters, like { KIND = \"stage\" }")
    out = {}
    for key, value in table.items():
        if not key or any(ch.isspace() for ch in key) or key.startswith("-"):
            raise SpecError(path, f"{where}.{key}", "an exec parameter's name is one word, not an option")
        if key in LAUNCHER_PARAMETERS:
            raise SpecError(path, f"{where}.{key}", f"the launcher gives it ({', '.join(LAUNCHER_PARAMETERS)})")
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise SpecError(path, f"{where}.{key}", "an exec parameter's value is a string or a number")
        out[key] = str(value)
    return out


def _boolean(value, path, where):
    if not isinstance(value, bool):
        raise SpecError(path, where, "must be true or false")
    return value


def _bind_timeout(value, path, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value <= 600 and math.isfinite(value)):
        raise SpecError(path, where, "must be a number of seconds, more than 0 and at most 600")
    return float(value)


def _reference(ref, naming, path, where):
    """A reference the launcher's ORB resolves: IOR:, corbaloc: or
    corbaname: as given; a name ("context/component") in the Naming Service
    at `naming` becomes the corbaname: that names it there."""
    if not isinstance(ref, str) or not ref.strip():
        raise SpecError(path, f"{where}.ref", "must be \"IOR:...\", \"corbaloc:...\", \"corbaname:...\" or a name")
    if ref.lower().startswith(tuple(s.lower() for s in REF_SCHEMES)):
        if naming is not None:
            raise SpecError(path, f"{where}.naming", "goes with a name for ref, not with a reference")
        return ref
    parts = ref.split("/")
    if not all(parts) or any(ch in ref for ch in "#: \t"):
        raise SpecError(path, f"{where}.ref", f"{ref!r} is neither a reference (IOR:, corbaloc:, corbaname:) nor a "
                        "name like \"context/component\"")
    if not isinstance(naming, str) or not naming.startswith("corbaloc:"):
        raise SpecError(path, f"{where}.naming", f"ref {ref!r} is a name: give the Naming Service that holds it, "
                        "naming = \"corbaloc::HOST:PORT/NameService\"")
    return f"corbaname:{naming[len('corbaloc:'):]}#{ref}"


def _library(item, path, where):
    """A component's `library`: the component library (plugin) its kind
    comes from, as an absolute path, or None. Relative paths are from the
    spec's folder. The host must load it and find kinds in it
    (`scabench-host --library PATH --describe`), before any process starts."""
    if "library" not in item:
        return None
    value = item["library"]
    if not isinstance(value, str) or not value:
        raise SpecError(path, f"{where}.library", "must be the path of a component library (a .so file), "
                        "relative to the spec's folder")
    library = Path(os.path.abspath(Path(path).parent / value))
    if not library.is_file():
        why = "is not a file" if library.exists() else "no such file"
        raise SpecError(path, f"{where}.library", f"{library}: {why}; give the path of a component library "
                        "(a .so file), relative to the spec's folder")
    try:
        component_kinds(library)
    except LibraryError as exc:
        raise SpecError(path, f"{where}.library", str(exc)) from None
    return library


def _library_kinds(library):
    return [k for k, d in component_kinds(library).items() if "library" in d]


def _check_library_kind(kind, library, path, where):
    own = _library_kinds(library)
    if kind not in own:
        raise SpecError(path, f"{where}.kind", f"{kind!r} is not a kind of {library}; it registers: {', '.join(own)}")


def _check_libraries_apart(components, path):
    """Two component libraries of one spec must not register the same kind:
    a host given both refuses the second (registry.hpp), and a kind's name
    would mean two pieces of code."""
    owner = {}
    for i, c in enumerate(components):
        if c.library is None:
            continue
        for kind in _library_kinds(c.library):
            first = owner.setdefault(kind, c.library)
            if not os.path.samefile(first, c.library):
                raise SpecError(path, f"component[{i}].library", f"{c.library} registers kind {kind!r}, which {first} "
                                "registers too; a spec's kind names one piece of code: rename one of them")


def _connections(doc, path, components, default_policy):
    connections = []
    chain = doc.get("chain", [])
    if not isinstance(chain, list) or not all(isinstance(n, str) for n in chain):
        raise SpecError(path, "chain", "must be a list of component names")
    items = doc.get("connection", [])
    if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
        raise SpecError(path, "connection", "must be [[connection]] tables with from and to")
    for i, (a, b) in enumerate(zip(chain, chain[1:])):
        uses = endpoint(f"{a}.out", path, f"chain[{i}]", components, "uses")
        provides = endpoint(f"{b}.in", path, f"chain[{i + 1}]", components, "provides")
        connections.append(Connection(uses, provides, default_policy))
    for i, item in enumerate(items):
        where = f"connection[{i}]"
        for key in ("from", "to"):
            if key not in item:
                raise SpecError(path, f"{where}.{key}", "required, like \"stage1.out\"")
        uses = endpoint(item["from"], path, f"{where}.from", components, "uses")
        provides = endpoint(item["to"], path, f"{where}.to", components, "provides")
        overrides = {k: v for k, v in item.items() if k not in ("from", "to")}
        connections.append(Connection(uses, provides, policy_of(overrides, default_policy, path, where)))
    used = set()
    for conn in connections:
        if conn.uses in used:
            raise SpecError(path, "connection", f"port {'.'.join(conn.uses)} is connected twice")
        used.add(conn.uses)
    _check_fan_in(path, connections)
    return connections


def _check_fan_in(path, connections):
    """Connections into one provides port (fan-in) set one port's properties:
    they must agree on every key of the receiving side (worker, ordering,
    flow, dispatch...). Each is a sequence space of its own all the same."""
    first = {}
    for conn in connections:
        earlier = first.setdefault(conn.provides, conn)
        if earlier is conn:
            continue
        mine, theirs = conn.policy.provides_properties("p"), earlier.policy.provides_properties("p")
        for key in theirs:
            if mine[key] != theirs[key]:
                name = key.split(".", 1)[1]
                raise SpecError(path, "connection", f"{earlier.id} and {conn.id} reach one port with different "
                                f"{name} ({theirs[key]!r} and {mine[key]!r}); the receiving port has one setting, "
                                "give both connections the same")


def _number_streams(components):
    """With several packet sources, each stamps a stream id of its own
    (the order of their declaration: 0, 1, ...) unless the spec sets one, so
    that a stage after a merge counts order per stream. (An external
    component declares nothing, and is never a source: _check_externals.)"""
    sources = [c for c in components if "stream_id" in (kind_of(c) or {}).get("properties", {})]
    if len(sources) > 1:
        for i, c in enumerate(sources):
            c.properties.setdefault("stream_id", i)


def _check_topology(path, components, connections):
    """Packets must flow from a source to an end: no component feeds itself
    or a loop (its own packets would come back to it for ever), and with
    more than one component every one is connected."""
    for conn in connections:
        if conn.uses[0] == conn.provides[0]:
            raise SpecError(path, "connection", f"{conn.id} connects {conn.uses[0]!r} to itself; "
                            "a pipeline has no loops")
    downstream = {c.name: [] for c in components}
    for conn in connections:
        downstream[conn.uses[0]].append(conn.provides[0])
    state = {}

    def visit(name, trail):
        state[name] = "open"
        for nxt in downstream[name]:
            if state.get(nxt) == "open":
                loop = trail[trail.index(nxt):] + [nxt] if nxt in trail else [name, nxt]
                raise SpecError(path, "connection", f"the connections make a loop ({' -> '.join(loop)}); "
                                "a pipeline has no loops")
            if nxt not in state:
                visit(nxt, trail + [nxt])
        state[name] = "done"
    for c in components:
        if c.name not in state:
            visit(c.name, [c.name])
    fed = {conn.provides[0] for conn in connections}
    for c in components:
        if c.name not in fed and (kind_of(c) or {}).get("provides"):
            raise SpecError(path, "connection", f"{c.name!r} ({c.kind}) receives from nothing and would wait for ever; "
                            "connect a source to its input")
    if len(components) > 1:
        linked = {n for conn in connections for n in (conn.uses[0], conn.provides[0])}
        alone = [c.name for c in components if c.name not in linked]
        if alone:
            raise SpecError(path, "connection", f"{alone[0]!r} is connected to nothing; connect it (chain or "
                            "[[connection]]) or remove it")


def _check_externals(path, components, connections):
    """An external component has no record file: the run sees its packets as
    they reach the component of the runtime it feeds, and counts them from a
    packet source of the runtime. So it is never first nor last, never feeds
    another external component, and the port it feeds takes from it alone."""
    by_name = {c.name: c for c in components}
    for c in components:
        if c.external is None:
            continue
        what = f"{c.name!r} ({c.kind}) is external"
        outgoing = [conn for conn in connections if conn.uses[0] == c.name]
        if not outgoing:
            raise SpecError(path, "connection", f"{what} and last: it has no record file of its own, so the run "
                            "measures it at the port it feeds; end the pipeline with a component of the runtime "
                            "(a stage or a sink)")
        if not any(conn.provides[0] == c.name for conn in connections):
            raise SpecError(path, "connection", f"{what} and first: the run counts packets from a packet source "
                            "of the runtime; feed it from one (a producer)")
        for conn in outgoing:
            target = by_name[conn.provides[0]]
            if target.external is not None:
                raise SpecError(path, "connection", f"{conn.id}: both ends are external; the run measures an "
                                "external component at the port of the runtime's component it feeds")
            others = [o.id for o in connections if o.provides == conn.provides and o is not conn]
            if others:
                raise SpecError(path, "connection", f"{conn.id}: {'.'.join(conn.provides)} also receives "
                                f"{others[0]}; the run measures {c.name!r} at that port, which must take from it alone")


def _placement(doc, path, components):
    """(hosts, nodes). The hosts: lists of the runtime's components that
    share a process; external components are processes of their own (or
    someone else's). The nodes: node -> the components whose processes run
    there (checked with the spec: check_nodes)."""
    names = {c.name for c in components if c.external is None}
    order = [c.name for c in components if c.external is None]
    external = {c.name for c in components if c.external is not None}
    placement = table_of(doc, "placement", path)
    for key in placement:
        if key not in PLACEMENT_KEYS:
            raise SpecError(path, f"placement.{key}", f"unknown key; valid: {', '.join(PLACEMENT_KEYS)}")
    nodes = placement_nodes(placement["nodes"], path) if "nodes" in placement else {}
    hosts = placement.get("hosts")
    if hosts is None:
        return [[n] for n in order], nodes
    if not isinstance(hosts, list) or not all(isinstance(h, list) and h and all(isinstance(n, str) for n in h)
                                              for h in hosts):
        raise SpecError(path, "placement.hosts", "must be a list of non-empty lists of component names")
    placed = [n for h in hosts for n in h]
    for n in placed:
        if n in external:
            raise SpecError(path, "placement.hosts", f"{n!r} is external, a process of its own (or someone "
                            "else's); leave it out of the placement")
        if n not in names:
            raise SpecError(path, "placement.hosts", f"no component named {n!r}")
        if placed.count(n) > 1:
            raise SpecError(path, "placement.hosts", f"{n!r} is placed twice")
    missing = [n for n in order if n not in placed]
    if missing:
        raise SpecError(path, "placement.hosts", f"{missing[0]!r} is not placed; a placement places every "
                        f"component (add [\"{missing[0]}\"] for a process of its own)")
    return hosts, nodes



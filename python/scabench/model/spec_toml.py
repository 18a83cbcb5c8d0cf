"""The TOML reader of run specs: `read_toml` reads a file's tables and
`parse_spec` checks every key of them and builds the Spec
(model/spec.py, whose docstring lists the tables). A SAD's loader
(model/sad/load.py) and a waveform built in code (api.py) hand their
tables to `parse_spec` too, so every spec is checked by one reader."""

import itertools
import math
import os
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scabench.errors import ScabenchError, SpecError
from scabench.files import FileRefused, read_regular
from scabench.model import graph
from scabench.model.catalog import (
    EXTERNAL,
    PYTHON_KINDS,
    LibraryError,
    component_kinds,
    kind_names,
    kind_of,
    port_names,
    port_type,
    ports_of,
)
from scabench.model.checks import (
    check_dispatch_per_host,
    check_network,
    check_nodes,
    check_python_ports,
    domain_settings,
    endpoint,
    network_settings,
    parse_cores,
    placement_nodes,
    policy_of,
    table_of,
)
from scabench.model.policy import FANOUT_KEYS
from scabench.model.spec import (
    BIND_TIMEOUT_MAX_S,
    BIND_TIMEOUT_S,
    RUN_TABLE_KEYS,
    SAMPLE_TYPES,
    SCHEDULERS,
    Component,
    Connection,
    External,
    Spec,
    checked_property,
    relative_root,
)
from scabench.model.transport import check_bulkio_hops, check_transport_name
from scabench.paths import program as runtime_program
from scabench.paths import python_program

TOP_LEVEL = ("experiment", "run", "component", "policy", "chain", "connection", "placement", "domain", "network")
PLACEMENT_KEYS = ("hosts", "nodes")
# What an external component's [[component]] table may say besides its
# properties: how it is started or found.
EXEC_KEYS = ("exec", "parameters", "orb_options", "bind_timeout_s")
REF_KEYS = ("ref", "naming", "release")
REF_SCHEMES = ("IOR:", "corbaloc:", "corbaname:")
# Exec parameters the launcher gives every external program (SAMPLE_TYPE:
# the run's, as scabench's programs take it).
LAUNCHER_PARAMETERS = ("NAMING_CONTEXT_IOR", "COMPONENT_IDENTIFIER", "NAME_BINDING", "SAMPLE_TYPE")


# A spec or campaign is a few kB; anything near this is not one.
MAX_SPEC_BYTES = 1 << 20


def read_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file as a dict. What is not one is a SpecError naming the file:
    missing, not a regular file (a named pipe would block the read), too
    large, not UTF-8, not valid TOML, or nested too deeply to parse."""
    try:
        return tomllib.loads(read_regular(path, MAX_SPEC_BYTES, "a .toml file").decode("utf-8"))
    except FileRefused as exc:
        raise SpecError(path, "", exc.reason) from None
    except UnicodeDecodeError as exc:
        raise SpecError(path, "", f"not UTF-8 text (byte {exc.start}); TOML files are UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(path, "", f"not valid TOML: {exc}") from None
    except RecursionError:
        raise SpecError(path, "", "nested too deeply to be a spec") from None


# The tables of a campaign file (measure/campaign.py): configurations of
# specs measured K times each, which `scabench paper` and `scabench
# link-delay` run; a spec has none of them.
CAMPAIGN_TABLES = ("measure", "setup", "config")


def is_campaign(doc: dict[str, Any]) -> bool:
    """A TOML document is a campaign file rather than a spec."""
    return bool(doc) and set(doc) <= set(CAMPAIGN_TABLES) and ("config" in doc or "measure" in doc)


def is_campaign_file(path: Path) -> bool:
    """The TOML file at `path` is a campaign file (one that cannot be read is not)."""
    try:
        return is_campaign(read_toml(path))
    except SpecError:
        return False


def parse_spec(doc: dict[str, Any], path: Path) -> Spec:
    if is_campaign(doc):
        # Which study runs it: a campaign whose configurations put the run on network hosts is link-delay's.
        config = doc.get("config")
        configs = config if isinstance(config, list) else []
        study = "link-delay" if any(isinstance(c, dict) and "network" in c for c in configs) else "paper"
        raise SpecError(
            path,
            "",
            f"this is a campaign (its [measure] and [[config]] tables), not a spec; "
            f"run it with `scabench {study} --campaign {path}`",
        )
    for key in doc:
        if key not in TOP_LEVEL:
            raise SpecError(path, key, f"unknown table; valid: {', '.join(TOP_LEVEL)}")
    run = table_of(doc, "run", path)
    for key in run:
        if key not in RUN_TABLE_KEYS:
            raise SpecError(path, f"run.{key}", f"unknown key; valid: {', '.join(RUN_TABLE_KEYS)}")
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
    connections = _connections(doc, path, components, default_policy, sample_type)
    hosts, nodes = _placement(doc, path, components)
    _check_topology(path, components, connections)
    _check_externals(path, components, connections)
    _number_streams(path, components)
    start_order = _start_order(run.get("start_order", []), path, components)
    network = network_settings(table_of(doc, "network", path), path, "network") if "network" in doc else None
    domain = domain_settings(table_of(doc, "domain", path), path) if "domain" in doc else None
    spec = Spec(
        path,
        table_of(doc, "experiment", path),
        sample_type,
        transport,
        cores,
        pin,
        float(timeout),
        components,
        connections,
        hosts,
        network,
        scheduler,
        nodes,
        domain,
        start_order,
    )
    early = graph.early_senders(spec, graph.start_order(spec, start_order))
    if early:
        raise SpecError(path, "run.start_order", early_start_refusal(*early[0]))
    check_dispatch_per_host(spec)
    check_network(spec)
    check_nodes(spec)
    # Each node's components in the spec's order: where they come from (a
    # SAD's sidecar, a table) says nothing about order.
    spec.nodes = {node: [c.name for c in components if c.name in members] for node, members in nodes.items()}
    check_python_ports(spec)
    check_bulkio_hops(spec)
    spec.check_packet_sizes()
    spec.check_recordings()
    return spec


def early_start_refusal(sender: str, receiver: str) -> str:
    """Why a start order that lets `sender`'s packets reach `receiver`
    before its start is refused (graph.early_senders), and what to do."""
    return (
        f"starts {sender} (or what feeds it) before {receiver}, which it feeds: a scabench port refuses a packet "
        f"that reaches it before its component starts (REDHAWK's BulkIO ports queue it), so the stream's first "
        f"packets or its end would be lost; start {receiver} before {sender}"
    )


def _start_order(order: Any, path: Path, components: list[Component]) -> list[str]:
    """run.start_order: components the launcher starts in this order, each
    once (the others around them in its safe order: graph.start_order)."""
    names = [c.name for c in components]
    if not isinstance(order, list) or not all(isinstance(n, str) for n in order):
        raise SpecError(path, "run.start_order", 'a list of component names, like ["sink", "stage", "producer"]')
    for name in order:
        if name not in names:
            raise SpecError(path, "run.start_order", f"{name!r} is not a component; the spec has: {', '.join(names)}")
        if order.count(name) > 1:
            raise SpecError(path, "run.start_order", f"{name!r} is given twice: a component starts once")
    return list(order)


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
            if isinstance(kind, str) and (kind in PYTHON_KINDS or kind == EXTERNAL):
                raise SpecError(
                    path,
                    f"{where}.library",
                    f"a {kind} component is a program of its own, not a kind of a component library",
                )
            kind = _check_library_kind(kind, library, path, where)
        elif not isinstance(kind, str) or kind not in kinds:
            raise SpecError(
                path,
                f"{where}.kind",
                f"{kind!r} is not a component kind; valid: {', '.join(kinds)} "
                '(a kind of a component library needs its library = "path/lib.so")',
            )
        external = None
        if kind == EXTERNAL:
            external = _external(item, path, where)
        elif kind in PYTHON_KINDS:
            entry = PYTHON_KINDS[kind]
            external = External(python_program(entry.script, entry.module), {"KIND": entry.kind}, orb_options=True)
        comp = Component(name, kind, {}, library, external)
        for key, value in item.items():
            if key not in ("name", "kind", "library") and not (kind == EXTERNAL and key in EXEC_KEYS + REF_KEYS):
                comp.properties[key] = checked_property(
                    path, f"{where}.{key}", comp, key, value, sample_type, relative_root(path)
                )
        components.append(comp)
    _check_libraries_apart(components, path)
    return components


def _external(item, path, where):
    """An external component's External, from its [[component]] table."""
    if ("exec" in item) == ("ref" in item):
        raise SpecError(
            path,
            where,
            'an external component needs one of exec = "path/to/program" (started with '
            'the SCA exec parameters) or ref = "IOR:..." | "corbaloc:..." | "corbaname:..." | a '
            'name with naming = "corbaloc::HOST:PORT/NameService" (a component already running)',
        )
    if "exec" in item:
        wrong = next((k for k in REF_KEYS if k in item), None)
        if wrong:
            raise SpecError(path, f"{where}.{wrong}", "goes with ref, not with exec")
        return External(
            program=[_program(item["exec"], path, f"{where}.exec")],
            parameters=_parameters(item.get("parameters", {}), path, f"{where}.parameters"),
            orb_options=_boolean(item.get("orb_options", False), path, f"{where}.orb_options"),
            bind_timeout_s=_bind_timeout(item.get("bind_timeout_s", BIND_TIMEOUT_S), path, f"{where}.bind_timeout_s"),
        )
    wrong = next((k for k in EXEC_KEYS if k in item), None)
    if wrong:
        raise SpecError(path, f"{where}.{wrong}", "goes with exec, not with ref")
    return External(
        ref=_reference(item["ref"], item.get("naming"), path, where),
        release=_boolean(item.get("release", True), path, f"{where}.release"),
    )


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
        raise SpecError(path, where, 'must be a table of exec parameters, like { KIND = "stage" }')
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
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not (0 < value <= BIND_TIMEOUT_MAX_S and math.isfinite(value))
    ):
        raise SpecError(path, where, f"must be a number of seconds, more than 0 and at most {BIND_TIMEOUT_MAX_S:g}")
    return float(value)


def _reference(ref, naming, path, where):
    """A reference the launcher's ORB resolves: IOR:, corbaloc: or
    corbaname: as given; a name ("context/component") in the Naming Service
    at `naming` becomes the corbaname: that names it there."""
    if not isinstance(ref, str) or not ref.strip():
        raise SpecError(path, f"{where}.ref", 'must be "IOR:...", "corbaloc:...", "corbaname:..." or a name')
    if ref.lower().startswith(tuple(s.lower() for s in REF_SCHEMES)):
        if naming is not None:
            raise SpecError(path, f"{where}.naming", "goes with a name for ref, not with a reference")
        return ref
    parts = ref.split("/")
    if not all(parts) or any(ch in ref for ch in "#: \t"):
        raise SpecError(
            path,
            f"{where}.ref",
            f'{ref!r} is neither a reference (IOR:, corbaloc:, corbaname:) nor a name like "context/component"',
        )
    if not isinstance(naming, str) or not naming.startswith("corbaloc:"):
        raise SpecError(
            path,
            f"{where}.naming",
            f'ref {ref!r} is a name: give the Naming Service that holds it, naming = "corbaloc::HOST:PORT/NameService"',
        )
    return f"corbaname:{naming[len('corbaloc:') :]}#{ref}"


def _library(item, path, where):
    """A component's `library`: the component library (plugin) its kind
    comes from, as an absolute path, or None. Relative paths are from the
    spec's folder. The host must load it and find kinds in it
    (`scabench-host --library PATH --describe`), before any process starts."""
    if "library" not in item:
        return None
    value = item["library"]
    if not isinstance(value, str) or not value:
        raise SpecError(
            path,
            f"{where}.library",
            "must be the path of a component library (a .so file), relative to the spec's folder",
        )
    library = Path(os.path.abspath(Path(path).parent / value))
    if not library.is_file():
        why = "is not a file" if library.exists() else "no such file"
        raise SpecError(
            path,
            f"{where}.library",
            f"{library}: {why}; give the path of a component library (a .so file), relative to the spec's folder",
        )
    try:
        component_kinds(library)
    except LibraryError as exc:
        raise SpecError(path, f"{where}.library", str(exc)) from None
    return library


def _library_kinds(library):
    return [k for k, d in component_kinds(library).items() if "library" in d]


def _check_library_kind(kind: object, library: Path, path: Path, where: str) -> str:
    """`kind`, refused unless it is a kind `library` registers (a value that
    is no text, a TOML array say, is no kind of any)."""
    own = _library_kinds(library)
    if not isinstance(kind, str) or kind not in own:
        raise SpecError(path, f"{where}.kind", f"{kind!r} is not a kind of {library}; it registers: {', '.join(own)}")
    return kind


def _check_libraries_apart(components, path):
    """Two component libraries of one spec must not register the same kind:
    a host given both refuses the second (registry.hpp), and a kind's name
    would mean two pieces of code."""
    owner: dict[str, Path] = {}  # kind -> the first library that registers it
    for i, c in enumerate(components):
        if c.library is None:
            continue
        for kind in _library_kinds(c.library):
            first = owner.setdefault(kind, c.library)
            if not os.path.samefile(first, c.library):
                raise SpecError(
                    path,
                    f"component[{i}].library",
                    f"{c.library} registers kind {kind!r}, which {first} "
                    "registers too; a spec's kind names one piece of code: rename one of them",
                )


def _connections(doc, path, components, default_policy, sample_type):
    """The spec's connections, `chain` first, each knowing where it is
    declared; each checked on its own (its ends, their types) and with the
    others of its ports (once a pair, one setting a port)."""
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
        connections.append(Connection(uses, provides, default_policy, f"chain[{i}]"))
    own_keys = {}  # connection index -> the policy keys its [[connection]] sets itself
    for i, item in enumerate(items):
        where = f"connection[{i}]"
        for key in ("from", "to"):
            if key not in item:
                raise SpecError(path, f"{where}.{key}", 'required, like "stage1.out"')
        uses = endpoint(item["from"], path, f"{where}.from", components, "uses")
        provides = endpoint(item["to"], path, f"{where}.to", components, "provides")
        overrides = {k: v for k, v in item.items() if k not in ("from", "to")}
        own_keys[len(connections)] = set(overrides)
        connections.append(Connection(uses, provides, policy_of(overrides, default_policy, path, where), where))
    by_name = {c.name: c for c in components}
    seen: dict[tuple, Connection] = {}
    for conn in connections:
        _check_port_types(path, conn, by_name, sample_type)
        first = seen.setdefault((conn.uses, conn.provides), conn)
        if first is not conn:
            raise SpecError(
                path,
                conn.where,
                f"{conn.id} is connected twice ({first.where} too); connect a pair of ports once",
            )
    _check_fan_out(path, connections, own_keys)
    _check_fan_in(path, connections)
    return connections


def _check_port_types(path, conn, by_name, sample_type):
    """Both ends of a connection carry one sample type (a port of the run's
    sample type resolved to it); an external component's ports are its own
    business, checked by nobody before it runs."""
    types = []
    for name, port in (conn.uses, conn.provides):
        ports = ports_of(by_name[name])
        if ports is None:
            return
        types.append(port_type(ports[port], sample_type))
    if types[0] != types[1]:
        raise SpecError(
            path,
            conn.where,
            f"{'.'.join(conn.uses)} ({types[0]}) -> {'.'.join(conn.provides)} ({types[1]}): the ports carry "
            "different samples; connect two ports of one type",
        )


def _check_fan_out(path, connections, own_keys):
    """Connections out of one uses port (fan-out) set one port's properties:
    they must agree on every key of the sending side (call, sync, fanout...),
    as the connections into one provides port do (_check_fan_in). A fan-out
    policy given to a connection of its own is refused on a port with one
    connection, where it says nothing; in [policy] it is every fan-out
    port's default, and a port with one connection leaves it alone."""
    fanned = graph.fan_out(connections)
    for i, conn in enumerate(connections):
        given = [key for key in FANOUT_KEYS if key in own_keys.get(i, ())]
        if given and tuple(conn.uses) not in fanned:
            raise SpecError(
                path,
                f"{conn.where}.{given[0]}",
                f"a fan-out policy on a port with one connection: {'.'.join(conn.uses)} feeds {conn.id} alone; "
                "fanout and fanout_depth apply to a uses port with several connections (or give them in [policy])",
            )
    _check_one_setting(path, connections, "uses")


def _check_fan_in(path, connections):
    """Connections into one provides port (fan-in) set one port's properties:
    they must agree on every key of the receiving side (worker, ordering,
    flow, dispatch...). Each is a sequence space of its own all the same."""
    _check_one_setting(path, connections, "provides")


def _check_one_setting(path, connections, side):
    """The connections at one port (its `side`: "uses" or "provides") give
    it one setting: they must agree on every key of that side, since the
    port's properties are one (`<port>.<key>`)."""
    first: dict[tuple[str, str], Connection] = {}  # port -> its first connection
    for conn in connections:
        earlier = first.setdefault(getattr(conn, side), conn)
        if earlier is conn:
            continue
        mine = getattr(conn.policy, f"{side}_properties")("p")
        theirs = getattr(earlier.policy, f"{side}_properties")("p")
        for key in theirs:
            if mine[key] != theirs[key]:
                name = key.split(".", 1)[1]
                how = "leave one port" if side == "uses" else "reach one port"
                which = "sending" if side == "uses" else "receiving"
                raise SpecError(
                    path,
                    f"{conn.where}.{name}",
                    f"{earlier.id} and {conn.id} {how} with different {name} ({theirs[key]!r} and "
                    f"{mine[key]!r}); the {which} port has one setting, give both connections the same",
                )


def _number_streams(path, components):
    """With several packet sources, each stamps a stream id of its own, so
    that a stage after a merge counts order per stream and a sink tells
    the sources' packets apart: the spec's where it sets one (each source's
    different), and for the others the lowest ids no source was given, in
    the order of their declaration (0, 1, ...). (An external component
    declares nothing, and is never a source: _check_externals.)"""
    sources = [(i, c) for i, c in enumerate(components) if "stream_id" in (kind_of(c) or {}).get("properties", {})]
    if len(sources) < 2:
        return
    given: dict[int, str] = {}
    for i, c in sources:
        if "stream_id" not in c.properties:
            continue
        other = given.setdefault(c.properties["stream_id"], c.name)
        if other != c.name:
            raise SpecError(
                path,
                f"component[{i}].stream_id",
                f"{c.name!r} and {other!r} both stamp stream {c.properties['stream_id']}; "
                "each source of a spec needs a stream id of its own (or leave it out: one is given)",
            )
    free = (n for n in itertools.count() if n not in given)
    for _, c in sources:
        if "stream_id" not in c.properties:
            c.properties["stream_id"] = next(free)


@dataclass
class _Drawn:
    """A spec's components and connections while it is being checked: what
    the graph functions (model/graph.py) walk."""

    components: list
    connections: list


def _check_topology(path, components, connections):
    """Packets must flow from a source to an end: no loop (nothing says yet
    how packets go round one), every required input connected, and with
    more than one component every one connected."""
    drawn = _Drawn(components, connections)
    loop = graph.find_cycle(drawn)
    if loop is not None:
        closing = next(c for c in connections if (c.uses[0], c.provides[0]) == (loop[-2], loop[-1]))
        what = (
            f"{closing.id} connects {loop[0]!r} to itself"
            if len(loop) == 2
            else f"the connections make a loop ({graph.describe_route(loop)})"
        )
        raise SpecError(
            path,
            closing.where,
            f"{what}; refused: no policy says yet how packets go round a loop, so a waveform is a graph without loops",
        )
    connected_in = {conn.provides for conn in connections}
    for c in components:
        ports = ports_of(c) or {}
        required = [p for p in port_names(ports, "provides") if ports[p]["required"]]
        open_ports = [p for p in required if (c.name, p) not in connected_in]
        if open_ports and len(open_ports) == len(port_names(ports, "provides")):
            raise SpecError(
                path,
                "connection",
                f"{c.name!r} ({c.kind}) receives from nothing and would wait for ever; connect a source to its input",
            )
        if open_ports:
            raise SpecError(
                path,
                "connection",
                f"{c.name}.{open_ports[0]} is a required input of {c.name!r} ({c.kind}) and connected to nothing; "
                f"{c.name!r} would wait for it for ever: connect a uses port to it",
            )
    if len(components) > 1:
        linked = {n for conn in connections for n in (conn.uses[0], conn.provides[0])}
        alone = [c.name for c in components if c.name not in linked]
        if alone:
            raise SpecError(
                path,
                "connection",
                f"{alone[0]!r} is connected to nothing; connect it (chain or [[connection]]) or remove it",
            )


def _check_recorded_ends(path, components, connections):
    """Every component's packets reach an end that records them: a branch
    that ends at an external component (which has no record file; the run
    measures it at the port of the runtime's component it feeds) counts
    nothing the run could report."""
    drawn = _Drawn(components, connections)
    by_name = {c.name: c for c in components}
    ends = set(graph.sinks(drawn))
    stranded = graph.not_reaching_a_sink(drawn, lambda name: name in ends and by_name[name].external is None)
    if not stranded:
        return
    end = next(name for name in stranded if name in ends)
    into = next((conn for conn in connections if conn.provides[0] == end), None)
    others = [name for name in stranded if name != end]
    raise SpecError(
        path,
        into.where if into is not None else "connection",
        f"{end!r} ({by_name[end].kind}) is external and last: it has no record file of its own, so the run "
        "measures it at the port it feeds"
        + (f", and the packets of {', '.join(map(repr, others))} reach no end that records" if others else "")
        + "; end the branch with a component of the runtime (a stage or a sink)",
    )


def _check_externals(path, components, connections):
    """An external component has no record file: the run sees its packets as
    they reach the component of the runtime it feeds, and counts them from a
    packet source of the runtime. So it is never last (_check_recorded_ends)
    nor first, never feeds another external component, and the port it feeds
    takes from it alone."""
    by_name = {c.name: c for c in components}
    _check_recorded_ends(path, components, connections)
    for c in components:
        if c.external is None:
            continue
        what = f"{c.name!r} ({c.kind}) is external"
        outgoing = [conn for conn in connections if conn.uses[0] == c.name]
        if not any(conn.provides[0] == c.name for conn in connections):
            raise SpecError(
                path,
                "connection",
                f"{what} and first: the run counts packets from a packet source "
                "of the runtime; feed it from one (a producer)",
            )
        for conn in outgoing:
            target = by_name[conn.provides[0]]
            if target.external is not None:
                raise SpecError(
                    path,
                    "connection",
                    f"{conn.id}: both ends are external; the run measures an "
                    "external component at the port of the runtime's component it feeds",
                )
            others = [o.id for o in connections if o.provides == conn.provides and o is not conn]
            if others:
                raise SpecError(
                    path,
                    "connection",
                    f"{conn.id}: {'.'.join(conn.provides)} also receives "
                    f"{others[0]}; the run measures {c.name!r} at that port, which must take from it alone",
                )


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
    if not isinstance(hosts, list) or not all(
        isinstance(h, list) and h and all(isinstance(n, str) for n in h) for h in hosts
    ):
        raise SpecError(path, "placement.hosts", "must be a list of non-empty lists of component names")
    placed = [n for h in hosts for n in h]
    for n in placed:
        if n in external:
            raise SpecError(
                path,
                "placement.hosts",
                f"{n!r} is external, a process of its own (or someone else's); leave it out of the placement",
            )
        if n not in names:
            raise SpecError(path, "placement.hosts", f"no component named {n!r}")
        if placed.count(n) > 1:
            raise SpecError(path, "placement.hosts", f"{n!r} is placed twice")
    missing = [n for n in order if n not in placed]
    if missing:
        raise SpecError(
            path,
            "placement.hosts",
            f"{missing[0]!r} is not placed; a placement places every "
            f'component (add ["{missing[0]}"] for a process of its own)',
        )
    return hosts, nodes

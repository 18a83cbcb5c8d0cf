"""A waveform as an SCA Software Assembly Descriptor, loaded into the same
Spec a TOML spec gives (model/spec.py): `load_spec` (model/load.py) reads a path ending in
.sad.xml through here, so `scabench run`, the studies and every other user
of a spec take either.

What each part of the SAD becomes in the spec:

  softwareassembly name, description    [experiment] name, title
  componentfiles/componentfile          the SPDs, by localfile relative to the SAD, or
                                        /-rooted under the SDR root's dom/
  componentplacement/componentinstantiation
                                        a [[component]]: its name the usagename (or
                                        the id), its kind, library or program from the
                                        SPD's implementation for this host (its os,
                                        processor and code; mapping.py), its
                                        properties the PRF's values with the
                                        instantiation's simplerefs over them
  hostcollocation                       [placement] hosts: its components share one
                                        process; any other instantiation has its own
  connectinterface                      a [[connection]] from usesport to providesport,
                                        each end found by componentinstantiationref or
                                        by findby/namingservice (an instantiation's
                                        findcomponent name, or its name)
  assemblycontroller, startorder        [run] start_order, as REDHAWK's application
                                        starts them (_start_order)
  externalports, externalproperties     checked, and recorded in [experiment]
  REDHAWK's device, logging, affinity   refused by name (REFUSED)
  and option elements

SAD has no place for how a run is measured, so that comes from a sidecar
beside it, <name>.sad.toml, each table optional: [experiment] (more keys),
[run] (a spec's [run] keys, and packets: the stream of every packet source),
[policy] (every connection's policy), [connection."ID"] (policy keys of the
connectinterface with that id, or with the id a result gives it,
"a.out->b.in"), [network], and where the processes run:
[hostcollocation."ID"] node = "NODE" (a hostcollocation by its id or name)
and [componentinstantiation."ID"] node = "NODE" (a component of a process of
its own, by its id or usagename), with [domain] naming, the domain the nodes
are in (a spec's [placement] nodes and [domain]). `scabench run` flags go on
top, as for TOML.

Every mistake is one line naming the file and line (SAD, SPD, PRF or SCD) or
the sidecar's key, and what would be valid; the checks a TOML spec gets
(model/spec_toml.py parse_spec) run on what the SAD says, and their errors are
placed on the element they came from."""

import json
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from scabench.errors import SpecError
from scabench.files import not_a_file
from scabench.model import gpp, graph
from scabench.model.catalog import LibraryError, component_kinds, policy_schema
from scabench.model.checks import check_property, settable_properties, table_of
from scabench.model.gpp import host_platform, processor_name
from scabench.model.sad.descriptor import child, children, read_descriptor, resolve_sdrroot, text
from scabench.model.sad.mapping import (
    BUILTIN_SCHEME,
    CORBA_TO_PRF,
    PRF_TO_CORBA,
    Implementation,
    check_range,
    component_table,
    enumeration_values,
    implementation_of,
    is_external,
    range_of,
    value_of,
)
from scabench.model.spec import CODE_SOURCE, RUN_TABLE_KEYS, Spec
from scabench.model.spec_toml import early_start_refusal, parse_spec, read_toml

SAD_SUFFIX = ".sad.xml"
SIDECAR_SUFFIX = ".sad.toml"
SIDECAR_TABLES = (
    "experiment",
    "run",
    "policy",
    "connection",
    "network",
    "domain",
    "hostcollocation",
    "componentinstantiation",
)
# A sidecar's [run]: a spec's [run] keys but the start order (the SAD's
# assemblycontroller and startorders say it), and the stream of every packet source.
SIDECAR_RUN_KEYS = (*(k for k in RUN_TABLE_KEYS if k != "start_order"), "packets")
# What the sidecar's deployment tables say of a process: the node it runs on.
DEPLOYMENT_KEYS = ("node",)
# PRF kinds a component is configured with ("property" is REDHAWK's later
# word for "configure"); allocation, test, factoryparam, message and event
# properties are for devices, tests, factories and events, none of which a
# scabench run has.
CONFIGURED = ("configure", "property", "execparam")
# REDHAWK's elements that scabench has nothing behind, each refused by name
# with what to do instead (none is read and then ignored).
REFUSED = {
    "options": "REDHAWK's application options are for its application factory, which scabench has not; "
    "the run's settings go in the sidecar's [run]",
    "usesdevicedependencies": "scabench has no devices to allocate; take it out (the node a process runs on: "
    'the sidecar\'s [hostcollocation."ID"] or [componentinstantiation."ID"] node)',
    "usesdeviceref": "scabench has no devices to allocate; take it out (the node a process runs on: "
    'the sidecar\'s [hostcollocation."ID"] node)',
    "reservation": "scabench reserves no device capacity; take it out",
    "devicerequires": "scabench has no devices to match; take it out (the node a process runs on: "
    'the sidecar\'s [componentinstantiation."ID"] node)',
    "affinity": "scabench places processes on CPUs itself; take it out (the sidecar's [run] cores and pin)",
    "loggingconfig": "scabench components write their records to the run's folder and take no logging "
    "configuration; take it out",
}
# The data interfaces of scabench's ports (idl/scabench.idl): DataPort, the
# base every port's object has, and one per element type.
DATA_PORT_REPID = "IDL:scabench/DataPort:1.0"
PORT_TYPE_REPIDS = {t: f"IDL:scabench/data{t.capitalize()}:1.0" for t in ("octet", "short", "float", "double")}
# BulkIO's data interfaces that scabench's ports speak (idl/bulkio.idl): a
# port whose SCD names one is a BulkIO port, and its connections speak BulkIO
# (the policy's protocol = "bulkio"). BulkIO's other interfaces (dataLong,
# dataChar, dataXML, dataFile, dataSDDS, dataVITA49, ...) are refused by name.
BULKIO_PREFIX = "IDL:BULKIO/"
BULKIO_TYPE_REPIDS = {t: f"IDL:BULKIO/data{t.capitalize()}:1.0" for t in ("octet", "short", "float", "double")}
# The protocol a port's repid gives it, in the policy's words (its `protocol` key).
SCABENCH_PROTOCOL, BULKIO_PROTOCOL = "scabench", "bulkio"


def is_sad(path: str | Path) -> bool:
    return str(path).endswith(SAD_SUFFIX)


def waveform_stem(path: str | Path) -> str:
    """exp6.sad.xml -> exp6, exp6.toml -> exp6: the waveform's name from its
    file (<waveform exp6>, one built in code: exp6)."""
    name = Path(str(path)).name
    built = CODE_SOURCE.fullmatch(name)
    if built:
        return built.group(1)
    return name[: -len(SAD_SUFFIX)] if is_sad(name) else Path(name).stem


def sidecar_of(path: Path) -> Path:
    path = Path(path)
    return path.with_name(waveform_stem(path) + SIDECAR_SUFFIX)


def load_sad(path: str | Path, sdrroot: str | Path | None = None) -> "Spec":
    """The spec a SAD and its sidecar give. /-rooted file names are read
    under the SDR root: `sdrroot`, else $SDRROOT (descriptor.resolve_sdrroot)."""
    return _Waveform(Path(path), resolve_sdrroot(sdrroot)).spec()


def sad_tables(path: str | Path, sdrroot: str | Path | None = None) -> dict[str, Any]:
    """What a SAD and its sidecar say, as the tables of a TOML spec, before
    the spec's own checks (load_sad's first half): where each connection's
    protocol comes from its ports' SCDs, say."""
    return _Waveform(Path(path), resolve_sdrroot(sdrroot)).tables()


@dataclass
class Simple:
    """A simple property of a PRF."""

    id: str
    type: str
    mode: str
    element: object
    prf: object  # its Descriptor
    value: object = None  # the PRF's <value>, or None
    range: tuple | None = None  # (min, max) of its <range>
    enumeration: list | None = None  # the values its <enumerations> allow


@dataclass
class Package:
    """An SPD and what it leads to."""

    spd: object  # Descriptor
    name: str
    implementation: Implementation
    simples: dict = field(default_factory=dict)
    structured: dict = field(default_factory=dict)  # id -> Structured
    prfs: list = field(default_factory=list)
    ports: dict | None = None  # {"uses": [...], "provides": [...]}; None: not known (an external program)
    # (direction, port) -> (protocol, repid) of each port its SCD names (_check_repid)
    protocols: dict = field(default_factory=dict)
    profile: str = ""  # its SPD as the SAD names it (/-rooted: in the SDR root's dom/), REDHAWK's PROFILE_NAME

    def describe(self) -> str:
        if self.implementation.program is not None:
            return f"{self.name}, program {self.implementation.program}"
        return f"{self.name}, kind {self.implementation.kind}"


@dataclass
class Instance:
    element: object
    id: str
    name: str
    package: Package
    properties: dict
    startorder: int | None = None
    # Policy keys its componentproperties give its ports: {port: {key: (value, simpleref element)}}
    policy: dict = field(default_factory=dict)


@dataclass
class Structured:
    """A simplesequence or struct property of a PRF, read and typed."""

    id: str
    tag: str  # simplesequence or struct
    mode: str
    value: object  # a list (a sequence), a dict of member values (a struct), or None: no value
    configured: bool  # a value the launcher sets (a program's simplesequence)
    type: str | None = None  # a simplesequence's element type, in the PRF's words
    range: tuple | None = None  # a simplesequence's <range> (min, max)
    at: str = ""  # "PRF:line" of its declaration, for an error about it


class _Waveform:
    def __init__(self, path, sdrroot):
        self.sdrroot = sdrroot
        self.sad = read_descriptor(path, "softwareassembly", sdrroot)
        self.sidecar_path = sidecar_of(self.sad.path)
        self.side = read_toml(self.sidecar_path) if self.sidecar_path.exists() else {}
        for key in self.side:
            if key not in SIDECAR_TABLES:
                raise SpecError(
                    self.sidecar_path,
                    key,
                    f"unknown table; a SAD's sidecar has: {', '.join(SIDECAR_TABLES)} "
                    "(components, placement and connections are the SAD's)",
                )
        self.packages = {}  # SPD path -> Package
        self.instances = []  # in document order
        self.hosts = []  # lists of instances sharing a process
        self.collocations = []  # (element, [instances]) of each hostcollocation
        self.connections = []  # (element, id, uses instance, port, provides instance, port)
        self.connection_keys = []  # the sidecar's key for each connection's policy
        self.protocols_from_scds: dict[str, str] = {}  # connection id -> the protocol its ports' SCDs decided
        self.connection_refs = []  # for each connection, {policy key: the SAD's simpleref that gave it}
        self.node_keys = {}  # node -> the sidecar's key that placed a process there first

    # -- the SAD -----------------------------------------------------------

    def tables(self):
        """The SAD and its sidecar read and checked as SCA descriptors, as
        the tables of a TOML spec (not yet checked as a spec)."""
        root = self.sad.root
        files = self._component_files()
        self._partitioning(files)
        by_id = {i.id: i for i in self.instances}
        controller = child(child(root, "assemblycontroller"), "componentinstantiationref")
        self.controller = self._instance_by_id(controller, by_id)
        for tag in ("options", "usesdevicedependencies"):
            self._refuse(child(root, tag))
        self._connections(by_id)
        self.external = self._externals(by_id)
        return self._document()

    def spec(self):
        doc = self.tables()
        try:
            spec = parse_spec(doc, self.sad.path)
            for conn in spec.connections:
                conn.protocol_from_scds = self.protocols_from_scds.get(conn.id)
            packets = table_of(self.side, "run", self.sidecar_path).get("packets")
            if packets is not None:
                if isinstance(packets, bool) or not isinstance(packets, int) or packets < 1:
                    raise SpecError(
                        self.sidecar_path,
                        "run.packets",
                        "must be a whole number of packets >= 1 (what every packet source sends)",
                    )
                spec = spec.with_packets(packets, where="run.packets")
        except SpecError as exc:
            raise self._placed(exc) from None
        return spec

    def _refuse(self, element, what=None):
        """An element of REDHAWK's that scabench has nothing behind: one line, by name."""
        if element is not None:
            raise self.sad.error(element, REFUSED[element.tag], f"{what}: {element.tag}" if what else None)

    def _start_order(self):
        """The start order the SAD gives, as REDHAWK 2.2's application has
        it: the assembly controller first, then the instantiations with a
        startorder, ascending (equal ones collocated first, then in document
        order); REDHAWK stops
        them in reverse. Given as it is, never reordered: the launcher starts
        the components it leaves out around it (graph.start_order). Without
        any startorder, REDHAWK's application starts the assembly controller
        alone and leaves the rest to it; scabench's launcher starts every
        component, so then all in its safe order (an empty start order)."""
        ordered = [i for i in self.instances if i.startorder is not None]
        if not ordered:
            return []
        # REDHAWK's ApplicationFactory lists the hostcollocations' components
        # before the standalone ones, then sorts by startorder, stably: of
        # equal startorders, a collocated component comes first, then the
        # document order.
        ordered.sort(key=lambda i: (i.startorder, not _collocated(i.element)))
        return [self.controller.name] + [i.name for i in ordered if i is not self.controller]

    def _check_early_senders(self, start_order):
        """A start order that lets packets reach a component before it starts
        is refused (spec_toml.early_start_refusal), on the sender's
        startorder or on the assembly controller."""
        waveform = SimpleNamespace(
            components=self.instances,
            connections=[SimpleNamespace(uses=(c[2].name, c[3]), provides=(c[4].name, c[5])) for c in self.connections],
        )
        early = graph.early_senders(waveform, graph.start_order(waveform, start_order))
        if early:
            sender, receiver = early[0]
            instance = next(i for i in self.instances if i.name == sender)
            message = early_start_refusal(sender, receiver)
            if instance is self.controller:
                # REDHAWK starts the assembly controller first whatever its startorder.
                element, what = child(self.sad.root, "assemblycontroller"), "assemblycontroller"
                message += " (the assembly controller starts first: make a receiver it, or leave the startorders out)"
            else:
                element, what = instance.element, f"componentinstantiation {instance.id!r}: startorder"
            raise self.sad.error(element, message, what)

    def _externals(self, by_id):
        """The ports and properties the waveform offers as its own
        (externalports, externalproperties): each checked to name an
        instantiation's port or property, and recorded in the spec's
        [experiment] as external_ports and external_properties
        ({external name: "component.port"}); a run measures the waveform's
        connections, and these say which ends a user of the waveform sees."""
        recorded: dict[str, dict[str, str]] = {}
        ports = child(self.sad.root, "externalports")
        for port in children(ports, "port") if ports is not None else []:
            identifier = next(c for c in children(port) if c.tag.endswith("identifier"))
            instance = self._instance_by_id(child(port, "componentinstantiationref"), by_id)
            name = text(identifier)
            direction = {"usesidentifier": "uses", "providesidentifier": "provides"}.get(identifier.tag)
            known = instance.package.ports
            if direction is None:
                raise self.sad.error(
                    identifier,
                    "a component's supported interface is its CF::Resource, which the launcher holds; "
                    "offer a usesidentifier or providesidentifier port",
                    "externalports: port",
                )
            if known is not None and name not in known[direction]:
                raise self.sad.error(
                    identifier,
                    f"{instance.name} has no {direction} port {name!r}; "
                    f"it has: {', '.join(known[direction]) or 'none'}",
                    "externalports: port",
                )
            self._record(recorded, "external_ports", port.get("externalname") or name, f"{instance.name}.{name}", port)
        properties = child(self.sad.root, "externalproperties")
        for prop in children(properties, "property") if properties is not None else []:
            instance = by_id.get(prop.get("comprefid"))
            what = f"externalproperties: property {prop.get('propid')!r}"
            if instance is None:
                raise self.sad.error(
                    prop,
                    f"comprefid {prop.get('comprefid')!r} names no componentinstantiation; the waveform has: "
                    f"{', '.join(by_id)}",
                    what,
                )
            package, pid = instance.package, prop.get("propid")
            if pid not in package.simples and pid not in package.structured:
                declared = [*package.simples, *package.structured]
                raise self.sad.error(
                    prop, f"not a property of {instance.name}; it declares: {', '.join(declared) or 'none'}", what
                )
            self._record(
                recorded, "external_properties", prop.get("externalpropid") or pid, f"{instance.name}.{pid}", prop
            )
        return recorded

    def _record(self, recorded, table, name, target, element):
        if name in recorded.setdefault(table, {}):
            raise self.sad.error(
                element, f"the external name {name!r} is given twice (first to {recorded[table][name]})", table
            )
        recorded[table][name] = target

    def _component_files(self):
        files: dict[str, tuple[Any, Package]] = {}  # id -> (its element, its package)
        for element in children(child(self.sad.root, "componentfiles"), "componentfile"):
            fid = element.get("id")
            what = f"componentfile {fid!r}"
            if fid in files:
                raise self.sad.error(element, f"id used twice (first on line {files[fid][0].sourceline})", what)
            if element.get("type") not in (None, "SPD"):
                raise self.sad.error(
                    element, f'type {element.get("type")!r}: a component file is an SPD (type="SPD")', what
                )
            local = child(element, "localfile")
            spd = self.sad.file(local)
            if problem := not_a_file(spd):
                raise self.sad.error(
                    local,
                    f"{spd}: {problem}; give the component's SPD "
                    "(components/<Name>/<Name>.spd.xml), relative to the SAD",
                    what,
                )
            package = self._package(spd)
            # What REDHAWK gives a component as PROFILE_NAME: its SPD as the domain names it.
            package.profile = local.get("name") if local.get("name").startswith("/") else str(spd)
            files[fid] = (element, package)
        return files

    def _partitioning(self, files):
        for element in children(child(self.sad.root, "partitioning")):
            if element.tag == "componentplacement":
                for instance in self._placement(element, files):
                    # A placement of its own is a process of its own (an external program is its own already).
                    if not is_external(instance.package.implementation):
                        self.hosts.append([instance])
            else:  # hostcollocation
                group = []
                for placement in children(element, "componentplacement"):
                    for instance in self._placement(placement, files):
                        if is_external(instance.package.implementation):
                            raise self.sad.error(
                                instance.element,
                                "an external program is a process of its own; take it out of the hostcollocation",
                                f"componentinstantiation {instance.id!r}",
                            )
                        group.append(instance)
                for tag in ("usesdeviceref", "reservation"):
                    for refused in children(element, tag):
                        self._refuse(refused, f"hostcollocation {element.get('id') or element.get('name')!r}")
                if group:
                    self.hosts.append(group)
                self.collocations.append((element, group))

    def _placement(self, element, files):
        ref = child(element, "componentfileref")
        fid = ref.get("refid")
        if fid not in files:
            raise self.sad.error(
                ref,
                f"no componentfile {fid!r}; the SAD's componentfiles: {', '.join(files) or 'none'}",
                "componentfileref",
            )
        for tag in ("deployondevice", "compositepartofdevice", "devicepkgfile"):
            device = child(element, tag)
            if device is not None:
                raise self.sad.error(
                    device,
                    "scabench has no devices to deploy on: it places components in "
                    "processes, one each or a hostcollocation's together",
                )
        package = files[fid][1]
        for instantiation in children(element, "componentinstantiation"):
            instance = self._instance(instantiation, package)
            self.instances.append(instance)
            yield instance

    def _instance(self, element, package):
        iid = element.get("id")
        what = f"componentinstantiation {iid!r}"
        other = next((i for i in self.instances if i.id == iid), None)
        if other is not None:
            raise self.sad.error(element, f"id used twice (first on line {other.element.sourceline})", what)
        name = text(child(element, "usagename")) or iid
        for tag in ("affinity", "loggingconfig", "devicerequires"):
            self._refuse(child(element, tag), what)
        startorder = element.get("startorder")
        if startorder is not None and not re.fullmatch(r"[0-9]+", startorder.strip()):
            raise self.sad.error(element, f"startorder {startorder!r}: a whole number >= 0", what)
        find = child(element, "findcomponent")
        if find is not None and child(find, "namingservice") is None:
            raise self.sad.error(
                find,
                "scabench starts its components itself: find one by namingservice, not by a resource factory",
                what,
            )
        properties = {s.id: s.value for s in package.simples.values() if s.value is not None and s.mode != "readonly"}
        properties.update(
            {
                q.id: {"sequence": q.type, "values": q.value} if q.tag == "simplesequence" else {"struct": q.value}
                for q in package.structured.values()
                if q.configured
            }
        )
        policy: dict[str, dict[str, tuple]] = {}
        overrides = child(element, "componentproperties")
        for ref in children(overrides) if overrides is not None else []:
            rid = ref.get("refid")
            where = f"{what}: {ref.tag} {rid!r}"
            if ref.tag == "simpleref" and rid not in package.simples and _policy_ref(rid):
                self._port_policy(ref, rid, package, policy, where)
                continue
            declared = package.structured.get(rid)
            if ref.tag == "simplesequenceref" and package.implementation.program is not None:
                self._check_sequence_ref(ref, declared, package, where)
                properties[rid] = {"sequence": declared.type, "values": self._sequence_values(ref, declared, where)}
                continue
            if ref.tag == "simplesequenceref":
                raise self.sad.error(
                    ref,
                    f"{package.implementation.kind} declares simple properties only: set them with simpleref",
                    where,
                )
            if ref.tag != "simpleref":
                raise self.sad.error(
                    ref,
                    f"scabench configures a struct from its PRF: set the values in the PRF's struct, not by {ref.tag}",
                    where,
                )
            if declared is not None and declared.tag == "simplesequence":
                raise self.sad.error(ref, f"a simplesequence ({declared.at}): set it with simplesequenceref", where)
            simple = package.simples.get(rid)
            if simple is None and "." in rid and package.ports is not None:
                self._check_port_key(ref, rid, package, where)
            if simple is None:
                if not package.prfs:
                    raise self.sad.error(
                        ref,
                        f"not a property of {package.name}: its SPD ({package.spd.path}) names no propertyfile",
                        where,
                    )
                raise self.sad.error(
                    ref,
                    f"not a property in {' and '.join(str(p.path) for p in package.prfs)}; "
                    f"it declares: {', '.join(package.simples) or 'none'}",
                    where,
                )
            if simple.mode == "readonly":
                raise self.sad.error(
                    ref,
                    f"readonly in {simple.prf.path}:{simple.element.sourceline}; a configuration cannot set it",
                    where,
                )
            properties[rid] = self._value(self.sad, ref, ref.get("value"), simple, package, where)
        return Instance(element, iid, name, package, properties, int(startorder) if startorder else None, policy)

    def _check_sequence_ref(self, ref, declared, package, where):
        """A simplesequenceref names a simplesequence of the PRF a configuration sets."""
        if declared is None or declared.tag != "simplesequence":
            sequences = [q.id for q in package.structured.values() if q.tag == "simplesequence"]
            what = f"a {declared.tag} ({declared.at})" if declared else "not a property"
            raise self.sad.error(
                ref,
                f"{what} in {' and '.join(str(p.path) for p in package.prfs) or 'no PRF'}; "
                f"its simplesequences: {', '.join(sequences) or 'none'}",
                where,
            )
        if declared.mode == "readonly":
            raise self.sad.error(ref, f"readonly in {declared.at}; a configuration cannot set it", where)

    def _check_port_key(self, ref, rid, package, where):
        """A refid "<port>.<key>" on one of the component's ports whose key is
        no policy key: name that side's keys."""
        port = rid.split(".", 1)[0]
        direction = next((d for d in ("uses", "provides") if port in package.ports[d]), None)
        if direction is None:
            return
        keys = [k for k, v in policy_schema().items() if v["side"] in (direction, "both")]
        raise self.sad.error(
            ref,
            f"{port} is a {direction} port of {package.name}, and {rid.split('.', 1)[1]!r} is not one of its "
            f"policy keys: {', '.join(keys)} (docs/reference/policy-keys.md)",
            where,
        )

    def _port_policy(self, ref, rid, package, policy, where):
        """A simpleref "<port>.<key>": a policy key (docs/reference/policy-keys.md)
        given on one of the instantiation's ports, for each connection at
        that port; the key must be one of that port's side."""
        port, key = rid.split(".", 1)
        side = policy_schema()[key]["side"]
        known = package.ports
        if known is not None:
            direction = next((d for d in ("uses", "provides") if port in known[d]), None)
            if direction is None:
                ports = [*known["uses"], *known["provides"]]
                raise self.sad.error(
                    ref,
                    f"{package.name} has no port {port!r} to give the policy key {key!r}; it has: "
                    f"{', '.join(ports) or 'none'}",
                    where,
                )
            if side not in (direction, "both"):
                raise self.sad.error(
                    ref,
                    f"{key} is a {side} port's policy key, and {port} is a {direction} port "
                    "(docs/reference/policy-keys.md)",
                    where,
                )
        if key in policy.setdefault(port, {}):
            raise self.sad.error(ref, "given twice", where)
        policy[port][key] = (_policy_value(ref.get("value")), ref)

    def _sequence_values(self, ref, declared, where):
        """A simplesequenceref's values, typed by the PRF's simplesequence and
        checked against its range."""
        return _typed_values(self.sad, child(ref, "values"), declared.type, declared.range, where)

    def _aliases(self, instance):
        """The names findby/namingservice finds an instantiation by."""
        names = {instance.name}
        find = child(instance.element, "findcomponent")
        if find is not None:
            names.add(child(find, "namingservice").get("name"))
        return names

    def _instance_by_id(self, ref, by_id):
        instance = by_id.get(ref.get("refid"))
        if instance is None:
            raise self.sad.error(
                ref,
                f"no componentinstantiation {ref.get('refid')!r}; the waveform has: {', '.join(by_id) or 'none'}",
                "componentinstantiationref",
            )
        return instance

    def _connections(self, by_id):
        connections = child(self.sad.root, "connections")
        seen: dict[str, int] = {}  # id -> the line it was first on
        for element in children(connections, "connectinterface") if connections is not None else []:
            cid = element.get("id")
            what = f"connectinterface {cid!r}" if cid else "connectinterface"
            if cid is not None:
                if cid in seen:
                    raise self.sad.error(element, f"id used twice (first on line {seen[cid]})", what)
                seen[cid] = element.sourceline
            provides = child(element, "providesport")
            if provides is None:
                other = children(element)[1]
                raise self.sad.error(other, "scabench connects a uses port to a provides port (providesport)", what)
            uses_instance, uses_port = self._end(child(element, "usesport"), "usesidentifier", "uses", by_id, what)
            provides_instance, provides_port = self._end(provides, "providesidentifier", "provides", by_id, what)
            self.connections.append((element, cid, uses_instance, uses_port, provides_instance, provides_port))

    def _end(self, element, identifier, direction, by_id, what):
        port_element = child(element, identifier)
        port = text(port_element)
        ref = child(element, "componentinstantiationref")
        if ref is not None:
            instance = self._instance_by_id(ref, by_id)
        else:
            find = child(element, "findby")
            if find is None:
                device = children(element)[1]
                raise self.sad.error(
                    device, "scabench has no devices; connect ports of the waveform's componentinstantiations", what
                )
            naming = child(find, "namingservice")
            if naming is None:
                raise self.sad.error(
                    children(find)[0],
                    "an object outside the waveform; scabench connects the waveform's own componentinstantiations",
                    what,
                )
            name = naming.get("name")
            instance = next((i for i in self.instances if name in self._aliases(i)), None)
            if instance is None:
                known = sorted({a for i in self.instances for a in self._aliases(i)})
                raise self.sad.error(
                    naming,
                    f"findby names {name!r}, which no componentinstantiation is found by "
                    f"(its findcomponent name or usagename); the waveform has: {', '.join(known)}",
                    what,
                )
        ports = instance.package.ports
        if ports is not None and port not in ports[direction]:
            raise self.sad.error(
                port_element,
                f"{instance.name} ({instance.package.describe()}) has no {direction} "
                f"port {port!r}; it has: {', '.join(ports[direction]) or 'none'}",
                what,
            )
        return instance, port

    # -- SPD, PRF, SCD -----------------------------------------------------

    def _package(self, path):
        if path in self.packages:
            return self.packages[path]
        spd = read_descriptor(path, "softpkg", self.sdrroot)
        implementation = _chosen_implementation(spd)
        code = child(implementation, "code")
        what = f"implementation {implementation.get('id')!r}: code"
        try:
            impl = implementation_of(
                code.get("type", ""),
                child(code, "localfile").get("name"),
                text(child(code, "entrypoint")),
                spd.path.parent,
            )
        except ValueError as exc:
            raise spd.error(code, str(exc), what) from None
        impl = self._dependencies(spd, implementation, impl)
        package = Package(spd, spd.root.get("name"), self._resolved(spd, code, impl, what))
        for element in (child(spd.root, "propertyfile"), child(implementation, "propertyfile")):
            if element is not None:
                self._properties(spd, element, package)
        package.ports = self._ports(spd, package)
        self.packages[path] = package
        return package

    def _dependencies(self, spd, implementation, impl):
        """The chosen implementation's softpkgref dependencies. One on a
        package whose code is a scabench component library (a SharedLibrary
        that registers kinds) is honoured: the kind a `scabench:KIND` code
        names comes from that library, which scabench-host loads with
        --library, as REDHAWK loads a dependency's library with the component.
        Any other is refused by name, saying what to do instead."""
        for dependency in children(implementation, "dependency"):
            ref = children(dependency)[0]
            if ref.tag != "softpkgref":
                continue
            local = child(ref, "localfile")
            what = f"implementation {implementation.get('id')!r}: dependency: softpkgref"
            path = spd.file(local)
            if problem := not_a_file(path):
                raise spd.error(local, f"{path}: {problem}; give the dependency's SPD, relative to the SPD", what)
            library = self._library_of(read_descriptor(path, "softpkg", self.sdrroot), child(ref, "implref"))
            if library is None:
                raise spd.error(
                    ref,
                    f"{path.name} is not a scabench component library (SharedLibrary code that registers kinds), "
                    "and scabench loads no other package: install what it holds where the component finds it "
                    "and take the dependency out",
                    what,
                )
            kinds = [k for k, d in component_kinds(library).items() if "library" in d]
            if impl.program is not None:
                refusal = "a program of its own loads its own libraries: take the dependency out"
            elif impl.library is not None:
                refusal = (
                    f"the code is a component library already ({impl.library.name}), and a component's kinds come "
                    f"from one library: name {library.name}'s kind in its own code instead"
                )
            elif impl.kind not in kinds:
                refusal = (
                    f"{library.name} registers {', '.join(kinds)}, not {impl.kind!r}: the code names the kind it "
                    f'takes from the library ("scabench:KIND")'
                )
            else:
                impl = replace(impl, library=library)
                continue
            raise spd.error(ref, refusal, what)
        return impl

    def _library_of(self, dependency, implref):
        """The component library a dependency's SPD holds (its implementation
        by implref, else the one for this host); None where its code is no
        SharedLibrary that registers kinds of its own."""
        if implref is not None:
            chosen = next(
                (i for i in children(dependency.root, "implementation") if i.get("id") == implref.get("refid")), None
            )
            if chosen is None:
                ids = [i.get("id") for i in children(dependency.root, "implementation")]
                raise dependency.error(
                    dependency.root,
                    f"implref {implref.get('refid')!r} names no implementation; it has: {', '.join(ids)}",
                )
        else:
            chosen = _chosen_implementation(dependency)
        # A library's own dependency would have to be loaded before it, which
        # the host does not do: refused by name, not passed over.
        for own in children(chosen, "dependency"):
            if child(own, "softpkgref") is not None:
                raise dependency.error(
                    child(own, "softpkgref"),
                    "a dependency's own softpkgref is not followed: the host loads one library per component; "
                    "build what it needs into the library",
                )
        code = child(chosen, "code")
        if code.get("type") != "SharedLibrary":
            return None
        library = dependency.file(child(code, "localfile"))
        if not_a_file(library):
            return None
        try:
            kinds = component_kinds(library)
        except LibraryError:
            return None
        return library if any("library" in d for d in kinds.values()) else None

    def _resolved(self, spd, code, impl, what):
        """The implementation checked against the runtime: its kind exists,
        in its library if it names one."""
        local = child(code, "localfile")
        if impl.program is not None:
            if problem := not_a_file(impl.program) or (None if os.access(impl.program, os.X_OK) else "not executable"):
                raise spd.error(local, f"{impl.program}: {problem}; give the component's program", what)
            return impl
        if impl.library is not None:
            if problem := not_a_file(impl.library):
                raise spd.error(
                    local, f"{impl.library}: {problem}; give the component library (a .so), relative to the SPD", what
                )
            try:
                kinds = component_kinds(impl.library)
            except LibraryError as exc:
                raise spd.error(local, str(exc), what) from None
            own = [k for k, d in kinds.items() if "library" in d]
            if impl.kind is None:
                if len(own) != 1:
                    raise spd.error(
                        code, f"{impl.library} registers {', '.join(own)}: name the kind in <entrypoint>", what
                    )
                return replace(impl, kind=own[0])
            if impl.kind not in own:
                raise spd.error(
                    child(code, "entrypoint"),
                    f"{impl.kind!r} is not a kind of {impl.library}; it registers: {', '.join(own)}",
                    what,
                )
            return impl
        kinds = component_kinds()
        if impl.kind not in kinds:
            raise spd.error(
                local,
                f"{impl.kind!r} is not a kind of the runtime; valid: {', '.join(kinds)} (a "
                "component library's kind: its .so as localfile, the kind as entrypoint)",
                what,
            )
        return impl

    def _properties(self, spd, element, package):
        local = child(element, "localfile")
        path = spd.file(local)
        if problem := not_a_file(path):
            raise spd.error(local, f"{path}: {problem}; give the component's PRF, relative to the SPD", "propertyfile")
        prf = read_descriptor(path, "properties", self.sdrroot)
        package.prfs.append(prf)
        impl = package.implementation
        settable = settable_properties(impl.kind, impl.library) if impl.program is None else None
        lines: dict[str, int] = {}  # id -> the line it was first on
        for simple in children(prf.root):
            if simple.tag == "description":
                continue
            sid = simple.get("id")
            what = f"{simple.tag} {sid!r}"
            if sid in lines:
                raise prf.error(simple, f"id used twice (first on line {lines[sid]})", what)
            lines[sid] = simple.sourceline
            if simple.tag != "simple":
                package.structured[sid] = self._structured(prf, simple, package, settable, what)
                continue
            kinds = [k.get("kindtype", "configure") for k in children(simple, "kind")] or ["configure"]
            wrong = next((k for k in kinds if k not in CONFIGURED), None)
            if wrong:
                raise prf.error(
                    simple, f"kind {wrong!r}: a component is configured with {', '.join(CONFIGURED)} properties", what
                )
            prf_type = simple.get("type")
            if settable is not None:
                if sid not in settable:
                    raise prf.error(
                        simple,
                        f"{impl.kind} has no property {sid!r}; valid: {', '.join(settable)} "
                        "(a connection's policy goes in the sidecar's [policy])",
                        what,
                    )
                corba = component_kinds(impl.library)[impl.kind]["properties"][sid]["corba_type"]
                if PRF_TO_CORBA[prf_type] != corba:
                    raise prf.error(
                        simple,
                        f"type {prf_type!r}: {impl.kind}'s {sid} is a CORBA {corba}, "
                        f'type="{CORBA_TO_PRF.get(corba, corba)}"',
                        what,
                    )
            entry = Simple(sid, prf_type, simple.get("mode", "readwrite"), simple, prf)
            # The range and the enumerations are the PRF's own rules: a fault
            # in one is blamed on it, not on a value judged by it.
            limits, enumerations = child(simple, "range"), child(simple, "enumerations")
            try:
                if limits is not None:
                    entry.range = range_of(limits.get("min"), limits.get("max"))
            except ValueError as exc:
                raise prf.error(limits, str(exc), what) from None
            try:
                if enumerations is not None:
                    entry.enumeration = enumeration_values(children(enumerations, "enumeration"), prf_type)
            except ValueError as exc:
                raise prf.error(enumerations, f"an enumeration: {exc}", what) from None
            value = child(simple, "value")
            if value is not None:
                entry.value = self._value(prf, value, value.text or "", entry, package, what)
            package.simples[sid] = entry

    def _structured(self, prf, element, package, settable, what):
        """A simplesequence or struct: its values typed and checked against
        the PRF. A program of its own's simplesequence is configured (the
        launcher sends it as its type's CORBA sequence); a struct with a value
        to configure is refused by name (the launcher sends simple values and
        sequences), as is either on a kind of the runtime (its kinds declare
        simple properties only)."""
        impl = package.implementation
        if settable is not None:
            if element.get("id") not in settable:
                raise prf.error(
                    element, f"{impl.kind} has no property {element.get('id')!r}; valid: {', '.join(settable)}", what
                )
            corba = component_kinds(impl.library)[impl.kind]["properties"][element.get("id")]["corba_type"]
            raise prf.error(
                element,
                f"{impl.kind}'s {element.get('id')} is a CORBA {corba}: declare it "
                f'<simple type="{CORBA_TO_PRF.get(corba, corba)}">',
                what,
            )
        mode = element.get("mode", "readwrite")
        if element.tag == "simplesequence":
            value = self._sequence(prf, element, what)
            kinds = [k.get("kindtype", "configure") for k in children(element, "kind")] or ["configure"]
        else:
            members: dict[str, Any] = {}
            for member in children(element):
                if member.tag not in ("simple", "simplesequence"):
                    continue
                where = f"{what}: {member.tag} {member.get('id')!r}"
                if member.get("id") in members:
                    raise prf.error(member, "member id used twice", where)
                if member.tag == "simplesequence":
                    values = self._sequence(prf, member, where)
                    typed = {"sequence": member.get("type"), "values": values}
                    members[member.get("id")] = typed if values is not None else None
                else:
                    found = child(member, "value")
                    try:
                        # Typed: REDHAWK extracts each member into its PRF type, strictly.
                        members[member.get("id")] = (
                            {"type": member.get("type"), "value": value_of(found.text or "", member.get("type"))}
                            if found is not None
                            else None
                        )
                    except ValueError as exc:
                        raise prf.error(found, str(exc), where) from None
            value = members if any(v is not None for v in members.values()) else None
            kinds = [k.get("kindtype", "configure") for k in children(element, "configurationkind")] or ["configure"]
        configured = value is not None and mode != "readonly" and any(k in CONFIGURED for k in kinds)
        if configured and element.tag == "struct" and any(v is None for v in value.values()):
            missing = [m for m, v in value.items() if v is None]
            raise prf.error(
                element,
                f"a struct to configure gives every member a value; {', '.join(missing)} has none "
                "(or make it readonly: the component's report)",
                what,
            )
        entry = Structured(
            element.get("id"), element.tag, mode, value, configured, at=f"{prf.path}:{element.sourceline}"
        )
        if element.tag == "simplesequence":
            limits = child(element, "range")
            entry.type = element.get("type")
            entry.range = range_of(limits.get("min"), limits.get("max")) if limits is not None else None
        return entry

    def _sequence(self, prf, element, what):
        """A simplesequence's values, typed (None: it has none)."""
        values = child(element, "values")
        if values is None:
            return None
        limits = child(element, "range")
        try:
            low_high = range_of(limits.get("min"), limits.get("max")) if limits is not None else None
        except ValueError as exc:
            raise prf.error(limits, str(exc), what) from None
        return _typed_values(prf, values, element.get("type"), low_high, what)

    def _value(self, descriptor, element, text_value, simple, package, what):
        """A property's value from PRF text, checked by its PRF type and range
        and by the kind, at `element`'s line."""
        try:
            value = value_of(text_value, simple.type)
            if simple.range is not None:
                check_range(value, *simple.range)
            if simple.enumeration is not None and value not in simple.enumeration:
                raise ValueError(
                    f"{value!r} is not one of the PRF's enumerations: {', '.join(str(v) for v in simple.enumeration)}"
                )
        except ValueError as exc:
            raise descriptor.error(element, str(exc), what) from None
        impl = package.implementation
        if impl.program is None:
            value = check_property(
                f"{descriptor.path}:{element.sourceline}", what, impl.kind, simple.id, value, impl.library
            )
        return value

    def _ports(self, spd, package):
        impl = package.implementation
        kind_ports = None
        if impl.program is None:
            kind = component_kinds(impl.library)[impl.kind]
            kind_ports = {"uses": kind["uses"], "provides": kind["provides"], "types": kind["ports"]}
        element = child(spd.root, "descriptor")
        if element is None:
            return kind_ports
        local = child(element, "localfile")
        path = spd.file(local)
        if problem := not_a_file(path):
            raise spd.error(local, f"{path}: {problem}; give the component's SCD, relative to the SPD", "descriptor")
        scd = read_descriptor(path, "softwarecomponent", self.sdrroot)
        ports: dict[str, list[str]] = {"uses": [], "provides": []}
        for port in children(child(child(scd.root, "componentfeatures"), "ports")):
            name = port.get(f"{port.tag}name")
            if kind_ports is not None and name not in kind_ports[port.tag]:
                raise scd.error(
                    port,
                    f"{impl.kind} has no {port.tag} port {name!r}; it has: {', '.join(kind_ports[port.tag]) or 'none'}",
                    f"{port.tag} {name!r}",
                )
            protocol = _check_repid(scd, port, name, kind_ports)
            if protocol is not None:
                package.protocols[(port.tag, name)] = (protocol, port.get("repid"))
            ports[port.tag].append(name)
        return ports

    # -- the spec ----------------------------------------------------------

    def _document(self):
        """The SAD and its sidecar as the tables of a TOML spec."""
        root = self.sad.root
        experiment = {}
        if root.get("name"):
            experiment["name"] = root.get("name")
        if text(child(root, "description")):
            experiment["title"] = text(child(root, "description"))
        more = table_of(self.side, "experiment", self.sidecar_path)
        for key, source in (("name", 'softwareassembly name="..."'), ("title", "<description>")):
            if key in more:
                raise SpecError(self.sidecar_path, f"experiment.{key}", f"the SAD gives it ({source})")
        experiment.update(more)
        experiment.update(self.external)
        doc = {
            "experiment": experiment,
            "component": [self._component_table(i) for i in self.instances],
            "connection": self._connection_tables(),
            "placement": {"hosts": [[i.name for i in host] for host in self.hosts]},
        }
        run = dict(table_of(self.side, "run", self.sidecar_path))
        if "start_order" in run:
            raise SpecError(
                self.sidecar_path,
                "run.start_order",
                "the SAD gives the start order: its assemblycontroller, then each componentinstantiation's startorder",
            )
        for key in run:
            if key not in SIDECAR_RUN_KEYS:
                raise SpecError(self.sidecar_path, f"run.{key}", f"unknown key; valid: {', '.join(SIDECAR_RUN_KEYS)}")
        run.pop("packets", None)  # applied to the spec's packet sources once it exists
        start_order = self._start_order()
        if start_order:
            run["start_order"] = start_order
            self._check_early_senders(start_order)
        doc["run"] = run
        for key in ("policy", "network", "domain"):
            if key in self.side:
                doc[key] = self.side[key]
        nodes = self._nodes()
        if nodes:
            doc["placement"]["nodes"] = nodes
        return doc

    def _component_table(self, instance):
        table = component_table(instance.name, instance.package.implementation, instance.properties)
        if is_external(instance.package.implementation):
            # A program of its own is started as REDHAWK starts one: its SPD is its PROFILE_NAME.
            table["parameters"] = {"PROFILE_NAME": instance.package.profile}
        return table

    def _nodes(self):
        """[placement] nodes from the sidecar's [hostcollocation."ID"] and
        [componentinstantiation."ID"] tables: the node each names, and the
        components of the process it places there."""
        collocations: dict[str, list[str]] = {}  # id or name -> its instances' names
        for element, group in self.collocations:
            for key in (element.get("id"), element.get("name")):
                if key:
                    collocations.setdefault(key, [i.name for i in group])
        instances: dict[str, list[str]] = {}
        for i in self.instances:
            for key in (i.id, i.name):
                instances.setdefault(key, [i.name])
        nodes: dict[str, list[str]] = {}  # node -> the instances on it
        for table, found, what in (
            ("hostcollocation", collocations, "hostcollocation (by its id or name)"),
            ("componentinstantiation", instances, "componentinstantiation (by its id or usagename)"),
        ):
            for key, entry in table_of(self.side, table, self.sidecar_path).items():
                where = f"{table}.{_key(key)}"
                if key not in found:
                    raise SpecError(
                        self.sidecar_path,
                        where,
                        f"no {what} {key!r} in {self.sad.path}; it has: {', '.join(found) or 'none'}",
                    )
                if not isinstance(entry, dict):
                    raise SpecError(self.sidecar_path, where, 'must be a table: node = "NODE"')
                for word in entry:
                    if word not in DEPLOYMENT_KEYS:
                        raise SpecError(
                            self.sidecar_path,
                            f"{where}.{word}",
                            f"unknown key; valid: {', '.join(DEPLOYMENT_KEYS)} (the node its process runs on)",
                        )
                node = entry.get("node")
                if not isinstance(node, str):
                    raise SpecError(
                        self.sidecar_path, f"{where}.node", 'the name of the node its process runs on, like "board1"'
                    )
                self.node_keys.setdefault(node, where)
                nodes.setdefault(node, []).extend(n for n in found[key] if n not in nodes[node])
        return nodes

    def _connection_tables(self):
        own = table_of(self.side, "connection", self.sidecar_path)
        ids: dict[str, int] = {}
        for _element, cid, uses, uses_port, provides, provides_port in self.connections:
            for name in filter(None, (cid, f"{uses.name}.{uses_port}->{provides.name}.{provides_port}")):
                ids.setdefault(name, len(ids))
        for key, table in own.items():
            if key not in ids:
                raise SpecError(
                    self.sidecar_path,
                    f"connection.{_key(key)}",
                    f"no connectinterface with this id in {self.sad.path}; its connections: {', '.join(ids) or 'none'}",
                )
            if not isinstance(table, dict):
                raise SpecError(self.sidecar_path, f"connection.{_key(key)}", "must be a table of policy keys")
            for word in ("from", "to"):
                if word in table:
                    raise SpecError(
                        self.sidecar_path,
                        f"connection.{_key(key)}.{word}",
                        "a connection's ends are the SAD's (usesport, providesport); the sidecar gives its policy keys",
                    )
        tables = []
        used_ports = set()
        for element, cid, uses, uses_port, provides, provides_port in self.connections:
            table = {"from": f"{uses.name}.{uses_port}", "to": f"{provides.name}.{provides_port}"}
            given = self._sad_policy(uses, uses_port, provides, provides_port)
            used_ports.update({(uses.name, uses_port), (provides.name, provides_port)})
            table.update({key: value for key, (value, _ref) in given.items()})
            names = [n for n in (f"{uses.name}.{uses_port}->{provides.name}.{provides_port}", cid) if n in own]
            for name in names:
                for key in own[name]:
                    if key in given:
                        ref = given[key][1]
                        raise SpecError(
                            self.sidecar_path,
                            f"connection.{_key(name)}.{key}",
                            f"the SAD gives it too ({self.sad.path}:{ref.sourceline}, simpleref {ref.get('refid')!r}): "
                            "give a connection's policy key in one place",
                        )
                table.update(own[name])
            self.connection_refs.append({key: ref for key, (_value, ref) in given.items()})
            # Where its policy keys came from, for an error about one of them.
            self.connection_keys.append(names[-1] if names else cid or table["from"] + "->" + table["to"])
            protocol = self._protocol(element, cid, (uses, "uses", uses_port), (provides, "provides", provides_port))
            if protocol is not None:
                self._check_sidecar_protocol(protocol, table, names)
                self.protocols_from_scds[f"{table['from']}->{table['to']}"] = protocol
                if protocol == BULKIO_PROTOCOL:  # scabench's own is what a connection speaks unless told
                    table["protocol"] = protocol
            tables.append(table)
        for instance in self.instances:
            for port, keys in instance.policy.items():
                if (instance.name, port) not in used_ports:
                    ref = next(iter(keys.values()))[1]
                    raise self.sad.error(
                        ref,
                        f"no connection at {instance.name}'s port {port!r}: its policy keys would apply to none",
                        f"componentinstantiation {instance.id!r}: simpleref {ref.get('refid')!r}",
                    )
        return tables

    def _sad_policy(self, uses, uses_port, provides, provides_port):
        """The policy keys the SAD gives one connection on its two ports:
        {key: (value, simpleref)}; flow, a key of both sides, must agree.
        Each key must be one of its port's side: where no SCD says which side
        a port is, the connection does (a provides key on the uses end would
        otherwise land on the other component's port)."""
        for instance, port, end in ((uses, uses_port, "uses"), (provides, provides_port, "provides")):
            for key, (_, ref) in instance.policy.get(port, {}).items():
                side = policy_schema()[key]["side"]
                if side not in (end, "both"):
                    raise self.sad.error(
                        ref,
                        f"{key} is a {side} port's policy key, and {port} is the {end} end of a connection "
                        f"(docs/reference/policy-keys.md)",
                        f"componentinstantiation {instance.id!r}: simpleref {ref.get('refid')!r}",
                    )
        given = dict(uses.policy.get(uses_port, {}))
        for key, (value, ref) in provides.policy.get(provides_port, {}).items():
            if key in given and given[key][0] != value:
                other = given[key][1]
                raise self.sad.error(
                    ref,
                    f"{uses.name}.{uses_port} gives {key} {other.get('value')!r} (line {other.sourceline}) for the "
                    "same connection: a key of both sides has one value per connection",
                    f"componentinstantiation {provides.id!r}: simpleref {ref.get('refid')!r}",
                )
            given[key] = (value, ref)
        return given

    def _protocol(self, element, cid, *ends):
        """The protocol a connection's ends speak, from their SCDs' repids
        (None: no SCD names either end's port). Both ends named must agree:
        a BulkIO port connects to a BulkIO port."""
        said = []  # (protocol, "component.port", repid) of each end its SCD names
        for instance, direction, port in ends:
            known = instance.package.protocols.get((direction, port))
            if known is not None:
                said.append((known[0], f"{instance.name}.{port}", known[1]))
        if len({protocol for protocol, _, _ in said}) > 1:
            (p1, end1, r1), (p2, end2, r2) = said
            raise self.sad.error(
                element,
                f"{end1} is a {p1} port (its SCD's repid {r1}) and {end2} a {p2} port ({r2}): "
                "both ends of a connection speak one protocol; give both BulkIO repids, or neither",
                f"connectinterface {cid!r}" if cid else "connectinterface",
            )
        return said[0][0] if said else None

    def _check_sidecar_protocol(self, protocol, table, names):
        """The sidecar may not give a connection a protocol its ports' SCDs contradict."""
        given = table.get("protocol", table_of(self.side, "policy", self.sidecar_path).get("protocol"))
        if given is not None and given != protocol:
            key = f"connection.{_key(names[-1])}.protocol" if "protocol" in table else "policy.protocol"
            other = "scabench" if protocol == BULKIO_PROTOCOL else "BulkIO"
            raise SpecError(
                self.sidecar_path,
                key,
                f"{given!r}, but the ports of {table['from']}->{table['to']} are {protocol} ports by their SCDs' "
                f"repids; take it out (the SCDs decide), or give the ports {other} repids",
            )

    def _placed(self, exc):
        """An error of the spec checks on the SAD's document, placed on the
        element (or sidecar key) it came from."""
        if exc.path != str(self.sad.path):
            return exc
        key, message = exc.key, exc.message
        m = re.fullmatch(r"component\[(\d+)\](?:\.(.*))?", key)
        if m:
            instance = self.instances[int(m.group(1))]
            return self.sad.error(
                instance.element,
                message,
                f"componentinstantiation {instance.id!r}"
                + (f": {m.group(2)}" if m.group(2) and m.group(2) != "name" else ""),
            )
        m = re.fullmatch(r"connection\[(\d+)\](?:\.(.*))?", key)
        if m:
            element, cid, uses, uses_port, provides, provides_port = self.connections[int(m.group(1))]
            if m.group(2) in (None, "from", "to"):
                return self.sad.error(element, message, f"connectinterface {cid!r}" if cid else "connectinterface")
            ref = self.connection_refs[int(m.group(1))].get(m.group(2)) if self.connection_refs else None
            if ref is not None:
                return self.sad.error(ref, message, f"simpleref {ref.get('refid')!r}")
            return SpecError(
                self.sidecar_path, f"connection.{_key(self.connection_keys[int(m.group(1))])}.{m.group(2)}", message
            )
        if key.startswith("placement.nodes"):  # the sidecar placed them
            node = key.split(".", 2)[2] if key.count(".") >= 2 else None
            where = self.node_keys.get(node) or next(iter(self.node_keys.values()), "domain")
            return SpecError(self.sidecar_path, where, message)
        if key in ("connection", "component") or key.startswith("placement"):
            section = {"connection": "connections", "component": "partitioning"}.get(key, "partitioning")
            element = child(self.sad.root, section)
            return self.sad.error(element if element is not None else self.sad.root, message, section)
        if key.split(".")[0] in SIDECAR_TABLES:
            return SpecError(self.sidecar_path, key, message)
        return exc


def _chosen_implementation(spd):
    """The implementation scabench runs, as REDHAWK's deployment picks one:
    the first (in the SPD's order) whose <os> and <processor> (any, where it
    names none; also as a dependency on the GPP's os_name or processor_name)
    match this host, whose code scabench runs (Executable, SharedLibrary, or
    a scabench kind) and that needs no device or package scabench cannot
    give. None: one line saying why each was passed over. A softpkg's own
    usesdevice, and a code's stacksize and priority, are refused by name."""
    own = child(spd.root, "usesdevice")
    if own is not None:
        raise spd.error(own, "scabench has no devices to allocate; take it out", "softpkg: usesdevice")
    host_os, host_processor = host_platform()
    passed = []
    for implementation in children(spd.root, "implementation"):
        iid = implementation.get("id")
        systems = [e.get("name") for e in children(implementation, "os")]
        processors = [e.get("name") for e in children(implementation, "processor")]
        unmet = None
        for dependency in children(implementation, "dependency"):
            ref = children(dependency)[0]
            if ref.tag == "propertyref" and ref.get("refid") in (gpp.OS_NAME, gpp.PROCESSOR_NAME):
                # A dependency must be met, besides any <os> or <processor>.
                host = host_os if ref.get("refid") == gpp.OS_NAME else host_processor
                value = ref.get("value")
                if processor_name(value) != host.lower():
                    word = "os" if ref.get("refid") == gpp.OS_NAME else "processor"
                    unmet = unmet or f"{iid!r} depends on {word} {value}"
            elif ref.tag == "softpkgref":
                continue  # honoured or refused by name once chosen (_Waveform._dependencies)
            else:
                unmet = unmet or (
                    f"{iid!r} depends on a device's {ref.get('refid')}, which scabench has no device to match"
                )
        processors = [processor_name(name) for name in processors]
        code = child(implementation, "code")
        code_type = code.get("type", "")
        builtin = child(code, "localfile").get("name").startswith(BUILTIN_SCHEME)
        if systems and host_os.lower() not in (s.lower() for s in systems):
            passed.append(f"{iid!r} is for os {'/'.join(systems)}")
        elif processors and host_processor not in processors:
            passed.append(f"{iid!r} is for processor {'/'.join(processors)}")
        elif not builtin and code_type not in ("", "Executable", "SharedLibrary"):
            passed.append(f"{iid!r} is {code_type} code")
        elif unmet is not None:
            passed.append(unmet)
        elif child(implementation, "usesdevice") is not None:
            passed.append(f"{iid!r} uses a device, which scabench has none of")
        else:
            for tag in ("stacksize", "priority"):
                if child(code, tag) is not None:
                    raise spd.error(
                        child(code, tag),
                        "the launcher starts every process with the system's stack size and priority "
                        "(the sidecar's [run] scheduler); take it out",
                        f"implementation {iid!r}: code: {tag}",
                    )
            return implementation
    raise spd.error(
        spd.root,
        f"no implementation runs here (os {host_os}, processor {host_processor}; scabench runs Executable and "
        f"SharedLibrary code): {'; '.join(passed)}",
        "softpkg",
    )


def _check_repid(scd, port, name, kind_ports):
    """A port's repid against what scabench's ports speak, and the protocol
    it gives the port: a BulkIO data interface of idl/bulkio.idl ("bulkio"),
    or one of idl/scabench.idl ("scabench"; DataPort, their base, for every
    port, gives none: None); either of the port's element type (any for a
    "sample" port, which follows the run's sample type, and for an external
    program's, whose types scabench does not know)."""
    repid = port.get("repid")
    what = f"{port.tag} {name!r}"
    port_type = kind_ports["types"][name]["type"] if kind_ports is not None else None
    if repid.startswith(BULKIO_PREFIX):
        valid = (
            [BULKIO_TYPE_REPIDS[port_type]] if port_type in BULKIO_TYPE_REPIDS else list(BULKIO_TYPE_REPIDS.values())
        )
        if repid not in BULKIO_TYPE_REPIDS.values():
            raise scd.error(
                port,
                f"repid {repid}: scabench's BulkIO ports speak BulkIO's {', '.join(BULKIO_TYPE_REPIDS.values())}",
                what,
            )
        if repid not in valid:
            raise scd.error(port, f"repid {repid}: {name} is a {port_type} port; valid: {', '.join(valid)}", what)
        return BULKIO_PROTOCOL
    valid = [DATA_PORT_REPID] + (
        [PORT_TYPE_REPIDS[port_type]] if port_type in PORT_TYPE_REPIDS else list(PORT_TYPE_REPIDS.values())
    )
    if repid not in valid:
        described = f"a {port_type} port" if port_type in PORT_TYPE_REPIDS else "a scabench data port"
        raise scd.error(
            port,
            f"repid {repid}: {name} is {described}; valid: {', '.join(valid)}, or BulkIO's "
            f"({', '.join(BULKIO_TYPE_REPIDS[t] for t in BULKIO_TYPE_REPIDS if port_type in (t, None, 'sample'))})",
            what,
        )
    # DataPort, the base of every scabench port, names no wire protocol: the policy says which (export-sad
    # writes it for every port, whatever its connections speak).
    return None if repid == DATA_PORT_REPID else SCABENCH_PROTOCOL


def _typed_values(descriptor, values, prf_type, low_high, what):
    """A <values> element's values, typed by `prf_type` (and its bounds) and
    checked against the range `low_high` (None: none), each error at its
    <value>: a PRF's simplesequence and a SAD's simplesequenceref alike."""
    typed = []
    for value in children(values, "value"):
        try:
            typed.append(value_of(value.text or "", prf_type))
            if low_high is not None:
                check_range(typed[-1], *low_high)
        except ValueError as exc:
            raise descriptor.error(value, str(exc), what) from None
    return typed


def _collocated(element):
    """Whether a componentinstantiation is placed in a hostcollocation."""
    return any(a.tag == "hostcollocation" for a in element.iterancestors())


def _policy_ref(refid):
    """Whether a simpleref's refid names a port's policy key: "<port>.<key>"."""
    return "." in refid and refid.split(".", 1)[1] in policy_schema()


def _policy_value(text):
    """A policy key's value from SAD text, as TOML would give it: true and
    false, a whole number, a real, else the text (the policy's own check
    judges it, model/policy.py)."""
    word = text.strip()
    if word in ("true", "false"):
        return word == "true"
    for kind in (int, float):
        try:
            return kind(word)
        except ValueError:
            pass
    return text


def _key(name):
    """A sidecar key as TOML writes it: quoted unless bare."""
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else json.dumps(name)

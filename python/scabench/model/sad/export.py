"""A Spec written as an SCA waveform, in the layout REDHAWK and OSSIE use:

  OUT/components/<Name>/<Name>.spd.xml, .prf.xml, .scd.xml   one package per kind
  OUT/waveforms/<W>/<W>.sad.xml                               the assembly
  OUT/waveforms/<W>/<W>.sad.toml                              its run settings (load.py)

Loading the SAD back gives the same spec (`describe()` equal but for the
file; load.py), with two exceptions: a spec without an experiment name gets
the file's, and components are listed in placement order (a
hostcollocation's members together), which differs from the spec's own order
only when collocated components are not next to each other in it.

A component package is the kind's, not the instance's: its PRF declares every
property the kind takes (scabench-host --describe), with no <value>, and each
instantiation's simplerefs carry the spec's values, so a property the spec
leaves to the runtime's default stays unset. Descriptor ids are DCE UUIDs
derived from the names, so an export is the same bytes every time."""

import os
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import tomli_w
from lxml import etree

from scabench.errors import ScabenchError, SpecError
from scabench.model.catalog import component_kinds, policy_schema
from scabench.model.checks import settable_properties
from scabench.model.policy import policy_tables
from scabench.model.sad.load import SAD_SUFFIX, SIDECAR_SUFFIX, waveform_stem
from scabench.model.sad.mapping import CORBA_TO_PRF, code_of, text_of

if TYPE_CHECKING:
    from scabench.model.spec import Spec

# The SCA 2.2.2 DTDs' public ids, as REDHAWK and OSSIE write them (nothing is
# fetched from them: the loader checks against dtd/).
DOCTYPES = {
    "softwareassembly": '<!DOCTYPE softwareassembly PUBLIC "-//JTRS//DTD SCA V2.2.2 SAD//EN" "softwareassembly.dtd">',
    "softpkg": '<!DOCTYPE softpkg PUBLIC "-//JTRS//DTD SCA V2.2.2 SPD//EN" "softpkg.dtd">',
    "properties": '<!DOCTYPE properties PUBLIC "-//JTRS//DTD SCA V2.2.2 PRF//EN" "properties.dtd">',
    "softwarecomponent": (
        '<!DOCTYPE softwarecomponent PUBLIC "-//JTRS//DTD SCA V2.2.2 SCD//EN" "softwarecomponent.dtd">'
    ),
}
# What every component of the runtime is (idl/cf.idl, REDHAWK 2.x's
# Resource): each interface CF::Resource inherits, with the ones it inherits
# in turn; and its data ports' base interface (idl/scabench.idl; the element
# type is the run's).
RESOURCE_INTERFACES = {
    "LifeCycle": (),
    "TestableObject": (),
    "PropertyEmitter": ("PropertySet",),
    "PortSet": ("PortSupplier",),
    "Logging": ("LogEventConsumer", "LogConfiguration"),
}
EVERY_INTERFACE = tuple(RESOURCE_INTERFACES) + tuple(i for parents in RESOURCE_INTERFACES.values() for i in parents)
DATA_PORT = "IDL:scabench/DataPort:1.0"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
# An XML ID (the SCA DTD declares connectinterface's id so): an NCName,
# letters, digits, '_', '-' and '.', not starting with a digit, '-' or '.'.
XML_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


@dataclass
class Exported:
    sad: Path
    sidecar: Path
    packages: list  # the SPD of each component package


def export_sad(spec: "Spec", out_dir: str | os.PathLike) -> "Exported":
    """Writes `spec` under out_dir; returns what it wrote."""
    try:
        return _export(spec, Path(out_dir))
    except OSError as exc:
        raise ScabenchError(f"--out {out_dir}: cannot write {exc.filename or 'there'}: {exc.strerror or exc}") from None


def _export(spec, out):
    waveform = spec.experiment.get("name") or waveform_stem(spec.path)
    if not isinstance(waveform, str) or not NAME.fullmatch(waveform):
        raise SpecError(
            spec.path,
            "experiment.name",
            f"{waveform!r} names the waveform's folder and files: use letters, digits, ., - and _",
        )
    packages: dict[tuple[str, Path | None], str] = {}  # (kind, library) -> its package's name
    for c in spec.components:
        if getattr(c, "external", None) is not None:
            raise SpecError(
                spec.path,
                f"component {c.name!r}",
                "an external component has no SCA package scabench "
                "can write; export specs of the runtime's kinds and component libraries",
            )
        if (c.kind, c.library) not in packages:
            packages[(c.kind, c.library)] = _package_name(c.kind, packages.values())
    spds = [
        _write_package(out / "components" / name, name, kind, library) for (kind, library), name in packages.items()
    ]
    folder = out / "waveforms" / waveform
    folder.mkdir(parents=True, exist_ok=True)
    sad = folder / f"{waveform}{SAD_SUFFIX}"
    default, on_ports = port_policies(spec)
    _write_xml(sad, _assembly(spec, waveform, packages, folder, out, on_ports))
    sidecar = folder / f"{waveform}{SIDECAR_SUFFIX}"
    sidecar.write_text(_sidecar_text(spec, sad.name, default))
    return Exported(sad, sidecar, spds)


def _package_name(kind, taken):
    """s4285-interleave-puncture -> S4285InterleavePuncture."""
    base = "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_.]", kind) if part) or "Component"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}{n}", n + 1
    return name


def _dce(what):
    return f"DCE:{uuid.uuid5(uuid.NAMESPACE_URL, 'scabench:' + what)}"


def _el(parent, tag, text=None, **attributes):
    element = etree.SubElement(parent, tag, {k: str(v) for k, v in attributes.items()})
    if text is not None:
        element.text = text
    return element


def _write_xml(path, root):
    path.write_bytes(
        etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="UTF-8", doctype=DOCTYPES[root.tag])
    )


def _write_package(folder, name, kind, library):
    folder.mkdir(parents=True, exist_ok=True)
    code_type, localfile, entrypoint = code_of(kind, library, Path(os.path.abspath(folder)))
    declared = component_kinds(library)[kind]
    what = f"component library {library}" if library else "the scabench runtime"

    spd = etree.Element("softpkg", id=_dce(f"component/{kind}"), name=name, type="sca_compliant")
    spd.append(etree.Comment(f" scabench kind {kind!r}, of {what}; written by scabench export-sad "))
    _el(spd, "title", name)
    _el(_el(spd, "author"), "name", "scabench export-sad")
    _el(
        spd,
        "description",
        f"The scabench component kind {kind} (scabench-host"
        + (f" --library {library}" if library else "")
        + " --describe).",
    )
    _el(_el(spd, "propertyfile", type="PRF"), "localfile", name=f"{name}.prf.xml")
    _el(_el(spd, "descriptor"), "localfile", name=f"{name}.scd.xml")
    implementation = _el(spd, "implementation", id="cpp")
    code = _el(implementation, "code", type=code_type)
    _el(code, "localfile", name=localfile)
    if entrypoint:
        _el(code, "entrypoint", entrypoint)
    _el(implementation, "programminglanguage", name="C++")
    _el(implementation, "humanlanguage", name="EN")
    _el(implementation, "os", name="Linux")
    _write_xml(folder / f"{name}.spd.xml", spd)

    prf = etree.Element("properties")
    for key in settable_properties(kind, library):
        entry = declared["properties"][key]
        prf_type = CORBA_TO_PRF.get(entry["corba_type"])
        if prf_type is None:
            raise ScabenchError(f"{kind}.{key}: CORBA type {entry['corba_type']!r} has no PRF type")
        simple = _el(prf, "simple", id=key, name=key, type=prf_type, mode="readwrite")
        _el(simple, "description", f"{entry['description']} (default: {text_of(entry['default'])})")
        if "values" in entry:  # the kind's names, which the loader enforces as any PRF's enumerations
            enumerations = _el(simple, "enumerations")
            for value in entry["values"]:
                _el(enumerations, "enumeration", label=value, value=value)
        _el(simple, "kind", kindtype="configure")
        _el(simple, "action", type="external")
    _write_xml(folder / f"{name}.prf.xml", prf)

    scd = etree.Element("softwarecomponent")
    _el(scd, "corbaversion", "2.2")
    _el(scd, "componentrepid", repid="IDL:CF/Resource:1.0")
    _el(scd, "componenttype", "resource")
    features = _el(scd, "componentfeatures")
    for interface in ("Resource",) + EVERY_INTERFACE:
        _el(features, "supportsinterface", repid=f"IDL:CF/{interface}:1.0", supportsname=interface)
    ports = _el(features, "ports")
    for port in declared["provides"]:
        _el(_el(ports, "provides", repid=DATA_PORT, providesname=port), "porttype", type="data")
    for port in declared["uses"]:
        _el(_el(ports, "uses", repid=DATA_PORT, usesname=port), "porttype", type="data")
    interfaces = _el(scd, "interfaces")
    resource = _el(interfaces, "interface", repid="IDL:CF/Resource:1.0", name="Resource")
    for interface in RESOURCE_INTERFACES:
        _el(resource, "inheritsinterface", repid=f"IDL:CF/{interface}:1.0")
    for interface in EVERY_INTERFACE:
        declared_interface = _el(interfaces, "interface", repid=f"IDL:CF/{interface}:1.0", name=interface)
        for parent in RESOURCE_INTERFACES.get(interface, ()):
            _el(declared_interface, "inheritsinterface", repid=f"IDL:CF/{parent}:1.0")
    _el(interfaces, "interface", repid=DATA_PORT, name="DataPort")
    _write_xml(folder / f"{name}.scd.xml", scd)
    return folder / f"{name}.spd.xml"


def port_policies(spec: "Spec") -> tuple[dict, dict]:
    """Where an export writes the connections' policies: ([policy], the
    default every connection starts from, which SAD has no place for and
    the sidecar keeps; {(component, port): {key: value}}, each connection's
    own keys over it (model/policy.policy_tables) on its port of the key's
    side (flow, of both sides, on the uses port), as the SAD's simplerefs
    "<port>.<key>"). A port's key applies to each of its connections, which
    a spec's one setting per port (spec_toml) makes agree."""
    default, overrides = policy_tables(spec.connections, spec.path)
    schema = policy_schema()
    on_ports: dict[tuple, dict] = {}
    given: dict[tuple, set] = {}  # port -> the connections that gave it keys
    for conn in spec.connections:
        for key, value in overrides[conn.id].items():
            port = tuple(conn.provides) if schema[key]["side"] == "provides" else tuple(conn.uses)
            if on_ports.setdefault(port, {}).setdefault(key, value) != value:
                raise ScabenchError(f"{spec.path}: {'.'.join(port)} has two settings of {key}: a port has one")
            given.setdefault(port, set()).add(conn.id)
    for port, ids in given.items():
        every = {c.id for c in spec.connections if port in (tuple(c.uses), tuple(c.provides))}
        if ids != every:
            raise ScabenchError(f"{spec.path}: {'.'.join(port)}'s connections differ in their policy: a port has one")
    return default, on_ports


def _assembly(spec, waveform, packages, folder, out, on_ports):
    sad = etree.Element("softwareassembly", id=_dce(f"waveform/{waveform}"), name=waveform)
    sad.append(
        etree.Comment(
            f" written by scabench export-sad from {Path(str(spec.path)).name}; how it runs "
            f"(policy, cores, ...) is in {waveform}{SIDECAR_SUFFIX} "
        )
    )
    if spec.experiment.get("title"):
        _el(sad, "description", str(spec.experiment["title"]))
    files = _el(sad, "componentfiles")
    for name in packages.values():
        spd = out / "components" / name / f"{name}.spd.xml"
        _el(_el(files, "componentfile", id=f"{name}_spd", type="SPD"), "localfile", name=os.path.relpath(spd, folder))
    # The instantiation ids, XML IDs; the usagename keeps the component's name.
    instance = dict(zip((c.name for c in spec.components), xml_ids([c.name for c in spec.components])))
    partitioning = _el(sad, "partitioning")
    for i, host in enumerate(spec.hosts):
        parent = (
            partitioning
            if len(host) == 1
            else _el(partitioning, "hostcollocation", id=f"host{i + 1}", name=f"host{i + 1}")
        )
        for name in host:
            c = spec.component(name)
            placement = _el(parent, "componentplacement")
            _el(placement, "componentfileref", refid=f"{packages[(c.kind, c.library)]}_spd")
            instantiation = _el(placement, "componentinstantiation", id=instance[c.name])
            if c.name in spec.start_order:
                # The assembly controller's too: REDHAWK skips it (it starts first), and it says the order is given.
                instantiation.set("startorder", str(spec.start_order.index(c.name)))
            _el(instantiation, "usagename", c.name)
            ports = {port: keys for (name, port), keys in on_ports.items() if name == c.name}
            if c.properties or ports:
                values = _el(instantiation, "componentproperties")
                for key, value in c.properties.items():
                    _el(values, "simpleref", refid=key, value=text_of(value))
                for port, keys in ports.items():  # the policy of its connections at this port
                    for key, value in keys.items():
                        _el(values, "simpleref", refid=f"{port}.{key}", value=text_of(value))
            _el(_el(instantiation, "findcomponent"), "namingservice", name=c.name)
    # The component an SCA application starts first: the spec's first in its
    # start order, else the first packet source (with no startorder, the
    # launcher's safe order starts every component: load.py, _start_order).
    sources = spec.packet_sources() or [spec.component(n) for n in spec.sources()] or spec.components
    controller = spec.start_order[0] if spec.start_order else sources[0].name
    _el(_el(sad, "assemblycontroller"), "componentinstantiationref", refid=instance[controller])
    connections = _el(sad, "connections")
    for conn, xml_id in zip(spec.connections, connection_ids(spec.connections)):
        interface = _el(connections, "connectinterface", id=xml_id)
        uses = _el(interface, "usesport")
        _el(uses, "usesidentifier", conn.uses[1])
        _el(uses, "componentinstantiationref", refid=instance[conn.uses[0]])
        provides = _el(interface, "providesport")
        _el(provides, "providesidentifier", conn.provides[1])
        _el(provides, "componentinstantiationref", refid=instance[conn.provides[0]])
    return sad


def connection_ids(connections) -> list[str]:
    """Each connection's connectinterface id: "a.out->b.in" is no XML ID
    ('>' is not a name character), so the ends are joined by "_to_" and made
    an XML ID (xml_ids)."""
    return xml_ids([f"{c.uses[0]}.{c.uses[1]}_to_{c.provides[0]}.{c.provides[1]}" for c in connections])


def xml_ids(names: list[str]) -> list[str]:
    """Each name as an XML ID (REDHAWK's DTD declares componentinstantiation's
    and connectinterface's ids so): any character outside an NCName becomes
    '_', and a name that would start with a digit, '-' or '.' gets a "c_" in
    front. Unique (a clash gets _2, _3, ... in order) and the same for the
    same names, so an export is the same bytes every time; a name that is an
    XML ID already is kept."""
    ids, taken = [], set()
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
        if not XML_ID.fullmatch(base):
            base = f"c_{base}"
        xml_id, n = base, 2
        while xml_id in taken:
            xml_id, n = f"{base}_{n}", n + 1
        taken.add(xml_id)
        ids.append(xml_id)
    return ids


def _sidecar_text(spec, sad_name, default):
    doc = {}
    more = {k: v for k, v in spec.experiment.items() if k not in ("name", "title")}
    if more:
        doc["experiment"] = more
    doc["run"] = spec.run_table()
    doc["policy"] = default
    if spec.network is not None:
        doc["network"] = spec.network.describe()
    if spec.domain is not None:
        doc["domain"] = {"naming": spec.domain}
    # Where each process runs: a hostcollocation by the id _assembly gives
    # it, a process of one component by the component's instantiation.
    for i, host in enumerate(spec.hosts):
        node = spec.node_of(host[0])
        if node is not None:
            table, key = ("hostcollocation", f"host{i + 1}") if len(host) > 1 else ("componentinstantiation", host[0])
            doc.setdefault(table, {})[key] = {"node": node}
    for c in spec.externals():
        if spec.node_of(c.name) is not None:
            doc.setdefault("componentinstantiation", {})[c.name] = {"node": spec.node_of(c.name)}
    header = (
        f"# How {sad_name} runs, which SAD has no place for: the run's settings and the messaging\n"
        "# policy every connection starts from ([policy]). A connection's own policy keys are on its\n"
        '# ports in the SAD (simpleref "<port>.<key>"). docs/how-to/sad.md: "The policy in the SAD".\n'
    )
    return header + tomli_w.dumps(doc)

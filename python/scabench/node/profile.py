"""The profiles a node writes of itself, which its DeviceManager's fileSys
serves (node/filesystem.py) and its deviceConfigurationProfile names: what
a REDHAWK DomainManager reads of a DeviceManager that registers with it.

Laid out as REDHAWK's device SDR root is, the paths being the file system's:

  /nodes/NAME/DeviceManager.dcd.xml   the DCD: the node's DeviceManager (id = its
                                      identifier, name = its label), its one device
                                      placed (instantiation id = the device's
                                      identifier), and its domain
  /mgr/DeviceManager.spd.xml          the DeviceManager's own package (`scabench node`)
  /devices/NodeDevice/NodeDevice.spd.xml, .prf.xml, .scd.xml
                                      the device's package: its implementation
                                      (IMPLEMENTATION_ID), its properties as query
                                      answers them (node/device.py's table, the
                                      GPP's by their ids) and its interfaces

They are written once, when the node starts, in SCA 2.2.2's forms (the
public ids of its DTDs, as the SAD exporter writes them)."""

import uuid
from pathlib import Path

from lxml import etree

from scabench.model import gpp
from scabench.model.sad.export import DOCTYPES, RESOURCE_INTERFACES

DCD_DOCTYPE = '<!DOCTYPE deviceconfiguration PUBLIC "-//JTRS//DTD SCA V2.2.2 DCD//EN" "deviceconfiguration.dtd">'
IMPLEMENTATION_ID = "python"  # the device's one implementation: the agent, in Python
DEVICE_PACKAGE = "NodeDevice"
DEVICE_REPID = "IDL:scabench/node/NodeDevice:1.0"
# Each CF interface a node's device is (idl/node.idl, idl/cf.idl), with those it inherits directly.
DEVICE_INTERFACES = {
    "ExecutableDevice": ("LoadableDevice",),
    "LoadableDevice": ("Device",),
    "Device": ("Resource",),
    "Resource": tuple(RESOURCE_INTERFACES),
    **RESOURCE_INTERFACES,
    **{parent: () for parents in RESOURCE_INTERFACES.values() for parent in parents},
}
MANAGER_SPD = "/mgr/DeviceManager.spd.xml"
DEVICE_SPD = f"/devices/{DEVICE_PACKAGE}/{DEVICE_PACKAGE}.spd.xml"


def dcd_path(name: str) -> str:
    """The node's DCD, as its file system names it."""
    return f"/nodes/{name}/DeviceManager.dcd.xml"


def _el(parent, tag, text=None, **attributes):
    element = etree.SubElement(parent, tag, {k: str(v) for k, v in attributes.items()})
    if text is not None:
        element.text = text
    return element


def _write(root_dir: Path, path: str, element, doctype: str) -> None:
    target = root_dir / path.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(
        etree.tostring(element, pretty_print=True, xml_declaration=True, encoding="UTF-8", doctype=doctype)
    )


def _softpkg(name: str, description: str, files: dict[str, str]):
    spd = etree.Element("softpkg", id=f"DCE:{uuid.uuid5(uuid.NAMESPACE_URL, 'scabench:node/' + name)}", name=name)
    _el(spd, "title", name)
    _el(_el(spd, "author"), "name", "scabench node")
    _el(spd, "description", description)
    if "prf" in files:
        _el(_el(spd, "propertyfile", type="PRF"), "localfile", name=files["prf"])
    if "scd" in files:
        _el(_el(spd, "descriptor"), "localfile", name=files["scd"])
    implementation = _el(spd, "implementation", id=IMPLEMENTATION_ID)
    code = _el(implementation, "code", type="Executable")
    _el(code, "localfile", name="scabench")
    _el(code, "entrypoint", "scabench node")
    _el(implementation, "programminglanguage", name="Python")
    _el(implementation, "humanlanguage", name="EN")
    system, processor = gpp.host_platform()
    _el(implementation, "os", name=system)
    _el(implementation, "processor", name=processor)
    return spd


def write_profile(
    root_dir: Path,
    name: str,
    manager_id: str,
    device,
    properties,
    domain_manager: str | None,
    naming: str,
) -> str:
    """Writes the node's profiles under root_dir; answers the DCD's path in
    the file system. `device`: the node's device (its identifier, and the
    values of its matching properties); `properties`: its NodeProperty table;
    `domain_manager`: --domain-manager as given (None: the node registers
    with none, and the DCD names the domain's Naming Service instead)."""
    _write(
        root_dir,
        MANAGER_SPD,
        _softpkg(
            "DeviceManager",
            "A scabench node's DeviceManager (scabench node): one ExecutableDevice, its processes, its profiles.",
            {},
        ),
        DOCTYPES["softpkg"],
    )
    folder = f"/devices/{DEVICE_PACKAGE}"
    _write(
        root_dir,
        DEVICE_SPD,
        _softpkg(
            DEVICE_PACKAGE,
            "A scabench node's device: an ExecutableDevice that starts the node's programs, and a GPP by "
            "REDHAWK's GPP properties (it runs inside scabench node).",
            {"prf": f"{DEVICE_PACKAGE}.prf.xml", "scd": f"{DEVICE_PACKAGE}.scd.xml"},
        ),
        DOCTYPES["softpkg"],
    )
    prf = etree.Element("properties")
    for p in properties:
        simple = _el(prf, "simplesequence" if p.sequence else "simple", id=p.id, name=p.name, type=p.type)
        simple.set("mode", p.mode)
        if p.description:
            _el(simple, "description", p.description)
        if p.action in gpp.MATCHING_ACTIONS:  # a domain compares the PRF's value (it never changes)
            _el(simple, "value", str(p.value(device)))
        for kind in p.kinds:
            _el(simple, "kind", kindtype=kind)
        _el(simple, "action", type=p.action)
    _write(root_dir, f"{folder}/{DEVICE_PACKAGE}.prf.xml", prf, DOCTYPES["properties"])
    scd = etree.Element("softwarecomponent")
    _el(scd, "corbaversion", "2.2")
    _el(scd, "componentrepid", repid=DEVICE_REPID)
    _el(scd, "componenttype", "executabledevice")
    features = _el(scd, "componentfeatures")
    _el(features, "supportsinterface", repid=DEVICE_REPID, supportsname="NodeDevice")
    for interface in DEVICE_INTERFACES:
        _el(features, "supportsinterface", repid=f"IDL:CF/{interface}:1.0", supportsname=interface)
    _el(features, "ports")
    interfaces = _el(scd, "interfaces")
    _el(
        _el(interfaces, "interface", repid=DEVICE_REPID, name="NodeDevice"),
        "inheritsinterface",
        repid="IDL:CF/ExecutableDevice:1.0",
    )
    for interface, parents in DEVICE_INTERFACES.items():
        declared = _el(interfaces, "interface", repid=f"IDL:CF/{interface}:1.0", name=interface)
        for parent in parents:
            _el(declared, "inheritsinterface", repid=f"IDL:CF/{parent}:1.0")
    _write(root_dir, f"{folder}/{DEVICE_PACKAGE}.scd.xml", scd, DOCTYPES["softwarecomponent"])

    dcd = etree.Element("deviceconfiguration", id=manager_id, name=name)
    _el(dcd, "description", f"scabench node {name}: one ExecutableDevice, {DEVICE_PACKAGE}.")
    _el(_el(dcd, "devicemanagersoftpkg"), "localfile", name=MANAGER_SPD)
    files = _el(dcd, "componentfiles")
    _el(_el(files, "componentfile", id=f"{DEVICE_PACKAGE}_spd", type="SPD"), "localfile", name=DEVICE_SPD)
    placement = _el(_el(dcd, "partitioning"), "componentplacement")
    _el(placement, "componentfileref", refid=f"{DEVICE_PACKAGE}_spd")
    _el(_el(placement, "componentinstantiation", id=device.id), "usagename", name)
    domain = _el(dcd, "domainmanager")
    if domain_manager is None:
        domain.append(etree.Comment(" no DomainManager: the domain's Naming Service, where the node registers "))
        _el(domain, "stringifiedobjectref", naming)
    elif domain_manager.startswith(("IOR:", "corbaloc:", "corbaname:")):
        _el(domain, "stringifiedobjectref", domain_manager)
    else:
        _el(domain, "namingservice", name=domain_manager)
    path = dcd_path(name)
    _write(root_dir, path, dcd, DCD_DOCTYPE)
    return path

"""A node as a REDHAWK domain drives it, checked by clients in this process
playing the domain (omniORBpy with the project's IDL, idl/cf.idl): the
node's device answers as a GPP (its matching and allocation properties by
the GPP's ids) and keeps the account of memCapacity and loadCapacity;
execute honours PRIORITY and STACK_SIZE; the DeviceManager serves its DCD
through its fileSys, read-only; and a DomainManager played by a servant here
is registered with by `scabench node --domain-manager`, drives the node
(allocateCapacity, load, executeLinked, terminate) and is left at the end.
Every process started here is ended by its PID."""

import os
import threading
import time

import pytest
from lxml import etree
from omniORB import CORBA
from py_components_world import WAIT_S, S, alive, context, naming, orb, start_naming  # noqa: F401 (fixtures)
from test_node import exec_params, node, start_node, wait_until  # noqa: F401 (fixtures: node, start_node)

from scabench.model import gpp
from scabench.node.filesystem import MAX_OPEN, ProfileFileSystem

CF = S.CF
CosNaming = S.CosNaming


def value(id_, tc, v):
    return CF.DataType(id_, CORBA.Any(tc, v))


def mem(mib):
    return value(gpp.MEM_CAPACITY, CORBA.TC_longlong, mib)


def load(cores):
    return value(gpp.LOAD_CAPACITY, CORBA.TC_double, cores)


def queried(device, *ids):
    asked = [CF.DataType(i, CORBA.Any(CORBA.TC_null, None)) for i in ids]
    return {p.id: p.value.value() for p in device.query(asked)}


def sleeper(tmp_path):
    """A program a node may run that lives until it is terminated, keeping its pid."""
    script = tmp_path / "sleeper"
    script.write_text("#!/bin/sh\nexec sleep 60\n")
    script.chmod(0o755)
    return script


def read_file(fs, path):
    f = fs.open(path, True)
    try:
        return f.read(f.sizeOf())
    finally:
        f.close()


# --- the device as a GPP -----------------------------------------------------------------


def test_the_device_answers_as_a_gpp_and_keeps_the_account_of_its_capacities(start_node):
    device = start_node("--memory-mib", "1000").wait_registered().device
    cores = len(queried(device, "cores")["cores"].split(","))
    system, processor = gpp.host_platform()
    assert (system, processor) == ("Linux", "x86_64") or processor != "x86_64"
    assert queried(device, gpp.DEVICE_KIND, gpp.OS_NAME, gpp.PROCESSOR_NAME, gpp.PROCESSOR_CORES) == {
        gpp.DEVICE_KIND: "GPP",
        gpp.OS_NAME: system,
        gpp.PROCESSOR_NAME: processor,
        gpp.PROCESSOR_CORES: cores,
    }
    before = queried(device, gpp.MEM_CAPACITY, gpp.LOAD_CAPACITY, gpp.LOAD_TOTAL, gpp.MEM_FREE)
    assert before[gpp.MEM_CAPACITY] == 1000 and before[gpp.LOAD_CAPACITY] == before[gpp.LOAD_TOTAL] == cores
    assert before[gpp.MEM_FREE] > 0
    # memCapacity and memory_mib draw from one pool; loadCapacity and cores from another.
    assert device.allocateCapacity([mem(600), load(0.5)])
    now = queried(device, gpp.MEM_CAPACITY, gpp.LOAD_CAPACITY, "memory_mib_allocated")
    assert now == {gpp.MEM_CAPACITY: 400, gpp.LOAD_CAPACITY: cores - 0.5, "memory_mib_allocated": 600}
    assert device._get_usageState() == CF.Device.ACTIVE
    assert not device.allocateCapacity([value("memory_mib", CORBA.TC_ulonglong, 401)])
    assert not device.allocateCapacity([value("cores", CORBA.TC_ulong, cores)])  # half a core is taken
    assert not device.allocateCapacity([mem(1), load(cores)])  # all or nothing: the memory is not taken
    assert queried(device, gpp.MEM_CAPACITY)[gpp.MEM_CAPACITY] == 400
    assert device.allocateCapacity([mem(400), load(cores - 0.5)])
    assert device._get_usageState() == CF.Device.BUSY
    assert queried(device, gpp.MEM_CAPACITY, gpp.LOAD_CAPACITY) == {gpp.MEM_CAPACITY: 0, gpp.LOAD_CAPACITY: 0.0}
    for bad in (
        load(-1.0),
        value(gpp.MEM_CAPACITY, CORBA.TC_double, 1.5),
        value(gpp.DEVICE_KIND, CORBA.TC_string, "GPP"),  # matched by the domain, not allocated
    ):
        with pytest.raises(CF.Device.InvalidCapacity):
            device.allocateCapacity([bad])
    with pytest.raises(CF.Device.InvalidCapacity):
        device.deallocateCapacity([mem(1001)])
    device.deallocateCapacity([mem(1000), load(cores)])
    assert device._get_usageState() == CF.Device.IDLE
    assert queried(device, gpp.MEM_CAPACITY, gpp.LOAD_CAPACITY) == {gpp.MEM_CAPACITY: 1000, gpp.LOAD_CAPACITY: cores}


def test_execute_honours_priority_as_the_nice_value_and_stack_size_as_the_stack_limit(start_node, tmp_path):
    script = sleeper(tmp_path)
    n = start_node("--allow", str(script))
    device = n.wait_registered().device
    device.load(None, "sleeper", CF.LoadableDevice.EXECUTABLE)
    own = os.getpriority(os.PRIO_PROCESS, 0)  # the node's, as it inherits this process's
    started = []

    def nice_of(priority, tc=CORBA.TC_ulong):
        pid = device.execute("sleeper", [value(CF.ExecutableDevice.PRIORITY_ID, tc, priority)], [])
        started.append(pid)
        return os.getpriority(os.PRIO_PROCESS, pid)

    options = [
        value(CF.ExecutableDevice.PRIORITY_ID, CORBA.TC_ulong, 7),
        value(CF.ExecutableDevice.STACK_SIZE_ID, CORBA.TC_ulong, 1 << 20),
    ]
    pid = device.execute("sleeper", options, [])
    started.append(pid)
    try:
        assert os.getpriority(os.PRIO_PROCESS, pid) == max(7, own)
        limits = open(f"/proc/{pid}/limits").read().splitlines()
        assert next(line for line in limits if line.startswith("Max stack size")).split()[3] == str(1 << 20)
        # REDHAWK's PRIORITY is any ulong: above 19, the highest nice value.
        assert nice_of(50) == 19
        # Never below the node's own, whoever the node's user is (root included), without --min-nice.
        assert nice_of(-20, CORBA.TC_long) == own
        assert "PRIORITY -20: nice" in n.stdout() and "PRIORITY 50: nice 19" in n.stdout()
    finally:
        for p in started:
            device.terminate(p)
    for bad in (
        value(CF.ExecutableDevice.PRIORITY_ID, CORBA.TC_string, "high"),
        value(CF.ExecutableDevice.STACK_SIZE_ID, CORBA.TC_long, -1),
    ):
        with pytest.raises(CF.ExecutableDevice.InvalidOptions) as refused:
            device.execute("sleeper", [bad], [])
        assert [p.id for p in refused.value.invalidOpts] == [bad.id]


def test_min_nice_out_of_range_is_refused_in_one_line(start_node):
    refused = start_node("--min-nice", "20")
    assert refused.proc.wait(WAIT_S) == 2
    [line] = refused.stderr().strip().splitlines()
    assert "--min-nice" in line and "-20<=x<=19" in line, line


@pytest.mark.skipif(os.geteuid() != 0, reason="a nice value below the node's own needs root (or RLIMIT_NICE)")
def test_min_nice_lets_priority_go_below_the_nodes_own(start_node, tmp_path):
    script = sleeper(tmp_path)
    device = start_node("--allow", str(script), "--min-nice", "-3").wait_registered().device
    device.load(None, "sleeper", CF.LoadableDevice.EXECUTABLE)
    started = []
    try:
        for priority, nice in ((-2, -2), (-20, -3)):
            started.append(
                device.execute("sleeper", [value(CF.ExecutableDevice.PRIORITY_ID, CORBA.TC_long, priority)], [])
            )
            assert os.getpriority(os.PRIO_PROCESS, started[-1]) == nice
    finally:
        for p in started:
            device.terminate(p)


# --- the DeviceManager, its profile and its file system ---------------------------------------


class PlainDevice(S.CF__POA.Device):
    """A device from outside, for registerDevice: it has no profile."""

    def _get_softwareProfile(self):
        return ""


def test_the_device_manager_serves_its_dcd_through_a_read_only_file_system(node, orb):
    manager, device = node.refs.device_manager, node.device
    fs = manager._get_fileSys()
    path = manager._get_deviceConfigurationProfile()
    assert path == f"/nodes/{node.name}/DeviceManager.dcd.xml" and fs.exists(path)
    dcd = etree.fromstring(read_file(fs, path))
    assert dcd.tag == "deviceconfiguration" and dcd.get("id") == manager._get_identifier()
    assert dcd.get("name") == manager._get_label() == node.name
    [placed] = dcd.findall("partitioning/componentplacement/componentinstantiation")
    assert placed.get("id") == device._get_identifier()
    spd_path = dcd.find("componentfiles/componentfile/localfile").get("name")
    spd = etree.fromstring(read_file(fs, spd_path))
    [implementation] = spd.findall("implementation")
    assert manager.getComponentImplementationId(placed.get("id")) == implementation.get("id")
    assert manager.getComponentImplementationId("nobody") == ""
    prf_path = os.path.dirname(spd_path) + "/" + spd.find("propertyfile/localfile").get("name")
    prf = etree.fromstring(read_file(fs, prf_path))
    declared = {e.get("id"): [k.get("kindtype") for k in e.findall("kind")] for e in prf}
    answered = {p.id for p in device.query([])}
    assert set(declared) == answered  # the PRF declares what query answers, no more, no less
    assert "allocation" in declared[gpp.MEM_CAPACITY] and "allocation" in declared[gpp.LOAD_CAPACITY]
    # GPP.prf.xml's kinds and actions: a domain checks an SPD's <os version> among the allocation properties.
    actions = {e.get("id"): e.find("action").get("type") for e in prf}
    assert declared[gpp.OS_VERSION] == declared[gpp.OS_NAME] == ["property", "configure", "allocation"]
    assert declared[gpp.LOAD_PER_CORE] == ["execparam", "allocation"] and actions[gpp.LOAD_PER_CORE] == "gt"
    assert declared[gpp.MEM_FREE] == ["configure", "event"] and actions[gpp.MEM_FREE] == "external"
    # GPP.prf.xml's modes; configure takes none, as REDHAWK's PropertySet takes no readonly property and
    # none of a kind other than configure or property, and says why for each.
    modes = {e.get("id"): e.get("mode") for e in prf}
    assert {i for i, m in modes.items() if m == "readwrite"} == {gpp.MEM_CAPACITY, gpp.LOAD_CAPACITY, gpp.LOAD_PER_CORE}
    assert set(modes.values()) == {"readwrite", "readonly"}
    asked = [
        mem(1),
        load(1.0),
        value(gpp.LOAD_PER_CORE, CORBA.TC_double, 2.0),
        value(gpp.OS_NAME, CORBA.TC_string, "x"),
    ]
    with pytest.raises(CF.PropertySet.InvalidConfiguration) as refused:
        device.configure([*asked, value("nope", CORBA.TC_long, 1)])
    says = refused.value.msg
    assert "memCapacity): of kind allocation, not configure: allocateCapacity" in says, says
    assert "loadCapacityPerCore): of kind execparam/allocation" in says and "os_name): read-only" in says, says
    assert "'nope': no such property" in says, says
    assert queried(device, gpp.MEM_CAPACITY, gpp.LOAD_PER_CORE)[gpp.LOAD_PER_CORE] == 1.0  # nothing changed
    # A domain matches a device by its PRF's values: the matching ones are there, as query answers them.
    matching = {e.get("id"): e.findtext("value") for e in prf if e.find("action").get("type") == "eq"}
    assert set(matching) == {gpp.DEVICE_KIND, gpp.OS_NAME, gpp.PROCESSOR_NAME, gpp.OS_VERSION}
    assert device._get_softwareProfile() == spd_path  # where a DomainManager reads it
    assert matching == {k: str(v) for k, v in queried(device, *matching).items()}
    assert fs.exists(dcd.find("devicemanagersoftpkg/localfile").get("name"))
    # Listing, and the file's answers.
    [entry] = fs.list(path)
    assert (entry.name, entry.kind, entry.size) == (
        "DeviceManager.dcd.xml",
        CF.FileSystem.PLAIN,
        len(read_file(fs, path)),
    )
    assert [e.name for e in fs.list("/nodes/")] == [node.name]
    assert {e.name for e in fs.list(os.path.dirname(spd_path) + "/*.xml")} == {
        "NodeDevice.spd.xml",
        "NodeDevice.prf.xml",
        "NodeDevice.scd.xml",
    }
    f = fs.open(path, True)
    assert f._get_fileName() == path and f.read(5) == b"<?xml" and f._get_filePointer() == 5
    with pytest.raises(CF.File.InvalidFilePointer):
        f.setFilePointer(f.sizeOf() + 1)
    with pytest.raises(CF.File.IOException) as not_writable:
        f.write(b"x")
    assert not_writable.value.errorNumber == CF.CF_EROFS
    f.close()
    with pytest.raises(CORBA.OBJECT_NOT_EXIST):
        f.sizeOf()  # a closed file is gone
    # Read-only, absolute names, nothing outside.
    for call in (lambda: fs.remove(path), lambda: fs.open(path, False), lambda: fs.mkdir("/x")):
        with pytest.raises(CF.FileException) as read_only:
            call()
        assert read_only.value.errorNumber == CF.CF_EROFS
    for bad in ("nodes", "/nodes/../../etc/passwd"):
        with pytest.raises(CF.InvalidFileName) as invalid:
            fs.exists(bad)
        assert invalid.value.errorNumber == CF.CF_EINVAL
    with pytest.raises(CF.FileException) as missing:
        fs.open("/nothing.xml", True)
    assert missing.value.errorNumber == CF.CF_ENOENT
    sizes = {p.id: p.value.value() for p in fs.query([])}
    assert sizes[CF.FileSystem.SIZE] > 0 and sizes[CF.FileSystem.AVAILABLE_SPACE] == 0
    # Devices and services from outside; REDHAWK's Resource parts.
    assert manager._get_domMgr() is None and manager._get_registeredServices() == []
    poa = orb.resolve_initial_references("RootPOA")
    other = PlainDevice()
    poa.activate_object(other)
    other_ref = poa.servant_to_reference(other)
    manager.registerDevice(other_ref)
    assert [d._is_equivalent(other_ref) for d in manager._get_registeredDevices()] == [False, True]
    with pytest.raises(CF.InvalidObjectReference):
        manager.unregisterDevice(device)  # its own goes with the node
    manager.unregisterDevice(other_ref)
    with pytest.raises(CF.InvalidObjectReference):
        manager.unregisterDevice(other_ref)
    manager.registerService(other_ref, "svc")
    assert [s.serviceName for s in manager._get_registeredServices()] == ["svc"]
    manager.unregisterService(other_ref, "svc")
    assert manager.getPortSet() == [] and manager.getNamedLoggers() == [node.name]
    poa.deactivate_object(poa.servant_to_id(other))


def test_a_file_left_open_is_closed_once_idle_so_opens_go_on(orb, tmp_path):
    """MAX_OPEN files never closed fill the file system's slots: once idle
    for its idle time they are closed by it, and open answers again."""
    (tmp_path / "f.xml").write_bytes(b"<x/>")
    poa = orb.resolve_initial_references("RootPOA")
    fs_servant = ProfileFileSystem(tmp_path, "t", idle_s=0.5)
    poa.activate_object(fs_servant)
    fs = poa.servant_to_reference(fs_servant)
    try:
        left = [fs.open("/f.xml", True) for _ in range(MAX_OPEN)]
        with pytest.raises(CF.FileException) as full:
            fs.open("/f.xml", True)
        assert full.value.errorNumber == CF.CF_EMFILE
        kept = left[0]
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:  # one file in use: not idle
            assert kept.read(1) == b"<"
            kept.setFilePointer(0)
            time.sleep(0.1)
        assert read_file(fs, "/f.xml") == b"<x/>"  # the idle ones were closed
        with pytest.raises(CORBA.OBJECT_NOT_EXIST):
            left[1].sizeOf()
        assert kept.sizeOf() == 4
        kept.close()
    finally:
        poa.deactivate_object(poa.servant_to_id(fs_servant))


# --- a DomainManager ---------------------------------------------------------------------------


def host_matches(spd, prf):
    """Whether an SPD's first implementation runs on a device of this PRF, as
    REDHAWK's DomainManager checks it: its <os> and <processor> against the
    PRF's allocation properties named os_name, os_version and processor_name
    (by name, among those of kind allocation only)."""
    allocation = {
        e.get("name"): e.findtext("value")
        for e in prf
        if "allocation" in [k.get("kindtype") for k in e.findall("kind")]
    }
    implementation = spd.find("implementation")
    os_, processor = implementation.find("os"), implementation.find("processor")
    return (
        allocation.get("os_name") == os_.get("name")
        and os_.get("version") in (None, allocation.get("os_version"))
        and allocation.get("processor_name") == processor.get("name")
    )


class RecordingDomainManager(S.CF__POA.DomainManager):
    """A DomainManager as far as a node calls it: it records each call and,
    as REDHAWK's does, reads the DCD of a DeviceManager that registers, and
    the SPD (at the device's softwareProfile) then the PRF of each device
    registered, in that DeviceManager's fileSys. `refuse`: registerDeviceManager
    raises RegisterError; `refuse_unregister`: unregisterDevice raises
    UnregisterError; `barrier`: registerDevice of a device from outside
    waits there (two registrations at once)."""

    def __init__(self, refuse=False, refuse_unregister=False, barrier=None):
        self.calls, self.dcds, self.refuse, self.refuse_unregister = [], [], refuse, refuse_unregister
        self.barrier = barrier
        self.devices = []  # (the device, its SPD, its PRF), as registerDevice gave them
        self.managers = []  # the DeviceManagers registered, as deviceManagers lists them
        self.registered = threading.Event()

    def _get_deviceManagers(self):
        return list(self.managers)

    def registerDeviceManager(self, deviceMgr):
        self.calls.append(("registerDeviceManager", deviceMgr))
        if self.refuse:
            raise CF.DomainManager.RegisterError(CF.CF_EBUSY, "this domain takes no more nodes")
        self.dcds.append(read_file(deviceMgr._get_fileSys(), deviceMgr._get_deviceConfigurationProfile()))
        self.managers.append(deviceMgr)

    def unregisterDeviceManager(self, deviceMgr):
        self.calls.append(("unregisterDeviceManager", deviceMgr))
        self.managers = [m for m in self.managers if not m._is_equivalent(deviceMgr)]

    def registerDevice(self, registeringDevice, registeredDeviceMgr):
        self.calls.append(("registerDevice", registeredDeviceMgr))
        spd_path = registeringDevice._get_softwareProfile()
        if not spd_path:  # a device from outside without a profile: only recorded
            if self.barrier is not None:
                self.barrier.wait(WAIT_S)
            return
        fs = registeredDeviceMgr._get_fileSys()
        spd = etree.fromstring(read_file(fs, spd_path))
        prf_path = os.path.dirname(spd_path) + "/" + spd.find("propertyfile/localfile").get("name")
        prf = etree.fromstring(read_file(fs, prf_path))
        self.devices.append((registeringDevice, spd, prf))
        self.registered.set()

    def unregisterDevice(self, unregisteringDevice):
        self.calls.append(("unregisterDevice", unregisteringDevice))
        if self.refuse_unregister:
            raise CF.DomainManager.UnregisterError(CF.CF_EBUSY, "that device runs components")

    def registerService(self, registeringService, registeredDeviceMgr, name):
        self.calls.append(("registerService", name))

    def unregisterService(self, unregisteringService, name):
        self.calls.append(("unregisterService", name))


@pytest.fixture
def domain_manager(orb, naming):
    """(make(refuse) -> (servant, its name in the Naming Service)); each one unbound and deactivated at the end."""
    poa = orb.resolve_initial_references("RootPOA")
    made = []

    def make(refuse=False, **options):
        servant = RecordingDomainManager(refuse, **options)
        poa.activate_object(servant)
        domain = f"DOM_{len(made)}_{os.getpid()}_{time.monotonic_ns()}"
        folder = naming.root.bind_new_context([CosNaming.NameComponent(domain, "")])
        folder.bind([CosNaming.NameComponent(domain, "")], poa.servant_to_reference(servant))
        made.append((servant, domain, folder))
        return servant, f"{domain}/{domain}"

    yield make
    for servant, domain, folder in made:
        folder.unbind([CosNaming.NameComponent(domain, "")])
        folder.destroy()
        naming.root.unbind([CosNaming.NameComponent(domain, "")])
        poa.deactivate_object(poa.servant_to_id(servant))


def test_a_domain_manager_is_registered_with_drives_the_node_and_is_left(
    start_node, domain_manager, context, tmp_path, orb
):
    _, ior = context
    script = sleeper(tmp_path)
    servant, name = domain_manager()
    n = start_node("--allow", str(script), "--domain-manager", name)
    n.wait_registered()
    assert servant.registered.wait(WAIT_S)
    manager = n.refs.device_manager
    # As REDHAWK's DeviceManager: registerDeviceManager, then registerDevice of its device.
    assert [c for c, _ in servant.calls] == ["registerDeviceManager", "registerDevice"]
    registered = servant.calls[0][1]
    assert registered._is_equivalent(manager) and servant.calls[1][1]._is_equivalent(manager)
    assert etree.fromstring(servant.dcds[0]).find("domainmanager/namingservice").get("name") == name
    assert manager._get_domMgr() is not None
    # The domain read the device's SPD and PRF from its softwareProfile, and the device runs the SPD's host.
    [(given, spd, prf)] = servant.devices
    assert given._is_equivalent(n.device)
    placed = etree.fromstring(servant.dcds[0]).find("partitioning/componentplacement/componentinstantiation")
    assert placed.get("id") == given._get_identifier()
    assert host_matches(spd, prf)
    # The domain drives the device it was given, as REDHAWK 2.2's ApplicationFactory does.
    device = given._narrow(CF.ExecutableDevice)
    assert device.allocateCapacity([mem(16), load(0.25)])
    device.load(manager._get_fileSys(), "sleeper", CF.LoadableDevice.EXECUTABLE)
    pid = device.executeLinked("sleeper", [value("PRIORITY", CORBA.TC_ulong, 2)], exec_params(ior, "w"), [])
    assert alive(pid) and os.getpriority(os.PRIO_PROCESS, pid) == 2
    device.terminate(pid)
    assert not alive(pid)
    device.deallocateCapacity([mem(16), load(0.25)])
    device.unload("sleeper")
    # A device or a service registered with the node from outside is registered with its DomainManager too.
    manager.registerDevice(device)  # its own: listed already, nothing to forward
    poa = orb.resolve_initial_references("RootPOA")
    other = PlainDevice()
    poa.activate_object(other)
    other_ref = poa.servant_to_reference(other)
    manager.registerDevice(other_ref)
    manager.unregisterDevice(other_ref)
    manager.registerService(other_ref, "svc")
    assert [s.serviceName for s in manager._get_registeredServices()] == ["svc"]
    manager.unregisterService(other_ref, "svc")
    poa.deactivate_object(poa.servant_to_id(other))
    manager.shutdown()
    assert n.proc.wait(WAIT_S) == 0
    assert [c for c, _ in servant.calls[2:]] == [
        "registerDevice",
        "unregisterDevice",
        "registerService",
        "unregisterService",
        "unregisterDevice",
        "unregisterDeviceManager",
    ]
    assert servant.calls[2][1]._is_equivalent(registered) and servant.calls[3][1]._is_equivalent(other_ref)
    assert servant.calls[4][1] == servant.calls[5][1] == "svc"
    assert servant.calls[6][1]._is_equivalent(given) and servant.calls[7][1]._is_equivalent(registered)
    assert "registered with the DomainManager" in n.stdout() and "unregistered from" in n.stdout()


def test_the_device_manager_lists_what_its_domain_manager_lists(start_node, domain_manager, orb):
    """A refused unregisterDevice leaves the device listed; two registerDevice
    of one device at once list it once."""
    servant, name = domain_manager(refuse_unregister=True, barrier=threading.Barrier(2))
    n = start_node("--domain-manager", name)
    n.wait_registered()
    assert servant.registered.wait(WAIT_S)
    manager = n.refs.device_manager
    poa = orb.resolve_initial_references("RootPOA")
    other = PlainDevice()
    poa.activate_object(other)
    other_ref = poa.servant_to_reference(other)
    try:
        both = [threading.Thread(target=manager.registerDevice, args=(other_ref,)) for _ in range(2)]
        for t in both:
            t.start()
        for t in both:
            t.join(WAIT_S)
        assert [d._is_equivalent(other_ref) for d in manager._get_registeredDevices()] == [False, True]
        with pytest.raises(CF.InvalidObjectReference) as refused:
            manager.unregisterDevice(other_ref)
        assert "runs components" in refused.value.msg
        assert [d._is_equivalent(other_ref) for d in manager._get_registeredDevices()] == [False, True]
    finally:
        poa.deactivate_object(poa.servant_to_id(other))
        manager.shutdown()
    assert n.proc.wait(WAIT_S) == 0


def test_a_domain_manager_that_refuses_or_is_not_there_ends_the_node_in_one_line(start_node, domain_manager):
    servant, name = domain_manager(refuse=True)
    refused = start_node("--domain-manager", name)
    assert refused.proc.wait(WAIT_S) == 1
    [line] = refused.stderr().strip().splitlines()
    assert "refused this node" in line and "no more nodes" in line
    for given, says in (
        (("--domain-manager", "NO_SUCH/DOMAIN"), "nothing is bound"),
        (("--domain-manager", "a//b"), "--domain-manager"),
        (("--domain-manager", " "), "--domain-manager"),
        (("--domain-manager-check-s", "1"), "--domain-manager-check-s: there is no DomainManager"),
    ):
        missing = start_node(*given)
        assert missing.proc.wait(WAIT_S) == 2
        [line] = missing.stderr().strip().splitlines()
        assert says in line, line


def test_a_node_registers_again_with_a_domain_manager_that_restarted(start_node, domain_manager, naming, orb):
    """A DomainManager that forgets its nodes (restarted without its data)
    is registered with again at the next check; one that restarted as a new
    object bound to the same name is found there and registered with."""
    first, name = domain_manager()
    n = start_node("--domain-manager", name, "--domain-manager-check-s", "0.2")
    n.wait_registered()
    assert first.registered.wait(WAIT_S)
    manager = n.refs.device_manager
    # Restarted without its data: it lists no node.
    first.registered.clear()
    first.managers = []
    assert first.registered.wait(WAIT_S)
    assert [c for c, _ in first.calls] == ["registerDeviceManager", "registerDevice"] * 2
    wait_until(lambda: "registered again with the DomainManager" in n.stdout(), "the node never said so")
    assert "does not list this node" in n.stdout()
    # Restarted as another object: the old reference answers OBJECT_NOT_EXIST, the name the new one.
    poa = orb.resolve_initial_references("RootPOA")
    second = RecordingDomainManager()
    poa.activate_object(second)
    folder, leaf = name.split("/")
    context = naming.root.resolve([CosNaming.NameComponent(folder, "")])._narrow(CosNaming.NamingContext)
    try:
        poa.deactivate_object(poa.servant_to_id(first))
        context.rebind([CosNaming.NameComponent(leaf, "")], poa.servant_to_reference(second))
        assert second.registered.wait(WAIT_S)
        assert [c for c, _ in second.calls] == ["registerDeviceManager", "registerDevice"]
        assert second.calls[0][1]._is_equivalent(manager) and second.dcds  # it read the node's DCD
        wait_until(lambda: "does not answer at its reference" in n.stdout(), "the node never said so")
        assert manager._get_domMgr()._is_equivalent(poa.servant_to_reference(second))
        manager.shutdown()
        assert n.proc.wait(WAIT_S) == 0
        assert [c for c, _ in second.calls[2:]] == ["unregisterDevice", "unregisterDeviceManager"]  # left the new one
    finally:
        poa.deactivate_object(poa.servant_to_id(second))

"""REDHAWK's GPP (its general-purpose processor device) by its property ids,
in one place: what an SPD's dependencies match (model/sad/load.py) and what a
scabench node answers as a GPP (node/device.py). The ids and types are those
of REDHAWK's GPP.prf.xml (the published GPP); a domain matches devices and
allocates from them by these ids, so they are facts of the wire.

Matching properties (action "eq" or "gt": the domain compares the value a device
answers to `query` with what a component depends on):
  DEVICE_KIND     device_kind      string  "GPP"
  OS_NAME         os_name          string  "Linux"
  PROCESSOR_NAME  processor_name   string  "x86_64"
  OS_VERSION      os_version       string  the kernel's release
  LOAD_PER_CORE   loadCapacityPerCore double 1.0, action "gt" (scabench does not rate machines)
Allocation properties (action "external": the domain sends them to
allocateCapacity, and the device keeps the account):
  MEM_CAPACITY    memCapacity      longlong  MiB not allocated
  LOAD_CAPACITY   loadCapacity     double    load (in cores) not allocated
Measured and derived (query only):
  MEM_FREE        memFree          longlong  MiB available now (the kernel's MemAvailable)
  LOAD_TOTAL      loadTotal        double    processor_cores x loadCapacityPerCore
  PROCESSOR_CORES processor_cores  short
  NIC_INTERFACES  available_nic_interfaces  string sequence
  CACHE_DIRECTORY cacheDirectory   string    where loaded files are copied"""

import platform

DEVICE_KIND = "DCE:cdc5ee18-7ceb-4ae6-bf4c-31f983179b4d"
OS_NAME = "DCE:4a23ad60-0b25-4121-a630-68803a498f75"
PROCESSOR_NAME = "DCE:fefb9c66-d14a-438d-ad59-2cfd1adb272b"
OS_VERSION = "DCE:0f3a9a37-a342-43d8-9b7f-78dc6da74192"
MEM_CAPACITY = "DCE:8dcef419-b440-4bcf-b893-cab79b6024fb"
MEM_FREE = "DCE:6565bffd-cb09-4927-9385-2ecac68035c7"
LOAD_CAPACITY = "DCE:72c1c4a9-2bcf-49c5-bafd-ae2c1d567056"
LOAD_TOTAL = "DCE:28b23bc8-e4c0-421b-9c52-415a24715209"
LOAD_PER_CORE = "DCE:3bf07b37-0c00-4e2a-8275-52bd4e391f07"
PROCESSOR_CORES = "processor_cores"
CACHE_DIRECTORY = "cacheDirectory"
NIC_INTERFACES = "available_nic_interfaces"

# The GPP.prf.xml's kinds of its matching properties: device_kind's, and
# those of the host's names (os_name, os_version, processor_name), which a
# domain checks an SPD's <os> and <processor> against.
MATCHING_KINDS = ("configure", "allocation")
HOST_KINDS = ("property", "configure", "allocation")
# The actions by which a domain compares an allocation property's PRF value
# with a dependency's (the device is not asked): "external" ones are sent to
# allocateCapacity.
MATCHING_ACTIONS = ("eq", "gt")

# The GPP.prf.xml's modes: of what a node answers, these three are
# "readwrite" there, every other "readonly". REDHAWK's PropertySet configures
# only a property that is not readonly and of kind "configure" or "property"
# (CONFIGURABLE_KINDS): these three are allocation (and execparam) kinds, so
# configure refuses them there too. The two capacities change by
# allocateCapacity and deallocateCapacity; loadCapacityPerCore is an
# execparam, what a device is started with.
READWRITE = frozenset({MEM_CAPACITY, LOAD_CAPACITY, LOAD_PER_CORE})
CONFIGURABLE_KINDS = ("configure", "property")

GPP_KIND = "GPP"
# What a host is called in an SPD's <os> and <processor> and in the GPP's
# os_name and processor_name (REDHAWK's names: os "Linux", processor
# "x86_64"; x86_64 also goes by amd64).
PROCESSOR_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}


def host_platform() -> tuple[str, str]:
    """This host's os and processor as an SPD and the GPP name them."""
    machine = platform.machine().lower()
    return platform.system(), PROCESSOR_ALIASES.get(machine, machine)


def processor_name(name: str) -> str:
    """A processor's name as the GPP gives it ("amd64" -> "x86_64")."""
    return PROCESSOR_ALIASES.get(name.lower(), name.lower())

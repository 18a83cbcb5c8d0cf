"""The node's CORBA servants: its ExecutableDevice (scabench::node::NodeDevice)
and its DeviceManager (docs/architecture.md, "Nodes").

The device, as SCA's ExecutableDevice, in the order a launcher uses it:
  query              its properties (NODE_PROPERTIES): the node's own, and REDHAWK's
                     GPP's by their ids (model/gpp.py), so that a domain
                     matches it as a GPP (device_kind, os_name, processor_name)
  allocateCapacity   two pools: the CPUs, as CAPACITY_CORES (whole CPUs of the
                     node's list) or the GPP's loadCapacity (cores' worth of
                     load, a real number), and the memory, as CAPACITY_MEMORY
                     or the GPP's memCapacity (MiB, integers); all or nothing:
                     false, and nothing allocated, when one is short; an
                     unknown id or a value that is not a number >= 0 of its
                     kind: InvalidCapacity.
  load               fileName: one of the node's programs (its file name, or
                     its path), loadKind EXECUTABLE, whatever file system is
                     given; any other name, with a file system and
                     --accept-loaded: a file or folder copied from it into
                     the node's cache (node/loaded.py), EXECUTABLE or
                     SHARED_LIBRARY; without the option, InvalidFileName
                     (CF_EACCES) naming it. Counted per name.
  execute            the loaded program, or a loaded file (by the name it was
                     loaded by, or its path within a loaded folder), each
                     parameter as two arguments (id, value), then -ORBendPoint with the node's address (and
                     its component port range); a parameter id that starts
                     with '-' must be one of ORB_OPTIONS, and one naming a
                     place on the node (NODE_PARAMETERS) is refused
                     (InvalidParameters); options STACK_SIZE (bytes: the
                     stack limit, RLIMIT_STACK), AFFINITY (a CPU list within
                     the node's; the node's CPUs otherwise), SCHEDULER
                     ("normal" or "batch") and PRIORITY (its nice value, any
                     integer: below the node's floor, its own nice or
                     --min-nice, it gets the floor; above 19, 19). It runs
                     in a directory of its own (node/processes.py). Answers
                     the pid.
  executeLinked      execute once each file the program depends on is
                     loaded; one that is not: InvalidFileName (CF_ENOENT).
  terminate          SIGTERM to the process's group, SIGKILL after
                     TERMINATE_GRACE_S; returns once it is gone.
  processes          every process started, with its CPU and switches.
  watch              given processes' records, with parts of the files in
                     their directories (a launcher's poll, and its fetch
                     of the packet records).
  monotonicNs        the node's CLOCK_MONOTONIC, for a launcher to relate
                     the node's times to its own.
execute, executeLinked, load and allocateCapacity need the device UNLOCKED and ENABLED
(InvalidState otherwise): a node that has lost its domain is DISABLED.
Everything else answers in every state, so that a launcher can always tear
down. releaseObject ends the node, as DeviceManager.shutdown does.
Every CF exception carries the CF error number chosen for what happened
(components/cf_errors.py). As a REDHAWK 2.x Resource the device serves from
the moment the node is up: start and stop only set `started`;
softwareProfile is its SPD's path in the DeviceManager's fileSys
(node/profile.py's DEVICE_SPD), which a DomainManager reads as REDHAWK's
reads a registering device's; initializeProperties takes no
property (the node's are set on its command line), getPortSet is empty, and
Logging answers as a component's (components/resource.py)."""

import errno
import math
import os
import platform
import resource
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from omniORB import CORBA

from scabench.components import idl
from scabench.components.cf_errors import cf_error, cf_error_of
from scabench.components.ports import describe
from scabench.components.resource import ResourceAnswers
from scabench.model import gpp
from scabench.model.spec import SCHEDULERS
from scabench.node.processes import ProcessTable, exit_text
from scabench.node.profile import DEVICE_SPD, IMPLEMENTATION_ID
from scabench.node.settings import NodeSettings, machine_memory_mib
from scabench.run.nodes import CAPACITY_CORES, CAPACITY_MEMORY
from scabench.run.processes import ProgramNotStarted

S = idl.load()
CF = S.CF
Device_ = CF.Device
Executable = CF.ExecutableDevice

TERMINATE_GRACE_S = 5.0
NICE_MAX = 19  # the highest nice value setpriority(2) takes: PRIORITY above it is clamped there
LOAD_SLACK = 1e-9  # loadCapacity is a real number: sums of allocations may round
AFFINITY_ID = "AFFINITY"  # scabench's own execute options: the CPUs of the process,
SCHEDULER_ID = "SCHEDULER"  # and its scheduling class (model.spec.SCHEDULERS: a spec's [run] scheduler)
# The -ORB options a caller may give: the ORB's limits, threading and
# timeouts, what a launcher gives its hosts. The others are the node's
# (-ORBendPoint: where its components listen) or reach outside the process
# (files, endpoints, initial references). Any other parameter id that starts
# with '-' is a program's own option, not an execute parameter, and is
# refused: scabench-host's --library would load any library on the node.
ORB_OPTIONS = frozenset(
    f"-ORB{o}"
    for o in (
        "giopMaxMsgSize",
        "maxServerThreadPerConnection",
        "maxServerThreadPoolSize",
        "threadPerConnectionPolicy",
        "threadPerConnectionUpperLimit",
        "threadPerConnectionLowerLimit",
        "verifyObjectExistsAndType",
        "clientCallTimeOutPeriod",
        "clientConnectTimeOutPeriod",
        "serverCallTimeOutPeriod",
        "oneCallPerConnection",
        "connectionWatchPeriod",
    )
)
# Parameters that name a place on the node's file system: where files go is
# the node's to say (scabench-host's RECORD_DIR would truncate <dir>/<name>.rec
# anywhere the node's user can write, EVENTS_FILE append to any file).
NODE_PARAMETERS = frozenset({"RECORD_DIR", "EVENTS_FILE"})


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _real(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0


def _nic_names():
    try:
        return sorted(n for n in os.listdir("/sys/class/net") if n != "lo")
    except OSError:
        return []


# A PRF type -> the CORBA type its value goes by (the types REDHAWK's GPP
# gives these properties).
_TYPE_CODES = {
    "string": CORBA.TC_string,
    "short": CORBA.TC_short,
    "ulong": CORBA.TC_ulong,
    "longlong": CORBA.TC_longlong,
    "ulonglong": CORBA.TC_ulonglong,
    "double": CORBA.TC_double,
}


@dataclass(frozen=True)
class NodeProperty:
    """One property of the node's device: what query answers (`value` of the
    device), and its entry in the PRF the node writes of itself. `kinds` and
    `action` are the PRF's: "allocation" ones with action "external" are
    what allocateCapacity takes, those with "eq" or "gt" (MATCHING_ACTIONS)
    what a domain compares with the PRF's value."""

    id: str
    name: str
    type: str
    value: Callable[["NodeDevice"], Any]
    description: str
    kinds: tuple[str, ...] = ("property",)
    action: str = "external"
    sequence: bool = False

    @property
    def mode(self) -> str:
        """The PRF's mode: the GPP.prf.xml's for the GPP's ids (model/gpp.py,
        READWRITE), readonly for the node's own (its command line sets them)."""
        return "readwrite" if self.id in gpp.READWRITE else "readonly"

    def any(self, device: "NodeDevice") -> Any:
        code = CF._tc_StringSequence if self.sequence else _TYPE_CODES[self.type]
        return CORBA.Any(code, self.value(device))


NODE_PROPERTIES = (
    # The node's own.
    NodeProperty("cores", "cores", "string", lambda d: ",".join(map(str, d.settings.cores)), "the CPUs it offers"),
    NodeProperty("cores_allocated", "cores_allocated", "ulong", lambda d: d.allocated()[0], "whole CPUs allocated"),
    NodeProperty(CAPACITY_MEMORY, CAPACITY_MEMORY, "ulonglong", lambda d: d.settings.memory_mib, "MiB it offers"),
    NodeProperty(
        "memory_mib_allocated", "memory_mib_allocated", "ulonglong", lambda d: d.allocated()[2], "MiB allocated"
    ),
    NodeProperty("processes_running", "processes_running", "ulong", lambda d: d.table.running(), "its processes"),
    NodeProperty(
        "programs", "programs", "string", lambda d: sorted(d.settings.programs), "what it runs", sequence=True
    ),
    NodeProperty(
        "component_endpoint",
        "component_endpoint",
        "string",
        lambda d: d.settings.component_endpoint,
        "where its components listen",
    ),
    NodeProperty(
        "published_host", "published_host", "string", lambda d: d.settings.published_host, "its references' address"
    ),
    # REDHAWK's GPP's, by their ids (model/gpp.py), with the GPP.prf.xml's kinds
    # and actions: a domain reads them from the PRF (an SPD's <os> is checked
    # against the allocation properties named os_name and os_version).
    NodeProperty(
        gpp.DEVICE_KIND, "device_kind", "string", lambda d: gpp.GPP_KIND, "the device kind", gpp.MATCHING_KINDS, "eq"
    ),
    NodeProperty(
        gpp.PROCESSOR_NAME,
        "processor_name",
        "string",
        lambda d: gpp.host_platform()[1],
        "the CPU type",
        gpp.HOST_KINDS,
        "eq",
    ),
    NodeProperty(gpp.OS_NAME, "os_name", "string", lambda d: gpp.host_platform()[0], "the OS", gpp.HOST_KINDS, "eq"),
    NodeProperty(
        gpp.OS_VERSION, "os_version", "string", lambda d: platform.release(), "the OS's version", gpp.HOST_KINDS, "eq"
    ),
    NodeProperty(
        gpp.MEM_CAPACITY,
        "memCapacity",
        "longlong",
        lambda d: d.settings.memory_mib - d.allocated()[2],
        "MiB of what it offers not allocated",
        ("allocation",),
    ),
    NodeProperty(
        gpp.MEM_FREE,
        "memFree",
        "longlong",
        lambda d: machine_memory_mib()[1],
        "MiB available on the machine now",
        ("configure", "event"),
    ),
    NodeProperty(
        gpp.LOAD_CAPACITY,
        "loadCapacity",
        "double",
        lambda d: max(0.0, len(d.settings.cores) - d.allocated()[0] - d.allocated()[1]),
        "load (in cores) not allocated",
        ("allocation", "event"),
    ),
    NodeProperty(
        gpp.LOAD_TOTAL,
        "loadTotal",
        "double",
        lambda d: float(len(d.settings.cores)),
        "processor_cores x 1.0",
        ("configure",),
    ),
    NodeProperty(
        gpp.LOAD_PER_CORE,
        "loadCapacityPerCore",
        "double",
        lambda d: 1.0,
        "one core's load",
        ("execparam", "allocation"),
        "gt",
    ),
    NodeProperty(
        gpp.PROCESSOR_CORES, "processor_cores", "short", lambda d: len(d.settings.cores), "its CPUs", ("configure",)
    ),
    NodeProperty(
        gpp.NIC_INTERFACES,
        "available_nic_interfaces",
        "string",
        lambda d: _nic_names(),
        "",
        ("configure",),
        sequence=True,
    ),
    NodeProperty(
        gpp.CACHE_DIRECTORY,
        "cacheDirectory",
        "string",
        lambda d: str(d.agent.loaded.root),
        "where load copies files from a caller's file system (--accept-loaded)",
    ),
)
PROPERTIES = {p.id: p for p in NODE_PROPERTIES}
# What allocateCapacity takes, by pool: the CPUs (whole ones, or load in
# cores) and the memory (MiB); each id's check of its value.
CPU_CAPACITIES = {CAPACITY_CORES: _whole, gpp.LOAD_CAPACITY: _real}
MEMORY_CAPACITIES = {CAPACITY_MEMORY: _whole, gpp.MEM_CAPACITY: _whole}


def _argument(value):
    """A parameter's value as one argument, or None if it cannot be one."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str) and "\0" not in value:
        return value
    return None


def _cpu_list(value, offered):
    """AFFINITY: "0,1" or a sequence of CPU numbers, within the node's CPUs."""
    try:
        cpus = [int(v) for v in (value.split(",") if isinstance(value, str) else value)]
    except (TypeError, ValueError):
        return None
    return sorted(set(cpus)) if cpus and set(cpus) <= set(offered) else None


class NodeDevice(ResourceAnswers, S.node__POA.NodeDevice):  # type: ignore[name-defined]  # omniORBpy's skeleton
    settings: NodeSettings
    table: ProcessTable
    agent: Any  # node/agent.py's Agent (not imported: it imports this module)

    def __init__(self, agent):
        self.agent = agent
        self.settings = agent.settings
        self.table = agent.table
        self.id = f"DCE:{uuid.uuid4()}"  # also its instantiation id in the DCD: an XML ID
        self._lock = threading.Lock()
        self._admin = Device_.UNLOCKED
        self._cores_used = 0  # whole CPUs (CAPACITY_CORES)
        self._load_used = 0.0  # cores' worth of load (loadCapacity): the same CPUs as _cores_used
        self._memory_used = 0  # MiB (CAPACITY_MEMORY and memCapacity alike)
        self._loaded = {}  # program name -> load count
        self._started = False
        self._properties_initialized = False
        self.logger_name = self.settings.name  # its one logger (ResourceAnswers)

    # --- Resource ----------------------------------------------------------------

    def _get_identifier(self):
        return self.id

    def _get_started(self):
        return self._started

    def initialize(self):
        pass

    def initializeProperties(self, initialProperties):
        if self._properties_initialized:
            raise CF.PropertyEmitter.AlreadyInitialized()
        self.configure(initialProperties)
        self._properties_initialized = True

    def start(self):
        self._started = True

    def stop(self):
        self._started = False

    def releaseObject(self):
        self.agent.shutdown("releaseObject() on its device")

    def runTest(self, testid, testValues):
        raise CF.TestableObject.UnknownTest()

    def getPort(self, name):
        raise CF.PortSupplier.UnknownPort()

    def getPortSet(self):
        return []

    def configure(self, configProperties):
        """Refuses every property, each for its reason, as REDHAWK's
        PropertySet refuses one that is readonly or not of a configurable
        kind (model/gpp.py, READWRITE): nothing is changed."""
        if not configProperties:
            return
        reasons = []
        for p in configProperties:
            known = PROPERTIES.get(p.id)
            if known is None:
                reasons.append(f"{p.id!r}: no such property")
            elif known.mode == "readonly":
                reasons.append(f"{p.id!r} ({known.name}): read-only, set on the node's command line or measured")
            elif not set(known.kinds) & set(gpp.CONFIGURABLE_KINDS):
                how = (
                    "a device is started with it (a node rates its cores 1.0)"
                    if "execparam" in known.kinds
                    else "allocateCapacity and deallocateCapacity change it"
                )
                reasons.append(f"{p.id!r} ({known.name}): of kind {'/'.join(known.kinds)}, not configure: {how}")
        raise CF.PropertySet.InvalidConfiguration(
            f"node {self.settings.name} configures none of these: " + "; ".join(reasons), configProperties
        )

    def allocated(self):
        """(whole CPUs, load in cores, MiB) allocated now."""
        with self._lock:
            return self._cores_used, self._load_used, self._memory_used

    def query(self, configProperties):
        if not configProperties:
            return [CF.DataType(p.id, p.any(self)) for p in NODE_PROPERTIES]
        unknown = [p for p in configProperties if p.id not in PROPERTIES]
        if unknown:
            raise CF.UnknownProperties(unknown)
        return [CF.DataType(p.id, PROPERTIES[p.id].any(self)) for p in configProperties]

    # --- Device ------------------------------------------------------------------

    def _get_usageState(self):
        cores, load, memory = self.allocated()
        if cores == 0 and load <= LOAD_SLACK and memory == 0:
            return Device_.IDLE
        full = cores + load >= len(self.settings.cores) - LOAD_SLACK or memory >= self.settings.memory_mib
        return Device_.BUSY if full else Device_.ACTIVE

    def _get_adminState(self):
        return self._admin

    def _set_adminState(self, state):
        if self._admin == Device_.SHUTTING_DOWN:
            return  # on its way out: nothing brings it back
        self._admin = state

    def shutting_down(self):
        self._admin = Device_.SHUTTING_DOWN

    def _get_operationalState(self):
        return Device_.ENABLED if self.agent.domain_reachable else Device_.DISABLED

    def _get_softwareProfile(self):
        return DEVICE_SPD

    def _get_label(self):
        return self.settings.name

    def _get_compositeDevice(self):
        return None

    def _usable(self, what):
        name = self.settings.name
        if self._admin != Device_.UNLOCKED:
            raise Device_.InvalidState(f"{what}: node {name} is {self._admin}")
        if not self.agent.domain_reachable:
            raise Device_.InvalidState(f"{what}: node {name} is DISABLED: its domain's Naming Service does not answer")

    def _capacities(self, capacities):
        """(whole CPUs, load in cores, MiB) asked; InvalidCapacity names what is not a capacity of the node."""
        cores, load, memory, bad = 0, 0.0, 0, []
        for p in capacities:
            value = p.value.value()
            check = CPU_CAPACITIES.get(p.id) or MEMORY_CAPACITIES.get(p.id)
            if check is None or not check(value):
                bad.append(p)
            elif p.id == CAPACITY_CORES:
                cores += value
            elif p.id == gpp.LOAD_CAPACITY:
                load += float(value)
            else:
                memory += value
        if bad:
            raise Device_.InvalidCapacity(
                f"node {self.settings.name} takes {CAPACITY_CORES} and {CAPACITY_MEMORY} (whole numbers >= 0), "
                f"and the GPP's memCapacity ({gpp.MEM_CAPACITY}, whole MiB >= 0) and loadCapacity "
                f"({gpp.LOAD_CAPACITY}, cores' worth of load >= 0): not " + ", ".join(repr(p.id) for p in bad),
                bad,
            )
        return cores, load, memory

    def allocateCapacity(self, capacities):
        self._usable("allocateCapacity")
        cores, load, memory = self._capacities(capacities)
        offered = len(self.settings.cores)
        with self._lock:
            cpus_left = offered - self._cores_used - self._load_used
            if cores + load > cpus_left + LOAD_SLACK or self._memory_used + memory > self.settings.memory_mib:
                self.agent.log(
                    f"refused {cores} cores, {load:g} load and {memory} MiB: {self._cores_used} cores and "
                    f"{self._load_used:g} load of {offered} cores, and {self._memory_used} of "
                    f"{self.settings.memory_mib} MiB are allocated"
                )
                return False
            self._cores_used += cores
            self._load_used += load
            self._memory_used += memory
        return True

    def deallocateCapacity(self, capacities):
        cores, load, memory = self._capacities(capacities)
        with self._lock:
            if cores > self._cores_used or load > self._load_used + LOAD_SLACK or memory > self._memory_used:
                raise Device_.InvalidCapacity(
                    f"cannot give back {cores} cores, {load:g} load and {memory} MiB: {self._cores_used} cores, "
                    f"{self._load_used:g} load and {self._memory_used} MiB are allocated",
                    capacities,
                )
            self._cores_used -= cores
            self._load_used = max(0.0, self._load_used - load)
            self._memory_used -= memory

    # --- LoadableDevice ------------------------------------------------------------

    def _installed(self, fileName):
        """The node's name for an installed program given by file name or path; None if it has none."""
        programs = self.settings.programs
        if fileName in programs:
            return fileName
        return next((name for name, path in programs.items() if fileName == str(path)), None)

    def _refused(self, fileName):
        loaded = (
            "or a file loaded from a caller's file system"
            if self.settings.accept_loaded
            else "and takes no file from a caller's file system (scabench node --accept-loaded)"
        )
        return CF.InvalidFileName(
            cf_error(errno.EACCES),
            f"{fileName!r} is not a program node {self.settings.name} runs; it runs "
            f"{', '.join(sorted(self.settings.programs)) or 'none'} (scabench node --allow), {loaded}",
        )

    def load(self, fs, fileName, loadKind):
        self._usable("load")
        name = self._installed(fileName)
        if name is None:
            if fs is None or not self.settings.accept_loaded:
                raise self._refused(fileName)
            if loadKind not in (CF.LoadableDevice.EXECUTABLE, CF.LoadableDevice.SHARED_LIBRARY):
                raise CF.LoadableDevice.InvalidLoadKind()
            self.agent.loaded.load(fs, fileName, loadKind)
            return
        if loadKind != CF.LoadableDevice.EXECUTABLE:
            raise CF.LoadableDevice.InvalidLoadKind()
        path = self.settings.programs[name]
        if not os.access(path, os.X_OK):
            raise CF.LoadableDevice.LoadFail(
                cf_error(errno.EACCES if os.path.exists(path) else errno.ENOENT),
                f"{path} is gone or not executable on node {self.settings.name}",
            )
        with self._lock:
            self._loaded[name] = self._loaded.get(name, 0) + 1

    def unload(self, fileName):
        name = self._installed(fileName)
        if name is None:
            if self.agent.loaded.unload(fileName):
                return
            raise CF.InvalidFileName(cf_error(errno.ENOENT), f"{fileName!r} is not loaded on node {self.settings.name}")
        with self._lock:
            if not self._loaded.get(name):
                raise CF.InvalidFileName(
                    cf_error(errno.ENOENT), f"{fileName!r} is not loaded on node {self.settings.name}"
                )
            self._loaded[name] -= 1

    def _loaded_program(self, name):
        """(argv[0], the program's name in the process records) of what execute
        may start as `name`: an installed program loaded, or a file loaded
        from a caller's file system (by its name, or within a loaded folder)."""
        program = self._installed(name)
        if program is not None:
            with self._lock:
                if self._loaded.get(program, 0) > 0:
                    return str(self.settings.programs[program]), program
        else:
            path = self.agent.loaded.program(name)
            if path is not None:
                return str(path), path.name
            if not self.settings.accept_loaded:
                raise self._refused(name)
        raise CF.InvalidFileName(
            cf_error(errno.ENOENT), f"{name!r} is not loaded on node {self.settings.name}: load it first"
        )

    # --- ExecutableDevice ------------------------------------------------------------

    def _options(self, options):
        """(cpus, stack bytes, batch, nice) from execute's options; InvalidOptions names what is wrong."""
        cpus, stack, batch, nice, bad = list(self.settings.cores), None, False, None, []
        hard_stack = resource.getrlimit(resource.RLIMIT_STACK)[1]
        for p in options:
            value = p.value.value()
            if (
                p.id == Executable.STACK_SIZE_ID
                and _whole(value)
                and value > 0
                and (hard_stack == resource.RLIM_INFINITY or value <= hard_stack)
            ):
                stack = value
            elif p.id == AFFINITY_ID and _cpu_list(value, self.settings.cores) is not None:
                cpus = _cpu_list(value, self.settings.cores)
            elif p.id == SCHEDULER_ID and value in SCHEDULERS:
                batch = value == "batch"
            elif p.id == Executable.PRIORITY_ID and isinstance(value, int) and not isinstance(value, bool):
                nice = self._nice(value)
            else:
                bad.append(p)
        if bad:
            raise Executable.InvalidOptions(bad)
        return cpus, stack, batch, nice

    def _nice(self, priority):
        """PRIORITY (REDHAWK sends a ulong, scabench's launcher may send a
        long) as a nice value: within [the node's floor, NICE_MAX], so that
        no caller gives a process more CPU than the operator allowed
        (--min-nice; the node's own nice otherwise). A value moved into the
        range is logged."""
        floor = self.settings.nice_floor
        nice = min(max(priority, floor), NICE_MAX)
        if nice != priority:
            limit = "the lowest this node gives (--min-nice)" if nice == floor else "the highest nice value"
            self.agent.log(f"PRIORITY {priority}: nice {nice}, {limit}")
        return nice

    def _arguments(self, parameters):
        args, bad, identifier = [], [], ""
        for p in parameters:
            value = _argument(p.value.value())
            if (
                not p.id
                or "\0" in p.id
                or value is None
                or p.id in NODE_PARAMETERS
                or (p.id.startswith("-") and p.id not in ORB_OPTIONS)
            ):
                bad.append(p)
                continue
            args += [p.id, value]
            if p.id == "COMPONENT_IDENTIFIER":
                identifier = value
        if bad:
            raise Executable.InvalidParameters(bad)
        return args, identifier

    def execute(self, name, options, parameters):
        self._usable("execute")
        path, program = self._loaded_program(name)
        cpus, stack, batch, nice = self._options(options)
        args, identifier = self._arguments(parameters)
        argv = [path] + args + self.settings.component_orb_options
        try:
            pid = self.table.start(argv, program, identifier, cpus, stack, batch, nice)
        except ProgramNotStarted as exc:
            cause = exc.cause
            reason = (cause.strerror if isinstance(cause, OSError) else None) or cause
            raise Executable.ExecuteFail(cf_error_of(cause), f"{program}: {reason}") from None
        except OSError as exc:  # its directory or output files on the node
            raise Executable.ExecuteFail(cf_error_of(exc), f"{program}: {exc.strerror or exc}") from None
        except Exception as exc:  # the child's set-up failed (subprocess.SubprocessError)
            raise Executable.ExecuteFail(cf_error_of(exc), f"{program}: {exc}") from None
        self.agent.log(f"executed {program} as pid {pid}" + (f" ({identifier})" if identifier else ""))
        return pid

    def executeLinked(self, name, options, parameters, deps):
        self._usable("executeLinked")  # a LOCKED or DISABLED node says so before what it lacks
        missing = next((d for d in deps if not self.agent.loaded.covers(d)), None)
        if missing is not None:
            raise CF.InvalidFileName(
                cf_error(errno.ENOENT),
                f"{missing!r} is not loaded on node {self.settings.name}: a dependency is loaded from the "
                "caller's file system first (scabench node --accept-loaded); installed programs come with "
                "what they link",
            )
        return self.execute(name, options, parameters)

    def terminate(self, processId):
        started = self.table.get(processId)
        if started is None:
            raise Executable.InvalidProcess(
                cf_error(errno.ESRCH), f"node {self.settings.name} started no process {processId}"
            )
        if not started.running:
            raise Executable.InvalidProcess(
                cf_error(errno.ESRCH),
                f"process {processId} ({started.program}) has ended: {exit_text(started.exit_status)}",
            )
        self.table.terminate(processId, TERMINATE_GRACE_S)

    # --- scabench::node::NodeDevice ------------------------------------------------------

    def processes(self):
        return [_record(s) for s in self.table.records()]

    def watch(self, requests):
        found = []
        for request in requests:
            started = self.table.get(request.pid)
            if started is None:
                raise Executable.InvalidProcess(
                    cf_error(errno.ESRCH), f"node {self.settings.name} started no process {request.pid}"
                )
            bad = next((f.fileName for f in request.files if not _plain_name(f.fileName)), None)
            if bad is not None:
                raise CF.InvalidFileName(
                    cf_error(errno.EINVAL),
                    f"{bad!r} is not a file name: the node serves the files in "
                    "a process's own directory, by their names alone",
                )
            found.append((started, request.files))
        left = S.node.NodeDevice.MAX_WATCH_BYTES  # the answer must fit the caller's message limit
        out = []
        for started, files in found:
            record = _record(started)  # its state before its files: a process seen ended has written them all
            parts = []
            for f in files:
                exists, size, data = self.table.read_file(started, f.fileName, f.offset, min(f.maxBytes, left))
                left -= len(data)
                parts.append(S.node.FilePart(exists, size, data))
            out.append(S.node.Watched(record, parts))
        return out

    def monotonicNs(self):
        return time.monotonic_ns()  # CLOCK_MONOTONIC, which scabench-host's records use


def _plain_name(name):
    return bool(name) and name not in (".", "..") and "/" not in name and "\0" not in name


def _record(s):
    running = s.running
    user, system, switches = s.figures()
    return S.node.ProcessRecord(
        s.pid,
        s.program,
        s.identifier,
        running,
        0 if running else s.exit_status,
        float(user),
        float(system),
        int(switches),
        s.error_tail(),
    )


class DeviceManager(ResourceAnswers, S.CF__POA.DeviceManager):  # type: ignore[name-defined]  # omniORBpy's skeleton
    """The node as REDHAWK's DeviceManager: its identity and profile (a DCD in
    its read-only fileSys, node/profile.py), its devices and services, its
    domain, its end. What each operation answers:

      deviceConfigurationProfile  the DCD's path in fileSys
      fileSys                     the node's file system (node/filesystem.py)
      domMgr                      the DomainManager it registered with, nil without
                                  --domain-manager
      registeredDevices           its own device, then each one registerDevice added
      registerDevice              a device from outside is listed (and, with a
                                  DomainManager, registered there too: a refusal
                                  there is InvalidObjectReference here, and it is
                                  not listed); nil: InvalidObjectReference
      unregisterDevice            takes it off the list once the DomainManager (if
                                  any) took it off its own (a refusal there leaves
                                  it listed: InvalidObjectReference); one not
                                  listed, or the node's own device (it goes with
                                  the node: shutdown): InvalidObjectReference
      registeredServices, registerService, unregisterService
                                  likewise, by name (one name, one service)
      getComponentImplementationId
                                  the device's instantiation id (its identifier):
                                  its SPD implementation, "python"; any other: ""
      shutdown                    the node's end (its processes stopped, its
                                  registrations undone)
    Devices and services from outside are not released at shutdown: the node
    did not start them. As a PropertyEmitter, PortSet and Logging it answers as
    its device does (no properties, no ports, one logger at INFO)."""

    def __init__(self, agent, device_ref, filesystem_ref, profile_path):
        self.agent = agent
        self.device_ref = device_ref
        self.filesystem_ref = filesystem_ref
        self.profile_path = profile_path
        self.id = agent.manager_id
        self.logger_name = agent.settings.name
        self._lock = threading.Lock()
        self._devices = []  # registered from outside
        self._services = []  # S.CF.DeviceManager.ServiceType
        self._properties_initialized = False

    def _get_identifier(self):
        return self.id

    def _get_label(self):
        return self.agent.settings.name

    def _get_deviceConfigurationProfile(self):
        return self.profile_path

    def _get_fileSys(self):
        return self.filesystem_ref

    def _get_domMgr(self):
        return self.agent.domain_manager

    def _get_registeredDevices(self):
        with self._lock:
            return [self.device_ref, *self._devices]

    def _get_registeredServices(self):
        with self._lock:
            return list(self._services)

    def _domain_call(self, call, what):
        """A call on the DomainManager, if the node has one; its refusal, or
        any failure of the call, as InvalidObjectReference (the one exception
        the DeviceManager's operations declare)."""
        manager = self.agent.domain_manager
        if manager is None:
            return
        try:
            call(manager)
        except CORBA.UserException as exc:
            raise CF.InvalidObjectReference(f"the DomainManager refused {what}: {describe(exc)}") from None
        except CORBA.SystemException as exc:
            raise CF.InvalidObjectReference(f"the DomainManager did not answer {what}: {describe(exc)}") from None
        except Exception as exc:  # not CORBA's: it would reach the caller as UNKNOWN
            raise CF.InvalidObjectReference(f"the DomainManager could not be called for {what}: {exc}") from None

    def _listed(self, device):
        return any(d._is_equivalent(device) for d in (self.device_ref, *self._devices))

    def registerDevice(self, registeringDevice):
        if registeringDevice is None:
            raise CF.InvalidObjectReference("registerDevice: a nil device")
        with self._lock:
            if self._listed(registeringDevice):
                return
        self._domain_call(lambda dm: dm.registerDevice(registeringDevice, self.agent.manager_ref), "the device")
        with self._lock:
            # Checked again: another registerDevice of the same device may have listed it meanwhile.
            if self._listed(registeringDevice):
                return
            self._devices.append(registeringDevice)
        self.agent.log("registered a device from outside")

    def unregisterDevice(self, registeredDevice):
        if registeredDevice is None or registeredDevice._is_equivalent(self.device_ref):
            raise CF.InvalidObjectReference(
                "unregisterDevice: the node's own device goes with the node (DeviceManager.shutdown)"
                if registeredDevice is not None
                else "unregisterDevice: a nil device"
            )
        with self._lock:
            if not any(d._is_equivalent(registeredDevice) for d in self._devices):
                raise CF.InvalidObjectReference("unregisterDevice: that device is not registered here")
        # The domain first: a refusal there leaves the device listed here, as it still is there.
        self._domain_call(lambda dm: dm.unregisterDevice(registeredDevice), "unregistering the device")
        with self._lock:
            self._devices = [d for d in self._devices if not d._is_equivalent(registeredDevice)]

    def registerService(self, registeringService, name):
        if registeringService is None or not name:
            raise CF.InvalidObjectReference("registerService: a nil service, or no name")
        self._domain_call(
            lambda dm: dm.registerService(registeringService, self.agent.manager_ref, name), f"service {name}"
        )
        with self._lock:
            self._services = [s for s in self._services if s.serviceName != name]
            self._services.append(CF.DeviceManager.ServiceType(registeringService, name))

    def unregisterService(self, unregisteringService, name):
        with self._lock:
            if not any(s.serviceName == name for s in self._services):
                raise CF.InvalidObjectReference(f"unregisterService: no service {name!r} is registered here")
        self._domain_call(lambda dm: dm.unregisterService(unregisteringService, name), f"unregistering {name}")
        with self._lock:
            self._services = [s for s in self._services if s.serviceName != name]

    def getComponentImplementationId(self, componentInstantiationId):
        return IMPLEMENTATION_ID if componentInstantiationId == self.agent.device.id else ""

    def shutdown(self):
        self.agent.shutdown("DeviceManager.shutdown()")

    # PropertyEmitter: a DeviceManager of scabench has no properties.
    def initializeProperties(self, initialProperties):
        if self._properties_initialized:
            raise CF.PropertyEmitter.AlreadyInitialized()
        self.configure(initialProperties)
        self._properties_initialized = True

    def configure(self, configProperties):
        if configProperties:
            raise CF.PropertySet.InvalidConfiguration("a DeviceManager of scabench has no properties", configProperties)

    def query(self, configProperties):
        if configProperties:
            raise CF.UnknownProperties(configProperties)
        return []

    # PortSet: no ports.
    def getPort(self, name):
        raise CF.PortSupplier.UnknownPort()

    def getPortSet(self):
        return []

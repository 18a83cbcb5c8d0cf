"""The node's CORBA servants: its ExecutableDevice (scabench::node::NodeDevice)
and its DeviceManager (docs/architecture.md, "Nodes").

The device, as SCA's ExecutableDevice, in the order a launcher uses it:
  allocateCapacity   CAPACITY_CORES (whole CPUs of the node's list) and
                     CAPACITY_MEMORY (MiB), integers; all or nothing: false,
                     and nothing allocated, when one is short; an unknown id
                     or a value that is not a whole number >= 0: InvalidCapacity.
  load               fileName: one of the node's programs (its file name, or
                     its path), loadKind EXECUTABLE; the file system given is
                     not read (nodes run programs installed on them).
  execute            the loaded program, each parameter as two arguments (id,
                     value), then -ORBendPoint with the node's address (and
                     its component port range); a parameter id that starts
                     with '-' must be one of ORB_OPTIONS, and one naming a
                     place on the node (NODE_PARAMETERS) is refused
                     (InvalidParameters); options STACK_SIZE (bytes),
                     AFFINITY (a CPU list within the node's; the node's CPUs
                     otherwise) and SCHEDULER ("normal" or "batch"). It runs
                     in a directory of its own (node/processes.py). Answers
                     the pid.
  executeLinked      execute with the files the program depends on: none
                     is execute; one named is InvalidFileName (CF_ENOENT),
                     as the node loads no dependency (load takes EXECUTABLE
                     only, its programs come installed with what they link).
  terminate          SIGTERM to the process's group, SIGKILL after
                     TERMINATE_GRACE_S; returns once it is gone.
  processes          every process started, with its CPU and switches.
  watch              given processes' records, with parts of the files in
                     their directories (a launcher's poll, and its fetch
                     of the packet records).
  monotonicNs        the node's CLOCK_MONOTONIC, for a launcher to relate
                     the node's times to its own.
execute, load and allocateCapacity need the device UNLOCKED and ENABLED
(InvalidState otherwise): a node that has lost its domain is DISABLED.
Everything else answers in every state, so that a launcher can always tear
down. releaseObject ends the node, as DeviceManager.shutdown does.
Every CF exception carries the CF error number chosen for what happened
(components/cf_errors.py). As a REDHAWK 2.x Resource the device serves from
the moment the node is up: start and stop only set `started`;
softwareProfile is "" (no SPD describes it); initializeProperties takes no
property (the node's are set on its command line), getPortSet is empty, and
Logging answers as a component's (components/resource.py)."""

import errno
import os
import resource
import threading
import time
import uuid

from omniORB import CORBA

from scabench.components import idl
from scabench.components.cf_errors import cf_error, cf_error_of
from scabench.components.resource import ResourceAnswers
from scabench.model.spec import SCHEDULERS
from scabench.node.processes import exit_text
from scabench.run.nodes import CAPACITY_CORES, CAPACITY_MEMORY

S = idl.load()
CF = S.CF
Device_ = CF.Device
Executable = CF.ExecutableDevice

TERMINATE_GRACE_S = 5.0
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
# anywhere the node's user can write).
NODE_PARAMETERS = frozenset({"RECORD_DIR"})


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


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
    def __init__(self, agent):
        self.agent = agent
        self.settings = agent.settings
        self.table = agent.table
        self.id = f"{self.settings.name}:device:{uuid.uuid4()}"
        self._lock = threading.Lock()
        self._admin = Device_.UNLOCKED
        self._cores_used = 0
        self._memory_used = 0
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
        if configProperties:
            raise CF.PropertySet.InvalidConfiguration(
                "a node's properties are read-only: they are set on its command line (scabench node)", configProperties
            )

    def _properties(self):
        s = self.settings
        with self._lock:
            cores_used, memory_used = self._cores_used, self._memory_used
        return {
            "cores": CORBA.Any(CORBA.TC_string, ",".join(map(str, s.cores))),
            "cores_allocated": CORBA.Any(CORBA.TC_ulong, cores_used),
            CAPACITY_MEMORY: CORBA.Any(CORBA.TC_ulonglong, s.memory_mib),
            "memory_mib_allocated": CORBA.Any(CORBA.TC_ulonglong, memory_used),
            "processes_running": CORBA.Any(CORBA.TC_ulong, self.table.running()),
            "programs": CORBA.Any(CF._tc_StringSequence, sorted(s.programs)),
            "component_endpoint": CORBA.Any(CORBA.TC_string, s.component_endpoint),
            "published_host": CORBA.Any(CORBA.TC_string, s.published_host),
        }

    def query(self, configProperties):
        props = self._properties()
        if not configProperties:
            return [CF.DataType(k, v) for k, v in props.items()]
        unknown = [p for p in configProperties if p.id not in props]
        if unknown:
            raise CF.UnknownProperties(unknown)
        return [CF.DataType(p.id, props[p.id]) for p in configProperties]

    # --- Device ------------------------------------------------------------------

    def _get_usageState(self):
        with self._lock:
            if self._cores_used == 0 and self._memory_used == 0:
                return Device_.IDLE
            full = self._cores_used >= len(self.settings.cores) or self._memory_used >= self.settings.memory_mib
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
        return ""

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
        wanted, bad = {CAPACITY_CORES: 0, CAPACITY_MEMORY: 0}, []
        for p in capacities:
            value = p.value.value()
            if p.id not in wanted or not _whole(value):
                bad.append(p)
            else:
                wanted[p.id] += value
        if bad:
            raise Device_.InvalidCapacity(
                f"node {self.settings.name} takes {CAPACITY_CORES} and {CAPACITY_MEMORY}, "
                "each a whole number >= 0: not " + ", ".join(repr(p.id) for p in bad),
                bad,
            )
        return wanted[CAPACITY_CORES], wanted[CAPACITY_MEMORY]

    def allocateCapacity(self, capacities):
        self._usable("allocateCapacity")
        cores, memory = self._capacities(capacities)
        with self._lock:
            if (
                self._cores_used + cores > len(self.settings.cores)
                or self._memory_used + memory > self.settings.memory_mib
            ):
                self.agent.log(
                    f"refused {cores} cores and {memory} MiB: {self._cores_used} of "
                    f"{len(self.settings.cores)} cores and {self._memory_used} of "
                    f"{self.settings.memory_mib} MiB are allocated"
                )
                return False
            self._cores_used += cores
            self._memory_used += memory
        return True

    def deallocateCapacity(self, capacities):
        cores, memory = self._capacities(capacities)
        with self._lock:
            if cores > self._cores_used or memory > self._memory_used:
                raise Device_.InvalidCapacity(
                    f"cannot give back {cores} cores and {memory} MiB: {self._cores_used} cores and "
                    f"{self._memory_used} MiB are allocated",
                    capacities,
                )
            self._cores_used -= cores
            self._memory_used -= memory

    # --- LoadableDevice ------------------------------------------------------------

    def _program(self, fileName):
        """The node's name for a program given by file name or path; InvalidFileName if it has none."""
        programs = self.settings.programs
        if fileName in programs:
            return fileName
        for name, path in programs.items():
            if fileName == str(path):
                return name
        raise CF.InvalidFileName(
            cf_error(errno.EACCES),
            f"{fileName!r} is not a program node {self.settings.name} runs; "
            f"it runs {', '.join(sorted(programs)) or 'none'} (scabench node --allow)",
        )

    def load(self, fs, fileName, loadKind):
        self._usable("load")
        if loadKind != CF.LoadableDevice.EXECUTABLE:
            raise CF.LoadableDevice.InvalidLoadKind()
        name = self._program(fileName)
        path = self.settings.programs[name]
        if not os.access(path, os.X_OK):
            raise CF.LoadableDevice.LoadFail(
                cf_error(errno.EACCES if os.path.exists(path) else errno.ENOENT),
                f"{path} is gone or not executable on node {self.settings.name}",
            )
        with self._lock:
            self._loaded[name] = self._loaded.get(name, 0) + 1

    def unload(self, fileName):
        name = self._program(fileName)
        with self._lock:
            if not self._loaded.get(name):
                raise CF.InvalidFileName(
                    cf_error(errno.ENOENT), f"{fileName!r} is not loaded on node {self.settings.name}"
                )
            self._loaded[name] -= 1

    # --- ExecutableDevice ------------------------------------------------------------

    def _options(self, options):
        """(cpus, stack bytes, batch) from execute's options; InvalidOptions names what is wrong."""
        cpus, stack, batch, bad = list(self.settings.cores), None, False, []
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
            else:
                bad.append(p)  # PRIORITY among them: the node runs every process at its own priority
        if bad:
            raise Executable.InvalidOptions(bad)
        return cpus, stack, batch

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
        program = self._program(name)
        with self._lock:
            loaded = self._loaded.get(program, 0) > 0
        if not loaded:
            raise CF.InvalidFileName(
                cf_error(errno.ENOENT), f"{name!r} is not loaded on node {self.settings.name}: load it first"
            )
        cpus, stack, batch = self._options(options)
        args, identifier = self._arguments(parameters)
        argv = [str(self.settings.programs[program])] + args + self.settings.component_orb_options
        try:
            pid = self.table.start(argv, program, identifier, cpus, stack, batch)
        except OSError as exc:
            raise Executable.ExecuteFail(cf_error_of(exc), f"{program}: {exc.strerror or exc}") from None
        except Exception as exc:  # the child's set-up failed (subprocess.SubprocessError)
            raise Executable.ExecuteFail(cf_error_of(exc), f"{program}: {exc}") from None
        self.agent.log(f"executed {program} as pid {pid}" + (f" ({identifier})" if identifier else ""))
        return pid

    def executeLinked(self, name, options, parameters, deps):
        if deps:
            raise CF.InvalidFileName(
                cf_error(errno.ENOENT),
                f"{deps[0]!r} is not loaded on node {self.settings.name}: a node loads no dependency "
                "(load takes EXECUTABLE only); its programs come installed with what they link",
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


class DeviceManager(S.CF__POA.DeviceManager):  # type: ignore[name-defined]  # omniORBpy's skeleton, generated
    """The node as a DeviceManager: its identity, its one device, its end."""

    def __init__(self, agent, device_ref):
        self.agent = agent
        self.device_ref = device_ref
        self.id = f"{agent.settings.name}:{uuid.uuid4()}"

    def _get_identifier(self):
        return self.id

    def _get_label(self):
        return self.agent.settings.name

    def _get_registeredDevices(self):
        return [self.device_ref]

    def shutdown(self):
        self.agent.shutdown("DeviceManager.shutdown()")

    def configure(self, configProperties):
        if configProperties:
            raise CF.PropertySet.InvalidConfiguration("a DeviceManager of scabench has no properties", configProperties)

    def query(self, configProperties):
        if configProperties:
            raise CF.UnknownProperties(configProperties)
        return []

    def getPort(self, name):
        raise CF.PortSupplier.UnknownPort()

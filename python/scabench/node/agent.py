"""`scabench node`: the node agent (docs/architecture.md, "Nodes").

One process per machine of a domain. It serves the node's DeviceManager and
NodeDevice (node/device.py) on its listen address, registers both in the
domain's Naming Service (run/nodes.py says under which names), and then
beats: every heartbeat_s it resolves its own device there,

  - found, and it is this node's: nothing to do;
  - not found (the service was restarted without its data, or someone
    unbound it): it registers again;
  - bound to another node's device: it gives the name up and ends, since two
    nodes must not serve one name;
  - no answer: the domain is lost. The device turns DISABLED (execute,
    load and allocateCapacity refuse with InvalidState) and, if the service
    has still not answered after grace_s, the node stops every process it
    started and exits 1: components whose domain is gone can be neither
    found nor released by anyone.

With --domain-manager it also registers with a REDHAWK DomainManager, once
its names are bound, as REDHAWK's DeviceManager does: registerDeviceManager
(the DomainManager reads the node's DCD, node/profile.py, through the
DeviceManager's fileSys, node/filesystem.py), then registerDevice of its
device (the DomainManager reads the device's SPD and PRF there, from the
path its softwareProfile answers). Every --domain-manager-check-s (at a
heartbeat) it asks the DomainManager whether it still lists the node, and
registers again where it does not (_watch_domain_manager). It leaves first
thing when it ends: unregisterDevice, then unregisterDeviceManager.

It ends cleanly on DeviceManager.shutdown() (exit 0) and on SIGTERM, SIGINT
or SIGHUP (128 + the signal): its processes are stopped (SIGTERM, then
SIGKILL), its names unbound, its ORB shut down. Killed outright, it takes its
processes with it (PR_SET_PDEATHSIG, node/processes.py) and its names stay
behind, pointing at nothing: node_alive() tells."""

import dataclasses
import shutil
import socket
import threading
import time
import uuid
from typing import Any

import omniORB
from omniORB import CORBA

from scabench.components import idl
from scabench.components.ports import describe
from scabench.errors import RunError, ScabenchError
from scabench.model.checks import DOMAIN_SCHEMES
from scabench.node.device import NODE_PROPERTIES, DeviceManager, NodeDevice
from scabench.node.filesystem import ProfileFileSystem
from scabench.node.loaded import LoadedFiles
from scabench.node.processes import ProcessTable
from scabench.node.profile import write_profile
from scabench.run import processes
from scabench.run.nodes import DEVICE, DEVICE_MANAGER, NODES_CONTEXT, domain_root, node_alive, node_path

S = idl.load()
CF, CosNaming = S.CF, S.CosNaming

DOMAIN_MANAGER_TIMEOUT_S = 10.0  # what each call on the DomainManager gets (it reads the node's profile)
STOP_GRACE_S = 5.0  # what each process gets after SIGTERM when the node ends
ORB_SHUTDOWN_S = 5.0  # in-flight calls get this long once the node ends
START_RETRY_S = 0.5  # between tries to reach the domain at start-up


class Agent:
    def __init__(self, settings, log):
        self.settings = settings
        self._log = log
        self._log_lock = threading.Lock()
        self.domain_reachable = True
        self._lost_since = None
        self._stop = threading.Event()
        self._stop_reason = None
        # Held by a heartbeat and by the node's end: a shutdown() on an ORB thread
        # must not unbind the names while the heartbeat binds them again.
        self._ending = threading.Lock()
        self._leaving = False
        self._registered = False
        self.orb: Any = None
        self.root: Any = None
        self.table: Any = None
        self.loaded: Any = None  # node/loaded.py: what load copied from a caller's file system
        self.device = self.device_ref = self.manager_ref = None
        # The DeviceManager's identifier, its DCD's id: an XML ID (a node's name may start with a digit).
        self.manager_id = f"DCE:{uuid.uuid4()}"
        self.domain_manager: Any = None  # the DomainManager it registered with (--domain-manager)
        self._device_registered = False  # its device, with that DomainManager
        self._domain_manager_checked = 0.0  # when the heartbeat last asked it (time.monotonic)
        self._domain_manager_lost = False  # its last check found it gone, and registering again failed

    def log(self, text):
        with self._log_lock:
            self._log(f"node {self.settings.name}: {text}")

    # --- life ----------------------------------------------------------------------

    def serve(self):
        """Runs the node until shutdown() (returns its reason), a signal
        (Interrupted propagates) or the loss of its domain (RunError). Bad
        settings found on the way (an address it cannot listen on, a name
        another live node holds): ScabenchError."""
        workdir = processes.make_run_dir()
        try:
            self._start_orb()
            self.table = ProcessTable(workdir, self.log)
            # Beside the processes' folders; the staging folder on the same file system, so a copy moves in whole.
            self.loaded = LoadedFiles(workdir / "loaded", workdir / "loading", self.settings.name, self.log)
            self.device = NodeDevice(self)
            poa = self.orb.resolve_initial_references("RootPOA")
            poa.activate_object(self.device)
            self.device_ref = poa.servant_to_reference(self.device)
            profile_root = workdir / "profile"  # beside the processes' folders (node/processes.py numbers those)
            s = self.settings
            profile = write_profile(
                profile_root, s.name, self.manager_id, self.device, NODE_PROPERTIES, s.domain_manager, s.domain
            )
            filesystem = ProfileFileSystem(profile_root, s.name)
            poa.activate_object(filesystem)
            manager = DeviceManager(self, self.device_ref, poa.servant_to_reference(filesystem), profile)
            poa.activate_object(manager)
            self.manager_ref = poa.servant_to_reference(manager)
            self._register(first=True)
            if s.domain_manager is not None:
                self._join_domain_manager()
            while not self._stop.wait(self.settings.heartbeat_s):
                self._beat()
            return self._stop_reason
        finally:
            self._end()
            shutil.rmtree(workdir, ignore_errors=True)

    def _start_orb(self):
        # The address tried here first, so that a bad one gets one line (omniORB's
        # own refusal comes with lines of its log); a port chosen here, not by the
        # ORB, so that the log can say which.
        s = self.settings = dataclasses.replace(
            self.settings, listen_port=_bindable(self.settings.listen_host, self.settings.listen_port)
        )
        args = ["scabench-node", *s.orb_options]
        try:
            self.orb = CORBA.ORB_init(args, CORBA.ORB_ID)
            poa = self.orb.resolve_initial_references("RootPOA")
            poa._get_the_POAManager().activate()
        except CORBA.Exception as exc:
            raise ScabenchError(f"--listen: cannot listen on {s.endpoint}: {describe(exc)}") from None

    def shutdown(self, reason):
        """From a CORBA call (DeviceManager.shutdown, releaseObject): stops the
        processes and leaves the domain before the call returns, then lets
        serve() return."""
        self.log(f"shutting down: {reason}")
        self._end_processes_and_names()
        self._stop_reason = reason
        self._stop.set()

    def _end_processes_and_names(self):
        with self._ending:
            self._leaving = True  # no heartbeat registers the node again from now on
            if self.device is not None:
                self.device.shutting_down()
            if self.domain_manager is not None:
                self._leave_domain_manager()
            if self.table is not None:
                stopped = self.table.stop_all(STOP_GRACE_S)
                if stopped:
                    self.log(f"stopped {stopped} process{'es' if stopped != 1 else ''}")
            if self._registered and self.domain_reachable:
                self._unregister()

    def _end(self):
        self._end_processes_and_names()
        if self.table is not None:
            self.table.close()
        if self.orb is not None:
            _shutdown_orb(self.orb)

    # --- the domain --------------------------------------------------------------------

    def _register(self, first=False):
        """Binds the node's context and both names. At start-up the domain
        gets grace_s to answer, and a live node of the same name is refused."""
        s = self.settings
        deadline = time.monotonic() + s.grace_s
        while True:
            try:
                if self.root is None:
                    self.root = domain_root(self.orb, s.domain, timeout_s=self._call_timeout_s())
                if first:
                    self._refuse_a_live_namesake()
                self._bind()
                break
            except RunError as exc:
                if time.monotonic() >= deadline:
                    raise RunError(f"{exc} (tried for {s.grace_s:g} s)") from None
            except CORBA.SystemException as exc:
                if time.monotonic() >= deadline:
                    raise RunError(
                        f"the domain's Naming Service at {s.domain} does not answer: {describe(exc)} "
                        f"(tried for {s.grace_s:g} s)"
                    ) from None
            time.sleep(START_RETRY_S)
        self._registered = True
        if first:
            where = "loopback only" if s.loopback else "reachable from other machines"
            published = f", published as {s.published_host}" if s.publish_host else ""
            self.log(
                f"registered in {s.domain} as {NODES_CONTEXT}/{s.name}; listening on {s.endpoint} "
                f"({where}{published}); components on {s.component_endpoint}; "
                f"cores {','.join(map(str, s.cores))}, "
                f"memory {s.memory_mib} MiB; programs {', '.join(sorted(s.programs)) or 'none'}"
                + ("; loads from a caller's file system accepted (--accept-loaded)" if s.accept_loaded else "")
            )

    def _resolve_domain_manager(self):
        """The DomainManager --domain-manager names: an IOR or corbaloc, or a
        name in the domain's Naming Service (resolved anew each time: a
        DomainManager that restarted may be bound to a new reference). A name
        bound to nothing, or to something else: ScabenchError; no answer:
        RunError."""
        given = self.settings.domain_manager
        try:
            if given.startswith(DOMAIN_SCHEMES):
                obj = self.orb.string_to_object(given)
            else:
                obj = self.root.resolve([CosNaming.NameComponent(part, "") for part in given.split("/")])
            omniORB.setClientCallTimeout(obj, int(DOMAIN_MANAGER_TIMEOUT_S * 1000))
            manager = obj._narrow(CF.DomainManager)
        except CosNaming.NamingContext.NotFound:
            raise ScabenchError(
                f"--domain-manager: nothing is bound as {given!r} in the domain's Naming Service "
                f"({self.settings.domain})"
            ) from None
        except CORBA.BAD_PARAM:
            raise ScabenchError(f"--domain-manager: {given!r} does not parse as an object reference") from None
        except CORBA.SystemException as exc:
            raise RunError(f"the DomainManager {given} does not answer: {describe(exc)}") from None
        if manager is None:
            raise ScabenchError(f"--domain-manager: {given!r} is not a DomainManager (not a CF::DomainManager)")
        return manager

    def _register_with(self, manager):
        """registerDeviceManager, then registerDevice of its device (registerDeviceManager
        does not take the DCD's devices: each registers on its own). A refusal, or no
        answer: RunError."""
        given = self.settings.domain_manager
        try:
            manager.registerDeviceManager(self.manager_ref)
        except CORBA.UserException as exc:
            raise RunError(f"the DomainManager {given} refused this node: {describe(exc)}") from None
        except CORBA.SystemException as exc:
            raise RunError(f"the DomainManager {given} does not answer: {describe(exc)}") from None
        self.domain_manager = manager  # from here on, the node's end unregisters it
        self._device_registered = False
        try:
            manager.registerDevice(self.device_ref, self.manager_ref)
        except CORBA.UserException as exc:
            raise RunError(f"the DomainManager {given} refused this node's device: {describe(exc)}") from None
        except CORBA.SystemException as exc:
            raise RunError(f"the DomainManager {given} does not answer: {describe(exc)}") from None
        self._device_registered = True

    def _join_domain_manager(self):
        """At start: registers with the DomainManager, or the node ends
        (ScabenchError for a name that is wrong, RunError otherwise)."""
        self._register_with(self._resolve_domain_manager())
        self._domain_manager_checked = time.monotonic()
        self.log(f"registered with the DomainManager {self.settings.domain_manager}, and its device")

    def _watch_domain_manager(self):
        """From the heartbeat, every --domain-manager-check-s: a DomainManager
        that restarted without its data no longer lists this node among its
        deviceManagers, and one that moved no longer answers at its old
        reference. Either way the node resolves it again and registers
        again, logging it; a DomainManager that cannot be reached or
        refuses is tried again at the next check (the node serves on: its
        domain is the Naming Service)."""
        now = time.monotonic()
        if now - self._domain_manager_checked < self.settings.domain_manager_check_s:
            return
        self._domain_manager_checked = now
        given = self.settings.domain_manager
        try:
            listed = self.domain_manager._get_deviceManagers()
            if self._device_registered and any(m is not None and m._is_equivalent(self.manager_ref) for m in listed):
                if self._domain_manager_lost:
                    self.log(f"the DomainManager {given} answers again, this node registered there")
                    self._domain_manager_lost = False
                return
            why = (
                "it does not list this node (restarted?)" if self._device_registered else "its device is not registered"
            )
        except CORBA.SystemException as exc:
            why = f"it does not answer at its reference ({describe(exc)})"
        try:
            self._register_with(self._resolve_domain_manager())
        except (RunError, ScabenchError) as exc:
            if not self._domain_manager_lost:
                self.log(
                    f"the DomainManager {given}: {why}; cannot register again yet: {exc}; tried again every "
                    f"{self.settings.domain_manager_check_s:g} s"
                )
                self._domain_manager_lost = True
            return
        self._domain_manager_lost = False
        self.log(f"registered again with the DomainManager {given}, and its device: {why}")

    def _leave_domain_manager(self):
        manager, self.domain_manager = self.domain_manager, None
        if self._device_registered:
            self._device_registered = False
            try:
                manager.unregisterDevice(self.device_ref)
            except (CORBA.UserException, CORBA.SystemException) as exc:
                self.log(f"could not unregister its device from the DomainManager: {describe(exc)}")
        try:
            manager.unregisterDeviceManager(self.manager_ref)
            self.log("unregistered from the DomainManager")
        except (CORBA.UserException, CORBA.SystemException) as exc:
            self.log(f"could not unregister from the DomainManager: {describe(exc)}")

    def _call_timeout_s(self):
        return min(2.0, max(0.5, self.settings.heartbeat_s))

    def _refuse_a_live_namesake(self):
        try:
            other = self.root.resolve(node_path(self.settings.name, DEVICE))
        except CosNaming.NamingContext.NotFound:
            return
        try:
            other = other._narrow(S.node.NodeDevice)
        except CORBA.SystemException:
            return  # a stale binding whose node is gone: taken over
        if other is not None and node_alive(other, self._call_timeout_s()):
            raise ScabenchError(
                f"--name: a node named {self.settings.name!r} is registered in the domain and "
                "answers; give this one another name, or shut that one down"
            )

    def _bind(self):
        context = self.root
        for component in node_path(self.settings.name):
            try:
                context = context.bind_new_context([component])
            except CosNaming.NamingContext.AlreadyBound:
                context = context.resolve([component])._narrow(CosNaming.NamingContext)
            # A reference of its own: without the root's timeout a dead service would hang the heartbeat.
            omniORB.setClientCallTimeout(context, int(self._call_timeout_s() * 1000))
        context.rebind([CosNaming.NameComponent(DEVICE_MANAGER, "")], self.manager_ref)
        context.rebind([CosNaming.NameComponent(DEVICE, "")], self.device_ref)

    def _unregister(self):
        name = self.settings.name
        try:
            for leaf in (DEVICE, DEVICE_MANAGER):
                try:
                    self.root.unbind(node_path(name, leaf))
                except CosNaming.NamingContext.NotFound:
                    pass
            context = self.root.resolve(node_path(name))._narrow(CosNaming.NamingContext)
            omniORB.setClientCallTimeout(context, int(self._call_timeout_s() * 1000))
            context.destroy()  # NotEmpty if someone bound something else there: left as it is
            self.root.unbind(node_path(name))
        except (CosNaming.NamingContext.NotFound, CosNaming.NamingContext.NotEmpty):
            pass
        except CORBA.SystemException as exc:
            self.log(f"could not unbind {NODES_CONTEXT}/{name}: {describe(exc)}")
        self._registered = False

    def _beat(self):
        with self._ending:
            if not self._leaving:
                self._check_in()
                if self.domain_manager is not None:
                    self._watch_domain_manager()

    def _check_in(self):
        s = self.settings
        try:
            bound = self.root.resolve(node_path(s.name, DEVICE))
            if not bound._is_equivalent(self.device_ref):
                self._registered = False  # the names are the other node's now: left as they are
                raise RunError(f"another node registered as {NODES_CONTEXT}/{s.name}: this one leaves the domain")
        except CosNaming.NamingContext.NotFound:
            try:
                self._bind()
                self.log(f"registered again as {NODES_CONTEXT}/{s.name} (the Naming Service had lost the names)")
            except CORBA.SystemException as exc:
                self._lost(exc)
                return
        except CORBA.SystemException as exc:
            self._lost(exc)
            return
        if not self.domain_reachable:
            self.log("the domain's Naming Service answers again")
            self.domain_reachable = True
            self._lost_since = None

    def _lost(self, exc):
        now = time.monotonic()
        if self.domain_reachable:
            self.domain_reachable = False
            self._lost_since = now
            self.log(
                f"the domain's Naming Service does not answer ({describe(exc)}): DISABLED; "
                f"it gives up in {self.settings.grace_s:g} s"
            )
        elif self._lost_since is not None and now - self._lost_since >= self.settings.grace_s:
            raise RunError(
                f"node {self.settings.name} lost its domain: the Naming Service at {self.settings.domain} "
                f"has not answered for {self.settings.grace_s:g} s ({describe(exc)}); "
                "its processes are stopped"
            )


def _bindable(host, port):
    """The port (a free one for 0) once a socket could bind there."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as omniORB binds
            s.bind((host, port))
            return s.getsockname()[1]
    except OSError as exc:
        where = f"{host}:{port}" if port else host
        raise ScabenchError(f"--listen: cannot listen on {where}: {exc.strerror or exc}") from None


def _shutdown_orb(orb):
    """Waits for in-flight calls up to ORB_SHUTDOWN_S; one stuck longer does
    not keep the node alive (the caller exits with os._exit either way)."""
    done = threading.Event()

    def shutdown():
        try:
            orb.shutdown(True)
            orb.destroy()
        except CORBA.Exception:
            pass
        done.set()

    threading.Thread(target=shutdown, name="orb-shutdown", daemon=True).start()
    done.wait(ORB_SHUTDOWN_S)

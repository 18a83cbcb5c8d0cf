"""A Python component as a program started the SCA way (an ExecutableDevice's
execute): its parameters come as KEY VALUE pairs, it registers itself in the
naming context it is given, and it lives until releaseObject().

    PROGRAM NAMING_CONTEXT_IOR <IOR of a CosNaming context>
            COMPONENT_IDENTIFIER <id> NAME_BINDING <name>
            [SAMPLE_TYPE octet|short|float|double] [RECORD_DIR DIR] [EVENTS_FILE PATH]
            [KEY VALUE ...] [-ORBoption value ...]

serve(ComponentClass) creates the component's CF::Resource servant, binds it
(rebind) in that context under the one-component name NAME_BINDING, and
serves until releaseObject(), after which the name is unbound, the ORB shut
down and the program exits 0. RECORD_DIR, if given (as scabench-host takes
one), is where the component writes NAME.connections.json, its
per-connection counts, when it stops and at its end of stream. KIND, if given (scabench-host's execute form
takes one), must be the program's own; other KEY VALUE pairs are ignored (an
SCA launcher may pass more); -ORB options go to omniORB (the launcher's
endpoint and dispatch options, as for a C++ host), after a default message
limit of 64 MiB, scabench-host's. Bad or missing parameters: one line
on stderr, exit 2; the naming context cannot be reached or bound in: exit 1.

It dies with its parent (PR_SET_PDEATHSIG, as every program of a run), and
SIGTERM, SIGINT or SIGHUP end it cleanly: the component is stopped, its name
unbound, the ORB shut down, and it exits 128 + the signal's number, the
project's convention for a terminated command. Events ("eos NAME COUNT" from
a component with no connected out-port, "error NAME MESSAGE", and at the end
"stat NAME refused.REASON N", "stat NAME connections JSON") go to stdout, one line each, in the words a
C++ host writes to its launcher; with EVENTS_FILE they are appended to that
file instead, as scabench-host's are (a launcher that had the program
started by a plain CF::ExecutableDevice of its own machine reads them
there). main() is the entry point of such a program.
"""

import ctypes
import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import omniORB
from omniORB import CORBA, PortableServer

from scabench.components import idl
from scabench.components.component import ComponentContext
from scabench.components.message_limit import OMNIORB_DEFAULT, message_limit
from scabench.components.ports import SAMPLE_TYPES, describe

CosNaming = idl.load().CosNaming

REQUIRED = ("NAMING_CONTEXT_IOR", "COMPONENT_IDENTIFIER", "NAME_BINDING")
DEFAULT_SAMPLE_TYPE = "double"
# Runs use packets up to 64 MiB: the message limit scabench-host takes by
# default too. The launcher's own -ORB options come after it, so they win.
DEFAULT_ORB_ARGS = ["-ORBgiopMaxMsgSize", str(64 << 20)]
NAMING_TIMEOUT_MS = 5000  # a naming call that takes longer has a dead or stopped service behind it
SHUTDOWN_GRACE_S = 5.0  # in-flight upcalls get this long to finish once the program ends
PR_SET_PDEATHSIG = 1
END_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

USAGE = """\
usage: {prog} NAMING_CONTEXT_IOR <IOR> COMPONENT_IDENTIFIER <id> NAME_BINDING <name>
       [SAMPLE_TYPE octet|short|float|double] [RECORD_DIR DIR] [EVENTS_FILE PATH] [PROFILE_NAME SPD]
       [KEY VALUE ...] [-ORBoption value ...]

Serves one scabench component over CORBA, started the SCA way: binds its
CF::Resource under NAME_BINDING in the naming context NAMING_CONTEXT_IOR and
serves until releaseObject(), then unbinds it and exits 0. SAMPLE_TYPE is
its ports' element type (default {default}); RECORD_DIR, a directory
where it writes NAME.connections.json (its per-connection counts); EVENTS_FILE, a
file its events are appended to rather than written on stdout; PROFILE_NAME, the
SPD it was deployed from, is what CF::Resource::softwareProfile answers; KIND, if given, must be this
program's kind; other KEY VALUE pairs are ignored; -ORB options go to
omniORB. Exit 2: bad parameters; 1: the naming context cannot be used;
128+N: ended by signal N."""


class UsageError(ValueError):
    pass


class _Terminated(BaseException):
    """A termination signal, raised in the main thread (not an Exception:
    nothing on the way may swallow it)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


@dataclass
class ExecParameters:
    naming_context_ior: str
    identifier: str
    name_binding: str
    sample_type: str = DEFAULT_SAMPLE_TYPE
    record_dir: str | None = None  # where <name>.connections.json goes; none written without it
    others: dict = field(default_factory=dict)  # KEY VALUE pairs the program does not use
    orb_args: list = field(default_factory=list)  # ["-ORBendPoint", "giop:tcp:127.0.0.1:", ...]
    profile_name: str = ""  # PROFILE_NAME: the SPD, CF::Resource::softwareProfile
    events_file: str | None = None  # EVENTS_FILE: where the events go (appended), stdout without it


def parse(args):
    """The execute parameters; UsageError says what is wrong, in one line."""
    orb_args, pairs = [], []
    i = 0
    while i < len(args):
        if args[i].startswith("-ORB"):  # every omniORB option takes one value
            if i + 1 >= len(args):
                raise UsageError(f"ORB option {args[i]} has no value")
            orb_args += args[i : i + 2]
            i += 2
        else:
            pairs.append(args[i])
            i += 1
    if len(pairs) % 2:
        raise UsageError(f"parameter {pairs[-1]!r} has no value")
    values = {}
    for key, value in zip(pairs[::2], pairs[1::2]):
        if key in values and (
            key in REQUIRED or key in ("SAMPLE_TYPE", "KIND", "RECORD_DIR", "EVENTS_FILE", "PROFILE_NAME")
        ):
            raise UsageError(f"{key} is given twice")
        values[key] = value
    missing = [key for key in REQUIRED if not values.get(key)]
    if missing:
        raise UsageError("missing " + ", ".join(missing))
    sample_type = values.pop("SAMPLE_TYPE", DEFAULT_SAMPLE_TYPE)
    if sample_type not in SAMPLE_TYPES:
        raise UsageError(f"SAMPLE_TYPE {sample_type!r} is not one of {', '.join(SAMPLE_TYPES)}")
    record_dir = values.pop("RECORD_DIR", None)
    profile_name = values.pop("PROFILE_NAME", "")
    events_file = values.pop("EVENTS_FILE", None)
    if record_dir is not None and not os.path.isdir(record_dir):
        raise UsageError(f"RECORD_DIR {record_dir!r} is not a directory")
    if events_file is not None and not os.path.isdir(os.path.dirname(os.path.abspath(events_file))):
        raise UsageError(f"EVENTS_FILE {events_file!r}: its folder does not exist")
    return ExecParameters(
        values.pop("NAMING_CONTEXT_IOR"),
        values.pop("COMPONENT_IDENTIFIER"),
        values.pop("NAME_BINDING"),
        sample_type,
        record_dir,
        values,
        orb_args,
        profile_name,
        events_file,
    )


class Process:
    """What the program gives its component (ComponentContext.services): the
    POAs for its ports, its ORB's message limit, the event stream, and the
    end of its life."""

    def __init__(self, orb, root_poa, prog, message_limit=OMNIORB_DEFAULT, record_dir=None):
        self.orb, self.root, self.prog = orb, root_poa, prog
        self.record_dir = record_dir  # RECORD_DIR: the component's connections.json goes there
        self.message_limit = message_limit  # giopMaxMsgSize: what the out-ports check packets against
        self.released_event = threading.Event()
        self._single_poa = None
        self._lock = threading.Lock()
        self._naming: Any = None
        self._name: Any = None

    def port_poa(self, single):
        """The root POA (the ORB's threading), or for dispatch = single one
        SINGLE_THREAD_MODEL POA for the process, as a C++ host has."""
        if not single:
            return self.root
        with self._lock:
            if self._single_poa is None:
                policies = [self.root.create_thread_policy(PortableServer.SINGLE_THREAD_MODEL)]
                self._single_poa = self.root.create_POA(
                    "ports-single-thread", self.root._get_the_POAManager(), policies
                )
            return self._single_poa

    def notify(self, line):
        with self._lock:
            print(line, flush=True)

    def log(self, text):
        print(f"{self.prog}: {text}", file=sys.stderr, flush=True)

    def bind(self, naming, name, ref):
        # Kept before the call: a signal's handler raises between any two
        # statements, and one that lands right after the rebind must still
        # find the name to unbind. A rebind that fails leaves nothing bound.
        self._naming, self._name = naming, name
        try:
            naming.rebind(name, ref)
        except (CORBA.Exception, CosNaming.NamingContext.InvalidName):
            self._naming = None
            raise

    def unbind(self):
        """Removes the name binding, once; a service that is gone is only reported."""
        with self._lock:
            naming, name, self._naming = self._naming, self._name, None
        if naming is None:
            return
        try:
            naming.unbind(name)
        except CosNaming.NamingContext.NotFound:
            pass  # someone unbound it already: the outcome wanted
        except CORBA.Exception as exc:
            self.log(f"could not unbind {name[0].id!r}: {describe(exc)}")

    def released(self, component):
        """releaseObject(): the name goes before the call returns, so the caller
        never finds a component that is on its way out; then the program ends."""
        self.unbind()
        self.released_event.set()


def _events_to(path):
    """EVENTS_FILE: stdout's descriptor becomes that file, appended to, so
    that every event line (Process.notify) goes where stdout's would."""
    sys.stdout.flush()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    os.dup2(fd, sys.stdout.fileno())
    os.close(fd)


def _die_with_parent():
    """PR_SET_PDEATHSIG: SIGTERM when the parent dies, which ends the
    program cleanly below. The launcher sets it before exec too; this
    covers any other parent."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: nothing to do


def _install_signal_handlers():
    fired: list[int] = []

    def handler(signum, _frame):
        if fired:
            return  # already ending
        fired.append(signum)
        raise _Terminated(signum)

    for s in END_SIGNALS:
        signal.signal(s, handler)


def serve(factory, argv=None, prog=None, kind=None):
    """Runs the component program; returns its exit status. factory(context)
    makes the component (usually its class); kind: its kind's name, which a
    KIND parameter (as scabench-host takes one) must match."""
    prog = prog or os.path.basename(sys.argv[0])
    args = list(sys.argv[1:] if argv is None else argv)
    if "--help" in args or "-h" in args:
        print(USAGE.format(prog=prog, default=DEFAULT_SAMPLE_TYPE))
        return 0
    try:
        params = parse(args)
        asked = params.others.get("KIND")
        if kind is not None and asked is not None and asked != kind:
            raise UsageError(f"KIND {asked!r}: this program serves {kind!r}")
    except UsageError as exc:
        print(f"{prog}: {exc} (--help for usage)", file=sys.stderr)
        return 2
    if params.events_file is not None:
        try:
            _events_to(params.events_file)
        except OSError as exc:
            print(f"{prog}: EVENTS_FILE {params.events_file!r}: {exc.strerror}", file=sys.stderr)
            return 2
    _die_with_parent()
    _install_signal_handlers()
    orb = None
    try:
        try:
            orb = CORBA.ORB_init([prog] + DEFAULT_ORB_ARGS + params.orb_args, CORBA.ORB_ID)
        except CORBA.Exception as exc:
            print(f"{prog}: bad ORB options {' '.join(params.orb_args)}: {describe(exc)}", file=sys.stderr)
            return 2
        return _serve(orb, factory, params, prog)
    except _Terminated as t:
        return 128 + t.signum
    finally:
        if orb is not None:
            _shutdown(orb)


def _serve(orb, factory, params, prog):
    try:
        obj = orb.string_to_object(params.naming_context_ior)
    except CORBA.Exception:
        obj = None
    if obj is None:
        print(
            f"{prog}: NAMING_CONTEXT_IOR is not an object reference: {params.naming_context_ior[:60]!r}",
            file=sys.stderr,
        )
        return 2
    root = orb.resolve_initial_references("RootPOA")
    process = Process(orb, root, prog, message_limit(DEFAULT_ORB_ARGS + params.orb_args), params.record_dir)
    try:
        component = factory(
            ComponentContext(params.name_binding, params.identifier, params.sample_type, process, params.profile_name)
        )
    except (ValueError, TypeError) as exc:  # e.g. a sample type its ports do not take
        print(f"{prog}: cannot create the component: {exc}", file=sys.stderr)
        return 2
    root.activate_object(component)
    ref = root.servant_to_reference(component)
    root._get_the_POAManager().activate()
    name = [CosNaming.NameComponent(params.name_binding, "")]
    try:
        try:
            naming = obj._narrow(CosNaming.NamingContext)
        except CORBA.Exception as exc:
            print(f"{prog}: cannot reach the naming context: {describe(exc)}", file=sys.stderr)
            return 1
        if naming is None:
            print(f"{prog}: NAMING_CONTEXT_IOR is not a CosNaming naming context", file=sys.stderr)
            return 2
        omniORB.setClientCallTimeout(naming, NAMING_TIMEOUT_MS)
        try:
            process.bind(naming, name, ref)
        except (CORBA.Exception, CosNaming.NamingContext.InvalidName) as exc:
            print(
                f"{prog}: cannot bind {params.name_binding!r} in the naming context: {describe(exc)}", file=sys.stderr
            )
            return 1
        # Woken now and then: a signal that reaches another thread of the
        # process runs its handler here only once this thread wakes.
        while not process.released_event.wait(0.2):
            pass
        return 0
    finally:
        if not process.released_event.is_set():  # a signal or a failure: end as releaseObject would
            try:
                component.stop()
            except Exception as exc:
                process.log(f"stop: {exc}")
            component.report()
            process.unbind()


def main(factory, prog, kind=None):
    """A component program's entry point: serve(), then exit with its status
    at once. The interpreter's own finalization is skipped: omniORB's threads
    still winding down then can abort the process ("terminate called without
    an active exception", SIGABRT, seen in about one exit in four here), when
    the ORB is already shut down and the name unbound."""
    code = serve(factory, prog=prog, kind=kind)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _shutdown(orb):
    """Waits for in-flight upcalls (a release's reply included), up to
    SHUTDOWN_GRACE_S; one still stuck then (a two-way forward into a hung
    peer) does not keep the process alive."""

    def give_up():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)

    timer = threading.Timer(SHUTDOWN_GRACE_S, give_up)
    timer.daemon = True
    timer.start()
    try:
        orb.shutdown(True)
        orb.destroy()
    except (CORBA.Exception, _Terminated):
        pass
    timer.cancel()

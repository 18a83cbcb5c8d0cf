"""What a node is started with (`scabench node`), checked before anything
starts: each mistake is a ScabenchError of one line naming the option and
what it takes (exit 2)."""

import ipaddress
import os
import resource
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

from scabench.errors import ScabenchError, SpecError, one_line
from scabench.model.checks import DOMAIN_SCHEMES, parse_cores
from scabench.paths import bin_dir
from scabench.run.nodes import check_node_name

# The programs a node runs without being told: scabench's own component
# programs, as this installation has them.
DEFAULT_PROGRAMS = ("scabench-host", "scabench-py-stage")


@dataclass
class NodeSettings:
    domain: str  # the domain's Naming Service, a corbaloc
    name: str
    cores: list  # the CPUs the node offers: its processes run on them
    memory_mib: int  # the memory it offers (a capacity, accounted, not enforced)
    listen_host: str = "127.0.0.1"
    listen_port: int = 0  # 0: any free port
    publish_host: str | None = None  # the address others reach it by, where not the listen host (NAT, a proxy)
    component_ports: tuple | None = None  # (lo, hi): the ports its components listen on; None: any
    programs: dict = field(default_factory=dict)  # file name -> path: what execute may start
    heartbeat_s: float = 1.0
    grace_s: float = 10.0
    domain_manager: str | None = None  # a REDHAWK DomainManager to register with: a reference, or a Naming name
    # How often the heartbeat asks the DomainManager whether it still lists the
    # node (registering again if not): a call every few seconds per node.
    domain_manager_check_s: float = 5.0
    # The lowest nice value execute's PRIORITY may give; None: the node's own
    # (a caller never gets more CPU than the node has without the operator's word).
    min_nice: int | None = None
    # Whether load takes files from the file system a caller gives (a REDHAWK
    # domain's FileManager) and execute runs them: code sent over the wire,
    # so only where the operator says (--accept-loaded).
    accept_loaded: bool = False

    @property
    def nice_floor(self) -> int:
        """The lowest nice value a process the node starts may get."""
        return self.min_nice if self.min_nice is not None else os.getpriority(os.PRIO_PROCESS, 0)

    @property
    def endpoint(self):
        """The agent's own ORB endpoint."""
        return f"giop:tcp:{_bracketed(self.listen_host)}:{self.listen_port or ''}"

    @property
    def published_host(self):
        """The address its references (and its components') carry."""
        return self.publish_host or self.listen_host

    @property
    def orb_options(self):
        """The agent's own endpoint options."""
        options = ["-ORBendPoint", self.endpoint]
        if self.publish_host:
            options += ["-ORBendPointPublish", f"giop:tcp:{_bracketed(self.publish_host)}:{self.listen_port}"]
        return options

    @property
    def component_orb_options(self):
        """What every program it executes is given last: where it listens,
        and, behind a NAT or a proxy, the address its references carry
        (omniORB fills in the port it listens on)."""
        options = ["-ORBendPoint", self.component_endpoint]
        if self.publish_host:
            options += ["-ORBendPointPublish", f"giop:tcp:{_bracketed(self.publish_host)}:"]
        return options

    @property
    def component_endpoint(self):
        """The endpoint the node gives every program it executes: its own
        address, and the port range if one was given."""
        ports = f"{self.component_ports[0]}-{self.component_ports[1]}" if self.component_ports else ""
        return f"giop:tcp:{_bracketed(self.listen_host)}:{ports}"

    @property
    def loopback(self):
        return is_loopback(self.listen_host)


def _bracketed(host):
    return f"[{host}]" if ":" in host else host


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_listen(text, where="--listen"):
    """HOST or HOST:PORT ([V6]:PORT): where the agent listens."""
    text = text.strip()
    host, port = text, "0"
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ScabenchError(f"{where}: {one_line(text)!r}: use HOST, HOST:PORT or [IPv6]:PORT")
        port = rest[1:] or "0"
    elif text.count(":") == 1:
        host, port = text.split(":")
    elif ":" in text:  # a bare IPv6 address
        host = text
    if not host or any(c.isspace() or c in "/@[]" for c in host) or not host.isprintable():
        raise ScabenchError(f"{where}: {one_line(text)!r} names no host; use HOST, HOST:PORT or [IPv6]:PORT")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ScabenchError(f"{where}: port {one_line(port)!r} is not a number from 0 to 65535")
    return host, int(port)


def parse_port_range(text, where="--component-ports"):
    """LO-HI, 1024 <= LO <= HI <= 65535."""
    lo, sep, hi = (text or "").partition("-")
    if not sep or not lo.strip().isdigit() or not hi.strip().isdigit():
        raise ScabenchError(f"{where}: {one_line(text)!r}: use a port range LO-HI, e.g. 40000-40099")
    lo, hi = int(lo), int(hi)
    if not 1024 <= lo <= hi <= 65535:
        raise ScabenchError(f"{where}: {lo}-{hi}: use LO <= HI within 1024-65535")
    return lo, hi


def machine_memory_mib():
    """(total, available) MiB, from /proc/meminfo."""
    values = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("MemTotal", "MemAvailable"):
            values[key] = int(rest.split()[0]) // 1024
    return values["MemTotal"], values.get("MemAvailable", values["MemTotal"])


def _default_programs():
    found = {}
    host = bin_dir() / "scabench-host"
    if host.exists():
        found[host.name] = host
    # The console script beside this interpreter (scripts/setup.sh installs it there), else on PATH.
    beside = Path(sys.executable).parent / "scabench-py-stage"
    stage = beside if beside.exists() else shutil.which("scabench-py-stage")
    if stage:
        found["scabench-py-stage"] = Path(stage)
    return found


def parse_programs(paths, where="--allow"):
    """The programs execute may start: the defaults, plus each PATH given.
    They are named by their file name, which must be unique."""
    programs = _default_programs()
    for text in paths:
        path = Path(text).expanduser()
        if not path.is_file():
            raise ScabenchError(f"{where}: {one_line(text)}: no such file")
        if not os.access(path, os.X_OK):
            raise ScabenchError(f"{where}: {one_line(text)}: not executable")
        path = path.resolve()
        other = programs.get(path.name)
        if other is not None and other.resolve() != path:
            raise ScabenchError(
                f"{where}: {one_line(text)}: another program is already named {path.name!r} "
                f"({other}); a node names its programs by file name"
            )
        programs[path.name] = path
    return programs


def parse_publish(text, where="--publish"):
    """A host name or address, without a port: the ports are the node's own."""
    host = text.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if (
        not host
        or any(c.isspace() or c in "/@[]" for c in host)
        or not host.isprintable()
        or (":" in host and not _is_address(host))
    ):
        raise ScabenchError(
            f"{where}: {one_line(text)!r}: give the host name or address others reach this node "
            "by, without a port (its ports are --listen's and --component-ports')"
        )
    return host


def parse_domain_manager(text, where="--domain-manager"):
    """An IOR, a corbaloc or corbaname, or a name in the domain's Naming
    Service ("REDHAWK_DEV/REDHAWK_DEV"): parts of printable characters
    without spaces, separated by '/'."""
    text = text.strip()
    if text.startswith(DOMAIN_SCHEMES):
        if any(c.isspace() for c in text) or not text.isprintable():
            raise ScabenchError(f"{where}: {one_line(text)!r}: an object reference holds no spaces")
        return text
    parts = text.split("/")
    if not text or any(not p or any(c.isspace() for c in p) or not p.isprintable() for p in parts):
        raise ScabenchError(
            f"{where}: {one_line(text)!r}: give the DomainManager's IOR or corbaloc, or its name in the "
            "domain's Naming Service (e.g. REDHAWK_DEV/REDHAWK_DEV)"
        )
    return text


def _is_address(text):
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def make_settings(
    domain,
    name,
    cores=None,
    memory_mib=None,
    listen="127.0.0.1",
    component_ports=None,
    allow=(),
    heartbeat_s=1.0,
    grace_s=10.0,
    publish=None,
    domain_manager=None,
    min_nice=None,
    accept_loaded=False,
    domain_manager_check_s=None,
):
    """NodeSettings from the command line's values, every one checked."""
    check_node_name(name)
    try:
        cpus = parse_cores(cores if cores is not None else "all", "--cores", "")
    except SpecError as exc:
        raise ScabenchError(str(exc)) from None
    total, available = machine_memory_mib()
    if memory_mib is not None and memory_mib > total:
        raise ScabenchError(f"--memory-mib: {memory_mib} is more than this machine's {total} MiB")
    host, port = parse_listen(listen)
    ports = parse_port_range(component_ports) if component_ports is not None else None
    if grace_s < heartbeat_s:
        raise ScabenchError(
            f"--grace-s: {grace_s} is shorter than --heartbeat-s {heartbeat_s}: "
            "the node would give its domain up before asking it twice"
        )
    if domain_manager_check_s is not None and domain_manager is None:
        raise ScabenchError("--domain-manager-check-s: there is no DomainManager to check; give --domain-manager")
    if min_nice is not None and not nice_allowed(min_nice):
        raise ScabenchError(
            f"--min-nice: {min_nice} is below what this user may set (nice "
            f"{os.getpriority(os.PRIO_PROCESS, 0)}, RLIMIT_NICE {resource.getrlimit(resource.RLIMIT_NICE)[0]}): "
            "give a value from the node's own nice up to 19, or run the node as a user that may"
        )
    return NodeSettings(
        domain=domain,
        name=name,
        cores=cpus,
        memory_mib=memory_mib or available,
        listen_host=host,
        listen_port=port,
        component_ports=ports,
        publish_host=parse_publish(publish) if publish is not None else None,
        programs=parse_programs(allow),
        heartbeat_s=heartbeat_s,
        grace_s=grace_s,
        domain_manager=parse_domain_manager(domain_manager) if domain_manager is not None else None,
        min_nice=min_nice,
        accept_loaded=accept_loaded,
        domain_manager_check_s=domain_manager_check_s if domain_manager_check_s is not None else 5.0,
    )


def nice_allowed(value: int) -> bool:
    """Whether this process's user may give a process the nice value `value`:
    raising it always; lowering it below the process's own as root, or as far
    as RLIMIT_NICE allows (20 - the limit is the lowest)."""
    if value >= os.getpriority(os.PRIO_PROCESS, 0) or os.geteuid() == 0:
        return True
    return 20 - value <= resource.getrlimit(resource.RLIMIT_NICE)[0]

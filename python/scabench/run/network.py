"""Network hosts: each process of a run on its own host, with real link delay.

A spec with a [network] table runs every process (every entry of
[placement] hosts) in a Linux network namespace of its own, joined to the
machine by a veth link, and each namespace is a node: a `scabench node`
agent runs in it, and the launcher starts the host there through the agent,
as it would on another machine (docs/architecture.md, "Placement on
nodes"). This kernel has no traffic-control qdiscs, so delay and jitter come
from a user-space link emulator, Toxiproxy, that runs in the machine's
namespace:

    host i (namespace sbn<pid>-h<i>)             machine's namespace
    host's ORB on 10.S.i.2:2809   <--veth-->  10.S.i.1:2809  proxy "h<i>"
    node agent on 10.S.i.2:2810                10.S.i.1:2810  proxy "n<i>"
                                                  latency d each way

Every object reference a host or an agent hands out names the proxy
(omniORB's endPointPublish, the agent's --publish), so every byte sent to
host i, and every reply it sends back, crosses the proxy and is delayed d:
a call from one host to another sees d on the way there and d on the way
back, like a link with one-way delay d. Requests into a host and
acknowledgements going back to a sender (credits, watermarks) cross the same
emulated links, and so do the launcher's calls to the agent (its round trips
to the node's clock among them). The run's Naming Service listens on
10.S.0.1, which every namespace reaches through its own link's machine end,
not through the emulator: the domain's traffic is not the waveform's.

Namespaces, links and the proxy exist only for the run: `NetworkHosts` is a
context manager that removes them on the way out, also on errors and
termination signals, and removes what a killed earlier run left (namespaces
whose owner process is gone) before it makes new ones. The proxy dies with
the command even when the command is killed outright (processes.spawn), so
it never keeps its ports bound.
"""

import ctypes
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Literal, Self

from scabench import interrupts
from scabench.errors import RunError, ScabenchError
from scabench.paths import REPO_ROOT
from scabench.run import processes

# The Toxiproxy release scripts/setup.sh installs.
TOXIPROXY_VERSION = "v2.5.0"
TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
NAME_PREFIX = "sbn"  # namespaces "sbn<pid>-h<i>", machine-side links "sbn<pid>h<i>"
ORB_PORT = 2809  # every host's ORB port, in its own namespace
AGENT_PORT = 2810  # every node agent's, in its own namespace
NODE_START_S = 60.0  # how long an agent may take to register (a Python start on a busy machine)
NODE_STOP_S = 15.0  # an agent stops its processes (5 s each at most), then exits
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)  # loaded before any fork: the child must not load libraries
SUBNETS = range(200, 250)  # 10.<S>.0.0/16 per run, S the first one no interface uses


class NetworkUnavailable(ScabenchError):
    """Network hosts cannot be made on this machine; the message says why."""


def toxiproxy_binary() -> Path | None:
    """The emulator: $SCABENCH_TOXIPROXY, the checkout's .tools/bin, or PATH."""
    candidates = [
        os.environ.get("SCABENCH_TOXIPROXY"),
        REPO_ROOT / ".tools" / "bin" / "toxiproxy-server",
        shutil.which("toxiproxy-server"),
    ]
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    return None


_reason_cache: dict[str, str | None] = {}


def unavailable_reason() -> str | None:
    """None when network hosts can be made here, else one line saying why not."""
    if "reason" not in _reason_cache:
        _reason_cache["reason"] = _probe()
    return _reason_cache["reason"]


# Capability numbers (linux/capability.h): namespaces are mounted under
# /run/netns (CAP_SYS_ADMIN) and given veth links (CAP_NET_ADMIN).
NEEDED_CAPABILITIES = {"CAP_NET_ADMIN": 12, "CAP_SYS_ADMIN": 21}


def _lacking_capabilities() -> list[str]:
    """The capabilities network hosts need that this process lacks (root in
    a container often has no CAP_SYS_ADMIN)."""
    try:
        status = Path("/proc/self/status").read_text()
        effective = int(next(line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")), 16)
    except (OSError, StopIteration, ValueError):
        return []  # not known: the probe below finds out
    return [name for name, bit in NEEDED_CAPABILITIES.items() if not effective >> bit & 1]


def _probe() -> str | None:
    lacking = _lacking_capabilities()
    if os.geteuid() != 0 or lacking:
        return (
            "network hosts need root with CAP_SYS_ADMIN and CAP_NET_ADMIN (network namespaces are mounted "
            "under /run/netns and given veth links); this process "
            + ("is not root" if os.geteuid() != 0 else f"lacks {' and '.join(lacking)}")
        )
    if shutil.which("ip") is None:
        return "the ip command (Debian package iproute2) is not installed"
    if toxiproxy_binary() is None:
        return (
            "the link emulator toxiproxy-server is not installed; scripts/setup.sh installs it with "
            f"`go install {TOXIPROXY_MODULE}@{TOXIPROXY_VERSION}` into .tools/bin"
        )
    name = f"{NAME_PREFIX}{os.getpid()}-probe"
    made = _ip("netns", "add", name, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip() or made.returncode}"
    _ip("netns", "del", name, check=False)
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise NetworkUnavailable(f"`ip {' '.join(args)}` failed: {out.stderr.strip() or out.returncode}")
    return out


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale() -> list[str]:
    """Removes namespaces and links that runs now dead left behind (a run
    killed with SIGKILL cannot clean up after itself). Those of live runs
    are left alone."""
    removed = []
    listing = _ip("netns", "list", check=False).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(rf"{NAME_PREFIX}(\d+)-(h\d+|probe)", name)
        if m and not _pid_alive(int(m.group(1))):
            _ip("netns", "del", name, check=False)
            removed.append(name)
    links = _ip("-o", "link", "show", check=False).stdout
    for m in re.finditer(rf"^\d+: ({NAME_PREFIX}(\d+)h\d+)[@:]", links, re.M):
        if not _pid_alive(int(m.group(2))):
            _ip("link", "del", m.group(1), check=False)
            removed.append(m.group(1))
    return removed


def _free_subnet() -> int:
    used = _ip("-o", "-4", "addr", "show", check=False).stdout
    taken = {int(m.group(1)) for m in re.finditer(r"inet 10\.(\d+)\.", used)}
    for s in SUBNETS:
        if s not in taken:
            return s
    raise NetworkUnavailable(f"no free subnet among 10.{SUBNETS[0]}-{SUBNETS[-1]}.0.0/16 for the network hosts")


class NetworkHosts:
    """`count` network hosts, each behind an emulated link (`link`).

    with NetworkHosts(3, LinkSettings(10), log_dir) as net:
        net.start_nodes(domain, cores)     # a node agent in each namespace: h0, h1, ...
    """

    def __init__(self, count: int, link: Any, log_dir: str | os.PathLike) -> None:
        reason = unavailable_reason()
        if reason:
            raise NetworkUnavailable(reason)
        self.count = count
        self.link = link
        self.log_dir = Path(log_dir)
        self.tag = f"{NAME_PREFIX}{os.getpid()}"
        self.subnet: int | None = None
        self.proxy: subprocess.Popen | None = None
        self.api: str | None = None
        self._made_ns: list[str] = []
        self._made_links: list[str] = []
        self._signals: Any = None
        self.agents: list[tuple[str, Path, subprocess.Popen]] = []  # the node agent of each namespace (start_nodes)

    # ---------------------------------------------------------------- names

    def netns(self, i: int) -> str:
        return f"{self.tag}-h{i}"

    def _link_name(self, i: int) -> str:
        return f"{self.tag}h{i}"

    def host_address(self, i: int) -> str:
        return f"10.{self.subnet}.{i}.2"

    def proxy_address(self, i: int) -> str:
        return f"10.{self.subnet}.{i}.1"

    def node_name(self, i: int) -> str:
        """The node of host i, in the run's Naming Service."""
        return f"h{i}"

    def naming_address(self) -> str:
        """Where the run's Naming Service listens: an address of the
        machine's namespace that every namespace reaches (through its own
        link's machine end, not through the emulator)."""
        return self.proxy_address(0)

    def describe(self) -> dict[str, Any]:
        return {
            "hosts": [
                {
                    "netns": self.netns(i),
                    "address": self.host_address(i),
                    "published": f"{self.proxy_address(i)}:{ORB_PORT}",
                    "node": self.node_name(i),
                    "node_agent": f"{self.proxy_address(i)}:{AGENT_PORT}",
                }
                for i in range(self.count)
            ],
            "link": self.link.describe(),
            "emulator": f"toxiproxy {TOXIPROXY_VERSION}",
        }

    # ---------------------------------------------------------------- nodes

    def start_nodes(self, domain: str, cores: list[int]) -> None:
        """A node agent in each namespace, registered in `domain` (the run's
        Naming Service) as h<i>, on `cores`: listening on the namespace's
        address, its references and its components' naming the proxy, its
        components on ORB_PORT. Returns once every one has registered; an
        agent that exits first, or does not register in time, is a RunError
        with its last line."""
        for i in range(self.count):
            log = self.log_dir / f"node-{self.node_name(i)}.log"
            argv = [
                sys.executable,
                "-m",
                "scabench.cli",
                "node",
                "--domain",
                domain,
                "--name",
                self.node_name(i),
                "--listen",
                f"{self.host_address(i)}:{AGENT_PORT}",
                "--publish",
                self.proxy_address(i),
                "--component-ports",
                f"{ORB_PORT}-{ORB_PORT}",
                "--cores",
                ",".join(map(str, cores)),
            ]
            # Opened here, entered in the child between fork and exec (system calls only).
            netns = os.open(f"/run/netns/{self.netns(i)}", os.O_RDONLY | os.O_CLOEXEC)
            try:
                with open(log, "w") as out:
                    self.agents.append(
                        (
                            self.node_name(i),
                            log,
                            processes.spawn(
                                argv,
                                preexec=functools.partial(_enter, netns),
                                stdin=subprocess.DEVNULL,
                                stdout=out,
                                stderr=subprocess.STDOUT,
                            ),
                        )
                    )
            finally:
                os.close(netns)
        deadline = time.monotonic() + NODE_START_S
        for name, log, proc in self.agents:
            while "registered in" not in log.read_text(errors="replace"):
                if proc.poll() is not None or time.monotonic() > deadline:
                    lines = log.read_text(errors="replace").strip().splitlines()
                    why = (
                        f"exited {proc.returncode}"
                        if proc.poll() is not None
                        else f"did not register within {NODE_START_S:g} s"
                    )
                    last = lines[-1] if lines else "no output"
                    raise RunError(f"the node agent of network host {name} {why}: {last}", component=name)
                time.sleep(0.05)

    def agents_cpu_s(self) -> float:
        """CPU the node agents have used so far (user + system seconds)."""
        return sum(_cpu_s(proc.pid) for _, _, proc in self.agents)

    def _stop_nodes(self) -> None:
        """Each agent stops its processes and leaves: SIGTERM, all at once."""
        for _, _, proc in self.agents:
            if proc.poll() is None:
                proc.terminate()
        for _, _, proc in self.agents:
            processes.stop(proc, grace_s=NODE_STOP_S)
        self.agents = []

    # ------------------------------------------------------------ lifecycle

    def __enter__(self) -> Self:
        self._signals = interrupts.while_owning()
        self._signals.__enter__()
        try:
            remove_stale()
            self.subnet = _free_subnet()
            for i in range(self.count):
                self._make_host(i)
            self._start_emulator()
            for i in range(self.count):
                self._make_proxy(i)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False

    def _make_host(self, i: int) -> None:
        ns, link = self.netns(i), self._link_name(i)
        _ip("netns", "add", ns)
        self._made_ns.append(ns)
        _ip("link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", ns)
        self._made_links.append(link)
        _ip("addr", "add", f"{self.proxy_address(i)}/24", "dev", link)
        _ip("link", "set", link, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "addr", "add", f"{self.host_address(i)}/24", "dev", "eth0")
        _ip("-n", ns, "link", "set", "eth0", "up")
        _ip("-n", ns, "route", "add", "default", "via", self.proxy_address(i))

    def _start_emulator(self) -> None:
        port = processes.free_port()
        self.api = f"http://127.0.0.1:{port}"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = open(self.log_dir / "toxiproxy.log", "w")
        # One OS thread for its goroutines: the emulator shares the run's
        # cores, and more threads would only add switches.
        env = {**os.environ, "GOMAXPROCS": "1"}
        # spawn: the emulator dies with this process, whatever kills it.
        self.proxy = processes.spawn(
            [str(toxiproxy_binary()), "-host", "127.0.0.1", "-port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        log.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                self._api("GET", "/proxies")
                return
            except (urllib.error.URLError, ConnectionError, OSError):
                if self.proxy.poll() is not None or time.monotonic() > deadline:
                    tail = (self.log_dir / "toxiproxy.log").read_text()[-400:].strip()
                    raise NetworkUnavailable(f"the link emulator did not start: {tail or 'no output'}") from None
                time.sleep(0.05)

    def _make_proxy(self, i: int) -> None:
        for name, port in ((f"h{i}", ORB_PORT), (f"n{i}", AGENT_PORT)):
            self._api(
                "POST",
                "/proxies",
                {
                    "name": name,
                    "listen": f"{self.proxy_address(i)}:{port}",
                    "upstream": f"{self.host_address(i)}:{port}",
                    "enabled": True,
                },
            )
            if self.link.delay_ms or self.link.jitter_ms:
                for stream in ("upstream", "downstream"):
                    self.set_delay(name, stream, self.link.delay_ms, self.link.jitter_ms)

    def set_delay(self, proxy: str, stream: str, delay_ms: float, jitter_ms: float = 0) -> None:
        """The delay of one direction of one proxy: "upstream" into the
        host, "downstream" out of it."""
        toxic = {
            "name": f"delay_{stream}",
            "type": "latency",
            "stream": stream,
            "toxicity": 1.0,
            "attributes": {"latency": delay_ms, "jitter": jitter_ms},
        }
        try:
            self._api("POST", f"/proxies/{proxy}/toxics", toxic)
        except NetworkUnavailable:  # there already: changed
            self._api("POST", f"/proxies/{proxy}/toxics/delay_{stream}", toxic)

    def _api(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        assert self.api is not None  # set when the emulator started
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            self.api + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=5) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise NetworkUnavailable(
                f"the link emulator refused {method} {path}: {exc.read().decode(errors='replace').strip()}"
            ) from None

    def emulator_cpu_s(self) -> float:
        """CPU the link emulator has used so far (user + system seconds)."""
        return _cpu_s(self.proxy.pid) if self.proxy is not None else 0.0

    def close(self) -> None:
        """Stops the node agents and the emulator and removes every namespace
        and link this object made; safe to call more than once."""
        self._stop_nodes()
        if self.proxy is not None:
            if self.proxy.poll() is None:
                self.proxy.terminate()
                try:
                    self.proxy.wait(5)
                except subprocess.TimeoutExpired:
                    self.proxy.kill()
                    self.proxy.wait()
            self.proxy = None
        # Deleting a namespace deletes its end of the veth pair, and so the pair.
        for ns in self._made_ns:
            _ip("netns", "del", ns, check=False)
        for link in self._made_links:
            if _ip("link", "show", link, check=False).returncode == 0:
                _ip("link", "del", link, check=False)
        self._made_ns, self._made_links = [], []
        if self._signals is not None:
            self._signals.__exit__(None, None, None)
            self._signals = None


def _enter(fd: int) -> None:
    """In a child before exec: into the network namespace open at fd."""
    if _libc.setns(fd, _CLONE_NEWNET) != 0:
        os._exit(125)


def _cpu_s(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

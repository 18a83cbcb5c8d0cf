"""Connections over real processes: C++ components in `scabench-host`
processes, driven over real CORBA from this process as an SCA launcher
other than ours would drive them (reconnects, stop and start), with the
hosts' own status lines ("eos NAME COUNT") as the evidence."""
import os
import select
import subprocess
import time

from py_components_world import LOOPBACK, S, WAIT_S, end_process, orb, props  # noqa: F401 (orb: a fixture)
from scabench.paths import program


class Host:
    """One scabench-host with the given components ("name:kind"), its
    resources, and the status lines it wrote."""

    def __init__(self, orb, record_dir, *components):
        read_fd, write_fd = os.pipe()
        args = [str(program("scabench-host")), "--host", "h", "--status-fd", str(write_fd), "--record-dir",
                str(record_dir)]
        for c in components:
            args += ["--component", f"{c}:double"]
        self.proc = subprocess.Popen(args + LOOPBACK, pass_fds=(write_fd,), stderr=subprocess.PIPE, text=True)
        os.close(write_fd)
        self.status = os.fdopen(read_fd)
        self.lines, self.res = [], {}
        while len(self.res) < len(components):
            word = self._line().split()
            assert word[0] == "ready", word
            self.res[word[1]] = orb.string_to_object(word[2])._narrow(S.CF.Resource)

    def _line(self, timeout=WAIT_S):
        ready, _, _ = select.select([self.status], [], [], timeout)
        assert ready, f"no status line within {timeout} s; so far: {self.lines}"
        line = self.status.readline()
        assert line, f"the host ended: {self.proc.wait(WAIT_S)}, {self.proc.stderr.read()}"
        self.lines.append(line.strip())
        return line

    def wait_for_end(self, name, timeout=WAIT_S):
        """The count of the next "eos NAME COUNT" line; fails (no hang) if none comes in time."""
        deadline = time.monotonic() + timeout
        while True:
            word = self._line(max(0.01, deadline - time.monotonic())).split()
            if word[:2] == ["eos", name]:
                return int(word[2])
            assert word[0] != "error", word

    def close(self):
        for r in self.res.values():
            r.releaseObject()
        assert self.proc.wait(WAIT_S) == 0
        self.status.close()


def connect(uses, provides, connection_id):
    uses.getPort("out")._narrow(S.CF.Port).connectPort(provides.getPort("in"), connection_id)


def test_a_credits_connection_made_again_to_another_receiver_streams_and_ends(orb, tmp_path):
    """The producer's second connection numbers from 0. Numbering on from the
    first connection's count, it waited for ever for credits its new
    receiver could not grant."""
    sender = Host(orb, tmp_path, "producer:producer")
    receivers = Host(orb, tmp_path, "a:sink", "b:sink")
    try:
        p, a, b = sender.res["producer"], receivers.res["a"], receivers.res["b"]
        p.configure(props(packets=40, samples=16, out__call="oneway", out__flow="credits(4)", record_capacity=64))
        for sink in (a, b):
            sink.configure(props(in__flow="credits(4)", record_capacity=64))
        connect(p, a, "producer-a")
        a.start()
        p.start()
        assert receivers.wait_for_end("a") == 40
        p.stop()
        p.getPort("out")._narrow(S.CF.Port).disconnectPort("producer-a")
        connect(p, b, "producer-b")
        b.start()
        p.start()
        assert receivers.wait_for_end("b") == 40
        # Stopped and started again on the same connection: b's port is
        # re-armed, and the second stream's end is not swallowed.
        p.stop()
        b.stop()
        b.start()
        p.start()
        assert receivers.wait_for_end("b") == 40
        p.stop()
        sender.close()
        receivers.close()
    finally:
        end_process(sender.proc)
        end_process(receivers.proc)

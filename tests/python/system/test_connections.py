"""Connections over real processes: C++ components in `scabench-host`
processes, driven over real CORBA from this process as an SCA launcher
other than ours would drive them (reconnects, stop and start), with the
hosts' own status lines ("eos NAME COUNT") as the evidence."""

import os
import subprocess
import time

import pytest
from py_components_world import LOOPBACK, WAIT_S, S, end_process, orb, props  # noqa: F401 (orb: a fixture)

from scabench.paths import program
from scabench.run.processes import LineReader
from scabench.run.records import read_records


class Host:
    """One scabench-host with the given components ("name:kind"), its
    resources, and the status lines it wrote."""

    def __init__(self, orb, record_dir, *components):
        read_fd, write_fd = os.pipe()
        args = [
            str(program("scabench-host")),
            "--host",
            "h",
            "--status-fd",
            str(write_fd),
            "--record-dir",
            str(record_dir),
        ]
        for c in components:
            args += ["--component", f"{c}:double"]
        self.proc = subprocess.Popen(args + LOOPBACK, pass_fds=(write_fd,), stderr=subprocess.PIPE, text=True)
        os.close(write_fd)
        self.status, self.reader = read_fd, LineReader(read_fd)
        self.lines, self.res = [], {}
        try:
            while len(self.res) < len(components):
                word = self._line().split()
                assert word[0] == "ready", word
                self.res[word[1]] = orb.string_to_object(word[2])._narrow(S.CF.Resource)
        except BaseException:
            end_process(self.proc)  # a host that never got ready is not left behind
            raise

    def _line(self, timeout=WAIT_S):
        try:
            line = self.reader.line(timeout)
        except TimeoutError:
            raise AssertionError(f"no status line within {timeout} s; so far: {self.lines}") from None
        assert line is not None, f"the host ended: {self.proc.wait(WAIT_S)}, {self.proc.stderr.read()}"
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
        os.close(self.status)


def connect(uses, provides, connection_id):
    uses.getPort("out")._narrow(S.CF.Port).connectPort(provides.getPort("in"), connection_id)


def disconnect(uses, connection_id):
    uses.getPort("out")._narrow(S.CF.Port).disconnectPort(connection_id)


def completed(record_dir, name):
    """Packets the component has finished, from its record file as it runs."""
    return int(read_records(record_dir / f"{name}.rec").done_ns.astype(bool).sum())


def wait_until(predicate, what):
    deadline = time.monotonic() + WAIT_S
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen within {WAIT_S} s"
        time.sleep(0.01)


@pytest.mark.parametrize("transport", ["orb", "shm"])
def test_a_credits_connection_made_again_to_another_receiver_streams_and_ends(orb, tmp_path, transport):
    """The producer (100 packets, one every 10 ms, credits of 4) is stopped
    part way, reconnected to another receiver and started again: it goes on
    with its next packet, and its new connection numbers from 0. Numbering
    on from the first connection's count, it waited for ever for credits its
    new receiver could not grant. Then that receiver, stopped, takes a second
    producer in its place, and the second stream's end is not swallowed."""
    sender = Host(orb, tmp_path, "producer:producer", "producer2:producer")
    try:
        receivers = Host(orb, tmp_path, "a:sink", "b:sink")
    except BaseException:
        end_process(sender.proc)
        raise
    try:
        p, p2, a, b = (sender.res["producer"], sender.res["producer2"], receivers.res["a"], receivers.res["b"])
        for producer in (p, p2):
            producer.configure(
                props(
                    packets=100,
                    samples=16,
                    period_us=10_000,
                    out__call="oneway",
                    out__flow="credits(4)",
                    out__transport=transport,
                    record_capacity=128,
                )
            )
        for sink in (a, b):
            sink.configure(props(in__flow="credits(4)", record_capacity=256))
        connect(p, a, "producer-a")
        a.start()
        p.start()
        wait_until(lambda: completed(tmp_path, "a") >= 8, "8 packets at a")  # past a new gate's 4 credits
        p.stop()
        to_a = completed(tmp_path, "a")
        assert to_a < 100, "the producer finished before it was stopped: nothing left for the new connection"
        disconnect(p, "producer-a")
        connect(p, b, "producer-b")
        b.start()
        p.start()
        assert receivers.wait_for_end("b") == 100 - to_a
        # b stopped, producer's connection dropped, producer2 in its place:
        # a second stream, which ends too.
        b.stop()
        disconnect(p, "producer-b")
        connect(p2, b, "producer2-b")
        b.start()
        p2.start()
        assert (
            receivers.wait_for_end("b") == 100
        )  # the second stream's own packets: an end announces its stream's count
        p.stop()
        p2.stop()
        sender.close()
        receivers.close()
    finally:
        end_process(sender.proc)
        end_process(receivers.proc)

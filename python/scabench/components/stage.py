"""The stage in Python (`scabench-py-stage`), the same kind as the C++ one
(cpp/components/stage.cpp): it does a fixed amount of work on each packet,
then forwards the packet, header and samples as they came, on its out-port.

Properties, as the C++ stage's:
  work            cpu: busy for work_us of this thread's CPU time
                  (time.thread_time, so 5 ms is 5 ms of CPU even on a shared
                  core); sleep: waits work_us (work done by another device);
                  none.
  work_us         work per packet, microseconds (default 5000).
  work_jitter_us  each packet takes work_us +- up to this much, fixed by its
                  sequence number (the C++ stage's splitmix64 draw, so both
                  stages see the same "data").
plus the ports' policy properties (policy.py).
"""

import time

from scabench.components import program
from scabench.components.component import Component
from scabench.components.properties import one_of

WORK_KINDS = ("none", "cpu", "sleep")
_MASK = (1 << 64) - 1


def jitter_ns(sequence, jitter):
    """A fixed pseudo-random offset in [-jitter, +jitter] for a sequence
    number: splitmix64, as the C++ stage draws it."""
    z = (sequence + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return z % (2 * jitter + 1) - jitter


def busy_ns(duration_ns):
    """Burns `duration_ns` of this thread's CPU time: measured on the thread's
    own clock, time another thread or process takes from the core does not
    count."""
    end = time.thread_time_ns() + duration_ns
    while time.thread_time_ns() < end:
        pass


class Stage(Component):
    def __init__(self, context):
        super().__init__(context)
        # The work may change while the stage runs, as the C++ stage's: from the next packet.
        self.properties.declare("work", "cpu", "none, cpu or sleep", one_of(*WORK_KINDS), while_started=True)
        self.properties.declare(
            "work_us", 5000, "work per packet, microseconds", type="unsigned long", while_started=True
        )
        self.properties.declare(
            "work_jitter_us",
            0,
            "data-dependent work: each packet takes work_us +- up to this "
            "much, fixed by its sequence number (like a coder whose time depends on its input)",
            type="unsigned long",
            while_started=True,
        )
        self.out = self.add_out_port("out", description="every packet taken in, after its work")
        self.add_in_port("in", self.process, description="the packets to work on")
        self._work, self._work_ns, self._jitter_ns = "cpu", 0, 0

    def on_start(self):
        self._read_work()

    def on_configure(self):
        self._read_work()

    def _read_work(self):
        # Where a packet reads its work: each attribute is replaced whole, so
        # a packet sees the old value or the new one.
        self._work = self.properties["work"]
        self._work_ns = self.properties["work_us"] * 1000
        self._jitter_ns = self.properties["work_jitter_us"] * 1000

    def process(self, header, samples):
        ns = self._work_ns
        if self._jitter_ns:
            ns = max(0, ns + jitter_ns(header.sequence_number, self._jitter_ns))
        if self._work == "cpu":
            busy_ns(ns)
        elif self._work == "sleep":
            time.sleep(ns / 1e9)
        self.out.push(header, samples)


def main():
    program.main(Stage, prog="scabench-py-stage", kind="stage")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A decimating FIR filter as a scabench component in Python: it low-pass
filters the samples with `taps` taps and keeps every `decimation`-th output.

It keeps state between packets, as any filter must when a stream is cut into
packets: the last taps - 1 input samples (the filter's memory) and where the
next kept output falls. So the stream it sends is the one it would send if
the whole input came in one packet: scipy.signal.lfilter(h, 1, x)[::decimation],
which check.py verifies from a run's capture.

Run by a spec as an external component (decimating-fir.toml): the launcher
starts this file with the SCA exec parameters; the interpreter on its first
line must be one with scabench and omniORBpy (the venv's python3 on PATH).
"""

import threading

import numpy as np
from scipy.signal import firwin, lfilter

from scabench.components.component import Component
from scabench.components.program import main


class DecimatingFir(Component):
    def __init__(self, context):
        super().__init__(context)
        self.properties.declare("taps", 31, "taps of the low-pass filter", type="unsigned long")
        self.properties.declare("decimation", 4, "keep one output sample in this many", type="unsigned long")
        self.out = self.add_out_port("out")
        self.add_in_port("in", self.on_packet)
        # The ORB may call on_packet on several threads: the state changes under this lock.
        self._state_lock = threading.Lock()

    def on_start(self):
        # Read once per start: the filter is fixed while the stream runs.
        taps, self._decimation = self.properties["taps"], self.properties["decimation"]
        if taps < 1 or self._decimation < 1:
            raise ValueError("taps and decimation must be at least 1")
        # Cut-off at half the output's Nyquist frequency, so what is kept does not alias.
        self._h = firwin(taps, 1.0 / self._decimation)
        self._zi = np.zeros(taps - 1)  # the filter's memory: starts empty, then carried across packets
        self._phase = 0  # index, in this packet, of the next output to keep

    def on_packet(self, header, samples):
        with self._state_lock:
            y, self._zi = lfilter(self._h, 1.0, np.asarray(samples, dtype=np.float64), zi=self._zi)
            kept = y[self._phase :: self._decimation]
            # The next packet's first kept output: where this packet's stride runs past its end.
            self._phase = (self._phase - len(y)) % self._decimation
            self.out.push(header, kept.tolist())


if __name__ == "__main__":
    main(DecimatingFir, prog="decimating_fir")

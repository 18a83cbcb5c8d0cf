#!/usr/bin/env python3
"""Runs decimating-fir.toml over real processes and checks what the sink
captured against scipy doing the same filtering on the same input:

    python examples/python/decimating-fir/check.py

The input is computed from the producer's properties (scabench.producer_signal),
the expected output with scipy.signal.lfilter on the whole stream at once,
and the capture read with scabench.read_recording. Exit 0: every sample
matches; 1: they differ (printed)."""

import sys
from pathlib import Path

import numpy as np
from scipy.signal import firwin, lfilter

import scabench

HERE = Path(__file__).resolve().parent


def main() -> int:
    waveform = scabench.load(HERE / "decimating-fir.toml")
    result = waveform.run()
    print(scabench.text(result))
    sink = result.stages[-1]

    producer, fir = waveform["producer"].properties, waveform["fir"].properties
    x = scabench.producer_signal(producer)
    h = firwin(fir["taps"], 1.0 / fir["decimation"])
    expected = lfilter(h, 1.0, x)[:: fir["decimation"]]
    got = scabench.read_recording(sink.capture)

    print(f"captured {got.size} samples in {sink.capture}.sigmf-data; expected {expected.size}")
    if got.size != expected.size or not np.allclose(got, expected, rtol=1e-12, atol=1e-12):
        worst = np.max(np.abs(got[: expected.size] - expected[: got.size])) if got.size and expected.size else None
        print(f"MISMATCH: largest difference {worst}")
        return 1
    print(f"every sample matches scipy.signal.lfilter (checksum {sink.checksum!r}, numpy's sum {got.sum()!r})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

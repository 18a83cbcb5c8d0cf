"""What the producer sends, computed with numpy: the same samples the C++
producer (cpp/components/producer.cpp) puts in its packets, so that a
pipeline's output can be checked against a computation on its input
(docs/architecture.md, "The producer's signal").

    x = scabench.producer_signal({"signal": "noise", "seed": 7, "amplitude": 1.0, "packets": 20, "samples": 1000})
"""

import numpy as np

from scabench.recording import DATATYPES, DTYPES, read_recording

# The producer's defaults for what shapes its signal (its catalogue's:
# `scabench components producer`).
DEFAULTS = {
    "signal": "sine",
    "packets": 1000,
    "samples": 1024,
    "amplitude": 100.0,
    "radians_per_sample": 0.01,
    "seed": 1,
    "path": "",
    "drop_packet": -1,
}
MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """splitmix64 of each uint64 (cpp/core/include/scabench/core/splitmix.hpp), wrapping as C++ does."""
    z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def producer_signal(properties: dict, sample_type: str = "double") -> np.ndarray:
    """Every sample a producer with these properties sends, in order, as the
    sample type's numpy dtype: packets * samples of them (less the packet
    drop_packet loses). Keys left out take the producer's defaults."""
    p = {**DEFAULTS, **properties}
    packets, samples, amplitude = int(p["packets"]), int(p["samples"]), float(p["amplitude"])
    j = np.arange(packets * samples, dtype=np.uint64)  # each sample's place in the stream
    with np.errstate(over="ignore"):
        if p["signal"] == "sine":  # sample i of every packet: the same packet every time
            one = amplitude * np.sin(float(p["radians_per_sample"]) * np.arange(samples, dtype=np.float64))
            values = np.tile(one, packets)
        elif p["signal"] == "ramp":
            values = amplitude * j.astype(np.float64) / float(packets * samples)
        elif p["signal"] == "noise":
            u = (splitmix64(np.uint64(p["seed"]) + j) >> np.uint64(11)).astype(np.float64) * 2.0**-53
            values = amplitude * (2 * u - 1)
        elif p["signal"] == "file":
            recording = read_recording(p["path"])
            values = recording[(j % np.uint64(recording.size)).astype(np.int64)]
        else:
            raise ValueError(f"signal {p['signal']!r}: the producer sends sine, ramp, noise or file")
    dtype = DTYPES[DATATYPES[sample_type]]
    if dtype.kind in "iu" and p["signal"] != "file":
        # As C++ converts: truncated toward zero, then wrapped to the type's width.
        values = np.trunc(values).astype(np.int64).astype(dtype)
    else:
        values = values.astype(dtype)
    if 0 <= int(p["drop_packet"]) < packets:
        values = np.delete(values, np.s_[int(p["drop_packet"]) * samples : (int(p["drop_packet"]) + 1) * samples])
    return values

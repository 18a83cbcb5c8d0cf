"""SigMF recordings (https://sigmf.org), as the capture sink writes them and
the producer's `signal = "file"` plays them: NAME.sigmf-data (the samples,
raw, little-endian) and NAME.sigmf-meta (JSON, its `core:datatype` one of
DATATYPES). The metadata is read and checked with the `sigmf` package; the
samples with numpy, in their own type (sigmf's reader scales them to float).

    import scabench
    x = scabench.read_recording("out/capture")       # numpy array, the sample type's dtype
    scabench.write_recording("in/tone", np.sin(0.1 * np.arange(4096)))   # rf64_le, for a double pipeline
"""

import os
from pathlib import Path

import numpy as np

from scabench.errors import ScabenchError

# A spec's sample type: its SigMF datatype and numpy's dtype for it.
DATATYPES = {"double": "rf64_le", "float": "rf32_le", "short": "ri16_le", "octet": "ru8"}
DTYPES: dict[str, np.dtype] = {
    "rf64_le": np.dtype("<f8"),
    "rf32_le": np.dtype("<f4"),
    "ri16_le": np.dtype("<i2"),
    "ru8": np.dtype("u1"),
}
EXTENSIONS = (".sigmf-data", ".sigmf-meta", ".sigmf")


def recording_base(path: str | os.PathLike) -> Path:
    """NAME for "NAME", "NAME.sigmf-meta", "NAME.sigmf-data" or "NAME.sigmf"
    (as the runtime names a recording: cpp/components/sigmf.hpp)."""
    text = os.fspath(path)
    for ext in EXTENSIONS:
        if text.endswith(ext) and len(text) > len(ext):
            return Path(text[: -len(ext)])
    return Path(text)


def recording_datatype(path: str | os.PathLike) -> str:
    """The recording's `core:datatype`, its metadata checked against SigMF's
    schema; a ScabenchError says why a recording cannot be read."""
    import warnings

    from sigmf import sigmffile
    from sigmf.error import SigMFError

    base = recording_base(path)
    for ext in (".sigmf-meta", ".sigmf-data"):
        if not Path(f"{base}{ext}").is_file():
            raise ScabenchError(f"{base}{ext}: no such file (a SigMF recording is NAME.sigmf-meta and NAME.sigmf-data)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            meta = sigmffile.fromfile(str(base), skip_checksum=True)
    except (SigMFError, ValueError, OSError) as exc:
        raise ScabenchError(f"{base}.sigmf-meta is not valid SigMF metadata: {str(exc).splitlines()[0]}") from None
    datatype = meta.get_global_field("core:datatype")
    if datatype not in DTYPES:
        raise ScabenchError(
            f"{base}.sigmf-meta: datatype {datatype!r}; scabench plays and captures {', '.join(DTYPES)}"
        )
    size = Path(f"{base}.sigmf-data").stat().st_size
    if size == 0 or size % DTYPES[datatype].itemsize:
        raise ScabenchError(
            f"{base}.sigmf-data holds {size} bytes, not a whole number (at least one) of {datatype} samples"
        )
    return datatype


def read_recording(path: str | os.PathLike) -> np.ndarray:
    """Every sample of a recording, in its own dtype (DTYPES)."""
    datatype = recording_datatype(path)
    return np.fromfile(f"{recording_base(path)}.sigmf-data", dtype=DTYPES[datatype])


def write_recording(path: str | os.PathLike, samples, sample_type: str = "double") -> Path:
    """Writes `samples` as a recording of `sample_type` (a spec's run.sample_type),
    for the producer's `signal = "file"`; returns NAME."""
    from sigmf import SigMFFile

    if sample_type not in DATATYPES:
        raise ScabenchError(f"sample_type {sample_type!r}: use one of {', '.join(DATATYPES)}")
    base = recording_base(path)
    base.parent.mkdir(parents=True, exist_ok=True)
    np.asarray(samples).astype(DTYPES[DATATYPES[sample_type]]).tofile(f"{base}.sigmf-data")
    meta = SigMFFile(
        data_file=f"{base}.sigmf-data",
        global_info={
            "core:datatype": DATATYPES[sample_type],
            "core:version": "1.0.0",
            "core:recorder": "scabench.write_recording",
        },
    )
    meta.add_capture(0, metadata={})
    meta.tofile(f"{base}.sigmf-meta")
    return base

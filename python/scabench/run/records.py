"""Reads the per-packet record files that components write (the layout is
RecordFileHeader / PacketRecord in cpp/core/include/scabench/core/record_log.hpp)."""

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# What a component's ports refused from peers, by reason: the header's
# `refused` counters, in the order of the runtime's Refusal (record_log.hpp).
REFUSAL_REASONS = ("sequence", "length", "eos", "credit", "threads", "sender")
HEADER = np.dtype(
    [
        ("magic", "S8"),
        ("header_size", "<u4"),
        ("record_size", "<u4"),
        ("capacity", "<u8"),
        ("claimed", "<u8"),
        ("max_concurrent", "<u4"),
        ("unsent", "<u4"),
        ("completed", "<u8"),
        ("reorder_peak", "<u8"),
        ("skipped", "<u8"),
        ("late", "<u8"),
        ("duplicates", "<u8"),
        ("held_peak", "<u8"),
        ("suspends", "<u8"),
        ("send_stalls", "<u8"),
    ]
    + [(f"refused_{reason}", "<u4") for reason in REFUSAL_REASONS]
)
# The gauges that follow in a header of 192 bytes (RecordFileHeader's
# workerQueued ... upcalls): what the component holds now, summed over its
# ports and connections (docs/reference/result-files.md#record-header). A
# file written before them has the 128-byte header alone; its header_size
# says which, and its records begin there.
GAUGES = ("worker_queued", "reorder_held", "ring_depth", "credits_outstanding", "upcalls")
HEADER_WITH_GAUGES = np.dtype(HEADER.descr + [(g, "<i8") for g in GAUGES] + [("reserved", "<u8", (3,))])
RECORD = np.dtype(
    [("sequence", "<u8"), ("arrive_ns", "<i8"), ("done_ns", "<i8"), ("thread_id", "<u4"), ("flags", "<u4")]
)
# unsent: packets an output port gave up while they waited for credits or a
# resume, because its component was stopped or its connection disconnected
# (0 in files written before the runtime counted them: the field was reserved).
FLOW_FIELDS = ("reorder_peak", "skipped", "late", "duplicates", "held_peak", "suspends", "send_stalls", "unsent")
assert HEADER.itemsize == 128 and HEADER_WITH_GAUGES.itemsize == 192 and RECORD.itemsize == 32
MAGIC = b"SCABREC2"


def header_dtype(header_size: int) -> np.dtype:
    """The header a file has, by its header_size: with the gauges or without."""
    for dtype in (HEADER_WITH_GAUGES, HEADER):
        if header_size == dtype.itemsize:
            return dtype
    raise ValueError(f"a record header of {header_size} bytes (this scabench reads 128 or 192)")


def gauges_of(header: np.void) -> dict[str, int] | None:
    """A header's gauges ({name: value now}); None for a file written before
    them. A gauge is a sum of changes made by several threads without a lock
    between them, so a read may catch it a moment below zero: shown as 0."""
    if header.dtype.names is None or GAUGES[0] not in header.dtype.names:
        return None
    return {g: max(0, int(header[g])) for g in GAUGES}


@dataclass
class Records:
    """One component's packets in arrival order (producer: in send order)."""

    sequence: np.ndarray
    arrive_ns: np.ndarray
    done_ns: np.ndarray
    thread_id: np.ndarray
    max_concurrent: int
    overflowed: int  # packets that arrived after the preallocated records ran out
    flow: dict  # ordering and flow-control counts (RecordFileHeader)
    refused: dict = field(default_factory=dict)  # reason -> count (REFUSAL_REASONS)
    # From each record's flags (recordFlags, record_log.hpp): the connection
    # it came in on (low 16 bits: its number at the component, across its
    # provides ports, in attach order) and its stream id (high 16 bits).
    # Zero in files written before, and for a source.
    connection: np.ndarray | None = None
    stream: np.ndarray | None = None
    # The header's gauges when the file was read (after a run: what was left
    # held at its end); None for a file written before the runtime kept them.
    gauges: dict[str, int] | None = None


def read_records(path: str | os.PathLike) -> "Records":
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size < HEADER.itemsize:
        raise ValueError(f"{path}: too short for a record file")
    header = raw[: HEADER.itemsize].view(HEADER)[0]
    if header["magic"] != MAGIC or header["record_size"] != RECORD.itemsize:
        raise ValueError(f"{path}: not a scabench record file")
    try:
        dtype = header_dtype(int(header["header_size"]))
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if raw.size < dtype.itemsize:
        raise ValueError(f"{path}: too short for its header")
    header = raw[: dtype.itemsize].view(dtype)[0]
    count = int(min(header["claimed"], header["capacity"]))
    body = raw[dtype.itemsize : dtype.itemsize + count * RECORD.itemsize].view(RECORD)
    flags = body["flags"]
    return Records(
        body["sequence"].astype(np.int64),
        body["arrive_ns"],
        body["done_ns"],
        body["thread_id"],
        int(header["max_concurrent"]),
        int(header["claimed"] - count),
        {k: int(header[k]) for k in FLOW_FIELDS},
        {reason: int(header[f"refused_{reason}"]) for reason in REFUSAL_REASONS},
        (flags & 0xFFFF).astype(np.int64),
        (flags >> 16).astype(np.int64),
        gauges_of(header),
    )


def refusals(records: "Records") -> dict[str, Any]:
    """A component's refusals as the result gives them: the total, and by reason."""
    return {"refused": sum(records.refused.values()), "refused_by": dict(records.refused)}

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
RECORD = np.dtype(
    [("sequence", "<u8"), ("arrive_ns", "<i8"), ("done_ns", "<i8"), ("thread_id", "<u4"), ("flags", "<u4")]
)
# unsent: packets an output port gave up while they waited for credits or a
# resume, because its component was stopped or its connection disconnected
# (0 in files written before the runtime counted them: the field was reserved).
FLOW_FIELDS = ("reorder_peak", "skipped", "late", "duplicates", "held_peak", "suspends", "send_stalls", "unsent")
assert HEADER.itemsize == 128 and RECORD.itemsize == 32


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


def read_records(path: str | os.PathLike) -> "Records":
    raw = np.fromfile(path, dtype=np.uint8)
    if raw.size < HEADER.itemsize:
        raise ValueError(f"{path}: too short for a record file")
    header = raw[: HEADER.itemsize].view(HEADER)[0]
    if header["magic"] != b"SCABREC2" or header["record_size"] != RECORD.itemsize:
        raise ValueError(f"{path}: not a scabench record file")
    count = int(min(header["claimed"], header["capacity"]))
    body = raw[HEADER.itemsize : HEADER.itemsize + count * RECORD.itemsize].view(RECORD)
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
    )


def refusals(records: "Records") -> dict[str, Any]:
    """A component's refusals as the result gives them: the total, and by reason."""
    return {"refused": sum(records.refused.values()), "refused_by": dict(records.refused)}

"""What `scabench bulk` measured, as figures: each hop's bytes per second
beside this machine's memcpy bandwidth at the same packet size, and
REDHAWK's published BulkIO figures for reference. Functions of what was
measured: nothing here runs anything (measure.py does)."""

from typing import Any

from scabench.errors import ScabenchError
from scabench.measure.campaign import spread

# The default sizes: 1 KB to 4 MB, a factor of 4 apart; --quick's three.
SIZES = (1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20)
QUICK_SIZES = (1 << 10, 64 << 10, 1 << 20)
TRANSPORTS = ("tcp", "unix", "shm")
CALLS = ("twoway", "oneway")
# Packets a run sends: BYTES_PER_RUN of packets, within [MIN_PACKETS,
# MAX_PACKETS] (small packets are bound by the calls, not the bytes).
BYTES_PER_RUN, MIN_PACKETS, MAX_PACKETS = 512 << 20, 100, 5000
QUICK_BYTES_PER_RUN, QUICK_MIN_PACKETS, QUICK_MAX_PACKETS = 32 << 20, 20, 500
MAX_SIZE = 32 << 20

# REDHAWK's published BulkIO figures, as ../shared/reference/redhawk-facts.md
# gives them: REDHAWK 2.2.8 manual, "Optimization" appendix, measured on an
# 8-core 3.4 GHz machine with 8 MB of cache, figures read from its plots.
# (transport, packet size in bytes or None where the figure is a level,
# bytes per second, what the source says.)
REDHAWK_SOURCE = 'REDHAWK 2.2.8 manual, "Optimization" appendix (8 cores, 3.4 GHz, 8 MB cache; read from its plots)'
REDHAWK_FIGURES = (
    ("tcp", None, 2.0e9, "one BulkIO link on loopback TCP levels off at about 2 GB/s from about 500 kB packets"),
    ("unix", 400_000, 6.2e9, "Unix sockets: about 6.2 GB/s at 400 kB"),
    ("unix", 1_000_000, 7.2e9, "Unix sockets: about 7.2 GB/s at 1 MB"),
    ("unix", 2_000_000, 9.2e9, "Unix sockets: about 9.2 GB/s at 2 MB"),
)


def parse_sizes(text: str) -> tuple[int, ...]:
    """--sizes: packet sizes in bytes, comma-separated, with an optional K or
    M suffix (1024 and 1024²), each from 1 byte to 32 MB, each once;
    ScabenchError naming --sizes otherwise."""
    out: list[int] = []
    for item in text.split(","):
        item = item.strip()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(item[-1:].upper(), 1)
        digits = item[:-1] if scale > 1 else item
        value = int(digits) * scale if digits.isdigit() else None
        if value is None or not 1 <= value <= MAX_SIZE:
            raise ScabenchError(
                f"--sizes: {item!r} is not valid; give packet sizes in bytes (K, M: 1024, 1024²) from 1 to 32M, "
                "comma-separated (e.g. 1K,64K,1M,4M)"
            )
        if value in out:
            raise ScabenchError(f"--sizes: {item} is given twice")
        out.append(value)
    return tuple(out)


def parse_transports(text: str) -> tuple[str, ...]:
    """--transports: some of tcp, unix, shm, comma-separated."""
    out = tuple(t.strip() for t in text.split(","))
    for t in out:
        if t not in TRANSPORTS:
            raise ScabenchError(f"--transports: {t!r} is not valid; use some of: {', '.join(TRANSPORTS)}")
    if len(set(out)) != len(out):
        raise ScabenchError("--transports: a transport is given twice")
    return out


def packets_for(size: int, quick: bool) -> int:
    """Packets a run of this size sends (the module's budget)."""
    if quick:
        return max(QUICK_MIN_PACKETS, min(QUICK_MAX_PACKETS, QUICK_BYTES_PER_RUN // size))
    return max(MIN_PACKETS, min(MAX_PACKETS, BYTES_PER_RUN // size))


def throughput(size: int, packets: int, last_packet_ms: float) -> float:
    """Bytes per second through the hop: every packet's bytes over the time
    from the first send to the receiver's last packet."""
    if last_packet_ms <= 0:
        raise ValueError(f"the last packet came {last_packet_ms} ms after the first send")
    return size * packets / (last_packet_ms / 1000.0)


def size_label(size: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def rate_label(bps: float | None) -> str:
    if bps is None:
        return "–"
    return f"{bps / 1e9:.2f} GB/s" if bps >= 1e8 else f"{bps / 1e6:.1f} MB/s"


def gigabytes(bps: float | None) -> str:
    """Bytes per second in GB/s (10^9), three significant figures."""
    return "–" if bps is None else f"{bps / 1e9:.3g}"


def summarise(doc: dict[str, Any]) -> None:
    """Writes each case's figures into it ("summary"): the median bytes per
    second over its runs, min and max, and that median over the memcpy
    bandwidth at its size."""
    memcpy = {int(k): v for k, v in doc["memcpy"].items()}
    for case in doc["cases"]:
        rates = spread(r["bytes_per_s"] for r in case["runs"])
        limit = memcpy.get(case["size"])
        case["summary"] = {
            "runs": rates.n,
            "bytes_per_s": rates.median,
            "min": rates.min,
            "max": rates.max,
            "of_memcpy": rates.median / limit if rates.median is not None and limit else None,
        }


def bulk_table(doc: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The table: a row per packet size, memcpy's bandwidth at that size
    first (the limit), then each transport and call's median, in GB/s
    (10^9 bytes a second), with its share of memcpy."""
    cases = {(c["transport"], c["call"], c["size"]): c.get("summary") for c in doc["cases"]}
    columns = [(t, c) for t in doc["meta"]["transports"] for c in doc["meta"]["calls"]]
    header = ["packet", "memcpy"] + [f"{t} {c}" for t, c in columns]
    rows = []
    for size in doc["meta"]["sizes"]:
        row = [size_label(size), gigabytes(doc["memcpy"].get(str(size)))]
        for key in columns:
            s = cases.get((*key, size))
            if not s or s["bytes_per_s"] is None:
                row.append("–")
            else:
                share = f" ({s['of_memcpy']:.0%})" if s["of_memcpy"] is not None else ""
                row.append(gigabytes(s["bytes_per_s"]) + share)
        rows.append(row)
    return header, rows


def reference_rows() -> list[list[str]]:
    """REDHAWK's figures as rows: transport, packet, bytes per second, what the source says."""
    return [
        [t, "level" if size is None else f"{size / 1000:g} kB", rate_label(bps), said]
        for t, size, bps, said in REDHAWK_FIGURES
    ]


def bulk_csv_rows(doc: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """`--csv`: a row per transport, call and size."""
    header = [
        "transport",
        "call",
        "size_bytes",
        "packets",
        "runs",
        "bytes_per_s_median",
        "bytes_per_s_min",
        "bytes_per_s_max",
        "memcpy_bytes_per_s",
        "of_memcpy",
    ]
    rows = []
    for c in doc["cases"]:
        s = c.get("summary") or {}
        rows.append(
            [
                c["transport"],
                c["call"],
                c["size"],
                c["packets"],
                s.get("runs"),
                s.get("bytes_per_s"),
                s.get("min"),
                s.get("max"),
                doc["memcpy"].get(str(c["size"])),
                s.get("of_memcpy"),
            ]
        )
    return header, rows

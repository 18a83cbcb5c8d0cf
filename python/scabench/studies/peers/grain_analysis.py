"""What `scabench peers --grain` measured, as figures: each point's ratio to
its floor and to plain threads, per peer. A point is one work per packet
and one packet size; every peer runs it once a round. Functions of what was
measured: nothing here runs anything (grain_measure.py does).

The ratio to plain threads is the one that compares frameworks at every
grain: at no work per packet the floor is nothing (a pipeline that does no
work has no least time), so the ratio to the floor is left out there, and
at fine grain the floor says only how far from ideal every peer is, while
the threads peer says what moving packets between threads, and nothing
else, costs on this machine."""

from collections.abc import Iterable, Sequence
from typing import Any

from scabench.components.message_limit import HEADER_ROOM, message_limit
from scabench.errors import ScabenchError
from scabench.run.plan import BASE_ORB_OPTIONS
from scabench.studies.peers.analysis import spread, undisturbed

# The study's default grid: the paper's grain (5 ms) down to no work at all,
# packets of 16 to 65,536 samples (doubles: 128 B to 512 KB).
WORK_US = (5000, 500, 50, 5, 0)
SAMPLES = (16, 1024, 65536)
QUICK_WORK_US = (50, 0)
QUICK_SAMPLES = (1024,)
THREADS = "threads"  # the peer every other is set against
# What a run may take: enough packets that the hand-offs, not the start,
# decide the time (at least MIN_PACKETS), at most STAGE_BUDGET_US of work
# per stage, MAX_PACKETS packets and MAX_BYTES of packets through a hop.
MIN_PACKETS, MAX_PACKETS = 200, 2000
STAGE_BUDGET_US = 1_000_000
MAX_BYTES = 256 << 20
SAMPLE_BYTES = 8  # the pipeline's samples are doubles


def parse_work(text: str) -> tuple[int, ...]:
    """--grain-work: µs of work per packet and stage, up to a second."""
    return _parse_grid(text, "--grain-work", 0, 1_000_000, "µs", "5000,500,50,5,0")


def parse_sizes(text: str) -> tuple[int, ...]:
    """--grain-sizes: samples per packet, as many as one ORB message carries."""
    return _parse_grid(
        text,
        "--grain-sizes",
        1,
        (message_limit(BASE_ORB_OPTIONS) - HEADER_ROOM) // SAMPLE_BYTES,
        "samples",
        "16,1024,65536",
    )


def _parse_grid(text: str, flag: str, lowest: int, highest: int, unit: str, example: str) -> tuple[int, ...]:
    """A comma-separated list of whole numbers within [lowest, highest], in
    the order given, each once; ScabenchError naming `flag` otherwise."""
    values: list[int] = []
    for item in text.split(","):
        item = item.strip()
        try:
            value = int(item)
        except ValueError:
            value = None
        if value is None or not lowest <= value <= highest:
            raise ScabenchError(
                f"{flag}: {item!r} is not valid; give whole numbers of {unit} from {lowest} to {highest}, "
                f"comma-separated (e.g. {example})"
            )
        if value in values:
            raise ScabenchError(f"{flag}: {value} is given twice")
        values.append(value)
    return tuple(values)


def packets_for(work_us: int, samples: int) -> int:
    """Packets a run of this point sends (the module's budget)."""
    by_work = STAGE_BUDGET_US // work_us if work_us else MAX_PACKETS
    by_bytes = MAX_BYTES // (samples * SAMPLE_BYTES)
    return max(MIN_PACKETS, min(MAX_PACKETS, by_work, by_bytes))


def point_key(work_us: int, samples: int) -> str:
    return f"{work_us}us-{samples}"


def _median(values: Iterable[float | None]) -> float | None:
    return spread(values)["median"]


def point_figures(point: dict[str, Any], peer_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each peer's figures at one point: runs, median time of the last
    packet, median ratio to the floor (None without a floor), median ratio
    to plain threads (the peer's median last packet over that of threads;
    None when threads did not run there), all in order, any run disturbed.
    A peer with no kept run at the point is left out."""
    runs_of = {pid: point["peers"].get(pid, {}).get("runs", []) for pid in peer_ids}
    threads_ms = _median(r["last_packet_ms"] for r in runs_of.get(THREADS, []))
    out = {}
    for pid in peer_ids:
        runs = runs_of[pid]
        if not runs:
            continue
        last = _median(r["last_packet_ms"] for r in runs)
        out[pid] = {
            "runs": len(runs),
            "last_packet_ms": last,
            "ratio_floor": _median(r["ratio"] for r in runs) if point.get("floor_ms") else None,
            "ratio_threads": last / threads_ms if threads_ms and last is not None else None,
            "in_order": all(r["order_problem"] is None for r in runs),
            "disturbed": any(not undisturbed(r) for r in runs),
        }
    return out


def summarise_points(doc: dict[str, Any]) -> None:
    """Writes each point's figures into it ("figures"), from its runs."""
    ids = list(doc["peers"])
    for point in doc["points"]:
        point["figures"] = point_figures(point, ids)


def grain_sizes(doc: dict[str, Any]) -> list[int]:
    """The packet sizes measured, in the order of the grid."""
    return list(dict.fromkeys(p["samples"] for p in doc["points"]))


def grain_table(doc: dict[str, Any], ratio: str, samples: int) -> tuple[list[str], list[list[Any]]]:
    """The table of one ratio ("ratio_threads" or "ratio_floor") at one
    packet size (a table per size keeps it narrow): a row per peer that ran,
    a column per work per packet, in the grid's order; a cell is the median
    ratio, "–" where there is none, marked "!" where a run was out of order."""
    points = [p for p in doc["points"] if p["samples"] == samples]
    header = ["peer"] + [work_label(p["work_us"]) for p in points]
    rows = []
    for pid in doc["peers"]:
        cells = [_cell(p.get("figures", {}).get(pid), ratio) for p in points]
        if any(c != "–" for c in cells):
            rows.append([pid, *cells])
    return header, rows


def _cell(figures: dict[str, Any] | None, ratio: str) -> str:
    if not figures or figures[ratio] is None:
        return "–"
    return f"{figures[ratio]:.3f}" + ("" if figures["in_order"] else "!")


def work_label(work_us: int) -> str:
    if work_us >= 1000 and work_us % 1000 == 0:
        return f"{work_us // 1000} ms"
    return f"{work_us} µs"


def best_ordered_scabench(doc: dict[str, Any], point: dict[str, Any]) -> tuple[str, float] | None:
    """The scabench peer with the least ratio to plain threads at a point,
    every packet in order: (id, ratio), or None."""
    best = [
        (f["ratio_threads"], pid)
        for pid, f in point.get("figures", {}).items()
        if doc["peers"][pid]["kind"] == "scabench" and f["in_order"] and f["ratio_threads"] is not None
    ]
    if not best:
        return None
    ratio, pid = min(best)
    return pid, ratio


def grain_csv_rows(doc: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """`--csv`: a row per point and peer that ran there."""
    header = [
        "work_us",
        "samples",
        "packets",
        "floor_ms",
        "peer",
        "kind",
        "runs",
        "last_packet_ms",
        "ratio_floor",
        "ratio_threads",
        "in_order",
        "disturbed",
    ]
    rows = []
    for p in doc["points"]:
        for pid, f in p.get("figures", {}).items():
            rows.append(
                [
                    p["work_us"],
                    p["samples"],
                    p["packets"],
                    p["floor_ms"],
                    pid,
                    doc["peers"][pid]["kind"],
                    f["runs"],
                    f["last_packet_ms"],
                    f["ratio_floor"],
                    f["ratio_threads"],
                    f["in_order"],
                    f["disturbed"],
                ]
            )
    return header, rows

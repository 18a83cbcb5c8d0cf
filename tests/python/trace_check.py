"""What every trace file must be (run/trace.py, docs/reference/trace.md),
checked alike on known records (unit/test_trace.py) and on a real run
(system/test_trace_runs.py)."""

from collections import defaultdict


def _ns(us):
    """A trace time (µs, to the ns) as whole ns, as a viewer reads it."""
    return round(us * 1000)


def check_trace(doc, packets):
    """The file's structure: every process and thread named, spans nested on
    each track, each flow's end strictly inside a slice of its own packet on
    its track and inside no other packet's slice there (a viewer binds a
    flow to the slice open at its time, the next packet's where they
    touch), time in order on every track (counters included), the window
    stated. Returns (events, {flow id: {"s": event, "f": event}})."""
    events = doc["traceEvents"]
    named = {
        (e["pid"], e.get("tid")) for e in events if e["ph"] == "M" and e["name"] in ("process_name", "thread_name")
    }
    by_track = defaultdict(list)
    for e in events:
        if e["ph"] in ("X", "s", "f"):
            by_track[(e["pid"], e["tid"])].append(e)
        elif e["ph"] == "C":
            by_track[(e["pid"], "counter", e["name"])].append(e)
    for key, track in by_track.items():
        ts = [e["ts"] for e in track]
        assert ts == sorted(ts), f"track {key} is not in time order"
        assert all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in ts)
    spans = defaultdict(list)  # (pid, tid): [(start ns, end ns, args)]
    for e in events:
        if e["ph"] == "X":
            assert (e["pid"], None) in named and (e["pid"], e["tid"]) in named
            assert e["dur"] >= 0
            spans[(e["pid"], e["tid"])].append((_ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"]), e.get("args", {})))
    for track in spans.values():
        open_ends = []
        for start, end, _ in sorted(track, key=lambda s: (s[0], -s[1])):
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1], "spans overlap without nesting"
            open_ends.append(end)
    flows = defaultdict(dict)
    for e in events:
        if e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
            at, packet = e["ts"] * 1000, e["args"]
            slices = [(s, end, a) for s, end, a in spans[(e["pid"], e["tid"])] if "sequence" in a]
            mine = [(s, end) for s, end, a in slices if all(a.get(k) == v for k, v in packet.items())]
            assert any(s < at < end for s, end in mine), f"flow {e} is not strictly inside its packet's slice"
            others = [(s, end) for s, end, a in slices if any(a.get(k) != v for k, v in packet.items())]
            assert not any(s <= at <= end for s, end in others), f"flow {e} touches another packet's slice"
    assert all(set(f) == {"s", "f"} for f in flows.values())
    assert all(f["s"]["args"] == f["f"]["args"] for f in flows.values())
    assert doc["otherData"]["window"]["packets"] == packets
    return events, flows

"""What every trace file must be (run/trace.py, docs/reference/trace.md),
checked alike on known records (unit/test_trace.py) and on a real run
(system/test_trace_runs.py)."""

from collections import defaultdict


def check_trace(doc, packets):
    """The file's structure: every process and thread named, spans nested on
    each track, each flow starting and ending inside a slice of its track,
    time in order on every track (counters included), the window stated.
    Returns (events, {flow id: {"s": event, "f": event}})."""
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
        assert all(isinstance(t, int) for t in ts)
    spans = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            assert (e["pid"], None) in named and (e["pid"], e["tid"]) in named
            assert e["dur"] >= 0
            spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for track in spans.values():
        open_ends = []
        for start, end in sorted(track, key=lambda s: (s[0], -s[1])):
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1], "spans overlap without nesting"
            open_ends.append(end)
    flows = defaultdict(dict)
    for e in events:
        if e["ph"] in ("s", "f"):
            flows[e["id"]][e["ph"]] = e
            assert any(s <= e["ts"] <= end for s, end in spans[(e["pid"], e["tid"])]), "a flow binds to no slice"
    assert all(set(f) == {"s", "f"} for f in flows.values())
    assert doc["otherData"]["window"]["packets"] == packets
    return events, flows

"""What a peer's run gave, in one shape for every peer: the time of the last
packet over the floor, the CPU, and whether every stage saw every packet in
order; and each peer's summary over its runs. Functions of what was
measured: nothing here runs anything (measure.py does)."""

from scabench.errors import ScabenchError
from scabench.measure.campaign import spread as typed_spread
from scabench.model.pipeline import property_value, stage_work_ms


def spread(values):
    # The study's file keeps plain dicts: peers' rows are data keyed by peer.
    return typed_spread(values).as_dict()


def pipeline_of(spec):
    """The paper's pipeline as the peer programs take it, from a spec:
    packets and samples of its producer, and its stages' work, which must
    be the same CPU work at every stage (the peer programs know no other)."""
    sources = spec.packet_sources()
    work, cpu = stage_work_ms(spec)
    if len(sources) != 1 or not work or len(set(work)) != 1 or work != cpu:
        raise ScabenchError(f"{spec.path}: the peers need one producer and stages of equal CPU work")
    return {
        "packets": int(property_value(sources[0], "packets")),
        "samples": int(property_value(sources[0], "samples")),
        "stages": len(work),
        "work_us": int(round(work[0] * 1000)),
    }


def order_problem(received, in_order, packets):
    """None when every stage saw all `packets` packets, each after its
    predecessor; otherwise what went wrong, at the first stage it did."""
    if not received or len(received) != len(in_order):
        return "no stage reported what it received"
    for i, (got, ordered) in enumerate(zip(received, in_order)):
        if got != packets:
            return f"stage {i + 1} received {got} of {packets} packets"
        if ordered != packets:
            return f"stage {i + 1} saw {packets - ordered} of {packets} packets out of order"
    return None


def row_of_program(output, floor_ms):
    """A program peer's JSON line (cpp/peers/peer.hpp) as a row."""
    try:
        last = float(output["last_packet_ms"])
        user, system = float(output["user_s"]), float(output["system_s"])
        received, in_order = [int(v) for v in output["received"]], [int(v) for v in output["in_order"]]
        packets = int(output["packets"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a peer's result line ({type(exc).__name__}: {exc})") from None
    return {
        "last_packet_ms": last,
        "ratio": last / floor_ms,
        "cpu_s": user + system,
        "user_s": user,
        "system_s": system,
        "received": received,
        "in_order": in_order,
        "order_problem": order_problem(received, in_order, packets),
    }


def row_of_run(result, floor_ms, packets):
    """A scabench run (RunResult) as a row. A stage's order is the order in
    which it finished packets (its output), the order it delivered: a
    reorder buffer takes packets in any order and hands them on in order."""
    last = result.stages[-1].last_packet_ms
    received = [s.received for s in result.stages]
    in_order = [s.received - (s.output_reordered_from_previous or 0) for s in result.stages]
    return {
        "last_packet_ms": last,
        "ratio": last / floor_ms,
        "cpu_s": result.cpu.user_s + result.cpu.system_s,
        "user_s": result.cpu.user_s,
        "system_s": result.cpu.system_s,
        "received": received,
        "in_order": in_order,
        "order_problem": order_problem(received, in_order, packets),
    }


def undisturbed(run):
    """A kept run that others left alone (by the guard's bar). A scabench run
    the guard found stalled still counts: the stall detector also flags the
    producer of exp6 on one core, which the worker queues hold while 32
    packets go through the stages, a wait the strategy itself makes."""
    return not run["disturbed"]


def summarise(entry):
    """A peer's summary over its kept runs: median and spread of the ratio,
    the last packet, the CPU and the foreign load; whether all were in order.
    On a busy machine the guard keeps disturbed runs too (the cleanest of
    their attempts), so the ratio is also given over the undisturbed runs."""
    runs = entry["runs"]
    if not runs:
        return None
    return {
        "runs": len(runs),
        "ratio": spread([r["ratio"] for r in runs]),
        "ratio_undisturbed": spread([r["ratio"] for r in runs if undisturbed(r)]),
        "last_packet_ms": spread([r["last_packet_ms"] for r in runs]),
        "cpu_s": spread([r["cpu_s"] for r in runs]),
        "foreign_pct": spread([r["foreign_pct"] for r in runs]),
        "in_order": all(r["order_problem"] is None for r in runs),
        "order_problems": sorted({r["order_problem"] for r in runs if r["order_problem"]}),
    }


def runs_of(doc):
    """Every kept run of every peer (machine_load.load_summary reads them)."""
    return [r for e in doc["peers"].values() for r in e["runs"]]

"""A waveform that is a graph, built in code: experiments/graphs/receiver.toml
as Python. A data stream and a slower control stream are multiplexed (a
merge: two input ports, fan-in), demodulated, and the demodulator's one
output port feeds two connections (fan-out, parallel): the decoder, then
the output sink, and a monitor.

    python examples/python/graph_waveform.py --packets 100             # one run, its table and its paths
    python examples/python/graph_waveform.py --collocated              # all of it in one process
    python examples/python/graph_waveform.py --fanout drop --report r  # another fan-out, and the report page
    python examples/python/graph_waveform.py --toml                    # the spec it builds, as TOML

Exit status: 0, 1 when the run failed, 2 on bad input (one line)."""

import argparse
import json
import sys
from pathlib import Path

import scabench


def receiver(packets=200, collocated=False, fanout="parallel"):
    """receiver.toml (or receiver-collocated.toml), built in code:
    scabench.load("graphs/receiver") gives an equal spec. The control
    stream sends a fifth of the data stream's packets."""
    name = "receiver-collocated" if collocated else "receiver"
    title = "data and control -> mux -> demod -> decoder -> output, and a monitor"
    wf = scabench.Waveform(
        name,
        title=title + (", collocated in one process" if collocated else ""),
        sample_type="double",
        transport="tcp",
    )
    # Two sources, each stamping a stream id of its own.
    data = wf.component("data", "producer", packets=packets, samples=256, period_us=1000, stream_id=1)
    control = wf.component("control", "producer", packets=max(1, packets // 5), samples=64, period_us=5000, stream_id=2)
    mux = wf.component("mux", "merge", work="cpu", work_us=100)
    demod = wf.component("demod", "stage", work="cpu", work_us=200)
    decoder = wf.component("decoder", "stage", work="cpu", work_us=300)
    output = wf.component("output", "sink")
    monitor = wf.component("monitor", "sink")
    wf.policy(call="twoway")
    # Fan-in: each stream into its own port of the merge (port() checks the kind has it).
    wf.connect(data.port("out"), mux.port("in_a"))
    wf.connect(control.port("out"), mux.port("in_b"))
    wf.connect(mux.port("out"), demod.port("in"))
    # Fan-out: one uses port, two connections, one fan-out policy for the port.
    for consumer in (decoder, monitor):
        wf.connect(demod.port("out"), consumer.port("in"), fanout=fanout, fanout_depth=16)
    wf.connect(decoder.port("out"), output.port("in"))
    if collocated:
        wf.collocate()
    return wf


def positive(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description="A receiver graph (fan-in, fan-out), built in code, run.")
    parser.add_argument("--packets", type=positive, default=200, help="data packets (control: a fifth; default 200)")
    parser.add_argument("--collocated", action="store_true", help="every component in one process")
    parser.add_argument(
        "--fanout", choices=("sequential", "parallel", "drop"), default="parallel", help="demod.out's fan-out"
    )
    parser.add_argument("--report", metavar="DIR", help="write the run's report page (the waveform drawn) here")
    parser.add_argument("--json", metavar="PATH", help="write the result here")
    parser.add_argument("--toml", action="store_true", help="print the spec as TOML and run nothing")
    args = parser.parse_args(argv)

    wf = receiver(args.packets, args.collocated, args.fanout)
    if args.toml:
        print(wf.to_toml(), end="")
        return 0
    try:
        result = wf.run()
    except scabench.RunError as exc:
        print(f"run failed: {exc}", file=sys.stderr)
        return 1
    except scabench.ScabenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(scabench.text(result))
    if args.report:
        from scabench.report.graph import write_run_report  # needs the graphviz package and `dot`

        md, html = write_run_report(result, args.report)
        print(f"report: {md} and {html}")
    if args.json:
        Path(args.json).write_text(json.dumps(result.as_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

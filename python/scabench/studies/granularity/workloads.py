"""Workloads for the granularity lab: one piece of functional work, split
into components in several ways, plus the same work as one standalone
program with no middleware (the seed's FUNC).

A workload says, for each of its configurations, which components it has
and how they are chained, and how to start its FUNC program. The lab
(lab.py) runs them all the same way over N (taps) and B (packet
size), so adding such a workload means adding a class here and listing it in
WORKLOADS; the report renders every workload's measurements.

The STANAG 4285 transmitter is not one of them: its work per frame is fixed
by the waveform, so it is swept over the symbol rate instead, with its own
assemblies (experiments/stanag4285/) and plain program, in
lab_s4285.py."""

from dataclasses import dataclass

from scabench.paths import program


@dataclass(frozen=True)
class Layout:
    """One configuration: components in chain order, each (name, kind, properties)."""

    name: str
    components: tuple

    @property
    def count(self):
        """M, the number of components, source and sink included."""
        return len(self.components)

    @property
    def hops(self):
        return len(self.components) - 1


class FirWorkload:
    """The seed's synthetic load (its Fig. 5): nine FIR filters of N taps over
    packets of B floats. W2 is FTOT (source and all nine filters) and a sink;
    W3, W5 and W11 are a source, 1, 3 or 9 FIR components, and a sink. The
    sink sums every sample, as FUNC does, so every configuration's output is
    checked against FUNC's."""

    name = "fir"
    title = "Synthetic load: 9 FIR filters (seed Fig. 5)"
    filters = 9
    configs = ("W2", "W3", "W5", "W11")
    sample_type = "float"

    def layout(self, config, taps, samples, period_us, packets, dither_us=0):
        source = {"packets": packets, "samples": samples, "period_us": period_us, "dither_us": dither_us}
        sink = ("snk", "sink", {"checksum": True})
        if config == "W2":
            return Layout(config, (("ftot", "producer", {**source, "filters": self.filters, "taps": taps}), sink))
        parts = {"W3": 1, "W5": 3, "W11": 9}.get(config)
        if parts is None:
            raise ValueError(f"{config!r} is not one of {', '.join(self.configs)}")
        firs = tuple((f"fir{i + 1}", "fir", {"filters": self.filters // parts, "taps": taps}) for i in range(parts))
        return Layout(config, (("src", "producer", source),) + firs + (sink,))

    def func_argv(self, taps, samples, period_us, packets, dither_us=0):
        return [
            str(program("scabench-func")),
            "--filters",
            str(self.filters),
            "--taps",
            str(taps),
            "--samples",
            str(samples),
            "--period-us",
            str(period_us),
            "--packets",
            str(packets),
            "--dither-us",
            str(dither_us),
        ]


WORKLOADS = {w.name: w for w in (FirWorkload(),)}

"""An external component for the tests: someone else's program, written with
scabench's Python component API and started by a run with the SCA exec
parameters. It multiplies every sample by its `gain` property, and sample i
of a packet by gains[i % len(gains)] where its `gains` sequence has values,
then takes y * factor + offset of its `scale` struct, so a sink's checksum
shows that its properties arrived and its packets went through."""

from scabench.components.component import Component
from scabench.components.program import main


class Gain(Component):
    def __init__(self, context):
        super().__init__(context)
        self.properties.declare("gain", 1.0, "multiplies each sample")
        self.properties.declare("gains", [], "multiplies sample i by gains[i % len(gains)]", type="sequence<double>")
        self.properties.declare("scale", {"factor": 1.0, "offset": 0.0}, "then y * factor + offset", type="struct")
        self.out = self.add_out_port("out")
        self.add_in_port("in", self.on_packet)
        self._gain = 1.0
        self._gains = [1.0]
        self._factor, self._offset = 1.0, 0.0

    def on_start(self):
        self._gain = self.properties["gain"]
        self._gains = self.properties["gains"] or [1.0]
        self._factor, self._offset = self.properties["scale"]["factor"], self.properties["scale"]["offset"]

    def on_packet(self, header, samples):
        gains, gain, factor, offset = self._gains, self._gain, self._factor, self._offset
        self.out.push(header, [gain * gains[i % len(gains)] * x * factor + offset for i, x in enumerate(samples)])


if __name__ == "__main__":
    main(Gain, prog="gain")

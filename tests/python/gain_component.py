"""An external component for the tests: someone else's program, written with
scabench's Python component API and started by a run with the SCA exec
parameters. It multiplies every sample by its `gain` property, so a sink's
checksum shows that its properties arrived and its packets went through."""

from scabench.components.component import Component
from scabench.components.program import main


class Gain(Component):
    def __init__(self, context):
        super().__init__(context)
        self.properties.declare("gain", 1.0, "multiplies each sample")
        self.out = self.add_out_port("out")
        self.add_in_port("in", self.on_packet)
        self._gain = 1.0

    def on_start(self):
        self._gain = self.properties["gain"]

    def on_packet(self, header, samples):
        self.out.push(header, [self._gain * x for x in samples])


if __name__ == "__main__":
    main(Gain, prog="gain")

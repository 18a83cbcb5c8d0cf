"""The emulated link of a run on network hosts: what a spec's [network]
table says. The namespaces and the emulator that realise it are the run
layer's (scabench.run.network)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class LinkSettings:
    """The emulated link into every host: one-way delay and jitter, whole
    milliseconds (the emulator's unit), in each direction."""

    delay_ms: int = 0
    jitter_ms: int = 0

    def describe(self) -> dict[str, float]:
        return {"delay_ms": self.delay_ms, "jitter_ms": self.jitter_ms}

"""The one way a loaded spec is changed for a run: the run command's flags
(--packets, --cores, --policy, --set, --collocated, --pin, --scheduler,
--transport, --link-delay, --link-jitter), a sweep's grid keys, a
campaign's configuration and a peer's set-up all become an `Overrides`,
applied by `apply_overrides` in one order with the checks the spec's own
tables get.

Where a value came from is the caller's to say: `where` maps each field to
what a refusal names (a flag, a grid key, a configuration), so the model
knows no command line."""

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from scabench.model.spec import Spec


@dataclass(frozen=True)
class Overrides:
    """What a run changes in its spec; a field left at its default keeps
    the spec's own."""

    packets: int | None = None  # what every packet source sends
    cores: list[int] | None = None  # the CPUs (parsed: checks.parse_cores)
    policy: dict[str, Any] = field(default_factory=dict)  # policy keys on every connection
    properties: dict[str, dict[str, Any]] = field(default_factory=dict)  # {component: {property: value}}
    collocated: bool = False  # every component of the runtime in one process
    pin: bool | None = None  # each process on a core of its own
    scheduler: str | None = None
    transport: str | None = None
    network: dict[str, float] | None = None  # delay_ms, jitter_ms: network hosts behind emulated links


OVERRIDE_FIELDS = tuple(f.name for f in fields(Overrides))


def apply_overrides(spec: Spec, overrides: Overrides, where: Mapping[str, str]) -> Spec:
    """A copy of `spec` with `overrides` applied; `spec` is left as it was.
    `where[field]` is what a refusal of that field's value names (every
    field the overrides set needs one; cores and pin are checked by their
    callers). The order is the run command's: a spec is refused for the same
    reason wherever its overrides come from."""
    if overrides.packets is not None:
        spec = spec.with_packets(overrides.packets, where=where["packets"])
    if overrides.cores is not None:
        spec = spec.with_cores(overrides.cores)
    if overrides.policy:
        spec = spec.with_policy(overrides.policy, where=where["policy"])
    for name, properties in overrides.properties.items():
        spec = spec.with_properties(name, properties, where=where["properties"])
    if overrides.collocated:
        spec = spec.with_collocated(where=where["collocated"])
    if overrides.pin is not None:
        spec = spec.with_pin(overrides.pin)
    if overrides.scheduler is not None:
        spec = spec.with_scheduler(overrides.scheduler, where=where["scheduler"])
    if overrides.transport is not None:
        spec = spec.with_transport(overrides.transport, where=where["transport"])
    if overrides.network is not None:
        spec = spec.with_network(overrides.network, where=where["network"])
    return spec

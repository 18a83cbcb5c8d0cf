"""`scabench components`: the component kinds and the connection policy the
runtime offers, read from `scabench-host --describe` (model/catalog.py), as
tables: kinds with their ports, each kind's properties (type, default,
range, what it does), and the policy keys every connection takes."""

from typing import Any

from rich.text import Text

from scabench.console import MUTED, TITLE, add_rows, table
from scabench.errors import ScabenchError
from scabench.model.catalog import (
    EXTERNAL,
    PYTHON_KINDS,
    SAMPLE_PORT,
    component_kinds,
    declared_kinds,
    kind_declaration,
    kind_ports,
    policy_schema,
)
from scabench.model.checks import declared_range, number_text, range_text

# SCA's words for a component's ports, said under the tables that use them
# (each within the catalogue's 100 columns).
PORTS_LEGEND = "uses: a kind's output ports (it sends through them); provides: its input ports (it receives)"
PORT_LEGEND = "direction uses: it sends through the port; provides: it receives. required: it must be connected"
# Each line within the catalogue's 100 columns.
PORT_POLICY = (
    "Its ports take the connection policy keys (scabench components lists them).",
    "A uses port with several connections gives each every packet, as its fanout key says.",
)
SIDE_LEGEND = "side: the end of a connection the key acts on: the uses port, the provides port, or both"


def own_properties(kind: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A kind's own properties: not its ports' policy keys ("in.worker"),
    which the [policy] table sets, nor record_capacity, which the runner sets."""
    return {k: v for k, v in kind["properties"].items() if "." not in k and k != "record_capacity"}


def property_range(prop: dict[str, Any]) -> str:
    """What a property takes, as configure enforces it: its names, or its
    range (each sample type's where it depends on it)."""
    if "values" in prop:
        return " | ".join(prop["values"])
    if "by_sample_type" in prop:
        return "; ".join(f"{t}: {range_text(r.get('min'), r.get('max'))}" for t, r in prop["by_sample_type"].items())
    bounds = declared_range(prop)
    return range_text(*bounds) if bounds is not None else "–"


def _policy_values(p: dict[str, Any]) -> str:
    if "values" in p and p["type"] != "level":
        return " | ".join(p["values"])
    if "forms" in p:
        args = ", ".join(f"{a} {range_text(r['min'], r['max'])}" for a, r in p.get("args", {}).items())
        return " | ".join(p["forms"]) + (f" ({args})" if args else "")
    if p["type"] == "depth":
        return f"false | true ({number_text(p['true'])}) | {range_text(p['min'], p['max'])}"
    if p["type"] == "level":
        return " | ".join(p["values"]) + f" | {number_text(p['min'])} up, below {p['below']}"
    if "min" in p:
        return range_text(p["min"], p["max"])
    return p["type"]


def default_text(value: Any, p: dict[str, Any] | None = None) -> str:
    """A default as a spec writes it: true/false, a number with thousands
    separators, a depth of 0 as false (no queue) and the `true` depth as true."""
    if p is not None and p.get("type") == "depth" and value in (0, p["true"]):
        return "false" if value == 0 else "true"
    if isinstance(value, (bool, int, float)):
        return number_text(value)
    return str(value)


def kinds_view() -> list[Any]:
    """Every kind with its ports, then the policy keys of a connection."""
    t = table(
        "kind",
        ("uses", {"justify": "left"}),
        ("provides", {"justify": "left"}),
        ("sample types", {"justify": "left"}),
        ("properties", {"justify": "left"}),
        title="Component kinds (scabench components KIND: a kind's properties)",
    )
    for name, kind in declared_kinds().items():
        add_rows(
            t,
            [
                [
                    name,
                    ", ".join(kind["uses"]) or "–",
                    ", ".join(kind["provides"]) or "–",
                    ", ".join(sorted(kind["sample_types"])) or "–",
                    ", ".join(own_properties(kind)) or "–",
                ]
            ],
        )
    # Any program or reference: only the component knows (docs/architecture.md, "External components").
    add_rows(t, [[EXTERNAL, "its own", "its own", "the run's", "its own (exec or ref, and the keys it takes)"]])
    return [t, Text(PORTS_LEGEND, style=MUTED), "", *policy_view()]


def policy_view() -> list[Any]:
    schema = policy_schema()
    t = table(
        "key",
        ("side", {"justify": "left"}),
        ("values", {"justify": "left"}),
        ("default", {"justify": "left"}),
        ("what it sets", {"justify": "left", "ratio": 1}),
        title="Connection policy ([policy], [[connection]], --policy KEY=VALUE)",
    )
    for key, p in schema.items():
        only = "; only with " + ", ".join(f"{k} = {v}" for k, v in p["only_with"].items()) if p.get("only_with") else ""
        for value, need in p.get("needs", {}).items():
            only += f"; {value} needs " + ", ".join(f"{k} = {v}" for k, v in need["keys"].items())
        add_rows(t, [[key, p["side"], _policy_values(p), default_text(p["default"], p), p["description"] + only]])
    return [t, Text(SIDE_LEGEND, style=MUTED)]


def kind_view(name: str) -> list[Any]:
    """One kind: its ports and every property with type, default and range."""
    kinds = [*component_kinds(), *PYTHON_KINDS]
    if name == EXTERNAL:
        raise ScabenchError(
            f"components: {EXTERNAL!r} declares nothing: its ports and properties are the "
            'component\'s own (README, "External components")'
        )
    if name not in kinds:
        raise ScabenchError(f"components: {name!r} is not a component kind; valid: {', '.join(kinds)}, {EXTERNAL}")
    kind = kind_declaration(name)
    assert kind is not None  # EXTERNAL, the one kind without a declaration, is refused above
    ports = kind_ports(kind)
    port_table = table(
        "port",
        ("direction", {"justify": "left"}),
        ("type", {"justify": "left"}),
        ("required", {"justify": "left"}),
        ("what it carries", {"justify": "left", "ratio": 1}),
    )
    for port, p in ports.items():
        required = "yes" if p["required"] else "no"
        add_rows(port_table, [[port, p["direction"], p["type"], required, p["description"] or "–"]])
    # Kinds whose ports carry the run's sample_type say which ones they take.
    sample_types = (
        f"sample types: {', '.join(kind['sample_types'])} (a port of type {SAMPLE_PORT} carries the run's sample_type)"
        if any(p["type"] == SAMPLE_PORT for p in ports.values())
        else None
    )
    t = table(
        "property", ("type", {"justify": "left"}), "default", "range", ("what it sets", {"justify": "left", "ratio": 1})
    )
    for key, prop in sorted(own_properties(kind).items()):
        add_rows(t, [[key, prop["type"], default_text(prop["default"]), property_range(prop), prop["description"]]])
    out: list[Any] = [Text(name, style=TITLE)]
    if ports:
        out += [port_table, Text(PORT_LEGEND, style=MUTED)]
    out += [Text(sample_types)] if sample_types else []
    out += ["", t]
    if ports:
        out += ["", *PORT_POLICY]
    return out

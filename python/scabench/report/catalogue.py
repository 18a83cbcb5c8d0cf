"""`scabench components`: the component kinds and the connection policy the
runtime offers, read from `scabench-host --describe` (model/catalog.py), as
tables: kinds with their ports, each kind's properties (type, default,
range, what it does), and the policy keys every connection takes."""
from rich.text import Text

from scabench.console import TITLE, add_rows, table
from scabench.errors import ScabenchError
from scabench.model.catalog import component_kinds, policy_schema
from scabench.model.checks import INT64_MAX, property_range


def _own_properties(kind):
    """A kind's own properties: not its ports' policy keys ("in.worker"),
    which the [policy] table sets, nor record_capacity, which the runner sets."""
    return {k: v for k, v in kind["properties"].items() if "." not in k and k != "record_capacity"}


def _range(key, prop):
    bounds = property_range(key, prop["type"])
    if bounds is None:
        return None
    low, high = bounds
    return f"≥ {low}" if high in (None, INT64_MAX) else f"{low} … {high}"


def _policy_values(p):
    if "values" in p and p["type"] != "level":
        return " | ".join(p["values"])
    if "forms" in p:
        args = ", ".join(f"{a} {r['min']}…{r['max']}" for a, r in p.get("args", {}).items())
        return " | ".join(p["forms"]) + (f" ({args})" if args else "")
    if p["type"] == "depth":
        return f"false | true ({p['true']}) | {p['min']}…{p['max']}"
    if p["type"] == "level":
        return " | ".join(p["values"]) + f" | {p['min']}… below {p['below']}"
    if "min" in p:
        return f"{p['min']:g}…{p['max']:g}"
    return p["type"]


def _default(value):
    return str(value).lower() if isinstance(value, bool) else str(value)


def kinds_view():
    """Every kind with its ports, then the policy keys of a connection."""
    kinds = component_kinds()
    t = table("kind", ("uses", {"justify": "left"}), ("provides", {"justify": "left"}),
              ("sample types", {"justify": "left"}), ("properties", {"justify": "left"}),
              title="Component kinds (scabench components KIND: a kind's properties)")
    for name, kind in kinds.items():
        add_rows(t, [[name, ", ".join(kind["uses"]) or "–", ", ".join(kind["provides"]) or "–",
                      ", ".join(kind["sample_types"]) or "–", ", ".join(_own_properties(kind)) or "–"]])
    return [t, "", *policy_view()]


def policy_view():
    schema = policy_schema()
    t = table("key", ("side", {"justify": "left"}), ("values", {"justify": "left"}),
              ("default", {"justify": "left"}), ("what it sets", {"justify": "left", "ratio": 1}),
              title="Connection policy ([policy], [[connection]], --policy KEY=VALUE)")
    for key, p in schema.items():
        only = "; only with " + ", ".join(f"{k} = {v}" for k, v in p["only_with"].items()) if p.get("only_with") \
            else ""
        add_rows(t, [[key, p["side"], _policy_values(p), _default(p["default"]), p["description"] + only]])
    return [t]


def kind_view(name):
    """One kind: its ports and every property with type, default and range."""
    kinds = component_kinds()
    if name not in kinds:
        raise ScabenchError(f"components: {name!r} is not a component kind; valid: {', '.join(kinds)}")
    kind = kinds[name]
    ports = (f"uses (out) {', '.join(kind['uses']) or 'none'}; provides (in) {', '.join(kind['provides']) or 'none'}; "
             f"sample types {', '.join(kind['sample_types'])}")
    t = table("property", ("type", {"justify": "left"}), "default", "range",
              ("what it sets", {"justify": "left", "ratio": 1}))
    for key, prop in sorted(_own_properties(kind).items()):
        add_rows(t, [[key, prop["type"], _default(prop["default"]), _range(key, prop), prop["description"]]])
    out = [Text(name, style=TITLE), ports, "", t]
    if kind["uses"] or kind["provides"]:
        out += ["", "Its ports take the connection policy keys (scabench components lists them)."]
    return out

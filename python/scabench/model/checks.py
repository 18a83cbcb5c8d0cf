"""The checks behind a spec: each value against what is valid, each error
one line naming the file (or flag), the key and what would be valid
(errors.SpecError). The spec loader (scabench.model.spec) and the spec's
overrides (--policy, --set, --cores, --link-delay) use the same checks, so a
value is judged the same wherever it comes from."""
import os

from scabench.errors import SpecError
from scabench.model.catalog import component_kinds
from scabench.model.link import LinkSettings
from scabench.model.policy import PolicyValueError, parse_policy

NETWORK_KEYS = ("delay_ms", "jitter_ms")


def parse_cores(value, path="--cores", key="cores"):
    """"all", a list of CPU numbers, or "0,1"; every CPU must be usable here."""
    usable = sorted(os.sched_getaffinity(0))
    if value == "all":
        return usable
    if isinstance(value, str):
        try:
            value = [int(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise SpecError(path, key, f"{value!r} is not a list of CPU numbers like 0,1") from None
    if not isinstance(value, list) or not value or not all(isinstance(v, int) for v in value):
        raise SpecError(path, key, f"use \"all\" or a list of CPU numbers from {usable}")
    bad = [v for v in value if v not in usable]
    if bad:
        raise SpecError(path, key, f"CPU {bad[0]} is not usable here; usable CPUs: {usable}")
    return sorted(set(value))


def parse_overrides(items, where="--policy"):
    """["sync=server", "worker=16"] -> {"sync": "server", "worker": 16}:
    the values a TOML table would hold."""
    overrides = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise SpecError(where, item, "use KEY=VALUE")
        text = text.strip()
        if text in ("true", "false"):
            value = text == "true"
        elif text.isdigit():
            value = int(text)
        else:
            value = text
        overrides[key.strip()] = value
    return overrides


def parse_property_overrides(items, where="--set"):
    """["producer.period_us=7500"] -> {"producer": {"period_us": 7500}}."""
    out = {}
    for key, value in parse_overrides(items, where).items():
        name, dot, prop = key.partition(".")
        if not dot or not name or not prop:
            raise SpecError(where, key, "use COMPONENT.KEY=VALUE, e.g. producer.period_us=7500")
        out.setdefault(name, {})[prop] = value
    return out


def table_of(doc, key, path):
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise SpecError(path, key, "must be a table")
    return value


def policy_of(table, base, path, where):
    if not isinstance(table, dict):
        raise SpecError(path, where, "must be a table")
    try:
        return parse_policy(table, base)
    except PolicyValueError as exc:
        raise SpecError(path, f"{where}.{exc.key}", str(exc)) from None


def check_property(path, where, kind, key, value):
    """A component property's value, checked against what the kind declares."""
    declared = component_kinds()[kind]["properties"]
    if key not in declared or "." in key:
        valid = ", ".join(k for k in declared if "." not in k and k != "record_capacity")
        raise SpecError(path, where, f"{kind} has no property {key!r}; valid: {valid}")
    expected = declared[key]["type"]
    if not _type_ok(value, expected):
        raise SpecError(path, where, f"must be {expected} ({declared[key]['description']})")
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        raise SpecError(path, where, f"must be >= 0 ({declared[key]['description']})")
    return value


def _type_ok(value, expected):
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "real":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def endpoint(text, path, key, components, direction):
    kinds = component_kinds()
    if not isinstance(text, str) or text.count(".") != 1:
        raise SpecError(path, key, f"{text!r} must look like \"component.port\"")
    name, port = text.split(".")
    comp = next((c for c in components if c.name == name), None)
    if comp is None:
        raise SpecError(path, key, f"no component named {name!r}; declared: {', '.join(c.name for c in components)}")
    ports = kinds[comp.kind][direction]
    if port not in ports:
        role = "uses (output)" if direction == "uses" else "provides (input)"
        raise SpecError(path, key, f"{comp.kind} {name!r} has no {role} port {port!r}; it has: {', '.join(ports) or 'none'}")
    return (name, port)


def check_dispatch_per_host(spec):
    """ORB threading is per process: remote connections into one host must agree."""
    seen = {}
    for conn in spec.connections:
        if spec.collocated(conn):
            continue
        host = spec.host_of(conn.provides[0])
        options = conn.policy.orb_options()
        if host in seen and seen[host][1] != options:
            raise SpecError(spec.path, "connection",
                            f"{seen[host][0]} and {conn.id} reach the same process with different dispatch; "
                            "ORB threading is per process: place the receivers apart or use one dispatch")
        seen[host] = (conn.id, options)


def network_settings(table, path, where):
    for key in table:
        if key not in NETWORK_KEYS:
            raise SpecError(path, f"{where}.{key}", f"unknown key; valid: {', '.join(NETWORK_KEYS)}")
    values = {}
    for key in NETWORK_KEYS:
        value = table.get(key, 0)
        # The link emulator works in whole milliseconds.
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10000:
            raise SpecError(path, f"{where}.{key}", "must be a whole number of milliseconds from 0 to 10000")
        values[key] = value
    if values["jitter_ms"] > values["delay_ms"]:
        raise SpecError(path, f"{where}.jitter_ms", f"must not exceed delay_ms ({values['delay_ms']})")
    return LinkSettings(**values)


def check_network_transport(spec):
    if spec.network is not None and spec.transport != "tcp":
        raise SpecError(spec.path, "run.transport", f"network hosts talk over tcp; {spec.transport!r} cannot "
                        "cross a network link (remove [network] or use transport = \"tcp\")")

"""The checks behind a spec: each value against what is valid, each error
one line naming the file (or flag), the key and what would be valid
(errors.SpecError). The spec reader (scabench.model.spec_toml) and the spec's
overrides (model/overrides.py) use the same checks, so a
value is judged the same wherever it comes from."""

import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scabench.errors import SpecError
from scabench.model.catalog import PYTHON_KINDS, kind_properties, port_names, ports_of
from scabench.model.graph import fan_out
from scabench.model.link import LinkSettings
from scabench.model.policy import Policy, PolicyValueError, one_connection_properties, parse_policy
from scabench.model.sad.mapping import check_fits

if TYPE_CHECKING:
    from scabench.model.spec import Component, Spec

NETWORK_KEYS = ("delay_ms", "jitter_ms")
DOMAIN_KEYS = ("naming",)
# A node's name is one name component (nodes/<name> in its domain's Naming
# Service) that shells, nameclt paths and file names take as it is.
NODE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
NODE_NAME_RULE = "1 to 63 letters, digits, '-' or '_', starting with a letter or digit"
# How a domain's Naming Service is named: a reference to its root context.
DOMAIN_SCHEMES = ("corbaloc:", "corbaname:", "IOR:")
# The largest integer a property can hold: the runtime keeps them as int64.
INT64_MAX = (1 << 63) - 1
# The sample types a port carries, and the bytes of one sample (CORBA octet, short, float, double).
SAMPLE_BYTES = {"octet": 1, "short": 2, "float": 4, "double": 8}


def parse_cores(value: Any, path: str | Path, key: str = "cores") -> list[int]:
    """ "all", a list of CPU numbers, or "0,1"; every CPU must be usable here."""
    usable = sorted(os.sched_getaffinity(0))
    if value == "all":
        return usable
    if isinstance(value, str):
        try:
            value = [int(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise SpecError(path, key, f"{value!r} is not a list of CPU numbers like 0,1") from None
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise SpecError(path, key, f'use "all" or a list of CPU numbers from {usable}')
    bad = [v for v in value if v not in usable]
    if bad:
        raise SpecError(path, key, f"CPU {bad[0]} is not usable here; usable CPUs: {usable}")
    return sorted(set(value))


def parse_overrides(items: Iterable[str], where: str) -> dict[str, Any]:
    """["sync=server", "worker=16"] -> {"sync": "server", "worker": 16}:
    the values a TOML table would hold."""
    overrides = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise SpecError(where, item, "use KEY=VALUE")
        value = override_value(text.strip())
        overrides[key.strip()] = value
    return overrides


def override_value(text: str) -> bool | int | float | str:
    """A value given on the command line, read as TOML would read it: true,
    false, a whole number, a real number, or else the text itself."""
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"[+-]?[0-9]+", text):
        return int(text)
    if re.fullmatch(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][+-]?[0-9]+)?|[+-]?(inf|nan)", text):
        return float(text)
    return text


def parse_property_overrides(items: Iterable[str], where: str) -> dict[str, dict[str, Any]]:
    """["producer.period_us=7500"] -> {"producer": {"period_us": 7500}}."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in parse_overrides(items, where).items():
        name, dot, prop = key.partition(".")
        if not dot or not name or not prop:
            raise SpecError(where, key, "use COMPONENT.KEY=VALUE, e.g. producer.period_us=7500")
        out.setdefault(name, {})[prop] = value
    return out


def table_of(doc: dict[str, Any], key: str, path: str | Path) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise SpecError(path, key, "must be a table")
    return value


def policy_of(table: Any, base: Policy | None, path: str | Path, where: str) -> Policy:
    if not isinstance(table, dict):
        raise SpecError(path, where, "must be a table")
    try:
        return parse_policy(table, base)
    except PolicyValueError as exc:
        raise SpecError(path, f"{where}.{exc.key}", str(exc)) from None


def settable_properties(kind: str, library: str | Path | None = None) -> list[str]:
    """The properties of a kind a spec sets, in the kind's order. Port policy
    keys ("in.worker") come from [policy]; record_capacity is the runner's."""
    return [k for k in kind_properties(kind, library) if "." not in k and k != "record_capacity"]


def declared_range(declared: dict, sample_type: str | None = None) -> tuple | None:
    """(low, high) that configure takes for a numeric property, as its
    declaration publishes it (min and max; a bound it lacks is None), for
    `sample_type` where its range depends on it; None for a property with
    no range (a boolean, a string, a real without bounds)."""
    by_type = declared.get("by_sample_type", {})
    bounds = by_type.get(sample_type, declared)
    if "min" not in bounds and "max" not in bounds:
        return None
    return bounds.get("min"), bounds.get("max")


def number_text(value: float) -> str:
    """A number as a person reads it: a whole one with thousands separators
    (4,294,967,295), a boolean as true/false, any other as %g."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) < 1e15):
        return f"{int(value):,}"
    return f"{value:,g}"


def range_text(low: float | None, high: float | None) -> str:
    """A range as a person reads it: "1 to 4,294,967,295", "0 up" (no bound
    above but the runtime's 64-bit integers), "any" (no bound at all)."""
    if low in (None, -INT64_MAX - 1):
        return "any" if high in (None, INT64_MAX) else f"at most {number_text(high)}"
    if high in (None, INT64_MAX):
        return f"{number_text(low)} up"
    return f"{number_text(low)} to {number_text(high)}"


def check_property(
    path: str | Path,
    where: str,
    kind: str,
    key: str,
    value: Any,
    library: str | Path | None = None,
    sample_type: str | None = None,
) -> Any:
    """A component property's value, checked against what the kind declares
    (in its component library, if it comes from one; an external component
    declares nothing: check_external_property): its type, its names (values)
    and its range (min, max; for `sample_type` where it depends on it), all
    as the runtime's configure enforces them (`scabench-host --describe`), so
    that a value configure would refuse is refused here, before any process
    starts, wherever it comes from (TOML, --set, a sweep's grid, a SAD)."""
    declared = kind_properties(kind, library)
    settable = settable_properties(kind, library)
    if key not in settable:
        raise SpecError(path, where, f"{kind} has no property {key!r}; valid: {', '.join(settable)}")
    entry = declared[key]
    expected, description = entry["type"], entry["description"]
    if not _type_ok(value, expected):
        raise SpecError(path, where, f"must be {expected} ({description})")
    if "values" in entry and value not in entry["values"]:
        raise SpecError(
            path, where, f"{value!r} is not valid; use one of: {', '.join(entry['values'])} ({description})"
        )
    if isinstance(value, float) and not math.isfinite(value):
        raise SpecError(path, where, f"must be a finite number ({description})")
    bounds = declared_range(entry, sample_type) if expected in ("integer", "real") else None
    if bounds is not None:
        low, high = bounds
        if (low is not None and value < low) or (high is not None and value > high):
            for_type = f" with {sample_type} samples" if sample_type in entry.get("by_sample_type", {}) else ""
            whole = "a whole number" if expected == "integer" else "a number"
            raise SpecError(
                path,
                where,
                f"{value!r} is not valid; use {whole} from {range_text(low, high)}{for_type} ({description})",
            )
    return value


def check_external_property(path: str | Path, where: str, key: str, value: Any) -> Any:
    """A property of an external component: the component alone knows its
    properties, so only what the launcher can send is checked (a boolean, a
    64-bit integer, a real or a string, as CORBA anys, or a sequence of one
    PRF type, as that CORBA sequence) and the name (port policy keys,
    "<port>.<key>", come from [policy])."""
    if not isinstance(key, str) or not key or "." in key:
        raise SpecError(
            path, where, "a property name without dots (port policy keys come from [policy] and [[connection]])"
        )
    return _external_value(path, where, value)


def _external_value(path: str | Path, where: str, value: Any) -> Any:
    """A value the launcher can send: a simple one, a sequence or a struct."""
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise SpecError(path, where, f"{value} does not fit in a 64-bit integer")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SpecError(path, where, "must be a finite number")
        return value
    if isinstance(value, dict) and set(value) == {"sequence", "values"}:
        return _sequence_value(path, where, value)
    if isinstance(value, dict) and set(value) == {"struct"} and isinstance(value["struct"], dict):
        # A struct: each member a typed simple value or a sequence, sent as a
        # CF::Properties of them. A member goes on the wire as its PRF type (a
        # REDHAWK component extracts it into that type, strictly); one given
        # without a type is typed as a simple property is (boolean, long long,
        # double, string).
        if not value["struct"]:
            raise SpecError(path, f"{where}.struct", "a struct has members: {struct = {member = value, ...}}")
        members = {}
        for member, given in value["struct"].items():
            at = f"{where}.struct.{member}"
            if isinstance(given, dict) and set(given) == {"sequence", "values"}:
                members[member] = _sequence_value(path, at, given)
            elif isinstance(given, dict) and set(given) == {"type", "value"}:
                members[member] = _typed_member(path, at, given)
            elif isinstance(given, dict):
                raise SpecError(path, at, 'a member is a simple value, {type = "float", value = ...} or a sequence')
            else:
                # A member id may hold dots (REDHAWK's "status::gain.x"): it is
                # no top-level property name, so no port policy key either.
                one = _external_value(path, at, given)
                members[member] = {"type": _NATURAL_TYPES[type(one)], "value": one}
        return {"struct": members}
    raise SpecError(
        path,
        where,
        'a property is a boolean, an integer, a real, a string, a sequence, {sequence = "double", values = [...]}, '
        "or a struct, {struct = {member = value, ...}}",
    )


# A sequence property's element types, as a PRF's simplesequence names them,
# and what each element must be.
SEQUENCE_ELEMENTS: dict[str, type | tuple[type, ...]] = {
    "boolean": bool,
    **dict.fromkeys(("octet", "short", "ushort", "long", "ulong", "longlong", "ulonglong"), int),
    **dict.fromkeys(("float", "double"), (int, float)),
    "string": str,
}


# The PRF type a struct member given without one goes on the wire as: a
# simple property's (the launcher's CORBA boolean, long long, double, string).
_NATURAL_TYPES = {bool: "boolean", int: "longlong", float: "double", str: "string"}


def _typed_member(path: str | Path, where: str, given: dict[str, Any]) -> dict[str, Any]:
    """{"type": TYPE, "value": v}: a struct member of a PRF simple type,
    checked as an element of a sequence of that type is."""
    kind, v = given["type"], given["value"]
    if kind not in SEQUENCE_ELEMENTS:
        raise SpecError(path, f"{where}.type", f"{kind!r}; valid: {', '.join(SEQUENCE_ELEMENTS)}")
    _check_element(path, f"{where}.value", v, kind)
    return {"type": kind, "value": v}


def _check_element(path: str | Path, where: str, v: Any, kind: str) -> None:
    """One value of the PRF type `kind`: of its kind and within its CORBA
    type's bounds (the launcher would narrow it on the wire)."""
    held = SEQUENCE_ELEMENTS[kind]
    if isinstance(v, bool) != (held is bool) or not isinstance(v, held):
        raise SpecError(path, where, f"{v!r} is not a {kind}")
    try:
        check_fits(v, kind)
    except ValueError as exc:
        raise SpecError(path, where, str(exc)) from None


def _sequence_value(path: str | Path, where: str, value: dict[str, Any]) -> dict[str, Any]:
    """{"sequence": TYPE, "values": [...]}: what the launcher sends as that
    CORBA sequence (a PRF simplesequence's value), each element of TYPE."""
    kind, values = value["sequence"], value["values"]
    if kind not in SEQUENCE_ELEMENTS:
        raise SpecError(path, f"{where}.sequence", f"{kind!r}; valid: {', '.join(SEQUENCE_ELEMENTS)}")
    if not isinstance(values, list):
        raise SpecError(path, f"{where}.values", f"a list of {kind} values")
    for i, v in enumerate(values):
        _check_element(path, f"{where}.values[{i}]", v, kind)
    return {"sequence": kind, "values": list(values)}


def _type_ok(value, expected):
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "real":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def endpoint(text: Any, path: str | Path, key: str, components: list["Component"], direction: str) -> tuple[str, str]:
    if not isinstance(text, str) or text.count(".") != 1:
        raise SpecError(path, key, f'{text!r} must look like "component.port"')
    name, port = text.split(".")
    comp = next((c for c in components if c.name == name), None)
    if comp is None:
        raise SpecError(path, key, f"no component named {name!r}; declared: {', '.join(c.name for c in components)}")
    declared = ports_of(comp)
    if declared is None:  # external: its ports are checked at run time, when it is there to ask
        if not port or not port.replace("_", "").replace("-", "").isalnum():
            raise SpecError(path, key, f"{text!r}: a port name of letters, digits, - and _ is required")
        return (name, port)
    ports = port_names(declared, direction)
    if port not in ports:
        role = "uses (output)" if direction == "uses" else "provides (input)"
        raise SpecError(
            path, key, f"{comp.kind} {name!r} has no {role} port {port!r}; it has: {', '.join(ports) or 'none'}"
        )
    return (name, port)


def check_dispatch_per_host(spec: "Spec") -> None:
    """ORB threading is per process: remote connections into one host (or
    external program) must agree."""
    seen: dict[tuple[str, Any], tuple[str, int | None]] = {}
    for conn in spec.connections:
        if spec.collocated(conn):
            continue
        host = spec.process_of(conn.provides[0])
        threads = conn.policy.max_server_threads_per_connection
        if host in seen and seen[host][1] != threads:
            raise SpecError(
                spec.path,
                "connection",
                f"{seen[host][0]} and {conn.id} reach the same process with different dispatch; "
                "ORB threading is per process: place the receivers apart or use one dispatch",
            )
        seen[host] = (conn.id, threads)


def network_settings(table: dict[str, Any], path: str | Path, where: str) -> LinkSettings:
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


def check_transport(spec: "Spec", where: str = "run.transport") -> None:
    """Only tcp leaves the machine: network hosts and processes on nodes
    stand for other machines, which neither a unix socket nor shared memory
    reaches. `where` names the key or flag that set the transport."""
    if spec.network is not None and spec.transport == "shm":
        raise SpecError(
            spec.path,
            where,
            "network hosts stand for other machines, and shared memory "
            'joins processes of one machine only (remove [network] or use transport = "tcp")',
        )
    if spec.network is not None and spec.transport != "tcp":
        raise SpecError(
            spec.path,
            where,
            f"network hosts talk over tcp; {spec.transport!r} cannot "
            'cross a network link (remove [network] or use transport = "tcp")',
        )
    if spec.nodes and spec.transport != "tcp":
        raise SpecError(
            spec.path,
            where,
            f'processes on nodes talk over tcp; {spec.transport!r} does not leave the machine (use transport = "tcp")',
        )


def check_network(spec: "Spec", where: str = "network") -> None:
    """Network hosts talk over tcp, and only to processes of the runtime."""
    if spec.network is None:
        return
    # A flag that made the network hosts (--link-delay) is what clashes with the transport.
    check_transport(spec, "run.transport" if where == "network" else where)
    external = next((c for c in spec.components if c.external is not None), None)
    if external is not None:
        raise SpecError(
            spec.path,
            where,
            f"{external.name!r} ({external.kind}) is external: it runs on this "
            "machine's loopback, outside the network hosts; remove [network] or the component",
        )


def check_python_ports(spec: "Spec", where: str = "policy") -> None:
    """A connection to or from a Python component gets only the policy its
    ports implement (scabench.components.policy): anything else is refused
    here, before any process starts, as its configure would refuse it."""
    if not any(c.kind in PYTHON_KINDS for c in spec.components):
        return
    from scabench.components import policy as python_policy  # loads omniORBpy: only for a spec that needs it

    fanned = fan_out(spec.connections)
    for conn in spec.connections:
        for (name, port), side, table in ((conn.uses, "uses", "USES"), (conn.provides, "provides", "PROVIDES")):
            if spec.component(name).kind not in PYTHON_KINDS:
                continue
            checks = {key: check for key, _, _, check, *_ in getattr(python_policy, table)}
            properties = getattr(conn.policy, f"{side}_properties")(port)
            if side == "uses" and tuple(conn.uses) not in fanned:
                properties = one_connection_properties(properties)
            for prop, value in properties.items():
                key = prop.split(".", 1)[1]
                try:
                    if key not in checks:
                        raise ValueError("not implemented by the Python ports")
                    checks[key](value)
                except ValueError as exc:
                    raise SpecError(
                        spec.path, where, f"{conn.id}: {name!r} is a Python component, and {prop} = {value!r}: {exc}"
                    ) from None


def is_node_name(name: Any) -> bool:
    return isinstance(name, str) and NODE_NAME_RE.fullmatch(name) is not None


def domain_settings(table: dict[str, Any], path: str | Path, where: str = "domain") -> str:
    """A spec's [domain]: the Naming Service of the domain whose nodes its
    placement names (a corbaloc), or None."""
    for key in table:
        if key not in DOMAIN_KEYS:
            raise SpecError(path, f"{where}.{key}", f"unknown key; valid: {', '.join(DOMAIN_KEYS)}")
    naming = table.get("naming")
    if not isinstance(naming, str) or not naming.startswith(DOMAIN_SCHEMES) or any(c.isspace() for c in naming):
        raise SpecError(path, f"{where}.naming", 'the domain\'s Naming Service, like "corbaloc::HOST:2809/NameService"')
    return naming


def placement_nodes(table: Any, path: str | Path, where: str = "placement.nodes") -> dict[str, list[str]]:
    """[placement] nodes = { NODE = ["component", ...] }, as a dict."""
    if not isinstance(table, dict):
        raise SpecError(
            path,
            where,
            "must be a table of node names, each with a list of the components it runs, "
            'like { board1 = ["producer", "stage1"] }',
        )
    for node, members in table.items():
        if not is_node_name(node):
            raise SpecError(path, f"{where}.{node}", f"{node!r} is not a node name: use {NODE_NAME_RULE}")
        if not isinstance(members, list) or not members or not all(isinstance(n, str) for n in members):
            raise SpecError(path, f"{where}.{node}", "must be a non-empty list of component names")
    return {node: list(members) for node, members in table.items()}


def check_nodes(spec: "Spec", where: str = "placement.nodes") -> None:
    """Processes placed on nodes: each component once, a process's
    components on one node, nothing a node cannot run, and a domain to find
    the nodes in (docs/architecture.md, "Placement on nodes")."""
    if spec.network is not None and spec.domain is not None:
        raise SpecError(
            spec.path,
            "domain",
            "a run on network hosts makes a node of each of its own, in its own "
            "Naming Service; remove [domain] or [network]",
        )
    if not spec.nodes:
        return
    if spec.network is not None:
        raise SpecError(
            spec.path,
            where,
            "a run on network hosts places every process on a node of its own, in "
            "its namespace; remove placement.nodes or [network]",
        )
    placed: dict[str, str] = {}
    for node, members in spec.nodes.items():
        for name in members:
            if name in placed:
                raise SpecError(spec.path, f"{where}.{node}", f"{name!r} is placed on {placed[name]!r} already")
            placed[name] = node
            comp = next((c for c in spec.components if c.name == name), None)
            if comp is None:
                raise SpecError(
                    spec.path,
                    f"{where}.{node}",
                    f"no component named {name!r}; declared: {', '.join(c.name for c in spec.components)}",
                )
            if comp.external is not None and comp.external.ref is not None:
                raise SpecError(
                    spec.path,
                    f"{where}.{node}",
                    f"{name!r} is someone else's component (ref): it runs "
                    "where it runs; leave it out of placement.nodes",
                )
            if comp.library is not None:
                raise SpecError(
                    spec.path,
                    f"{where}.{node}",
                    f"{name!r} comes from a component library, which a node "
                    "does not load (it runs the programs installed on it); leave it on this machine",
                )
    for host in spec.hosts:
        where_on = {placed.get(n) for n in host}
        if len(where_on) > 1:
            shown = ", ".join(f"{n} on {placed[n]!r}" if n in placed else f"{n} on this machine" for n in host)
            raise SpecError(
                spec.path,
                where,
                f"{', '.join(host)} share a process (placement.hosts), which runs on one machine: {shown}",
            )
    check_transport(spec, "run.transport" if where == "placement.nodes" else where)
    if spec.domain is None:
        raise SpecError(
            spec.path,
            where,
            "the nodes are found in their domain's Naming Service: give it as "
            '[domain] naming = "corbaloc::HOST:2809/NameService"',
        )

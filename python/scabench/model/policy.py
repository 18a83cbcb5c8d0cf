"""A connection's messaging policy: the spec's words (call, sync, dispatch,
worker, worker_resume, ordering, reorder_capacity, reorder_timeout_ms,
flow, and any key the runtime adds, such as packet_length), checked against
the schema the runtime publishes, and what each becomes in the runtime.

The runtime is the one source of the policy keys, their values, forms,
ranges and defaults (cpp/runtime/src/policy_schema.cpp, published by
`scabench-host --describe` under "policy"). Nothing here restates them: this
module reads the schema, judges a spec's values by it, and hands the values
to the ports under the same names (`<port>.<key>`). What the runtime cannot
do for itself stays here: the receiving host's ORB options, which must be
set before its components exist (dispatch = pool:N or serial, and how
omniORB watches the host's connections: host_orb_options).

Placement decides whether a connection is remote or collocated: a collocated
call is a direct call, so dispatch does not apply to it.
"""

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scabench.errors import ScabenchError
from scabench.model.catalog import policy_schema

# What a connection speaks unless its policy says: the project's own data
# ports (docs/reference/bulkio.md: "bulkio", BulkIO's data interfaces).
SCABENCH_PROTOCOL = "scabench"

if TYPE_CHECKING:
    from scabench.model.spec import Connection


class PolicyValueError(ValueError):
    """A bad value; the caller knows the file and key."""

    def __init__(self, key, message):
        self.key = key
        super().__init__(message)


# The keys Policy has a field of its own for (the result files' names for
# them); every other key of the schema is carried as it is, in `others`.
NAMED_KEYS = (
    "call",
    "sync",
    "dispatch",
    "worker",
    "worker_resume",
    "ordering",
    "reorder_capacity",
    "reorder_timeout_ms",
    "flow",
)

# The uses-side keys that say how a port with several connections hands
# each packet to them (the runtime's schema: fanout, fanout_depth). On a
# port with one connection they say nothing: a spec may not give them there
# (spec_toml), and the port is not given them (one_connection_properties).
FANOUT_KEYS = ("fanout", "fanout_depth")


def one_connection_properties(properties: dict[str, Any]) -> dict[str, Any]:
    """A uses port's properties (Policy.uses_properties) for a port with one
    connection: without the fan-out keys, which a port that does not fan
    out (a Python component's, say) need not know."""
    return {prop: value for prop, value in properties.items() if prop.split(".", 1)[1] not in FANOUT_KEYS}


@dataclass(frozen=True)
class Policy:
    """A connection's resolved policy. The fields are those the result files
    have always stored; `values` gives the spec's words back."""

    call: str
    sync: str
    dispatch: str
    worker_depth: int
    worker_resume: object  # "auto", "half" or a level 0 <= r < worker_depth
    ordering: str
    reorder_capacity: int
    reorder_timeout_ms: float
    flow: str  # none | watermarks | credits
    flow_low: int = 0
    flow_high: int = 0
    credits: int = 0
    flow_text: str = "none"  # the flow form as the spec gives it, canonical
    others: tuple = ()  # (key, value) for the schema's keys not in NAMED_KEYS, in its order

    def as_dict(self) -> dict[str, Any]:
        doc = asdict(self)
        del doc["flow_text"], doc["others"]
        doc.update(self.others)
        return doc

    @property
    def values(self) -> dict[str, Any]:
        """The policy in the spec's (and the ports') words."""
        return {
            "call": self.call,
            "sync": self.sync,
            "dispatch": self.dispatch,
            "worker": self.worker_depth,
            "worker_resume": self.worker_resume,
            "ordering": self.ordering,
            "reorder_capacity": self.reorder_capacity,
            "reorder_timeout_ms": self.reorder_timeout_ms,
            "flow": self.flow_text,
            **dict(self.others),
        }

    @property
    def fanout(self) -> str:
        """How a uses port with several connections hands each packet to
        them: "sequential", "parallel" or "drop" (the schema's `fanout`); a
        runtime whose schema has no such key sends one connection after
        another, which is "sequential"."""
        return str(dict(self.others).get("fanout", "sequential"))

    @property
    def protocol(self) -> str:
        """What the connection speaks on the wire: "scabench" (the project's
        data ports) or "bulkio" (BulkIO's data interfaces: the schema's
        `protocol`); a runtime whose schema has no such key speaks scabench."""
        return str(dict(self.others).get("protocol", SCABENCH_PROTOCOL))

    @property
    def max_server_threads_per_connection(self) -> int | None:
        """The omniORB setting behind `dispatch`, or None for its default."""
        if self.dispatch == "serial":
            return 1
        if self.dispatch.startswith("pool:"):
            return int(self.dispatch.split(":", 1)[1])
        return None

    @property
    def shares_connection_between_threads(self) -> bool:
        """Whether the receiving ORB may serve two calls of this connection
        at once on two threads. Only one-way requests (pushPacketOneway) can
        be on a connection while an earlier one is still in its upcall: a
        two-way caller (and sync = target) waits for its reply first, and
        omniORB gives each two-way call in progress a connection of its own."""
        one_way = self.call == "oneway" and self.sync != "target"
        return one_way and self.max_server_threads_per_connection != 1

    def _properties(self, port, sides):
        schema = policy_schema()
        # A "level" (worker_resume) is one of its words or a number: the port takes it as text.
        return {
            f"{port}.{key}": str(value) if schema[key]["type"] == "level" else value
            for key, value in self.values.items()
            if schema[key]["side"] in sides
        }

    def uses_properties(self, port: str) -> dict[str, Any]:
        return self._properties(port, ("uses", "both"))

    def provides_properties(self, port: str) -> dict[str, Any]:
        return self._properties(port, ("provides", "both"))


# omniORB's connection-watching thread (SocketCollection) is what gives a
# second thread a connection whose own thread is still in an upcall. It polls
# with its timeout cut to whole milliseconds, so whenever something wakes it
# early (the upcall's thread marking its connection watchable, each call) it
# spins in poll() up to a millisecond before its next scan: at 40 packets/s
# that was 100-650 poll() calls per packet in every receiving host, most of a
# hop's CPU (docs/findings/hop-cost.md). A host none of whose connections in
# shares a connection between threads does without it: one thread per
# connection, and a scan once an hour (the period is omniORB's unsigned long
# of microseconds, at most ~71 minutes), so nothing wakes it. That cannot
# change what a policy means: a two-way connection never has two calls at once.
# Connections that do share (one-way with a pool) keep omniORB's defaults: with
# a long period and one-way requests piling up, omniORB left one unread (a
# sink stalled at 166,906 of 400,000 packets flat out).
QUIET_WATCH_OPTIONS = ["-ORBmaxServerThreadPerConnection", "1", "-ORBconnectionWatchPeriod", str(3_600_000_000)]


def host_orb_options(policies: list["Policy"]) -> list[str]:
    """ORB options for a host that receives on remote connections with these
    policies (none: a host that only sends): the one place a policy becomes
    ORB options. Every connection into a host has the same dispatch
    (checks.check_dispatch_per_host), so the first one's is the host's."""
    if not any(p.shares_connection_between_threads for p in policies):
        return list(QUIET_WATCH_OPTIONS)
    n = policies[0].max_server_threads_per_connection
    return [] if n is None else ["-ORBmaxServerThreadPerConnection", str(n)]


def parse_policy(table: dict[str, Any], base: "Policy | None" = None) -> "Policy":
    """Builds a Policy from a TOML table, on top of `base` (default: the
    runtime's defaults). Raises PolicyValueError naming the key and what is
    valid."""
    schema = policy_schema()
    values = dict(base.values) if base else {key: entry["default"] for key, entry in schema.items()}
    for key, value in table.items():
        if key not in schema:
            raise PolicyValueError(key, f"unknown policy key; valid keys: {', '.join(schema)}")
        values[key] = _check(key, value, schema[key])
    for key, entry in schema.items():
        for other, required in entry.get("only_with", {}).items():
            if key in table and table[key] != entry["default"] and values[other] != required:
                raise PolicyValueError(key, f'{key} only applies to {other} = "{required}"')
        # What a value asks of the other keys (protocol = "bulkio": what
        # BulkIO's wire carries), the one rule of the runtime's schema.
        for other, wanted in entry.get("needs", {}).get(values[key], {}).get("keys", {}).items():
            if values[other] != wanted:
                why = entry["needs"][values[key]]["why"]
                raise PolicyValueError(
                    other,
                    f'{other} = {values[other]!r} cannot go with {key} = "{values[key]}" '
                    f'(use {other} = "{wanted}"): {why}',
                )
        if entry["type"] == "level" and not isinstance(values[key], str):
            below = values[entry["below"]]
            if not below:
                raise PolicyValueError(
                    key, f"it applies to a {entry['below']} queue; set {entry['below']} = true or a depth"
                )
            if values[key] >= below:
                raise PolicyValueError(
                    key,
                    f"{values[key]!r} is not valid with {entry['below']} depth {below}; "
                    f"use {_words(entry['values'])} or 0 <= r < {below}",
                )
    flow = _form_parts(values["flow"], schema["flow"])
    return Policy(
        call=values["call"],
        sync=values["sync"],
        dispatch=values["dispatch"],
        worker_depth=values["worker"],
        worker_resume=values["worker_resume"],
        ordering=values["ordering"],
        reorder_capacity=values["reorder_capacity"],
        reorder_timeout_ms=float(values["reorder_timeout_ms"]),
        flow=flow[0],
        flow_low=flow[1].get("lo", 0),
        flow_high=flow[1].get("hi", 0),
        credits=flow[1].get("w", 0),
        flow_text=values["flow"],
        others=tuple((key, values[key]) for key in schema if key not in NAMED_KEYS),
    )


def written(policy: "Policy") -> dict[str, Any]:
    """A policy's values as a spec writes them: a queue depth of 0 is false
    (none; the schema takes no depth 0), the default depth true."""
    schema = policy_schema()
    words = {}
    for key, value in policy.values.items():
        if schema[key]["type"] == "depth" and value in (0, schema[key]["true"]):
            value = value != 0
        words[key] = value
    return words


def policy_tables(
    connections: list["Connection"], path: str | Path
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """How a spec writes its connections' policies: ([policy], {connection id:
    its keys over [policy]}), as few keys as say every connection's policy,
    the most common policy as the default. A policy reached only through a
    default (a key that only applies with another) can need another default,
    and so does a connection of a port with one connection whose fan-out keys
    differ from the default's (a spec may give them only in [policy]); each
    is tried in turn. `path`: the spec's, for the error."""
    runtime = written(parse_policy({}))
    common = Counter(conn.policy for conn in connections).most_common()
    alone = {port for port, n in Counter(tuple(conn.uses) for conn in connections).items() if n == 1}
    for candidate, _ in common or [(parse_policy({}), 0)]:
        # call always: whether a connection is one-way is what a reader looks for first.
        table = {"call": candidate.call, **{k: v for k, v in written(candidate).items() if v != runtime[k]}}
        try:
            base = parse_policy(table)
            if base != candidate:
                continue
            overrides = {}
            for conn in connections:
                keys = {k: v for k, v in written(conn.policy).items() if v != written(base)[k]}
                if parse_policy(keys, base) != conn.policy:
                    raise PolicyValueError("", "not the same policy")
                if tuple(conn.uses) in alone and any(k in FANOUT_KEYS for k in keys):
                    raise PolicyValueError("", "a fan-out key on a port with one connection")
                overrides[conn.id] = keys
        except PolicyValueError:
            continue
        return table, overrides
    raise ScabenchError(
        f"{path}: the connections' policies cannot be written as [policy] and a connection's keys over it"
    )


def _words(values):
    return ", ".join(f'"{v}"' for v in values)


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _check(key, value, entry):
    """One value against its schema entry; returns the canonical value."""
    kind = entry["type"]
    if kind == "choice":
        if value not in entry["values"]:
            raise PolicyValueError(key, f"{value!r} is not valid; use one of: {', '.join(entry['values'])}")
        return value
    if kind == "form":
        if not isinstance(value, str):
            raise PolicyValueError(key, f"{value!r} is not valid; use {_form_help(entry)}")
        name, args = _form_parts(value, entry, key)
        return _form_text(entry, name, args)
    if kind == "depth":
        if value is True:
            return entry["true"]
        if value is False:
            return 0
        if _whole(value) and entry["min"] <= value <= entry["max"]:
            return value
        raise PolicyValueError(
            key,
            f"{value!r} is not valid; use false, true (depth {entry['true']}) or a queue "
            f"depth >= {entry['min']} (at most {entry['max']})",
        )
    if kind == "level":
        if value in entry["values"] or (_whole(value) and value >= entry["min"]):
            return value
        raise PolicyValueError(
            key, f"{value!r} is not valid; use {_words(entry['values'])} or a queue level r >= {entry['min']}"
        )
    if kind == "integer":
        if _whole(value) and entry["min"] <= value <= entry["max"]:
            return value
        raise PolicyValueError(
            key,
            f"{value!r} is not valid; use a whole number from {entry['min']} to "
            f"{entry['max']} ({entry['description']})",
        )
    if kind == "real":
        if (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value)
            and entry["min"] <= value <= entry["max"]
        ):
            return float(value)
        raise PolicyValueError(key, f"{value!r} is not valid; use a number from {entry['min']} to {entry['max']}")
    raise PolicyValueError(key, f"the runtime's schema has a type this version cannot check: {kind!r}")


def _form_help(entry):
    ranges = "; ".join(f"{arg} from {r['min']} to {r['max']}" for arg, r in entry.get("args", {}).items())
    rules = "; ".join(entry.get("constraints", []))
    return ", ".join(entry["forms"]) + (f" ({ranges}" + (f"; {rules}" if rules else "") + ")" if ranges else "")


@cache
def _form_pattern(form, args):
    """ "watermarks(lo, hi)" -> a regex with a group per argument (in order),
    blanks allowed around punctuation; and the arguments' names."""
    tokens = re.findall(r"\w+|\S", form)
    names = tuple(tok for tok in tokens if tok in args)
    regex = r"\s*".join(r"(\d+)" if tok in args else re.escape(tok) for tok in tokens)
    return re.compile(r"\s*" + regex + r"\s*"), names


def _form_parts(text, entry, key="flow"):
    """ "credits(32)" -> ("credits", {"w": 32}), checked against the ranges and constraints."""
    args = tuple(entry.get("args", {}))
    for form in entry["forms"]:
        pattern, names = _form_pattern(form, args)
        m = pattern.fullmatch(text)
        if not m:
            continue
        values = {n: int(v) for n, v in zip(names, m.groups())}
        for n, v in values.items():
            r = entry["args"][n]
            if not r["min"] <= v <= r["max"]:
                raise PolicyValueError(
                    key, f"{text!r}: {n} must be from {r['min']} to {r['max']} (in {form}, {n} >= {r['min']})"
                )
        for rule in entry.get("constraints", []):
            a, op, b = rule.split()
            if a in values and b in values and not {"<": values[a] < values[b], "<=": values[a] <= values[b]}[op]:
                raise PolicyValueError(key, f"{text!r}: {form} needs {rule}")
        return re.split(r"[(:]", form)[0], values
    raise PolicyValueError(key, f"{text!r} is not valid; use {_form_help(entry)}")


def _form_text(entry, name, values):
    """The canonical text of a form: the schema's own spelling with the numbers in."""
    form = next(
        f
        for f in entry["forms"]
        if re.split(r"[(:]", f)[0] == name and set(re.findall(r"\b\w+\b", f)) - {name} == set(values)
    )
    for n, v in values.items():
        form = re.sub(rf"\b{re.escape(n)}\b", str(v), form)
    return form

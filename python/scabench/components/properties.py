"""A component's configurable properties, as in the C++ runtime
(cpp/runtime/include/scabench/runtime/properties.hpp): declared once with a
CORBA type, a default, a description and optionally a check, and whether
configure may change it while the component is started; set through
CF::PropertySet::configure, read by the component.

Values arrive as CORBA anys, typed by whoever sent them: a launcher may
send 5000 as a short, an unsigned long, a long long or a double. A numeric
property takes a value of any numeric CORBA type (octet, short, unsigned
short, long, unsigned long, long long, unsigned long long, float, double) if
it fits the declared type: an integer property takes a floating value only if
it is a whole number, a float property a double only within float's range.
A boolean takes only a boolean, a string only a string. query answers in the
declared type. The messages are the C++ runtime's.

A configure is all or nothing: unknown ids, values that do not fit, values a
check refuses and, on a started component, properties that cannot change
while it is started, are rejected together with
CF::PropertySet::InvalidConfiguration, whose message names each id and what
would be valid, and nothing changes (so never PartialConfiguration).
"""

import math
import re
import struct
import threading
from typing import Any

from omniORB import CORBA, tcInternal

from scabench.components import idl

_CF = idl.load().CF

# The declared types, by their IDL names: (how a value is held, type code, integer range or None).
TYPES: dict[str, tuple[type, Any, tuple[int, int] | None]] = {
    "boolean": (bool, CORBA.TC_boolean, None),
    "octet": (int, CORBA.TC_octet, (0, 255)),
    "short": (int, CORBA.TC_short, (-(2**15), 2**15 - 1)),
    "unsigned short": (int, CORBA.TC_ushort, (0, 2**16 - 1)),
    "long": (int, CORBA.TC_long, (-(2**31), 2**31 - 1)),
    "unsigned long": (int, CORBA.TC_ulong, (0, 2**32 - 1)),
    "long long": (int, CORBA.TC_longlong, (-(2**63), 2**63 - 1)),
    "float": (float, CORBA.TC_float, None),
    "double": (float, CORBA.TC_double, None),
    "string": (str, CORBA.TC_string, None),
}
# A sequence property's type: "sequence<T>", T one of TYPES; held as a list,
# taken from any CORBA sequence whose elements each fit T (a PRF
# simplesequence, as REDHAWK and the launcher put one in an any).
SEQUENCE = re.compile(r"sequence<(.+)>")
# A type from a default, as the C++ runtime's declare without a type does.
_BY_DEFAULT = {bool: "boolean", int: "long long", float: "double", str: "string"}
_NUMBERS = {
    CORBA.tk_short,
    CORBA.tk_long,
    CORBA.tk_longlong,
    CORBA.tk_ushort,
    CORBA.tk_ulong,
    CORBA.tk_ulonglong,
    CORBA.tk_octet,
    CORBA.tk_float,
    CORBA.tk_double,
}
_FLOATING = {CORBA.tk_float, CORBA.tk_double}
_KIND_NAMES = {
    CORBA.tk_boolean: "boolean",
    CORBA.tk_string: "string",
    CORBA.tk_char: "char",
    CORBA.tk_wchar: "wchar",
    CORBA.tk_wstring: "wstring",
    CORBA.tk_null: "null",
    CORBA.tk_void: "void",
    CORBA.tk_struct: "struct",
    CORBA.tk_sequence: "sequence",
    CORBA.tk_enum: "enum",
}
FLOAT_MAX = struct.unpack("<f", b"\xff\xff\x7f\x7f")[0]


class Refused(ValueError):
    """A check's verdict on a value: the message says what would be valid."""


def _article(name):
    return ("an " if name[0] in "aeiou" else "a ") + name


def _kind(any_value):
    tc = any_value.typecode()
    while tc.kind() == CORBA.tk_alias:  # a typedef'd number is still that number
        tc = tc.content_type()
    return tc.kind()


def _element_any(value, tc):
    """One element of a sequence, as an any of the sequence's element type."""
    return CORBA.Any(tc, value)


def from_any(any_value, ptype):
    """The any's value as a value of the declared type `ptype` (an IDL name,
    or "sequence<T>"); Refused, saying what the property takes ("is an
    unsigned long: ..."), if it does not fit. A narrower range is the
    property's check."""
    if isinstance(ptype, dict):  # a struct: {member: its type}
        return _struct_from_any(any_value, ptype)
    element = SEQUENCE.fullmatch(ptype)
    if element is not None:
        return _sequence_from_any(any_value, element.group(1))
    tk, value = _kind(any_value), any_value.value()
    is_ = f"is {_article(ptype)}"
    what = "number" if tk in _NUMBERS else _KIND_NAMES.get(tk, "value of another type")
    if ptype == "boolean":
        if tk == CORBA.tk_boolean:
            return bool(value)
        raise Refused(f"{is_}: it takes a boolean, not {_article(what)}")
    if ptype == "string":
        if tk == CORBA.tk_string:
            return value
        raise Refused(f"{is_}: it takes a string, not {_article(what)}")
    if tk not in _NUMBERS:
        raise Refused(f"{is_}: it takes a number of any CORBA numeric type, not {_article(what)}")
    held, _, limits = TYPES[ptype]
    if held is int:
        assert limits is not None  # every integer type has its bounds
        lo, hi = limits
        valid = f": use a whole number in [{lo}, {hi}]"
        if tk in _FLOATING:
            if not (math.isfinite(value) and value == int(value)):
                raise Refused(f"{is_}: {value!r} is not a whole number{valid}")
            value = int(value)
        if not lo <= value <= hi:
            raise Refused(f"{is_}: {value} does not fit{valid}")
        return int(value)
    value = float(value)
    if ptype == "float":
        if math.isfinite(value) and abs(value) > FLOAT_MAX:
            raise Refused(f"{is_}: {value!r} is beyond the range of a float")
        value = struct.unpack("<f", struct.pack("<f", value))[0]  # held as query will answer it
    return value


def _sequence_from_any(any_value, element):
    """A sequence<element> property's value from an any holding a CORBA
    sequence: each element judged as a property of the element type is."""
    tc = any_value.typecode()
    while tc.kind() == CORBA.tk_alias:
        tc = tc.content_type()
    if tc.kind() != CORBA.tk_sequence:
        what = "number" if tc.kind() in _NUMBERS else _KIND_NAMES.get(tc.kind(), "value of another type")
        raise Refused(f"is a sequence of {element}: it takes a CORBA sequence, not {_article(what)}")
    values = any_value.value()
    if isinstance(values, bytes):  # an octet sequence comes as bytes
        values = list(values)
    content = tc.content_type()
    taken = []
    for i, value in enumerate(values):
        try:
            taken.append(from_any(_element_any(value, content), element))
        except Refused as exc:
            raise Refused(f"is a sequence of {element}: element {i} {exc}") from None
    return taken


def _struct_from_any(any_value, members):
    """A struct property's value from an any holding a CF::Properties of its
    members (a PRF struct, as REDHAWK and the launcher put one in an any):
    each member judged by its type; members not given keep their value."""
    given = any_value.value()
    if not isinstance(given, list) or not all(isinstance(m, _CF.DataType) for m in given):
        raise Refused(f"is a struct of {', '.join(members)}: it takes a CF::Properties of its members")
    taken = {}
    for member in given:
        if member.id not in members:
            raise Refused(f"is a struct: {member.id!r} is not a member; it has: {', '.join(members)}")
        try:
            taken[member.id] = from_any(member.value, members[member.id])
        except Refused as exc:
            raise Refused(f"is a struct: member {member.id!r} {exc}") from None
    return taken


def to_any(value, ptype):
    """A property value as query answers it: in its declared type."""
    if isinstance(ptype, dict):  # a struct, as a CF::Properties of its members
        return CORBA.Any(_CF._tc_Properties, [_CF.DataType(m, to_any(value[m], t)) for m, t in ptype.items()])
    element = SEQUENCE.fullmatch(ptype)
    if element is not None:
        return CORBA.Any(_sequence_tc(element.group(1)), value)
    return CORBA.Any(TYPES[ptype][1], value)


def _sequence_tc(element):
    """The type code of an (anonymous) sequence of `element`, what query
    answers a sequence property in; a reader takes it by its kind."""
    if element == "string":
        content: Any = (tcInternal.tv_string, 0)
    else:
        content = getattr(tcInternal, "tv_" + element.replace("unsigned ", "u").replace("long long", "longlong"))
    return tcInternal.createTypeCode((tcInternal.tv_sequence, content, 0))


class Property:
    __slots__ = ("check", "default", "description", "type", "value", "while_started")

    def __init__(self, value, ptype, description, check, while_started):
        self.value = self.default = value
        self.type, self.description, self.check, self.while_started = ptype, description, check, while_started


class PropertyBag:
    """bag.declare("work_us", 5000, "work per packet, microseconds", check, type="unsigned long",
    while_started=True) then bag["work_us"]. A check takes the converted value
    and raises Refused (or ValueError) saying what would be valid. Without a
    type, the default's: boolean, long long, double or string."""

    def __init__(self):
        self._entries = {}
        self._lock = threading.Lock()  # configure and query may come on two ORB threads

    def declare(self, pid, default, description, check=None, type=None, while_started=False):
        if type == "struct":
            # A struct's members are typed by their defaults (boolean, long long, double, string).
            if not isinstance(default, dict) or any(v.__class__ not in _BY_DEFAULT for v in default.values()):
                raise TypeError(f"property {pid}: a struct's default is {{member: a simple value}}, not {default!r}")
            members = {m: _BY_DEFAULT[v.__class__] for m, v in default.items()}
            self._entries[pid] = Property(dict(default), members, description, check, while_started)
            return
        ptype = type or _BY_DEFAULT.get(default.__class__)
        element = SEQUENCE.fullmatch(ptype or "")
        if element is not None:
            held = TYPES.get(element.group(1), (None,))[0]
            if not isinstance(default, list) or held is None or any(v.__class__ is not held for v in default):
                raise TypeError(f"property {pid}: a default of {default!r} for type {ptype!r}")
        elif ptype not in TYPES or default.__class__ is not TYPES[ptype][0]:
            raise TypeError(f"property {pid}: a default of {default!r} for type {ptype!r}")
        self._entries[pid] = Property(default, ptype, description, check, while_started)

    def __getitem__(self, pid):
        return self._entries[pid].value

    def __contains__(self, pid):
        return pid in self._entries

    def entries(self):
        """{id: Property} (value, default, type, description, check, while_started): what a describe would list."""
        return dict(self._entries)

    def configure(self, props, started=False):
        """Applies a CF::Properties sequence, all or nothing. `started`: only
        properties declared while_started may change."""
        staged, invalid, why = {}, [], []
        for prop in props:
            entry = self._entries.get(prop.id)
            try:
                if entry is None:
                    raise Refused(f": unknown property (valid: {' '.join(sorted(self._entries))})")
                if started and not entry.while_started:
                    can = " ".join(sorted(k for k, e in self._entries.items() if e.while_started))
                    raise Refused(
                        " cannot change while the component is started (stop it first"
                        + (f"; these can change while started: {can})" if can else ")")
                    )
                try:
                    value = from_any(prop.value, entry.type)
                except Refused as exc:
                    raise Refused(f" {exc}") from None  # "is a ...: ..."
                if entry.check:
                    try:
                        entry.check(value)
                    except ValueError as exc:  # Refused, or a check's own ValueError
                        raise Refused(f": {exc}") from None
                staged[prop.id] = value
            except Refused as exc:
                why.append(f"property '{prop.id}'{exc}")
                invalid.append(prop)
        if invalid:
            raise _CF.PropertySet.InvalidConfiguration("; ".join(why), invalid)
        with self._lock:
            for pid, value in staged.items():
                entry = self._entries[pid]
                # A struct's members not given keep their values.
                entry.value = {**entry.value, **value} if isinstance(entry.type, dict) else value

    def query(self, props):
        """CF::PropertySet::query: every property for an empty sequence, else
        the ones asked for; UnknownProperties names the ids that are not."""
        with self._lock:
            if not props:
                return [_CF.DataType(pid, to_any(e.value, e.type)) for pid, e in sorted(self._entries.items())]
            unknown = [p for p in props if p.id not in self._entries]
            if unknown:
                raise _CF.UnknownProperties(unknown)
            return [_CF.DataType(p.id, to_any(self._entries[p.id].value, self._entries[p.id].type)) for p in props]


# Checks shared by the ports and components.


def one_of(*values, supported=None):
    """A check for a choice. `supported`: the subset this implementation does;
    a value outside it is refused as unsupported, never ignored. The check
    carries the names it takes (`values`), which describe publishes, as the
    C++ runtime's oneOf does."""

    def check(value):
        if value not in values:
            raise Refused(f"{value!r} is not valid; use one of: {', '.join(values)}")
        if supported is not None and value not in supported:
            raise Refused(f"{value!r} is not supported by the Python runtime (supported: {', '.join(supported)})")

    check.values = list(supported if supported is not None else values)  # type: ignore[attr-defined]
    return check


def at_least(low, high=None):
    """A check for a range. It carries its bounds (`low`, `high`: None for
    none but the type's), which describe publishes, as the C++ runtime's
    within does."""

    def check(value):
        if value < low or (high is not None and value > high):
            upto = f" to {high}" if high is not None else " up"
            raise Refused(f"{value} is not valid; use a number from {low}{upto}")

    check.low, check.high = low, high  # type: ignore[attr-defined]
    return check

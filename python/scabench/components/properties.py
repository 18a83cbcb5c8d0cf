"""A component's configurable properties, as in the C++ runtime
(cpp/runtime/include/scabench/runtime/properties.hpp): declared once with a
default, a description and optionally a check, set through
CF::PropertySet::configure, read by the component.

A property's type is its default's: bool, int (int64), float or str. A
configure is all or nothing: unknown ids, values of the wrong type and values
a check refuses are rejected together with CF::PropertySet::InvalidConfiguration,
whose message names each id and what would be valid, and nothing changes.

Values arrive as CORBA anys, typed by whoever sent them: a launcher may
send 5000 as a short, a long, an unsigned long long or a double. An integer
property takes any integer type and any floating value that is a whole
number, as long as it fits in 64 bits; a real takes any number.
"""
import math
import threading

from omniORB import CORBA

from scabench.components import idl

_CF = idl.load().CF

_INTEGRAL = {CORBA.tk_short, CORBA.tk_long, CORBA.tk_longlong, CORBA.tk_ushort, CORBA.tk_ulong,
             CORBA.tk_ulonglong, CORBA.tk_octet}
_FLOATING = {CORBA.tk_float, CORBA.tk_double}
_INT64 = (-2 ** 63, 2 ** 63 - 1)
_TYPE_NAMES = {bool: "boolean", int: "integer", float: "real", str: "string"}
_TO_TC = {bool: CORBA.TC_boolean, int: CORBA.TC_longlong, float: CORBA.TC_double, str: CORBA.TC_string}


class Refused(ValueError):
    """A check's verdict on a value: the message says what would be valid."""


def _kind(any_value):
    tc = any_value.typecode()
    while tc.kind() == CORBA.tk_alias:  # a typedef'd number is still that number
        tc = tc.content_type()
    return tc.kind()


def from_any(any_value, kind):
    """The any's value as a Python value of type `kind`; Refused if it is not one."""
    tk, value = _kind(any_value), any_value.value()
    if kind is bool and tk == CORBA.tk_boolean:
        return bool(value)
    if kind is str and tk == CORBA.tk_string:
        return value
    if kind is float and (tk in _INTEGRAL or tk in _FLOATING):
        return float(value)
    if kind is int:
        if tk in _FLOATING and math.isfinite(value) and value == int(value):
            value, tk = int(value), CORBA.tk_longlong
        if tk in _INTEGRAL:
            if not _INT64[0] <= value <= _INT64[1]:
                raise Refused(f"{value} does not fit in a 64-bit integer")
            return int(value)
        if tk in _FLOATING:
            raise Refused(f"must be a whole number, not {value!r}")
    raise Refused(f"must be a{'n' if kind is int else ''} {_TYPE_NAMES[kind]}" +
                  (" (any CORBA integer type, or a floating type holding a whole number)" if kind is int else ""))


def to_any(value):
    """A property value as the C++ runtime reports it: boolean, long long, double or string."""
    return CORBA.Any(_TO_TC[type(value)], value)


class Property:
    __slots__ = ("value", "description", "check")

    def __init__(self, value, description, check):
        self.value, self.description, self.check = value, description, check


class PropertyBag:
    """bag.declare("work_us", 5000, "work per packet, microseconds", check)
    then bag["work_us"]. A check takes the converted value and raises Refused
    (or ValueError) saying what would be valid."""

    def __init__(self):
        self._entries = {}
        self._lock = threading.Lock()  # configure and query may come on two ORB threads

    def declare(self, pid, default, description, check=None):
        if type(default) not in _TYPE_NAMES:
            raise TypeError(f"property {pid}: default must be bool, int, float or str, not {type(default).__name__}")
        self._entries[pid] = Property(default, description, check)

    def __getitem__(self, pid):
        return self._entries[pid].value

    def __contains__(self, pid):
        return pid in self._entries

    def entries(self):
        """{id: Property} (value, description, check): what a describe would list."""
        return dict(self._entries)

    def configure(self, props):
        """Applies a CF::Properties sequence, all or nothing."""
        staged, invalid, why = {}, [], []
        for prop in props:
            entry = self._entries.get(prop.id)
            try:
                if entry is None:
                    raise Refused(f"unknown property (valid: {' '.join(sorted(self._entries))})")
                value = from_any(prop.value, type(entry.value))
                if entry.check:
                    entry.check(value)
                staged[prop.id] = value
            except ValueError as exc:  # Refused, or a check's own ValueError
                why.append(f"property '{prop.id}': {exc}")
                invalid.append(prop)
        if invalid:
            raise _CF.PropertySet.InvalidConfiguration("; ".join(why), invalid)
        with self._lock:
            for pid, value in staged.items():
                self._entries[pid].value = value

    def query(self, props):
        """CF::PropertySet::query: every property for an empty sequence, else
        the ones asked for; UnknownProperties names the ids that are not."""
        with self._lock:
            if not props:
                return [_CF.DataType(pid, to_any(e.value)) for pid, e in sorted(self._entries.items())]
            unknown = [p for p in props if p.id not in self._entries]
            if unknown:
                raise _CF.UnknownProperties(unknown)
            return [_CF.DataType(p.id, to_any(self._entries[p.id].value)) for p in props]


# Checks shared by the ports and components.

def one_of(*values, supported=None):
    """A check for a choice. `supported`: the subset this implementation does;
    a value outside it is refused as unsupported, never ignored."""
    def check(value):
        if value not in values:
            raise Refused(f"{value!r} is not valid; use one of: {', '.join(values)}")
        if supported is not None and value not in supported:
            raise Refused(f"{value!r} is not supported by the Python runtime (supported: {', '.join(supported)})")
    return check


def at_least(low, high=None):
    def check(value):
        if value < low or (high is not None and value > high):
            upto = f" to {high}" if high is not None else " up"
            raise Refused(f"{value} is not valid; use a number from {low}{upto}")
    return check

"""Typed JSON objects: dataclasses that the code reads by attribute and that
are written as the objects of the result files, keys in the order of their
fields (docs/architecture.md, "Result JSON"). A run's result
(run/results.py), a campaign's entry (measure/campaign.py) and the
granularity lab's rows (studies/granularity/rows.py) are such types.

as_dict() gives the object; from_dict() reads one back. The JSON tells a
missing key from a null, so the fields say which they are:
- a field without a default is always written (None as null);
- optional(): left out while None;
- figure(): one of the figures an analysis step gives the object (a run's
  records read, a campaign entry summarised, a granularity row modelled);
  all of them are written, null where a figure has no value, once the
  object is `analysed`, and none of them before;
- state(): not written at all; how far the object has come, where the
  figures cannot tell (an entry summarised without a run has a null summary).
A new optional key is one more optional() field, in the place its key takes
in the file, so objects written without it read and write back unchanged.
from_dict() refuses keys it does not know rather than drop them: an object
rewritten from it would lose them; and a value of the wrong JSON type (a
figure written as a string, say), which every reader after it would take
for a figure or fail on in its own way."""

import types
import typing
from dataclasses import field, fields


def optional(kw_only=False):
    """A key an object may lack: left out of the JSON while None. kw_only:
    a keyword of the constructor, so that it may come before the positional
    fields (and its key before theirs)."""
    return field(default=None, kw_only=kw_only, metadata={"omit": "if None"})


def figure():
    """A figure of an analysed object (its `analysed`)."""
    return field(default=None, metadata={"omit": "unless analysed"})


def state(default):
    """What the object knows of itself and the JSON does not hold as a key."""
    return field(default=default, repr=False, metadata={"omit": "always"})


def _plain(value):
    if hasattr(value, "as_dict"):
        return value.as_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def as_dict(obj, analysed=True):
    """obj's JSON object: its fields in order, as the module docstring says."""
    out = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        omit = f.metadata.get("omit")
        if omit == "always" or (omit == "if None" and value is None) or (omit == "unless analysed" and not analysed):
            continue
        out[f.name] = _plain(value)
    return out


def from_dict(cls, doc, read=None):
    """cls from its JSON object; read: {key: function} for the keys that hold
    typed values (applied unless the value is null)."""
    if not isinstance(doc, dict):
        raise ValueError(f"{cls.__name__}: expected an object, not {type(doc).__name__}")
    known = {f.name for f in fields(cls) if f.metadata.get("omit") != "always"}
    unknown = [k for k in doc if k not in known]
    if unknown:
        raise ValueError(f"{cls.__name__}: unknown key(s) {', '.join(map(repr, unknown))}")
    typed = {f.name: f.type for f in fields(cls)}
    for key, value in doc.items():
        due = _json_types(typed[key])
        if due is not None and not _fits(value, due):
            raise ValueError(
                f"{cls.__name__}: {key} is {_json_name(value)} {_shown(value)}, where "
                f"{' or '.join(_JSON_NAMES[t] for t in due)} is due"
            )
    read = read or {}
    try:
        return cls(**{k: (read[k](v) if k in read and v is not None else v) for k, v in doc.items()})
    except TypeError as exc:  # a required key is missing
        raise ValueError(f"{cls.__name__}: {exc}") from None


# The JSON types a field's annotation may hold, in words.
_JSON_NAMES = {
    type(None): "null",
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    list: "a list",
    dict: "an object",
}


def _json_types(annotation):
    """The plain JSON types a field annotated so may hold, or None where it
    may hold a typed value (its reader checks it) or anything."""
    union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    options = typing.get_args(annotation) if union else (annotation,)
    return options if all(t in _JSON_NAMES for t in options) else None


def _fits(value, due):
    """Whether a JSON value is of one of the types due: a float field takes
    an integer too (JSON does not tell 2 from 2.0), no number field takes a
    boolean."""
    if isinstance(value, bool):
        return bool in due
    if isinstance(value, int) and float in due:
        return True
    return any(isinstance(value, t) for t in due if t is not bool)


def _json_name(value):
    return next((name for t, name in _JSON_NAMES.items() if t is type(value)), type(value).__name__)


def _shown(value):
    text = repr(value)
    return f"({text[:40]}…)" if len(text) > 40 else f"({text})"


def flat(doc, prefix=""):
    """A JSON object as one row of a table, for a list of rows that
    pandas.DataFrame (or csv.DictWriter) takes as it is: a nested object's
    keys joined to its own with "_" (latency_in_stage_us_p50), lists left out
    (a cell holds one value)."""
    row = {}
    for key, value in doc.items():
        if isinstance(value, dict):
            row.update(flat(value, f"{prefix}{key}_"))
        elif not isinstance(value, list):
            row[f"{prefix}{key}"] = value
    return row


def list_of(cls):
    """A reader for a key that holds a list of cls."""
    return lambda items: [cls.from_dict(item) for item in items]


class Typed:
    """as_dict() and from_dict() for a typed object (see the module
    docstring); a type whose keys hold typed values names their readers in
    its from_dict()."""

    @property
    def analysed(self):
        """Whether the figures (figure()) are written; a type with figures says when."""
        return True

    def as_dict(self):
        """The object as its JSON object (plain values, keys in the file's order)."""
        return as_dict(self, self.analysed)

    @classmethod
    def from_dict(cls, doc):
        """The object from its JSON object (as_dict's); ValueError if it is not one."""
        return from_dict(cls, doc)

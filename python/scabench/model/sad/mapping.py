"""Where SCA's words meet scabench's, in one place, for the loader and the
exporter alike:

- what an SPD implementation's <code> names: a kind of the runtime, a
  component library (plugin) or a program of its own (external);
- PRF simple types and the runtime's CORBA types;
- property values as PRF text and as spec values.

An implementation's code, REDHAWK- and OSSIE-shaped (an SPD's <code> names
the file that runs the component, relative to the SPD):

  <code type="Executable"><localfile name="scabench:stage"/></code>
      a kind of the runtime, hosted by scabench-host: the URI scheme
      "scabench:" names a kind (scabench-host --describe) where a file would
      be named
  <code type="SharedLibrary"><localfile name="build/libgain.so"/><entrypoint>gain</entrypoint></code>
      a component library (a plugin; docs/architecture.md "Component
      libraries"): a spec's library = "...", kind = the entrypoint (which
      may be left out when the library registers one kind)
  <code type="Executable"><localfile name="bin/mycomponent"/></code>
  <code type="Executable"><localfile name="cpp"/><entrypoint>cpp/mycomponent</entrypoint></code>
      a program of its own, started with the SCA exec parameters: a spec's
      kind = "external", exec = "..." (README, "External components"); with
      an entrypoint (REDHAWK's layout) the program is the entrypoint and the
      localfile its folder
"""

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUILTIN_SCHEME = "scabench:"
# A shared object, possibly versioned (libx.so.1).
SHARED_LIBRARY = re.compile(r"\.so(\.\d+)*$")

# A program of its own becomes an external component (kind = "external",
# exec = the program: the launcher starts it with the SCA exec parameters);
# the loader leaves it out of the placement, as such specs require.
EXTERNAL_KIND = "external"


@dataclass(frozen=True)
class Implementation:
    """What runs a component: exactly one of kind (with library, for a
    plugin's kind) or program."""

    kind: str | None = None
    library: Path | None = None
    program: Path | None = None


def implementation_of(code_type: str, localfile: str, entrypoint: str | None, folder: Path) -> "Implementation":
    """The Implementation an SPD's code names. `folder` is the SPD's. Raises
    ValueError with what is wrong (the caller knows the line)."""
    if localfile.startswith(BUILTIN_SCHEME):
        kind = localfile[len(BUILTIN_SCHEME) :]
        if not kind:
            raise ValueError(f'{localfile!r} names no kind; use "scabench:KIND" (scabench-host --describe)')
        if entrypoint and entrypoint not in (localfile, kind):
            raise ValueError(
                f"entrypoint {entrypoint!r}: the code is the runtime's kind {kind!r}, its own entry point; "
                f"leave the entrypoint out (or write {localfile!r})"
            )
        return Implementation(kind=kind)
    if code_type not in ("", "Executable", "SharedLibrary"):
        raise ValueError(f"code type {code_type!r}: scabench runs Executable and SharedLibrary code")
    # Absolute, as a spec's library and exec end up: the spec is the SAD, elsewhere.
    path = Path(os.path.abspath(folder / localfile))
    if code_type == "SharedLibrary" or SHARED_LIBRARY.search(localfile):
        return Implementation(kind=entrypoint or None, library=path)
    if entrypoint:
        # REDHAWK's layout: the localfile is the implementation's folder
        # ("cpp"), the entrypoint the program in it ("cpp/MyComponent"),
        # both relative to the SPD.
        return Implementation(program=Path(os.path.abspath(folder / entrypoint)))
    return Implementation(program=path)


def code_of(kind: str, library: str | Path | None, folder: str | Path) -> tuple[str, str, str | None]:
    """The SPD's (code type, localfile name, entrypoint) for a spec's
    component: the inverse of implementation_of. `folder` is the SPD's."""
    if library is None:
        return "Executable", BUILTIN_SCHEME + kind, None
    return "SharedLibrary", os.path.relpath(library, folder), kind


def component_table(name: str, implementation: "Implementation", properties: dict[str, Any]) -> dict[str, Any]:
    """The [[component]] table of a spec for one instantiation."""
    if implementation.program is not None:
        return {"name": name, "kind": EXTERNAL_KIND, "exec": str(implementation.program), **properties}
    table = {"name": name, "kind": implementation.kind, **properties}
    if implementation.library is not None:
        table["library"] = str(implementation.library)
    return table


def is_external(implementation: "Implementation") -> bool:
    """A component no host of the runtime holds: a process of its own."""
    return implementation.program is not None


# PRF simple types and the runtime's CORBA types (scabench-host --describe,
# "corba_type"). char and objref have no property of the runtime behind them.
PRF_TO_CORBA = {
    "boolean": "boolean",
    "octet": "octet",
    "short": "short",
    "ushort": "unsigned short",
    "long": "long",
    "ulong": "unsigned long",
    "longlong": "long long",
    "ulonglong": "unsigned long long",
    "float": "float",
    "double": "double",
    "string": "string",
    "char": "char",
    "objref": "Object",
}
CORBA_TO_PRF = {corba: prf for prf, corba in PRF_TO_CORBA.items()}
INTEGER_TYPES = ("octet", "short", "ushort", "long", "ulong", "longlong", "ulonglong")
REAL_TYPES = ("float", "double")


# What each PRF numeric type's CORBA type holds: a value beyond it would be
# narrowed on the wire (an octet 300 arrives as 44), so it is refused.
FLOAT_MAX = 3.4028234663852886e38
TYPE_BOUNDS: dict[str, tuple[float, float]] = {
    "octet": (0, 2**8 - 1),
    "short": (-(2**15), 2**15 - 1),
    "ushort": (0, 2**16 - 1),
    "long": (-(2**31), 2**31 - 1),
    "ulong": (0, 2**32 - 1),
    "longlong": (-(2**63), 2**63 - 1),
    "ulonglong": (0, 2**64 - 1),
    "float": (-FLOAT_MAX, FLOAT_MAX),
    "double": (-math.inf, math.inf),
}


def check_fits(value: Any, prf_type: str) -> None:
    """Raises ValueError, saying what is valid, where the number `value` does
    not fit the PRF type `prf_type` (a finite value in its CORBA type's bounds)."""
    bounds = TYPE_BOUNDS.get(prf_type)
    if bounds is None or isinstance(value, bool):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number ({prf_type})")
    low, high = bounds
    if not low <= value <= high:
        valid = f"a whole number in [{low}, {high}]" if prf_type in INTEGER_TYPES else f"a number within ±{high:g}"
        raise ValueError(f"{value!r} does not fit the PRF type {prf_type}; use {valid}")


def value_of(text: str, prf_type: str) -> Any:
    """A PRF value's text as the spec value it stands for. Raises ValueError."""
    if prf_type == "boolean":
        if text.strip().lower() not in ("true", "false"):
            raise ValueError(f"{text!r} is not a boolean; use true or false")
        return text.strip().lower() == "true"
    if prf_type in INTEGER_TYPES:
        if not re.fullmatch(r"[+-]?[0-9]+", text.strip()):
            raise ValueError(f"{text!r} is not a whole number ({prf_type})")
        check_fits(int(text), prf_type)
        return int(text)
    if prf_type in REAL_TYPES:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number ({prf_type})") from None
        check_fits(value, prf_type)
        return value
    if prf_type == "string":
        return text
    raise ValueError(f"type {prf_type!r}: scabench components take boolean, integer, floating and string properties")


def text_of(value: Any) -> str:
    """A spec value as PRF text: value_of(text_of(v), type) == v."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def range_of(low: str, high: str) -> tuple[float, float]:
    """A PRF <range>'s min and max: two numbers, min not above max. Raises
    ValueError saying what is wrong with the range itself."""
    try:
        low_value, high_value = float(low), float(high)
    except ValueError:
        raise ValueError(f"range min={low!r} max={high!r} is not two numbers") from None
    if not low_value <= high_value:
        raise ValueError(f"range min={low!r} max={high!r} is inverted: min must not be above max")
    return low_value, high_value


def check_range(value: Any, low: float, high: float) -> None:
    """A value against a PRF range (range_of). Raises ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("a range applies to a number")
    if not low <= value <= high:
        raise ValueError(f"{value!r} is outside the PRF's range, {low:g} to {high:g}")


def enumeration_values(enumerations: list[Any], prf_type: str) -> list[Any]:
    """The values a PRF <enumerations> allows: each <enumeration>'s value
    (its label where it has none, as REDHAWK reads it). Raises ValueError for
    one that is not of the property's type."""
    return [value_of(e.get("value", e.get("label")), prf_type) for e in enumerations]

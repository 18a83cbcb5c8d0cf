"""What the runtime offers, read from the host program itself
(`scabench-host --describe`), so that spec checks and components agree:
the component kinds (their ports and properties) and the connection policy
schema (its keys, values, forms, ranges and defaults).

A component library (a plugin, docs/architecture.md "Component libraries")
adds kinds: `component_kinds(library)` is what a host that loads it offers
(`scabench-host --library PATH --describe`), its own kinds marked with
`"library"`.

Besides the kinds scabench-host hosts, a spec may name the Python kinds
(PYTHON_KINDS), each a program of its own started with the SCA exec
parameters and described from its class, and EXTERNAL, any program or
reference, whose ports and properties only the component itself knows
(docs/architecture.md, "External components")."""

import functools
import importlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scabench.errors import ScabenchError
from scabench.paths import program

if TYPE_CHECKING:
    from scabench.model.spec import Component

EXTERNAL = "external"


@dataclass(frozen=True)
class PythonKind:
    module: str  # the module with the component's class and its program's main()
    cls: str
    script: str  # its console script (python/pyproject.toml)
    kind: str  # the KIND exec parameter its program checks


PYTHON_KINDS = {"py-stage": PythonKind("scabench.components.stage", "Stage", "scabench-py-stage", "stage")}


class LibraryError(ScabenchError):
    """A component library the host cannot use, in the host's own line."""


@functools.cache
def _describe(library=None, _version=None):
    host = program("scabench-host")
    args = [str(host), "--describe"] if library is None else [str(host), "--library", library, "--describe"]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (subprocess.SubprocessError, OSError) as exc:
        raise ScabenchError(f"{host} --describe failed: {exc}") from exc
    if out.returncode == 2 and library is not None:
        # The host's one line: "scabench-host: --library: <why>", then its usage.
        line = next((ln for ln in out.stderr.splitlines() if ln.startswith("scabench-host: ")), out.stderr.strip())
        raise LibraryError(line.removeprefix("scabench-host: ").removeprefix("--library: "))
    if out.returncode != 0 and library is not None:
        # Its initialisers run inside the host: a crash there is the library's.
        how = (
            f"killed by {signal.Signals(-out.returncode).name}"
            if out.returncode < 0
            else f"exit status {out.returncode}"
        )
        raise LibraryError(f"scabench-host failed while loading {library} ({how})")
    try:
        if out.returncode != 0:
            raise ValueError(f"exit {out.returncode}: {out.stderr.strip()}")
        return json.loads(out.stdout)
    except ValueError as exc:
        raise ScabenchError(f"{host} --describe failed: {exc}") from exc


def _library_describe(library):
    """The catalogue with a component library loaded; a library rebuilt in
    the meantime is described again."""
    try:
        info = os.stat(library)
        version = (info.st_mtime_ns, info.st_size, info.st_ino)
    except OSError:
        version = None
    return _describe(str(library), version)


def component_kinds(library: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """{kind: {"sample_types", "provides", "uses", "properties", and
    "ports" where the runtime gives them (kind_ports)}}: the built-in
    kinds, and with `library` (a path) that library's kinds too (each with
    "library"). Raises LibraryError for a library the host
    cannot load or that registers no kind."""
    return (_describe() if library is None else _library_describe(library))["kinds"]


def kind_declaration(kind: str, library: str | Path | None = None) -> dict[str, Any] | None:
    """A kind's declaration ({"sample_types", "provides", "uses",
    "properties"}): from its library if it comes from one, a Python kind's
    from its class; None for EXTERNAL, which declares nothing."""
    if kind in PYTHON_KINDS:
        return _python_kind(kind)
    if kind == EXTERNAL:
        return None
    return component_kinds(library)[kind]


def kind_of(component: "Component") -> dict[str, Any] | None:
    """The declaration of a spec's component (kind_declaration)."""
    return kind_declaration(component.kind, component.library)


# What a port carries when it follows the run's sample_type (run.sample_type).
SAMPLE_PORT = "sample"


def kind_ports(declared: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{port: {"direction", "type", "required", "description"}} of a kind's
    declaration: its "ports" where the catalogue gives them; from a
    catalogue that lists only port names ("provides", "uses"), each port
    carrying the run's sample type, a provides port required and a uses
    port not, which is what every such kind does."""
    if "ports" in declared:
        return declared["ports"]
    ports = {
        name: {"direction": "provides", "type": SAMPLE_PORT, "required": True, "description": ""}
        for name in declared["provides"]
    }
    ports.update(
        {
            name: {"direction": "uses", "type": SAMPLE_PORT, "required": False, "description": ""}
            for name in declared["uses"]
        }
    )
    return ports


def ports_of(component: "Component") -> dict[str, dict[str, Any]] | None:
    """The ports of a spec's component's kind (kind_ports); None for
    EXTERNAL, whose ports only the component itself knows."""
    declared = kind_of(component)
    return kind_ports(declared) if declared is not None else None


def port_names(ports: dict[str, dict[str, Any]], direction: str) -> list[str]:
    """The names of the ports of one direction ("uses" | "provides"), in the kind's order."""
    return [name for name, port in ports.items() if port["direction"] == direction]


def port_type(port: dict[str, Any], sample_type: str) -> str:
    """The samples a port carries in a run of `sample_type`."""
    return sample_type if port["type"] == SAMPLE_PORT else port["type"]


def kind_properties(kind: str, library: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """{property: its declaration} of a kind; none for EXTERNAL."""
    declared = kind_declaration(kind, library)
    return declared["properties"] if declared is not None else {}


def properties_of(component: "Component") -> dict[str, dict[str, Any]]:
    """{property: its declaration} of a spec's component's kind (kind_properties)."""
    return kind_properties(component.kind, component.library)


@functools.cache
def _python_kind(name: str) -> dict[str, Any]:
    # Imported here, not at the top: it loads omniORBpy and its stubs, which
    # only a spec with a Python component needs.
    from scabench.components.component import describe

    entry = PYTHON_KINDS[name]
    return describe(getattr(importlib.import_module(entry.module), entry.cls))


def kind_names() -> list[str]:
    """Every kind a spec may name without a library."""
    return [*component_kinds(), *PYTHON_KINDS, EXTERNAL]


def declared_kinds() -> dict[str, dict[str, Any]]:
    """{kind: its declaration} of every kind a spec may name without a
    library that declares one: all of kind_names() but EXTERNAL."""
    return {**component_kinds(), **{name: _python_kind(name) for name in PYTHON_KINDS}}


def shm_ring() -> dict[str, Any]:
    """What the runtime publishes of a shared-memory ring besides its data
    area's bounds (every uses port's shm_bytes): {"overhead_bytes": what a
    ring maps besides its data area}."""
    return _describe()["shm_ring"]


def policy_schema() -> dict[str, dict[str, Any]]:
    """{key: {"side", "type", "values" | "forms" and "args", "min", "max",
    "default", "description", ...}}: the runtime's policy table."""
    return _describe()["policy"]

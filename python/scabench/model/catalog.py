"""What the runtime offers, read from the host program itself
(`scabench-host --describe`), so that spec checks and components agree:
the component kinds (their ports and properties) and the connection policy
schema (its keys, values, forms, ranges and defaults).

A component library (a plugin, docs/architecture.md "Component libraries")
adds kinds: `component_kinds(library)` is what a host that loads it offers
(`scabench-host --library PATH --describe`), its own kinds marked with
`"library"`."""
import functools
import json
import os
import signal
import subprocess

from scabench.errors import ScabenchError
from scabench.paths import program


class LibraryError(ScabenchError):
    """A component library the host cannot use, in the host's own line."""


@functools.lru_cache(maxsize=None)
def _describe(library=None, _version=None):
    host = program("scabench-host")
    args = [str(host), "--describe"] if library is None else [str(host), "--library", library, "--describe"]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=30)
    except (subprocess.SubprocessError, OSError) as exc:
        raise ScabenchError(f"{host} --describe failed: {exc}") from exc
    if out.returncode == 2 and library is not None:
        # The host's one line: "scabench-host: --library: <why>", then its usage.
        line = next((l for l in out.stderr.splitlines() if l.startswith("scabench-host: ")), out.stderr.strip())
        raise LibraryError(line.removeprefix("scabench-host: ").removeprefix("--library: "))
    if out.returncode != 0 and library is not None:
        # Its initialisers run inside the host: a crash there is the library's.
        how = (f"killed by {signal.Signals(-out.returncode).name}" if out.returncode < 0
               else f"exit status {out.returncode}")
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


def component_kinds(library=None):
    """{kind: {"sample_types", "provides", "uses", "properties"}}: the
    built-in kinds, and with `library` (a path) that library's kinds too
    (each with "library"). Raises LibraryError for a library the host
    cannot load or that registers no kind."""
    return (_describe() if library is None else _library_describe(library))["kinds"]


def kind_of(component):
    """The declaration of a spec's component: its kind, from its library if
    it names one."""
    return component_kinds(component.library)[component.kind]


def policy_schema():
    """{key: {"side", "type", "values" | "forms" and "args", "min", "max",
    "default", "description", ...}}: the runtime's policy table."""
    return _describe()["policy"]

"""What the runtime offers, read from the programs themselves, so that spec
checks and components agree: the component kinds (their ports and
properties) of `scabench-host --describe` and of the Python components this
package serves, and the connection policy schema (its keys, values, forms,
ranges and defaults).

Three sorts of kind: the C++ kinds, hosted by scabench-host; the Python
kinds (PYTHON_KINDS), each a program of its own started with the SCA exec
parameters; and EXTERNAL, any program or reference named in the spec, whose
ports and properties only the component itself knows."""
import functools
import importlib
import json
import subprocess
from dataclasses import dataclass

from scabench.errors import ScabenchError
from scabench.paths import program

EXTERNAL = "external"


@dataclass(frozen=True)
class PythonKind:
    module: str      # the module with the component's class and its program's main()
    cls: str
    script: str      # its console script (python/pyproject.toml)
    kind: str        # the KIND exec parameter its program checks


PYTHON_KINDS = {"py-stage": PythonKind("scabench.components.stage", "Stage", "scabench-py-stage", "stage")}


@functools.lru_cache(maxsize=1)
def _describe():
    host = program("scabench-host")
    try:
        out = subprocess.run([str(host), "--describe"], check=True, capture_output=True, text=True, timeout=30)
        return json.loads(out.stdout)
    except (subprocess.SubprocessError, OSError, ValueError) as exc:
        raise ScabenchError(f"{host} --describe failed: {exc}") from exc


def component_kinds():
    """The C++ kinds, as scabench-host describes them."""
    return _describe()["kinds"]


@functools.lru_cache(maxsize=None)
def _python_kind(name):
    # Imported here, not at the top: it loads omniORBpy and its stubs, which
    # only a spec with a Python component needs.
    from scabench.components.component import describe
    entry = PYTHON_KINDS[name]
    return describe(getattr(importlib.import_module(entry.module), entry.cls))


def kind_names():
    """Every kind a spec may name."""
    return [*component_kinds(), *PYTHON_KINDS, EXTERNAL]


def kind_info(kind):
    """A kind's description ({"sample_types", "provides", "uses",
    "properties"}), or None for EXTERNAL, which describes nothing."""
    if kind in PYTHON_KINDS:
        return _python_kind(kind)
    if kind == EXTERNAL:
        return None
    return component_kinds()[kind]


def policy_schema():
    """{key: {"side", "type", "values" | "forms" and "args", "min", "max",
    "default", "description", ...}}: the runtime's policy table."""
    return _describe()["policy"]

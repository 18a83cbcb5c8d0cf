"""What the runtime offers, read from the host program itself
(`scabench-host --describe`), so that spec checks and components agree:
the component kinds (their ports and properties) and the connection policy
schema (its keys, values, forms, ranges and defaults)."""
import functools
import json
import subprocess

from scabench.errors import ScabenchError
from scabench.paths import program


@functools.lru_cache(maxsize=1)
def _describe():
    host = program("scabench-host")
    try:
        out = subprocess.run([str(host), "--describe"], check=True, capture_output=True, text=True, timeout=30)
        return json.loads(out.stdout)
    except (subprocess.SubprocessError, OSError, ValueError) as exc:
        raise ScabenchError(f"{host} --describe failed: {exc}") from exc


def component_kinds():
    return _describe()["kinds"]


def policy_schema():
    """{key: {"side", "type", "values" | "forms" and "args", "min", "max",
    "default", "description", ...}}: the runtime's policy table."""
    return _describe()["policy"]

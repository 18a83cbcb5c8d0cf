"""The component kinds the runtime offers, read from the host program itself
(`scabench-host --describe`), so that spec checks and components agree."""
import functools
import json
import subprocess

from scabench.errors import ScabenchError
from scabench.paths import program


@functools.lru_cache(maxsize=1)
def component_kinds():
    host = program("scabench-host")
    try:
        out = subprocess.run([str(host), "--describe"], check=True, capture_output=True, text=True, timeout=30)
    except (subprocess.SubprocessError, OSError) as exc:
        raise ScabenchError(f"{host} --describe failed: {exc}") from exc
    return json.loads(out.stdout)["kinds"]

"""Where the programs are: the C++ ones in the build tree of this checkout,
unless SCABENCH_BIN_DIR says otherwise; the Python ones beside the
interpreter."""
import os
import sys
from pathlib import Path

from scabench.errors import ScabenchError

REPO_ROOT = Path(__file__).resolve().parents[2]


def bin_dir() -> Path:
    return Path(os.environ.get("SCABENCH_BIN_DIR", REPO_ROOT / "build" / "bin"))


def program(name: str) -> Path:
    path = bin_dir() / name
    if not path.exists():
        raise ScabenchError(f"{path} is missing: build the runtime first (make build)")
    return path


def python_program(script: str, module: str) -> list:
    """The argv of a Python program of this package: its console script,
    installed beside this interpreter, or else the module run by this
    interpreter (a checkout used through PYTHONPATH)."""
    installed = Path(sys.executable).parent / script
    return [str(installed)] if installed.exists() else [sys.executable, "-m", module]


def experiments_dir() -> Path:
    """The specs that come with scabench, found by name from any directory."""
    return REPO_ROOT / "experiments"

"""Where the C++ programs are: the build tree of this checkout, unless
SCABENCH_BIN_DIR says otherwise."""
import os
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


def experiments_dir() -> Path:
    """The specs that come with scabench, found by name from any directory."""
    return REPO_ROOT / "experiments"

"""Where scabench's files are, in a source checkout and in an installed
package alike (docs/api.md, "Installed"):

- the C++ programs (scabench-host, scabench-launch, ...): $SCABENCH_BIN_DIR;
  else the checkout's build/bin; else the folder of the scabench-host found
  on PATH (the bin folder of `cmake --install build --prefix P`);
- the specs found by name (experiments/) and the IDL (idl/): ship with the
  package (scabench/bundled/, links to the checkout's folders, copied into
  a wheel as package data); $SCABENCH_EXPERIMENTS_DIR names another folder
  of specs;
- the Python programs: beside the interpreter."""

import os
import shutil
import sys
from pathlib import Path

from scabench.errors import ScabenchError

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parents[1]
# What the package carries besides its code: in a checkout, links to the
# checkout's experiments/ and idl/, which a wheel holds as copies.
BUNDLED = PACKAGE_DIR / "bundled"


def checkout():
    """The source checkout this package runs from, or None for an installed
    copy (its parents are site-packages and the environment's lib)."""
    if PACKAGE_DIR.parent.name == "python" and (REPO_ROOT / "CMakeLists.txt").is_file():
        return REPO_ROOT
    return None


def bin_dir() -> Path:
    """The folder of the C++ programs (the module docstring says where)."""
    if os.environ.get("SCABENCH_BIN_DIR"):
        return Path(os.environ["SCABENCH_BIN_DIR"])
    root = checkout()
    if root is not None:
        return root / "build" / "bin"
    host = shutil.which("scabench-host")
    if host is not None:
        return Path(host).resolve().parent
    raise ScabenchError(
        "scabench-host is not found: set SCABENCH_BIN_DIR to the folder of scabench's programs "
        "(a build's build/bin), or put the bin folder of `cmake --install build --prefix P` on PATH"
    )


def program(name: str) -> Path:
    path = bin_dir() / name
    if not path.exists():
        if checkout() is not None and "SCABENCH_BIN_DIR" not in os.environ:
            raise ScabenchError(f"{path} is missing: build the runtime first (make build)")
        raise ScabenchError(
            f"{path} is missing: SCABENCH_BIN_DIR (or PATH) must name the folder of scabench's "
            "programs (a build's build/bin, or the bin folder of its cmake --install prefix)"
        )
    if not os.access(path, os.X_OK) or path.is_dir():
        raise ScabenchError(f"{path} is not an executable program: make it one (chmod +x) or build the runtime again")
    return path


def python_program(script: str, module: str) -> list:
    """The argv of a Python program of this package: its console script,
    installed beside this interpreter, or else the module run by this
    interpreter (a checkout used through PYTHONPATH)."""
    installed = Path(sys.executable).parent / script
    return [str(installed)] if installed.exists() else [sys.executable, "-m", module]


def experiments_dir() -> Path:
    """The specs found by name from any directory: $SCABENCH_EXPERIMENTS_DIR,
    or those that come with scabench (the checkout's experiments/, which an
    installed package carries)."""
    if os.environ.get("SCABENCH_EXPERIMENTS_DIR"):
        return Path(os.environ["SCABENCH_EXPERIMENTS_DIR"])
    # Resolved: in a checkout, the folder the link names, so that paths read
    # experiments/paper/exp6.toml as everywhere else.
    return (BUNDLED / "experiments").resolve()


def idl_dir() -> Path:
    """The IDL of the components' interfaces (cf.idl, scabench.idl, node.idl)."""
    return (BUNDLED / "idl").resolve()

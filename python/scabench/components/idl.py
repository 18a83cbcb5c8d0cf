"""The omniORBpy stubs of idl/cf.idl, idl/bulkio.idl, idl/scabench.idl and idl/node.idl.

They are generated, never committed: on first use, omniidl's Python back end
(shipped with omniORBpy) writes them into a cache folder named after a hash
of the IDL text and the omniORB version, so an edited IDL file or another
omniORB gets fresh stubs and an unchanged one costs nothing. scripts/setup.sh
imports this module once, so a run does not pay for the generation.

The generated modules live in one package, `scabench_corba` (`-Wbpackage`):
the IDL's own module is called `scabench`, and unpackaged it would shadow
this Python package. The CORBA types that orb.idl brings in (OctetSeq,
DoubleSeq, ...) are omniORBpy's own modules (`-Wbextern`), so the stubs share
their type codes with the ORB.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import omniORB

from scabench.errors import ScabenchError
from scabench.paths import checkout, idl_dir

IDL_DIR = idl_dir()
IDL_FILES = ("cf.idl", "bulkio.idl", "scabench.idl", "node.idl")
PACKAGE = "scabench_corba"
# Where Debian's omniorb-idl puts orb.idl (the include path the C++ build uses
# too, CMakeLists.txt), and where a source build of omniORB would.
ORB_IDL_DIRS = (Path("/usr/share/idl/omniORB"), Path("/usr/local/share/idl/omniORB"))
# omniidl, run from the omniORBpy installation of this interpreter: its
# Python back end must be the one of the ORB that loads the stubs.
_OMNIIDL = "import sys, omniidl.main; sys.argv[0] = 'omniidl'; sys.exit(omniidl.main.main())"


def _orb_idl_dir():
    for d in ORB_IDL_DIRS:
        if (d / "orb.idl").exists():
            return d
    raise ScabenchError(
        "orb.idl not found in "
        + " or ".join(map(str, ORB_IDL_DIRS))
        + ": install Debian's omniorb-idl (scripts/setup.sh does)"
    )


def _key():
    h = hashlib.sha256(f"{PACKAGE} omniORB {omniORB.coreVersion()}\n".encode())
    for name in IDL_FILES:
        h.update((IDL_DIR / name).read_bytes())
    return h.hexdigest()[:16]


def _cache_roots():
    if os.environ.get("SCABENCH_IDL_CACHE"):
        yield Path(os.environ["SCABENCH_IDL_CACHE"])
    if checkout() is not None:
        yield checkout() / "build" / "python-idl"  # ignored by git, beside the C++ stubs
    yield Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "scabench" / "python-idl"


def _generate(root, final):
    """omniidl into a fresh folder, then one rename: a process that imports
    the stubs while another generates them sees all of them or none."""
    root.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".gen-", dir=root))
    try:
        cmd = [
            sys.executable,
            "-c",
            _OMNIIDL,
            "-bpython",
            f"-Wbpackage={PACKAGE}",
            "-Wbextern=corbaidl",
            "-Wbextern=boxes",
            f"-I{_orb_idl_dir()}",
            f"-I{IDL_DIR}",
            f"-C{work}",
            *(str(IDL_DIR / name) for name in IDL_FILES),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
        if done.returncode != 0 or not (work / PACKAGE / "scabench_idl.py").exists():
            why = (done.stderr or done.stdout).strip().splitlines()
            raise ScabenchError(f"omniidl -bpython failed on {IDL_DIR}: {why[-1] if why else 'no output'}")
        try:
            work.rename(final)
        except OSError:
            if not (final / PACKAGE).exists():  # not another process's finished copy
                raise
        for old in root.iterdir():  # stubs of an IDL this checkout no longer has
            if old.name != final.name and not old.name.startswith(".gen-"):
                shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def stub_dir():
    """The folder holding the `scabench_corba` package, generated if needed."""
    key, errors = _key(), []
    for root in _cache_roots():
        final = root / key
        if (final / PACKAGE / "scabench_idl.py").exists():
            return final
        try:
            _generate(root, final)
            return final
        except OSError as exc:  # this root is not writable: try the next one
            errors.append(f"{root}: {exc.strerror or exc}")
    raise ScabenchError("cannot write the omniORBpy stubs anywhere: " + "; ".join(errors))


@cache
def load():
    """The stub modules: CF and CF__POA, ExtendedCF and ExtendedCF__POA (cf.idl), BULKIO and BULKIO__POA
    (bulkio.idl), data and data__POA (the IDL
    module `scabench`), node and node__POA (`scabench::node`, node.idl), and
    CosNaming from omniORBpy."""
    folder = str(stub_dir())
    if folder not in sys.path:
        sys.path.append(folder)
    import CosNaming

    from scabench_corba import BULKIO, BULKIO__POA, CF, CF__POA, ExtendedCF, ExtendedCF__POA
    from scabench_corba import scabench as data
    from scabench_corba import scabench__POA as data__POA
    from scabench_corba.scabench import node
    from scabench_corba.scabench__POA import node as node__POA

    return SimpleNamespace(
        CF=CF,
        CF__POA=CF__POA,
        ExtendedCF=ExtendedCF,
        ExtendedCF__POA=ExtendedCF__POA,
        BULKIO=BULKIO,
        BULKIO__POA=BULKIO__POA,
        data=data,
        data__POA=data__POA,
        node=node,
        node__POA=node__POA,
        CosNaming=CosNaming,
    )

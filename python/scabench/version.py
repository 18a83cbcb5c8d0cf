"""Which scabench wrote a result: the package version and, when it runs
from a git checkout, the commit (with "-dirty" if tracked files were
changed), so a figure can be traced to the code that measured it."""

import functools
import subprocess

from scabench import __version__
from scabench.paths import REPO_ROOT


def _git(*args):
    out = subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        raise OSError(out.stderr.strip())
    return out.stdout.strip()


@functools.lru_cache(maxsize=1)
def commit():
    """The checkout's commit, or "unknown" outside a git checkout of this
    project (an installed copy, a tarball, a machine without git)."""
    try:
        # A copy that merely lies inside some other repository is not a checkout of this one.
        if _git("rev-parse", "--show-toplevel") != str(REPO_ROOT):
            return "unknown"
        head = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def version_info():
    """{"version", "commit"}: what every result file records (report/results_file.py)."""
    return {"version": __version__, "commit": commit()}

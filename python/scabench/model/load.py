"""The front door of run specs: the file a command line names (a path, or
a bundled spec's name: `find_spec`) loaded as a Spec (`load_spec`), from
TOML (model/spec_toml.py) or from an SCA waveform's SAD and its sidecar
(model/sad/load.py)."""

from pathlib import Path

from scabench.errors import SpecError
from scabench.model.sad.load import SAD_SUFFIX, SIDECAR_SUFFIX, is_sad, load_sad
from scabench.model.spec import Spec
from scabench.model.spec_toml import is_campaign_file, parse_spec, read_toml
from scabench.paths import experiments_dir


def load_spec(path: str | Path) -> Spec:
    """A spec from a TOML file, or from an SCA waveform's SAD (a path ending
    in .sad.xml, with its sidecar; model/sad/load.py)."""
    path = Path(path)
    if is_sad(path):
        return load_sad(path)
    if path.name.endswith(SIDECAR_SUFFIX):
        raise SpecError(
            path,
            "",
            f"the run settings of a waveform's SAD, not a spec; give the SAD "
            f"({path.name.removesuffix(SIDECAR_SUFFIX)}{SAD_SUFFIX})",
        )
    return parse_spec(read_toml(path), path)


def find_spec(name: str, root: str | Path | None = None) -> Path:
    """The spec a command line names: a path to it, or, where no such file
    exists, a name matched exactly against the stems of the specs under
    experiments/ (`exp6` is experiments/paper/exp6.toml), so a bundled spec
    runs from any directory. None or several matches: a SpecError listing
    what there is."""
    path = Path(name)
    if path.exists() or path.suffix == ".toml" or len(path.parts) != 1:
        return path
    root = Path(root) if root is not None else experiments_dir()
    # A waveform's sidecar (exp6.sad.toml) is not a spec: its SAD is, by path.
    specs = sorted(p for p in root.rglob("*.toml") if not p.name.endswith(SIDECAR_SUFFIX)) if root.is_dir() else []
    found = [p for p in specs if p.stem == name]  # compared, not globbed: a name may hold * or ?
    if len(found) == 1:
        return found[0]
    if found:
        raise SpecError(
            name,
            "",
            "names several specs in "
            + str(root)
            + ": "
            + ", ".join(str(p.relative_to(root)) for p in found)
            + "; give the path of one",
        )
    known = sorted({p.stem for p in specs if not is_campaign_file(p)})
    raise SpecError(
        name,
        "",
        f"no such file, and no spec of that name in {root}" + (f" (names: {', '.join(known)})" if known else ""),
    )

"""The package's layers: a module imports only from its own layer or the
layers below it (docs/architecture.md, "Layers"). Checked on the source, so a
new import that runs back up a layer fails here, not in review."""
import ast
from pathlib import Path

import scabench

PACKAGE = Path(scabench.__file__).parent
# Lowest first. The top-level modules (errors, paths, the terminal's console
# and units...) are the base every layer may use; the library's façade (api)
# may use every layer below it, and cli (and the package's own __init__) sit
# above everything.
LAYERS = ["base", "components", "model", "run", "measure", "node", "report", "waveforms", "studies", "api", "top"]
TOP_LEVEL = {"errors": "base", "paths": "base", "files": "base", "recording": "base", "signals": "base",
             "interrupts": "base", "typed": "base", "version": "base",
             "console": "base", "units": "base", "api": "api", "cli": "top", "__init__": "top"}


def layer_of(module):
    """'scabench.run.runner' -> 'run'."""
    parts = module.split(".")[1:]
    if not parts:
        return "top"
    return TOP_LEVEL.get(parts[0], parts[0])


def imports_of(path):
    """The scabench modules a source file imports (absolute imports only:
    the package uses no relative ones)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import; use scabench.<layer>.<module>"
            if node.module and node.module.split(".")[0] == "scabench":
                yield node.lineno, node.module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "scabench":
                    yield node.lineno, alias.name


def module_name(path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(rel.parts)


def test_every_module_sits_in_a_known_layer():
    for path in PACKAGE.rglob("*.py"):
        assert layer_of(module_name(path)) in LAYERS, f"{path} is in no layer of {LAYERS}"


def test_no_import_runs_back_up_a_layer():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = LAYERS.index(layer_of(module_name(path)))
        for line, module in imports_of(path):
            if module == "scabench":
                continue
            if LAYERS.index(layer_of(module)) > own:
                upward.append(f"{path.relative_to(PACKAGE)}:{line} imports {module}")
    assert not upward, "imports that run back up a layer:\n" + "\n".join(upward)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The rule above must be able to fail: a model module importing the runner is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("from scabench.run.runner import run_spec\n")
    assert [m for _, m in imports_of(bad)] == ["scabench.run.runner"]
    assert LAYERS.index(layer_of("scabench.run.runner")) > LAYERS.index(layer_of("scabench.model.spec"))

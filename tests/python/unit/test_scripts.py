"""scripts/ stand on the package, never on the tests: a script that reaches
into tests/ breaks when the tests move and ships test scaffolding as a tool.
Checked on the source (ast), as the layers are."""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TESTS = REPO / "tests"


def modules_under_tests():
    """The names a script could import from tests/ (its helper modules and test files)."""
    return {p.stem for p in TESTS.rglob("*.py")}


def reaches_into_tests(path, test_names):
    """Where the source imports a module that lives under tests/, or names
    the tests/ folder (as a sys.path entry would): 'LINE: what'."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value == "tests" or node.value.startswith("tests/") or "/tests/" in node.value:
                found.append(f"{node.lineno}: names the folder {node.value!r}")
            continue
        else:
            continue
        found += [f"{node.lineno}: imports {n}" for n in names if n.split(".")[0] in test_names]
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def test_no_script_imports_from_tests():
    names = modules_under_tests()
    bad = {
        str(p.relative_to(REPO)): hits
        for p in sorted((REPO / "scripts").rglob("*.py"))
        if (hits := reaches_into_tests(p, names))
    }
    assert not bad, f"scripts that reach into tests/: {bad}"


def test_the_checker_sees_a_script_reaching_into_tests(tmp_path):
    """The rule above must be able to fail: the way the cost scripts once did it is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\nfrom pathlib import Path\n"
        'sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "python"))\n'
        "from py_components_world import S\n"
    )
    assert reaches_into_tests(bad, modules_under_tests()) == [
        "3: names the folder 'tests'",
        "4: imports py_components_world",
    ]

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
TOP_LEVEL = {
    "errors": "base",
    "paths": "base",
    "files": "base",
    "recording": "base",
    "signals": "base",
    "interrupts": "base",
    "typed": "base",
    "version": "base",
    "console": "base",
    "units": "base",
    "latency_bins": "base",  # the latency histogram's bins: ports and the live view share them
    "api": "api",
    "cli": "top",
    "__init__": "top",
}


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


def executed_nodes(tree):
    """Every node of a module's tree but those under `if TYPE_CHECKING:`."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        yield node
        yield from executed_nodes(node)


def module_graph(package=PACKAGE):
    """{module: {modules it imports}} over the package's source, imports
    inside functions included: an import moved into a function to dodge a
    circle still makes one (the two modules cannot be read, tested or
    changed apart). Two kinds are left out: imports under `if
    TYPE_CHECKING:`, which never run (a function's annotation naming the
    Spec it takes), and the package's own __init__, whose names are the
    library's façade, loaded on first use (PEP 562), on which no module
    depends."""
    modules = {
        ".".join(p.relative_to(package.parent).with_suffix("").parts).removesuffix(".__init__"): p
        for p in package.rglob("*.py")
    }
    top = package.name
    graph = {}
    for name, path in modules.items():
        if name == top:
            continue
        edges = set()
        for node in executed_nodes(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == top:
                # `from scabench.model import spec` imports the module scabench.model.spec
                targets = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                edges.update(targets or [node.module])
            elif isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name.split(".")[0] == top)
        graph[name] = {e for e in edges if e in modules and e != top and e != name}
    return graph


def import_cycles(graph):
    """Every strongly connected set of two modules or more (Tarjan), each as
    a sorted list: modules that import each other, directly or round a loop."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            members = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                members.append(w)
                if w == v:
                    break
            if len(members) > 1:
                cycles.append(sorted(members))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return cycles


def test_no_import_circles():
    cycles = import_cycles(module_graph())
    assert not cycles, "modules that import each other (directly or round a loop):\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


def test_the_checker_sees_an_import_circle_inside_a_function(tmp_path):
    """The rule above must be able to fail: a circle closed by an import
    inside a function is one."""
    package = tmp_path / "scabench"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "model" / "__init__.py").write_text("")
    (package / "model" / "a.py").write_text("from scabench.model.b import g\n")
    (package / "model" / "b.py").write_text("def g():\n    from scabench.model import a\n")
    (package / "model" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from scabench.model.d import D\n"
    )
    (package / "model" / "d.py").write_text("from scabench.model.c import g\n")
    assert import_cycles(module_graph(package)) == [["scabench.model.a", "scabench.model.b"]]

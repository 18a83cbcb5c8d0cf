"""scabench as a library (docs/api.md): `import scabench` stays light; a
waveform built in code is the TOML spec it writes, with the spec's one-line
errors; exp6 written as Python, TOML and SAD XML is one pipeline and runs
alike over real processes; a run, a benchmark and a sweep come back typed,
with rows a table takes; and the examples in examples/python/ run."""

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO
from conftest import scabench as scabench_cli

import scabench
from scabench.model.load import load_spec

EXAMPLES = REPO / "examples" / "python"
SAD_EXP6 = REPO / "experiments" / "sad" / "waveforms" / "exp6" / "exp6.sad.xml"
TOML_EXP6 = REPO / "experiments" / "paper" / "exp6.toml"


def example(name):
    """An example script as a module (its functions, not its main)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_example(name, *args, timeout=300):
    return subprocess.run(
        [sys.executable, str(EXAMPLES / f"{name}.py"), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def same(a, b):
    """Two resolved specs (describe()) but for the file they came from."""
    a, b = dict(a), dict(b)
    a.pop("file"), b.pop("file")
    return a == b


def tiny(name="tiny", packets=5):
    """producer -> stage1 (collocated with it) -> stage2: a small waveform built in code."""
    wf = scabench.Waveform(name, cores=[0])
    p = wf.component("producer", "producer", packets=packets, samples=64, period_us=0)
    s1 = wf.component("stage1", "stage", work="cpu", work_us=300)
    s2 = wf.component("stage2", "stage", work="none")
    wf.connect(p["out"], s1["in"], call="twoway")
    # One thread per connection into stage2: with the ORB's pool two one-way
    # upcalls can run at once and hand their packets to the worker queue out
    # of order, and the tests assert no packet is reordered.
    wf.connect(s1, s2, call="oneway", worker=8, dispatch="serial")
    wf.place(p, s1)
    return wf


# -- the package ---------------------------------------------------------------


def test_every_export_resolves_and_is_documented():
    names = [n for n in scabench.__all__ if n != "__version__"]
    assert set(names) == set(scabench._EXPORTS)
    assert set(names) <= set(dir(scabench))
    for name in names:
        obj = getattr(scabench, name)
        assert inspect.getdoc(obj), name
    for cls in (
        scabench.Waveform,
        scabench.Component,
        scabench.SweepResult,
        scabench.SweepPoint,
        scabench.Benchmark,
        scabench.RunResult,
        scabench.StageResult,
    ):
        for member, value in vars(cls).items():
            if not member.startswith("_") and (inspect.isfunction(value) or isinstance(value, (property, classmethod))):
                assert inspect.getdoc(getattr(cls, member)), f"{cls.__name__}.{member}"
    with pytest.raises(AttributeError):
        scabench.no_such_name  # noqa: B018 (the attribute access is what is tested)


# -- built in code, loaded, written back -----------------------------------------


def test_exp6_built_in_code_is_the_exp6_spec(tmp_path):
    built = example("exp6").exp6()
    loaded = scabench.load("exp6")
    assert built == loaded
    assert loaded.source == TOML_EXP6 and built.source is None
    assert same(built.describe(), load_spec(TOML_EXP6).describe())
    assert built.spec().path == Path("<waveform exp6>") and loaded.spec().path == TOML_EXP6
    # Its TOML, loaded, is the same waveform; and the SAD loads to the same pipeline.
    assert scabench.load(built.save(tmp_path / "exp6.toml")) == built
    assert same(scabench.load(SAD_EXP6).describe(), built.describe())


def shipped():
    folder = REPO / "experiments"
    tomls = [
        p
        for p in folder.rglob("*.toml")
        if not p.name.endswith(".sad.toml") and p.name not in ("campaign.toml", "link-delay.toml")
    ]
    return sorted(tomls) + sorted(folder.rglob("*.sad.xml"))


@pytest.mark.parametrize("path", shipped(), ids=lambda p: str(p.relative_to(REPO)))
def test_a_shipped_spec_saved_and_loaded_back_is_the_same(path, tmp_path, monkeypatch):
    """Every spec that comes with scabench, TOML or SAD: saved elsewhere
    (relative paths rewritten, exec-host.toml's program) and loaded back, an
    equal waveform and the same resolved spec. experiments/sdrroot's SADs
    read their /-rooted files under it, as REDHAWK's tools do under $SDRROOT."""
    monkeypatch.setenv("SDRROOT", str(REPO / "experiments" / "sdrroot"))
    wf = scabench.load(path)
    folder = tmp_path / "somewhere" / "else"
    folder.mkdir(parents=True)
    again = scabench.load(wf.save(folder / "copy.toml"))
    assert again == wf
    assert same(again.describe(), load_spec(path).describe())


def test_relative_paths_are_from_the_waveforms_folder(tmp_path, monkeypatch):
    """Built in code, a relative exec is from the current directory; saved
    into another folder, it is rewritten from there; a bare name is PATH's."""
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    program = home / "bin" / "mystage"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    monkeypatch.chdir(home)
    wf = scabench.Waveform("ext")
    p = wf.component("producer", "producer", packets=3)
    s = wf.component("stage1", "stage", work="none")
    x = wf.component("mine", "external", exec="bin/mystage", work_us=10)
    last = wf.component("stage2", "stage", work="none")
    wf.chain(p, s, x, last)
    monkeypatch.chdir(tmp_path)
    assert wf.spec().component("mine").external.program == [str(program)]
    (tmp_path / "specs").mkdir()
    saved = wf.save(tmp_path / "specs" / "ext.toml")
    assert 'exec = "../home/bin/mystage"' in saved.read_text()
    assert scabench.load(saved) == wf
    assert scabench.load(saved).spec().component("mine").external.program == [str(program)]
    assert wf.to_toml().count("bin/mystage") == 1 and '"../home' not in wf.to_toml()


def test_placement_from_code():
    wf = scabench.Waveform("placed")
    a, b, c = (wf.component(n, "stage", work="none") for n in ("a", "b", "c"))
    py = wf.component("py", "py-stage", work="none")
    assert "placement" not in wf.to_dict()
    wf.place(b, c)
    assert wf.to_dict()["placement"] == {"hosts": [["a"], ["b", "c"]]}
    d = wf.component("d", "stage")
    assert wf.to_dict()["placement"]["hosts"][-1] == ["d"]  # a process of its own; the Python stage none
    wf.place(a, d)
    assert wf.to_dict()["placement"] == {"hosts": [["a", "d"], ["b", "c"]]}
    wf.collocate()
    assert wf.to_dict()["placement"] == {"hosts": [["a", "b", "c", "d"]]}
    assert py.name == "py" and wf["py"].kind == "py-stage"
    with pytest.raises(KeyError, match="no component named 'e'; the waveform has: a, b, c, py, d"):
        wf["e"]


def test_placement_on_nodes_from_code_is_a_specs_and_survives_place():
    wf = scabench.Waveform("spread", transport="tcp")
    p = wf.component("producer", "producer", packets=10)
    a, b = (wf.component(n, "stage", work="none") for n in ("a", "b"))
    wf.chain(p, a, b)
    wf.place(a, b).on_node("n1", a, b).on_node("n2", p).domain("corbaloc::127.0.0.1:2809/NameService")
    wf.place(p)  # placing processes again keeps the nodes
    assert wf.to_dict()["placement"]["nodes"] == {"n1": ["a", "b"], "n2": ["producer"]}
    wf.on_node("n1", p)  # a component moved between nodes is on one only
    spec = wf.spec()
    assert {k: sorted(v) for k, v in spec.nodes.items()} == {
        "n1": ["a", "b", "producer"]
    } and spec.domain == "corbaloc::127.0.0.1:2809/NameService"
    wf.domain(None)
    with pytest.raises(scabench.SpecError, match="<waveform spread>"):
        wf.validate()  # nodes need a domain to be found in


def test_the_builders_tables_are_a_specs():
    wf = tiny()
    doc = wf.to_dict()
    assert doc == {
        "experiment": {"name": "tiny"},
        "run": {"cores": [0]},
        "component": [
            {"name": "producer", "kind": "producer", "packets": 5, "samples": 64, "period_us": 0},
            {"name": "stage1", "kind": "stage", "work": "cpu", "work_us": 300},
            {"name": "stage2", "kind": "stage", "work": "none"},
        ],
        "connection": [
            {"from": "producer.out", "to": "stage1.in", "call": "twoway"},
            {"from": "stage1.out", "to": "stage2.in", "call": "oneway", "worker": 8, "dispatch": "serial"},
        ],
        "placement": {"hosts": [["producer", "stage1"], ["stage2"]]},
    }
    assert scabench.Waveform.from_dict(doc) == wf
    wf["stage1"].set(work_us=None, work="sleep")
    assert wf["stage1"].properties == {"work": "sleep"}
    wf.policy(call="oneway", sync="server").policy(sync=None)
    assert wf.to_dict()["policy"] == {"call": "oneway"}


# -- errors: the spec's own line ---------------------------------------------------

BAD = [
    ("a property out of range", lambda wf: wf["stage1"].set(work_us=-1)),
    ("an unknown kind", lambda wf: wf.component("x", "stagee")),
    ("an unknown policy key", lambda wf: wf.policy(workers=4)),
    ("a port the kind lacks", lambda wf: wf.connect("stage2.output", "stage1.in")),
    ("a bad run setting", lambda wf: wf.settings(transport="udp")),
    ("an unknown run key", lambda wf: wf.settings(packets=3)),
    ("a chain through an unknown component", lambda wf: wf.chain("stage2", "nowhere")),
]


@pytest.mark.parametrize("why,damage", BAD, ids=[b[0] for b in BAD])
def test_a_mistake_in_code_is_the_specs_one_line(why, damage, tmp_path):
    wf = tiny("bad")
    damage(wf)
    with pytest.raises(scabench.SpecError) as caught:
        wf.validate()
    line = str(caught.value)
    assert line.startswith("<waveform bad>: ") and "\n" not in line
    # The same waveform as a file: `scabench validate` says the same, naming the file.
    path = wf.save(tmp_path / "bad.toml")
    proc = scabench_cli("validate", path)
    assert proc.returncode == 2
    assert proc.stdout.strip() == f"bad  {line.replace('<waveform bad>', str(path))}"
    with pytest.raises(scabench.SpecError):
        wf.run()  # before any process starts


def test_a_loaded_spec_changed_in_code_is_named_as_code():
    wf = scabench.load("exp6")
    wf["stage1"].set(work_us="fast")
    with pytest.raises(scabench.SpecError, match=r"^<waveform exp6>: component\[1\]\.work_us: "):
        wf.validate()
    wf["stage1"].set(work_us=5000)
    assert wf.spec().path == TOML_EXP6  # as loaded again: the file's name


def test_bad_arguments():
    with pytest.raises(scabench.SpecError, match="a waveform's name is letters"):
        scabench.Waveform("two words")
    with pytest.raises(scabench.SpecError, match=r"^tiny: no such file, and no spec of that name in "):
        scabench.load("tiny")
    wf = tiny()
    with pytest.raises(scabench.SpecError, match=r"^<waveform tiny>: chain: given already"):
        wf.chain("producer", "stage1").chain("stage1", "stage2")
    with pytest.raises(ValueError, match="warmup"):
        wf.run(warmup=1)
    with pytest.raises(ValueError, match="runs: 0 is not valid"):
        wf.run(0)
    wf = tiny()
    with pytest.raises(scabench.SpecError, match="^--grid: policy: use policy.KEY"):
        wf.sweep({"policy": ["x"]})
    with pytest.raises(scabench.SpecError, match="a value is listed twice"):
        wf.sweep({"policy.call": ["oneway", "oneway"]})
    with pytest.raises(scabench.SpecError, match=r"policy.call.*'sometimes' is not valid"):
        wf.sweep({"policy.call": ["oneway", "sometimes"]})
    with pytest.raises(TypeError):
        scabench.text({"not": "a result"})


# -- over real processes ------------------------------------------------------------


# -- the examples ---------------------------------------------------------------------

"""The granularity lab: model arithmetic, the window measurement, the FIR
against a reference, the rate regulator, and a tiny end-to-end run."""

import ast
import json
import subprocess
import types
from pathlib import Path

import numpy as np
import pytest

import scabench
from scabench.measure import window as cpuload
from scabench.paths import program
from scabench.studies.granularity import models as gm
from scabench.studies.granularity.rows import read_result
from scabench.studies.granularity.workloads import FirWorkload

# ------------------------------------------------------------------ models


def test_model1_with_the_seeds_table2():
    # The seed's OProfile parameters (user, cycles at 1.86 GHz), W11, B = 2000,
    # with OSSIE's conversions (k = 1). Worked by hand:
    #   transfers 10 * (80700 + 5.5*2000) = 917000
    #   to-seq    10 * 14.6*2000          = 292000
    #   from-seq   9 * 10.6*2000          = 190800
    #   src + snk                          = 850
    #   9 FIR loads of 20000 cycles        = 180000   -> 1580650 cycles per packet
    f = 1.86e9
    ns = lambda cycles: cycles / f * 1e9  # noqa: E731
    per_packet = gm.model1_ns(
        components=11,
        filters=9,
        c_cl=ns(20000),
        c_src=ns(650),
        c_snk=ns(200),
        c_tr=ns(80700 + 5.5 * 2000),
        c_to=ns(14.6 * 2000),
        c_from=ns(10.6 * 2000),
        k_to=1,
        k_from=1,
    )
    assert gm.cycles(per_packet, f) == pytest.approx(1580650)
    # At PR = 40 on one core: 100 * 40 * 1580650 / 1.86e9 = 3.399 %
    assert gm.pct(per_packet, 40) == pytest.approx(100 * 40 * 1580650 / f)
    # FUNC (M = 1) has no transfer and no conversion.
    assert gm.model1_ns(1, 9, 100.0, 10.0, 5.0, 1e6, 1e6, 1e6, 1, 1) == pytest.approx(915.0)
    # W2 (M = 2): one transfer, one conversion to, none from.
    assert gm.model1_ns(2, 9, 100.0, 10.0, 5.0, 1000.0, 7.0, 3.0, 1, 1) == pytest.approx(915 + 1000 + 7)
    # scabench's ports convert nothing: k = 0.
    assert gm.model1_ns(11, 9, 100.0, 10.0, 5.0, 1000.0, 7.0, 3.0) == pytest.approx(915 + 10 * 1000)


def test_model2_adds_the_context_switches():
    # The seed's numbers: CSR 1300/s at 9300 cycles (5 µs) adds 0.65 % of the core.
    assert gm.model2_pct(3.0, 1300, 5000.0, 0.0) == pytest.approx(3.0 + 0.65)
    assert gm.model2_pct(3.0, 1300, 5000.0, 5000.0, cores=2) == pytest.approx(3.0 + 0.65)


def test_indirect_cost_only_beyond_the_l2():
    l2 = 2 << 20
    assert gm.indirect_cs_ns(11, 1000, l2, 1e10, 1e10) == 0.0
    b = 100_000  # 11 * (12 * B + 10 kB) > 2 MiB
    expected = 0.02 * (4 * b / 1e10 + (8 * b + 10240) / 1e10) * 1e9
    assert gm.indirect_cs_ns(11, b, l2, 1e10, 1e10) == pytest.approx(expected)
    assert gm.indirect_cs_ns(11, b, l2, 1e10, 1e10, c=1.0) == pytest.approx(expected / 0.02)


def test_linear_fit():
    fit = gm.fit_linear([500, 4000, 16000], [1000 + 2 * x for x in (500, 4000, 16000)])
    assert (fit.a, fit.b) == (pytest.approx(1000), pytest.approx(2))
    assert gm.fit_linear([7], [3.0]) == gm.Linear(3.0, 0.0)
    assert gm.Linear(-5.0, 1.0).cost(2) == 0.0


# ------------------------------------------------------------------ window


def snapshot(wall, cores, ctxt, processes):
    s = types.SimpleNamespace(wall=wall, cores=cores, ctxt=ctxt, processes=processes)
    return s


def process(user_s, system_s, threads):
    return {"user_sample_s": user_s, "system_sample_s": system_s, "split_source": "taskstats", "threads": threads}


def test_window_arithmetic():
    # 2 s on one core; two processes; 0.1 s of run time, sampled 3:1 user:system.
    before = snapshot(10.0, [0] * 8, 1000, {1: process(1.0, 1.0, {"1": (0, 0)}), 2: process(0.0, 0.0, {"2": (0, 0)})})
    after = snapshot(
        12.0,
        [30, 0, 10, 160, 0, 0, 0, 0],
        3000,
        {
            1: process(1.06, 1.02, {"1": (60_000_000, 100), "9": (20_000_000, 40)}),
            2: process(0.015, 0.005, {"2": (20_000_000, 60)}),
        },
    )
    w = cpuload.window_result(before, after, ["a", "b"], ncores=1)
    assert w["total_pct"] == pytest.approx(5.0)  # 0.1 s of 2 s
    assert w["user_pct"] == pytest.approx(5.0 * 0.075 / 0.1)
    assert w["csw_per_s"] == pytest.approx(100.0)
    assert w["system_csw_per_s"] == pytest.approx(1000.0)
    assert w["sar_total_pct"] == pytest.approx(20.0) and w["sar_user_pct"] == pytest.approx(15.0)
    assert w["foreign_pct"] == pytest.approx(15.0)
    assert [p["name"] for p in w["processes"]] == ["a", "b"]
    assert cpuload.user_split(0, 0) == 1.0


# ------------------------------------------------------------------ FIR, regulator


def lowpass(taps):
    k = np.arange(taps)
    t = k - (taps - 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        h = np.where(t == 0, 0.5, np.sin(2 * np.pi * 0.25 * t) / (np.pi * t))
    window = 0.54 - 0.46 * np.cos(2 * np.pi * k / (taps - 1)) if taps > 1 else np.ones(1)
    h = h * window
    return (h / h.sum()).astype(np.float32).astype(np.float64)


def func(*args):
    out = subprocess.run(
        [str(program("scabench-func")), *map(str, args)], capture_output=True, text=True, check=True, timeout=60
    )
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith("started ")
    return json.loads(lines[-1])


def test_fir_layouts_split_nine_filters():
    w = FirWorkload()
    for config, m, per in (("W2", 2, 9), ("W3", 3, 9), ("W5", 5, 3), ("W11", 11, 1)):
        layout = w.layout(config, 10, 2000, 25000, 100)
        assert layout.count == m
        filters = [props.get("filters", 0) for _, _, props in layout.components]
        assert sum(filters) == 9 and max(filters) == per
        assert layout.components[-1][2] == {"checksum": True}


# ------------------------------------------------------------------ end to end


def test_a_result_from_before_fig6_in_turn_shows_no_round_ranges():
    # The default plan ran FUNC twice before the configurations: two runs a
    # row, but not in turn, so no ratio gets a range or the note saying so.
    from scabench.studies.granularity.render_fir import section_ratios

    result = read_result(json.loads((Path(__file__).parents[1] / "data" / "granularity.json").read_text()))
    assert "fig6_repeats" not in result["plan"]
    for row in result["configurations"]:
        if row.experiment == "fig6":
            row.runs[:] = row.runs + row.runs
    text = section_ratios(result, "fir")
    assert "/FUNC |" in text and "measured in turn" not in text
    result["plan"]["fig6_repeats"] = 2
    assert "measured in turn" in section_ratios(result, "fir")


# ------------------------------------------------------------------ the report apart from the lab

GRANULARITY = Path(gm.__file__).parent
REPORT_MODULES = ("render", "render_fir", "render_s4285", "render_common", "figures")
LAB_MODULES = {"scabench.studies.granularity.lab", "scabench.studies.granularity.lab_s4285"}


def scabench_imports(module):
    """The scabench modules `module`'s source imports; `from package import
    name` counts as importing the module package.name where that is one."""
    path = Path(scabench.__file__).parent.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "scabench"}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "scabench":
            found.add(node.module)
            base = Path(scabench.__file__).parent.joinpath(*node.module.split(".")[1:])
            found |= {
                f"{node.module}.{a.name}"
                for a in node.names
                if (base / f"{a.name}.py").is_file() or (base / a.name).is_dir()
            }
    return found


def test_the_report_imports_nothing_of_the_lab():
    # Every report module, and everything they import in turn: the report
    # reads the lab's result and never needs the lab to do so.
    assert all((GRANULARITY / f"{m}.py").is_file() for m in REPORT_MODULES)
    seen, todo = set(), [f"scabench.studies.granularity.{m}" for m in REPORT_MODULES]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += scabench_imports(module)
    assert "scabench.studies.granularity.analysis" in seen  # the checker follows the imports
    assert not seen & LAB_MODULES, sorted(seen & LAB_MODULES)
    assert scabench_imports("scabench.studies.granularity.lab") >= {"scabench.studies.granularity.lab_s4285"}


NO_LAB = """
import importlib.abc, json, sys

LAB = set({lab!r})

class NoLab(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in LAB:
            raise ImportError(name + " imported while rendering")

sys.meta_path.insert(0, NoLab())
from scabench.studies.granularity.render import render
from scabench.studies.granularity.rows import read_result
render(read_result(json.loads(open(sys.argv[1]).read())), sys.argv[2])
assert not set(sys.modules) & LAB
try:
    import scabench.studies.granularity.lab
except ImportError:
    pass
else:
    raise SystemExit("the lab could be imported: this check checks nothing")
"""


# ------------------------------------------------------------------ the report's words

STORED = Path(__file__).parents[1] / "data" / "granularity.json"


def test_a_negative_difference_is_noise_not_a_cost(tmp_path):
    """A per-hop CPU of −12 µs (a configuration less FUNC, both noisy) was
    printed and plotted as a cost."""
    from scabench.studies.granularity.render import render
    from scabench.studies.granularity.render_common import cost

    assert cost(-12.04, 1, " µs") == "within noise (−12.0 µs)" and cost(85.44) == "85.44" and cost(None) == "–"
    result = read_result(json.loads(STORED.read_text()))
    result["summary"]["per_hop"][1]["vs_func_total_us"] = -12.0
    result["summary"]["per_hop"][1]["vs_func_user_us"] = -39.0
    result["test_application"]["transfer"]["process/unix"]["points"][0]["tr_user_ns"] = -24890.0
    md, _ = render(result, tmp_path)
    text = Path(md).read_text()
    assert "within noise (−12.0 µs) collocated" in text  # the answer
    assert "| 20000 | collocated | within noise (−12.00) | – | within noise (−39.00) |" in text  # the per-hop table
    assert "-12" not in text and "-39" not in text


def test_the_report_defines_every_abbreviation_above_its_answer(tmp_path):
    from scabench.studies.granularity.render import render
    from scabench.studies.granularity.render_common import TERMS

    md, _ = render(read_result(json.loads(STORED.read_text())), tmp_path)
    text = Path(md).read_text()
    terms = text.index("*Terms: ")
    assert terms < text.index("W11/FUNC") and terms < text.index("U+S")
    for name, meaning in TERMS.items():
        assert f"{name}: {meaning}" in text[terms : text.index("\n", terms)], name
    assert {"PR", "FUNC", "W2…W11", "CSR", "C_tr", "U+S", "U"} <= set(TERMS)


def test_a_sweep_of_one_b_says_each_model_comparison_once(tmp_path):
    """The lowest and the highest B of a one-B sweep are the same B: the
    summary holds its comparisons with the models twice (the stored file
    keeps that form), and the report said each line twice."""
    from scabench.studies.granularity.render import render

    result = read_result(json.loads(STORED.read_text()))
    assert len(result["summary"]["model_error"]) == 4  # two placements, each twice
    for e in result["summary"]["model_error"]:
        e["config"] = "W11"  # the tiny plan's widest is W3; the report compares W11
    md, _ = render(result, tmp_path)
    text = Path(md).read_text()
    for transport in ("unix", "none"):
        where = "process/unix" if transport == "unix" else "collocated"
        row = [line for line in text.splitlines() if line.startswith(f"| 4000 | {where} |")]
        assert len(row) == 1, row
    finding = [line for line in text.splitlines() if line.startswith("- W11 unix, B = 4000: model (1) accounts")]
    assert len(finding) == 1, finding

"""Waveforms as SCA SAD XML: the shipped SADs (experiments/sad/) load to
the spec of their TOML twins and run over real processes; a spec exported
and loaded back is the same spec; a component library named by an SPD runs;
and every mistake in a SAD, SPD, PRF, SCD or sidecar is one line naming the
file and line (or the sidecar's key), exit 2."""

import io
import json
import os
import re
import shutil
import tomllib
from pathlib import Path

import pytest
from conftest import REPO, pipeline_toml, scabench
from test_plugins import expected_checksum, gain_spec

from scabench.errors import SpecError
from scabench.model.load import load_spec
from scabench.model.sad.descriptor import DTD_DIR
from scabench.model.sad.export import export_sad
from scabench.paths import python_program
from scabench.run.runner import run_spec

SAD = REPO / "experiments" / "sad"
# Each shipped waveform and the TOML spec it was exported from.
TWINS = {
    "exp1": REPO / "experiments/paper/exp1.toml",
    "exp6": REPO / "experiments/paper/exp6.toml",
    **{
        name: REPO / f"experiments/stanag4285/{name}.toml"
        for name in (
            "split2",
            "split2-collocated",
            "split7",
            "split7-collocated",
            "split11",
            "split11-collocated",
            "transceiver7",
        )
    },
}
# The chains above run below; a graph's runs are tests/python/system/test_graph_waveform_runs.py's.
CHAINS = dict(TWINS)
TWINS |= {name: REPO / f"experiments/graphs/{name}.toml" for name in ("receiver", "receiver-collocated")}


def sad_of(name):
    return SAD / "waveforms" / name / f"{name}.sad.xml"


def same(a, b):
    """Two specs' describe() but for the file they came from."""
    a, b = a.describe(), b.describe()
    a.pop("file"), b.pop("file")
    return a == b


def test_every_shipped_waveform_has_its_twin():
    assert sorted(p.name for p in (SAD / "waveforms").iterdir()) == sorted(TWINS)


@pytest.mark.parametrize("name", sorted(TWINS))
def test_a_shipped_sad_is_its_toml_twins_spec(name):
    sad, toml = load_spec(sad_of(name)), load_spec(TWINS[name])
    assert same(sad, toml), (sad.describe(), toml.describe())
    assert sad.path == sad_of(name)


@pytest.mark.parametrize("name", sorted(CHAINS))
def test_a_shipped_sad_runs_over_real_processes(name):
    spec = load_spec(sad_of(name)).with_packets(6, where="--packets")
    if name.startswith("exp"):
        spec = spec.with_properties(
            "stage1", {"work_us": 1000}, where="--set"
        )  # few packets; the chain's shape is the point
    twin = load_spec(TWINS[name]).with_packets(6, where="--packets")
    result = run_spec(spec)
    assert result.status == "ok", result
    assert result.producer.sent == 6
    components = [c.name for c in twin.components]
    assert [s.name for s in result.stages] == components[1:]
    for stage in result.stages:
        assert stage.received == 6, stage
    assert [c["id"] for c in result.spec["connections"]] == [c["id"] for c in twin.describe()["connections"]]
    for ours, theirs in zip(result.spec["connections"], twin.describe()["connections"]):
        assert ours == theirs
    assert len(result.hosts) == len(twin.hosts)
    # The waveform's naming context is named after it, as for a TOML spec.
    assert result.naming["context"] == f"{name}_1"


def test_a_redhawk_style_sad_runs_with_only_the_sdr_root_pointed(tmp_path, monkeypatch):
    """experiments/sdrroot's waveform, as REDHAWK's tools lay one out
    (/-rooted component files, two implementations per SPD, startorder, an
    assembly controller, an external port and property), runs from the
    command line given the SDR root and nothing else, its components started
    in its order."""
    sdrroot = REPO / "experiments" / "sdrroot"
    sad = sdrroot / "dom/waveforms/RedhawkChain/RedhawkChain.sad.xml"
    out = tmp_path / "result.json"
    monkeypatch.delenv("SDRROOT", raising=False)
    proc = scabench("--sdrroot", sdrroot, "run", sad, "--packets", "5", "--json", out)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert [h["components"] for h in result["hosts"]] == [
        ["SigSource_1"],
        ["WorkStage_1", "WorkStage_2"],
        ["DataSink_1"],
    ]
    assert [c["id"] for c in result["spec"]["connections"]] == [
        "SigSource_1.out->WorkStage_1.in",
        "WorkStage_1.out->WorkStage_2.in",
        "WorkStage_2.out->DataSink_1.in",
    ]
    assert result["spec"]["experiment"]["external_ports"] == {"samples_out": "WorkStage_2.out"}
    assert [(s["name"], s["received"]) for s in result["stages"]] == [
        ("WorkStage_1", 5),
        ("WorkStage_2", 5),
        ("DataSink_1", 5),
    ]
    # Started as REDHAWK's application starts them (the assembly controller, then by startorder:
    # WorkStage_2 before WorkStage_1, an order the launcher's own would not give), stopped in reverse.
    order = ["DataSink_1", "WorkStage_2", "WorkStage_1", "SigSource_1"]
    started = result["lifecycle"]["started"]
    assert [s["component"] for s in started] == order
    assert [s["at_ns"] for s in started] == sorted(s["at_ns"] for s in started)
    assert [s["component"] for s in result["lifecycle"]["stopped"]] == order[::-1]
    # Without it, one line naming the file and what to give, before any process starts.
    proc = scabench("run", sad, "--packets", "5")
    assert proc.returncode == 2 and "--sdrroot" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_sad_and_its_twin_give_results_of_one_shape(tmp_path):
    """The same run from exp6.sad.xml and exp6.toml through the command line:
    the same keys, stages, connections and hosts."""
    results = []
    for source in (sad_of("exp6"), TWINS["exp6"]):
        out = tmp_path / f"{source.name}.json"
        proc = scabench(
            "run", source, "--packets", 5, "--set", "stage2.work_us=500", "--policy", "worker=8", "--json", out
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("exp6: two-way, producer does not wait, worker thread")
        results.append(json.loads(out.read_text()))
    sad, toml = results

    def shape(doc):
        if isinstance(doc, dict):
            return {k: shape(v) for k, v in doc.items() if k not in ("stats",)}
        if isinstance(doc, list):
            return [shape(v) for v in doc[:1]]
        return type(doc).__name__

    assert shape(sad) == shape(toml)
    assert [s["name"] for s in sad["stages"]] == [s["name"] for s in toml["stages"]] == ["stage1", "stage2", "stage3"]
    assert sad["spec"]["connections"] == toml["spec"]["connections"]
    assert all(c["worker_depth"] == 8 for c in sad["spec"]["connections"])
    assert sad["spec"]["components"] == toml["spec"]["components"]
    assert sad["spec"]["components"][2]["properties"]["work_us"] == 500
    assert sad["spec"]["file"].endswith("exp6.sad.xml")


RICH = pipeline_toml(
    packets=7,
    stages=3,
    policy='call = "oneway"\nsync = "server"\nworker = 16',
    placement='hosts = [["producer"], ["stage1", "stage2"], ["stage3", "sink"]]',
    run='transport = "unix"\ncores = [0]\npin = true\nscheduler = "batch"\ntimeout_s = 90\nstart_order = ["sink", "stage3", "stage2"]',
    extra="""
[[connection]]
from = "stage3.out"
to = "sink.in"
call = "twoway"
worker = false
flow = "credits(8)"

[[component]]
name = "sink"
kind = "sink"
checksum = true

[experiment]
name = "rich"
title = "every kind of setting"
notes = "kept in the sidecar"
""",
)


def test_a_spec_exported_and_loaded_back_is_the_same_spec(write_spec, tmp_path):
    original = load_spec(write_spec(RICH))
    exported = export_sad(original, tmp_path / "out")
    assert exported.sad == tmp_path / "out/waveforms/rich/rich.sad.xml"
    assert sorted(p.name for p in exported.packages) == ["Producer.spd.xml", "Sink.spd.xml", "Stage.spd.xml"]
    for spd in exported.packages:
        name = spd.name.removesuffix(".spd.xml")
        assert {p.name for p in spd.parent.iterdir()} == {f"{name}.spd.xml", f"{name}.prf.xml", f"{name}.scd.xml"}
    loaded = load_spec(exported.sad)
    assert same(loaded, original), (loaded.describe(), original.describe())
    # The start order as REDHAWK's: its first the assembly controller, each its place as startorder;
    # stage3.out->sink.in's own policy on its two ports, and nothing of it left in the sidecar.
    sad = exported.sad.read_text()
    assert '<componentinstantiationref refid="sink"/>\n  </assemblycontroller>' in sad
    assert '<componentinstantiation id="stage2" startorder="2">' in sad
    for port_key in ('"out.call" value="twoway"', '"out.flow" value="credits(8)"', '"in.worker" value="false"'):
        assert f"<simpleref refid={port_key}/>" in sad
    assert "connection" not in tomllib.loads(exported.sidecar.read_text())
    # Once more, from the SAD: the same bytes.
    again = export_sad(loaded, tmp_path / "again")
    for a, b in ((exported.sad, again.sad), (exported.sidecar, again.sidecar)):
        assert a.read_text().replace("from spec.toml;", "from rich.sad.xml;") == b.read_text()


# The SCA 2.2.2 SAD DTD declares these attributes ID: an XML name, unique in
# the file. scabench's own DTD takes them as CDATA (a component's name may
# start with a digit), so the test puts the SCA declaration back.
SCA_ID_ATTRIBUTES = ("componentfile", "hostcollocation", "componentinstantiation", "connectinterface")
NCNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def sca_sad_dtd():
    from lxml import etree

    text = (DTD_DIR / "softwareassembly.dtd").read_text()
    for element in SCA_ID_ATTRIBUTES:
        text, n = re.subn(rf"(<!ATTLIST {element}\s+id\s+)CDATA", r"\1ID", text)
        assert n == 1, element
    return etree.DTD(io.StringIO(text))


def test_an_exported_sad_has_xml_ids_an_sca_tool_accepts(write_spec, tmp_path):
    from lxml import etree

    spec = load_spec(write_spec(RICH))
    exported = export_sad(spec, tmp_path / "out")
    root = etree.parse(str(exported.sad)).getroot()
    ids = [e.get("id") for e in root.iter("connectinterface")]
    assert len(ids) == len(spec.connections) == len(set(ids))
    assert all(NCNAME.fullmatch(i) for i in ids), ids
    assert ids[0] == "producer.out_to_stage1.in"
    dtd = sca_sad_dtd()
    assert dtd.validate(root), dtd.error_log.filter_from_errors()
    # The shipped exports too.
    for name in TWINS:
        shipped = etree.parse(str(sad_of(name))).getroot()
        assert dtd.validate(shipped), (name, dtd.error_log.filter_from_errors())
    # And loaded back, the connections are the spec's, named as results name them.
    assert [c.id for c in load_spec(exported.sad).connections] == [c.id for c in spec.connections]


def test_connection_ids_are_unique_xml_ids_for_any_names():
    from types import SimpleNamespace

    from scabench.model.sad.export import connection_ids

    conns = [
        SimpleNamespace(uses=u, provides=p)
        for u, p in (
            (("1st", "out"), ("b", "in")),
            (("a-b", "out"), ("c", "in")),
            (("a", "b_out"), ("c", "in")),
            (("a-b", "out"), ("c", "in")),
        )
    ]
    ids = connection_ids(conns)
    assert ids == ["c_1st.out_to_b.in", "a-b.out_to_c.in", "a.b_out_to_c.in", "a-b.out_to_c.in_2"]
    assert all(NCNAME.fullmatch(i) for i in ids) and connection_ids(conns) == ids


def test_the_shipped_waveforms_are_what_export_writes(tmp_path):
    """experiments/sad/ is the export of its twins, byte for byte."""
    for toml in TWINS.values():
        export_sad(load_spec(toml), tmp_path)
    for path in sorted(SAD.rglob("*.xml")) + sorted(SAD.rglob("*.sad.toml")):
        assert path.read_bytes() == (tmp_path / path.relative_to(SAD)).read_bytes(), path


def test_a_component_library_named_by_an_spd_runs(gain_library, write_spec, tmp_path):
    original = load_spec(write_spec(gain_spec(gain_library) + '[experiment]\nname = "gain"\n'))
    exported = export_sad(original, tmp_path / "out")
    spd = tmp_path / "out/components/Gain/Gain.spd.xml"
    text = spd.read_text()
    assert '<code type="SharedLibrary">' in text and "<entrypoint>gain</entrypoint>" in text
    assert same(load_spec(exported.sad), original)
    out = tmp_path / "result.json"
    proc = scabench("run", exported.sad, "--set", "gain.gain=3", "--json", out)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert float(result["stats"]["sink"]["checksum"]) == expected_checksum(3.0)
    assert [h["components"] for h in result["hosts"]] == [["producer", "gain"], ["sink"]]
    # A library registering one kind needs no entrypoint.
    spd.write_text(text.replace("<entrypoint>gain</entrypoint>", ""))
    assert load_spec(exported.sad).component("gain").kind == "gain"


# -- waveforms written by hand ------------------------------------------------

STAGE_SPD = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE softpkg PUBLIC "-//JTRS//DTD SCA V2.2.2 SPD//EN" "softpkg.dtd">
<softpkg id="DCE:1d6e5d0c-6f3a-4f63-9a54-3c1d7d0e1b10" name="BusyStage" type="sca_compliant">
  <title></title>
  <author><name>null</name></author>
  <propertyfile type="PRF"><localfile name="BusyStage.prf.xml"/></propertyfile>
  <implementation id="cpp">
    <description>the runtime's stage</description>
    <code type="Executable"><localfile name="scabench:stage"/><entrypoint>scabench:stage</entrypoint></code>
    <compiler name="/usr/bin/gcc" version="12"/>
    <programminglanguage name="C++"/>
    <humanlanguage name="EN"/>
    <os name="Linux"/>
    <processor name="x86_64"/>
  </implementation>
</softpkg>
"""
STAGE_PRF = """<?xml version="1.0" encoding="UTF-8"?>
<properties>
  <simple id="work" type="string" mode="readwrite"><value>sleep</value><kind kindtype="configure"/></simple>
  <simple id="work_us" type="ulong" mode="readwrite">
    <value>2000</value>
    <range min="0" max="100000"/>
    <kind kindtype="configure"/>
  </simple>
</properties>
"""
HAND_SAD = """<?xml version="1.0" encoding="UTF-8"?>
<softwareassembly id="DCE:5f0e8f2a-1111-4c3b-8a55-0c4b1d2e3f40" name="byhand">
  <componentfiles>
    <componentfile id="producer_file" type="SPD">
      <localfile name="../../components/Producer/Producer.spd.xml"/>
    </componentfile>
    <componentfile id="stage_file" type="SPD"><localfile name="BusyStage.spd.xml"/></componentfile>
  </componentfiles>
  <partitioning>
    <componentplacement>
      <componentfileref refid="producer_file"/>
      <componentinstantiation id="Producer_1" startorder="0">
        <usagename>source</usagename>
        <componentproperties>
          <simpleref refid="packets" value="4"/>
          <simpleref refid="samples" value="64"/>
        </componentproperties>
        <findcomponent><namingservice name="Producer_1"/></findcomponent>
      </componentinstantiation>
    </componentplacement>
    <hostcollocation name="pair">
      <componentplacement>
        <componentfileref refid="stage_file"/>
        <componentinstantiation id="Stage_1"><usagename>first</usagename></componentinstantiation>
        <componentinstantiation id="Stage_2">
          <usagename>second</usagename>
          <componentproperties><simpleref refid="work_us" value="300"/></componentproperties>
        </componentinstantiation>
      </componentplacement>
    </hostcollocation>
  </partitioning>
  <assemblycontroller><componentinstantiationref refid="Producer_1"/></assemblycontroller>
  <connections>
    <connectinterface id="c1">
      <usesport><usesidentifier>out</usesidentifier><findby><namingservice name="Producer_1"/></findby></usesport>
      <providesport><providesidentifier>in</providesidentifier><componentinstantiationref refid="Stage_1"/></providesport>
    </connectinterface>
    <connectinterface id="c2">
      <usesport><usesidentifier>out</usesidentifier><componentinstantiationref refid="Stage_1"/></usesport>
      <providesport><providesidentifier>in</providesidentifier><findby><namingservice name="second"/></findby></providesport>
    </connectinterface>
  </connections>
</softwareassembly>
"""
HAND_SIDECAR = """
[run]
packets = 3
cores = [0]
[policy]
call = "oneway"
[connection.c2]
call = "twoway"
worker = 4
"""


@pytest.fixture
def by_hand(tmp_path):
    """A REDHAWK-shaped waveform written by hand beside the shipped components:
    usage names apart from the ids, a PRF with values and a range, ends found
    by naming service, a collocation, a sidecar with per-connection policy."""
    shutil.copytree(SAD / "components", tmp_path / "components")
    folder = tmp_path / "waveforms" / "byhand"
    folder.mkdir(parents=True)
    (folder / "BusyStage.spd.xml").write_text(STAGE_SPD)
    (folder / "BusyStage.prf.xml").write_text(STAGE_PRF)
    (folder / "byhand.sad.xml").write_text(HAND_SAD)
    (folder / "byhand.sad.toml").write_text(HAND_SIDECAR)
    return folder / "byhand.sad.xml"


def test_a_waveform_written_by_hand(by_hand):
    spec = load_spec(by_hand)
    assert [c.name for c in spec.components] == ["source", "first", "second"]
    assert spec.experiment == {"name": "byhand"}
    # The PRF's values, and the instantiation's over them; the sidecar's packets over the SAD's.
    assert spec.component("first").properties == {"work": "sleep", "work_us": 2000}
    assert spec.component("second").properties == {"work": "sleep", "work_us": 300}
    assert spec.component("source").properties == {"packets": 3, "samples": 64}
    assert spec.hosts == [["source"], ["first", "second"]]
    assert spec.cores == [0]
    ids = [c.id for c in spec.connections]
    assert ids == ["source.out->first.in", "first.out->second.in"]
    assert [(c.policy.call, c.policy.worker_depth) for c in spec.connections] == [("oneway", 0), ("twoway", 4)]
    result = run_spec(spec)
    assert result.status == "ok"
    assert [(s.name, s.received) for s in result.stages] == [("first", 3), ("second", 3)]
    assert result.naming["context"] == "byhand_1"


def test_the_sidecar_names_a_connection_by_its_result_id_too(by_hand):
    sidecar = by_hand.with_name("byhand.sad.toml")
    sidecar.write_text(HAND_SIDECAR.replace("[connection.c2]", '[connection."first.out->second.in"]'))
    assert load_spec(by_hand).connections[1].policy.worker_depth == 4


# -- mistakes: one line each, file:line, exit 2 --------------------------------


def edit(path, old, new, after=None):
    """Replaces the one `old` in a file (the first after `after`, if given);
    returns the line `new` starts on."""
    text = path.read_text()
    start = text.index(after) if after else 0
    assert after or text.count(old) == 1, old
    at = text.index(old, start)
    text = text[:at] + new + text[at + len(old) :]
    path.write_text(text)
    return text[:at].count("\n") + 1


def run_fails(path, *args):
    """`scabench run` on a bad waveform: exit 2 and one line, returned."""
    proc = scabench("run", path, *args)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith("error: ")
    return lines[0].removeprefix("error: ")


@pytest.fixture
def exp6(tmp_path):
    """A copy of the shipped exp6 waveform and its components."""
    shutil.copytree(SAD / "components", tmp_path / "components")
    shutil.copytree(SAD / "waveforms" / "exp6", tmp_path / "waveforms" / "exp6")
    return tmp_path / "waveforms" / "exp6" / "exp6.sad.xml"


def test_a_missing_spd(exp6):
    line = edit(exp6, '"../../components/Stage/Stage.spd.xml"', '"../../components/Stage/Stag.spd.xml"')
    error = run_fails(exp6)
    assert error.startswith(f"{exp6}:{line}: componentfile 'Stage_spd': ")
    assert "components/Stage/Stag.spd.xml: no such file" in error


def test_an_unknown_port(exp6):
    line = edit(
        exp6, "<usesidentifier>out</usesidentifier>", "<usesidentifier>output</usesidentifier>", after='id="stage1.out'
    )
    error = run_fails(exp6)
    assert error == (
        f"{exp6}:{line}: connectinterface 'stage1.out_to_stage2.in': stage1 (Stage, kind stage) has no "
        "uses port 'output'; it has: out"
    )


def test_a_connection_to_an_unknown_instantiation(exp6):
    line = edit(exp6, '<componentinstantiationref refid="stage3"/>', '<componentinstantiationref refid="stage9"/>')
    error = run_fails(exp6)
    assert error == (
        f"{exp6}:{line}: componentinstantiationref: no componentinstantiation 'stage9'; the waveform "
        "has: producer, stage1, stage2, stage3"
    )


def test_a_connection_finding_an_unknown_name(exp6):
    line = (
        edit(exp6, '<componentinstantiationref refid="stage3"/>', '<findby>\n<namingservice name="stage9"/></findby>')
        + 1
    )
    error = run_fails(exp6)
    assert error.startswith(
        f"{exp6}:{line}: connectinterface 'stage2.out_to_stage3.in': findby names 'stage9', which "
        "no componentinstantiation is found by"
    )


def test_a_property_not_in_the_prf(exp6):
    line = edit(exp6, '<simpleref refid="work_us"', '<simpleref refid="work_ms"', after='id="stage1"')
    error = run_fails(exp6)
    prf = exp6.parents[2] / "components/Stage/Stage.prf.xml"
    assert error == (
        f"{exp6}:{line}: componentinstantiation 'stage1': simpleref 'work_ms': not a property in {prf}; "
        "it declares: work, work_jitter_us, work_us"
    )


@pytest.mark.parametrize("damage", ["truncated", "mismatched"])
def test_malformed_xml(exp6, damage):
    text = exp6.read_text()
    if damage == "truncated":
        exp6.write_text(text[: text.index("</partitioning>")])
        line = exp6.read_text().count("\n") + 1
    else:
        line = edit(exp6, "<usagename>stage2</usagename>", "<usagename>stage2</usage>")
    error = run_fails(exp6)
    assert error.startswith(f"{exp6}:{line}: not well-formed XML: ")


def test_malformed_spd_names_the_spd(exp6):
    spd = exp6.parents[2] / "components/Producer/Producer.spd.xml"
    line = edit(spd, "<title>Producer</title>", "<title>Producer</titel>")
    assert run_fails(exp6).startswith(f"{spd}:{line}: not well-formed XML: ")


def test_the_structure_is_checked_against_the_dtd(exp6):
    text = exp6.read_text()
    start, end = text.index("<assemblycontroller>"), text.index("</assemblycontroller>") + len("</assemblycontroller>")
    exp6.write_text(text[:start] + text[end:])
    line = text[: text.index("<softwareassembly ")].count("\n") + 1
    error = run_fails(exp6)
    assert error.startswith(
        f"{exp6}:{line}: Element softwareassembly content does not follow the DTD, expecting "
        "(description? , componentfiles , partitioning , assemblycontroller"
    )
    assert error.endswith("(the structure in python/scabench/model/sad/dtd/softwareassembly.dtd)")


def test_not_a_sad(exp6):
    exp6.write_text('<?xml version="1.0"?>\n<softpkg id="x" name="y"/>\n')
    assert run_fails(exp6) == (
        f"{exp6}:2: softpkg: is not a SAD (software assembly descriptor), whose root element is "
        "<softwareassembly> (without a namespace)"
    )


def load_fails(path):
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_a_prf_property_the_kind_does_not_have(exp6):
    prf = exp6.parents[2] / "components/Stage/Stage.prf.xml"
    line = edit(prf, '<simple id="work_jitter_us" name="work_jitter_us"', '<simple id="jitter" name="jitter"')
    assert load_fails(exp6) == (
        f"{prf}:{line}: simple 'jitter': stage has no property 'jitter'; valid: work, "
        "work_jitter_us, work_us (a connection's policy goes in the sidecar's [policy])"
    )


def test_a_prf_type_that_is_not_the_kinds(exp6):
    prf = exp6.parents[2] / "components/Stage/Stage.prf.xml"
    line = edit(prf, 'id="work_us" name="work_us" type="ulong"', 'id="work_us" name="work_us" type="string"')
    assert load_fails(exp6) == (
        f"{prf}:{line}: simple 'work_us': type 'string': stage's work_us is a CORBA unsigned long, type=\"ulong\""
    )


def test_a_value_of_the_wrong_type(exp6):
    line = edit(exp6, '<simpleref refid="packets" value="1000"/>', '<simpleref refid="packets" value="many"/>')
    assert load_fails(exp6) == (
        f"{exp6}:{line}: componentinstantiation 'producer': simpleref 'packets': 'many' is not a whole number (ulong)"
    )


def test_a_value_the_kind_refuses(exp6):
    line = edit(exp6, '<simpleref refid="packets" value="1000"/>', '<simpleref refid="packets" value="0"/>')
    assert load_fails(exp6).startswith(
        f"{exp6}:{line}: componentinstantiation 'producer': simpleref 'packets': "
        "0 is not valid; use a whole number from 1 to 4,294,967,295"
    )


def test_a_value_outside_the_prfs_range(by_hand):
    line = edit(by_hand, '<simpleref refid="work_us" value="300"/>', '<simpleref refid="work_us" value="200000"/>')
    assert load_fails(by_hand) == (
        f"{by_hand}:{line}: componentinstantiation 'Stage_2': simpleref 'work_us': "
        "200000 is outside the PRF's range, 0 to 100000"
    )


def test_a_value_the_kinds_names_do_not_include(by_hand):
    """A stage's work is one of its names, in a simpleref as anywhere."""
    line = edit(by_hand, '<simpleref refid="work_us" value="300"/>', '<simpleref refid="work" value="gpu"/>')
    assert load_fails(by_hand).startswith(
        f"{by_hand}:{line}: componentinstantiation 'Stage_2': simpleref 'work': "
        "'gpu' is not valid; use one of: none, cpu, sleep"
    )


def test_a_prf_enumeration_is_enforced(by_hand):
    """A PRF's enumerations narrow what the kind takes: a value outside them
    is refused where it is given."""
    prf = by_hand.with_name("BusyStage.prf.xml")
    edit(
        prf,
        "<value>sleep</value>",
        '<value>sleep</value><enumerations><enumeration label="cpu"/>'
        '<enumeration label="sleep" value="sleep"/></enumerations>',
    )
    line = edit(by_hand, '<simpleref refid="work_us" value="300"/>', '<simpleref refid="work" value="none"/>')
    assert load_fails(by_hand) == (
        f"{by_hand}:{line}: componentinstantiation 'Stage_2': simpleref 'work': "
        "'none' is not one of the PRF's enumerations: cpu, sleep"
    )


def test_an_inverted_prf_range_is_blamed_not_the_value(by_hand):
    prf = by_hand.with_name("BusyStage.prf.xml")
    line = edit(prf, '<range min="0" max="100000"/>', '<range min="100000" max="0"/>')
    assert load_fails(by_hand) == (
        f"{prf}:{line}: simple 'work_us': range min='100000' max='0' is inverted: min must not be above max"
    )


@pytest.mark.parametrize(
    "element, what",
    [
        # Read and typed (tests/python/unit/test_sad_redhawk.py), then judged
        # by the kind, which declares no such property.
        (
            '<simplesequence id="gains" name="gains" type="double" mode="readwrite"><values><value>1</value></values>'
            '<kind kindtype="property"/></simplesequence>',
            "simplesequence 'gains': stage has no property 'gains'; valid: ",
        ),
        (
            '<struct id="shape" mode="readwrite"><simple id="width" type="long"/></struct>',
            "struct 'shape': stage has no property 'shape'; valid: ",
        ),
        (
            '<structsequence id="shapes"><struct id="shape"><simple id="width" type="long"/></struct></structsequence>',
            "structsequence 'shapes': a sequence of structs is not supported: "
            "scabench reads simple, simplesequence and struct properties",
        ),
    ],
)
def test_a_prf_sequence_or_struct_is_read_and_judged_by_name(by_hand, element, what):
    prf = by_hand.with_name("BusyStage.prf.xml")
    line = edit(prf, "</properties>", element + "\n</properties>")
    assert load_fails(by_hand).startswith(f"{prf}:{line}: {what}")


@pytest.mark.parametrize(
    "target, found",
    [
        ("dir", "is a directory"),
        ("fifo", "is not a regular file (a FIFO)"),
        ("/dev/zero", "is not a regular file (a device)"),
    ],
)
def test_an_spd_that_is_not_a_file_says_what_it_is(exp6, target, found):
    path = exp6.parent / "Stage.spd.xml"
    if target == "dir":
        path.mkdir()
    elif target == "fifo":
        os.mkfifo(path)
    else:
        path = Path(target)
    # Relative: a /-rooted name is read under the SDR root (test_sad_redhawk.py).
    line = edit(exp6, '"../../components/Stage/Stage.spd.xml"', f'"{os.path.relpath(path, exp6.parent)}"')
    assert load_fails(exp6) == (
        f"{exp6}:{line}: componentfile 'Stage_spd': {path}: {found}; give the component's "
        "SPD (components/<Name>/<Name>.spd.xml), relative to the SAD"
    )


def test_an_unknown_kind(by_hand):
    spd = by_hand.with_name("BusyStage.spd.xml")
    line = edit(
        spd,
        '<localfile name="scabench:stage"/><entrypoint>scabench:stage</entrypoint>',
        '<localfile name="scabench:stager"/><entrypoint>scabench:stager</entrypoint>',
    )
    assert load_fails(by_hand).startswith(
        f"{spd}:{line}: implementation 'cpp': code: 'stager' is not a kind of the runtime; valid: "
    )


def test_an_instantiation_id_used_twice(by_hand):
    line = edit(by_hand, '<componentinstantiation id="Stage_2">', '<componentinstantiation id="Stage_1">')
    assert load_fails(by_hand) == (
        f"{by_hand}:{line}: componentinstantiation 'Stage_1': id used twice (first on line {line - 1})"
    )


def test_two_instantiations_with_one_name(by_hand):
    edit(by_hand, "<usagename>source</usagename>", "<usagename>first</usagename>")
    line = HAND_SAD[: HAND_SAD.index('<componentinstantiation id="Stage_1">')].count("\n") + 1
    assert load_fails(by_hand) == f"{by_hand}:{line}: componentinstantiation 'Stage_1': 'first' is used twice"


def test_a_loop_is_placed_on_the_connection_that_closes_it(by_hand):
    edit(by_hand, '<findby><namingservice name="second"/></findby>', '<componentinstantiationref refid="Stage_1"/>')
    # c2's own policy would make the loop's port disagree with c1 on the receiving side first.
    by_hand.with_name("byhand.sad.toml").write_text(HAND_SIDECAR.split("[connection.c2]")[0])
    line = HAND_SAD[: HAND_SAD.index('<connectinterface id="c2">')].count("\n") + 1
    assert load_fails(by_hand).startswith(
        f"{by_hand}:{line}: connectinterface 'c2': first.out->first.in connects 'first' to itself; refused: "
    )


def test_two_instantiations_connected_twice_name_the_second_connectinterface(by_hand):
    edit(
        by_hand,
        "  </connections>",
        '    <connectinterface id="c3">\n'
        '      <usesport><usesidentifier>out</usesidentifier><componentinstantiationref refid="Stage_1"/></usesport>\n'
        '      <providesport><providesidentifier>in</providesidentifier><findby><namingservice name="second"/></findby>'
        "</providesport>\n    </connectinterface>\n  </connections>",
    )
    line = load_fails(by_hand)
    assert "connectinterface 'c3': first.out->second.in is connected twice (connection[1] too)" in line, line


@pytest.mark.parametrize(
    "sidecar, key, message",
    [
        ('[policy]\ncall = "sometimes"', "policy.call", "'sometimes' is not valid; use one of: twoway, oneway"),
        ("[connection.c2]\nworker = -1", "connection.c2.worker", "-1 is not valid"),
        ("[connection.c9]\nworker = 1", "connection.c9", "no connectinterface with this id in"),
        ('[connection.c1]\nto = "second.in"', "connection.c1.to", "a connection's ends are the SAD's"),
        ('[run]\ntransport = "pigeon"', "run.transport", "'pigeon' is not valid; use one of: tcp, unix"),
        ("[run]\npackets = 0", "run.packets", "must be a whole number of packets >= 1"),
        (
            "[run]\npakets = 3",
            "run.pakets",
            "unknown key; valid: sample_type, transport, cores, pin, scheduler, timeout_s, packets",
        ),
        ('[experiment]\nname = "other"', "experiment.name", "the SAD gives it"),
        (
            "[placement]\nhosts = []",
            "placement",
            "unknown table; a SAD's sidecar has: experiment, run, policy, connection, network",
        ),
    ],
)
def test_sidecar_mistakes_name_its_key(by_hand, sidecar, key, message):
    path = by_hand.with_name("byhand.sad.toml")
    path.write_text(sidecar + "\n")
    error = load_fails(by_hand)
    assert error.startswith(f"{path}: {key}: {message}"), error


def test_the_command_line_goes_over_the_sidecar(by_hand):
    proc = scabench("run", by_hand, "--packets", 2, "--policy", "call=twoway", "--set", "first.work=none")
    assert proc.returncode == 0, proc.stderr
    assert "2 packets" in proc.stdout
    assert "source.out->first.in: call=twoway" in proc.stdout


def test_export_refuses_a_name_that_cannot_be_a_folder(write_spec, tmp_path):
    spec = write_spec(pipeline_toml() + '[experiment]\nname = "../up"\n')
    proc = scabench("export-sad", spec, "--out", tmp_path / "out")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"error: {spec}: experiment.name: '../up' names the waveform's folder and files: "
        "use letters, digits, ., - and _"
    )
    assert not (tmp_path / "out").exists()


def test_without_a_sidecar_the_runtimes_defaults(exp6):
    exp6.with_name("exp6.sad.toml").unlink()
    spec = load_spec(exp6)
    assert len({c.policy for c in spec.connections}) == 1
    assert spec.connections[0].policy.call == "twoway" and spec.connections[0].policy.worker_depth == 0
    assert spec.transport == "tcp" and spec.timeout_s == 0


def test_the_assembly_controller_names_an_instantiation(exp6):
    line = edit(
        exp6,
        '<componentinstantiationref refid="producer"/>',
        '<componentinstantiationref refid="boss"/>',
        after="<assemblycontroller>",
    )
    assert load_fails(exp6).startswith(f"{exp6}:{line}: componentinstantiationref: no componentinstantiation 'boss'")


def test_a_campaign_runs_a_sad_as_a_spec(tmp_path):
    """The studies' sweep takes a SAD wherever it takes a TOML spec."""
    campaign = tmp_path / "campaign.toml"
    campaign.write_text(f"""
[measure]
packets = 5
[setup.one]
cores = [0]
[[config]]
id = "sad"
spec = "{sad_of("exp6")}"
policy = {{ worker = 8 }}
[[config]]
id = "toml"
spec = "{TWINS["exp6"]}"
policy = {{ worker = 8 }}
""")
    from scabench.measure.campaign import load_campaign

    sad, toml = (c.load(5) for c in load_campaign(campaign).configs)
    assert same(sad, toml)
    assert sad.cores == [0] and sad.connections[0].policy.worker_depth == 8


@pytest.mark.parametrize(
    "doctype, use",
    [
        # Entities that would expand a thousandfold at each level.
        (
            '<!DOCTYPE softwareassembly [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
            '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>',
            "&d;",
        ),
        # A file outside the waveform, as an external entity.
        ('<!DOCTYPE softwareassembly [<!ENTITY secret SYSTEM "file:///etc/hostname">]>', "&secret;"),
    ],
)
def test_entities_are_neither_expanded_nor_fetched(exp6, doctype, use):
    text = exp6.read_text()
    text = text.replace(
        '<!DOCTYPE softwareassembly PUBLIC "-//JTRS//DTD SCA V2.2.2 SAD//EN" "softwareassembly.dtd">', doctype
    )
    exp6.write_text(text)
    line = edit(exp6, "<usagename>stage2</usagename>", f"<usagename>stage2{use}</usagename>")
    assert run_fails(exp6) == (
        f"{exp6}:{line}: usagename: entity reference {use}: scabench reads descriptors "
        "without expanding entities; write the text itself"
    )


def test_an_scd_port_the_kind_does_not_have(exp6):
    scd = exp6.parents[2] / "components/Stage/Stage.scd.xml"
    line = edit(scd, 'usesname="out"', 'usesname="out2"')
    assert load_fails(exp6) == f"{scd}:{line}: uses 'out2': stage has no uses port 'out2'; it has: out"


def test_a_prf_property_declared_twice(by_hand):
    prf = by_hand.with_name("BusyStage.prf.xml")
    line = edit(prf, '<simple id="work_us"', '<simple id="work"')
    assert load_fails(by_hand) == f"{prf}:{line}: simple 'work': id used twice (first on line 3)"


def test_an_external_program_maps_to_the_external_form(by_hand):
    """A program of its own in an SPD is an external component: the program
    as exec, its PRF's properties, and no host of the runtime for it."""
    from scabench.model.sad import load

    program = by_hand.with_name("mystage")
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    spd = by_hand.with_name("BusyStage.spd.xml")
    edit(
        spd, '<localfile name="scabench:stage"/><entrypoint>scabench:stage</entrypoint>', '<localfile name="mystage"/>'
    )
    # The collocation would hold it: a process of its own cannot share one.
    line = HAND_SAD[: HAND_SAD.index('<componentinstantiation id="Stage_1">')].count("\n") + 1
    assert load_fails(by_hand) == (
        f"{by_hand}:{line}: componentinstantiation 'Stage_1': an external program is a "
        "process of its own; take it out of the hostcollocation"
    )
    text = by_hand.read_text()
    start, end = text.index("<hostcollocation"), text.index("</hostcollocation>") + len("</hostcollocation>")
    by_hand.write_text(
        text[:start] + text[text.index("<componentplacement>", start) : text.index("</hostcollocation>")] + text[end:]
    )
    by_hand.with_name("byhand.sad.toml").unlink()
    doc = load.sad_tables(by_hand)
    components = doc["component"]
    assert components[1] == {
        "name": "first",
        "kind": "external",
        "exec": str(program),
        "work": "sleep",
        "work_us": 2000,
        # Started as REDHAWK starts a component: its SPD as PROFILE_NAME.
        "parameters": {"PROFILE_NAME": str(spd)},
    }
    assert components[2]["kind"] == "external" and components[2]["work_us"] == 300
    assert doc["placement"] == {"hosts": [["source"]]}


def test_a_sidecar_is_not_a_spec_nor_a_name():
    sidecar = SAD / "waveforms/exp6/exp6.sad.toml"
    proc = scabench("validate", sidecar, "exp6.sad", "exp6", sad_of("exp6"))
    assert proc.returncode == 2
    lines = proc.stdout.splitlines()
    assert lines[0] == (
        f"bad  {sidecar}: the run settings of a waveform's SAD, not a spec; give the SAD (exp6.sad.xml)"
    )
    assert lines[1].startswith("bad  exp6.sad: no such file, and no spec of that name in ")
    assert "exp6.sad," not in lines[1]
    assert lines[2].startswith(f"ok   {TWINS['exp6']}: 4 components")
    assert lines[3].startswith(f"ok   {sad_of('exp6')}: 4 components")


# -- a program of its own, over real processes ----------------------------------

PYSTAGE_PRF = """<?xml version="1.0" encoding="UTF-8"?>
<properties>
  <simple id="work" type="string" mode="readwrite"><value>cpu</value><kind kindtype="configure"/></simple>
  <simple id="work_us" type="ulong" mode="readwrite"><value>200</value><kind kindtype="configure"/></simple>
</properties>
"""


def test_a_program_named_by_an_spd_runs_as_an_external_component(exp6):
    """exp6 with stage2 a program of its own: its SPD's code names an
    executable of the package (bin/pystage, which starts scabench-py-stage
    on loopback, as a component's own start-up script would), the launcher
    starts it with the SCA exec parameters, configures it from the PRF and
    the SAD, and the packets cross it to stage3."""
    package = exp6.parents[2] / "components" / "PyStage"
    (package / "bin").mkdir(parents=True)
    program = package / "bin" / "pystage"
    argv = " ".join(python_program("scabench-py-stage", "scabench.components.stage"))
    program.write_text(f'#!/bin/sh\nexec {argv} "$@" -ORBendPoint giop:tcp:127.0.0.1:\n')
    program.chmod(0o755)
    (package / "PyStage.prf.xml").write_text(PYSTAGE_PRF)
    (package / "PyStage.spd.xml").write_text(
        STAGE_SPD.replace('name="BusyStage"', 'name="PyStage"')
        .replace("BusyStage.prf.xml", "PyStage.prf.xml")
        .replace(
            '<localfile name="scabench:stage"/><entrypoint>scabench:stage</entrypoint>',
            '<localfile name="bin/pystage"/>',
        )
        .replace("C++", "Python")
    )
    edit(
        exp6,
        "</componentfiles>",
        '  <componentfile id="PyStage_spd" type="SPD">\n'
        '      <localfile name="../../components/PyStage/PyStage.spd.xml"/>\n    </componentfile>\n  </componentfiles>',
    )
    edit(
        exp6,
        '<componentfileref refid="Stage_spd"/>',
        '<componentfileref refid="PyStage_spd"/>',
        after='<componentinstantiation id="stage1">',
    )
    # The SAD's stage2 keeps its simplerefs (work cpu, 5000 us): a short run asks for less.
    edit(
        exp6,
        '<simpleref refid="work_us" value="5000"/>',
        '<simpleref refid="work_us" value="300"/>',
        after='<componentinstantiation id="stage2">',
    )
    # The Python ports take no worker queue: two-way calls, no worker.
    exp6.with_name("exp6.sad.toml").write_text('[run]\npackets = 8\n[policy]\ncall = "twoway"\n')
    spec = load_spec(exp6)
    stage2 = spec.component("stage2")
    assert (stage2.kind, stage2.external.program, stage2.properties) == (
        "external",
        [str(program)],
        {"work": "cpu", "work_us": 300},
    )
    assert spec.hosts == [["producer"], ["stage1"], ["stage3"]]
    result = run_spec(spec)
    assert result.status == "ok", result.error
    assert [(s.name, s.kind, s.received, s.reordered_from_original) for s in result.stages] == [
        ("stage1", "stage", 8, 0),
        ("stage2", "external", 8, 0),
        ("stage3", "stage", 8, 0),
    ]
    assert result.stages[1].measured_at == "stage3.in"
    host = next(h for h in result.hosts if h["components"] == ["stage2"])
    assert host["exec"] == str(program) and host["exit"] == "exited with status 0"
    assert result.naming["context"] == "exp6_1"


def test_a_fan_ins_policy_is_written_once_on_the_port_its_connections_share(write_spec, tmp_path):
    """Two senders into one port: the receiving port's keys (one setting a
    port) are written once on it, each sender's own on its port, and the
    sidecar keeps only the default."""
    fan_in = 'chain = ["stage1", "stage2"]\n[experiment]\nname = "fanin"\n'
    for name, kind in (("producer", "producer"), ("producer2", "producer"), ("stage1", "stage"), ("stage2", "sink")):
        fan_in += f'[[component]]\nname = "{name}"\nkind = "{kind}"\n' + ("packets = 3\n" if kind == "producer" else "")
    fan_in += (
        '[[connection]]\nfrom = "producer.out"\nto = "stage1.in"\nworker = 16\ncall = "oneway"\n'
        '[[connection]]\nfrom = "producer2.out"\nto = "stage1.in"\nworker = 16\n'
    )
    original = load_spec(write_spec(fan_in))
    exported = export_sad(original, tmp_path / "out")
    assert "connection" not in tomllib.loads(exported.sidecar.read_text())
    sad = exported.sad.read_text()
    assert sad.count('<simpleref refid="in.worker" value="16"/>') == 1
    assert sad.count('<simpleref refid="out.call" value="oneway"/>') == 1
    loaded = load_spec(exported.sad)
    assert same(loaded, original), (loaded.describe(), original.describe())

"""A SAD, SPD, PRF and SCD as REDHAWK writes them: its elements read,
honoured or refused by name (one line: file:line, element, what to do
instead), sequence and struct properties, the SDR root, the choice of
implementation and its entrypoint, and SCD repids. The waveform is
experiments/sdrroot's, copied and edited per case."""

import os
import shutil
import stat
from pathlib import Path

import pytest
from conftest import REPO

from scabench.errors import SpecError
from scabench.model import graph
from scabench.model.load import load_spec
from scabench.model.sad.load import load_sad, sad_tables
from scabench.paths import bin_dir

SDRROOT = REPO / "experiments" / "sdrroot"
WAVEFORM = Path("dom/waveforms/RedhawkChain/RedhawkChain.sad.xml")


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A copy of the shipped SDR root, with $SDRROOT unset."""
    monkeypatch.delenv("SDRROOT", raising=False)
    copy = tmp_path / "sdr"
    shutil.copytree(SDRROOT, copy)
    return copy


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def refused(root, *words):
    """Loads the waveform under `root`; its SpecError, one line holding each of `words`."""
    with pytest.raises(SpecError) as info:
        load_sad(root / WAVEFORM, root)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message
    return message


def test_the_redhawk_style_waveform_loads_under_its_sdr_root(root, monkeypatch):
    spec = load_sad(root / WAVEFORM, root)
    assert [c.name for c in spec.components] == ["SigSource_1", "WorkStage_1", "WorkStage_2", "DataSink_1"]
    assert [c.kind for c in spec.components] == ["producer", "stage", "stage", "sink"]
    assert spec.hosts == [["SigSource_1"], ["WorkStage_1", "WorkStage_2"], ["DataSink_1"]]
    assert spec.component("WorkStage_2").properties["work_us"] == 50
    assert spec.component("SigSource_1").properties["samples"] == 128
    # What the waveform offers as its own is recorded with the experiment.
    assert spec.experiment["external_ports"] == {"samples_out": "WorkStage_2.out"}
    assert spec.experiment["external_properties"] == {"first_stage_work_us": "WorkStage_1.work_us"}
    # $SDRROOT does as well as the argument, and load_spec reads it.
    monkeypatch.setenv("SDRROOT", str(root))
    assert load_spec(root / WAVEFORM) == spec


def test_a_rooted_file_without_an_sdr_root_is_one_line(root):
    with pytest.raises(SpecError) as info:
        load_sad(root / WAVEFORM)
    message = str(info.value)
    assert "RedhawkChain.sad.xml:12: localfile" in message
    assert "--sdrroot" in message and "SDRROOT" in message


def test_an_sdr_root_without_dom_is_refused(root, tmp_path):
    with pytest.raises(SpecError, match="no dom/ folder"):
        load_sad(root / WAVEFORM, tmp_path / "elsewhere")


def test_an_sdr_root_is_checked_only_where_a_rooted_file_is_read(tmp_path, monkeypatch):
    # An SDRROOT set for other work: a SAD naming its files relatively loads.
    monkeypatch.setenv("SDRROOT", str(tmp_path / "elsewhere"))
    assert load_spec(REPO / "experiments/sad/waveforms/exp6/exp6.sad.xml").experiment["name"] == "exp6"


def test_rooted_files_are_read_under_dom(root):
    # The SAD's component file moved: the error names the resolved path under dom/.
    shutil.move(root / "dom/components/DataSink", root / "dom/components/Moved")
    refused(root, str(root / "dom/components/DataSink/DataSink.spd.xml"), "componentfile 'DataSink_7b1e1c38'")


# The end of the hostcollocation's last placement.
IN_COLLOCATION = (
    '<namingservice name="WorkStage_2"/>\n          </findcomponent>\n        </componentinstantiation>\n'
    "      </componentplacement>"
)
SINK_INSTANCE = '<componentinstantiation id="DataSink_1">\n        <usagename>DataSink_1</usagename>'


@pytest.mark.parametrize(
    "where, added, element, hint",
    [
        (SINK_INSTANCE, "<affinity><simpleref refid='a' value='1'/></affinity>", "affinity", "cores and pin"),
        (SINK_INSTANCE, "<loggingconfig level='DEBUG'>log.cfg</loggingconfig>", "loggingconfig", "take it out"),
        (
            '<namingservice name="DataSink_1"/>\n        </findcomponent>',
            "<devicerequires><requires id='a' value='b'/></devicerequires>",
            "devicerequires",
            "no devices",
        ),
        (
            IN_COLLOCATION,
            "<usesdeviceref refid='gpp'/>",
            "usesdeviceref",
            "no devices",
        ),
        (
            IN_COLLOCATION,
            "<reservation kind='cpucores' value='2'/>",
            "reservation",
            "take it out",
        ),
        (
            "</externalproperties>",
            "<options><option name='AWARE_APPLICATION' value='true'/></options>",
            "options",
            "[run]",
        ),
        (
            "</externalproperties>",
            "<usesdevicedependencies><usesdevice id='u' type='usesdevice'>"
            "<propertyref refid='os' value='Linux'/></usesdevice></usesdevicedependencies>",
            "usesdevicedependencies",
            "no devices",
        ),
    ],
)
def test_an_element_scabench_has_nothing_behind_is_refused_by_name(root, where, added, element, hint):
    edit(root / WAVEFORM, where, where + added)
    message = refused(root, f": {element}: ", hint)
    assert message.startswith(str(root / WAVEFORM) + ":")


def test_the_start_order_is_redhawks_assembly_controller_then_by_startorder(root):
    # The assembly controller (DataSink_1) first, then by startorder: WorkStage_2 (1), WorkStage_1 (2),
    # SigSource_1 (3); the launcher starts them so, and stops them in reverse (run/plan.py, start_order).
    spec = load_sad(root / WAVEFORM, root)
    assert spec.start_order == ["DataSink_1", "WorkStage_2", "WorkStage_1", "SigSource_1"]
    assert graph.start_order(spec, spec.start_order) == spec.start_order
    # Equal startorders keep the SAD's document order; the controller's own startorder counts for nothing.
    edit(root / WAVEFORM, 'id="WorkStage_1" startorder="2"', 'id="WorkStage_1" startorder="1"')
    edit(root / WAVEFORM, 'id="DataSink_1">', 'id="DataSink_1" startorder="9">')
    assert load_sad(root / WAVEFORM, root).start_order == ["DataSink_1", "WorkStage_1", "WorkStage_2", "SigSource_1"]


def test_of_equal_startorders_a_collocated_component_starts_first(root):
    # As REDHAWK's ApplicationFactory lists hostcollocations first: WorkStage_1
    # (collocated) before SigSource_1 (standalone, earlier in the document).
    edit(root / WAVEFORM, 'id="SigSource_1" startorder="3"', 'id="SigSource_1" startorder="2"')
    assert load_sad(root / WAVEFORM, root).start_order == ["DataSink_1", "WorkStage_2", "WorkStage_1", "SigSource_1"]


def test_without_any_startorder_the_launchers_safe_order_starts_all(root):
    # REDHAWK's application would start the assembly controller alone; the launcher starts every component.
    for n in (1, 2, 3):
        edit(root / WAVEFORM, f' startorder="{n}"', "")
    spec = load_sad(root / WAVEFORM, root)
    assert spec.start_order == []
    assert graph.start_order(spec) == ["DataSink_1", "WorkStage_1", "WorkStage_2", "SigSource_1"]
    # So a waveform whose assembly controller is its source, as many of REDHAWK's are, starts it last.
    edit(
        root / WAVEFORM,
        '<componentinstantiationref refid="DataSink_1"/>\n  </assemblycontroller>',
        '<componentinstantiationref refid="SigSource_1"/>\n  </assemblycontroller>',
    )
    spec = load_sad(root / WAVEFORM, root)
    assert graph.start_order(spec, spec.start_order)[-1] == "SigSource_1"


def test_components_left_out_of_the_start_order_go_around_it(root):
    # Receivers before the given order, those that only send after it, each group in name order.
    edit(root / WAVEFORM, ' startorder="3"', "")
    edit(root / WAVEFORM, ' startorder="2"', "")
    spec = load_sad(root / WAVEFORM, root)
    assert spec.start_order == ["DataSink_1", "WorkStage_2"]
    assert graph.start_order(spec, spec.start_order) == ["WorkStage_1", "DataSink_1", "WorkStage_2", "SigSource_1"]


def test_a_start_order_that_lets_packets_reach_a_component_not_started_is_refused(root):
    # The source as assembly controller starts before the stages: its packets would be refused, not queued.
    edit(
        root / WAVEFORM,
        '<componentinstantiationref refid="DataSink_1"/>\n  </assemblycontroller>',
        '<componentinstantiationref refid="SigSource_1"/>\n  </assemblycontroller>',
    )
    refused(
        root,
        ": assemblycontroller: ",
        "starts SigSource_1",
        "before WorkStage_1",
        "refuses a packet",
        "make a receiver",
    )
    # A stage started before its receiver while the source that feeds it runs: refused on the stage.
    edit(
        root / WAVEFORM,
        'refid="SigSource_1"/>\n  </assemblycontroller>',
        'refid="DataSink_1"/>\n  </assemblycontroller>',
    )
    edit(root / WAVEFORM, 'id="WorkStage_2" startorder="1"', 'id="WorkStage_2" startorder="4"')
    refused(root, "componentinstantiation 'WorkStage_1': startorder", "before WorkStage_2")
    # A stage started early is harmless while nothing feeds it yet.
    edit(root / WAVEFORM, 'id="SigSource_1" startorder="3"', 'id="SigSource_1" startorder="5"')
    assert load_sad(root / WAVEFORM, root).start_order[-2:] == ["WorkStage_2", "SigSource_1"]


def test_the_sidecar_gives_no_start_order(root):
    (root / WAVEFORM).with_name("RedhawkChain.sad.toml").write_text('[run]\nstart_order = ["DataSink_1"]\n')
    refused(root, "run.start_order", "the SAD gives the start order")


def test_a_start_order_that_is_no_number_is_refused(root):
    edit(root / WAVEFORM, 'startorder="3"', 'startorder="last"')
    refused(root, "componentinstantiation 'SigSource_1'", "startorder 'last'", "whole number")


def test_an_assembly_controller_naming_nothing_is_refused(root):
    edit(
        root / WAVEFORM,
        '<componentinstantiationref refid="DataSink_1"/>\n  </assemblycontroller>',
        '<componentinstantiationref refid="Nobody"/>\n  </assemblycontroller>',
    )
    refused(root, "no componentinstantiation 'Nobody'")


def test_external_ports_and_properties_must_name_what_exists(root):
    sad = root / WAVEFORM
    edit(
        sad,
        '<usesidentifier>out</usesidentifier>\n      <componentinstantiationref refid="WorkStage_2"/>\n    </port>',
        '<usesidentifier>dataOut</usesidentifier>\n      <componentinstantiationref refid="WorkStage_2"/>\n    </port>',
    )
    refused(root, "externalports: port", "no uses port 'dataOut'", "it has: out")
    shutil.copy(SDRROOT / WAVEFORM, sad)
    edit(sad, 'propid="work_us"', 'propid="gain"')
    refused(root, "externalproperties: property 'gain'", "it declares: work, work_us")
    shutil.copy(SDRROOT / WAVEFORM, sad)
    edit(
        sad,
        "</externalproperties>",
        '<property comprefid="WorkStage_2" propid="work" externalpropid="first_stage_work_us"/></externalproperties>',
    )
    refused(root, "external name 'first_stage_work_us' is given twice")


# -- an external program's PRF: sequences and structs ---------------------------


def program_package(root, prf_body):
    """WorkStage_1 made a program of its own (REDHAWK's layout: localfile
    the implementation's folder, entrypoint the program), a package of its
    own (ExtStage) out of the hostcollocation (a program is a process of its
    own), with `prf_body` added to its PRF."""
    folder = root / "dom/components/ExtStage"
    shutil.copytree(root / "dom/components/WorkStage", folder)
    program = folder / "cpp" / "ExtStage"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    spd = folder / "ExtStage.spd.xml"
    (folder / "WorkStage.spd.xml").rename(spd)
    edit(
        spd,
        '<localfile name="scabench:stage"/>\n      <entrypoint>scabench:stage</entrypoint>',
        '<localfile name="cpp"/>\n      <entrypoint>cpp/ExtStage</entrypoint>',
    )
    edit(folder / "WorkStage.prf.xml", "<properties>", "<properties>" + prf_body)
    sad = root / WAVEFORM
    edit(
        sad,
        "</componentfiles>",
        '<componentfile id="ExtStage_1" type="SPD">'
        '<localfile name="/components/ExtStage/ExtStage.spd.xml"/></componentfile></componentfiles>',
    )
    edit(sad, '<hostcollocation id="stages" name="stages">', "")
    edit(sad, "</hostcollocation>", "")
    edit(sad, '<componentfileref refid="WorkStage_7b1e1c38"/>', '<componentfileref refid="ExtStage_1"/>')
    return program


STATUS = """
  <simplesequence id="taps" type="double" mode="readonly">
    <values><value>0.5</value><value>0.25</value></values>
    <range min="-1" max="1"/>
    <kind kindtype="property"/>
  </simplesequence>
  <struct id="status" mode="readonly">
    <simple id="status::state" type="string"><value>idle</value></simple>
    <simplesequence id="status::counts" type="ulong"><values><value>1</value><value>2</value></values>
    </simplesequence>
    <configurationkind kindtype="property"/>
  </struct>
  <simplesequence id="names" type="string">
    <kind kindtype="property"/>
  </simplesequence>"""


def test_an_entrypoint_names_the_program_of_an_external_component(root):
    program = program_package(root, "")
    stage = load_sad(root / WAVEFORM, root).component("WorkStage_1")
    assert stage.kind == "external" and stage.external.program == [str(program)]
    # Started as REDHAWK starts one: its SPD, as the SAD names it, is its PROFILE_NAME.
    assert stage.external.parameters == {"PROFILE_NAME": "/components/ExtStage/ExtStage.spd.xml"}


def test_sequence_and_struct_properties_are_read_typed(root):
    program_package(root, STATUS)
    stage = load_sad(root / WAVEFORM, root).component("WorkStage_1")
    # Readonly ones are the component's reports; one without values is not
    # configured: the launcher sets neither, and the spec carries neither.
    assert "taps" not in stage.properties and "status" not in stage.properties


@pytest.mark.parametrize(
    "old, new, words",
    [
        ("<value>0.25</value>", "<value>2.5</value>", ("simplesequence 'taps'", "outside the PRF's range")),
        ("<value>2</value>", "<value>two</value>", ("simplesequence 'status::counts'", "not a whole number")),
        (
            "<value>2</value>",
            "<value>-1</value>",
            ("simplesequence 'status::counts'", "-1 does not fit the PRF type ulong"),
        ),
        (
            '<simple id="status::state" type="string"><value>idle</value></simple>',
            '<simple id="status::state" type="octet"><value>300</value></simple>',
            ("simple 'status::state'", "300 does not fit the PRF type octet; use a whole number in [0, 255]"),
        ),
        (
            '<struct id="status" mode="readonly">\n    <simple id="status::state" type="string">'
            "<value>idle</value></simple>",
            '<struct id="status">\n    <simple id="status::state" type="string"></simple>',
            ("struct 'status'", "gives every member a value", "status::state has none"),
        ),
    ],
)
def test_a_sequence_or_struct_is_checked_and_refused_where_it_must_be_configured(root, old, new, words):
    program_package(root, STATUS.replace(old, new, 1))
    refused(root, "WorkStage.prf.xml:", *words)


def test_a_programs_struct_is_configured_with_every_member_typed(root):
    # A struct with every member given: a CF::Properties of its members on the
    # wire, each simple member as its PRF type (REDHAWK extracts it strictly).
    members = (
        '<struct id="status">\n    <simple id="status::gain" type="float"><value>2</value></simple>\n'
        '    <simple id="status::n" type="short"><value>3</value></simple>'
    )
    program_package(root, STATUS.replace('<struct id="status" mode="readonly">', members))
    assert load_sad(root / WAVEFORM, root).component("WorkStage_1").properties["status"] == {
        "struct": {
            "status::gain": {"type": "float", "value": 2.0},
            "status::n": {"type": "short", "value": 3},
            "status::state": {"type": "string", "value": "idle"},
            "status::counts": {"sequence": "ulong", "values": [1, 2]},
        }
    }


def test_a_programs_sequence_is_configured_typed_from_the_prf_and_the_sad(root):
    # Not readonly, with values: the launcher sends it as the CORBA sequence of its type.
    program_package(
        root,
        STATUS.replace(
            '<simplesequence id="taps" type="double" mode="readonly">', '<simplesequence id="taps" type="double">'
        ),
    )
    stage = load_sad(root / WAVEFORM, root).component("WorkStage_1")
    assert stage.properties["taps"] == {"sequence": "double", "values": [0.5, 0.25]}
    # A simplesequenceref sets it, typed and judged by the PRF's simplesequence.
    sequence_ref = (
        "<usagename>WorkStage_1</usagename><componentproperties>"
        '<simplesequenceref refid="names"><values><value>a</value><value>b</value></values></simplesequenceref>'
        '<simplesequenceref refid="taps"><values><value>{}</value></values></simplesequenceref>'
        "</componentproperties>"
    )
    edit(root / WAVEFORM, "<usagename>WorkStage_1</usagename>", sequence_ref.format("-0.75"))
    stage = load_sad(root / WAVEFORM, root).component("WorkStage_1")
    assert stage.properties["names"] == {"sequence": "string", "values": ["a", "b"]}
    assert stage.properties["taps"] == {"sequence": "double", "values": [-0.75]}
    edit(root / WAVEFORM, "<value>-0.75</value>", "<value>7</value>")
    refused(root, "simplesequenceref 'taps'", "outside the PRF's range")


def test_a_sequence_on_a_kind_of_the_runtime_is_refused(root):
    edit(
        root / "dom/components/WorkStage/WorkStage.prf.xml",
        "<properties>",
        '<properties><simplesequence id="work_us" type="ulong"><kind kindtype="property"/></simplesequence>',
    )
    refused(root, "simplesequence 'work_us'", "unsigned long", '<simple type="ulong">')


# -- implementations ----------------------------------------------------------


def test_the_implementation_is_chosen_by_os_and_processor(root):
    spd = root / "dom/components/WorkStage/WorkStage.spd.xml"
    # The first implementation (armv7l) names a kind there is not: passed over here.
    edit(spd, '<localfile name="scabench:stage"/>', '<localfile name="scabench:armstage"/>')
    assert load_sad(root / WAVEFORM, root).component("WorkStage_1").kind == "stage"
    # Made for this host's processor, it is the one chosen.
    edit(spd, '<processor name="armv7l"/>', f'<processor name="{os.uname().machine}"/>')
    refused(root, "implementation 'cpp_arm': code", "'armstage' is not a kind of the runtime")


def test_no_implementation_for_this_host_is_one_line_saying_why(root):
    spd = root / "dom/components/WorkStage/WorkStage.spd.xml"
    edit(spd, '<processor name="x86_64"/>', '<processor name="ppc"/>')
    edit(spd, '<processor name="aarch64"/>', "")
    message = refused(root, "WorkStage.spd.xml:", "no implementation runs here", "'cpp_arm' is for processor armv7l")
    assert "'cpp' is for processor ppc" in message
    shutil.copy(SDRROOT / "dom/components/WorkStage/WorkStage.spd.xml", spd)
    edit(
        spd,
        '<os name="Linux"/>\n    <processor name="x86_64"/>',
        '<os name="VxWorks"/>\n    <processor name="x86_64"/>',
    )
    refused(root, "'cpp' is for os VxWorks")


OS_NAME = "DCE:4a23ad60-0b25-4121-a630-68803a498f75"  # REDHAWK's GPP os_name
ARM = '<processor name="armv7l"/>'


@pytest.mark.parametrize(
    "added, reason",
    [
        (
            f'<dependency type="runtime_requirements"><propertyref refid="{OS_NAME}" value="VxWorks"/></dependency>',
            "'cpp' depends on os VxWorks",
        ),
        (
            '<dependency type="allocation"><simpleref refid="mem" value="1"/></dependency>',
            "'cpp' depends on a device's mem",
        ),
        ('<usesdevice id="u" type="usesdevice"><propertyref refid="x" value="1"/></usesdevice>', "'cpp' uses a device"),
    ],
)
def test_an_implementation_needing_what_scabench_cannot_give_is_passed_over(root, added, reason):
    spd = root / "dom/components/WorkStage/WorkStage.spd.xml"
    edit(spd, '<processor name="aarch64"/>', '<processor name="aarch64"/>' + added)
    refused(root, "WorkStage.spd.xml:", "no implementation runs here", "'cpp_arm' is for processor armv7l", reason)


def test_a_dependency_on_this_os_is_met(root):
    spd = root / "dom/components/WorkStage/WorkStage.spd.xml"
    edit(
        spd,
        '<os name="Linux"/>\n    <processor name="x86_64"/>',
        f'<processor name="x86_64"/><dependency type="runtime_requirements"><propertyref refid="{OS_NAME}" '
        'value="Linux"/></dependency>',
    )
    assert load_sad(root / WAVEFORM, root).component("WorkStage_1").kind == "stage"


@pytest.mark.parametrize(
    "where, added, words",
    [
        (
            '<processor name="aarch64"/>\n  </implementation>',
            '<usesdevice id="u" type="usesdevice"><propertyref refid="x" value="1"/></usesdevice>',
            ("softpkg: usesdevice", "no devices to allocate"),
        ),
        (
            "<entrypoint>scabench:stage</entrypoint>",
            "<priority>10</priority>",
            ("implementation 'cpp': code: priority", "[run] scheduler"),
        ),
        (
            "<entrypoint>scabench:stage</entrypoint>",
            "<stacksize>65536</stacksize>",
            ("implementation 'cpp': code: stacksize", "take it out"),
        ),
    ],
)
def test_a_package_s_device_use_or_a_code_s_priority_is_refused_by_name(root, where, added, words):
    edit(root / "dom/components/WorkStage/WorkStage.spd.xml", where, where + added)
    refused(root, "WorkStage.spd.xml:", *words)


def test_a_kind_with_another_entrypoint_is_refused(root):
    edit(
        root / "dom/components/WorkStage/WorkStage.spd.xml",
        "<entrypoint>scabench:stage</entrypoint>",
        "<entrypoint>cpp/WorkStage</entrypoint>",
    )
    refused(root, "implementation 'cpp': code", "entrypoint 'cpp/WorkStage'", "leave the entrypoint out")


# -- SCD repids ---------------------------------------------------------------


@pytest.mark.parametrize(
    "repid, words",
    [
        ("IDL:BULKIO/dataLong:1.0", ("repid IDL:BULKIO/dataLong:1.0", "BulkIO's IDL:BULKIO/dataOctet:1.0")),
        ("IDL:BULKIO/dataXML:1.0", ("repid IDL:BULKIO/dataXML:1.0", "IDL:BULKIO/dataDouble:1.0")),
        ("IDL:ExtendedEvent/MessageEvent:1.0", ("repid IDL:ExtendedEvent/MessageEvent:1.0", "valid:", "BulkIO's")),
    ],
)
def test_a_port_repid_scabench_does_not_speak_is_refused(root, repid, words):
    scd = root / "dom/components/WorkStage/WorkStage.scd.xml"
    edit(scd, 'uses repid="IDL:scabench/dataDouble:1.0"', f'uses repid="{repid}"')
    refused(root, "WorkStage.scd.xml:", "uses 'out'", *words)


def test_scabench_data_interfaces_are_the_repids_of_its_ports(root):
    scd = root / "dom/components/WorkStage/WorkStage.scd.xml"
    for repid in ("IDL:scabench/DataPort:1.0", "IDL:scabench/dataFloat:1.0"):  # a sample port follows the run
        shutil.copy(SDRROOT / "dom/components/WorkStage/WorkStage.scd.xml", scd)
        edit(scd, 'uses repid="IDL:scabench/dataDouble:1.0"', f'uses repid="{repid}"')
        load_sad(root / WAVEFORM, root)


def bulkio_ports(root):
    """The waveform's ports made BulkIO ports by their SCDs' repids: SigSource's out, WorkStage's in and out,
    DataSink's in."""
    for name, ends in (("SigSource", ("uses",)), ("WorkStage", ("provides", "uses")), ("DataSink", ("provides",))):
        for end in ends:
            edit(
                root / f"dom/components/{name}/{name}.scd.xml",
                f'{end} repid="IDL:scabench/',
                f'{end} repid="IDL:BULKIO/',
            )


def test_a_bulkio_repid_makes_a_bulkio_port_and_its_connections_speak_bulkio(root):
    # scabench's own repids say nothing: the connections speak scabench's protocol, as before.
    assert all("protocol" not in c for c in sad_tables(root / WAVEFORM, root)["connection"])
    bulkio_ports(root)
    assert [(c["from"], c["to"], c.get("protocol")) for c in sad_tables(root / WAVEFORM, root)["connection"]] == [
        ("SigSource_1.out", "WorkStage_1.in", "bulkio"),
        ("WorkStage_1.out", "WorkStage_2.in", "bulkio"),
        ("WorkStage_2.out", "DataSink_1.in", "bulkio"),
    ]


def test_the_shipped_rhgain_waveform_speaks_bulkio_on_both_hops_and_starts_rhgain_as_redhawk_would(root):
    tables = sad_tables(root / "dom/waveforms/RhGainChain/RhGainChain.sad.xml", root)
    assert [(c["from"], c["to"], c.get("protocol")) for c in tables["connection"]] == [
        ("BulkioSource_1.out", "RhGain_1.dataDouble_in", "bulkio"),
        ("RhGain_1.dataDouble_out", "BulkioSink_1.in", "bulkio"),
    ]
    rhgain = next(c for c in tables["component"] if c["name"] == "RhGain_1")
    assert rhgain["kind"] == "external" and rhgain["exec"].endswith("dom/components/RhGain/python/RhGain.py")
    assert rhgain["parameters"] == {"PROFILE_NAME": "/components/RhGain/RhGain.spd.xml"} and rhgain["gain"] == 2.0


def test_dataport_names_no_protocol_so_the_other_end_s_stands(root):
    # SigSource's out as export-sad writes a port (the base every port has), WorkStage's in BulkIO.
    bulkio_ports(root)
    edit(
        root / "dom/components/SigSource/SigSource.scd.xml",
        'uses repid="IDL:BULKIO/dataDouble',
        'uses repid="IDL:scabench/DataPort',
    )
    assert sad_tables(root / WAVEFORM, root)["connection"][0]["protocol"] == "bulkio"


def test_one_end_bulkio_and_the_other_scabench_is_refused_on_the_connection(root):
    scd = root / "dom/components/WorkStage/WorkStage.scd.xml"
    edit(scd, 'uses repid="IDL:scabench/dataDouble:1.0"', 'uses repid="IDL:BULKIO/dataDouble:1.0"')
    refused(
        root,
        "RedhawkChain.sad.xml:",
        "connectinterface 'connection_2'",
        "WorkStage_1.out is a bulkio port (its SCD's repid IDL:BULKIO/dataDouble:1.0)",
        "WorkStage_2.in a scabench port (IDL:scabench/dataDouble:1.0)",
        "give both BulkIO repids, or neither",
    )


@pytest.mark.parametrize(
    "sidecar, key",
    [
        ('[connection.connection_2]\nprotocol = "scabench"\n', "connection.connection_2.protocol"),
        ('[policy]\ncall = "twoway"\nprotocol = "scabench"\n', "policy.protocol"),
    ],
)
def test_a_sidecar_protocol_the_scds_contradict_is_refused(root, sidecar, key):
    bulkio_ports(root)
    path = root / WAVEFORM.with_name("RedhawkChain.sad.toml")
    path.write_text('[run]\nsample_type = "double"\n' + sidecar)
    with pytest.raises(SpecError) as info:
        sad_tables(root / WAVEFORM, root)
    assert f"RedhawkChain.sad.toml: {key}: 'scabench', but the ports of " in str(info.value)
    assert "are bulkio ports by their SCDs' repids; take it out" in str(info.value)


def test_a_policy_override_of_the_protocol_the_scds_decided_is_refused_by_name(root):
    spec = load_sad(root / "dom/waveforms/RhGainChain/RhGainChain.sad.xml", root)
    with pytest.raises(SpecError) as info:
        spec.with_policy({"protocol": "scabench"}, where="--policy")
    assert "--policy.protocol: 'scabench', but the ports of BulkioSource_1.out->RhGain_1.dataDouble_in" in str(
        info.value
    )
    assert "bulkio ports by their SCDs' repids" in str(info.value)
    # What the SCDs decided may be said again, and other keys still apply.
    assert spec.with_policy({"protocol": "bulkio"}, where="--policy").connections[0].policy.protocol == "bulkio"
    assert spec.with_policy({"worker": 8}, where="--policy").connections[0].protocol_from_scds == "bulkio"


# -- export ------------------------------------------------------------------

ODD = """
[experiment]
name = "odd"
[[component]]
name = "1st"
kind = "producer"
[[component]]
name = "a-b"
kind = "stage"
[[component]]
name = "c_1st"
kind = "sink"
[[connection]]
from = "1st.out"
to = "a-b.in"
[[connection]]
from = "a-b.out"
to = "c_1st.in"
"""


def test_export_writes_xml_ids_and_keeps_the_names(tmp_path):
    """REDHAWK's DTD declares componentinstantiation and connectinterface ids
    as XML IDs: "1st" is none, so its id is c_1st (and the component named
    c_1st gets c_1st_2); its usagename keeps the name, so the SAD loads back
    to the same components and connections."""
    from lxml import etree

    from scabench.model.sad.export import export_sad

    (tmp_path / "odd.toml").write_text(ODD)
    spec = load_spec(tmp_path / "odd.toml")
    exported = export_sad(spec, tmp_path / "out")
    root = etree.parse(str(exported.sad)).getroot()
    assert [e.get("id") for e in root.iter("componentinstantiation")] == ["c_1st", "a-b", "c_1st_2"]
    assert [e.get("id") for e in root.iter("connectinterface")] == ["c_1st.out_to_a-b.in", "a-b.out_to_c_1st.in"]
    assert [e.get("refid") for e in root.iter("componentinstantiationref")] == [
        "c_1st",  # the assembly controller
        "c_1st",
        "a-b",
        "a-b",
        "c_1st_2",
    ]
    again = load_spec(exported.sad)
    assert [c.name for c in again.components] == ["1st", "a-b", "c_1st"]
    assert [c.id for c in again.connections] == [c.id for c in spec.connections]


LIBRARY_SPD = """<?xml version="1.0" encoding="UTF-8"?>
<softpkg id="DCE:7b1e1c38-5a52-4c36-9d0e-0b1f6a2c11ff" name="EchoLib" type="sca_compliant">
  <author><name>scabench</name></author>
  <implementation id="so">
    <code type="{code_type}"><localfile name="{localfile}"/></code>
    <os name="Linux"/>
  </implementation>
</softpkg>
"""
DEPENDENCY = (
    '<dependency type="runtime_requirements"><softpkgref><localfile name="/deps/echo/EchoLib.spd.xml"/>'
    "</softpkgref></dependency>"
)


@pytest.fixture
def echo_library(root):
    """A softpkg under the SDR root's dom/deps/ whose code is a component
    library of the runtime's tests (it registers the kind test-echo)."""
    library = bin_dir().parent / "lib" / "libscabench-test-plugin-echo.so"
    folder = root / "dom/deps/echo"
    folder.mkdir(parents=True)
    shutil.copy(library, folder / "libecho.so")
    (folder / "EchoLib.spd.xml").write_text(LIBRARY_SPD.format(code_type="SharedLibrary", localfile="libecho.so"))
    return folder


def use_echo(root, dependency=DEPENDENCY):
    """WorkStage's implementation made the echo kind, depending on the library it comes from."""
    spd = root / "dom/components/WorkStage/WorkStage.spd.xml"
    edit(
        spd,
        '<localfile name="scabench:stage"/>\n      <entrypoint>',
        '<localfile name="scabench:test-echo"/>\n      <entrypoint>',
    )
    edit(spd, "<entrypoint>scabench:stage</entrypoint>", "")
    edit(spd, '<processor name="aarch64"/>', '<processor name="aarch64"/>' + dependency)
    edit(spd, '<propertyfile type="PRF">\n    <localfile name="WorkStage.prf.xml"/>\n  </propertyfile>', "")
    edit(
        root / WAVEFORM,
        '<componentproperties>\n            <simpleref refid="work_us" value="50"/>\n          </componentproperties>',
        "",
    )
    text = (root / WAVEFORM).read_text()
    start, end = (
        text.index("  <externalproperties>"),
        text.index("</externalproperties>") + len("</externalproperties>\n"),
    )
    (root / WAVEFORM).write_text(text[:start] + text[end:])


def test_a_dependency_on_a_component_library_gives_the_kind_its_library(root, echo_library):
    # REDHAWK loads a softpkg dependency's library with the component; scabench-host loads it with --library.
    use_echo(root)
    spec = load_sad(root / WAVEFORM, root)
    stage = spec.component("WorkStage_1")
    assert (stage.kind, stage.library) == ("test-echo", echo_library / "libecho.so")


@pytest.mark.parametrize(
    "damage, words",
    [
        # A package whose code is not a component library: scabench loads no other.
        (
            lambda lib: (lib / "EchoLib.spd.xml").write_text(LIBRARY_SPD.format(code_type="Executable", localfile="x")),
            ["EchoLib.spd.xml is not a scabench component library", "take the dependency out"],
        ),
        (lambda lib: (lib / "EchoLib.spd.xml").unlink(), ["EchoLib.spd.xml: no such file", "dependency's SPD"]),
    ],
)
def test_a_dependency_scabench_cannot_honour_is_refused_by_name(root, echo_library, damage, words):
    use_echo(root)
    damage(echo_library)
    refused(root, "WorkStage.spd.xml:", "dependency: softpkgref", *words)


def test_a_librarys_own_dependency_is_refused_by_name(root, echo_library):
    use_echo(root)
    edit(echo_library / "EchoLib.spd.xml", '<os name="Linux"/>', '<os name="Linux"/>' + DEPENDENCY)
    refused(root, "EchoLib.spd.xml:", "a dependency's own softpkgref is not followed")


def test_a_dependency_whose_library_lacks_the_kind_is_refused(root, echo_library):
    use_echo(root)
    edit(root / "dom/components/WorkStage/WorkStage.spd.xml", "scabench:test-echo", "scabench:stage")
    refused(root, "dependency: softpkgref", "registers test-echo, not 'stage'")


def give(root, instance, *simplerefs):
    """Adds simplerefs to an instantiation's componentproperties (making one where it has none)."""
    sad = root / WAVEFORM
    refs = "".join(f'<simpleref refid="{rid}" value="{value}"/>' for rid, value in simplerefs)
    text = sad.read_text()
    start = text.index(f'<componentinstantiation id="{instance}"')
    usage = text.index("</usagename>", start) + len("</usagename>")
    if text.find("<componentproperties>", start, text.index("</componentinstantiation>", start)) >= 0:
        at = text.index("<componentproperties>", start) + len("<componentproperties>")
        sad.write_text(text[:at] + refs + text[at:])
    else:
        sad.write_text(text[:usage] + f"<componentproperties>{refs}</componentproperties>" + text[usage:])


def test_the_policy_given_on_a_port_in_the_sad_is_its_connections(root):
    give(root, "SigSource_1", ("out.call", "oneway"), ("out.sync", "none"))
    give(root, "WorkStage_2", ("in.worker", "16"), ("in.ordering", "resequence"))
    spec = load_sad(root / WAVEFORM, root)
    first, second = spec.connections[0].policy, spec.connections[1].policy
    assert (first.call, first.sync) == ("oneway", "none")
    assert (second.worker_depth, second.ordering) == (16, "resequence")
    assert spec.connections[2].policy.call == "twoway"  # the runtime's default: nothing given there
    # The sidecar's [policy] is the default the SAD's keys go over.
    (root / WAVEFORM).with_name("RedhawkChain.sad.toml").write_text('[policy]\ncall = "oneway"\nsync = "none"\n')
    spec = load_sad(root / WAVEFORM, root)
    assert [c.policy.call for c in spec.connections] == ["oneway", "oneway", "oneway"]


@pytest.mark.parametrize(
    "instance, ref, words",
    [
        ("SigSource_1", ("out.worker", "16"), ["simpleref 'out.worker'", "worker is a provides port's policy key"]),
        ("SigSource_1", ("output.call", "oneway"), ["has no port 'output' to give the policy key 'call'"]),
        ("SigSource_1", ("out.call", "sometimes"), ["simpleref 'out.call'", "call"]),
        ("WorkStage_1", ("in.flow", "credits(8)"), ["simpleref 'in.flow'", "flow"]),
    ],
)
def test_a_policy_key_in_the_sad_is_checked_at_its_simpleref(root, instance, ref, words):
    give(root, instance, ref)
    if ref[0] == "in.flow":  # the sender's end says otherwise: a key of both sides has one value
        give(root, "SigSource_1", ("out.flow", "none"))
    message = refused(root, *words)
    assert message.startswith(str(root / WAVEFORM) + ":")


def test_without_an_scd_a_policy_key_stays_on_its_side_of_the_connection(root):
    # A program of its own without an SCD: the connection says which side
    # `out` is, and worker is a provides key: it may not move to
    # WorkStage_2's `in`.
    program_package(root, "")
    (root / "dom/components/ExtStage/WorkStage.scd.xml").unlink()
    edit(
        root / "dom/components/ExtStage/ExtStage.spd.xml",
        '<descriptor>\n    <localfile name="WorkStage.scd.xml"/>\n  </descriptor>',
        "",
    )
    give(root, "WorkStage_1", ("out.worker", "16"))
    refused(root, "simpleref 'out.worker'", "worker is a provides port's policy key", "out is the uses end")


def test_an_unknown_key_on_a_port_names_that_sides_policy_keys(root):
    give(root, "SigSource_1", ("out.fanout_dept", "4"))
    refused(root, "simpleref 'out.fanout_dept'", "out is a uses port of SigSource", "call, sync, fanout, fanout_depth")


SEQUENCE_REF = '<simplesequenceref refid="{}"><values><value>0.5</value></values></simplesequenceref>'


@pytest.mark.parametrize(
    "ref, words",
    [
        (SEQUENCE_REF.format("nope"), ["simplesequenceref 'nope'", "not a property in", "its simplesequences: taps"]),
        (SEQUENCE_REF.format("status"), ["simplesequenceref 'status'", "a struct (", "its simplesequences: taps"]),
        ('<simpleref refid="taps" value="1"/>', ["simpleref 'taps'", "set it with simplesequenceref"]),
        ('<structref refid="status"><simpleref refid="status::state" value="x"/></structref>', ["set the values in"]),
    ],
)
def test_a_ref_to_a_programs_property_is_refused_saying_what_to_do(root, ref, words):
    program_package(root, STATUS)
    edit(
        root / WAVEFORM,
        "<usagename>WorkStage_1</usagename>",
        f"<usagename>WorkStage_1</usagename><componentproperties>{ref}</componentproperties>",
    )
    refused(root, *words)


def test_a_simplesequenceref_to_a_readonly_sequence_names_its_line(root):
    program_package(root, STATUS)
    edit(
        root / WAVEFORM,
        "<usagename>WorkStage_1</usagename>",
        f"<usagename>WorkStage_1</usagename><componentproperties>{SEQUENCE_REF.format('taps')}</componentproperties>",
    )
    refused(root, "simplesequenceref 'taps'", "readonly in", "WorkStage.prf.xml:")


def test_a_policy_key_in_both_the_sad_and_the_sidecar_is_refused(root):
    give(root, "SigSource_1", ("out.call", "oneway"))
    (root / WAVEFORM).with_name("RedhawkChain.sad.toml").write_text(
        '[connection."SigSource_1.out->WorkStage_1.in"]\ncall = "twoway"\n'
    )
    refused(root, "RedhawkChain.sad.toml", "call", "the SAD gives it too", "simpleref 'out.call'", "one place")
    # A key the SAD does not give stays the sidecar's.
    (root / WAVEFORM).with_name("RedhawkChain.sad.toml").write_text('[connection."connection_1"]\nsync = "none"\n')
    policy = load_sad(root / WAVEFORM, root).connections[0].policy
    assert (policy.call, policy.sync) == ("oneway", "none")

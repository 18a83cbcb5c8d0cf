"""The deployment plan (python/scabench/run/plan.py): every plan the runner
writes holds to its published schema (docs/plan.schema.json), which the
launcher's parser holds to from the other side (tests/cpp/plan_test.cpp)."""

import json

import jsonschema
import pytest
from conftest import REPO, pipeline_toml

from scabench.errors import SpecError
from scabench.model.load import load_spec
from scabench.model.spec import BIND_TIMEOUT_MAX_S
from scabench.model.transport import ring_bytes
from scabench.run.plan import WIRING, plan_of

SCHEMA = json.loads((REPO / "docs" / "plan.schema.json").read_text())
DOMAIN = '[domain]\nnaming = "corbaloc::127.0.0.1:2809/NameService"\n'

SPECS = {
    "shm, collocated": pipeline_toml(
        packets=5, transport="shm", placement='hosts = [["producer", "stage1"], ["stage2"], ["stage3"]]'
    ),
    "tcp, pinned": pipeline_toml(packets=5, transport="tcp", run="pin = true"),
    "nodes": pipeline_toml(packets=5, placement='nodes = { n1 = ["producer"], n2 = ["stage1", "stage2"] }') + DOMAIN,
    "external program": (
        'chain = ["producer", "x", "last"]\n[[component]]\nname = "producer"\nkind = "producer"\n'
        'packets = 5\n[[component]]\nname = "x"\nkind = "external"\nexec = "/bin/true"\n'
        'orb_options = true\ngains = {sequence = "double", values = [1.0, 0.5]}\n'
        'scale = {struct = {gain = {type = "float", value = 2.0}, n = {type = "short", value = 3}, on = true}}\n'
        '[[component]]\nname = "last"\nkind = "sink"\n'
    ),
}


def plan_json(write_spec, tmp_path, text):
    return plan_of(load_spec(write_spec(text)), tmp_path, 60.0).to_json()


@pytest.mark.parametrize("name", SPECS)
def test_every_plan_the_runner_writes_holds_to_the_schema(write_spec, tmp_path, name):
    jsonschema.validate(plan_json(write_spec, tmp_path, SPECS[name]), SCHEMA)


def test_a_hop_names_both_ends_its_transport_ring_and_wiring(write_spec, tmp_path):
    spec = load_spec(write_spec(SPECS["shm, collocated"]))
    plan = plan_of(spec, tmp_path, 60.0)
    by_id = {h.id: h for h in plan.hops}
    direct, ring = by_id["producer.out->stage1.in"], by_id["stage1.out->stage2.in"]
    assert (direct.transport, direct.ring_bytes) == ("collocated", None)
    assert (ring.transport, ring.ring_bytes, ring.wiring) == ("shm", ring_bytes(spec), WIRING)
    assert (ring.uses.component, ring.uses.port, ring.provides.component, ring.provides.port) == (
        "stage1",
        "out",
        "stage2",
        "in",
    )
    # What a hop gives each end is what that component is configured with.
    stage1 = next(c for h in plan.hosts for c in h.components if c.name == "stage1")
    assert ring.uses.properties.items() <= stage1.properties.items()
    assert ring.uses.properties["out.transport"] == "shm"
    stage2 = next(c for h in plan.hosts for c in h.components if c.name == "stage2")
    assert ring.provides.properties and ring.provides.properties.items() <= stage2.properties.items()


def test_a_process_on_a_node_has_no_cpus_here_and_its_memory_counts_on_its_node(write_spec, tmp_path):
    plan = plan_of(load_spec(write_spec(SPECS["nodes"])), tmp_path, 60.0)
    on = {h.name: h for h in plan.hosts}
    assert on["host0-producer"].placement.node == "n1" and on["host0-producer"].placement.cores == []
    assert on["host3-stage3"].placement.node is None and on["host3-stage3"].placement.cores
    mib = {n.name: n.memory_mib for n in plan.nodes}
    assert mib["n2"] == -(-(on["host1-stage1"].memory_bytes + on["host2-stage2"].memory_bytes) // (1 << 20))


@pytest.mark.parametrize(
    "break_it, where",
    [
        (lambda p: p.pop("hosts"), "'hosts' is a required property"),
        (lambda p: p["connections"][0].pop("wiring"), "'wiring' is a required property"),
        (lambda p: p["connections"][0].update(wiring="rtp"), "'rtp' is not one of ['connectPort']"),
        (lambda p: p["connections"][0]["uses"].pop("port"), "'port' is a required property"),
        (lambda p: p["hosts"][0].update(cores="all"), "'all' is not of type 'array'"),
    ],
)
def test_the_schema_refuses_a_malformed_plan(write_spec, tmp_path, break_it, where):
    plan = plan_json(write_spec, tmp_path, SPECS["tcp, pinned"])
    break_it(plan)
    with pytest.raises(jsonschema.ValidationError) as refused:
        jsonschema.validate(plan, SCHEMA)
    assert where in str(refused.value)


def test_the_sample_the_launchers_parser_is_tested_on_holds_to_the_schema():
    # tests/cpp/plan_test.cpp parses this file: both sides hold to one schema.
    jsonschema.validate(json.loads((REPO / "docs" / "plan.example.json").read_text()), SCHEMA)


def test_the_plan_starts_every_component_in_the_specs_order_and_the_rest_around_it(write_spec, tmp_path):
    # stage3 then stage2 as given; stage1, a receiver left out, before them; the producer, which only sends, after.
    text = pipeline_toml(packets=5, run='start_order = ["stage3", "stage2"]')
    plan = plan_json(write_spec, tmp_path, text)
    assert plan["start_order"] == ["stage1", "stage3", "stage2", "producer"]
    # Without one: receivers first, in name order, then the sources.
    assert plan_json(write_spec, tmp_path, pipeline_toml(packets=5))["start_order"] == [
        "stage1",
        "stage2",
        "stage3",
        "producer",
    ]


@pytest.mark.parametrize(
    "order, words",
    [
        ('["stage9"]', "'stage9' is not a component"),
        ('["stage1", "stage1"]', "given twice"),
        ('"stage1"', "a list of component names"),
        # The producer would send before stage1 has started: refused, not reordered.
        ('["producer", "stage1"]', "starts producer (or what feeds it) before stage1"),
        ('["stage1", "producer", "stage2"]', "before stage2"),
    ],
)
def test_a_start_order_is_checked_by_name(write_spec, order, words):
    with pytest.raises(SpecError) as refused:
        load_spec(write_spec(pipeline_toml(packets=5, run=f"start_order = {order}")))
    assert refused.value.key == "run.start_order" and words in str(refused.value)


def test_a_program_of_its_own_on_a_bulkio_hop_gets_no_policy_keys(write_spec, tmp_path):
    # A REDHAWK component's BulkIO port has no place for scabench's policy, and would refuse the keys as
    # properties it does not have: scabench's end of the hop keeps the policy.
    text = SPECS["external program"] + '[policy]\ncall = "twoway"\nprotocol = "bulkio"\n'
    plan = plan_of(load_spec(write_spec(text)), tmp_path, 60.0)
    into, out_of = plan.hops
    assert into.provides.component == "x" and into.provides.properties == {}
    assert out_of.uses.component == "x" and out_of.uses.properties == {}
    assert into.uses.properties["out.protocol"] == "bulkio" and out_of.provides.properties["in.protocol"] == "bulkio"
    (x,) = plan.externals
    assert not [key for key in x.component.properties if "." in key]  # its own properties, no port policy key


def test_a_struct_member_carries_its_prf_type_into_the_plan(write_spec, tmp_path):
    plan = plan_json(write_spec, tmp_path, SPECS["external program"])
    (external,) = plan["externals"]
    assert external["properties"]["scale"] == {
        "struct": {
            "gain": {"type": "float", "value": 2.0},
            "n": {"type": "short", "value": 3},
            "on": {"type": "boolean", "value": True},
        }
    }


@pytest.mark.parametrize(
    "value, key, words",
    [
        ('{sequence = "octet", values = [300, -1]}', "component[1].p.values[0]", "300 does not fit the PRF type octet"),
        ('{sequence = "ulong", values = [-5]}', "component[1].p.values[0]", "-5 does not fit the PRF type ulong"),
        ('{sequence = "float", values = [1e300]}', "component[1].p.values[0]", "does not fit the PRF type float"),
        (
            '{struct = {n = {type = "short", value = 40000}}}',
            "component[1].p.struct.n.value",
            "40000 does not fit the PRF type short",
        ),
        ("{struct = {}}", "component[1].p.struct", "a struct has members"),
    ],
)
def test_a_value_beyond_its_types_bounds_is_refused_before_the_wire(write_spec, value, key, words):
    text = SPECS["external program"].replace("gains = {", f"p = {value}\ngains = {{")
    with pytest.raises(SpecError) as refused:
        load_spec(write_spec(text))
    message = str(refused.value)
    assert key in message and words in message and "\n" not in message, message


def test_a_struct_member_id_may_hold_dots(write_spec, tmp_path):
    # REDHAWK allows dots in a member id: it is no property name, so no port policy key.
    text = SPECS["external program"].replace("gains = {", 'p = {struct = {"a.b" = 1}}\ngains = {')
    (external,) = plan_json(write_spec, tmp_path, text)["externals"]
    assert external["properties"]["p"] == {"struct": {"a.b": {"type": "longlong", "value": 1}}}


def test_the_schemas_bounds_are_the_spec_checkers():
    """The launcher holds each plan value to the schema's bounds
    (cpp/programs/launcher/plan.cpp); the spec checker's are the same, so a
    plan the runner writes is never refused for a bound."""
    external = SCHEMA["$defs"]["external"]["properties"]["bind_timeout_s"]
    assert (external["exclusiveMinimum"], external["maximum"]) == (0, BIND_TIMEOUT_MAX_S)

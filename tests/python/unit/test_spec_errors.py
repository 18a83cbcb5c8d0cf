"""Bad specs give one clear line naming the file, the key and what is valid."""

import pytest
from conftest import REPO, pipeline_toml, scabench

from scabench.errors import SpecError
from scabench.model.load import load_spec

CASES = [
    ('[run]\ntransport = "udp"\n', "run.transport", "tcp, unix"),
    ("[run]\nspeed = 3\n", "run.speed", "valid: sample_type"),
    ('[run]\nscheduler = "fifo"\n', "run.scheduler", "normal, batch"),
    ("[run]\ncores = [99]\n", "run.cores", "usable CPUs"),
    ('[[component]]\nname = "p"\nkind = "mixer"\n', "component[0].kind", "producer"),
    ('[[component]]\nname = "p"\nkind = "producer"\npackets = "many"\n', "component[0].packets", "integer"),
    ('[[component]]\nname = "s"\nkind = "stage"\nwork_ms = 5\n', "component[0].work_ms", "work_us"),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[[component]]\nname = "s"\nkind = "sink"\n',
        "component[1].name",
        "used twice",
    ),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[[connection]]\nfrom = "s.out"\nto = "t.in"\n',
        "connection[0].to",
        "no component named 't'",
    ),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[[component]]\nname = "k"\nkind = "sink"\n'
        '[[connection]]\nfrom = "s.out"\nto = "k.input"\n',
        "connection[0].to",
        "it has: in",
    ),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\ncall = "sometimes"\n', "policy.call", "twoway, oneway"),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\ndispatch = "pool:0"\n', "policy.dispatch", "pool:N"),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\nworker = 0\n', "policy.worker", "depth >= 1"),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[policy]\nworker_resume = 4\n',
        "policy.worker_resume",
        "set worker = true or a depth",
    ),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[policy]\nworker = 8\nworker_resume = 8\n',
        "policy.worker_resume",
        "0 <= r < 8",
    ),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[policy]\nworker = true\nworker_resume = "most"\n',
        "policy.worker_resume",
        '"auto", "half" or a queue level r >= 0',
    ),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\ncall = "twoway"\nsync = "none"\n', "policy.sync", "oneway"),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\nretries = 3\n', "policy.retries", "valid keys"),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[placement]\nhosts = [["s", "x"]]\n',
        "placement.hosts",
        "no component named 'x'",
    ),
    ("[experiments]\n", "experiments", "valid: experiment"),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\nflow = "watermarks(8, 4)"\n', "policy.flow", "lo < hi"),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\nflow = "credits(0)"\n', "policy.flow", "w >= 1"),
    ('[[component]]\nname = "s"\nkind = "stage"\n[policy]\nflow = "lots"\n', "policy.flow", "credits(w)"),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[policy]\nreorder_capacity = 0\n',
        "policy.reorder_capacity",
        "from 1 to 65536",
    ),
    (
        '[[component]]\nname = "s"\nkind = "stage"\n[policy]\nordering = "sorted"\n',
        "policy.ordering",
        "arrival, resequence",
    ),
]


@pytest.mark.parametrize("text, key, hint", CASES)
def test_bad_spec_names_file_key_and_valid_values(write_spec, text, key, hint):
    path = write_spec(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert err.value.key == key
    assert str(path) in str(err.value) and hint in str(err.value)


def test_validate_refuses_what_configure_would_refuse(write_spec):
    """`validate` judges each property by the range and names the component
    declares, so a value its configure would refuse never passes as "ok"
    (it used to validate, then fail at configure after the processes started)."""
    for value in ('"nnoe"', '"Sleep"', '"gpu"'):
        path = write_spec(pipeline_toml(stages=1).replace('work = "cpu"', f"work = {value}"))
        proc = scabench("validate", path)
        assert proc.returncode == 2, proc.stdout
        assert (
            f"{path}: component[1].work: {value.replace(chr(34), chr(39))} is not valid; use one of: none, cpu, "
            "sleep" in proc.stdout
        )


def test_the_watchdog_waits_through_a_stages_jitter(write_spec):
    """A stage whose data-dependent work (work_jitter_us) is far above its
    work_us takes up to their sum on a packet: the watchdog's limit counts it,
    so such a legitimate run is not ended as stuck."""
    from scabench.run.runner import hang_limit_s

    spec = load_spec(write_spec(pipeline_toml(stages=1, work_us=1000)))
    steady = hang_limit_s(spec)
    spec = spec.with_properties("stage1", {"work_jitter_us": 2_000_000}, where="--set")
    assert hang_limit_s(spec) >= 20 * 2.001 > steady


def test_invalid_toml_names_the_file(write_spec):
    path = write_spec("[run\n")
    with pytest.raises(SpecError, match="not valid TOML"):
        load_spec(path)


def test_conflicting_dispatch_into_one_process_is_refused(write_spec):
    text = pipeline_toml(stages=2, placement='hosts = [["producer"], ["stage1", "stage2"], ["side"]]')
    text += '[[component]]\nname = "side"\nkind = "producer"\n'
    text += '[[connection]]\nfrom = "side.out"\nto = "stage2.in"\ndispatch = "serial"\n'
    text = text.replace('chain = ["producer", "stage1", "stage2"]', 'chain = ["producer", "stage1"]')
    with pytest.raises(SpecError, match="different dispatch"):
        load_spec(write_spec(text))


def test_cli_prints_one_line_and_no_traceback(write_spec):
    path = write_spec('[run]\ntransport = "udp"\n')
    proc = scabench("run", path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{path}: run.transport" in proc.stderr


def test_cli_missing_file():
    proc = scabench("run", "/nonexistent/spec.toml")
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_cli_bad_cores_option(write_spec):
    proc = scabench("run", write_spec(pipeline_toml()), "--cores", "zero")
    assert proc.returncode == 2 and "--cores" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args, hint",
    [
        (["--policy", "sync=sometimes"], "--policy.sync: 'sometimes' is not valid; use one of: none, transport"),
        (["--policy", "worker"], "--policy: worker: use KEY=VALUE"),
        (
            ["--set", "producer.speed=3"],
            "producer has no property 'speed'; valid: amplitude, dither_us, drop_packet, filters, packets, path, "
            "period_us",
        ),
        (["--set", "mixer.gain=2"], "no component named 'mixer'; declared: producer, stage1"),
        (["--set", "producer=2"], "use COMPONENT.KEY=VALUE"),
    ],
)
def test_cli_overrides_are_checked_like_the_spec(write_spec, args, hint):
    proc = scabench("run", write_spec(pipeline_toml()), *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert hint in proc.stderr


def test_overrides_change_the_resolved_spec(write_spec):
    from scabench.model.checks import parse_overrides, parse_property_overrides

    spec = load_spec(write_spec(pipeline_toml(policy='call = "oneway"')))
    spec = spec.with_policy(parse_overrides(["sync=server", "worker=8"], "--policy"), where="--policy")
    spec = spec.with_collocated(where="--collocated")
    for name, props in parse_property_overrides(["producer.period_us=7500"], "--set").items():
        spec = spec.with_properties(name, props, where="--set")
    d = spec.describe()
    assert {(c["sync"], c["worker_depth"], c["placement"]) for c in d["connections"]} == {("server", 8, "collocated")}
    assert d["components"][0]["properties"]["period_us"] == 7500 and len(d["hosts"]) == 1


def test_ports_take_the_policy_as_the_spec_writes_it():
    """The port properties are the spec's keys and values; the runtime resolves
    worker_resume = "auto" per call (tests/cpp: AutoResumeLevelFollowsTheCallType)."""
    from scabench.model.catalog import component_kinds
    from scabench.model.policy import parse_policy

    p = parse_policy({"call": "oneway", "worker": 64, "dispatch": "pool:4", "flow": "credits( 32)"})
    assert p.uses_properties("out") == {
        "out.call": "oneway",
        "out.sync": "transport",
        "out.fanout": "sequential",
        "out.fanout_depth": 64,
        "out.flow": "credits(32)",
        "out.protocol": "scabench",
    }
    assert p.provides_properties("in") == {
        "in.worker": 64,
        "in.worker_resume": "auto",
        "in.dispatch": "pool:4",
        "in.ordering": "arrival",
        "in.reorder_capacity": 64,
        "in.reorder_timeout_ms": 50.0,
        "in.flow": "credits(32)",
        "in.packet_length": 0,
        "in.protocol": "scabench",
    }
    assert parse_policy({"worker": 64, "worker_resume": "half"}).provides_properties("in")["in.worker_resume"] == "half"
    assert parse_policy({"worker": 64, "worker_resume": 5}).provides_properties("in")["in.worker_resume"] == "5"
    declared = component_kinds()["stage"]["properties"]
    for name in {**p.uses_properties("out"), **p.provides_properties("in")}:
        assert name in declared


def test_a_key_the_runtime_adds_needs_no_restating(write_spec):
    """packet_length is declared once, in the runtime's policy table: a spec
    key for it is checked against the published range, reaches the provides
    port, and shows in the resolved spec."""
    spec = load_spec(write_spec(pipeline_toml(policy="packet_length = 256")))
    assert {c["packet_length"] for c in spec.describe()["connections"]} == {256}
    assert spec.connections[0].policy.provides_properties("in")["in.packet_length"] == 256
    assert "in.packet_length" not in spec.connections[0].policy.uses_properties("out")
    for bad in ("-1", '"256"', "true"):
        with pytest.raises(SpecError) as err:
            load_spec(write_spec(pipeline_toml(policy=f"packet_length = {bad}")))
        assert "packet_length" in str(err.value) and "0 to 67104768" in str(err.value)


def test_a_transport_override_that_clashes_names_the_flag_and_leaves_the_spec_as_it_was():
    spec = load_spec(REPO / "experiments" / "paper" / "exp6.toml").with_network({"delay_ms": 1}, where="--link-delay")
    with pytest.raises(SpecError, match=r"--transport: network hosts stand for other machines"):
        spec = spec.with_transport("shm", where="--transport")
    assert spec.transport == "tcp"
    with pytest.raises(SpecError, match=r"--transport: 'udp' is not valid; use one of: tcp, unix, shm"):
        spec = spec.with_transport("udp", where="--transport")
    # The flag that made the network hosts is the one named when it comes second.
    spec = load_spec(REPO / "experiments" / "paper" / "exp6.toml").with_transport("shm", where="--transport")
    with pytest.raises(SpecError, match=r"--link-delay: network hosts stand for other machines"):
        spec = spec.with_network({"delay_ms": 1}, where="--link-delay")


def test_a_with_change_is_a_copy_and_leaves_the_spec_as_it_was(write_spec):
    """`with_` reads as a copy: each returns a changed spec and the one it
    was called on stays as it was loaded (a sweep's points, a campaign's
    configurations share nothing)."""
    import json

    spec = load_spec(write_spec(pipeline_toml(stages=2)))
    before = json.dumps(spec.describe(), sort_keys=True)
    copies = [
        spec.with_packets(7, where="w"),
        spec.with_cores(spec.cores[:1]),
        spec.with_pin(True),
        spec.with_scheduler("batch", where="w"),
        spec.with_transport("unix", where="w"),
        spec.with_policy({"call": "oneway"}, where="w"),
        spec.with_properties("stage1", {"work_us": 7}, where="w"),
        spec.with_network({"delay_ms": 2}, where="w"),
        spec.with_collocated(where="w"),
    ]
    assert json.dumps(spec.describe(), sort_keys=True) == before
    assert copies[0].component("producer").properties["packets"] == 7 and copies[2].pin
    assert (copies[3].scheduler, copies[4].transport) == ("batch", "unix")
    assert {c.policy.call for c in copies[5].connections} == {"oneway"}
    assert copies[6].component("stage1").properties["work_us"] == 7 and copies[7].network.delay_ms == 2
    assert copies[8].hosts == [["producer", "stage1", "stage2"]]


def test_the_model_names_the_callers_where_and_no_flag_of_its_own(write_spec):
    """The model raises with the `where` its caller gives (a flag, a grid
    key, a campaign's configuration); it has no command-line names."""
    import inspect

    from scabench.model.overrides import Overrides, apply_overrides
    from scabench.model.spec import Spec

    for name, method in vars(Spec).items():
        if name.startswith("with_") and "where" in inspect.signature(method).parameters:
            assert inspect.signature(method).parameters["where"].default is inspect.Parameter.empty, name
    spec = load_spec(write_spec(pipeline_toml(stages=1)))
    with pytest.raises(SpecError, match=r"config x: scheduler: 'fifo' is not valid; use one of: normal, batch"):
        apply_overrides(spec, Overrides(scheduler="fifo"), {"scheduler": "config x: scheduler"})
    with pytest.raises(SpecError, match=r"--grid run.packets: .*1 to"):
        apply_overrides(spec, Overrides(packets=0), {"packets": "--grid run.packets"})
    changed = apply_overrides(
        spec,
        Overrides(packets=3, policy={"call": "oneway"}, collocated=True),
        {"packets": "p", "policy": "q", "collocated": "r"},
    )
    assert changed.component("producer").properties["packets"] == 3 and len(changed.hosts) == 1
    assert {c.policy.call for c in changed.connections} == {"oneway"} and len(spec.hosts) == 2


def test_a_bulkio_connection_refuses_what_bulkio_cannot_carry():
    """protocol = "bulkio" needs what BulkIO's wire carries (the runtime's
    schema says it: `needs`): each other value is refused naming its key."""
    from scabench.model.policy import PolicyValueError, parse_policy

    assert parse_policy({"protocol": "bulkio"}).protocol == "bulkio"
    for key, value in (("call", "oneway"), ("flow", "credits(4)"), ("ordering", "resequence")):
        with pytest.raises(PolicyValueError) as refused:
            parse_policy({"protocol": "bulkio", key: value})
        assert refused.value.key == key and 'protocol = "bulkio"' in str(refused.value)

"""A corpus of bad input: every case gets one line naming the file (or
flag), the key and what is valid, before any process starts. The spec
loader is also fuzzed: whatever TOML it is given, it returns a spec or
raises SpecError, nothing else."""

import math
import os
import subprocess
import sys

import pytest
from conftest import REPO, pipeline_toml, scabench
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scabench.errors import SpecError
from scabench.model.checks import parse_overrides, parse_property_overrides
from scabench.model.load import load_spec
from scabench.model.resources import check_memory, memory_needed
from scabench.model.spec_toml import parse_spec

ONE = '[[component]]\nname = "p"\nkind = "producer"\n'
STAGE = '[[component]]\nname = "s"\nkind = "stage"\n'
TWO = 'chain = ["p", "s"]\n' + ONE + STAGE


def with_run(body):
    """A two-component spec with `body` in its [run] table."""
    return 'chain = ["p", "s"]\n[run]\n' + body + "\n" + ONE + STAGE


# (spec text, the key the error names, a hint of what is valid)
SPECS = [
    # numbers that are not numbers, or too large
    (with_run("timeout_s = nan"), "run.timeout_s", "0 to 86400"),
    (with_run("timeout_s = inf"), "run.timeout_s", "0 to 86400"),
    (with_run("timeout_s = -1"), "run.timeout_s", "0 to 86400"),
    (with_run("timeout_s = true"), "run.timeout_s", "seconds"),
    (with_run("timeout_s = 1e12"), "run.timeout_s", "0 to 86400"),
    (with_run("cores = [true]"), "run.cores", "CPU numbers"),
    (with_run("cores = []"), "run.cores", "CPU numbers"),
    (with_run('cores = "0,x"'), "run.cores", "CPU numbers"),
    (with_run("cores = [-1]"), "run.cores", "usable CPUs"),
    (with_run("cores = 0"), "run.cores", "CPU numbers"),
    (with_run("pin = 1"), "run.pin", "true or false"),
    (with_run('sample_type = "int"'), "run.sample_type", "octet, short, float, double"),
    (with_run('sample_type = ["double"]'), "run.sample_type", "octet, short, float, double"),
    (with_run("transport = 3"), "run.transport", "tcp, unix"),
    (with_run('scheduler = ""'), "run.scheduler", "normal, batch"),
    (with_run('transport = "unix"') + "[network]\ndelay_ms = 1\n", "run.transport", "tcp"),
    (
        with_run('transport = "shm"') + "[network]\ndelay_ms = 1\n",
        "run.transport",
        "shared memory joins processes of one machine only",
    ),
    (with_run('transport = "udp"'), "run.transport", "tcp, unix, shm"),
]
PROPS = [
    # the range the producer declares, which its configure enforces: a stream has a packet at least
    ("p", "packets = 0", "component[0].packets", "from 1 to 4,294,967,295"),
    ("p", "packets = -5", "component[0].packets", "from 1 to"),
    ("p", "packets = 9223372036854775808", "component[0].packets", "1 to 4,294,967,295"),  # an unsigned long
    ("p", "packets = 1.5", "component[0].packets", "integer"),
    ("p", 'packets = "10"', "component[0].packets", "integer"),
    ("p", "packets = true", "component[0].packets", "integer"),
    ("p", "samples = 0", "component[0].samples", "from 1 to 8,388,096 with double samples"),
    ("p", "samples = 1000000000000", "component[0].samples", "1 to 8,388,096"),
    ("p", "samples = 9000000", "component[0].samples", "fit in an ORB message"),
    ("p", "drop_packet = -2", "component[0].drop_packet", "from -1 up"),
    ("p", "period_us = -1", "component[0].period_us", "from 0 to"),
    ("p", 'colour = "red"', "component[0].colour", "valid:"),
    ("p", "record_capacity = 5", "component[0].record_capacity", "valid:"),
    ("p", '"in.worker" = 4', "component[0].in.worker", "valid:"),
    ("s", "work_us = nan", "component[1].work_us", "integer"),
    ("s", "work_us = 1e400", "component[1].work_us", "integer"),
    ("s", "work = 5", "component[1].work", "string"),
    # the stage's names for its work, which its configure takes and no other
    ("s", 'work = "nnoe"', "component[1].work", "'nnoe' is not valid; use one of: none, cpu, sleep"),
    ("s", 'work = "Sleep"', "component[1].work", "use one of: none, cpu, sleep"),
    ("s", 'work = "gpu"', "component[1].work", "use one of: none, cpu, sleep"),
    ("s", "work_us = [1]", "component[1].work_us", "integer"),
    ("s", "work_us = {a = 1}", "component[1].work_us", "integer"),
]
for name, line, key, hint in PROPS:
    text = TWO.replace(f'name = "{name}"\n', f'name = "{name}"\n{line}\n', 1)
    SPECS.append((text, key, hint))
SPECS += [
    # shapes: arrays where tables are expected, and the reverse
    ("run = [1, 2]\n" + TWO, "run", "must be a table"),
    ("policy = 3\n" + TWO, "policy", "must be a table"),
    ("component = 3\n", "component", "[[component]]"),
    ("component = [1, 2]\n", "component[0]", "must be a table"),
    ("component = []\n", "component", "[[component]]"),
    ("", "component", "[[component]]"),
    ("connection = 5\n" + TWO, "connection", "[[connection]]"),
    ('connection = ["p.out"]\n' + TWO, "connection", "[[connection]]"),
    ('chain = "p"\n' + ONE, "chain", "list of component names"),
    ("chain = [1, 2]\n" + ONE, "chain", "list of component names"),
    ("placement = [1]\n" + TWO, "placement", "must be a table"),
    ("network = 10\n" + TWO, "network", "must be a table"),
    ('experiment = "x"\n' + TWO, "experiment", "must be a table"),
    (TWO + '[placement]\nhosts = "p"\n', "placement.hosts", "lists of component names"),
    (TWO + "[placement]\nhosts = [[]]\n", "placement.hosts", "lists of component names"),
    (TWO + "[placement]\nhosts = [[1]]\n", "placement.hosts", "lists of component names"),
    (TWO + '[placement]\nhosts = [["p"]]\n', "placement.hosts", "'s' is not placed"),
    (TWO + '[placement]\nhosts = [["p", "s"], ["s"]]\n', "placement.hosts", "placed twice"),
    (TWO + "[placement]\ncores = 1\n", "placement.cores", "valid: hosts"),
    # names and kinds
    (ONE.replace('"p"', '"p q"'), "component[0].name", "letters, digits"),
    (ONE.replace('name = "p"\n', ""), "component[0].name", "letters, digits"),
    (ONE.replace('"p"', '""'), "component[0].name", "letters, digits"),
    (ONE.replace('kind = "producer"\n', ""), "component[0].kind", "valid:"),
    (ONE.replace('"producer"', '["producer"]'), "component[0].kind", "valid:"),
    # topology
    ("chain = []\n" + STAGE, "connection", "'s' (stage) receives from nothing"),
    ('chain = ["s"]\n' + STAGE, "connection", "'s' (stage) receives from nothing"),
    (TWO.replace('chain = ["p", "s"]', 'chain = ["s"]'), "connection", "'s' (stage) receives from nothing"),
    ('chain = ["p", "q"]\n' + ONE, "chain[1]", "no component named 'q'"),
    (TWO.replace('chain = ["p", "s"]', 'chain = ["p", "s", "s"]'), "chain[1]", "to itself"),
    (TWO.replace('chain = ["p", "s"]', 'chain = ["s", "p"]'), "chain[1]", "no provides (input) port 'in'"),
    (
        TWO + '[[component]]\nname = "t"\nkind = "stage"\n[[connection]]\nfrom = "s.out"\nto = "t.in"\n'
        '[[connection]]\nfrom = "t.out"\nto = "s.in"\n',
        "connection[1]",
        "loop (s -> t -> s); refused: no policy says yet how packets go round a loop",
    ),
    (
        'chain = ["a", "b"]\n[[component]]\nname = "a"\nkind = "stage"\n[[component]]\nname = "b"\nkind = "stage"\n'
        '[[connection]]\nfrom = "b.out"\nto = "a.in"\n',
        "connection[0]",
        "loop (a -> b -> a)",
    ),
    (TWO + '[[component]]\nname = "x"\nkind = "producer"\n', "connection", "'x' is connected to nothing"),
    (TWO + '[[component]]\nname = "x"\nkind = "sink"\n', "connection", "'x' (sink) receives from nothing"),
    (TWO + '[[connection]]\nfrom = "p.out"\nto = "s.in"\n', "connection[0]", "connected twice (chain[0] too)"),
    (TWO + '[[connection]]\nfrom = "s.out"\n', "connection[0].to", "required"),
    (TWO + '[[connection]]\nfrom = 5\nto = "s.in"\n', "connection[0].from", "component.port"),
    (TWO + '[[connection]]\nfrom = "s.out.x"\nto = "p.in"\n', "connection[0].from", "component.port"),
    # policy, against the runtime's schema: its ranges hold before any process starts
    (TWO + "[policy]\nworker = 65537\n", "policy.worker", "at most 65536"),
    (TWO + '[policy]\ndispatch = "pool:1001"\n', "policy.dispatch", "from 1 to 1000"),
    (TWO + '[policy]\nflow = "credits(70000)"\n', "policy.flow", "from 1 to 65536"),
    (TWO + '[policy]\nflow = "watermarks(3, 3)"\n', "policy.flow", "lo < hi"),
    (TWO + "[policy]\nreorder_timeout_ms = inf\n", "policy.reorder_timeout_ms", "from 0 to 600000"),
    (TWO + "[policy]\nreorder_timeout_ms = nan\n", "policy.reorder_timeout_ms", "from 0 to 600000"),
    (TWO + "[policy]\nreorder_capacity = true\n", "policy.reorder_capacity", "whole number"),
    (TWO + '[policy]\ncall = ["oneway"]\n', "policy.call", "twoway, oneway"),
    (TWO + "[policy]\nflow = 3\n", "policy.flow", "credits(w)"),
    (TWO + "[policy]\nworker = 4\nworker_resume = -1\n", "policy.worker_resume", "r >= 0"),
    (TWO + '[[connection]]\nfrom = "s.out"\nto = "p.in"\n', "connection[0].to", "no provides (input) port"),
    # network
    (TWO + "[network]\ndelay_ms = 1.5\n", "network.delay_ms", "whole number"),
    (TWO + "[network]\ndelay_ms = nan\n", "network.delay_ms", "whole number"),
    (TWO + "[network]\ndelay_ms = 100000\n", "network.delay_ms", "0 to 10000"),
    (TWO + "[network]\ndelay_ms = 2\njitter_ms = 3\n", "network.jitter_ms", "delay_ms"),
    (TWO + "[network]\nloss = 1\n", "network.loss", "valid: delay_ms"),
    # top level
    ("[runs]\n" + TWO, "runs", "valid: experiment"),
    ("version = 2\n" + TWO, "version", "valid: experiment"),
]


@pytest.mark.parametrize("text, key, hint", SPECS)
def test_bad_spec_is_one_line_naming_key_and_what_is_valid(write_spec, text, key, hint):
    path = write_spec(text)
    with pytest.raises(SpecError) as err:
        load_spec(path)
    message = str(err.value)
    assert err.value.key == key, message
    assert message.startswith(str(path)) and hint in message and "\n" not in message


def test_not_utf8_names_the_file(write_spec, tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes('[experiment]\nname = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec(path)


def test_deep_nesting_is_refused(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 50000 + "]" * 50000 + "\n")
    with pytest.raises(SpecError, match=str(path)):
        load_spec(path)


def test_a_named_pipe_is_refused_without_reading(tmp_path):
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)
    with pytest.raises(SpecError, match="not a regular file"):
        load_spec(fifo)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(SpecError, match="is a directory"):
        load_spec(tmp_path)


def test_a_huge_file_is_refused(tmp_path):
    path = tmp_path / "big.toml"
    path.write_text("# " + "x" * (2 << 20) + "\n")
    with pytest.raises(SpecError, match="at most"):
        load_spec(path)


OVERRIDES = [
    (["stage1.work_us=²"], "--set", "integer"),
    (["stage1.work_us=1e999"], "--set", "integer"),
    (["stage1.work_us=-3"], "--set", "from 0 to"),
    (["stage1.work=nan"], "--set", "string"),
    (["stage1work_us=3"], "--set", "COMPONENT.KEY=VALUE"),
    (["stage1.=3"], "--set", "COMPONENT.KEY=VALUE"),
    (["ghost.work_us=3"], "--set", "no component named 'ghost'"),
    (["producer.samples=100000000"], "--set", "fit in an ORB message"),
    (["producer.packets=0"], "--set", "from 1 to"),
    (["stage1.work=gpu"], "--set", "use one of: none, cpu, sleep"),
]


@pytest.mark.parametrize("items, where, hint", OVERRIDES)
def test_bad_property_override(write_spec, items, where, hint):
    spec = load_spec(write_spec(pipeline_toml(stages=1)))
    with pytest.raises(SpecError) as err:
        for name, props in parse_property_overrides(items, "--set").items():
            spec = spec.with_properties(name, props, where="--set")
    assert hint in str(err.value) and where in str(err.value) and "\n" not in str(err.value)


def test_override_values_read_as_toml_would():
    assert parse_overrides(["a=1", "b=-2", "c=1.5", "d=true", "e=x", "f=²", "g=nan"], "--policy") == {
        "a": 1,
        "b": -2,
        "c": 1.5,
        "d": True,
        "e": "x",
        "f": "²",
        "g": pytest.approx(math.nan, nan_ok=True),
    }


def test_huge_packets_flag_is_refused(write_spec):
    spec = load_spec(write_spec(pipeline_toml(stages=1)))
    with pytest.raises(SpecError, match="1 to 4,294,967,295"):
        spec = spec.with_packets(10**30, where="--packets")


def test_a_property_in_its_declared_range_is_taken(write_spec):
    """What configure takes, validate takes: the producer's documented
    "none" for drop_packet, and as many float samples as fit in a message
    (more than doubles)."""
    spec = load_spec(write_spec(pipeline_toml(stages=1)))
    spec = spec.with_properties("producer", {"drop_packet": -1}, where="--set")
    float_spec = load_spec(write_spec(pipeline_toml(stages=1, run='sample_type = "float"')))
    float_spec = float_spec.with_properties("producer", {"samples": 16_000_000}, where="--set")
    with pytest.raises(SpecError, match="1 to 8,388,096 with double samples"):
        spec = spec.with_properties("producer", {"samples": 16_000_000}, where="--set")


def test_a_run_the_memory_cannot_hold_is_refused(write_spec):
    spec = load_spec(write_spec(pipeline_toml(stages=2, packets=100)))
    spec = spec.with_properties("producer", {"samples": 1_000_000}, where="--set")  # 8 MB packets
    need, largest = memory_needed(spec)
    # 2 connections, each holding up to 100 packets (the ORB's pool bounds it
    # first): 2 x (2 x 100 + 1) x 8 MB, with the records and 3 hosts besides.
    assert need == 2 * 201 * 8_000_000 + 3 * (100 + 16) * 32 + 3 * (32 << 20)
    assert largest.startswith("packets in flight")
    check_memory(spec, available=10 * need)
    with pytest.raises(SpecError, match="would need about 3.1 GiB of memory.*0.4 GiB available"):
        check_memory(spec, available=400 << 20)
    spec = spec.with_policy({"dispatch": "serial"}, where="--policy")  # one ORB thread per connection: far fewer held
    assert memory_needed(spec)[0] < need / 10


# The CLI: exit code 2, one line on stderr, no traceback, no process started.
CLI = [
    (["run", "{spec}", "--cores", ""], "--cores"),
    (["run", "{spec}", "--cores", "0,,x"], "--cores"),
    (["run", "{spec}", "--set", "stage1.work_us=²"], "--set"),
    (["run", "{spec}", "--policy", "worker=0"], "--policy"),
    (["run", "{spec}", "--policy", "nonsense"], "--policy"),
    (["run", "{fifo}"], "not a regular file"),
    (["run", "{dir}"], "is a directory"),
    (["run", "{missing}"], "no such file"),
    (["run", "{spec}", "--packets", "0"], "--packets"),
    (["run", "{spec}", "--link-delay", "-1"], "--link-delay"),
    (["run", "{spec}", "--scheduler", "fifo"], "--scheduler"),
    (["run", "{spec}", "--transport", "udp"], "--transport"),
    (["run", "{spec}", "--transport", "shm", "--link-delay", "1"], "shared memory joins processes of one machine"),
    (
        ["run", "{spec}", "--set", "producer.samples=8000000", "--packets", "5000", "--policy", "worker=4000"],
        "GiB of memory",
    ),
    (["run", "{spec}", "--json", "{file}/r.json"], "--json"),
    (["run", "{spec}", "--json", "{dir}"], "is a directory"),
    (["run", "{spec}", "--csv", "{file}/r.csv"], "--csv"),
    (["run", "{spec}", "--runs", "0"], "--runs"),
    (["run", "{spec}", "--runs", "2", "--hold"], "--hold"),
    (["run", "{spec}", "--warmup", "1"], "--warmup"),
    (["run", "{spec}", "--runs", "2", "--quiet-wait", "nan"], "--quiet-wait"),
    (["run", "no-spec-has-this-name"], "no spec of that name"),
    (["validate"], "Missing argument"),
    (["compare", "{garbage}"], "two result files"),
    (["compare", "{garbage}", "{other}"], "A: "),
    (["compare", "{other}", "{other}"], "no 'status'"),
    (["compare", "{hollow}", "{other}", "--csv", "{file}/c.csv"], "--csv"),
    (["components", "no-such-kind"], "not a component kind"),
    (["components", ""], "'' is not a component kind"),
    (["sweep", "{spec}", "--grid", "stage1.work=cpu,gpu", "--out", "{dir}/sw"], "use one of: none, cpu, sleep"),
    (["profile", "--csv", "{file}/p.csv", "--quick"], "--csv"),
    (["granularity", "--csv", "{file}/g.csv", "--plan", "tiny"], "--csv"),
    (["granularity", "--from-json", "{file}"], "--from-json"),
    (["granularity", "--from-json", "{garbage}"], "--from-json"),
    (["granularity", "--from-json", "{other}"], "no 'summary'"),
    (["granularity", "--from-json", "{hollow}", "--out", "{dir}/g"], "not a whole granularity result"),
    (["granularity", "--json", "{file}/g.json", "--plan", "tiny"], "--json"),
    (["granularity", "--cores", ""], "--cores"),
    (["profile", "--json", "{file}/p.json", "--quick"], "--json"),
    (["datarate", "--cycles", "nan", "--clock-mhz", "1", "--elements", "1"], "--cycles"),
    (["paper", "--only", "nothing-like-this", "--out", "{dir}/p"], "--only"),
    (["paper", "--campaign", "{garbage}", "--out", "{dir}/p"], "not valid TOML"),
    # Every output is made before anything runs: a folder that refuses files
    # (/proc) passes a look at its permissions, so it must be tried.
    (["run", "{spec}", "--json", "{unmakeable}/r.json"], "--json: {unmakeable}/r.json cannot be created"),
    (["run", "{spec}", "--csv", "{unmakeable}/r.csv"], "--csv: {unmakeable}/r.csv cannot be created"),
    (["run", "{spec}", "--runs", "2", "--json", "{unmakeable}/r.json"], "cannot be created"),
    # A named pipe stands for any output that is not a regular file (a device): the result is renamed
    # over the path, which would replace it.
    (["run", "{spec}", "--json", "{fifo}"], "--json: {fifo} is not a regular file"),
    (["run", "{spec}", "--trace", "{unmakeable}/t.json"], "--trace: {unmakeable}/t.json cannot be created"),
    (["run", "{spec}", "--trace", "{dir}"], "is a directory"),
    (["run", "{spec}", "--trace", "{fifo}"], "--trace: {fifo} is not a regular file"),
    (["run", "{spec}", "--trace-packets", "5"], "--trace-packets: says how many packets a trace holds"),
    (["run", "{spec}", "--trace-packets", "0", "--trace", "{dir}/t.json"], "'--trace-packets'"),
    # With --runs, --trace is a folder (a file per run): a file there is refused.
    (["run", "{spec}", "--runs", "2", "--trace", "{file}"], "--trace: {file} is a file; give a folder"),
    (["run", "{spec}", "--timeline"], "--timeline: draws the timeline in the run's report"),
    (["run", "{spec}", "--report", "{unmakeable}"], "--report: {unmakeable} cannot be created"),
    (
        ["sweep", "{spec}", "--grid", "policy.call=oneway", "--out", "{unmakeable}"],
        "--out: {unmakeable} cannot be created",
    ),
    (["sweep", "{spec}", "--grid", "policy.call=oneway", "--out", "{dir}/s", "--csv", "{unmakeable}/s.csv"], "--csv"),
    (["compare", "{run}", "{run}", "--json", "{unmakeable}/c.json"], "cannot be created"),
    (["paper", "--out", "{unmakeable}"], "--out: {unmakeable} cannot be created"),
    (["peers", "--out", "{unmakeable}"], "--out: {unmakeable} cannot be created"),
    (["link-delay", "--out", "{unmakeable}"], "--out: {unmakeable} cannot be created"),
    (["granularity", "--plan", "tiny", "--out", "{unmakeable}"], "--out: {unmakeable} cannot be created"),
    (["granularity", "--from-json", "{other}", "--out", "{unmakeable}"], "--out: {unmakeable} cannot be created"),
    (["profile", "--quick", "--out", "{unmakeable}"], "--out: {unmakeable} cannot be created"),
    (["export-sad", "{spec}", "--out", "{unmakeable}"], "--out: {unmakeable} cannot be created"),
    # Every result file is read only if it is a regular file of a bounded
    # size: a named pipe would block the read for ever, /dev/zero never ends.
    (["compare", "{fifo}", "{run}"], "A: {fifo}: is not a regular file (a FIFO)"),
    (["compare", "/dev/zero", "{run}"], "A: /dev/zero: is not a regular file (a device)"),
    (["sweep", "{spec}", "--grid", "policy.call=oneway", "--out", "{piped}"], "results.json is not a regular file"),
    (["paper", "--from-results", "--out", "{piped}"], "results.json: is not a regular file"),
    (["peers", "--from-results", "--out", "{piped}"], "results.json: is not a regular file"),
    (["link-delay", "--from-results", "--out", "{piped}"], "results.json: is not a regular file"),
    (["granularity", "--from-json", "{fifo}"], "not a regular file"),
    # Counts of runs beyond any plan (10^20 runs showed 3.4e15 hours left).
    (
        ["run", "{spec}", "--runs", "100000000000000000000"],
        "'--runs': 100000000000000000000 is not in the range 1<=x<=10000",
    ),
    (["run", "{spec}", "--runs", "2", "--warmup", "10001"], "'--warmup'"),
    (["sweep", "{spec}", "--grid", "policy.call=oneway", "--runs", "10001"], "'--runs'"),
    (["paper", "--runs", "10001"], "'--runs'"),
    # A campaign file is not a spec: the command that runs it is named.
    (
        ["run", "experiments/paper/campaign.toml"],
        "this is a campaign (its [measure] and [[config]] tables), not a spec; "
        "run it with `scabench paper --campaign experiments/paper/campaign.toml`",
    ),
    (["run", "campaign"], "run it with `scabench paper --campaign"),
    (["run", "experiments/ordering/link-delay.toml"], "run it with `scabench link-delay --campaign"),
]


# A command line per case (about half a second each, half a minute in all): with the
# system tests, out of the unit run (`pytest -m "not system"`, `make test-unit`).
@pytest.mark.system
@pytest.mark.parametrize("args, hint", CLI)
def test_bad_cli_call_exits_2_with_one_line(write_spec, tmp_path, args, hint):
    spec = write_spec(pipeline_toml(stages=1))
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    regular = tmp_path / "plain"
    regular.write_text("")
    garbage, other, hollow = tmp_path / "garbage.json", tmp_path / "other.json", tmp_path / "hollow.json"
    garbage.write_text("{not json")
    other.write_text('{"a": 1}')
    hollow.write_text('{"summary": {}}')
    run = tmp_path / "run.json"  # a whole result of scabench run (a failed one is enough to be read)
    run.write_text('{"status": "failed", "spec": {}, "environment": {}, "floor_ms": 0, "started_at": 0}')
    piped = tmp_path / "piped"  # an --out whose results.json is a named pipe
    piped.mkdir()
    os.mkfifo(piped / "results.json")
    names = {
        "spec": spec,
        "fifo": fifo,
        "dir": tmp_path,
        "missing": tmp_path / "none.toml",
        "file": regular,
        "garbage": garbage,
        "other": other,
        "hollow": hollow,
        "run": run,
        "piped": piped,
        "unmakeable": "/proc/scabench-no-such-process",
    }
    proc = scabench(*[a.format(**names) for a in args], timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and hint.format(**names) in proc.stderr
    # One line, a bad flag's included (click's own handling adds the usage and a hint around it).
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("error: ")


TOML_VALUES = st.recursive(
    st.just(0)
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
KEYS = st.sampled_from(
    ["experiment", "run", "component", "policy", "chain", "connection", "placement", "network", "other"]
)
SUBKEYS = st.sampled_from(
    [
        "name",
        "kind",
        "packets",
        "samples",
        "work_us",
        "work",
        "cores",
        "timeout_s",
        "hosts",
        "from",
        "to",
        "call",
        "worker",
        "flow",
        "delay_ms",
        "transport",
        "sample_type",
    ]
)
DOCS = st.dictionaries(
    KEYS,
    TOML_VALUES
    | st.dictionaries(SUBKEYS, TOML_VALUES, max_size=5)
    | st.lists(st.dictionaries(SUBKEYS, TOML_VALUES, max_size=5), max_size=3),
    max_size=6,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCS)
def test_fuzzed_specs_give_a_spec_or_a_spec_error(doc):
    try:
        parse_spec(doc, "fuzz.toml")
    except SpecError as exc:
        assert "\n" not in str(exc)


def test_the_names_of_campaign_files_are_not_offered_as_specs():
    proc = scabench("run", "no-spec-has-this-name")
    names = proc.stderr.split("(names: ")[1]
    assert "exp6" in names and "campaign" not in names and "link-delay" not in names, proc.stderr


def test_network_hosts_without_cap_sys_admin_name_the_spec_and_what_they_need(write_spec):
    """Root in a container often lacks CAP_SYS_ADMIN: `ip netns add` then
    fails on its mount of /run/netns. Said before any process starts."""
    spec = write_spec(pipeline_toml(stages=1, packets=5))
    proc = subprocess.run(
        [
            "setpriv",
            "--bounding-set=-sys_admin",
            sys.executable,
            "-m",
            "scabench.cli",
            "run",
            str(spec),
            "--link-delay",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"error: {spec}: network: network hosts ([network], --link-delay) cannot be made "
        "here: network hosts need root with CAP_SYS_ADMIN and CAP_NET_ADMIN (network "
        "namespaces are mounted under /run/netns and given veth links); this process "
        "lacks CAP_SYS_ADMIN"
    )


def test_a_program_that_is_not_executable_is_named_in_one_line_before_any_process_starts(tmp_path):
    """scabench's own programs are checked where they are looked up
    (paths.program): a bin folder whose programs lost their x bit is bad
    input, said in one line with exit 2, not an OSError's traceback."""
    for name in ("scabench-host", "scabench-launch"):
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o644)
    proc = subprocess.run(
        [sys.executable, "-m", "scabench.cli", "run", "exp6", "--set", "producer.packets=3"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "SCABENCH_BIN_DIR": str(tmp_path)},
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "is not an executable program" in lines[0] and str(tmp_path) in lines[0], lines[0]


def test_a_program_that_cannot_be_started_is_a_run_error_naming_it(tmp_path):
    """Any other program a run starts (omniNames, a link emulator, a peer)
    goes through processes.spawn: an exec that fails is a RunError of one
    line naming the program and the system's reason."""
    from scabench.errors import RunError
    from scabench.run.processes import ProgramNotStarted, spawn

    not_executable = tmp_path / "prog"
    not_executable.write_text("#!/bin/sh\n")
    with pytest.raises(ProgramNotStarted) as caught:
        spawn([str(not_executable)])
    assert isinstance(caught.value, RunError) and isinstance(caught.value.cause, PermissionError)
    assert str(caught.value) == f"cannot start {not_executable}: Permission denied (is it executable?)"
    assert caught.value.component == "prog"
    with pytest.raises(ProgramNotStarted, match=r"cannot start .*/absent: No such file or directory$"):
        spawn([str(tmp_path / "absent")])


def test_a_child_whose_set_up_fails_is_a_run_error_too(tmp_path):
    """A preexec that fails in the child makes Popen raise SubprocessError,
    not OSError: still one line naming the program."""
    from scabench.run.processes import ProgramNotStarted, spawn

    def failing_set_up() -> None:
        raise ValueError("no such CPU")

    with pytest.raises(ProgramNotStarted, match=r"^cannot start /bin/true: "):
        spawn(["/bin/true"], preexec=failing_set_up)

"""C++ components as plugins: the build installed into a temporary prefix,
examples/cpp-component built out of tree against it (find_package), and its
library loaded by scabench-host beside built-in components over real
processes; and what a spec or the host says of a library it cannot use."""

import json
import math
import os
import shutil
import subprocess

import pytest
from conftest import CPP_COMPONENT_EXAMPLE as EXAMPLE
from conftest import REPO, check_command, scabench

from scabench.errors import SpecError
from scabench.model.load import load_spec
from scabench.paths import bin_dir

PACKETS, SAMPLES = 20, 64


def host(*args, program=None):
    return subprocess.run(
        [str(program or bin_dir() / "scabench-host"), *map(str, args)], capture_output=True, text=True, timeout=60
    )


def gain_spec(library, gain="2.0", placement='hosts = [["producer", "gain"], ["sink"]]'):
    return f"""
chain = ["producer", "gain", "sink"]
[[component]]
name = "producer"
kind = "producer"
packets = {PACKETS}
samples = {SAMPLES}
[[component]]
name = "gain"
kind = "gain"
library = "{library}"
gain = {gain}
[[component]]
name = "sink"
kind = "sink"
checksum = true
[placement]
{placement}
"""


def expected_checksum(gain, packets=PACKETS, samples=SAMPLES):
    """What the checksum sink sums after the gain: the producer's sinusoid
    (producer.cpp), every packet, in order, in double."""
    samples = [100.0 * math.sin(0.01 * i) for i in range(samples)]
    total = 0.0
    for _ in range(packets):
        for x in samples:
            total += gain * x
    return total


def test_the_install_is_a_cmake_package(installed):
    libs = installed / "lib"
    assert (libs / "cmake" / "scabench" / "scabenchConfig.cmake").is_file()
    assert (libs / "cmake" / "scabench" / "scabenchConfigVersion.cmake").is_file()
    assert (libs / "cmake" / "scabench" / "scabenchTargets.cmake").is_file()
    assert list(libs.glob("libscabench_runtime.so.*"))
    for header in (
        "scabench/runtime/component.hpp",
        "scabench/runtime/registry.hpp",
        "scabench/core/clock.hpp",
        "scabench/idl/cf.hh",
        "scabench/idl/scabench.hh",
    ):
        assert (installed / "include" / header).is_file(), header
    for idl in ("cf.idl", "scabench.idl"):
        assert (installed / "share" / "scabench" / "idl" / idl).read_text() == (REPO / "idl" / idl).read_text()
    # The installed host finds the installed runtime (its rpath), and its
    # catalogue is the build's.
    described = json.loads(check_command([installed / "bin" / "scabench-host", "--describe"]).stdout)
    assert json.loads(host("--describe").stdout) == described


def test_the_catalogue_has_a_librarys_kinds_only_when_given_it(gain_library, installed):
    for program in (bin_dir() / "scabench-host", installed / "bin" / "scabench-host"):
        proc = host("--library", gain_library, "--describe", program=program)
        assert proc.returncode == 0, proc.stderr
        kinds = json.loads(proc.stdout)["kinds"]
        gain = kinds["gain"]
        assert gain["library"] == str(gain_library)
        assert gain["sample_types"] == ["double", "float", "octet", "short"]
        assert (gain["provides"], gain["uses"]) == (["in"], ["out"])
        assert gain["properties"]["gain"]["type"] == "real" and gain["properties"]["gain"]["default"] == 1.0
        # Every policy key of its ports, from the runtime's one table.
        assert "in.worker" in gain["properties"] and "out.call" in gain["properties"]
        assert "library" not in kinds["stage"] and "stage" in kinds
    assert "gain" not in json.loads(host("--describe").stdout)["kinds"]


def test_a_plugin_collocated_with_built_in_components_scales_every_packet(gain_library, write_spec, tmp_path):
    # The library named relative to the spec's folder.
    spec = write_spec(gain_spec(os.path.relpath(gain_library, tmp_path)))
    out = tmp_path / "result.json"
    proc = scabench("run", spec, "--json", out)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "ok" and result["clean"]
    assert {s["name"]: s["received"] for s in result["stages"]} == {"gain": PACKETS, "sink": PACKETS}
    assert all(s["reordered_from_previous"] == 0 for s in result["stages"])
    assert float(result["stats"]["sink"]["checksum"]) == expected_checksum(2.0)
    assert result["spec"]["components"][1]["library"] == str(gain_library)
    # The producer and the gain shared a process; the sink had its own.
    assert [h["components"] for h in result["hosts"]] == [["producer", "gain"], ["sink"]]


def test_a_plugins_property_set_from_the_command_line_all_in_one_process(gain_library, write_spec, tmp_path):
    spec = write_spec(gain_spec(gain_library))
    out = tmp_path / "result.json"
    proc = scabench("run", spec, "--collocated", "--set", "gain.gain=0.5", "--json", out)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert [h["components"] for h in result["hosts"]] == [["producer", "gain", "sink"]]
    assert float(result["stats"]["sink"]["checksum"]) == expected_checksum(0.5)


def test_the_examples_spec_runs_as_shipped(gain_library, tmp_path):
    # Where its README builds the library: build/ beside the spec.
    shutil.copy(EXAMPLE / "gain.toml", tmp_path / "gain.toml")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "libgain.so").symlink_to(gain_library)
    out = tmp_path / "result.json"
    proc = scabench("run", tmp_path / "gain.toml", "--packets", 10, "--json", out)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert float(result["stats"]["sink"]["checksum"]) == expected_checksum(2.0, packets=10, samples=1024)


def bad(write_spec, text):
    """The one line `scabench run` prints for a bad spec, and that it exits 2."""
    path = write_spec(text)
    proc = scabench("run", path)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0].startswith(f"error: {path}: ")
    return lines[0]


def test_a_library_that_is_not_there(write_spec, tmp_path):
    line = bad(write_spec, gain_spec("plugins/libgain.so"))
    assert f"component[1].library: {tmp_path}/plugins/libgain.so: no such file" in line
    assert "relative to the spec's folder" in line


def test_a_library_that_does_not_load_gets_the_loaders_words(write_spec, tmp_path):
    (tmp_path / "libfake.so").write_text("not a shared object\n" * 10)
    line = bad(write_spec, gain_spec("libfake.so"))
    assert line.endswith(f"component[1].library: cannot load {tmp_path}/libfake.so: invalid ELF header")


@pytest.fixture(scope="session")
def library_without_kinds(tmp_path_factory):
    """A shared library that loads and registers no component kind."""
    where = tmp_path_factory.mktemp("nothing")
    (where / "nothing.cpp").write_text("int nothing() { return 0; }\n")
    check_command(["c++", "-shared", "-fPIC", "-o", where / "libnothing.so", where / "nothing.cpp"])
    return where / "libnothing.so"


def test_a_library_that_crashes_while_loading(write_spec, tmp_path):
    (tmp_path / "crash.cpp").write_text("static const int crash = (__builtin_trap(), 0);\n")
    check_command(["c++", "-shared", "-fPIC", "-o", tmp_path / "libcrash.so", tmp_path / "crash.cpp"])
    line = bad(write_spec, gain_spec("libcrash.so"))
    assert line.endswith(
        f"component[1].library: scabench-host failed while loading {tmp_path}/libcrash.so (killed by SIGILL)"
    )


def test_a_library_that_registers_no_kind(write_spec, library_without_kinds):
    line = bad(write_spec, gain_spec(library_without_kinds))
    assert f"component[1].library: {library_without_kinds} registers no component kind" in line
    assert "SCABENCH_REGISTER_TYPED_COMPONENT" in line


def test_a_kind_the_library_does_not_have(write_spec, gain_library):
    line = bad(write_spec, gain_spec(gain_library).replace('kind = "gain"', 'kind = "gian"'))
    assert f"component[1].kind: 'gian' is not a kind of {gain_library}; it registers: gain" in line


def test_a_kind_that_is_not_text_beside_a_library(write_spec):
    """A TOML array as the kind of a library's component: one line naming
    the key, not a TypeError from looking an unhashable value up."""
    library = bin_dir().parent / "lib" / "libscabench-test-plugin-echo.so"
    line = bad(write_spec, f'[[component]]\nname = "echo"\nkind = ["test-echo"]\nlibrary = "{library}"\n')
    assert line.endswith(f"component[0].kind: ['test-echo'] is not a kind of {library}; it registers: test-echo")


def test_a_plugins_kind_without_its_library(write_spec, gain_library):
    text = gain_spec(gain_library).replace(f'library = "{gain_library}"\n', "")
    line = bad(write_spec, text)
    assert "component[1].kind: 'gain' is not a component kind" in line and "needs its library" in line


def test_a_plugins_properties_are_checked_like_built_in_ones(write_spec, gain_library):
    line = bad(write_spec, gain_spec(gain_library, gain='"loud"'))
    assert "component[1].gain: must be real (multiplies every sample)" in line
    text = gain_spec(gain_library).replace("gain = 2.0", "gain = 2.0\ngian = 3")
    line = bad(write_spec, text)
    assert "component[1].gian: gain has no property 'gian'; valid: bypass_first, gain, rounding, saturate" in line
    # An enumerated string of the plugin's (oneOf), from its catalogue, before any process starts.
    line = bad(write_spec, gain_spec(gain_library).replace("gain = 2.0", 'gain = 2.0\nrounding = "up"'))
    assert "component[1].rounding: 'up' is not valid; use one of: nearest, zero" in line
    with pytest.raises(SpecError, match=r"--set\.gain\.gain: must be real"):
        load_spec(write_spec(gain_spec(gain_library))).with_properties("gain", {"gain": "loud"}, where="--set")


def test_two_libraries_with_one_kind(write_spec, gain_library, tmp_path):
    twin = tmp_path / "libtwin.so"
    shutil.copy(gain_library, twin)
    text = gain_spec(gain_library).replace(
        'chain = ["producer", "gain", "sink"]', 'chain = ["producer", "gain", "gain2", "sink"]'
    )
    text = text.replace('[placement]\nhosts = [["producer", "gain"], ["sink"]]', "")
    text += f'[[component]]\nname = "gain2"\nkind = "gain"\nlibrary = "{twin}"\n'
    line = bad(write_spec, text)
    assert f"component[3].library: {twin} registers kind 'gain', which {gain_library} registers too" in line
    # The same file under two names is one library.
    (tmp_path / "liblink.so").symlink_to(gain_library)
    load_spec(write_spec(text.replace(str(twin), str(tmp_path / "liblink.so"))))
    # A host given both refuses the second.
    proc = host("--library", gain_library, "--library", twin, "--describe")
    assert proc.returncode == 2
    assert proc.stderr.splitlines()[0] == (
        f"scabench-host: --library: {twin} registers component kind 'gain', "
        f"which {gain_library} already registers; give it another name"
    )


def test_a_library_key_that_is_not_a_path(write_spec):
    line = bad(write_spec, gain_spec("x").replace('library = "x"', "library = 3"))
    assert "component[1].library: must be the path of a component library" in line


def test_the_host_says_which_library_it_cannot_use(tmp_path, library_without_kinds, gain_library):
    (tmp_path / "libfake.so").write_text("not a shared object\n" * 10)
    for library, why in (
        (tmp_path / "libfake.so", "invalid ELF header"),
        (library_without_kinds, "registers no component kind"),
        (tmp_path / "libmissing.so", "No such file"),
    ):
        proc = host("--library", library, "--describe")
        assert proc.returncode == 2 and proc.stdout == ""
        first = proc.stderr.splitlines()[0]
        assert first.startswith("scabench-host: --library: ") and str(library) in first and why in first, first
    proc = host("--describe", "--library")
    assert proc.returncode == 2 and "--library needs the path" in proc.stderr
    # The SCA execute form loads its libraries before anything else too.
    proc = host("--library", library_without_kinds, "NAMING_CONTEXT_IOR", "IOR:00", "NAME_BINDING", "g", "KIND", "gain")
    assert proc.returncode == 2 and "registers no component kind" in proc.stderr.splitlines()[0]
    # The launcher's form: the error goes to the status pipe too, naming the
    # host's first component, before any component is created.
    read, write = os.pipe()
    try:
        proc = subprocess.run(
            [
                str(bin_dir() / "scabench-host"),
                "--library",
                gain_library,
                "--library",
                library_without_kinds,
                "--host",
                "h",
                "--status-fd",
                str(write),
                "--record-dir",
                tmp_path,
                "--component",
                "g:gain:double",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            pass_fds=(write,),
        )
        os.close(write)
        write = None
        status = os.read(read, 4096).decode()
    finally:
        os.close(read)
        if write is not None:
            os.close(write)
    assert proc.returncode == 2
    assert status.startswith(f"error g --library: {library_without_kinds} registers no component kind"), status
    assert "ready" not in status

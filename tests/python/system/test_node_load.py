"""A node deploying a component a domain sends it, as a REDHAWK
ApplicationFactory does: the test serves a CF::FileSystem (the project's
own read-only servant, node/filesystem.py) over the SDR root's dom folder,
as a domain's FileManager; `scabench node --accept-loaded` loads RhGain's
implementation folder from it through its device, executes the entrypoint
with the SCA exec parameters, and RhGain binds its name, takes BulkIO
packets and ends; terminate and unload leave the node's cache empty. Loads
that cannot be made are refused with their CF error numbers and leave
nothing behind; a node without the option refuses, naming it. Every process
started here is ended by its PID."""

import os
import stat
from pathlib import Path

import pytest
from omniORB import CORBA
from py_components_world import WAIT_S, S, alive, bound, context, naming, orb  # noqa: F401 (fixtures)
from test_node import exec_params, resolve_resource, start_node, wait_until  # noqa: F401 (fixture: start_node)
from test_redhawk_component import RHGAIN, SDRROOT, SPD, bulkio_sink, double, program_env, sri, utc  # noqa: F401

from scabench.model import gpp
from scabench.node.filesystem import ProfileFile, ProfileFileSystem
from scabench.node.loaded import READ_CHUNK

CF, BULKIO = S.CF, S.BULKIO
EXECUTABLE = CF.LoadableDevice.EXECUTABLE
IMPLEMENTATION = "/components/RhGain/python"  # the SPD's code localfile, as the domain names it
ENTRYPOINT = IMPLEMENTATION + "/RhGain.py"


@pytest.fixture
def serve_fs(orb):
    """serve(servant) -> its reference; each one deactivated at the end."""
    poa = orb.resolve_initial_references("RootPOA")
    served = []

    def serve(servant):
        poa.activate_object(servant)
        served.append(servant)
        return poa.servant_to_reference(servant)

    yield serve
    for servant in served:
        poa.deactivate_object(poa.servant_to_id(servant))


def cache_of(device):
    [p] = device.query([CF.DataType(gpp.CACHE_DIRECTORY, CORBA.Any(CORBA.TC_null, None))])
    return Path(p.value.value())


def left_in(cache):
    """Every path under the cache, and under the staging folder beside it."""
    return sorted(str(p) for folder in (cache, cache.parent / "loading") for p in folder.rglob("*"))


# --- a domain deploys RhGain ---------------------------------------------------------------


def test_a_domain_loads_rhgain_from_its_file_system_runs_it_and_unloads_it(
    start_node, serve_fs, context, bulkio_sink, monkeypatch
):
    ctx, ior = context
    sink, sink_ref = bulkio_sink
    for key, value in program_env().items():  # what the node's processes inherit: python3 with omniORBpy
        monkeypatch.setenv(key, value)
    fs = serve_fs(ProfileFileSystem(SDRROOT / "dom", "domain"))
    n = start_node("--accept-loaded")
    device = n.wait_registered().device
    cache = cache_of(device)
    assert cache.is_dir() and left_in(cache) == []
    # Two components of one type: two loads of one implementation, one copy.
    device.load(fs, IMPLEMENTATION, EXECUTABLE)
    device.load(fs, IMPLEMENTATION, EXECUTABLE)
    copy = cache / ENTRYPOINT[1:]
    assert copy.read_bytes() == RHGAIN.read_bytes()
    assert os.stat(copy).st_mode & stat.S_IXUSR  # the file system listed it EXECUTABLE
    assert "loaded /components/RhGain/python" in n.stdout()
    # As REDHAWK 2.2's ApplicationFactory: executeLinked of the entrypoint, the SCA exec parameters.
    pid = device.executeLinked(ENTRYPOINT, [], exec_params(ior, "RhGain_1", PROFILE_NAME=SPD), [IMPLEMENTATION])
    res = resolve_resource(ctx, "RhGain_1", pid)
    assert res._get_identifier() == "RhGain_1:waveform_1" and res._get_softwareProfile() == SPD
    [record] = [r for r in device.processes() if r.pid == pid]
    assert record.program == "RhGain.py" and record.running
    # Driven as a domain drives it, packets through it.
    res.initializeProperties([CF.DataType("gain", double(2.0))])
    res.initialize()
    res.getPort("dataDouble_out").connectPort(sink_ref, "out_1")
    res.start()
    port = res.getPort("dataDouble_in")._narrow(BULKIO.dataDouble)
    port.pushSRI(sri("s1"))
    sent = [[1.0, -2.0], [0.5], [3.0, 4.0, 5.0]]
    for i, data in enumerate(sent):
        port.pushPacket(data, utc(1_700_000_000 + i, 0.0), i == len(sent) - 1, "s1")
    calls = sink.wait_for(lambda calls: sum(c[0] == "packet" for c in calls) == len(sent))
    assert [c[1] for c in calls if c[0] == "packet"] == [[2.0 * x for x in d] for d in sent]
    res.stop()
    device.terminate(pid)
    assert not alive(pid) and not bound(ctx, "RhGain_1")  # it unbound its name on SIGTERM
    # Unloaded as often as loaded: the copy goes with the last.
    device.unload(IMPLEMENTATION)
    assert copy.exists()
    device.unload(IMPLEMENTATION)
    assert left_in(cache) == []
    for call in (lambda: device.unload(IMPLEMENTATION), lambda: device.execute(ENTRYPOINT, [], [])):
        with pytest.raises(CF.InvalidFileName) as gone:
            call()
        assert gone.value.errorNumber == CF.CF_ENOENT


# --- loads that cannot be made ---------------------------------------------------------------


class HalfFile(ProfileFile):
    """A file whose read fails once its first chunk is read: a file system that fails mid-copy."""

    def read(self, length):
        if self.pointer:
            raise CF.File.IOException(CF.CF_EIO, "the disk went away")
        return super().read(length)


class ShortFile(ProfileFile):
    """A file that says it is longer than what it reads: it ends before its size."""

    def sizeOf(self):
        return len(self.data) + 10


class FailingFileSystem(ProfileFileSystem):
    """Serves its root, but the file named `fails` fails mid-read (as `file`: HalfFile or ShortFile)."""

    def __init__(self, root, fails, file=None):
        super().__init__(root, "failing")
        self.fails, self.file = fails, file or HalfFile

    def open(self, fileName, read_Only):
        if fileName != self.fails:
            return super().open(fileName, read_Only)
        data = (self.root / fileName[1:]).read_bytes()
        opened = self.file(self, fileName, data)
        return opened._this()


class LyingFileSystem(ProfileFileSystem):
    """Lists a folder's entries under a name that reaches outside it."""

    def list(self, pattern):
        found = super().list(pattern)
        if pattern.endswith("/"):
            for entry in found:
                entry.name = "../../escaped"
        return found


def a_tree(root):
    """/comp: run (a program, executable), data (not), and sub/big (more than one read's worth)."""
    (root / "comp" / "sub").mkdir(parents=True)
    (root / "comp" / "run").write_text("#!/bin/sh\nexec sleep 60\n")
    (root / "comp" / "run").chmod(0o755)
    (root / "comp" / "data").write_text("#!/bin/sh\nnot listed as executable\n")
    (root / "comp" / "sub" / "big").write_bytes(bytes(range(256)) * (READ_CHUNK // 128))
    return root


def test_loads_that_cannot_be_made_are_refused_with_their_cf_errors_and_leave_nothing(start_node, serve_fs, tmp_path):
    tree = a_tree(tmp_path / "domain")
    fs = serve_fs(ProfileFileSystem(tree, "domain"))
    device = start_node("--accept-loaded").wait_registered().device
    cache = cache_of(device)
    for bad in ("comp", "/comp/../etc/passwd", "/", "/comp/", "/comp/*", "/comp//run", "/./comp"):
        with pytest.raises(CF.InvalidFileName) as invalid:
            device.load(fs, bad, EXECUTABLE)
        assert invalid.value.errorNumber == CF.CF_EINVAL, bad
    for missing in ("/nothing", "/nowhere/run", "/comp/run/x"):
        with pytest.raises(CF.InvalidFileName) as absent:
            device.load(fs, missing, EXECUTABLE)
        assert absent.value.errorNumber == CF.CF_ENOENT, missing
    with pytest.raises(CF.LoadableDevice.InvalidLoadKind):
        device.load(fs, "/comp/run", CF.LoadableDevice.DRIVER)
    # Fails mid-copy: a folder's other files copied, a file half read; nothing is left of it.
    failing = serve_fs(FailingFileSystem(tree, "/comp/sub/big"))
    with pytest.raises(CF.LoadableDevice.LoadFail) as failed:
        device.load(failing, "/comp", EXECUTABLE)
    assert failed.value.errorNumber == CF.CF_EIO and "the disk went away" in failed.value.msg
    assert left_in(cache) == []
    short = serve_fs(FailingFileSystem(tree, "/comp/run", ShortFile))
    with pytest.raises(CF.LoadableDevice.LoadFail) as ended:
        device.load(short, "/comp/run", EXECUTABLE)
    assert ended.value.errorNumber == CF.CF_EIO and "read answered 0 bytes" in ended.value.msg
    assert left_in(cache) == []
    lying = serve_fs(LyingFileSystem(tree, "lying"))
    with pytest.raises(CF.LoadableDevice.LoadFail) as escaped:
        device.load(lying, "/comp", EXECUTABLE)
    assert escaped.value.errorNumber == CF.CF_EINVAL and "../../escaped" in escaped.value.msg
    assert left_in(cache) == [] and not list(cache.parent.rglob("escaped"))  # nor beside the cache
    with pytest.raises(CF.InvalidFileName):
        device.unload("/comp")  # never loaded
    # The file system's EXECUTABLE property decides; a folder and what it holds are copied whole.
    device.load(fs, "/comp", CF.LoadableDevice.SHARED_LIBRARY)
    assert (cache / "comp" / "sub" / "big").read_bytes() == (tree / "comp" / "sub" / "big").read_bytes()
    assert os.stat(cache / "comp" / "run").st_mode & stat.S_IXUSR
    assert not os.stat(cache / "comp" / "data").st_mode & stat.S_IXUSR
    with pytest.raises(CF.ExecutableDevice.ExecuteFail) as not_a_program:
        device.execute("/comp/data", [], [])
    assert not_a_program.value.errorNumber == CF.CF_EACCES
    pid = device.execute("/comp/run", [], [])
    assert alive(pid)
    device.terminate(pid)
    # Within, or above, a loaded folder: the counts could not say when its files may go.
    for overlapping in ("/comp/run", "/comp/sub"):
        with pytest.raises(CF.LoadableDevice.LoadFail) as overlap:
            device.load(fs, overlapping, EXECUTABLE)
        assert overlap.value.errorNumber == CF.CF_EEXIST
    device.unload("/comp")
    assert left_in(cache) == []
    # Above a loaded file, likewise; the file alone, loaded EXECUTABLE, keeps the file system's word.
    device.load(fs, "/comp/data", EXECUTABLE)
    assert not os.stat(cache / "comp" / "data").st_mode & stat.S_IXUSR
    with pytest.raises(CF.LoadableDevice.LoadFail):
        device.load(fs, "/comp", EXECUTABLE)
    device.unload("/comp/data")
    assert left_in(cache) == []


def test_a_node_without_accept_loaded_refuses_a_load_from_a_file_system_naming_the_option(start_node, serve_fs):
    fs = serve_fs(ProfileFileSystem(SDRROOT / "dom", "domain"))
    device = start_node().wait_registered().device
    for call in (
        lambda: device.load(fs, IMPLEMENTATION, EXECUTABLE),
        lambda: device.execute(ENTRYPOINT, [], []),
        lambda: device.executeLinked("scabench-host", [], [], [IMPLEMENTATION]),
    ):
        with pytest.raises(CF.InvalidFileName) as refused:
            call()
        assert "--accept-loaded" in refused.value.msg
    assert refused.value.errorNumber == CF.CF_ENOENT  # a dependency never loaded
    for kind in (EXECUTABLE, CF.LoadableDevice.SHARED_LIBRARY):
        with pytest.raises(CF.InvalidFileName) as refused:
            device.load(fs, IMPLEMENTATION, kind)
        assert refused.value.errorNumber == CF.CF_EACCES and "--accept-loaded" in refused.value.msg

"""A node deploying a component a domain sends it, as a REDHAWK
ApplicationFactory does: the test serves a CF::FileSystem (the project's
own read-only servant, node/filesystem.py) over the SDR root's dom folder,
as a domain's FileManager; `scabench node --accept-loaded` loads RhGain's
implementation folder from it through its device, executes the entrypoint
with the SCA exec parameters, and RhGain binds its name, takes BulkIO
packets and ends; terminate and unload leave the node's cache empty. Loads
that cannot be made are refused with their CF error numbers and leave
nothing behind; a node without the option refuses, naming it. A slow file
system holds up only its own load, and a load is bounded in bytes, time and
the node's free disk. Every process started here is ended by its PID."""

import os
import stat
import threading
import time
from pathlib import Path

import pytest
from omniORB import CORBA
from py_components_world import WAIT_S, S, alive, bound, context, naming, orb  # noqa: F401 (fixtures)
from test_node import exec_params, resolve_resource, start_node, wait_until  # noqa: F401 (fixture: start_node)
from test_redhawk_component import RHGAIN, SDRROOT, SPD, bulkio_sink, double, program_env, sri, utc  # noqa: F401

from scabench.model import gpp
from scabench.node.filesystem import ProfileFile, ProfileFileSystem
from scabench.node.loaded import READ_CHUNK, LoadedFiles

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
    """A file that reads less than its size (as listed, and as sizeOf says): it ends before its size."""

    def read(self, length):
        data = self.data[self.pointer : min(self.pointer + length, len(self.data) - 10)]
        self.pointer += len(data)
        return data


class SwollenFile(ProfileFile):
    """A file whose sizeOf is more than the size it was listed with."""

    def sizeOf(self):
        return len(self.data) + 1


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
    swollen = serve_fs(FailingFileSystem(tree, "/comp/sub/big", SwollenFile))
    with pytest.raises(CF.LoadableDevice.LoadFail) as too_big:
        device.load(swollen, "/comp", EXECUTABLE)
    assert too_big.value.errorNumber == CF.CF_EFBIG and "listed with" in too_big.value.msg
    assert left_in(cache) == []
    lying = serve_fs(LyingFileSystem(tree, "lying"))
    with pytest.raises(CF.LoadableDevice.LoadFail) as escaped:
        device.load(lying, "/comp", EXECUTABLE)
    assert escaped.value.errorNumber == CF.CF_EINVAL and "../../escaped" in escaped.value.msg
    assert left_in(cache) == [] and not list(cache.parent.rglob("escaped"))  # nor beside the cache
    for never_loaded in ("/comp", "comp", "/comp/../etc"):  # a name that could not be loaded is not loaded either
        with pytest.raises(CF.InvalidFileName) as not_loaded:
            device.unload(never_loaded)
        assert not_loaded.value.errorNumber == CF.CF_ENOENT and "not loaded" in not_loaded.value.msg, never_loaded
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
    # Above a loaded file, likewise; the file alone, loaded EXECUTABLE, is the program, whatever it is listed with.
    device.load(fs, "/comp/data", EXECUTABLE)
    assert os.stat(cache / "comp" / "data").st_mode & stat.S_IXUSR
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
    for never_loaded in (IMPLEMENTATION, "components/RhGain"):
        with pytest.raises(CF.InvalidFileName) as not_loaded:
            device.unload(never_loaded)
        assert not_loaded.value.errorNumber == CF.CF_ENOENT and "not loaded" in not_loaded.value.msg
    for kind in (EXECUTABLE, CF.LoadableDevice.SHARED_LIBRARY):
        with pytest.raises(CF.InvalidFileName) as refused:
            device.load(fs, IMPLEMENTATION, kind)
        assert refused.value.errorNumber == CF.CF_EACCES and "--accept-loaded" in refused.value.msg


def test_executelinked_on_a_locked_node_says_so_before_its_dependencies(start_node):
    device = start_node("--accept-loaded").wait_registered().device
    device._set_adminState(CF.Device.LOCKED)
    with pytest.raises(CF.Device.InvalidState, match="LOCKED"):
        device.executeLinked(ENTRYPOINT, [], [], [IMPLEMENTATION])
    device._set_adminState(CF.Device.UNLOCKED)
    with pytest.raises(CF.InvalidFileName) as missing:
        device.executeLinked(ENTRYPOINT, [], [], [IMPLEMENTATION])
    assert missing.value.errorNumber == CF.CF_ENOENT


# --- a slow file system, and what one load may take -------------------------------------------


class GatedFile(ProfileFile):
    """A file whose reads wait until the test opens the gate: a file system that is slow to answer."""

    def read(self, length):
        self.fs.reading.set()
        assert self.fs.gate.wait(WAIT_S), "the gate was never opened"
        return super().read(length)


class GatedFileSystem(FailingFileSystem):
    def __init__(self, root, slow):
        super().__init__(root, slow, GatedFile)
        self.reading, self.gate = threading.Event(), threading.Event()


def test_a_slow_file_system_holds_up_only_its_own_load(start_node, serve_fs, tmp_path):
    tree = a_tree(tmp_path / "domain")
    fs = serve_fs(ProfileFileSystem(tree, "domain"))
    gated_servant = GatedFileSystem(tree, "/comp/sub/big")
    gated = serve_fs(gated_servant)
    device = start_node("--accept-loaded").wait_registered().device
    cache = cache_of(device)
    device.load(fs, "/comp/run", EXECUTABLE)
    outcome, started = [], []

    def load_in_a_thread(fs):
        started.append(threading.Thread(target=lambda: outcome.append(device.load(fs, "/comp/sub/big", EXECUTABLE))))
        started[-1].start()
        return started[-1]

    slow = load_in_a_thread(gated)
    try:
        assert gated_servant.reading.wait(WAIT_S)
        # While it copies: another name loads, a loaded name counts, what overlaps it is refused.
        device.load(fs, "/comp/data", EXECUTABLE)
        device.load(fs, "/comp/run", EXECUTABLE)
        with pytest.raises(CF.LoadableDevice.LoadFail) as overlap:
            device.load(fs, "/comp/sub", EXECUTABLE)
        assert overlap.value.errorNumber == CF.CF_EEXIST and "/comp/sub/big" in overlap.value.msg
        assert slow.is_alive() and not (cache / "comp" / "sub").exists()
        # A second load of the name being copied waits for that copy, and counts.
        load_in_a_thread(fs)
    finally:
        gated_servant.gate.set()
        for thread in started:
            thread.join(WAIT_S)
    assert outcome == [None, None]
    big = cache / "comp" / "sub" / "big"
    assert big.read_bytes() == (tree / "comp" / "sub" / "big").read_bytes()
    device.unload("/comp/sub/big")
    assert big.exists()  # loaded twice
    for name in ("/comp/run", "/comp/run", "/comp/data", "/comp/sub/big"):
        device.unload(name)
    assert left_in(cache) == []


class SlowFileSystem(ProfileFileSystem):
    """Answers each list and read, but slowly."""

    def __init__(self, root, delay_s):
        super().__init__(root, "slow")
        self.delay_s = delay_s

    def list(self, pattern):
        time.sleep(self.delay_s)
        return super().list(pattern)


def loaded_files(tmp_path, **limits):
    """The node's cache code itself, with limits a test can reach, and its log."""
    log = []
    return LoadedFiles(tmp_path / "loaded", tmp_path / "loading", "test", log.append, **limits), log


def test_a_load_is_bounded_in_bytes_time_and_the_disk_it_leaves_free(serve_fs, tmp_path, monkeypatch):
    tree = a_tree(tmp_path / "domain")
    fs = serve_fs(ProfileFileSystem(tree, "domain"))
    loaded, _ = loaded_files(tmp_path, max_bytes=READ_CHUNK)  # /comp/sub/big is two reads' worth
    with pytest.raises(CF.LoadableDevice.LoadFail) as too_big:
        loaded.load(fs, "/comp", EXECUTABLE)
    assert too_big.value.errorNumber == CF.CF_EFBIG and f"more than {READ_CHUNK} bytes" in too_big.value.msg
    assert left_in(loaded.root) == []
    loaded.load(fs, "/comp/run", EXECUTABLE)  # within the limit
    assert loaded.unload("/comp/run") and left_in(loaded.root) == []
    # Each call answered, each after a while: the load as a whole runs out of time.
    slow = serve_fs(SlowFileSystem(tree, 0.2))
    late, _ = loaded_files(tmp_path, timeout_s=0.3)
    with pytest.raises(CF.LoadableDevice.LoadFail) as timed_out:
        late.load(slow, "/comp", EXECUTABLE)
    assert timed_out.value.errorNumber == CF.CF_ETIMEDOUT and "within 0.3 s" in timed_out.value.msg
    assert left_in(late.root) == []
    # A disk with less free than a file's size: refused before it is read.
    statvfs = os.statvfs

    def full(path):
        real = statvfs(path)
        return os.statvfs_result((real.f_bsize, real.f_frsize, real.f_blocks, 0, 0) + tuple(real)[5:])

    monkeypatch.setattr(os, "statvfs", full)
    with pytest.raises(CF.LoadableDevice.LoadFail) as no_room:
        loaded.load(fs, "/comp/run", EXECUTABLE)
    assert no_room.value.errorNumber == CF.CF_ENOSPC and "0 free" in no_room.value.msg
    assert left_in(loaded.root) == []

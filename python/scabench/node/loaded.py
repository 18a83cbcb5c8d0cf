"""The files a domain loads onto the node: LoadableDevice.load(fs, name,
kind) with a file system, as a REDHAWK ApplicationFactory loads a
component's implementation from its FileManager (`scabench node
--accept-loaded`; without it such a load is refused, since running code sent
over the wire is the operator's decision).

A name is the file's absolute path in the file system given
("/components/RhGain/python"); its copy lies at the same path under the
node's cache directory, so that execute finds it by the name it was loaded
by, or by the path of a file within a loaded directory (a component's
entrypoint, "/components/RhGain/python/RhGain.py").

  - a plain file is copied (open, sizeOf, read in chunks, close); a
    directory, recursively (list of NAME/, the pattern REDHAWK's FileSystem
    and the node's own answer with a folder's entries);
  - the file an EXECUTABLE load names is made executable (it is the
    program to execute, however the file system lists it); in a directory,
    a file is made executable where the file system lists it with REDHAWK's
    EXECUTABLE file property true, and where it gives no such property, in
    an EXECUTABLE load, each file that starts as a program ("#!", or ELF);
  - loads are counted per name: the copy is made by the first and removed
    by the unload that brings the count to 0 (a second load copies nothing);
  - a copy is made in a staging folder beside the cache and moved into
    place whole: a load that fails leaves nothing behind;
  - loads of different names copy at once, each in the thread of its call:
    a slow file system holds up only its own load, and a second load of a
    name being copied waits for that copy (within its own deadline); a load
    of a name already loaded only counts;
  - a load takes at most MAX_LOAD_BYTES and LOAD_TIMEOUT_S (between calls
    on the file system; each call has FS_CALL_TIMEOUT_S).

What is refused, with the CF error number of what happened:
  a name that is not absolute, holds "..", ".", a wildcard, a NUL, or names
  the root: InvalidFileName (CF_EINVAL);
  a file the file system does not have: InvalidFileName (CF_ENOENT);
  a name inside, or above, another loaded name (or one being loaded):
  LoadFail (CF_EEXIST): the counts could not say when the files may go;
  an entry the file system lists under a name that is not a plain name
  ("..", "a/b"), a tree deeper than MAX_DEPTH or of more than MAX_FILES
  files: LoadFail (CF_EINVAL, CF_E2BIG);
  a file whose sizeOf is more than the size its entry was listed with, or a
  load of more than MAX_LOAD_BYTES: LoadFail (CF_EFBIG); a file larger than
  the node's disk has free: LoadFail (CF_ENOSPC);
  a load not done within LOAD_TIMEOUT_S: LoadFail (CF_ETIMEDOUT);
  a file system that fails mid-copy (its exception's error number; CF_EIO
  when it stops answering or a file ends short), or the node's own disk
  (the errno's): LoadFail.
An unload of a name not loaded, or of one that could not be, answers
false (the device's InvalidFileName CF_ENOENT)."""

import errno
import os
import shutil
import stat
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import omniORB
from omniORB import CORBA

from scabench.components import idl
from scabench.components.cf_errors import cf_error, cf_error_of
from scabench.components.ports import describe
from scabench.node.filesystem import EXECUTABLE_PROPERTY

S = idl.load()
CF = S.CF
FS = CF.FileSystem
Loadable = CF.LoadableDevice

READ_CHUNK = 256 * 1024  # bytes per File.read: well inside omniORB's default message limit (2 MiB)
MAX_DEPTH = 32  # folders within a loaded folder
MAX_FILES = 10_000  # files and folders in one load
PROGRAM_MAGIC = (b"#!", b"\x7fELF")
FS_CALL_TIMEOUT_S = 30.0  # each call on the file system given: one that hangs fails the load, not the node
MAX_LOAD_BYTES = 1 << 30  # bytes in one load: a file system cannot fill the node's disk by saying a file is huge
LOAD_TIMEOUT_S = 120.0  # one load, whole: a file system answering each call slowly fails its load in the end


@dataclass
class _Budget:
    """What is left to one load: files, bytes, time."""

    deadline: float  # time.monotonic()
    max_bytes: int
    files: int = 0
    bytes: int = 0


class LoadedFiles:
    """The node's cache of loaded files, and their counts."""

    def __init__(
        self,
        root: Path,
        staging: Path,
        label: str,
        log,
        max_bytes: int = MAX_LOAD_BYTES,
        timeout_s: float = LOAD_TIMEOUT_S,
    ):
        self.root, self.staging, self.label, self.log = Path(root), Path(staging), label, log
        self.max_bytes, self.timeout_s = max_bytes, timeout_s
        self.root.mkdir(mode=0o700, exist_ok=True)
        self.staging.mkdir(mode=0o700, exist_ok=True)
        self._counts: dict[str, int] = {}  # name -> loads not yet unloaded
        self._copying: dict[str, threading.Event] = {}  # name -> set once its first load has ended
        # Held only for the counts and for moving copies into (and out of) the cache, never for a
        # copy: a folder made for one load is not pruned by an unload before the copy is moved in.
        self._lock = threading.Lock()

    # --- names -----------------------------------------------------------------------

    def _parts(self, name: str) -> list[str]:
        """The name's parts; InvalidFileName (CF_EINVAL) if it is not an absolute name of one file."""
        parts = name.split("/")[1:]
        if (
            not name.startswith("/")
            or "\0" in name
            or any(c in name for c in "*?[")
            or not parts
            or any(p in ("", ".", "..") for p in parts)
        ):
            raise CF.InvalidFileName(
                cf_error(errno.EINVAL),
                f"{name!r}: node {self.label} loads a file or folder by its absolute name in the file system "
                "given, without '..', '.', wildcards or a trailing '/'",
            )
        return parts

    def _loaded_above_or_at(self, parts: list[str]) -> str | None:
        """The loaded name that is this name or holds it, if any."""
        for i in range(len(parts), 0, -1):
            name = "/" + "/".join(parts[:i])
            if self._counts.get(name):
                return name
        return None

    # --- load, unload ----------------------------------------------------------------

    def load(self, fs, name: str, kind) -> None:
        parts = self._parts(name)
        budget = _Budget(time.monotonic() + self.timeout_s, self.max_bytes)
        omniORB.setClientCallTimeout(fs, int(FS_CALL_TIMEOUT_S * 1000))
        while True:
            with self._lock:
                if self._counts.get(name):
                    self._counts[name] += 1
                    return
                pending = self._copying.get(name)
                if pending is None:
                    overlaps = self._loaded_above_or_at(parts) or next(
                        (n for n in (*self._counts, *self._copying) if _holds(n, name) or _holds(name, n)), None
                    )
                    if overlaps is not None:
                        raise Loadable.LoadFail(
                            cf_error(errno.EEXIST),
                            f"{name!r} overlaps {overlaps!r}, loaded on node {self.label}: load the one or the other",
                        )
                    done = self._copying[name] = threading.Event()
                    break
            # The same name's first load is copying: this one counts once it is done, or copies if it failed.
            if not pending.wait(max(0.0, budget.deadline - time.monotonic())):
                raise self._late(name, "waiting for another load of it")
        try:
            self._load(fs, name, parts, kind, budget)
        finally:
            with self._lock:
                del self._copying[name]
            done.set()
        self.log(f"loaded {name} from the file system given")

    def _load(self, fs, name: str, parts: list[str], kind, budget: _Budget) -> None:
        entry = self._entry(fs, name)
        staging = self.staging / uuid.uuid4().hex
        staging.mkdir(mode=0o700)
        target = self.root.joinpath(*parts)
        try:
            copied = self._copy(fs, name, entry, staging / parts[-1], kind, 0, budget)
            with self._lock:
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(copied, target)
                except OSError:
                    self._prune(target)
                    raise
                self._counts[name] = 1
        except OSError as exc:
            raise Loadable.LoadFail(
                cf_error_of(exc), f"{name!r}: node {self.label} could not write its copy: {exc.strerror or exc}"
            ) from None
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def unload(self, name: str) -> bool:
        """False if `name` is not loaded (a name that could not be loaded is not)."""
        try:
            parts = self._parts(name)
        except CF.InvalidFileName:
            return False
        with self._lock:
            if not self._counts.get(name):
                return False
            self._counts[name] -= 1
            if self._counts[name]:
                return True
            del self._counts[name]
            target = self.root.joinpath(*parts)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target, ignore_errors=True)
            else:
                target.unlink(missing_ok=True)
            self._prune(target)
        self.log(f"unloaded {name}")
        return True

    def _prune(self, target: Path) -> None:
        """Removes the folders made for `target` that are empty, up to the cache (under the lock)."""
        for parent in target.parents:
            if parent == self.root:
                break
            try:
                parent.rmdir()
            except OSError:
                break  # another load's, still there (or never made)

    def program(self, name: str) -> Path | None:
        """The copy of `name` for execute: a plain file loaded by that name, or
        within a loaded folder; None if there is none."""
        try:
            parts = self._parts(name)
        except CF.InvalidFileName:
            return None
        with self._lock:
            if self._loaded_above_or_at(parts) is None:
                return None
        path = self.root.joinpath(*parts)
        try:
            info = os.lstat(path)
        except OSError:
            return None
        return path if stat.S_ISREG(info.st_mode) else None

    def covers(self, name: str) -> bool:
        """Whether `name` is loaded, or lies within a loaded folder."""
        try:
            parts = self._parts(name)
        except CF.InvalidFileName:
            return False
        with self._lock:
            return self._loaded_above_or_at(parts) is not None

    # --- the copy ----------------------------------------------------------------------

    def _entry(self, fs, name: str):
        """The file system's entry for `name`; InvalidFileName (CF_ENOENT) if it has none."""
        base = name.rsplit("/", 1)[1]
        try:
            entries = [e for e in fs.list(name) if e.name == base]
        except (CF.InvalidFileName, CF.FileException) as exc:
            # REDHAWK's answers a missing folder with CF_EEXIST, or CF_ENOTDIR: it does not have the file.
            raise CF.InvalidFileName(
                cf_error(errno.ENOENT), f"{name!r}: the file system given does not have it ({exc.msg})"
            ) from None
        except CORBA.SystemException as exc:
            raise Loadable.LoadFail(
                cf_error(errno.EIO), f"{name!r}: the file system given did not answer list: {describe(exc)}"
            ) from None
        if not entries:
            raise CF.InvalidFileName(cf_error(errno.ENOENT), f"{name!r}: the file system given does not have it")
        return entries[0]

    def _copy(self, fs, name, entry, dest: Path, kind, depth, budget: _Budget):
        budget.files += 1
        if budget.files > MAX_FILES:
            raise Loadable.LoadFail(cf_error(errno.E2BIG), f"{name!r}: more than {MAX_FILES} files in one load")
        if entry.kind == FS.DIRECTORY:
            if depth >= MAX_DEPTH:
                raise Loadable.LoadFail(cf_error(errno.E2BIG), f"{name!r}: folders deeper than {MAX_DEPTH}")
            dest.mkdir(mode=0o700)
            for child in self._call(name, "list", lambda: fs.list(name + "/"), budget):
                if not child.name or child.name in (".", "..") or "/" in child.name or "\0" in child.name:
                    raise Loadable.LoadFail(
                        cf_error(errno.EINVAL), f"{name!r}: the file system listed an entry {child.name!r}"
                    )
                self._copy(fs, f"{name}/{child.name}", child, dest / child.name, kind, depth + 1, budget)
            dest.chmod(0o700)
            return dest
        if entry.kind != FS.PLAIN:
            raise Loadable.LoadFail(cf_error(errno.EINVAL), f"{name!r} is a mounted file system, not a file")
        self._copy_file(fs, name, entry.size, dest, budget)
        listed = _executable_property(entry)
        if kind == Loadable.EXECUTABLE and depth == 0:
            executable = True  # the file an EXECUTABLE load names is the program to execute, however listed
        elif listed is not None:
            executable = listed
        else:  # no word from the file system: within a folder, a file that starts as a program is one
            executable = kind == Loadable.EXECUTABLE and _starts_as_program(dest)
        dest.chmod(0o700 if executable else 0o600)
        return dest

    def _copy_file(self, fs, name, listed: int, dest: Path, budget: _Budget):
        opened = self._call(name, "open", lambda: fs.open(name, True), budget)
        omniORB.setClientCallTimeout(opened, int(FS_CALL_TIMEOUT_S * 1000))
        try:
            size = self._call(name, "sizeOf", opened.sizeOf, budget)
            self._room_for(name, size, listed, budget)
            got = 0
            with open(dest, "wb") as out:
                while got < size:  # each read adds at least a byte, or the load fails
                    asked = min(READ_CHUNK, size - got)
                    data = self._call(name, "read", lambda: opened.read(asked), budget)
                    if not data or len(data) > asked:
                        raise Loadable.LoadFail(
                            cf_error(errno.EIO),
                            f"{name!r}: read answered {len(data)} bytes for {asked}, at {got} of its {size}",
                        )
                    out.write(data)
                    got += len(data)
        finally:
            try:
                opened.close()
            except (CORBA.UserException, CORBA.SystemException):
                pass  # the copy is made or refused either way: the file system's to clean

    def _room_for(self, name, size: int, listed: int, budget: _Budget) -> None:
        """Refuses a file of `size` bytes before it is read: larger than listed
        or than what is left of the load's bytes (CF_EFBIG), or than the
        node's disk has free (CF_ENOSPC)."""
        if size > listed:
            raise Loadable.LoadFail(
                cf_error(errno.EFBIG), f"{name!r}: sizeOf answered {size} bytes, its entry was listed with {listed}"
            )
        budget.bytes += size
        if budget.bytes > budget.max_bytes:
            raise Loadable.LoadFail(
                cf_error(errno.EFBIG), f"{name!r}: the load would be more than {budget.max_bytes} bytes"
            )
        disk = os.statvfs(self.staging)
        free = disk.f_bavail * disk.f_frsize
        if size > free:
            raise Loadable.LoadFail(
                cf_error(errno.ENOSPC), f"{name!r}: {size} bytes, node {self.label} has {free} free for its copy"
            )

    def _late(self, name, doing):
        return Loadable.LoadFail(
            cf_error(errno.ETIMEDOUT), f"{name!r}: not loaded within {self.timeout_s:g} s ({doing})"
        )

    def _call(self, name, what, call, budget: _Budget):
        """A call on the file system given, within the load's time; its
        failures as LoadFail with their error number."""
        if time.monotonic() >= budget.deadline:
            raise self._late(name, f"before {what}")
        try:
            return call()
        except (CF.FileException, CF.File.IOException, CF.InvalidFileName) as exc:
            raise Loadable.LoadFail(
                exc.errorNumber, f"{name!r}: the file system given failed {what}: {exc.msg}"
            ) from None
        except CORBA.SystemException as exc:
            raise Loadable.LoadFail(
                cf_error(errno.EIO), f"{name!r}: the file system given did not answer {what}: {describe(exc)}"
            ) from None


def _holds(folder: str, name: str) -> bool:
    """Whether `name` lies within `folder`."""
    return name.startswith(folder + "/")


def _executable_property(entry) -> bool | None:
    for p in entry.fileProperties:
        if p.id == EXECUTABLE_PROPERTY:
            value = p.value.value()
            return value if isinstance(value, bool) else None
    return None


def _starts_as_program(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(4)
    return head.startswith(PROGRAM_MAGIC)

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
  - a file is made executable where the file system lists it with REDHAWK's
    EXECUTABLE file property true; where the file system gives no such
    property, an EXECUTABLE load makes the file it names executable, and in
    a directory each file that starts as a program does ("#!", or ELF);
  - loads are counted per name: the copy is made by the first and removed
    by the unload that brings the count to 0 (a second load copies nothing);
  - a copy is made in a staging folder beside the cache and moved into
    place whole: a load that fails leaves nothing behind.

What is refused, with the CF error number of what happened:
  a name that is not absolute, holds "..", ".", a wildcard, a NUL, or names
  the root: InvalidFileName (CF_EINVAL);
  a file the file system does not have: InvalidFileName (CF_ENOENT);
  a name inside, or above, another loaded name: LoadFail (CF_EEXIST): the
  counts could not say when the files may go;
  an entry the file system lists under a name that is not a plain name
  ("..", "a/b"), a tree deeper than MAX_DEPTH or of more than MAX_FILES
  files: LoadFail (CF_EINVAL, CF_E2BIG);
  a file system that fails mid-copy (its exception's error number; CF_EIO
  when it stops answering or a file ends short), or the node's own disk
  (the errno's): LoadFail."""

import errno
import os
import shutil
import stat
import threading
import uuid
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


class LoadedFiles:
    """The node's cache of loaded files, and their counts."""

    def __init__(self, root: Path, staging: Path, label: str, log):
        self.root, self.staging, self.label, self.log = Path(root), Path(staging), label, log
        self.root.mkdir(mode=0o700, exist_ok=True)
        self.staging.mkdir(mode=0o700, exist_ok=True)
        self._counts: dict[str, int] = {}  # name -> loads not yet unloaded
        self._lock = threading.Lock()  # the counts
        self._loading = threading.Lock()  # held for a whole load: a second load of a name waits for the copy

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
        omniORB.setClientCallTimeout(fs, int(FS_CALL_TIMEOUT_S * 1000))
        with self._loading:
            with self._lock:
                if self._counts.get(name):
                    self._counts[name] += 1
                    return
                holder = self._loaded_above_or_at(parts)
                below = next((n for n in self._counts if n.startswith(name + "/")), None)
            if holder is not None or below is not None:
                raise Loadable.LoadFail(
                    cf_error(errno.EEXIST),
                    f"{name!r} overlaps {holder or below!r}, loaded on node {self.label}: load the one or the other",
                )
            entry = self._entry(fs, name)
            staging = self.staging / uuid.uuid4().hex
            staging.mkdir(mode=0o700)
            target = self.root.joinpath(*parts)
            try:
                copied = self._copy(fs, name, entry, staging / parts[-1], kind, depth=0, counted=[0])
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(copied, target)
            except OSError as exc:
                self._prune(target)
                raise Loadable.LoadFail(
                    cf_error_of(exc), f"{name!r}: node {self.label} could not write its copy: {exc.strerror or exc}"
                ) from None
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            with self._lock:
                self._counts[name] = 1
        self.log(f"loaded {name} from the file system given")

    def unload(self, name: str) -> bool:
        """False if `name` is not loaded."""
        parts = self._parts(name)
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
        """Removes the folders made for `target` that are empty, up to the cache."""
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

    def _copy(self, fs, name, entry, dest: Path, kind, depth, counted):
        counted[0] += 1
        if counted[0] > MAX_FILES:
            raise Loadable.LoadFail(cf_error(errno.E2BIG), f"{name!r}: more than {MAX_FILES} files in one load")
        if entry.kind == FS.DIRECTORY:
            if depth >= MAX_DEPTH:
                raise Loadable.LoadFail(cf_error(errno.E2BIG), f"{name!r}: folders deeper than {MAX_DEPTH}")
            dest.mkdir(mode=0o700)
            for child in self._call(name, "list", lambda: fs.list(name + "/")):
                if not child.name or child.name in (".", "..") or "/" in child.name or "\0" in child.name:
                    raise Loadable.LoadFail(
                        cf_error(errno.EINVAL), f"{name!r}: the file system listed an entry {child.name!r}"
                    )
                self._copy(fs, f"{name}/{child.name}", child, dest / child.name, kind, depth + 1, counted)
            dest.chmod(0o700)
            return dest
        if entry.kind != FS.PLAIN:
            raise Loadable.LoadFail(cf_error(errno.EINVAL), f"{name!r} is a mounted file system, not a file")
        self._copy_file(fs, name, dest)
        flag = _executable_property(entry)
        if flag is None:  # no word from the file system: the load's kind says
            flag = kind == Loadable.EXECUTABLE and (depth == 0 or _starts_as_program(dest))
        dest.chmod(0o700 if flag else 0o600)
        return dest

    def _copy_file(self, fs, name, dest: Path):
        opened = self._call(name, "open", lambda: fs.open(name, True))
        omniORB.setClientCallTimeout(opened, int(FS_CALL_TIMEOUT_S * 1000))
        try:
            size = self._call(name, "sizeOf", opened.sizeOf)
            got = 0
            with open(dest, "wb") as out:
                while got < size:
                    asked = min(READ_CHUNK, size - got)
                    data = self._call(name, "read", lambda: opened.read(asked))
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

    def _call(self, name, what, call):
        """A call on the file system given; its failures as LoadFail with their error number."""
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

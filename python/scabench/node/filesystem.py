"""The node's file system (CF::FileSystem, its DeviceManager's fileSys): the
profiles the node writes of itself (node/profile.py), read-only.

A name is absolute ("/nodes/NAME/DeviceManager.dcd.xml"), and nothing
outside the profile folder is reached: no "..", no link followed. What each
operation answers:
  exists, list    as the contract says; list's pattern is a folder ending in
                  "/" (its entries) or a path whose last part may hold
                  wildcards (fnmatch: *, ?, [...]); each entry its name, kind,
                  size, MODIFIED_TIME / LAST_ACCESS_TIME (seconds since the
                  epoch), and READ_ONLY (true) and EXECUTABLE (the owner's x
                  bit) as REDHAWK's FileSystem lists them
  open            read-only: a CF::File of the file as it was when opened;
                  read_Only false: FileException CF_EROFS
  query           SIZE (the bytes its files hold) and AVAILABLE_SPACE (0)
  remove, copy, move, create, mkdir, rmdir
                  FileException CF_EROFS: the node's profiles are its own
A name that is not absolute, or holds ".." or a NUL: InvalidFileName
(CF_EINVAL). A file that is not there: FileException (CF_ENOENT) for open,
false for exists. At most MAX_OPEN files are open at once (close gives one
back): beyond, FileException CF_EMFILE. A file nobody has called for
FILE_IDLE_S is closed by the node (its reference then answers
OBJECT_NOT_EXIST): a caller that never closes, a DomainManager that died
reading the DCD, does not hold a slot for the node's life."""

import errno
import fnmatch
import os
import stat
import threading
import time
from pathlib import Path

from omniORB import CORBA, PortableServer

from scabench.components import idl
from scabench.components.cf_errors import cf_error

S = idl.load()
CF = S.CF
FS = CF.FileSystem

# The file properties REDHAWK's FileSystem lists each entry with besides the
# times (booleans); a loading device reads EXECUTABLE (node/loaded.py).
EXECUTABLE_PROPERTY = "EXECUTABLE"
READ_ONLY_PROPERTY = "READ_ONLY"
MAX_OPEN = 64
FILE_IDLE_S = 60.0  # a DomainManager reads a profile in one go: a minute without a call is a file left open


class ProfileFileSystem(S.CF__POA.FileSystem):  # type: ignore[name-defined]  # omniORBpy's skeleton, generated
    def __init__(self, root: Path, label: str, idle_s: float = FILE_IDLE_S):
        self.root = Path(root)
        self.label = label
        self.idle_s = idle_s
        self._open: set = set()
        self._lock = threading.Lock()

    def _path(self, name, wildcards=False):
        """The file `name` names under the root; InvalidFileName if it is not an absolute name of one."""
        parts = name.split("/")
        if (
            not name.startswith("/")
            or "\0" in name
            or ".." in parts
            or (not wildcards and any(c in name for c in "*?["))
        ):
            raise CF.InvalidFileName(
                cf_error(errno.EINVAL), f"{name!r}: node {self.label}'s file system takes absolute names, without '..'"
            )
        return self.root.joinpath(*[p for p in parts if p and p != "."])

    def _read_only(self, what, name):
        self._path(name)
        raise CF.FileException(
            cf_error(errno.EROFS),
            f"{what} {name!r}: node {self.label}'s file system is read-only (it holds the profiles the node "
            "writes of itself)",
        )

    def remove(self, fileName):
        self._read_only("remove", fileName)

    def copy(self, sourceFileName, destinationFileName):
        self._path(sourceFileName)
        self._read_only("copy to", destinationFileName)

    def move(self, sourceFileName, destinationFileName):
        self._path(destinationFileName)
        self._read_only("move", sourceFileName)

    def create(self, fileName):
        self._read_only("create", fileName)

    def mkdir(self, directoryName):
        self._read_only("mkdir", directoryName)

    def rmdir(self, directoryName):
        self._read_only("rmdir", directoryName)

    def exists(self, fileName):
        path = self._path(fileName)
        return os.path.lexists(path) and not path.is_symlink()

    def list(self, pattern):
        if pattern.endswith("/"):
            folder, wanted = self._path(pattern, wildcards=True), "*"
        else:
            path = self._path(pattern, wildcards=True)
            folder, wanted = path.parent, path.name
        if folder.is_symlink() or not folder.is_dir():
            return []
        found = []
        for entry in sorted(os.listdir(folder)):
            if not fnmatch.fnmatchcase(entry, wanted):
                continue
            info = os.lstat(folder / entry)
            if stat.S_ISLNK(info.st_mode):
                continue
            times = [
                CF.DataType(FS.MODIFIED_TIME_ID, CORBA.Any(CORBA.TC_ulonglong, int(info.st_mtime))),
                CF.DataType(FS.LAST_ACCESS_TIME_ID, CORBA.Any(CORBA.TC_ulonglong, int(info.st_atime))),
                CF.DataType(READ_ONLY_PROPERTY, CORBA.Any(CORBA.TC_boolean, True)),
                CF.DataType(EXECUTABLE_PROPERTY, CORBA.Any(CORBA.TC_boolean, bool(info.st_mode & stat.S_IXUSR))),
            ]
            kind = FS.DIRECTORY if stat.S_ISDIR(info.st_mode) else FS.PLAIN
            size = 0 if kind == FS.DIRECTORY else info.st_size
            found.append(FS.FileInformationType(entry, kind, size, times))
        return found

    def open(self, fileName, read_Only):
        path = self._path(fileName)
        if not read_Only:
            self._read_only("open for writing", fileName)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError as exc:
            raise CF.FileException(cf_error(exc.errno), f"{fileName!r}: {exc.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise CF.FileException(cf_error(errno.EISDIR), f"{fileName!r} is not a plain file")
            chunks = []  # joined once: adding each to the last is quadratic in the file's size
            while chunk := os.read(fd, 1 << 16):
                chunks.append(chunk)
            data = b"".join(chunks)
        finally:
            os.close(fd)
        self._expire_idle()
        with self._lock:
            if len(self._open) >= MAX_OPEN:
                raise CF.FileException(
                    cf_error(errno.EMFILE), f"node {self.label} holds {MAX_OPEN} files open: close one first"
                )
            opened = ProfileFile(self, fileName, data)
            self._open.add(opened)
        return opened._this()

    def closed(self, opened):
        with self._lock:
            self._open.discard(opened)

    def _expire_idle(self):
        """Closes each open file nobody has called for idle_s."""
        now = time.monotonic()
        with self._lock:
            idle = [f for f in self._open if now - f.last_used >= self.idle_s]
        for f in idle:
            f.close()

    def query(self, fileSystemProperties):
        size = sum(f.stat().st_size for f in self.root.rglob("*") if f.is_file() and not f.is_symlink())
        values = {FS.SIZE: size, FS.AVAILABLE_SPACE: 0}
        if not fileSystemProperties:
            return [CF.DataType(k, CORBA.Any(CORBA.TC_ulonglong, v)) for k, v in values.items()]
        unknown = [p for p in fileSystemProperties if p.id not in values]
        if unknown:
            raise FS.UnknownFileSystemProperties(unknown)
        return [CF.DataType(p.id, CORBA.Any(CORBA.TC_ulonglong, values[p.id])) for p in fileSystemProperties]


class ProfileFile(S.CF__POA.File):  # type: ignore[name-defined]
    """One file opened for reading: its bytes as they were at open, and where the next read starts."""

    def __init__(self, fs, name, data):
        self.fs, self.name, self.data, self.pointer = fs, name, data, 0
        self.last_used = time.monotonic()  # each call sets it: ProfileFileSystem closes a file idle too long

    def _used(self):
        self.last_used = time.monotonic()

    def _get_fileName(self):
        self._used()
        return self.name

    def _get_filePointer(self):
        self._used()
        return self.pointer

    def read(self, length):
        self._used()
        data = self.data[self.pointer : self.pointer + length]
        self.pointer += len(data)
        return data

    def write(self, data):
        raise CF.File.IOException(cf_error(errno.EROFS), f"{self.name!r} is open for reading only")

    def sizeOf(self):
        self._used()
        return len(self.data)

    def setFilePointer(self, filePointer):
        self._used()
        if filePointer > len(self.data):
            raise CF.File.InvalidFilePointer()
        self.pointer = filePointer

    def close(self):
        self.fs.closed(self)
        poa = self._default_POA()
        try:
            poa.deactivate_object(poa.servant_to_id(self))
        except (PortableServer.POA.ServantNotActive, PortableServer.POA.ObjectNotActive):
            pass  # closed meanwhile, by its caller or as idle

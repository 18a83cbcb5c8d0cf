"""Files a person names on the command line or in a spec: read in one way,
only a regular file and only up to a bound; written only where a check has
made them first (check_writable). A named pipe would block the
read forever and a device such as /dev/zero never ends, so both are refused
before a byte is read; a regular file above the bound is refused by its
size instead of being read into memory (docs/architecture.md, "Faults")."""

import errno
import os
import stat
from pathlib import Path

from scabench.errors import ScabenchError, one_line


def not_a_regular_file(mode: int) -> str | None:
    """Why a file of this st_mode is not read as a file, in words that follow
    its path ("is a directory", "is not a regular file (a FIFO)"); None for a
    regular file."""
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISREG(mode):
        return None
    found = (
        "a FIFO"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "not a file"
    )
    return f"is not a regular file ({found})"


def not_a_file(path: str | Path) -> str | None:
    """Why `path` cannot be read as a file ("no such file", "is a directory",
    "is not a regular file (a FIFO)", ...); None if it is a regular file. For
    a file that is named but not read here (a program, a library)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return not_a_regular_file(mode)


class FileRefused(Exception):
    """A file that is not read; `reason` says why, in words that follow its
    path ("no such file", "not a regular file", "2000000 bytes, above ...")."""

    def __init__(self, path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{path}: {reason}")


def read_regular(path: str | os.PathLike, max_bytes: int, what: str = "a file") -> bytes:
    """The bytes of the regular file at `path`, at most `max_bytes` of them.
    It is opened without blocking (a named pipe with no writer would block
    the open itself) and checked on the open descriptor, so what is checked
    is what is read; `what` names what was expected, for the reason."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise FileRefused(path, "no such file") from None
        raise FileRefused(path, f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if (problem := not_a_regular_file(info.st_mode)) is not None:
            raise FileRefused(path, f"{problem}; give the path of {what}")
        if info.st_size > max_bytes:
            raise FileRefused(path, f"{info.st_size} bytes; {what} is at most {max_bytes}")
        chunks, size = [], 0
        while size <= max_bytes:  # the file may grow while it is read: never past the bound
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise FileRefused(path, f"grew past {max_bytes} bytes while read; {what} is at most {max_bytes}")
        return b"".join(chunks)
    except OSError as exc:
        raise FileRefused(path, f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def check_writable(path: str | Path, flag: str, folder: bool = False) -> None:
    """Refuses, before anything runs, an output that could not be written:
    a finished run must never lose its result to a bad --json, --csv or
    --out. Asking is not enough (a folder may look writable and refuse a
    file, as /proc does), so the output is made: a file by creating it (an
    existing one opened for writing, not truncated: a sweep resumes from it),
    a folder (`folder`) by creating a file in it. What the check made is
    removed again, the folders leading to it included, so a command refused
    later leaves nothing behind. An existing output that is not a regular
    file (a named pipe, a device) is refused: the result is written beside it
    and renamed over it, which would replace it (docs/architecture.md, "Faults")."""
    path = Path(path)
    shown = one_line(path)
    if folder and path.exists() and not path.is_dir():
        raise ScabenchError(f"{flag}: {shown} is a file; give a folder")
    if not folder and path.is_dir():
        raise ScabenchError(f"{flag}: {shown} is a directory; give a file name")
    if not folder and (path.exists() or path.is_symlink()) and not path.is_file():
        raise ScabenchError(f"{flag}: {shown} is not a regular file; give the name of a file to write")
    made = []  # the folders this check created, outermost first
    try:
        for parent in reversed([path, *path.parents] if folder else list(path.parents)):
            if not parent.exists():
                parent.mkdir()
                made.append(parent)
        probe = path / f".scabench-check.{os.getpid()}" if folder else path
        if probe.exists():
            os.close(os.open(probe, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC))
        else:
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644))
            probe.unlink()
    except OSError as exc:
        where = f" ({one_line(exc.filename)})" if exc.filename and str(exc.filename) != str(path) else ""
        raise ScabenchError(f"{flag}: {shown} cannot be created: {exc.strerror or exc}{where}") from None
    finally:
        for made_folder in reversed(made):
            try:
                made_folder.rmdir()
            except OSError:
                pass  # another writer put something in it: it is theirs to keep

"""The one file layer: every file a command reads or writes goes through here (decision
287; ``tests/test_file_layer.py`` holds every reader and writer of every command to it).

Reading. A file is opened with ``O_RDONLY | O_NONBLOCK | O_NOFOLLOW`` (``follow=True``
drops ``O_NOFOLLOW``: the files a person names or keeps, such as tables, profiles and
telemetry, may be links) after an ``lstat`` (``stat``) that refuses anything but a regular
file, then the opened descriptor is ``fstat``-ed: the same file, regular, no larger than
the reader's bound. So a FIFO never blocks, a device is never opened, ``/dev/zero`` is
never read, a link is never followed where the command wrote the file itself (a run's
``LATEST``, manifests, shards, ``run.json``), and a sparse file of terabytes is refused
before a byte is read. A reader that takes a path (Polars, Arrow) gets it from ``checked``:
the same checks, right before the library opens the name.

Writing. ``write`` fills a temporary file beside the target and renames it over the
target (fsynced, then the folder fsynced): a reader or a crash sees the old file or the
new, never half. The temporary name is unpredictable (``tempfile.mkstemp``:
``.<name>.<pid>-<8 random characters>.tmp``, so ``pipeline.store.atomic.remove_stale``
still finds a dead writer's by its PID) and created with ``O_CREAT | O_EXCL | O_NOFOLLOW``:
a link planted at a guessed name is never written through. A target that is a symbolic
link, a hard link (another name would keep the old bytes), a device, a FIFO, a socket or
a folder is refused, nothing written. Table files that are links are written through to
the file they lead to by their one writer, ``tune --apply`` (it resolves the link first,
decision 278); the real file must then pass the same checks.

Every refusal is ``Refused``: one line naming the file, exit 2, nothing read or written.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

LINE = 4 << 10  # a one-line file: LATEST, a lock
DOC = 64 << 20  # a document read whole: JSON, TOML, Markdown, a source file
DATA = 16 << 30  # data read by path (Parquet, CSV, NDJSON): records, shards, telemetry

_READ = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


class Refused(InputError):
    """A file a command may not read or write at that place: one line, exit 2, nothing read
    or written."""


def kind(mode: int) -> str:
    """What a file of ``mode`` is, as a person says it."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((k for test, k in _KINDS if test(mode)), "not a regular file")


def size_text(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.1f} {unit}"
    return f"{n} bytes"


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:  # no change of the umask
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old


NEW_MODE = 0o666 & ~_umask()  # a new file's permission bits, as open() would give them


# ------------------------------------------------------------------------------ reading

def _open(path: str | os.PathLike, limit: int, follow: bool) -> tuple[int, os.stat_result]:
    """A descriptor of ``path`` that is a regular file of at most ``limit`` bytes (and its
    fstat); ``Refused`` otherwise. A missing file is FileNotFoundError, as ``open``'s."""
    name = os.fspath(path)
    before = os.stat(name) if follow else os.lstat(name)
    if not stat.S_ISREG(before.st_mode):
        raise Refused(f"{name} is {kind(before.st_mode)}, not a regular file: not read")
    try:
        fd = os.open(name, _READ | (0 if follow else os.O_NOFOLLOW))
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.ENODEV):
            raise Refused(f"{name} stopped being a regular file as it was opened: not read"
                          ) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev,
                                                                       before.st_ino):
            raise Refused(f"{name} stopped being the regular file it was as it was opened: "
                          "not read")
        if st.st_size > limit:
            raise Refused(f"{name} is {size_text(st.st_size)} ({st.st_size:,} bytes), more "
                          f"than the {size_text(limit)} such a file may be: not read")
    except BaseException:
        os.close(fd)
        raise
    return fd, st


@contextlib.contextmanager
def opened(path: str | os.PathLike, limit: int = DOC, *,
           follow: bool = False) -> Iterator[BinaryIO]:
    """``path`` open for reading, once it proved a regular file of at most ``limit`` bytes."""
    fd, _ = _open(path, limit, follow)
    with os.fdopen(fd, "rb") as f:
        yield f


def read_bytes(path: str | os.PathLike, limit: int = DOC, *, follow: bool = False) -> bytes:
    """The file's bytes, read to its end (the size its fstat gave, then on while it
    grows, never past ``limit``)."""
    fd, st = _open(path, limit, follow)
    parts, got, want = [], 0, st.st_size + 1  # a byte more than its size: did it grow?
    with os.fdopen(fd, "rb", buffering=0) as f:
        while got <= limit:
            part = f.read(max(want - got, 1 << 16))
            if not part:
                break
            parts.append(part)
            got += len(part)
    if got > limit:
        raise Refused(f"{os.fspath(path)} grew past {size_text(limit)} as it was read: "
                      "not read")
    return b"".join(parts)


def read_text(path: str | os.PathLike, limit: int = DOC, *, follow: bool = False) -> str:
    """UTF-8 text (UnicodeDecodeError as ``Path.read_text``'s)."""
    return read_bytes(path, limit, follow=follow).decode("utf-8")


def read_json(path: str | os.PathLike, limit: int = DOC, *, follow: bool = False):
    """A JSON document (ValueError when it is not one, as ``json.loads``)."""
    return json.loads(read_bytes(path, limit, follow=follow))


def checked(path: str | os.PathLike, limit: int = DATA, *, follow: bool = False) -> Path:
    """``path`` once it proved a regular file of at most ``limit`` bytes: for a library
    that opens the name itself (Polars, Arrow), called right before it."""
    fd, _ = _open(path, limit, follow)
    os.close(fd)
    return Path(path)


# ------------------------------------------------------------------------------ writing

def target(final: str | os.PathLike) -> os.stat_result | None:
    """The stat of the file a write replaces (None: a new name); ``Refused`` when it is not
    a regular file of one name."""
    name = os.fspath(final)
    try:
        st = os.lstat(name)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{name} is {kind(st.st_mode)}, not a regular file: nothing written "
                      "(remove it, or give a regular file or a new name)")
    if st.st_nlink > 1:
        raise Refused(f"{name} has {st.st_nlink} names (hard links): nothing written (a new "
                      "file in its place would leave the others with the old bytes)")
    return st


def _temp(final: Path) -> tuple[int, Path]:
    """An unpredictable name beside ``final``, created exclusively, never through a link."""
    fd, name = tempfile.mkstemp(prefix=f".{final.name}.{os.getpid()}-", suffix=".tmp",
                                dir=final.parent)
    return fd, Path(name)


def _replace(final: str | os.PathLike, fill: Callable[[BinaryIO, Path], None],
             mode: int | None, durable: bool = True) -> Path:
    final = Path(final)
    st = target(final)
    fd, tmp = _temp(final)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), mode if mode is not None else
                      stat.S_IMODE(st.st_mode) if st else NEW_MODE)
            fill(f, tmp)
            f.flush()
            mine = os.fstat(f.fileno())
            now = os.lstat(tmp)
            if (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
                raise Refused(f"{tmp} was replaced while it was written: nothing written")
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, final)  # a link or device put at ``final`` meanwhile is replaced
    except BaseException:
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.lstat(tmp).st_mode):
                os.unlink(tmp)
        raise
    if durable:
        fsync(final.parent)
    return final


def write(final: str | os.PathLike, payload: bytes | str | Callable[[BinaryIO], None], *,
          mode: int | None = None, durable: bool = True) -> Path:
    """``payload`` (bytes, text as UTF-8, or ``fill(file)``) whole at ``final``, or
    nothing. ``mode``: the permission bits (default: the replaced file's, or a new
    file's). ``durable=False``: not fsynced (still whole or nothing to a reader; a crash
    of the machine may lose it): for files whose loss is found and repaired (decision
    302)."""
    if callable(payload):
        return _replace(final, lambda f, _: payload(f), mode, durable)
    data = payload.encode("utf-8") if isinstance(payload, str) else payload
    return _replace(final, lambda f, _: f.write(data), mode, durable)


def write_path(final: str | os.PathLike, fill: Callable[[Path], None], *,
               mode: int | None = None) -> Path:
    """As ``write``, for a writer that opens a name itself (``fill(temporary path)``): the
    name is new, unpredictable and made by this process, and must still be that file when
    ``fill`` returns."""
    return _replace(final, lambda _, tmp: fill(tmp), mode)


def new_file(path: str | os.PathLike) -> BinaryIO:
    """A new file at ``path`` inside a folder this process made (``temp_folder``), open for
    writing: created exclusively, never through a link; fsynced by the folder's rename."""
    try:
        return os.fdopen(os.open(path, _CREATE, NEW_MODE), "wb")
    except FileExistsError:  # something put there first: a new file is never its own
        raise Refused(f"{os.fspath(path)} is already {kind(os.lstat(path).st_mode)}: "
                      "nothing written (a new file was expected)") from None


def create(path: str | os.PathLike, payload: bytes | str | Callable[[BinaryIO], None]) -> Path:
    """``payload`` (as ``write``'s) as the new file ``path`` (``new_file``)."""
    with new_file(path) as f:
        if callable(payload):
            payload(f)
        else:
            f.write(payload.encode("utf-8") if isinstance(payload, str) else payload)
    return Path(path)


def append(path: str | os.PathLike, data: bytes, durable: bool = True) -> bool:
    """``data`` appended to the regular file ``path`` of one name (made when missing) and
    fsynced (unless not ``durable``, as ``write``'s); never through a link, never blocking
    on a FIFO. True when it was new."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC, NEW_MODE)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENODEV):
            raise Refused(f"{name} is {kind(os.lstat(name).st_mode)}, not a regular file: "
                          "nothing written") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            raise Refused(f"{name} is not a regular file of one name: nothing written")
        os.write(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    return st.st_size == 0


def temp_folder(final: str | os.PathLike) -> Path:
    """A new folder of an unpredictable name beside ``final`` (as ``write``'s files)."""
    final = Path(final)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.{os.getpid()}-", suffix=".tmp",
                                dir=final.parent))
    os.chmod(tmp, 0o777 & ~_umask())
    return tmp


def fsync(path: str | os.PathLike) -> None:
    """fsync a folder (its entries: a rename itself) or a regular file; a link to a file
    (its entry is its folder's) or anything else is left alone, opened without blocking."""
    try:
        fd = os.open(path, _READ | os.O_DIRECTORY)
    except NotADirectoryError:
        try:
            fd = os.open(path, _READ | os.O_NOFOLLOW)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENXIO):
                return
            raise
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
            os.fsync(fd)
    finally:
        os.close(fd)


def probe(folder: str | os.PathLike, size: int = 65536) -> None:
    """Write, fsync and remove ``size`` bytes in ``folder`` (can it hold output?)."""
    fd, tmp = _temp(Path(folder) / ".write-probe")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"\0" * size)
            f.flush()
            os.fsync(f.fileno())
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def lock_file(path: str | os.PathLike) -> BinaryIO:
    """``path`` open for an advisory lock (made when missing): a regular file of one name,
    opened without blocking and never through a link."""
    name = os.fspath(path)
    try:
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
                     | os.O_CLOEXEC, NEW_MODE)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.ENODEV):
            st = os.lstat(name)
            raise Refused(f"{name} is {kind(st.st_mode)}, not a regular file: not used as "
                          "a lock") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
        os.close(fd)
        what = kind(st.st_mode) if not stat.S_ISREG(st.st_mode) else \
            f"a file of {st.st_nlink} names (hard links)"
        raise Refused(f"{name} is {what}, not a lock file of its own: not used")
    return os.fdopen(fd, "r+b")


def copy_tree(src: str | os.PathLike, dst: str | os.PathLike, limit: int = DOC,
              depth: int = 16) -> None:
    """The folder ``src`` copied to the new folder ``dst``: its folders (``depth`` deep at
    most: a link to a folder above it is refused, not followed forever) and its regular
    files (links followed to regular files, as a table root's may be); anything else, or
    a file over ``limit``, is ``Refused`` (a table root holds no FIFO or device)."""
    src, dst = Path(src), Path(dst)
    if depth < 0:
        raise Refused(f"{src} lies too deep under the folder copied (a link to a folder "
                      "above it?): nothing copied")
    os.makedirs(dst)
    for entry in sorted(os.scandir(src), key=lambda e: e.name):
        there = dst / entry.name
        if entry.is_dir(follow_symlinks=True):
            copy_tree(entry.path, there, limit, depth - 1)
            continue
        with opened(entry.path, limit, follow=True) as f:
            create(there, lambda out, f=f: shutil.copyfileobj(f, out))

"""Every file or folder a command writes at a path the user gave goes through here
(decision 213): ``--play``, ``--out`` of export, export-tables, telemetry synth, reconcile,
the audit's and the tools' output roots, ``--junit-xml``.

- A file target is a regular file (replaced whole) or a new name. A folder, a device node,
  a FIFO, a socket or a symbolic link is refused, and left as it was: run as root, a rename
  over ``/dev/null`` would replace the device with a regular file.
- A folder target is a folder (created if missing) outside /proc, /sys and /dev, where a
  file can be written, fsynced and removed; nothing is left behind when it is not.
- A regular file of several names (hard links) is refused too: the new file would leave
  the other names with the old bytes.
- The write itself is the one file layer's (``boardcore.files``): an unpredictable
  temporary name made exclusively, never through a link, fsync, rename.
- Whatever the operating system refuses (read-only, no space, permission, a file where a
  folder must be) is ``InputError``, exit 2, one line naming the option and the reason.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from . import files
from .errors import InputError

SYSTEM_TREES = ("/proc", "/sys", "/dev")
_KINDS = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link"))


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a file"
    return next((k for test, k in _KINDS if test(mode)), "not a regular file")


def describe_os_error(e: OSError) -> str:
    """An OSError about a file as a person reads it."""
    why = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "disk quota exceeded",
           errno.EROFS: "read-only file system", errno.EACCES: "permission denied",
           errno.ENOTDIR: "a file stands where a folder must be",
           errno.EISDIR: "a folder stands where a file must be"}
    return why.get(e.errno, e.strerror or str(e))


def _system_tree(resolved: Path) -> bool:
    s = str(resolved)
    return any(s == t or s.startswith(t + "/") for t in SYSTEM_TREES)


def _folder_full(folder: Path) -> bool:
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < (1 << 20)


@contextlib.contextmanager
def os_errors(path: str | os.PathLike):
    """Polars and Arrow report a full disk as errors of their own (a "thrift transport
    error"): inside this block such a failure while ``path``'s file system is full is the
    OSError (ENOSPC, with the file name) a bad output place is reported as, exit 2; an
    OSError that names no file (Arrow's IO errors) is given ``path``'s name."""
    path = Path(path)
    try:
        yield
    except OSError as e:
        if e.filename is None:
            raise OSError(e.errno or errno.EIO, e.strerror or str(e), str(path)) from e
        raise
    except Exception as e:
        if _folder_full(path if path.is_dir() else path.parent):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path)) from e
        raise


def file_target(path: str | os.PathLike, option: str, example: str) -> Path:
    """``path`` checked as the target of a file write: a regular file or a new name in an
    existing folder. InputError (nothing touched) otherwise; ``example`` is a file name
    the message suggests."""
    text = os.fspath(path)
    if not text.strip():
        raise InputError(f"{option} is empty: name a file, e.g. {example}")
    out = Path(text)
    try:
        st = out.lstat()
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise InputError(f"{option} {text}: not a usable file ({describe_os_error(e)})") \
            from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = _kind(st.st_mode)
        hint = f"; give a file name, e.g. {out / example}" if stat.S_ISDIR(st.st_mode) else \
            "; give a regular file or a new name"
        raise InputError(f"{option} {text} is {kind}: nothing written{hint}")
    if st is not None and st.st_nlink > 1:
        raise InputError(f"{option} {text} has {st.st_nlink} names (hard links): nothing "
                         "written; give a file of its own or a new name")
    if text.endswith("/"):
        raise InputError(f"{option} {text} ends with '/': give a file name, e.g. "
                         f"{out / example}")
    parent = out.parent
    if not parent.is_dir():
        what = "is not a folder" if parent.exists() else "does not exist"
        raise InputError(f"{option} {text}: the folder {parent} {what}")
    resolved = parent.resolve() / out.name
    if _system_tree(resolved):
        raise InputError(f"{option} {text}: {resolved.parent} is a system tree, not a "
                         "place for output")
    if not os.access(parent, os.W_OK):  # said before the work, not after it
        why = errno.EROFS if os.statvfs(parent).f_flag & os.ST_RDONLY else errno.EACCES
        raise InputError(f"{option} {text}: cannot write there "
                         f"({describe_os_error(OSError(why, os.strerror(why)))})")
    return out


def write_file(path: str | os.PathLike, payload: str | bytes | Callable[[BinaryIO], None],
               option: str, example: str) -> Path:
    """Write ``payload`` (text as UTF-8, bytes, or ``fill(binary file)``) to the file the
    user named with ``option``, whole or not at all. InputError (exit 2) for a target that
    is not a regular file of one name or a new name, or a place the system will not
    write."""
    out = file_target(path, option, example)
    try:
        with os_errors(out):
            return files.write(out, payload)
    except files.Refused as e:  # it changed since file_target looked
        raise InputError(f"{option} {e}") from None
    except OSError as e:
        raise InputError(f"{option} {os.fspath(path)}: cannot write there "
                         f"({describe_os_error(e)})") from None


def usable_folder(path: str | os.PathLike, option: str = "--out",
                  default: str | None = None) -> Path:
    """Make sure ``path`` can hold output: a folder (created if missing) outside /proc,
    /sys and /dev, where a file can be written, fsynced and removed. InputError (exit 2)
    naming the reason; creates nothing when it fails."""
    text = os.fspath(path)
    if not text.strip():
        raise InputError(f"{option} is empty: name an output folder"
                         + (f" (default: {default})" if default else ""))
    p = Path(text)
    try:
        resolved = p.resolve()
    except (OSError, RuntimeError) as e:
        raise InputError(f"{option} {text}: not a usable output folder ({e})") from None
    if _system_tree(resolved):
        raise InputError(f"{option} {text}: {resolved} is a system tree, not an output folder")
    if resolved.exists() and not resolved.is_dir():
        raise InputError(f"{option} {text}: it is {_kind(resolved.stat().st_mode)}, not a "
                         "folder")
    existing = resolved
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(f"{option} {text}: {existing} is a file, so no folder can be made "
                         "under it")
    made = []
    try:
        for d in reversed([resolved, *resolved.parents]):
            if not d.exists():
                d.mkdir()
                made.append(d)
        files.probe(resolved)  # an unpredictable name, made exclusively, removed
    except OSError as e:
        for d in reversed(made):
            with contextlib.suppress(OSError):
                d.rmdir()
        raise InputError(f"{option} {text}: cannot write there ({describe_os_error(e)})") \
            from None
    return resolved


@contextlib.contextmanager
def writing_under(path: str | os.PathLike, option: str = "--out"):
    """A block that writes files under the output folder ``path`` (already checked by
    ``usable_folder``): an OSError inside it (the disk filled, the mount went read-only)
    is InputError naming the option, exit 2."""
    try:
        yield
    except OSError as e:
        where = e.filename or os.fspath(path)
        raise InputError(f"{option} {os.fspath(path)}: cannot write {where} "
                         f"({describe_os_error(e)})") from None

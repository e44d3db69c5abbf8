"""The one atomic write of the project: fill a temporary name beside the target, fsync it,
rename it onto the target, fsync the folder. A reader (or a crash) sees the old content or
the new, never half of either. Temporary names are unique per process and call
(``.<name>.<pid>-<8 hex>.tmp``), so two writers never share one, and a dead writer's are
found by its PID (``pipeline.store.atomic.remove_stale``).

What may be written where a user pointed is ``boardcore.output``'s concern; this module
writes wherever it is told.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path


_CALLS = itertools.count()  # no entropy in the generator packages (test_static_scan)


def unique_tag() -> str:
    """``<pid>-<8 hex>``: unique per process and call (the count), so two writers, threads
    or processes, never share a temporary name."""
    return f"{os.getpid()}-{next(_CALLS):08x}"


def tmp_name(final: Path) -> Path:
    return final.with_name(f".{final.name}.{unique_tag()}.tmp")


def fsync_path(path: Path) -> None:
    """fsync a file or a folder (a folder's entries: the rename itself)."""
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if path.is_dir() else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_file(final: str | os.PathLike, write: Callable[[Path], None]) -> Path:
    """``write(tmp_path)`` fills a temporary file beside ``final``; then fsync, rename onto
    ``final`` and fsync the folder. The temporary file is removed on any failure."""
    final = Path(final)
    tmp = tmp_name(final)
    try:
        write(tmp)
        fsync_path(tmp)
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_path(final.parent)
    return final

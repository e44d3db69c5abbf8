"""Atomic writes of the run store: whole files (``boardcore.files``, the one file layer
every command uses), whole folders, stale temporary names, free run names.

A reader (or a crash) sees the old content or the new, never half of either. Temporary
names are unpredictable and made exclusively (``boardcore.files``), so two writers never
share one and a link planted at a guessed name is never written through.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from boardcore import files
from boardcore.errors import InputError
from boardcore.files import fsync as fsync_path, write_path as write_file  # noqa: F401
from boardcore.output import os_errors  # noqa: F401 (re-exported: the store's writes)

T = TypeVar("T")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale(final: str | os.PathLike) -> list[Path]:
    """Remove the temporary names of ``final`` left by processes that are gone (a
    ``kill -9`` mid-write); a live writer's are kept. Returns what was removed."""
    final = Path(final)
    gone = []
    for tmp in final.parent.glob(f".{glob.escape(final.name)}.*.tmp"):
        pid = tmp.name[len(final.name) + 2:].split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        gone.append(tmp)
    return gone


def write_bytes(final: str | os.PathLike, data: bytes) -> Path:
    return files.write(final, data)


def write_text(final: str | os.PathLike, text: str) -> Path:
    return files.write(final, text)


FSYNC_THREADS = 8  # a run folder's ~150 files: 8 at a time take half the time of one


def fsync_all(paths: list[Path]) -> None:
    """``fsync_path`` of every path, several at a time (each waits on the disk, not on
    Python); the first error is raised (the paths not yet begun are not tried)."""
    with ThreadPoolExecutor(max(1, min(FSYNC_THREADS, len(paths))),
                            thread_name_prefix="fsync") as pool:
        for _ in pool.map(fsync_path, paths):
            pass


@contextlib.contextmanager
def folder(final: str | os.PathLike) -> Iterator[Path]:
    """Fill the yielded temporary folder; on a clean exit every file in it is fsynced, the
    folder is renamed to ``final`` (which must not exist) and the parent fsynced. On an
    error the temporary folder is removed and nothing appears at ``final``."""
    final = Path(final)
    tmp = files.temp_folder(final)
    try:
        yield tmp
        fsync_all(sorted(tmp.rglob("*")))
        fsync_path(tmp)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_path(final.parent)


def claim_name(base: str, take: Callable[[str], T], what: str, where: Path,
               tries: int = 1000) -> T:
    """What ``take(name)`` returns for the first free name of ``base``, ``base-2``,
    ``base-3`` ...: ``take`` claims the name (its own mkdir or rename is the claim, so two
    processes started in the same second never share a name) and raises
    ``FileExistsError`` when it is taken. Bad input (exit 2) when every try is taken."""
    for k in range(1, tries + 1):
        try:
            return take(base if k == 1 else f"{base}-{k}")
        except FileExistsError:
            continue
    raise InputError(f"no free {what} under {where} after {tries} tries ({base}-N)")


def claim_order(name: str) -> tuple[str, int]:
    """Where ``name`` falls among the names ``claim_name`` gives: ``base`` < ``base-2`` <
    ``base-10`` (the counter read as a number), other bases in text order."""
    head, _, k = name.rpartition("-")
    return (head, int(k)) if k.isdigit() and head else (name, 1)

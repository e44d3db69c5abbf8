"""Row shards: the records of each finished row, on disk as soon as the row is done.

A run in progress is ``<version dir>/.partial-<run_id>/`` holding ``run.json`` (the run's
own options, so a resume needs nothing else) and ``shards/r<position>.parquet`` with a
key file ``r<position>.json`` written after it. The key names what the shard holds: the
generator, its versions, the row key, the digest of the row snapshot, N, the row count
and the sha256 of the Parquet bytes. The same sha256 is appended, fsynced, to the run's
journal (``journal.jsonl``, one JSON line per saved shard) before the key is written. A
shard is reused only when its key equals what the run expects now and the file's bytes
match both the key and the journal's last line for its position; anything else is
recomputed (``engine.spot`` then makes boards of it again).

The records never gather in the client: ``rows()`` reads the shards back one at a time,
in position order (which is key order), for the finishing pass.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import io
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import polars as pl

from boardcore import files
from boardcore.errors import InputError
from boardcore.output import describe_os_error

from ..capabilities import board_span
from . import atomic
from .runs import PARTIAL_PREFIX


JOURNAL = "journal.jsonl"  # in the run folder: {"position", "sha256", "rows"} per saved shard


def snapshot_digest(snapshot: dict) -> str:
    """sha256 of a plan snapshot in canonical JSON."""
    return hashlib.sha256(json.dumps(snapshot, sort_keys=True, default=str).encode()).hexdigest()


class ShardStore:
    def __init__(self, folder: Path, durable: bool = True):
        """``durable=False``: shards, journal lines and keys are written whole but not
        fsynced (a tune's candidates, decision 302): a machine crash may lose the last ones,
        and a resume finds that by their digests and makes them again."""
        self.folder = folder
        self.durable = durable
        self.shards = folder / "shards"
        self._lock = None
        self._journal: dict[int, str] | None = None  # read once, kept up to date by save
        self._appending = threading.Lock()

    @property
    def run_id(self) -> str:
        return self.folder.name[len(PARTIAL_PREFIX):]

    @classmethod
    def create(cls, vdir: Path, run_id: str, facts: dict, durable: bool = True
               ) -> "ShardStore":
        store = cls(vdir / f"{PARTIAL_PREFIX}{run_id}", durable)
        store.shards.mkdir(parents=True, exist_ok=False)
        atomic.write_text(store.folder / "run.json", json.dumps(facts, indent=2))
        return store

    @classmethod
    def claim(cls, vdir: Path, base: str, facts: dict, tries: int = 1000) -> "ShardStore":
        """A new run folder under the first free id of ``base``, ``base-2``, ...: the
        folder's own mkdir is the claim, so two runs started in the same second (even in two
        processes) never share an id. The store is returned locked."""
        vdir.mkdir(parents=True, exist_ok=True)

        def take(run_id: str) -> ShardStore:
            if (vdir / run_id).exists():  # a finished run holds the id
                raise FileExistsError(run_id)
            folder = vdir / f"{PARTIAL_PREFIX}{run_id}"
            folder.mkdir()
            store = cls(folder)
            store.lock()
            store.shards.mkdir()
            atomic.write_text(folder / "run.json",
                              json.dumps({"run_id": run_id, **facts}, indent=2))
            return store

        return atomic.claim_name(base, take, "run id", vdir, tries)

    def lock(self) -> None:
        """Own the run folder (an advisory lock, released by ``unlock`` or when the process
        ends): a second process resuming the same run is refused."""
        try:  # a regular file of one name, never through a link
            self._lock = files.lock_file(self.folder / "lock")
        except OSError as e:  # a read-only folder: the run cannot be owned, nor resumed
            raise files.Refused(f"{self.folder / 'lock'} cannot be opened to lock the run "
                                f"({describe_os_error(e)})") from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            self._lock = None
            raise InputError(f"run {self.run_id} is in use by another process (its folder "
                               f"{self.folder} is locked); wait for it or stop it") from None

    def unlock(self) -> None:
        lock = getattr(self, "_lock", None)
        if lock is not None:
            fcntl.flock(lock, fcntl.LOCK_UN)
            lock.close()
            self._lock = None

    @classmethod
    def find(cls, run: str, vdir: Path) -> "ShardStore":
        """``run``: a .partial-* folder (wherever it is: the run finishes beside it), or a
        run id or a unique prefix of one, looked up in ``vdir``."""
        p = Path(run)
        if p.name.startswith(PARTIAL_PREFIX) or len(p.parts) > 1:
            if (p / "run.json").is_file():
                return cls(p.resolve())
            raise InputError(f"--resume {run}: not an interrupted run folder (no "
                             f"{p / 'run.json'})")
        candidate = vdir / f"{PARTIAL_PREFIX}{run}"
        if (candidate / "run.json").is_file():
            return cls(candidate)
        prefixed = sorted(f for f in vdir.glob(f"{PARTIAL_PREFIX}{glob.escape(run)}*")
                          if (f / "run.json").is_file()) if run else []
        if len(prefixed) == 1:
            return cls(prefixed[0])
        if len(prefixed) > 1:
            raise InputError(f"--resume {run}: the prefix names {len(prefixed)} interrupted "
                             "runs (" + ", ".join(f.name[len(PARTIAL_PREFIX):]
                                                  for f in prefixed) + "); give more of the id")
        hint = " (that run already finished)" if (vdir / run / "manifest.json").is_file() else ""
        raise InputError(f"--resume {run}: no interrupted run found{hint}; looked for "
                           f"{candidate}")

    def facts(self) -> dict:
        try:
            return files.read_json(self.folder / "run.json")
        except files.Refused as e:
            raise files.Refused(f"--resume: {e}") from None
        except (OSError, ValueError) as e:
            raise InputError(f"--resume: {self.folder / 'run.json'} is unreadable: {e}") from e

    def _paths(self, position: int) -> tuple[Path, Path]:
        stem = f"r{position:05d}"
        return self.shards / f"{stem}.parquet", self.shards / f"{stem}.json"

    def inspect(self, position: int, expect: dict, gen=None,
                plan=None) -> tuple[pl.DataFrame | None, str]:
        """(the row's records, "") when the shard at ``position`` proves it holds
        ``expect``: its key file equals ``expect`` and the Parquet bytes match the key's
        sha256. With ``gen`` the records prove their row themselves (``disproves``; with
        ``plan`` also the columns the plan fixes: stream seeds, board size ...): a key file
        rewritten to match another row's bytes is not enough. Else (None, why): "" when
        there is no shard, or the reason it is not reused."""
        data, key = self._paths(position)
        try:  # regular files of bounded size, never through a link (decision 287)
            stored = files.read_json(key)
            raw = files.read_bytes(data, files.DATA)
        except FileNotFoundError:
            return None, ""
        except files.Refused as e:  # planted: the audit writes none such; said, not used
            raise files.Refused(f"--resume: {e}; the audit wrote no such shard: remove it "
                                "and resume again") from None
        except (OSError, ValueError):
            return None, "its key file or data is unreadable"
        if {k: stored.get(k) for k in expect} != expect:
            return None, "its key file names another row, N or version"
        digest = hashlib.sha256(raw).hexdigest()
        if digest != stored.get("sha256"):
            return None, "its bytes do not match its key file"
        if self.journal().get(position) != digest:
            return None, ("its bytes are not those the run's journal recorded when the shard "
                          "was written")
        try:
            frame = pl.read_parquet(io.BytesIO(raw))  # the bytes the key proved
        except Exception:  # a damaged file: recompute the row
            return None, "its Parquet file is damaged"
        if frame.height != stored.get("rows"):
            return None, "it holds another number of records than its key file says"
        why = "" if gen is None else disproves(frame, gen, expect, plan)
        return (None, why) if why else (frame, "")

    def save(self, position: int, expect: dict, frame: pl.DataFrame) -> None:
        """Data first, then its journal line, key last: a key always names a complete,
        journalled shard (fsynced unless the store is not ``durable``)."""
        data, key = self._paths(position)
        buf = io.BytesIO()  # the bytes written are the bytes hashed: none read back
        frame.write_parquet(buf, compression="lz4", statistics=False)
        raw = buf.getvalue()
        with atomic.os_errors(data):
            files.write(data, raw, durable=self.durable)
        digest = hashlib.sha256(raw).hexdigest()
        self._journal_append({"position": position, "sha256": digest, "rows": frame.height})
        files.write(key, json.dumps({**expect, "rows": frame.height, "sha256": digest},
                                    sort_keys=True), durable=self.durable)

    def journal(self) -> dict[int, str]:
        """Position -> the sha256 its last journal line recorded (a line that does not
        parse, a torn last one, is skipped: its shard is not reused)."""
        if self._journal is None:
            got: dict[int, str] = {}
            try:
                text = files.read_bytes(self.folder / JOURNAL, files.DATA).decode(
                    "utf-8", errors="replace")
            except (OSError, files.Refused):  # none, or not a file: no shard is reused
                text = ""
            for line in text.splitlines():
                try:
                    doc = json.loads(line)
                    pos, digest = doc["position"], doc["sha256"]
                except (ValueError, TypeError, KeyError):
                    continue
                if isinstance(pos, int) and isinstance(digest, str):
                    got[pos] = digest
            self._journal = got
        return self._journal

    def _journal_append(self, doc: dict) -> None:
        """One line, appended and fsynced (the folder too when the file is new)."""
        path = self.folder / JOURNAL
        with self._appending, atomic.os_errors(path):
            # a regular file of one name, never through a link, never a FIFO's wait
            if files.append(path, (json.dumps(doc, sort_keys=True) + "\n").encode(),
                            self.durable) and self.durable:
                atomic.fsync_path(self.folder)
            if self._journal is not None:
                self._journal[doc["position"]] = doc["sha256"]

    def shard_path(self, position: int) -> Path:
        return self._paths(position)[0]

    def done(self) -> int:
        """How many rows have a key file (a complete shard)."""
        return len(list(self.shards.glob("r*.json")))

    def read(self, position: int) -> pl.DataFrame:
        return pl.read_parquet(files.checked(self._paths(position)[0]))

    def rows(self, positions: list[int]) -> Iterator[tuple[int, pl.DataFrame]]:
        for pos in positions:
            yield pos, self.read(pos)

    def remove(self) -> None:
        self.unlock()
        shutil.rmtree(self.folder, ignore_errors=True)


def disproves(frame: pl.DataFrame, gen, expect: dict, plan=None) -> str:
    """Why the records are not the row and the boards ``expect`` names ("" when they
    are): every key column holds the row's key, the board indexes are exactly [first,
    first + count) in order, and, with ``plan``, every column the plan fixes
    (``gen.expected_columns``: the stream seeds, the board size ...) holds its value."""
    first, count = expect["first"], expect["count"]
    if frame.height != count:
        return f"it holds {frame.height} records, not {count}"
    try:
        for name, value in zip(gen.key_fields, expect["key"], strict=True):
            if frame.get_column(name).ne_missing(value).any():
                return f"its records' {name} is not the row's"
        index = frame.get_column(gen.index_field)
        if index.to_list() != list(range(first, first + count)):
            return f"its records' {gen.index_field} are not boards {first}..{first + count - 1}"
        if plan is not None:
            for name, want in gen.expected_columns(plan, first, count).items():
                got = frame.get_column(name).to_numpy()
                if not np.array_equal(got, np.broadcast_to(np.asarray(want, dtype=got.dtype),
                                                           got.shape)):
                    return f"its records' {name} are not the row's"
    except (pl.exceptions.ColumnNotFoundError, ValueError, TypeError):
        return "its records lack a column of the record"
    return ""


def shard_key(gen, plan, n: int, start: int | None = None) -> dict:
    """What a row's shard must hold for this run to reuse it: the generator and its
    versions, the row, its snapshot, the board range [first, first + count) of N = n
    (``capabilities.board_span``: [0, n) unless the generator starts before 0) and the record
    schema (with the row count and the bytes' sha256 that ``save`` adds)."""
    schema = [(f.name, f.dtype) for f in gen.record]
    first, count = board_span(gen, n, start)
    return {"generator": gen.name, "metric_version": gen.metric_version,
            "generator_version": gen.generator_version, "key": list(gen.key(plan)),
            "snapshot": snapshot_digest(gen.snapshot(plan)), "n": n, "first": first, "count": count,
            "schema": snapshot_digest({"record": schema})}


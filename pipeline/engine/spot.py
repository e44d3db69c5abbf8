"""A resumed run proves the shards it reuses (decisions 215, 285; issue 29 item 2).

A shard is reused only when its key file, its bytes and its records name the row
(``store.shards.ShardStore.inspect``: key columns, board indexes, and the columns the plan
fixes, such as the stream seeds and the board size), and when its bytes are those the run's
journal recorded when the shard was written. On top of that, boards of every reused shard
are made again and compared with their records, timing fields excepted:

- ``spot`` (the default): ``SPOT_BOARDS`` boards per shard, at positions drawn from a
  secret drawn for this resume (``Check.nonce``) and the shard's digest: the same nonce
  picks the same boards (the manifest records it, so the check can be replayed), and
  whoever wrote the folder before the resume cannot know which.
- ``full`` (``--verify full``): every board of every reused shard, one block per shard.

A shard that fails any of it is recomputed, and the resume names it and says why. What
each mode proves, and against whom: docs/audit.md ("What a resume proves").

The boards are made in a process of its own, as ``CompileOnce`` compiles: the client never
loads the kernels. The child reads each shard itself (its bytes checked again against the
digest the client proved) and returns one verdict per shard, so neither process holds more
than one shard's records at a time.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
import random
import secrets
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from boardcore import files

from .. import capabilities
from ..analysis.records import digest_fields
from ..errors import RunError
from ..options import SPOT_BOARDS, VERIFY_MODES
from ..store.shards import ShardStore
from . import interrupts

# the child reads this process's import path first (a generator named module:attribute
# may live on a path only the client has, as multiprocessing's spawn passes it on)
CODE = ("import pickle, sys; path, blob = pickle.load(sys.stdin.buffer); "
        "sys.path[:0] = [p for p in path if p not in sys.path]; "
        "sys.stdout.buffer.write(pickle.dumps(pickle.loads(blob)()))")


@dataclass(frozen=True)
class Check:
    """How a resume checks the boards of the shards it reuses: ``mode`` (``VERIFY_MODES``
    of ``--verify``) and,
    for ``spot``, the nonce its positions are drawn from (fresh per resume)."""

    mode: str = "spot"
    nonce: bytes = field(default_factory=lambda: secrets.token_bytes(16))

    def boards(self, position: int, digest: str, count: int) -> list[int]:
        """The rows of a shard of ``count`` records to make again: every row (``full``),
        else ``SPOT_BOARDS`` distinct rows drawn from the nonce, the position and the
        shard's sha256."""
        if self.mode == "full":
            return list(range(count))
        seed = hashlib.sha256(self.nonce + f":{position}:{digest}".encode()).digest()
        return sorted(random.Random(seed).sample(range(count), min(SPOT_BOARDS, count)))

    def facts(self) -> dict:
        """What the manifest records of the check (enough to replay the picks)."""
        if self.mode == "full":
            return {"mode": "full", "boards": "every board of every reused shard"}
        return {"mode": "spot", "boards_per_shard": SPOT_BOARDS, "nonce": self.nonce.hex()}

    def __post_init__(self):
        if self.mode not in VERIFY_MODES:
            raise ValueError(f"check mode {self.mode!r} is not one of {VERIFY_MODES}")


@dataclass(frozen=True)
class Shard:
    """One reused shard's check, as the child runs it."""

    plan: Any
    first: int  # board index of the shard's first record
    path: str
    digest: str  # sha256 of the bytes the client proved
    rows: tuple[int, ...]  # which records to make again


def _verdict(gen, cols: list[str], shard: Shard) -> str:
    """Runs in the child: "" when the shard's bytes are still those proved and each record
    of ``shard.rows`` equals its board made again; else why not."""
    from .tasks import run_block

    raw = files.read_bytes(shard.path, files.DATA)  # a regular file, never a link
    if hashlib.sha256(raw).hexdigest() != shard.digest:
        return "its bytes changed while it was checked"
    stored = pl.read_parquet(raw).select(cols)
    if list(shard.rows) == list(range(stored.height)):  # every board: the row as one block
        made = run_block(gen, shard.plan, shard.first, stored.height).select(cols)
        if made.equals(stored):
            return ""
        pairs = [(r, made.slice(r, 1)) for r in shard.rows]
    else:
        pairs = [(r, run_block(gen, shard.plan, shard.first + r, 1).select(cols))
                 for r in shard.rows]
    bad = [shard.first + r for r, made in pairs if not stored.slice(r, 1).equals(made)]
    if not bad:
        return ""
    return f"board {bad[0]} made again differs from its record" + \
        (f" ({len(bad)} boards differ)" if len(bad) > 1 else "")


def _check(gen, cols: list[str], shards: list[Shard]) -> list[str]:
    """Runs in the child: the verdict of each shard, in order."""
    capabilities.warm(gen)
    return [_verdict(gen, cols, s) for s in shards]


def _boards(gen, wanted: list[tuple[Any, int]]) -> list[pl.DataFrame]:
    """Runs in the child: the record of each (plan, board index)."""
    from .tasks import run_block

    capabilities.warm(gen)
    return [run_block(gen, plan, i, 1) for plan, i in wanted]


def _child(call: Callable[[], Any]) -> Any:
    """``call()`` in a child process; its result."""
    blob = pickle.dumps((sys.path, pickle.dumps(call)))
    with subprocess.Popen([sys.executable, "-c", CODE], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        try:
            while True:  # a wait point (``interrupts``): the child is killed on a signal
                interrupts.check()
                try:  # the input goes with the first call only (a retry may not resend it)
                    out, err = proc.communicate(blob, timeout=interrupts.SLICE_S)
                    break
                except subprocess.TimeoutExpired:
                    blob = None
        except BaseException:
            proc.kill()
            raise
    if proc.returncode != 0:
        lines = err.decode(errors="replace").strip().splitlines()
        raise RunError("the boards that check the reused rows could not be made: "
                       + (lines[-1] if lines else f"exit {proc.returncode}"))
    return pickle.loads(out)


def regenerate(gen, wanted: list[tuple[Any, int]]) -> list[pl.DataFrame]:
    """The records of the boards ``wanted``, made in a child process."""
    return _child(functools.partial(_boards, gen, wanted)) if wanted else []


def reusable(gen, store: ShardStore, plans: Sequence[Any], expects: Sequence[dict],
             announce: Callable[[str], None] | None = None,
             check: Check | None = None) -> list[int]:
    """Positions whose shards prove their row and whose boards ``check`` picks, made again,
    equal their records; every other existing shard is named through ``announce`` with the
    reason (it is then recomputed)."""
    check = check or Check()
    held: dict[int, Shard] = {}
    refused: dict[int, str] = {}
    for pos, (plan, expect) in enumerate(zip(plans, expects)):
        frame, why = store.inspect(pos, expect, gen, plan)
        if frame is None:
            if why:
                refused[pos] = why
            continue
        digest = store.journal()[pos]  # inspect proved the bytes are these
        held[pos] = Shard(plan, expect["first"], str(store.shard_path(pos)), digest,
                          tuple(check.boards(pos, digest, frame.height)))
    if held:
        verdicts = _child(functools.partial(_check, gen, digest_fields(gen.record),
                                            list(held.values())))
        for pos, why in zip(list(held), verdicts):
            if why:
                refused[pos] = why
                del held[pos]
    if announce is not None:
        for pos, why in sorted(refused.items()):
            announce(f"the shard of row {gen.label(gen.key(plans[pos]))} is not reused ({why});"
                     " it is computed again")
    return sorted(held)

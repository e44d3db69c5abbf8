"""A resumed run proves the shards it reuses (decision 215; issue 29 item 2).

A shard is reused only when its key file, its bytes and its records name the row
(``store.shards.ShardStore.inspect``: key columns, board indexes, and the columns the plan
fixes, such as the stream seeds and the board size). On top of that, one board of every
reused shard, picked here at random (``random.SystemRandom``: a forger cannot know which),
is made again and compared with its record, timing fields excepted. A shard that fails any
of it is recomputed, and the resume names it and says why.

The board is made in a process of its own, as ``CompileOnce`` compiles: the client never
loads the kernels.
"""

from __future__ import annotations

import functools
import pickle
import random
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from ..analysis.records import digest_fields
from ..errors import RunError
from ..store.shards import ShardStore
from . import interrupts

# the child reads this process's import path first (a generator named module:attribute
# may live on a path only the client has, as multiprocessing's spawn passes it on)
CODE = ("import pickle, sys; path, blob = pickle.load(sys.stdin.buffer); "
        "sys.path[:0] = [p for p in path if p not in sys.path]; "
        "sys.stdout.buffer.write(pickle.dumps(pickle.loads(blob)()))")


def _boards(gen, wanted: list[tuple[Any, int]]) -> list[pl.DataFrame]:
    """Runs in the child: the record of each (plan, board index)."""
    from .tasks import run_block

    gen.warm()
    return [run_block(gen, plan, i, 1) for plan, i in wanted]


def regenerate(gen, wanted: list[tuple[Any, int]]) -> list[pl.DataFrame]:
    """The records of the boards ``wanted``, made in a child process."""
    if not wanted:
        return []
    blob = pickle.dumps((sys.path, pickle.dumps(functools.partial(_boards, gen, wanted))))
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


def reusable(gen, store: ShardStore, plans: Sequence[Any], expects: Sequence[dict],
             announce: Callable[[str], None] | None = None,
             pick: random.Random | None = None) -> list[int]:
    """Positions whose shards prove their row and whose picked board, made again, equals
    its record; every other existing shard is named through ``announce`` with the reason
    (it is then recomputed)."""
    pick = pick or random.SystemRandom()
    cols = digest_fields(gen.record)
    held: dict[int, tuple[int, pl.DataFrame]] = {}  # position -> (board, its stored record)
    refused: dict[int, str] = {}
    for pos, (plan, expect) in enumerate(zip(plans, expects)):
        frame, why = store.inspect(pos, expect, gen, plan)
        if frame is None:
            if why:
                refused[pos] = why
            continue
        row = pick.randrange(frame.height)
        held[pos] = (expect["first"] + row, frame.slice(row, 1).select(cols))
    fresh = regenerate(gen, [(plans[pos], i) for pos, (i, _) in held.items()])
    for (pos, (i, stored)), made in zip(list(held.items()), fresh):
        if not stored.equals(made.select(cols)):
            refused[pos] = f"board {i} made again differs from its record"
            del held[pos]
    if announce is not None:
        for pos, why in sorted(refused.items()):
            announce(f"the shard of row {gen.label(gen.key(plans[pos]))} is not reused ({why});"
                     " it is computed again")
    return sorted(held)

"""Rows into tasks by expected cost, not by row (decision 288).

By default (no ``--seeds-per-task``) the engine splits each row's boards into tasks so that
every task carries about the same expected work: the run's total cost over
``TASKS_PER_WORKER`` tasks per worker is the target, a row costing k targets becomes k
tasks of equal board counts, and the tasks are submitted heaviest first (longest
processing time first), a row's tasks together. The cost of a row is its boards times a
board's cost: the seconds a board of that row took in the newest earlier run of the same
output folder that recorded them (``TIMINGS``, written beside the records), else the
generator's ``row_cost`` estimate (scaled to seconds by the rows both know). Only the
split depends on the costs; the records never do (a row is sorted by board index).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boardcore import files

TASKS_PER_WORKER = 4  # enough tasks per worker that the last ones even out the variance
MIN_BOARDS = 8  # no task smaller (its round trip would cost more than its boards)
TIMINGS = "row_seconds.json"  # per row: boards generated and their summed seconds
SCAN_RUNS = 50  # the newest run folders looked at for an earlier run's timings


@dataclass(frozen=True)
class Block:
    position: int  # index of the row's plan in the submitted list
    first: int
    count: int

    def key(self, name: str) -> str:
        return f"{name}-block-{self.position}-{self.first}-{self.count}"


def fixed(n_rows: int, n: int, size: int | None, start: int = 0) -> list[Block]:
    """Each row's boards [start, n) in tasks of ``size`` boards (None: a whole row)."""
    size = size or n - start
    return [Block(pos, first, min(size, n - first))
            for pos in range(n_rows) for first in range(start, n, size)]


def by_cost(costs: Sequence[float], n: int, start: int, workers: int,
            per_worker: int = TASKS_PER_WORKER, min_boards: int = MIN_BOARDS) -> list[Block]:
    """Rows of per-board ``costs`` (any unit) split into tasks of about the same cost,
    about ``per_worker`` tasks per worker in all (a row is never merged with another),
    heaviest task first; a row's tasks keep their board order."""
    boards = n - start
    rows = [max(float(c), 0.0) * boards for c in costs]
    total = sum(rows)
    target = total / max(1, per_worker * max(1, workers))
    tasks: list[tuple[float, Block]] = []
    for pos, cost in enumerate(rows):
        parts = 1 if target <= 0 else math.ceil(cost / target - 1e-9)
        parts = max(1, min(parts, boards // max(1, min_boards)))
        size = -(-boards // parts)
        tasks += [(cost / parts, Block(pos, first, min(size, n - first)))
                  for first in range(start, n, size)]
    tasks.sort(key=lambda t: (-t[0], t[1].position, t[1].first))  # a row's tasks together
    return [b for _, b in tasks]


# ------------------------------------------------------------------- the costs of rows

def estimates(gen, plans: Sequence[Any]) -> list[float]:
    """The generator's own per-board estimate of each plan (``Generator.row_cost``)."""
    return [float(gen.row_cost(p)) for p in plans]


def costs(gen, plans: Sequence[Any], runs_dir: Path | None, table_hash: str | None = None
          ) -> tuple[list[float], str]:
    """Per-board cost of each plan and where it came from ("timings of run <id>",
    "estimate"): the seconds per board of the newest earlier run in ``runs_dir`` that
    recorded them (one of ``table_hash`` first), the rows it lacks from the estimate
    scaled by the median ratio of the rows it has."""
    guess = estimates(gen, plans)
    found = previous(gen, runs_dir, table_hash) if runs_dir is not None else None
    if not found:
        return guess, "estimate"
    run_id, seconds = found
    keys = [gen.format_key(gen.key(p)) for p in plans]
    known = [(seconds[k], g) for k, g in zip(keys, guess) if k in seconds and g > 0]
    if not known:
        return guess, "estimate"
    scale = statistics.median(s / g for s, g in known)
    return ([seconds.get(k, g * scale) for k, g in zip(keys, guess)],
            f"timings of run {run_id}")


def previous(gen, runs_dir: Path, table_hash: str | None) -> tuple[str, dict] | None:
    """(run id, {formatted key: seconds per board}) of the newest finished run under
    ``runs_dir`` with timings of this generator, one of ``table_hash`` preferred."""
    try:
        folders = sorted((p for p in runs_dir.iterdir()
                          if p.is_dir() and not p.name.startswith(".")), reverse=True)
    except OSError:
        return None
    fallback = None
    for folder in folders[:SCAN_RUNS]:
        got = read(folder / TIMINGS)
        if got is None or got.get("generator") != gen.name:
            continue
        per = {r["key"]: r["seconds"] / r["boards"] for r in got["rows"] if r["boards"] > 0}
        if got.get("table_hash") == table_hash:
            return folder.name, per
        fallback = fallback or (folder.name, per)
    return fallback


def read(path: Path) -> dict | None:
    """A timings file, or None when it is missing or not one (never an error: the split
    falls back to the estimate)."""
    try:
        got = files.read_json(path)  # a regular file, bounded, never through a link
        rows = got["rows"]
        if not all(isinstance(r["key"], str) and float(r["seconds"]) >= 0
                   and int(r["boards"]) >= 0 for r in rows):
            return None
        return got
    except (OSError, ValueError, KeyError, TypeError, files.Refused):
        return None


def write(folder: Path, gen, plans: Sequence[Any], seconds: dict[int, tuple[int, float]],
          table_hash: str | None) -> None:
    """The run's timings file in its (not yet final) ``folder``: per computed row, its
    boards and the seconds its blocks took on the workers (``seconds``: position ->
    (boards, seconds)). A new name in a folder of the run's own: no temporary is needed."""
    rows = [{"key": gen.format_key(gen.key(plans[pos])), "boards": b, "seconds": round(s, 4)}
            for pos, (b, s) in sorted(seconds.items())]
    text = json.dumps({"generator": gen.name, "table_hash": table_hash, "rows": rows})
    files.create(folder / TIMINGS, text.replace("}, {", "},\n{") + "\n")

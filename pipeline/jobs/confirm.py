"""Selection and confirmation never share boards (issue 40 item 1).

Tune ranks candidates on the audit's boards; a proposal chosen there is then audited on
boards it was never ranked on, and only one that holds every hard line there, each share
line's interval on the passing side, is called the row's fix. The boards (``window``):

- a change that gives the row new seeds (tilegen bumps the revision, so the game ships
  other boards): the new row's own audit boards [first_index, N), exactly the boards the
  game will ship and a re-audit measures;
- otherwise boards [N, N + CONFIRM_FACTOR * N) of the same seed stream (minegen: N 256
  confirms on boards 256-1023, the boards an audit at N 1,024 adds), within the
  generator's ``max_boards``.

Each row's proposal is confirmed with up to ``ALTERNATES`` next-ranked candidates in one
graph, so a proposal that fails there is replaced by the best one that holds.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..capabilities import lineage
from ..options import AuditOptions
from ..store import runs
from .evaluate import run_batch

CONFIRM_FACTOR = 3  # fresh boards per row: 3 x N (bounded by the generator's max_boards)
ALTERNATES = 2  # candidates confirmed behind each proposal, in rank order


def window(gen, n: int, renamed: bool) -> tuple[int | None, int]:
    """(first, end) of the confirmation boards: (None, N) is the row's own audit span."""
    if renamed:
        return None, n
    return n, min(gen.max_boards, n + CONFIRM_FACTOR * n)


def words(gen, n: int, renamed: bool) -> str:
    first, end = window(gen, n, renamed)
    if first is None:
        return f"the {n} boards the changed row ships and audits (new seeds)"
    return f"boards {first}-{end - 1} ({end - first} per row, never ranked on)"


def confirm(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path,
            sets: dict[tuple, list[dict[tuple, dict]]], progress) -> dict[tuple, list]:
    """``sets``: {row: [candidate sets in rank order]}, each set {key: its change} (one row,
    or every row of a joint change). -> {row: [for each set, {key: the evaluated candidate
    on fresh boards}]}. Every set is audited on the proposed tables of that set alone, so a
    renamed row (a new revision) is audited with the seeds it will ship with."""
    plans, meta, spans = [], [], []
    with tempfile.TemporaryDirectory(prefix="confirm-", dir=folder) as scratch:
        for row, options in sets.items():
            for j, changes in enumerate(options):
                root = Path(scratch) / f"{len(spans)}"
                gen.patch_tables(catalog, root, changes)
                proposed = gen.load(str(root))
                later = {lineage(gen, gen.key(p)): p for p in gen.plans(proposed, [])}
                for key, change in changes.items():
                    plan = later[lineage(gen, key)]
                    renamed = gen.key(plan) != key
                    spans.append(window(gen, a.n, renamed))
                    meta.append(((row, j, key), {"change": change, "order": j,
                                                 "renamed": renamed, "row_key": key}))
                    plans.append(plan)
    out: dict[tuple, list] = {row: [{} for _ in options] for row, options in sets.items()}
    for span in sorted(set(spans), key=str):  # one graph per board window
        pick = [i for i, s in enumerate(spans) if s == span]
        got, _ = run_batch(gen, a, base, folder, f"confirm-{span[0]}", {m: [] for m in
                           (meta[i][0] for i in pick)}, [meta[i] for i in pick],
                           [plans[i] for i in pick], progress, first=span[0], n=span[1])
        for (row, j, key), (c,) in got.items():
            out[row][j][key] = {**c, "boards": words(gen, a.n, c["renamed"])}
    return out

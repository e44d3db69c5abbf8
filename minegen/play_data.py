"""The data of the Minesweeper play page (``play_page``) and the Python answers its rules
(``runtime/minesweeper.js``) are held equal to by the node test.

``board_data(board)``: the JSON-ready board the page and the JS read (SPEC §4 stage 5: size,
mines, fog, spawn, the opening R0; the record's key fields; the tier solver's settings).
``reference(board)``: along one scripted play from R0, what the Python side answers: the
cells each dig opens (``cascade``, SPEC §5 operator 1) and the hint of every state
(``hint``: the difficulty-tier solver ``_kernels.tiers.solve_tiers`` run from the open
cells). Cells are ``[x, y]`` lists, row-major; a hint cell is ``[x, y, tier]``.

Fog as the player sees it (SPEC §5, A4): a fog cell is visibly fog and known safe, and
once open it shows no number; the data lists the fog cells, the page draws them so.
"""

from __future__ import annotations

import numpy as np

from ._kernels import compiling
from ._kernels.attempt import workspace
from ._kernels.board import neighbour_table, zero_closure
from ._kernels.tiers import solve_tiers
from .codes import ENUM_CAP, W8, Defect, Tier
from .errors import DefectError
from .generate import Board, generate
from .guesses import TIER_WORDS
from .guesses import f1_tier as _record_f1_tier
from .table_model import Tables

FORMAT = 1  # the layout of ``board_data`` / ``reference``; the JS reads format 1
RECORD_KEYS = ("level_index", "node_depth", "row_level", "row_depth", "seed_index", "sigma",
               "stream_seed", "mines", "safe", "fog_cells", "fog_regions_requested",
               "fog_regions_achieved", "inferability", "inferability_core",
               "inferability_target", "solver_rules", "exit", "tier", "guess_share")
MAX_STEPS = 60  # states per scripted play, the start included
CLICKS_PER_STEP = 6  # digs per step: the first hint cells of the lowest tier


def make_board(level: int, depth: int, index: int = 0, tables: Tables | None = None) -> Board:
    """Board ``index`` of row (level, depth), as ``minegen generate L D --index I`` makes it,
    with the difficulty tiers in its record (the page shows the board's tier)."""
    return generate(level, depth, tables=tables, index=index, tiers=True)


def f1_tier(board: Board) -> Tier:
    """F1's own tier: its fixpoint is R-infinity (SPEC §5; ``attempt._attempt``)."""
    return _record_f1_tier(board.record)


def board_data(board: Board) -> dict:
    """The board as the page and ``runtime/minesweeper.js`` (``makeBoard``) read it.

    ``stream_seed`` is a string: a uint64 does not fit a JavaScript number."""
    r = board.record
    f1 = f1_tier(board)
    return {
        "format": FORMAT, "width": board.width, "height": board.height,
        "spawn": list(board.spawn), "mines": board.cells(board.mines),
        "fog": board.cells(board.fog), "opening": board.cells(board.r0),
        "variants": list(board.variants),
        "record": {k: str(r[k]) if k == "stream_seed" else r[k] for k in RECORD_KEYS},
        "command": f"minegen generate {r['level_index']} {r['node_depth']} "
                   f"--index {r['seed_index']}",
        "solver": {"f1_tier": int(f1), "enum_cap": ENUM_CAP, "tiers": [
            {"tier": int(t), "name": t.name.lower(), "words": TIER_WORDS[t][0],
             "says": TIER_WORDS[t][1], "in_inferability": t <= f1} for t in Tier]},
    }


def _flat(board: Board, xy) -> int:
    x, y = xy
    if not (0 <= x < board.width and 0 <= y < board.height):
        raise ValueError(f"cell {list(xy)} is off the {board.width} x {board.height} board")
    return y * board.width + x


def _cells(board: Board, flat, tiers=None) -> list[list[int]]:
    """Flat cells -> [[x, y(, tier)], ...] row-major."""
    out = []
    for c in sorted(int(c) for c in flat):
        xy = [c % board.width, c // board.width]
        out.append(xy + [int(tiers[c])] if tiers is not None else xy)
    return out


def cascade(board: Board, revealed: np.ndarray, xy) -> list[list[int]]:
    """Dig safe cell ``xy``: open it and its zero-flood closure (SPEC §5 operator 1, the
    kernel that makes R0) in ``revealed`` (flat 0/1, updated). Returns the cells newly
    opened. Fog is never 0 (A4 safe_nonzero, asserted at generation), so no cascade
    passes through fog."""
    c = _flat(board, xy)
    if board.mines.reshape(-1)[c]:
        raise ValueError(f"cell {list(xy)} is a mine: dig only safe cells here")
    n = board.width * board.height
    start = np.zeros(n, dtype=np.int8)
    start[c] = 1
    reach = np.zeros(n, dtype=np.int8)
    zero_closure(start, board.mines.reshape(-1).astype(np.int8),
                 board.numbers.reshape(-1), neighbour_table(board.width, board.height),
                 reach, np.zeros(n, dtype=np.int32))
    new = np.flatnonzero((reach == 1) & (revealed == 0))
    revealed[new] = 1
    return _cells(board, new)


def hint(board: Board, revealed: np.ndarray) -> dict:
    """The tier solver from the open cells ``revealed`` (flat 0/1) as R, K empty (SPEC §5's
    visible state; tiers 3-4 add the mine count). ``safe`` / ``mines``: closed cells it opens
    / marks, with the tier whose closure first reaches them; ``guess_forced``: safe cells
    are closed and no tier opens one."""
    w, h = board.width, board.height
    work = workspace(w, h)
    work.i8[W8.MINE] = board.mines.reshape(-1)
    work.i8[W8.NUM] = board.numbers.reshape(-1)
    work.i8[W8.FOG] = board.fog.reshape(-1)
    work.i8[W8.R0] = revealed
    if not solve_tiers.overloads:  # first call: a compile or a cache load
        with compiling():
            code = solve_tiers(w, h, work, f1_tier(board))
    else:
        code = solve_tiers(w, h, work, f1_tier(board))
    if code != Defect.NONE:
        raise DefectError(f"tier solver: {Defect(code).name} on a play state (a defect)")
    opened = work.i8[W8.TIER].astype(np.int64) - 1  # -1: not opened
    known = work.i8[W8.KNOWN].astype(np.int64) - 1
    safe = np.flatnonzero((opened >= 0) & (revealed == 0))
    closed_safe = int(board.record["safe"]) - int(revealed.sum())
    return {
        "safe": _cells(board, safe, opened), "mines": _cells(board, np.flatnonzero(known >= 0),
                                                              known),
        "by_tier": [int((opened[safe] == t).sum()) for t in Tier],
        "cleared": closed_safe == 0, "guess_forced": closed_safe > 0 and len(safe) == 0,
    }


def reference(board: Board, max_steps: int = MAX_STEPS,
              clicks_per_step: int = CLICKS_PER_STEP) -> dict:
    """The Python answers along one scripted play from R0: each step digs the first
    ``clicks_per_step`` hint cells of the lowest tier (row-major), or, with a guess forced,
    the first closed safe cell (a lucky guess, ``kind`` "guess"); up to ``max_steps``
    states. Per step: the digs, the cells each opened, the hint after it. Deterministic:
    the same board gives the same answers."""
    revealed = board.r0.reshape(-1).astype(np.int8)
    view = hint(board, revealed)
    steps = [{"kind": "start", "clicks": [], "opened": [], "hint": view}]
    safe_flat = np.flatnonzero(~board.mines.reshape(-1))
    while len(steps) < max_steps and not view["cleared"]:
        if view["safe"]:
            low = min(t for _, _, t in view["safe"])
            clicks = [[x, y] for x, y, t in view["safe"] if t == low][:clicks_per_step]
            kind = "hint"
        else:
            clicks = _cells(board, [next(c for c in safe_flat if not revealed[c])])
            kind = "guess"
        opened = [cascade(board, revealed, xy) for xy in clicks]
        view = hint(board, revealed)
        steps.append({"kind": kind, "clicks": clicks, "opened": opened, "hint": view})
    return {"numbers": board.numbers.reshape(-1).tolist(), "steps": steps,
            "cleared": view["cleared"]}


def fixture(specs, tables: Tables | None = None) -> dict:
    """The node test's fixture for boards ``specs`` = [(level, depth, index), ...]."""
    boards = []
    for level, depth, index in specs:
        board = make_board(level, depth, index, tables)
        boards.append({"data": board_data(board), **reference(board)})
    return {"format": FORMAT, "tier_names": [t.name.lower() for t in Tier], "boards": boards}


__all__ = ["TIER_WORDS", "board_data", "cascade", "fixture", "hint", "make_board",
           "reference"]

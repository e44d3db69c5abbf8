"""Text drawing of a board for people (the CLI's ``generate --format text``)."""

from __future__ import annotations

import textwrap

from .generate import Board
from .table_model import region_target_size

LEGEND = (
    "legend: ' * ' mine   ' . ' zero   ' 3 ' number   '~3~' fog (number hidden from the player)\n"
    "        '[.]' spawn 3x3 cell   right panel: what the F1 player (its rule-bound solver)\n"
    "        opens without a guess (R-inf): '   ' opened, ' # ' left closed: a mine, or a\n"
    "        guess for the F1 player (a stronger tier may still prove it: --play shows which)"
)


def _cell(board: Board, x: int, y: int, spawn) -> str:
    if board.mines[y, x]:
        core = "*"
    else:
        n = int(board.numbers[y, x])
        core = "." if n == 0 else str(n)
    if board.fog[y, x]:
        return f"~{core}~"
    if spawn[y, x]:
        return f"[{core}]"
    return f" {core} "


def draw(board: Board) -> str:
    spawn = board.spawn_cells()
    head = "   " + "".join(f"{x:>3}" for x in range(board.width))
    lines = [f"layout{' ' * (3 * board.width)}  solver view", head + "   " + head[3:]]
    for y in range(board.height):
        left = "".join(_cell(board, x, y, spawn) for x in range(board.width))
        right = "".join(
            "   " if board.revealed[y, x] else " # " for x in range(board.width)
        )
        lines.append(f"{y:>3}{left}   {right}")
    return "\n".join(lines) + "\n" + LEGEND


def draw_record(record: dict) -> str:
    width = max(len(k) for k in record)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in record.items())


def fog_summary(record: dict) -> str:
    """One line on the row's fog: what was asked, what was placed, and why not (SPEC §4).

    A shortfall is silent in the API (A4 EC2); a person reading a board is told here.
    """
    asked = record["fog_regions_requested"]
    if asked == 0:
        return "fog: none requested by this row (fog_region_count = 0)"
    if record["pool_empty"]:
        return (f"fog: {asked} region(s) requested, but no variant is unlocked for this level "
                "and biome (empty pool: no fog, silently)")
    t = region_target_size(record["width"], record["height"], record["fog_target_ratio"], asked)
    placed = record["fog_regions_achieved"]
    line = (f"fog: {placed} of {asked} region(s) of {t} cells placed, "
            f"{record['fog_cells']} fog cells")
    if placed < asked:
        line += (f"; shortfall {asked - placed}: no 4-connected component of {t} eligible cells "
                 "(safe, numbered, outside the spawn and the reach domain) was left. Expected "
                 "on small sparse rows (docs/design.md, line B); the constraint is never relaxed.")
    return textwrap.fill(line, width=88, subsequent_indent="     ")

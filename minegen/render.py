"""Text drawing of a board for people (the CLI's ``generate --format text``)."""

from __future__ import annotations

from .generate import Board

LEGEND = (
    "legend: ' * ' mine   ' . ' zero   ' 3 ' number   '~3~' fog (number hidden from the player)\n"
    "        '[.]' spawn 3x3 cell   right panel: what an informed player opens without a\n"
    "        guess (F1 R-inf): '   ' opened, ' # ' left closed (a guess or a deduced mine)"
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

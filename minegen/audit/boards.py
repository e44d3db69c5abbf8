"""minegen boards drawn as small inline SVG for the report's drill-down.

``exhibit(plan, index)`` makes board ``index`` of a row again (the audit's own seed:
derive_at("board_gen", sigma(L, D) + index)) and draws it; it runs on a worker, where the
kernels are loaded. What a cell shows, the same as the text view (``minegen generate``):
a mine (dark disc), its number, fog (grey, the number the player does not see in grey
italics), the 3x3 spawn (outlined), and the safe cells an informed player cannot open
without a guess (amber). Every cell carries ``data-cell="x,y"`` and ``data-kind`` (mine,
zero, number, fog, closed, ...) so a test reads the picture back.
"""

from __future__ import annotations

import html


CELL = 12
COLORS = {"mine": "#5d1010", "closed": "#ffd166", "fog": "#b0b0b0", "open": "#f7f7f7"}


def kinds(board) -> dict[tuple[int, int], set[str]]:
    """(x, y) -> what the cell is, read from the board's layers."""
    spawn = board.spawn_cells()
    out = {}
    for y in range(board.height):
        for x in range(board.width):
            k = set()
            if board.mines[y, x]:
                k.add("mine")
            else:
                k.add("zero" if int(board.numbers[y, x]) == 0 else "number")
                if not board.revealed[y, x]:
                    k.add("closed")
            if board.fog[y, x]:
                k.add("fog")
            if spawn[y, x]:
                k.add("spawn")
            out[(x, y)] = k
    return out


def board_svg(board, title: str) -> str:
    w, h = board.width * CELL, board.height * CELL
    vw = max(w + 2, 180)  # room for the legend on narrow boards
    parts = [f'<svg viewBox="0 0 {vw} {h + 40}" width="{vw}" height="{h + 40}" '
             f'class="board" role="img" font-family="system-ui, sans-serif" font-size="9">',
             f"<title>{html.escape(title)}</title>"]
    for (x, y), k in sorted(kinds(board).items(), key=lambda kv: (kv[0][1], kv[0][0])):
        px, py = 1 + x * CELL, 1 + y * CELL
        fill = (COLORS["mine"] if "mine" in k else COLORS["fog"] if "fog" in k
                else COLORS["closed"] if "closed" in k else COLORS["open"])
        parts.append(f'<rect x="{px}" y="{py}" width="{CELL}" height="{CELL}" fill="{fill}" '
                     f'stroke="#ddd" stroke-width="0.5" data-cell="{x},{y}" '
                     f'data-kind="{" ".join(sorted(k))}"/>')
        n = int(board.numbers[y, x])
        if "mine" not in k and n:
            style = ' fill="#555" font-style="italic"' if "fog" in k else ""
            parts.append(f'<text x="{px + CELL / 2:g}" y="{py + CELL - 3}" '
                         f'text-anchor="middle"{style}>{n}</text>')
    sx, sy = board.spawn
    parts.append(f'<rect x="{1 + (sx - 1) * CELL}" y="{1 + (sy - 1) * CELL}" '
                 f'width="{3 * CELL}" height="{3 * CELL}" fill="none" stroke="#1f77b4" '
                 f'stroke-width="1.5" data-kind="spawn-outline"/>')
    legend = [("mine", COLORS["mine"]), ("fog", COLORS["fog"]),
              ("needs a guess", COLORS["closed"]), ("spawn", "none")]
    for k, (label, color) in enumerate(legend):  # two per line
        x, y = 1 + (k % 2) * 90, h + 8 + (k // 2) * 14
        stroke = ' stroke="#1f77b4"' if color == "none" else ""
        parts.append(f'<rect x="{x}" y="{y}" width="9" height="9" fill="{color}"{stroke}/>'
                     f'<text x="{x + 12}" y="{y + 8}">{label}</text>')
    parts.append("</svg>")
    return "".join(parts)


def exhibit(plan, index: int, tiers: bool = True) -> str:
    """Board ``index`` of ``plan``'s row, as the audit made it, drawn (through the kernel
    the audit used: ``tiers`` must match, or a worker compiles a second kernel)."""
    import warnings

    from ..errors import DegradedBoardWarning, IllegalBoardWarning
    from ..generate import generate_planned
    from boardcore.streams import derive_at

    from ..rng import BOARD_GEN_STREAM, sigma

    sig = sigma(plan.level, plan.depth)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DegradedBoardWarning, IllegalBoardWarning))
        board = generate_planned(plan, derive_at(BOARD_GEN_STREAM, sig + index), index, sig,
                                 tiers=tiers)
    return board_svg(board, f"row ({plan.level}, {plan.depth}), board {index}")

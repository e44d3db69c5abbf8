"""minegen boards drawn as small inline SVG for the report's drill-down.

``exhibit(plan, index)`` makes board ``index`` of a row again (the audit's own seed:
derive_at("board_gen", sigma(L, D) + index)) and draws it; it runs on a worker, where the
kernels are loaded. What a cell shows, the same as the text view (``minegen generate``):
a mine (dark), its number, fog (grey, the number the player does not see in grey
italics), the 3x3 spawn (outlined), and the safe cells F1's player cannot open without a
guess (``closed``), each coloured by the tier that first proves it (``tier-3``,
``tier-4``: a guess for the F1 player only) or, when no tier does, as a guess even for
tier 4 (``minegen.guesses`` says which claim is which); on a board missing fog regions
(line B) also the cells eligible for fog, their largest 4-connected patch and the size a
region needs. Each kind is one path carrying ``data-cells`` (the cells it draws), so a
test reads the picture back, and a picture stays a few kilobytes.
"""

from __future__ import annotations

import functools
import html

import numpy as np

from ..codes import Tier
from ..guesses import TIER_COLORS, UNPROVED_COLOR, guesses

CELL = 16  # px per cell: numbers read without zoom
COLORS = {"mine": "#5d1010", "closed": UNPROVED_COLOR, "fog": "#b0b0b0", "open": "#f7f7f7",
          "eligible": "#b7e4c7", "patch": "#2d6a4f",
          **{f"tier-{int(t)}": c for t, c in TIER_COLORS.items()}}
# the kinds drawn as one path each, later over earlier (a cell may be several: fog over
# eligible; a tier's colour over ``closed``, every cell F1 leaves closed)
LAYERS = ("eligible", "mine", "closed", *(f"tier-{int(t)}" for t in Tier), "fog")


def eligible(board) -> np.ndarray:
    """The cells a fog region of a ``safe_nonzero`` pool may take on this board before any
    region is placed (docs/design.md, eligible cells): safe, numbered, outside the spawn
    and its reach."""
    return ~board.mines & (board.numbers >= 1) & ~board.reach & ~board.spawn_cells()


def largest_patch(cells: np.ndarray) -> np.ndarray:
    """The largest 4-connected component of ``cells`` (the first in row-major order on a
    tie); empty when there is none."""
    h, w = cells.shape
    seen = np.zeros_like(cells)
    best: list[tuple[int, int]] = []
    for y0 in range(h):
        for x0 in range(w):
            if not cells[y0, x0] or seen[y0, x0]:
                continue
            comp, stack = [], [(x0, y0)]
            seen[y0, x0] = True
            while stack:
                x, y = stack.pop()
                comp.append((x, y))
                for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                    if 0 <= nx < w and 0 <= ny < h and cells[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((nx, ny))
            if len(comp) > len(best):
                best = comp
    out = np.zeros_like(cells)
    for x, y in best:
        out[y, x] = True
    return out


def _cells(mask: np.ndarray) -> list[tuple[int, int]]:
    """(x, y) of the cells of ``mask`` (indexed [y, x]), in row-major order."""
    ys, xs = np.nonzero(mask)
    return list(zip(xs.tolist(), ys.tolist()))


def _squares(cells) -> str:
    return "".join(f"M{1 + x * CELL} {1 + y * CELL}h{CELL}v{CELL}h-{CELL}z" for x, y in cells)


def board_svg(board, title: str, region: int = 0) -> str:
    """The board as one light SVG: a path per kind of cell (each carrying ``data-cells``,
    the cells it draws, so a test reads the picture back), one text per board row for the
    numbers. ``region`` > 0 (a board missing fog regions): the cells eligible for fog and
    their largest 4-connected patch are drawn, with the size a region needs."""
    w, h = board.width * CELL, board.height * CELL
    mines, fog = board.mines.astype(bool), board.fog.astype(bool)
    elig = eligible(board) if region else None
    layers: dict[str, list] = {name: [] for name in LAYERS}
    layers.update(mine=_cells(mines), closed=_cells(~mines & ~board.revealed.astype(bool)),
                  fog=_cells(fog))
    if elig is not None:
        layers["eligible"] = _cells(elig & ~mines & ~fog)
    g = guesses(board)
    for t, cells in g.by_tier.items():
        layers[f"tier-{int(t)}"] = cells
    notes = []
    if elig is not None:
        patch = largest_patch(elig)
        notes = [f"eligible for fog: {int(elig.sum())} cells;",
                 f"largest 4-connected patch {int(patch.sum())} cells; a region needs {region}"]
    marks = guess_legend(g)
    vw = max(w + 2, 330)  # room for the legend and the notes on narrow boards
    key_lines = 2 if elig is not None else 1  # the three-per-line keys below
    legend_h = 16 * (key_lines + len(marks) + len(notes))
    parts = [f'<svg viewBox="0 0 {vw} {h + legend_h + 8}" width="{vw}" '
             f'height="{h + legend_h + 8}" class="board" role="img" '
             f'font-family="system-ui, sans-serif" font-size="11">',
             f"<title>{html.escape(title)}</title>",
             f'<rect x="1" y="1" width="{w}" height="{h}" fill="{COLORS["open"]}"/>']
    for name in LAYERS:
        if layers[name]:
            cells = " ".join(f"{x},{y}" for x, y in layers[name])
            parts.append(f'<path d="{_squares(layers[name])}" fill="{COLORS[name]}" '
                         f'data-kind="{name}" data-cells="{cells}"/>')
    if elig is not None and patch.any():
        parts.append(f'<path d="{_squares(zip(*np.nonzero(patch.T)))}" fill="none" '
                     f'stroke="{COLORS["patch"]}" stroke-width="1.5" data-kind="patch"/>')
    grid = " ".join(f"M1 {1 + y * CELL}h{w}" for y in range(1, board.height)) + " " + \
        " ".join(f"M{1 + x * CELL} 1v{h}" for x in range(1, board.width))
    parts.append(f'<path d="{grid}" stroke="#ddd" stroke-width="0.5" fill="none"/>')
    numbered = ~mines & (board.numbers != 0)
    for y in range(board.height):  # one text per row: x positions, then the digits
        for fogged in (False, True):
            xs = np.flatnonzero(numbered[y] & (fog[y] == fogged)).tolist()
            if xs:
                style = ' fill="#555" font-style="italic"' if fogged else ""
                digits = "".join(map(str, board.numbers[y, xs].tolist()))
                pos = " ".join(f"{1 + x * CELL + CELL / 2:g}" for x in xs)
                parts.append(f'<text x="{pos}" y="{1 + y * CELL + CELL - 4}" '
                             f'text-anchor="middle"{style}>{digits}</text>')
    sx, sy = board.spawn
    parts.append(f'<rect x="{1 + (sx - 1) * CELL}" y="{1 + (sy - 1) * CELL}" '
                 f'width="{3 * CELL}" height="{3 * CELL}" fill="none" stroke="#1f77b4" '
                 f'stroke-width="1.5" data-kind="spawn-outline"/>')
    legend = [("mine", COLORS["mine"]), ("fog", COLORS["fog"]), ("spawn", "none")]
    if elig is not None:
        legend += [("eligible for fog", COLORS["eligible"]), ("largest patch", "patch")]
    spots = [(1 + (i % 3) * 110, h + 8 + (i // 3) * 16) for i in range(len(legend))]
    top = h + 8 + 16 * key_lines
    legend += marks  # one line each: the guess marks say what they claim
    spots += [(1, top + 16 * i) for i in range(len(marks))]
    for (label, color), (x, y) in zip(legend, spots):
        stroke = (f' stroke="{COLORS["patch"]}"' if color == "patch" else
                  ' stroke="#1f77b4"' if color == "none" else "")
        fill = "none" if color in ("none", "patch") else color
        parts.append(f'<rect x="{x}" y="{y}" width="10" height="10" fill="{fill}"{stroke}/>'
                     f'<text x="{x + 13}" y="{y + 9}">{label}</text>')
    for i, note in enumerate(notes):
        y = top + 16 * (len(marks) + i) + 9
        parts.append(f'<text x="1" y="{y}">{html.escape(note)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def guess_legend(g) -> list[tuple[str, str]]:
    """(label, colour) of each guess mark the board carries, with its cell count: a guess
    for the F1 player that tier t proves, and a guess even for tier 4 (``closed``)."""
    rules = f"tiers 0–{int(g.f1)}"
    if not g.computed:
        return [(f"guess for F1 ({rules}; tiers not computed): {len(g.closed)}",
                 COLORS["closed"])] if g.closed else []
    out = [(f"guess for F1 ({rules}); tier {int(t)} proves it: {len(cells)}",
            COLORS[f"tier-{int(t)}"]) for t, cells in g.by_tier.items() if cells]
    if g.unproved:
        out.append((f"guess even for tier 4 (no tier proves it): {len(g.unproved)}",
                    COLORS["closed"]))
    return out or [(f"no guess: F1 ({rules}) opens every safe cell", COLORS["open"])]


def made(plan, index: int, tiers: bool = True):
    """Board ``index`` of ``plan``'s row, as the audit made it (through the kernel the audit
    used: ``tiers`` must match, or a worker compiles a second kernel). The last board made
    is kept: a report's drawing and its play page ask for the same one in turn, so callers
    read the board and never change it."""
    return _made(plan, index, bool(tiers))


@functools.lru_cache(maxsize=1)
def _made(plan, index: int, tiers: bool):
    import warnings

    from ..errors import DegradedBoardWarning, IllegalBoardWarning
    from ..generate import generate_planned
    from boardcore.streams import derive_at

    from ..rng import BOARD_GEN_STREAM, sigma

    sig = sigma(plan.level, plan.depth)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (DegradedBoardWarning, IllegalBoardWarning))
        return generate_planned(plan, derive_at(BOARD_GEN_STREAM, sig + index), index, sig,
                                tiers=tiers)


def exhibit(plan, index: int, tiers: bool = True) -> str:
    """Board ``index`` of ``plan``'s row, as the audit made it (``made``), drawn."""
    from ..table_model import region_target_size

    board = made(plan, index, tiers)
    missing = board.record.get("fog_shortfall", 0) > 0  # a B failure: show why fog did not fit
    need = region_target_size(plan.row.board_width, plan.row.board_height,
                              plan.row.fog_target_ratio, plan.row.fog_region_count)
    return board_svg(board, f"row ({plan.level}, {plan.depth}), board {index}",
                     region=need if missing else 0)

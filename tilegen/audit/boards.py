"""tilegen boards drawn as small stacked SVG for the report's drill-down.

``exhibit`` (the generator's) makes the board again on a worker; ``board_svg`` draws it as
the player sees it: every piece at its board position, layers stacked bottom first and
each layer offset up and left a little, so buried pieces peek out below the ones that
cover them; pieces coloured and lettered by element (A = the first element selected, as
``tilegen generate``'s text view letters them); the pieces clickable at the start
outlined dark, the covered ones faded. A caption line under the board gives its figures.
Each piece carries ``data-piece``, ``data-element`` and ``data-clickable`` so a test
reads the picture back.
"""

from __future__ import annotations

import html

from ..render import code, element_index

SCALE = 0.8  # px per board unit: a piece of 64 units draws about 51 px wide
LIFT = 4  # px each layer is drawn up and to the left of the one below it
PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6", "#d37295", "#8cd17d", "#b6992d")


def board_svg(result, title: str) -> str:
    board, rec = result.board, result.record
    plan = board.plan
    clickable = set(board.clickable())
    idx = element_index(board)
    lift = LIFT * (plan.layers - 1)
    shown = [p for p in board.pieces if not p.removed]
    x0 = min((p.x for p in shown), default=0)  # the pieces' bounding box, not the lanes
    y0 = min((p.y for p in shown), default=0)
    w = round((max((p.x + p.width for p in shown), default=1) - x0) * SCALE) + lift + 2
    h = round((max((p.y + p.height for p in shown), default=1) - y0) * SCALE) + lift + 2
    caption = [f"{rec['total_pieces']} pieces, {plan.element_count} elements, "
               f"{plan.layers} layer(s)",
               f"{rec['initial_clickable']} clickable at the start; exit {result.exit}"]
    if rec.get("tool_free_pass_rate") is not None:
        # wins of runs, exact: a board one win under a gate's floor must not read as on it
        caption.append(f"runs won: tool-free {rec['tool_free_wins']}/{rec['tool_free_runs']}, "
                       f"tool-assisted {rec['tool_assist_wins']}/{rec['tool_assist_runs']}")
    caption.append("dark outline: clickable at the start; faded: covered")
    # wide enough for the longest caption line (11 px text: about 6 px a character)
    vw, vh = max(w, 300, 6 * max(map(len, caption))), h + 16 * len(caption) + 8
    parts = [f'<svg viewBox="0 0 {vw} {vh}" width="{vw}" height="{vh}" class="board" '
             f'role="img" font-family="system-ui, sans-serif" font-size="11">',
             f"<title>{html.escape(title)}</title>"]
    for p in sorted(board.pieces, key=lambda p: (p.layer, p.id)):  # bottom layer first
        if p.removed:
            continue
        up = LIFT * (plan.layers - p.layer)  # higher layers are drawn further up-left
        x, y = 1 + (p.x - x0) * SCALE + up, 1 + (p.y - y0) * SCALE + up
        pw, ph = p.width * SCALE, p.height * SCALE
        i = idx[p.element_id]
        free = p.id in clickable
        parts.append(
            f'<g data-piece="{p.id}" data-element="{html.escape(p.element_id)}" '
            f'data-clickable="{int(free)}"><rect x="{x:.1f}" y="{y:.1f}" width="{pw:.1f}" '
            f'height="{ph:.1f}" rx="3" fill="{PALETTE[i % len(PALETTE)]}" '
            f'fill-opacity="{1 if free else 0.45}" stroke="{"#111" if free else "#fff"}" '
            f'stroke-width="{1.8 if free else 0.8}"/><text x="{x + pw / 2:.1f}" '
            f'y="{y + ph / 2 + 4:.1f}" text-anchor="middle" font-weight="600" '
            f'fill="{"#111" if free else "#444"}">{code(i)}</text>'
            f"<title>{html.escape(p.element_id)}, layer {p.layer}"
            f"{', clickable' if free else ''}</title></g>")
    for k, line in enumerate(caption):
        parts.append(f'<text x="1" y="{h + 14 + 16 * k}">{html.escape(line)}</text>')
    parts.append("</svg>")
    return "".join(parts)

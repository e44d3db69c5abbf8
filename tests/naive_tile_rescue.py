"""Slow, obviously correct twin of ``tilegen/_kernels/rescue.py`` (STYLE 4), from the rules
of decision 195 and docs/tilegen.md ("Tools"), not from the kernel: plain recursion over
explicit states (sets and lists, no memo), for small boards only.

A state: the pieces on the board (lanes included), the lane pieces, the slot as (piece,
insertion number) pairs in slot order, the bypass in order, the tools left. Moves: a legal
click (then the bypass return loop), Remove (bypass empty, slot non-empty), Undo (slot
non-empty, a free lane). ``least_tools``: the least k in 1 .. 3 with a win, else 4.
"""

from __future__ import annotations

import naive_tile_sim as NS

MAX_TOOLS = 3


def _click(elem, occl, state, p, rules):
    onboard, lanes, slot, bypass, left, number = state
    onboard = onboard - {p}
    lanes = lanes - {p}
    slot, _ = NS.put_in_slot(slot, p, number, elem)
    number += 1
    bypass = list(bypass)
    while True:
        back = None
        for b in bypass:
            in_slot = [elem[q] for q, _ in slot]
            if (elem[b] in in_slot or not onboard) and NS.fits(elem[b], in_slot, rules):
                back = b
                break
        if back is None:
            break
        bypass.remove(back)
        slot, _ = NS.put_in_slot(slot, back, number, elem)
        number += 1
    return onboard, lanes, slot, bypass, left, number


def _wins(elem, occl, state, rules) -> bool:
    onboard, lanes, slot, bypass, left, number = state
    if not onboard and not slot and not bypass:
        return True
    # a lane piece has no occluder and occludes nothing
    grid = [set() if p in lanes else occl[p] - lanes for p in range(len(elem))]
    for p in NS.legal_clicks(onboard, grid, elem, [elem[q] for q, _ in slot], rules):
        if _wins(elem, occl, _click(elem, occl, state, p, rules), rules):
            return True
    if left > 0 and slot and not bypass:  # Remove
        k = min(3, len(slot))
        if _wins(elem, occl, (onboard, lanes, slot[k:], [q for q, _ in slot[:k]], left - 1,
                              number), rules):
            return True
    if left > 0 and slot and len(lanes) < rules.n_lanes:  # Undo
        u, _ = max(slot, key=lambda qn: qn[1])
        if _wins(elem, occl, (onboard | {u}, lanes | {u}, [x for x in slot if x[0] != u],
                              bypass, left - 1, number), rules):
            return True
    return False


def least_tools(elem, occ, rules) -> int:
    occl = NS.occluders_from_masks(occ)
    start = lambda k: (set(range(len(elem))), set(), [], [], k, 0)  # noqa: E731
    for k in range(1, MAX_TOOLS + 1):
        if _wins(list(elem), occl, start(k), rules):
            return k
    return MAX_TOOLS + 1

"""Slow, obviously correct twin of tilegen's simulator and exhaustive search (STYLE 4).

Written from the rules of 05 §13-§14 (docs/decisions/ 58-67, 102, 107-109), not from
the kernels: pieces are ints, the board is a set of on-board pieces and a list of occluder
sets, the slot is a list of (piece, insertion number) pairs in slot order, the bypass a
list; every rule is applied literally each step (nothing is kept incrementally).

- ``legal_clicks``: clickable = on the board and no on-board occluder; legal = slot < 7
  (< 6 under lose_on_full) or the element has exactly 2 in the slot.
- ``run``: one run of a strategy, tool-free or with the tool budgets; the same draws as the
  kernel (``boardcore.streams.Pcg32``); a trace of dict rows (the kernel's ``Tr`` columns by name).
- ``winnable``: a plain recursive search with no memo (small boards only): the slot is an
  explicit multiset of elements, the bypass an explicit list.
- ``simulate``: the batch of one attempt with the diagnostics, as stats by ``S`` name. The
  diagnostics are the exact definitions (no cap): a won run is never doomed; a lost run's
  doom step is its first state (after j clicks, j = 0 .. n) with no tool-free win; it is
  doomed after click 5 when that step is <= 5; it passed a soft deadlock when some state
  j in [max(doom step, 1), n - 1] becomes winnable after one Undo (budget and a lane) or
  one Remove (budget).

A bypass piece returns by the same fit test as a click (slot < 7, < 6 under lose_on_full,
or it completes a triple), after clicks only.
"""

from __future__ import annotations

from collections import Counter

from boardcore.streams import Pcg32

SLOT_CAP = 7
BYPASS_CAP = 3
OPENING = 5
MATCH_FIRST, SLOT_BUILD, RISK_AVERSE = 0, 1, 2
BLOCK_AT_FULL, LOSE_ON_FULL = 0, 1
REMOVE, SHUFFLE, UNDO = 0, 1, 2
WIN_NAMES = ("TF_WINS_MATCH_FIRST", "TF_WINS_SLOT_BUILD", "TF_WINS_RISK_AVERSE")


class Rules:
    def __init__(self, slot_rule=BLOCK_AT_FULL, budgets=(1, 1, 1), order=(REMOVE, SHUFFLE, UNDO),
                 n_lanes=3, runs=2):
        self.slot_rule = slot_rule
        self.budgets = dict(zip((REMOVE, SHUFFLE, UNDO), budgets))
        self.order = tuple(order)
        self.n_lanes = n_lanes
        self.runs = runs

    @property
    def limit(self):
        """Slot count below which any clickable piece may be clicked."""
        return SLOT_CAP - 1 if self.slot_rule == LOSE_ON_FULL else SLOT_CAP


def occluders_from_masks(occ):
    """occ[p] bit q set <=> q occludes p, as a list of sets."""
    return [{q for q in range(64) if (int(m) >> q) & 1} for m in occ]


def clickable(onboard, occl):
    return [p for p in sorted(onboard) if not (occl[p] & onboard)]


def fits(element, slot_elements, rules):
    """May a piece of ``element`` enter a slot holding ``slot_elements`` (a list)?"""
    return len(slot_elements) < rules.limit or slot_elements.count(element) == 2


def legal_clicks(onboard, occl, elem, slot_elements, rules):
    return [p for p in clickable(onboard, occl) if fits(elem[p], slot_elements, rules)]


def put_in_slot(slot, piece, number, elem):
    """Like with like: after the last slot piece of its element, else at the end; a triple
    leaves. Returns (new slot, eliminated element or -1)."""
    e = elem[piece]
    at = len(slot)
    for i, (q, _) in enumerate(slot):
        if elem[q] == e:
            at = i + 1
    slot = slot[:at] + [(piece, number)] + slot[at:]
    if sum(1 for q, _ in slot if elem[q] == e) == 3:
        return [(q, n) for q, n in slot if elem[q] != e], e
    return slot, -1


def key(strategy, piece, elem, slot, onboard, occl):
    e = elem[piece]
    in_slot = [elem[q] for q, _ in slot]
    c = in_slot.count(e)
    if strategy == MATCH_FIRST:
        return (int(c == 2),)
    if strategy == SLOT_BUILD:
        return (c,)
    D = len(set(in_slot))
    D2 = D - 1 if c == 2 else (D if c == 1 else D + 1)
    v = sum(1 for p in clickable(onboard, occl) if elem[p] == e)
    return (-D2, min(3, c + v))


def run(elem0, occ, rules, strategy, tools, rng, record=False):
    """One run; returns a dict (won, clicks, peak, stuck, uses, trace, states)."""
    T = len(elem0)
    elem = list(elem0)
    occl = occluders_from_masks(occ)
    onboard = set(range(T))
    slot, bypass = [], []
    lanes = [-1] * rules.n_lanes
    removed = 0
    clicks = peak = number = 0
    left = dict(rules.budgets) if tools else {REMOVE: 0, SHUFFLE: 0, UNDO: 0}
    uses = {REMOVE: 0, SHUFFLE: 0, UNDO: 0}
    stuck = False
    trace = []
    states = [(frozenset(), [])] if record else None  # (clicked set, slot) after j clicks

    def row(kind, piece=-1, lane=-1, elim=-1):
        trace.append(dict(kind=kind, piece=piece, lane=lane, elim=elim, clicks=clicks,
                          slot=[q for q, _ in slot], bypass=list(bypass), on_board=len(onboard),
                          removed=removed, left=(left[REMOVE], left[SHUFFLE], left[UNDO]),
                          lanes=list(lanes), elem=list(elem)))

    while True:
        if removed == T:
            row("won")
            return dict(won=True, clicks=clicks, peak=peak, stuck=stuck, uses=uses, trace=trace,
                        states=states)
        moves = legal_clicks(onboard, occl, elem, [elem[q] for q, _ in slot], rules)
        if not moves:
            stuck = True
        while not moves:
            tool = None
            for t in rules.order:
                if left[t] <= 0:
                    continue
                if t == REMOVE and not bypass and slot:
                    tool = t
                elif t == SHUFFLE and onboard:
                    tool = t
                elif t == UNDO and slot and -1 in lanes:
                    tool = t
                if tool is not None:
                    break
            if tool is None:
                row("lost")
                return dict(won=False, clicks=clicks, peak=peak, stuck=stuck, uses=uses,
                            trace=trace, states=states)
            left[tool] -= 1
            uses[tool] += 1
            if tool == REMOVE:
                k = min(3, len(slot))
                bypass = [q for q, _ in slot[:k]]
                slot = slot[k:]
                row("remove")
            elif tool == SHUFFLE:
                pieces = sorted(onboard)
                ids = [elem[p] for p in pieces]
                for j in range(len(ids) - 1):
                    t = j + rng.bounded(len(ids) - j)
                    ids[j], ids[t] = ids[t], ids[j]
                for p, e in zip(pieces, ids):
                    elem[p] = e
                row("shuffle")
            else:
                u, _ = max(slot, key=lambda qn: qn[1])
                slot = [qn for qn in slot if qn[0] != u]
                lane = lanes.index(-1)
                lanes[lane] = u
                onboard.add(u)
                occl = [s - {u} for s in occl]
                occl[u] = set()
                row("undo", u, lane)
            moves = legal_clicks(onboard, occl, elem, [elem[q] for q, _ in slot], rules)
        keys = {p: key(strategy, p, elem, slot, onboard, occl) for p in moves}
        best = max(keys.values())
        tied = [p for p in moves if keys[p] == best]
        piece = tied[0] if len(tied) == 1 else tied[rng.bounded(len(tied))]
        onboard.discard(piece)
        lane = lanes.index(piece) if piece in lanes else -1
        if lane >= 0:
            lanes[lane] = -1
        clicks += 1
        slot, elim = put_in_slot(slot, piece, number, elem)
        number += 1
        removed += 3 if elim >= 0 else 0
        row("click", piece, lane, elim)
        while True:
            back = None
            for b in bypass:
                in_slot = [elem[q] for q, _ in slot]
                if (elem[b] in in_slot or not onboard) and fits(elem[b], in_slot, rules):
                    back = b
                    break
            if back is None:
                break
            bypass.remove(back)
            slot, elim = put_in_slot(slot, back, number, elem)
            number += 1
            removed += 3 if elim >= 0 else 0
            row("return", back, -1, elim)
        assert len(slot) <= SLOT_CAP and len(bypass) <= BYPASS_CAP
        peak = max(peak, len(slot))
        if record:
            states.append((frozenset(set(range(T)) - onboard), list(slot)))


def winnable(elem, occl, onboard, slot_elements, bypass, rules):
    """Plain recursion, no memo: can every piece be eliminated without tools?
    ``slot_elements``: the slot as a list of elements; ``bypass``: pieces in order."""
    if not onboard and not slot_elements and not bypass:
        return True
    for p in clickable(onboard, occl):
        if not fits(elem[p], slot_elements, rules):
            continue
        on2 = onboard - {p}
        slot2 = slot_elements + [elem[p]]
        if slot2.count(elem[p]) == 3:
            slot2 = [e for e in slot2 if e != elem[p]]
        byp2 = list(bypass)
        moved = True
        while moved:
            moved = False
            for b in byp2:
                if (elem[b] in slot2 or not on2) and fits(elem[b], slot2, rules):
                    byp2.remove(b)
                    slot2 = slot2 + [elem[b]]
                    if slot2.count(elem[b]) == 3:
                        slot2 = [e for e in slot2 if e != elem[b]]
                    moved = True
                    break
        if winnable(elem, occl, on2, slot2, byp2, rules):
            return True
    return False


def winnable_from_mask(elem, occ, mask, rules, bypass=()):
    """``winnable`` from a tool-free clicked set (slot = clicked pieces not eliminated: per
    element the clicked count mod 3, less the bypass pieces)."""
    T = len(elem)
    clicked = {p for p in range(T) if (int(mask) >> p) & 1}
    per = Counter(elem[p] for p in clicked)
    for b in bypass:
        per[elem[b]] -= 1
    slot = [e for e, n in sorted(per.items()) for _ in range(n % 3)]
    return winnable(list(elem), occluders_from_masks(occ), set(range(T)) - clicked, slot,
                    list(bypass), rules)


def _after_undo(elem, occ, clicked, slot, rules):
    """(onboard, occluders, slot elements) after Undo of the last-inserted slot piece."""
    T = len(elem)
    u, _ = max(slot, key=lambda qn: qn[1])
    occl = [s - {u} for s in occluders_from_masks(occ)]
    occl[u] = set()
    onboard = (set(range(T)) - clicked) | {u}
    return onboard, occl, [elem[q] for q, _ in slot if q != u]


def simulate(elem, occ, rules, seed, k, diagnose):
    """Stats (by codes.S name) of one attempt: 3 strategies x R runs per mode."""
    s = Counter()
    for mode in (0, 1):
        for strat in (MATCH_FIRST, SLOT_BUILD, RISK_AVERSE):
            rng = Pcg32(seed, 8 * k + 3 * mode + strat)
            for _ in range(rules.runs):
                r = run(elem, occ, rules, strat, mode == 1, rng, record=diagnose and mode == 0)
                if mode == 1:
                    s["TA_WINS"] += r["won"]
                    s["TA_STUCK"] += r["stuck"]
                    s["USES_REMOVE"] += r["uses"][REMOVE]
                    s["USES_SHUFFLE"] += r["uses"][SHUFFLE]
                    s["USES_UNDO"] += r["uses"][UNDO]
                    continue
                s["TF_PEAK_SUM"] += r["peak"]
                if r["won"]:
                    s["TF_WINS"] += 1
                    s[WIN_NAMES[strat]] += 1
                    s["TF_CLICKS_WON"] += r["clicks"]
                else:
                    s["TF_FAIL_STEP_SUM"] += r["clicks"]
                    s["TF_OPEN_LITERAL"] += r["clicks"] <= OPENING
                if diagnose:
                    _diagnose(elem, occ, rules, r, s)
    return s


def _diagnose(elem, occ, rules, r, s):
    T = len(elem)
    states = r["states"]
    n = r["clicks"]

    def ok(j):  # is state j (after j clicks) winnable?
        clicked, slot = states[j]
        return winnable(list(elem), occluders_from_masks(occ), set(range(T)) - clicked,
                        [elem[q] for q, _ in slot], [], rules)

    if r["won"]:  # every state of a won run is winnable (the run is the proof)
        return
    d = next(j for j in range(n + 1) if not ok(j))  # the last state is a hard deadlock
    if n >= OPENING and d <= OPENING:
        s["TF_DOOMED_5"] += 1
    s["TF_DOOM_STEP_SUM"] += d
    s["TF_DOOMED_LOSSES"] += 1
    for j in range(max(d, 1), n):
        clicked, slot = states[j]
        if not slot:
            continue
        if rules.budgets[UNDO] >= 1 and rules.n_lanes >= 1:
            onboard, occl, slot_el = _after_undo(elem, occ, clicked, slot, rules)
            if winnable(list(elem), occl, onboard, slot_el, [], rules):
                s["TF_SOFT"] += 1
                return
        if rules.budgets[REMOVE] >= 1:
            k = min(3, len(slot))
            if winnable(list(elem), occluders_from_masks(occ), set(range(T)) - clicked,
                        [elem[q] for q, _ in slot[k:]], [q for q, _ in slot[:k]], rules):
                s["TF_SOFT"] += 1
                return

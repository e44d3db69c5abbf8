"""Slow, obviously correct twin of the difficulty tiers (``solver.solve_tiers``; STYLE 4).

Written from the definitions in docs/decisions/, decision 56 ("Difficulty tiers"), and the
solver's docstring, not from the kernel: cells are ``(x, y)`` tuples, the visible state is Python
sets and dicts, and every rule is applied literally to a snapshot of that state.

Visible state: R (opened cells, each with the tier whose closure opened it), K (deduced
mines, likewise), which cells are fog, the numbers of opened non-fog cells and, from tier 3
on, the board's mine count. A constraint is an opened non-fog cell x with U(x) = its closed
non-fog neighbours not in K and r(x) = its number minus its neighbours in K.

Tier t starts from tier t-1's fixpoint and repeats: close the state under every rule below
t (in any order: those rules are monotone, so their closure is unique), then apply one pass
of rule t, every deduction read from the same snapshot, and count what it opened and
deduced; until a pass deduces nothing. Once every safe cell is open the tiers above F1's
are not run. Tier 4 enumerates each frontier component of at most ``ENUM_CAP`` cells.

``perfect`` is the brute-force yardstick: the closure under "a cell safe (a mine) in every
mine layout consistent with all visible numbers and the mine count is opened (deduced)".
"""

from __future__ import annotations

import naive

ENUM_CAP = 24  # the kernel's codes.ENUM_CAP (a test holds them equal)
TIERS = 5


def _state(W, H, mines, fog, r0):
    return {
        "W": W, "H": H, "mines": set(mines), "fog": set(fog),
        "nums": naive.numbers(mines, W, H), "R": {c: 0 for c in r0}, "K": {},
    }


def constraints(s):
    """[(x, U(x), r(x))] for every opened non-fog cell with unknowns."""
    W, H, R, K, fog = s["W"], s["H"], s["R"], s["K"], s["fog"]
    out = []
    for x in sorted(R, key=naive.row_major):
        if x in fog:
            continue
        nbrs = naive.neighbours8(x, W, H)
        U = frozenset(n for n in nbrs if n not in R and n not in K and n not in fog)
        r = s["nums"][x] - sum(1 for n in nbrs if n in K)
        assert 0 <= r <= len(U), "inconsistent constraint"
        if U:
            out.append((x, U, r))
    return out


def _apply(s, safe, mines, t):
    """Open ``safe``, deduce ``mines`` (checked against the true layout); returns the
    (opened, deduced) counts of new cells."""
    new_safe = set(safe) - set(s["R"])
    new_mines = set(mines) - set(s["K"])
    assert not (new_safe & s["mines"]), "a tier opened a mine"
    assert new_mines <= s["mines"], "a tier deduced a safe cell as a mine"
    for c in new_safe:
        s["R"][c] = t
    for c in new_mines:
        s["K"][c] = t
    return len(new_safe), len(new_mines)


def cascade_and_fog(s, t):
    """Tier 0 to its fixpoint: a revealed 0-cell opens its neighbours; a closed fog cell
    8-adjacent to R opens."""
    W, H, R, fog = s["W"], s["H"], s["R"], s["fog"]
    changed = True
    while changed:
        changed = False
        for c in naive.all_cells(W, H):
            if c in R and c not in fog and s["nums"][c] == 0:
                changed |= _apply(s, naive.neighbours8(c, W, H), (), t)[0] > 0
            if c in fog and c not in R and any(n in R for n in naive.neighbours8(c, W, H)):
                changed |= _apply(s, [c], (), t)[0] > 0


def single_pass(s):
    safe, mines = set(), set()
    for _, U, r in constraints(s):
        if r == 0:
            safe |= U
        elif r == len(U):
            mines |= U
    return safe, mines


def subset_pass(s):
    safe, mines = set(), set()
    facts = constraints(s)
    for _, Ux, rx in facts:
        for _, Uy, ry in facts:
            if Ux < Uy:
                D, dm = Uy - Ux, ry - rx
                assert 0 <= dm <= len(D), "inconsistent subset constraint"
                if dm == 0:
                    safe |= D
                elif dm == len(D):
                    mines |= D
    return safe, mines


def closed_unknowns(s):
    """U_all: closed cells that are neither fog nor in K."""
    return {c for c in naive.all_cells(s["W"], s["H"])
            if c not in s["R"] and c not in s["K"] and c not in s["fog"]}


def global_pass(s):
    U = closed_unknowns(s)
    r = len(s["mines"]) - len(s["K"])
    assert 0 <= r <= len(U), "inconsistent mine count"
    if U and r == 0:
        return U, set()
    if U and r == len(U):
        return set(), U
    return set(), set()


def components(s):
    """Frontier components: unknowns of constraints, joined when they share a constraint.
    Returns [(cells, constraints on them)] in row-major order of their first cell."""
    facts = constraints(s)
    comp_of = {}
    comps = []
    for _, U, _ in facts:
        hit = {comp_of[c] for c in U if c in comp_of}
        merged = set(U)
        for i in hit:
            merged |= comps[i]
            comps[i] = set()
        comps.append(merged)
        for c in merged:
            comp_of[c] = len(comps) - 1
    out = []
    for cells in comps:
        if cells:
            out.append((cells, [(U, r) for _, U, r in facts if U & cells]))
    return sorted(out, key=lambda p: min(naive.row_major(c) for c in p[0]))


def assignments(cells, facts):
    """Every mine set within ``cells`` meeting all ``facts`` (U, r), U within cells: cells
    are assigned one by one in row-major order and a partial assignment is dropped as soon
    as some fact can no longer hold."""
    order = sorted(cells, key=naive.row_major)
    found = []

    def extend(i, chosen):
        for U, r in facts:
            have = len(U & chosen)
            open_ = len(U & set(order[i:]))
            if have > r or have + open_ < r:
                return
        if i == len(order):
            found.append(frozenset(chosen))
            return
        extend(i + 1, chosen)
        extend(i + 1, chosen | {order[i]})

    extend(0, frozenset())
    return found


def enumerate_pass(s):
    """Tier 4 pass: (safe, mines, cells in components over ENUM_CAP)."""
    safe, mines, capped = set(), set(), 0
    for cells, facts in components(s):
        if len(cells) > ENUM_CAP:
            capped += len(cells)
            continue
        sols = assignments(cells, facts)
        assert sols, "inconsistent component"
        for c in cells:
            if all(c not in m for m in sols):
                safe.add(c)
            elif all(c in m for m in sols):
                mines.add(c)
    return safe, mines, capped


PASSES = {1: single_pass, 2: subset_pass, 3: global_pass}


def close_below(s, t):
    """The state's closure under every rule below tier t (t - 1 included), at mark t."""
    while True:
        before = (len(s["R"]), len(s["K"]))
        cascade_and_fog(s, t)
        for rule in range(1, t):
            _apply(s, *PASSES[rule](s), t)
        if (len(s["R"]), len(s["K"])) == before:
            return


def tiers(W, H, mines, fog, r0, f1_tier=2):
    """Every tier's fixpoint from R0. Returns a dict: R and K (cell -> the tier whose
    closure opened / deduced it), sizes |R_t| per tier, own (opened, deduced) per tier, the
    record's tier fields and the final state. Tiers up to ``f1_tier`` (F1's: 1 for
    ``single``, 2 for ``single_subset``) always run; above it, none once every safe cell
    is open (they could only deduce mines; the record's fields do not depend on this)."""
    s = _state(W, H, mines, fog, r0)
    nsafe = W * H - len(s["mines"])
    sizes, own = [], []
    capped = 0
    for t in range(TIERS):
        opened = deduced = 0
        while True:
            close_below(s, t)
            if t == 0:
                break
            if t == 4:
                safe, found, capped = enumerate_pass(s)
            else:
                safe, found = PASSES[t](s)
            n_safe, n_mines = _apply(s, safe, found, t)
            if n_safe + n_mines == 0:
                break
            opened += n_safe
            deduced += n_mines
        sizes.append(len(s["R"]))
        own.append((opened, deduced))
        if len(s["R"]) == nsafe and t >= f1_tier:  # the higher tiers cannot open a cell
            break
    while len(sizes) < TIERS:
        sizes.append(len(s["R"]))
        own.append((0, 0))
    tier = min(t for t in range(TIERS) if sizes[t] == sizes[-1])
    return {
        "R": dict(s["R"]), "K": dict(s["K"]), "sizes": sizes, "own": own, "state": s,
        "tier": tier,
        "tier_deductions": own[tier][0] if tier else 0,
        "tier_mine_deductions": own[tier][1] if tier else 0,
        "revealed_t4": sizes[-1],
        "guess_share": (nsafe - sizes[-1]) / nsafe,
        "tier4_capped_cells": capped,
    }


# ----------------------------------------------------------------------------- brute force

def verdicts(s):
    """(safe, mines): the closed non-fog cells not in K that are safe (a mine) in every mine
    layout consistent with the visible state: K are mines, R and fog are safe, the other
    closed cells hold the remaining |M| - |K| mines and every opened non-fog number holds.

    Every consistent layout is enumerated, up to the symmetry of the interior (the closed
    cells no number sees, all in the same situation): the frontier cells take every
    assignment meeting all numbers (cell by cell, dropping a partial one once some number
    can no longer hold), and the interior takes the remaining mines, any way."""
    U = closed_unknowns(s)
    facts = [(Ux, r) for _, Ux, r in constraints(s)]
    frontier = set().union(*(Ux for Ux, _ in facts)) if facts else set()
    interior = U - frontier
    left = len(s["mines"]) - len(s["K"])
    layouts = [m for m in assignments(frontier, facts)
               if 0 <= left - len(m) <= len(interior)]
    assert layouts, "the true layout is always consistent"
    safe = {c for c in frontier if all(c not in m for m in layouts)}
    mines = {c for c in frontier if all(c in m for m in layouts)}
    if interior and all(left - len(m) == 0 for m in layouts):
        safe |= interior
    if interior and all(left - len(m) == len(interior) for m in layouts):
        mines |= interior
    return safe, mines


def perfect(W, H, mines, fog, r0):
    """The brute-force closure: cascade and fog, then every closed non-fog cell safe (a
    mine) in all consistent layouts is opened (deduced), until nothing changes. (R, K)."""
    s = _state(W, H, mines, fog, r0)
    while True:
        before = (len(s["R"]), len(s["K"]))
        cascade_and_fog(s, 0)
        _apply(s, *verdicts(s), 0)
        if (len(s["R"]), len(s["K"])) == before:
            return set(s["R"]), set(s["K"])

"""Slow, obviously correct twins of the minegen kernels (STYLE 4; stumpy ``tests/naive.py``).

Written from the text of SPEC §3-§7, not from the kernels' structure: a cell is an
``(x, y)`` tuple, a board's layers are Python sets, every rule is applied literally and
repeated until nothing changes. Readability beats speed here (a 16x16 board takes tens of
milliseconds against microseconds in a kernel). Nothing in this module depends on how a
kernel stores or orders its cells: every function accepts any iterable of cells, in any
order, and "row-major order" is always an explicit ``sorted(..., key=row_major)``.

The only thing borrowed from the project is the stream (``boardcore.streams.Pcg32``); ``PurePcg32``
below is an independent pcg_basic transcription that the tests hold equal to it.

Readings of the SPEC this twin takes (each one is a decision, checked against the kernels):
- "0-cell" means a *safe* cell whose number is 0 (a mine is never a 0-cell).
- Stage 3 "cells of E not yet fogged": a cell already taken by any earlier region (of any
  variant, number-hiding or not) is not available to a later region.
- Stage 3 with ``cell_constraint = any``: E = every cell outside spawn and reach domain.
- The variant draw of a region comes before its seed draw and is made even when the region
  then fails for lack of a large enough component.
- ``fog`` = cells of regions whose variant has ``info_mask = hide_numbers``.
- F5 ``attempts_used`` is the number of attempts run (k of the met attempt, else the
  row's max_gen_attempts).
"""

from __future__ import annotations

from collections import deque
from fractions import Fraction
from math import floor

from boardcore.streams import Pcg32

PCG_INITSEQ = 1442695040888963407  # SPEC §3: pcg32_srandom_r(initstate=seed, initseq=this)
SPAWN_SIZE = 9


# ----------------------------------------------------------------------------- geometry

def row_major(cell):
    """Sort key of row-major order: by y, then by x."""
    x, y = cell
    return (y, x)


def all_cells(W, H):
    return [(x, y) for y in range(H) for x in range(W)]


def on_board(cell, W, H):
    x, y = cell
    return 0 <= x < W and 0 <= y < H


def neighbours8(cell, W, H):
    x, y = cell
    out = []
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if (dx, dy) != (0, 0) and on_board((x + dx, y + dy), W, H):
                out.append((x + dx, y + dy))
    return out


def neighbours4(cell, W, H):
    x, y = cell
    return [c for c in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)) if on_board(c, W, H)]


# ----------------------------------------------------------------------------- stage 2 pieces

def numbers(mines, W, H):
    """{cell: count of mines among its 8 neighbours}, for every cell (mines included)."""
    mines = set(mines)
    return {c: sum(1 for n in neighbours8(c, W, H) if n in mines) for c in all_cells(W, H)}


def spawn_cells(W, H):
    """The 3x3 block centred on (W // 2, H // 2)."""
    cx, cy = W // 2, H // 2
    return {(cx + dx, cy + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)}


def zero_flood_closure(spawn, mines, nums, W, H):
    """Start from the spawn cells; every 0-cell in the set adds its 8 neighbours; repeat."""
    mines = set(mines)
    closure = set(spawn)
    changed = True
    while changed:
        changed = False
        for cell in list(closure):
            if cell not in mines and nums[cell] == 0:
                for n in neighbours8(cell, W, H):
                    if n not in closure:
                        closure.add(n)
                        changed = True
    return closure


def ring(cells, W, H):
    """The one-cell outer ring: cells outside ``cells`` 8-adjacent to one of them."""
    cells = set(cells)
    return {n for c in cells for n in neighbours8(c, W, H)} - cells


def r0_and_reach(mines, W, H):
    """(R0, reach domain) on a final layout: R0 = spawn + its zero-flood closure."""
    nums = numbers(mines, W, H)
    r0 = zero_flood_closure(spawn_cells(W, H), mines, nums, W, H)
    return r0, r0 | ring(r0, W, H)


# ----------------------------------------------------------------------------- rounding

def decimal(x):
    """The decimal value a designer wrote (0.15 is 15/100, not the nearest binary float)."""
    return Fraction(repr(float(x))) if isinstance(x, float) else Fraction(x)


def round_half_up(q):
    return floor(Fraction(q) + Fraction(1, 2))


def planned_mines(W, H, density):
    """N = round_half_up(d * (W*H - 9))."""
    return round_half_up(decimal(density) * (W * H - SPAWN_SIZE))


def region_size(W, H, ratio, count):
    """t = max(1, round_half_up(ratio * W * H / count)); 0 when count = 0."""
    if count == 0:
        return 0
    return max(1, round_half_up(decimal(ratio) * W * H / count))


# ----------------------------------------------------------------------------- stage 2

def fisher_yates_mines(rng, W, H, N):
    """Candidates = non-spawn cells in row-major order; for j < N swap candidate j with
    candidate j + bounded(len - j); the first N are mines."""
    spawn = spawn_cells(W, H)
    cand = [c for c in sorted(all_cells(W, H), key=row_major) if c not in spawn]
    for j in range(N):
        k = j + rng.bounded(len(cand) - j)
        cand[j], cand[k] = cand[k], cand[j]
    return set(cand[:N])


def remove_near_spawn(mines, W, H):
    """Remove (never redraw) every mine in the spawn's zero-flood closure C and its ring."""
    nums = numbers(mines, W, H)
    closure = zero_flood_closure(spawn_cells(W, H), mines, nums, W, H)
    return set(mines) - closure - ring(closure, W, H)


def place_mines(rng, W, H, N, redraw=False):
    """SPEC §4 stage 2: partial Fisher-Yates, then remove-only. Returns the final mines.
    ``redraw``: the what-if rule tune measures (never the SPEC's): the removed mines are
    drawn again, by the same partial Fisher-Yates, among the row-major cells outside the
    spawn, the closure and its ring that hold no mine."""
    drawn = fisher_yates_mines(rng, W, H, N)
    kept = remove_near_spawn(drawn, W, H)
    if redraw and len(drawn) > len(kept):
        nums = numbers(drawn, W, H)
        closure = zero_flood_closure(spawn_cells(W, H), drawn, nums, W, H)
        out = closure | ring(closure, W, H) | spawn_cells(W, H) | kept
        cand = [c for c in sorted(all_cells(W, H), key=row_major) if c not in out]
        k = min(len(drawn) - len(kept), len(cand))
        for j in range(k):
            t = j + rng.bounded(len(cand) - j)
            cand[j], cand[t] = cand[t], cand[j]
        kept = kept | set(cand[:k])
    return kept


# ----------------------------------------------------------------------------- stage 3

def variant_pool(variations, level, biome):
    """{v : v.unlock_level <= L and (v.biome_tag empty or meets board_biome)}, by variant_id."""
    biome = set(biome)
    keep = [v for v in variations
            if v.unlock_level <= level and (not v.biome_tag or set(v.biome_tag) & biome)]
    return sorted(keep, key=lambda v: v.variant_id)


def components4(cells, W, H):
    """4-connected components of ``cells`` (a list of sets)."""
    left = set(cells)
    comps = []
    while left:
        start = min(left, key=row_major)
        comp = {start}
        todo = [start]
        while todo:
            c = todo.pop()
            for n in neighbours4(c, W, H):
                if n in left and n not in comp:
                    comp.add(n)
                    todo.append(n)
        left -= comp
        comps.append(comp)
    return comps


def eligible_cells(W, H, mines, nums, excluded, constraint):
    """E: cells outside ``excluded``; with safe_nonzero also not a mine and number >= 1."""
    out = set()
    for c in all_cells(W, H):
        if c in excluded:
            continue
        if constraint == "safe_nonzero" and (c in mines or nums[c] < 1):
            continue
        out.add(c)
    return out


def place_fog(rng, W, H, mines, pool, count, t):
    """SPEC §4 stage 3 on the final layout ``mines``.

    Returns (variation, achieved): variation maps each region cell to the 0-based index of
    its variant in the pool sorted by variant_id. No draw at all when the pool is empty or
    count = 0.
    """
    pool = sorted(pool, key=lambda v: v.variant_id)
    variation = {}
    if count == 0 or not pool:
        return variation, 0
    mines = set(mines)
    nums = numbers(mines, W, H)
    spawn = spawn_cells(W, H)
    _, reach = r0_and_reach(mines, W, H)
    achieved = 0
    for _ in range(count):
        v = rng.bounded(len(pool)) if len(pool) > 1 else 0
        E = eligible_cells(W, H, mines, nums, spawn | reach | set(variation),
                           pool[v].cell_constraint)
        big_enough = set()
        for comp in components4(E, W, H):
            if len(comp) >= t:
                big_enough |= comp
        candidates = sorted(big_enough, key=row_major)
        if not candidates:
            continue  # this region fails: shortfall + 1, never relax the constraint
        region = {candidates[rng.bounded(len(candidates))]}
        while len(region) < t:
            frontier = sorted({n for c in region for n in neighbours4(c, W, H)
                               if n in E and n not in region}, key=row_major)
            assert frontier, "growth stalled inside a component of >= t cells"
            region.add(frontier[rng.bounded(len(frontier))])
        for c in region:
            variation[c] = v
        achieved += 1
    return variation, achieved


def fog_of(variation, pool):
    pool = sorted(pool, key=lambda v: v.variant_id)
    return {c for c, v in variation.items() if pool[v].info_mask == "hide_numbers"}


def check_hard_bounds(W, H, mines, fog, variation):
    """Stage 3 hard bounds and the F5 structural invariants (asserted, never degraded)."""
    mines = set(mines)
    nums = numbers(mines, W, H)
    spawn = spawn_cells(W, H)
    r0, reach = r0_and_reach(mines, W, H)
    assert not (spawn & mines), "mine in the spawn"
    assert not (r0 & mines), "mine in R0"
    assert not (set(variation) & (spawn | reach)), "variation in spawn or reach domain"
    for c in fog:
        assert c not in mines and nums[c] >= 1, "fog outside safe_nonzero"
    assert len(fog) <= 8 * len(mines), "|F| > 8|M|"
    for y in range(H - 2):
        for x in range(W - 2):
            window = {(x + i, y + j) for i in range(3) for j in range(3)}
            assert not window <= set(fog), "fully fogged 3x3 window"


# ----------------------------------------------------------------------------- F1 solver

def solve(W, H, mines, fog, r0, rules, order=None):
    """SPEC §5 as a naive fixpoint. Returns (R-infinity, K) as sets.

    repeat { cascade; fog operator; single rule on every revealed non-fog cell; subset rule
    over all ordered pairs of revealed non-fog cells (single_subset only) } until nothing
    changes. ``order`` (any permutation of the board's cells) is the order in which cells
    are visited; the least fixed point must not depend on it. The true layout is read only
    for the numbers of revealed cells and for the soundness assertions.
    """
    mines = set(mines)
    fog = set(fog)
    nums = numbers(mines, W, H)
    cells = list(order) if order is not None else all_cells(W, H)
    R = set(r0)
    K = set()

    def reveal(cs):
        new = set(cs) - R
        assert not (new & mines), "solver revealed a mine"
        R.update(new)
        return bool(new)

    def deduce_mines(cs):
        new = set(cs) - K
        assert not (new - mines), "solver deduced a safe cell as a mine"
        K.update(new)
        return bool(new)

    def unknowns(x):
        return {n for n in neighbours8(x, W, H) if n not in R and n not in K and n not in fog}

    def remaining(x):
        return nums[x] - sum(1 for n in neighbours8(x, W, H) if n in K)

    def constraint(x):
        U, r = unknowns(x), remaining(x)
        assert 0 <= r <= len(U), "inconsistent constraint"
        return U, r

    while True:
        changed = False
        # 1 + 2: cascade and the fog operator, to their own fixed point
        grew = True
        while grew:
            grew = False
            for c in cells:
                if c in R and c not in fog and nums[c] == 0:
                    grew |= reveal(neighbours8(c, W, H))
                if c in fog and c not in R and any(n in R for n in neighbours8(c, W, H)):
                    grew |= reveal([c])
            changed |= grew
        # 3: single rule
        for x in cells:
            if x in R and x not in fog:
                U, r = constraint(x)
                if U and r == 0:
                    changed |= reveal(U)
                elif U and r == len(U):
                    changed |= deduce_mines(U)
        # 4: subset rule over all ordered pairs (pairs with U(x) empty can never fire)
        if rules == "single_subset":
            facts = []
            for x in cells:
                if x in R and x not in fog:
                    U, r = constraint(x)
                    if U:
                        facts.append((U, r))
            # facts stay true while R and K grow (a fact is about the true layout), so
            # using this snapshot through the pass is sound; the loop ends on a pass that
            # saw the current state and changed nothing.
            for Ux, rx in facts:
                for Uy, ry in facts:
                    if Ux < Uy:
                        D = Uy - Ux
                        dm = ry - rx
                        assert 0 <= dm <= len(D), "inconsistent subset constraint"
                        if dm == 0:
                            changed |= reveal(D)
                        elif dm == len(D):
                            changed |= deduce_mines(D)
        if not changed:
            break
    safe = set(all_cells(W, H)) - mines
    assert R <= safe and K <= mines
    return R, K


# ----------------------------------------------------------------------------- legality, F3

def unreachable_safe(W, H, mines):
    """Safe cells not connected to the spawn through safe cells under 8-adjacency."""
    mines = set(mines)
    safe = set(all_cells(W, H)) - mines
    seen = spawn_cells(W, H) & safe
    todo = deque(seen)
    while todo:
        c = todo.popleft()
        for n in neighbours8(c, W, H):
            if n in safe and n not in seen:
                seen.add(n)
                todo.append(n)
    return len(safe - seen)


def chain0(W, H, mines, r0):
    """Chain0 = R0 + every 0-cell + every safe neighbour of a 0-cell."""
    mines = set(mines)
    nums = numbers(mines, W, H)
    zeros = {c for c in all_cells(W, H) if c not in mines and nums[c] == 0}
    chain = set(r0) | zeros
    for z in zeros:
        chain |= {n for n in neighbours8(z, W, H) if n not in mines}
    return chain


def fog_budget(W, H, mines, fog, r0, dig_ap_cost=1):
    """SPEC §6 from a board: Chain0, U = F - Chain0, paid = S - Chain0, budget, burden pair."""
    mines = set(mines)
    safe = set(all_cells(W, H)) - mines
    chain = chain0(W, H, mines, r0)
    U = set(fog) - chain
    paid = safe - chain
    return {
        "chain0_cells": len(chain),
        "fog_unreachable": len(U),
        "paid_cells": len(paid),
        "delta_budget_fog": len(U) * dig_ap_cost,
        "burden_pair": (len(U), max(1, len(paid))),
        "fog_burden_ratio": len(U) / max(1, len(paid)),
    }


def metrics(W, H, mines, fog, r0, rules, order=None, dig_ap_cost=1):
    """Every integer/float metric of a finished board (SPEC §5-§7) from its cell sets."""
    mines = set(mines)
    fog = set(fog)
    R, K = solve(W, H, mines, fog, r0, rules, order)
    safe = W * H - len(mines)
    out = {
        "mines": len(mines),
        "safe": safe,
        "revealed": len(R),
        "revealed_core": len(R - fog),
        "fog_cells": len(fog),
        "inferability": len(R) / safe,
        "inferability_core": len(R - fog) / max(1, safe - len(fog)),
        "fog_ratio": len(fog) / (W * H),
        "unreachable_safe": unreachable_safe(W, H, mines),
        "R": R,
        "K": K,
    }
    out.update(fog_budget(W, H, mines, fog, r0, dig_ap_cost))
    return out


# ----------------------------------------------------------------------------- F5 generate

def _param(row, name):
    return row[name] if isinstance(row, dict) else getattr(row, name)


def generate(row_params, pool, seed, rng_factory=None, redraw=False):
    """SPEC §4 stages 2-4 for one stream seed.

    ``row_params``: a BoardGenRow or a dict with its field names; ``pool``: the variant pool
    (VariationRow-like objects). Returns the chosen attempt's mines, variation, fog and R
    (sets / dict) plus the record's integer fields and ``exit``.
    """
    W = _param(row_params, "board_width")
    H = _param(row_params, "board_height")
    d = _param(row_params, "mine_density")
    target = float(_param(row_params, "inferability_target"))
    rules = _param(row_params, "solver_rules")
    min_safe = _param(row_params, "min_safe_count")
    max_attempts = _param(row_params, "max_gen_attempts")
    count = _param(row_params, "fog_region_count")
    ratio = _param(row_params, "fog_target_ratio")
    pool = sorted(pool, key=lambda v: v.variant_id)
    N = planned_mines(W, H, d)
    t = region_size(W, H, ratio, count)
    rng = (rng_factory or (lambda s: Pcg32(s, PCG_INITSEQ)))(seed)

    attempts = []
    for k in range(1, max_attempts + 1):
        mines = place_mines(rng, W, H, N, redraw)
        variation, achieved = place_fog(rng, W, H, mines, pool, count, t)
        fog = fog_of(variation, pool)
        check_hard_bounds(W, H, mines, fog, variation)
        r0, _ = r0_and_reach(mines, W, H)
        m = metrics(W, H, mines, fog, r0, rules)
        gap = max(0, min_safe - m["safe"])
        a = {
            "k": k,
            "mines_set": mines,
            "variation": variation,
            "fog_set": fog,
            "R": m["R"],
            "mines": m["mines"],
            "safe": m["safe"],
            "revealed": m["revealed"],
            "revealed_core": m["revealed_core"],
            "fog_cells": m["fog_cells"],
            "fog_regions_achieved": achieved,
            "fog_shortfall": (count - achieved) if pool else 0,
            "chain0_cells": m["chain0_cells"],
            "fog_unreachable": m["fog_unreachable"],
            "paid_cells": m["paid_cells"],
            "unreachable_safe": m["unreachable_safe"],
            "min_safe_gap": gap,
            "planned_mines": N,
            "legal": m["unreachable_safe"] == 0 and gap == 0,
            "inferability": m["inferability"],
            "inferability_core": m["inferability_core"],
        }
        attempts.append(a)
        if a["legal"] and a["inferability"] >= target and a["inferability_core"] >= target:
            return dict(a, attempts_used=k, exit="met")
    legal = [a for a in attempts if a["legal"]]
    if legal:
        best = max(legal, key=lambda a: (a["inferability"], -a["k"]))
        return dict(best, attempts_used=max_attempts, exit="accept_best")
    least_bad = min(attempts, key=lambda a: (a["unreachable_safe"], a["min_safe_gap"], a["k"]))
    return dict(least_bad, attempts_used=max_attempts, exit="accept_least_bad")


RECORD_INT_FIELDS = (
    "planned_mines", "mines", "safe", "revealed", "revealed_core", "fog_cells",
    "fog_regions_achieved", "fog_shortfall", "chain0_cells", "fog_unreachable", "paid_cells",
    "unreachable_safe", "min_safe_gap", "attempts_used", "exit",
)


# ----------------------------------------------------------------------------- pure PCG32

class PurePcg32:
    """pcg_basic in plain Python ints (pcg32_srandom_r / pcg32_random_r / boundedrand_r)."""

    MULT = 6364136223846793005
    M64 = (1 << 64) - 1

    def __init__(self, initstate, initseq=PCG_INITSEQ):
        self.state = 0
        self.inc = ((initseq << 1) | 1) & self.M64
        self.next_u32()
        self.state = (self.state + initstate) & self.M64
        self.next_u32()

    def next_u32(self):
        old = self.state
        self.state = (old * self.MULT + self.inc) & self.M64
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        return ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF

    def bounded(self, bound):
        threshold = (-bound % (1 << 32)) % bound
        while True:
            r = self.next_u32()
            if r >= threshold:
                return r % bound

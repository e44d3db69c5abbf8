"""The generate-verify loop (A1 stage 4, F5) and the batch kernel (SPEC §8 cost model).

``generate_boards`` runs every attempt of each board on its own stream and writes the
chosen attempt's integer record (``codes.F`` order), one row of an int64 block per board,
so the batch path pays no Python per board; with ``keep`` it also copies the grids out
(the per-board API). ``run`` is its Python front: it allocates the work arrays.

Difficulty tiers (record schema 2) are opt-in: ``generate_boards_tiers`` runs the tier
solver (``tiers.solve_tiers``, F1 included) instead of F1's ``solver.solve`` on every
attempt, so the chosen attempt's record carries them. ``tiers`` is an argument numba can
decide before typing (left out, or the constant True), so it prunes the solver branch not
taken: the default path compiles and runs exactly F1 (cold compile budget, see
docs/decisions/, decision 56 "Difficulty tiers").

Named interface: the row arrives as ``codes.KernelInputs`` (``RowPlan.kernel_inputs``), the
work arrays as a ``Workspace``; work rows are indexed by ``codes.W8`` / ``codes.W32`` and the
output grids by ``codes.Grid``, never by number.

Cold compile budget (issue 2: <= 5 s): every array is allocated here in Python, never
inside a kernel, because each numba array constructor (np.zeros/empty/full per dtype and
rank) is a compile of its own (moving them out measured ~0.6 s).
"""

from typing import NamedTuple

import numpy as np
from numba import njit

from boardcore._kernels.pcg import PCG_DEFAULT_SEQ, pcg_seed

from ..codes import F, N_GRIDS, N_INT_FIELDS, W8, W32, Defect, Exit, KernelInputs, Tier
from . import board as B
from . import compiling
from .solver import POPCOUNT8, SUBSET_TABLE, solve
from .tiers import solve_tiers


class Workspace(NamedTuple):
    """Caller-owned arrays of one W x H board (``workspace``): three read-only tables, then
    the work arrays every attempt overwrites."""

    nb: np.ndarray  # int32 (W*H, 8): board.neighbour_table, read only
    trans: np.ndarray  # int16 solver.SUBSET_TABLE, read only
    popcount: np.ndarray  # int64 solver.POPCOUNT8, read only
    i8: np.ndarray  # int8 (len(W8), W*H): rows named by codes.W8
    i32: np.ndarray  # int32 (len(W32), W*H): rows named by codes.W32
    umask: np.ndarray  # uint8 (W*H): the solver's unknown masks
    cons: np.ndarray  # int32 (W*H, 8): tier solver, the constraints of each component cell
    cur: np.ndarray  # int64 (N_INT_FIELDS): the current attempt's record
    st: np.ndarray  # uint64 (2): the PCG32 stream state


_NO_GRIDS = np.zeros((N_GRIDS, 1), dtype=np.int8)  # ``best`` is unused without ``keep``


def workspace(w: int, h: int) -> Workspace:
    """The work arrays of a W x H board; the row W8.SPAWN is filled here once (it is the
    same for every attempt)."""
    n = w * h
    i8 = np.zeros((len(W8), n), dtype=np.int8)
    i8[W8.SPAWN] = B.spawn_mask(w, h)
    return Workspace(nb=B.neighbour_table(w, h), trans=SUBSET_TABLE, popcount=POPCOUNT8,
                     i8=i8, i32=np.zeros((len(W32), n), dtype=np.int32),
                     umask=np.zeros(n, dtype=np.uint8), cons=np.zeros((n, 8), dtype=np.int32),
                     cur=np.zeros(N_INT_FIELDS, dtype=np.int64),
                     st=np.zeros(2, dtype=np.uint64))


def run(seeds: np.ndarray, inputs: KernelInputs, ints: np.ndarray,
        best: np.ndarray | None = None, tiers: bool = False) -> tuple[int, int]:
    """``generate_boards`` over ``seeds`` for a row (``RowPlan.kernel_inputs()``).

    ``ints`` (len(seeds) x N_INT_FIELDS, int64) receives the records. With ``best``
    (N_GRIDS x W*H, int8, rows named by ``codes.Grid``) the grids of the last board's chosen
    attempt are copied out. With ``tiers`` the records carry the difficulty tiers
    (``generate_boards_tiers``, compiled on its first use). Returns (defect code, board
    position) as ``generate_boards``.
    """
    keep = best is not None
    work = workspace(inputs.row.width, inputs.row.height)
    grids = best if keep else _NO_GRIDS
    kernel = generate_boards_tiers if tiers else generate_boards
    if not kernel.overloads:  # first call: a cold compile or a cache load
        with compiling():
            return kernel(seeds, inputs.row, inputs.pool, work, ints, keep, grids)
    return kernel(seeds, inputs.row, inputs.pool, work, ints, keep, grids)


# inline="always": spliced into generate_boards at numba-IR level, so it is not a dispatcher
# of its own; that saves a whole-module LLVM pass over every callee (~1.2 s of cold compile,
# same speed). Inlining the other kernels measured slower to compile.
@njit(cache=True, nogil=True, inline="always")
def _attempt(row, pool, work, tiers):
    """Stages 2-3 of one attempt plus its F1/F3/legality counts into ``work.cur`` (F order),
    with ``tiers`` (not None) the difficulty tiers too.

    Returns a Defect code. The attempt's grids stay in the work rows ``work.i8[W8.*]``.
    """
    w = row.width
    h = row.height
    region_count = row.region_count
    pool_constraint = pool.constraint
    st = work.st
    nb = work.nb
    out = work.cur
    i8 = work.i8
    i32 = work.i32
    n = w * h
    mine = i8[W8.MINE]
    num = i8[W8.NUM]
    spawn = i8[W8.SPAWN]
    r0 = i8[W8.R0]
    reach = i8[W8.REACH]
    var = i8[W8.VAR]
    fog = i8[W8.FOG]
    revealed = i8[W8.REVEALED]
    scratch = i8[W8.SCRATCH]
    ring = i8[W8.RING]
    cand = i32[W32.CAND]
    queue = i32[W32.QUEUE]
    # stage 2: mines, then remove-only clearing of the spawn's closure and its ring
    # (W8.SPAWN is filled once by ``workspace``)
    B.place_mines(st, w, h, spawn, row.planned_mines, cand, mine)
    B.count_numbers(mine, nb, num)
    B.zero_closure(spawn, mine, num, nb, scratch, queue)
    B.outer_ring(scratch, nb, ring)
    removed = B.remove_ring_mines(scratch, ring, mine)
    if row.redraw and removed > 0:  # the what-if rule only (``RowPlan.what_if``)
        B.redraw_mines(st, spawn, scratch, ring, removed, cand, mine)
    B.count_numbers(mine, nb, num)
    # stage 3: R0 and reach domain on the final layout, then the regions
    B.zero_closure(spawn, mine, num, nb, r0, queue)
    B.outer_ring(r0, nb, ring)
    for c in range(n):
        reach[c] = 1 if (r0[c] or ring[c]) else 0
    achieved = 0
    if region_count > 0 and pool_constraint.shape[0] > 0:
        achieved, code = B.place_regions(st, w, h, mine, num, spawn, reach, region_count,
                                         row.region_size, pool_constraint, var, i8[W8.ELIG],
                                         i32[W32.COMP], i32[W32.SIZE], cand,
                                         i32[W32.FRONTIER], queue)
        if code != Defect.NONE:
            return code
    else:
        for c in range(n):
            var[c] = 0
    nfog = 0
    nmines = 0
    for c in range(n):
        nmines += mine[c]
        f = 0
        if var[c] > 0:
            f = pool.hides[var[c] - 1]
        fog[c] = f
        nfog += f
    code = B.check_structure(w, h, mine, num, spawn, r0, reach, var, fog)
    if code != Defect.NONE:
        return code
    # stage 4 measures: F1 solver (or the tier solver, F1 included), clearability, F3 chain
    if tiers is not None:  # (decided before typing: one branch is pruned)
        code = solve_tiers(w, h, work, Tier.SUBSET if row.use_subset else Tier.SINGLE)
    else:
        nrev, ncore, code = solve(w, h, mine, num, fog, r0, nb, row.use_subset, work.trans,
                                  work.popcount, revealed, i8[W8.KNOWN], i8[W8.READY],
                                  work.umask, i32[W32.REM], queue, i32[W32.DIRTY],
                                  i8[W8.INDIRTY], i32[W32.ACTIVE])
        out[F.REVEALED] = nrev
        out[F.REVEALED_CORE] = ncore
    if code != Defect.NONE:
        return code
    nsafe = n - nmines
    out[F.MINES] = nmines
    out[F.SAFE] = nsafe
    out[F.FOG_CELLS] = nfog
    out[F.REGIONS_ACHIEVED] = achieved
    out[F.SHORTFALL] = region_count - achieved if pool_constraint.shape[0] > 0 else 0
    out[F.UNREACHABLE_SAFE] = B.unreachable_safe(mine, spawn, nb, scratch, queue)
    nchain = B.chain0(mine, num, r0, nb, scratch)
    out[F.CHAIN0] = nchain
    unreach_fog = 0
    paid = 0
    for c in range(n):
        if scratch[c] == 0:
            unreach_fog += fog[c]
            if mine[c] == 0:
                paid += 1
    out[F.FOG_UNREACHABLE] = unreach_fog
    out[F.PAID] = paid
    return Defect.NONE


# inline="always" matters only to generate_boards_tiers (a jitted caller gets the body spliced
# in, with ``tiers`` the constant True: no second dispatcher layer, ~0.8 s less cold compile);
# called from Python it is an ordinary dispatcher.
@njit(cache=True, nogil=True, inline="always")
def generate_boards(seeds, row, pool, work, ints, keep, best, tiers=None):
    """One board per stream seed (A1 stages 2-4, F5 exits): ints[i] gets board i's record
    (``codes.F`` order). Each board runs its attempts on its own stream
    pcg32_srandom_r(seed, default seq). With ``keep``, ``best[Grid.*]`` receive the grids of
    the last board's chosen attempt (the per-board API passes one seed). One entry point for
    both paths: one compile, one cache entry. ``row`` / ``pool`` are ``codes.KernelRow`` /
    ``codes.KernelPool``, ``work`` is ``workspace(row.width, row.height)``. ``tiers`` is
    left out (the tier slots of ``ints`` stay 0, not computed, and the tier solver is not
    even compiled) or the constant True from ``generate_boards_tiers``.

    Returns (defect code, board position); (NONE, len(seeds)) on success.
    """
    n = row.width * row.height
    target = row.target
    min_safe = row.min_safe
    i8 = work.i8
    cur = work.cur
    for i in range(seeds.shape[0]):
        out = ints[i]
        pcg_seed(work.st, seeds[i], PCG_DEFAULT_SEQ)
        chosen = -1
        chosen_exit = Exit.ACCEPT_LEAST_BAD
        best_inf = -1.0
        bad_unreach = 0
        bad_gap = 0
        k = 0
        for k in range(1, row.attempts + 1):
            code = _attempt(row, pool, work, tiers)
            if code != Defect.NONE:
                return code, i
            nsafe = cur[F.SAFE]
            gap = max(0, min_safe - nsafe)
            legal = cur[F.UNREACHABLE_SAFE] == 0 and gap == 0
            inf = cur[F.REVEALED] / nsafe
            core = cur[F.REVEALED_CORE] / max(1, nsafe - cur[F.FOG_CELLS])
            take = False
            if legal:
                if inf >= target and core >= target:
                    take = True
                    chosen_exit = Exit.MET
                elif chosen_exit != Exit.ACCEPT_BEST or inf > best_inf:
                    take = True  # first legal attempt, or strictly better (ties keep earliest)
                    chosen_exit = Exit.ACCEPT_BEST
                    best_inf = inf
            elif chosen_exit == Exit.ACCEPT_LEAST_BAD:
                u = cur[F.UNREACHABLE_SAFE]
                if chosen < 0 or u < bad_unreach or (u == bad_unreach and gap < bad_gap):
                    take = True
                    bad_unreach = u
                    bad_gap = gap
            if take:
                chosen = k
                # explicit loops, not slice copies: a slice copy pulls numba's shape-error
                # formatting into the compile (seconds of cold start for nothing)
                for f in range(N_INT_FIELDS):
                    out[f] = cur[f]
                out[F.MIN_SAFE_GAP] = gap
                if keep:  # Grid g is work row W8[g.name] = g (codes.W8 lists them first)
                    for g in range(N_GRIDS):
                        for c in range(n):
                            best[g, c] = i8[g, c]
            if chosen_exit == Exit.MET:
                break
        out[F.PLANNED_MINES] = row.planned_mines
        out[F.ATTEMPTS_USED] = k
        out[F.EXIT] = chosen_exit
        out[F.DEFECT] = Defect.NONE
    return Defect.NONE, seeds.shape[0]


@njit(cache=True, nogil=True)
def generate_boards_tiers(seeds, row, pool, work, ints, keep, best):
    """``generate_boards`` with the difficulty tiers (record schema 2) of every attempt, so
    the chosen attempt's record carries them; the tier solver replaces F1's (its F1 values
    are F1's). It splices in the body of ``generate_boards`` with ``tiers`` the constant
    True: it compiles only the tier solver, and the default path never compiles it."""
    return generate_boards(seeds, row, pool, work, ints, keep, best, True)

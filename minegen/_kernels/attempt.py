"""The generate-verify loop (A1 stage 4, F5) and the batch kernel (SPEC §8 cost model).

``generate_boards`` runs every attempt of each board on its own stream and writes the
chosen attempt's integer record (``codes.F`` order), one row of an int64 block per board,
so the batch path pays no Python per board; with ``keep`` it also copies the grids out
(the per-board API). ``run`` is its Python front: it allocates the work arrays.

Cold compile budget (issue 2: <= 5 s): every array is allocated here in Python, never
inside a kernel, because each numba array constructor (np.zeros/empty/full per dtype and
rank) is a compile of its own (moving them out measured ~0.6 s).
"""

import numpy as np
from numba import njit

from ..codes import F, Defect, Exit, N_INT_FIELDS
from . import board as B
from . import compiling
from .pcg import pcg_seed, PCG_DEFAULT_SEQ
from .solver import POPCOUNT8, SUBSET_TABLE, solve

N_I8_ROWS = 14  # int8 work rows, named in _attempt
N_I32_ROWS = 8  # int32 work rows, named in _attempt
N_GRIDS = 7  # rows of ``best``: mine, var, fog, revealed, r0, reach, num

_NO_GRIDS = np.zeros((N_GRIDS, 1), dtype=np.int8)  # ``best`` is unused without ``keep``


def workspace(w: int, h: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                       np.ndarray]:
    """(i8, i32, u8, cur, st): the caller-owned work arrays of a W x H board; the spawn
    row i8[2] is filled here once (it is the same for every attempt)."""
    n = w * h
    i8 = np.zeros((N_I8_ROWS, n), dtype=np.int8)
    i8[2] = B.spawn_mask(w, h)
    return (i8, np.zeros((N_I32_ROWS, n), dtype=np.int32), np.zeros(n, dtype=np.uint8),
            np.zeros(N_INT_FIELDS, dtype=np.int64), np.zeros(2, dtype=np.uint64))


def run(seeds: np.ndarray, row_args: tuple, ints: np.ndarray,
        best: np.ndarray | None = None) -> tuple[int, int]:
    """``generate_boards`` over ``seeds`` for a row (``RowPlan.kernel_args()``).

    ``ints`` (len(seeds) x N_INT_FIELDS, int64) receives the records. With ``best``
    (N_GRIDS x W*H, int8) the grids of the last board's chosen attempt are copied out.
    Returns (defect code, board position) as ``generate_boards`` does.
    """
    w, h = row_args[0], row_args[1]
    keep = best is not None
    args = (seeds, *row_args, SUBSET_TABLE, POPCOUNT8, B.neighbour_table(w, h),
            *workspace(w, h), ints, keep, best if keep else _NO_GRIDS)
    if not generate_boards.overloads:  # first call: a cold compile or a cache load
        with compiling():
            return generate_boards(*args)
    return generate_boards(*args)


# inline="always": spliced into generate_boards at numba-IR level, so it is not a dispatcher
# of its own; that saves a whole-module LLVM pass over every callee (~1.2 s of cold compile,
# same speed). Inlining the other kernels measured slower to compile.
@njit(cache=True, nogil=True, inline="always")
def _attempt(st, w, h, n_planned, region_count, region_size, pool_constraint, pool_hides,
             use_subset, nb, trans, popcount, i8, i32, u8, out):
    """Stages 2-3 of one attempt plus its F1/F3/legality counts into ``out`` (F order).

    Returns a Defect code. Grids of the attempt stay in the workspace rows:
    i8[0] mine, i8[1] num, i8[2] spawn, i8[3] r0, i8[4] reach, i8[5] var, i8[6] fog,
    i8[7] revealed.
    """
    n = w * h
    mine = i8[0]
    num = i8[1]
    spawn = i8[2]
    r0 = i8[3]
    reach = i8[4]
    var = i8[5]
    fog = i8[6]
    revealed = i8[7]
    known = i8[8]
    ready = i8[9]
    indirty = i8[10]
    elig = i8[11]
    ring = i8[12]
    scratch = i8[13]
    cand = i32[0]
    queue = i32[1]
    comp = i32[2]
    size = i32[3]
    frontier = i32[4]
    dirty = i32[5]
    active = i32[6]
    rem = i32[7]
    # stage 2: mines, then remove-only clearing of the spawn's closure and its ring
    # (spawn = i8[2] is filled once by ``workspace``)
    B.place_mines(st, w, h, spawn, n_planned, cand, mine)
    B.count_numbers(mine, nb, num)
    B.zero_closure(spawn, mine, num, nb, scratch, queue)
    B.outer_ring(scratch, nb, ring)
    B.remove_ring_mines(scratch, ring, mine)
    B.count_numbers(mine, nb, num)
    # stage 3: R0 and reach domain on the final layout, then the regions
    B.zero_closure(spawn, mine, num, nb, r0, queue)
    B.outer_ring(r0, nb, ring)
    for c in range(n):
        reach[c] = 1 if (r0[c] or ring[c]) else 0
    achieved = 0
    if region_count > 0 and pool_constraint.shape[0] > 0:
        achieved, code = B.place_regions(st, w, h, mine, num, spawn, reach, region_count,
                                         region_size, pool_constraint, var, elig, comp, size,
                                         cand, frontier, queue)
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
            f = pool_hides[var[c] - 1]
        fog[c] = f
        nfog += f
    code = B.check_structure(w, h, mine, num, spawn, r0, reach, var, fog)
    if code != Defect.NONE:
        return code
    # stage 4 measures: F1 solver, clearability, F3 chain
    nrev, ncore, code = solve(w, h, mine, num, fog, r0, nb, use_subset, trans, popcount,
                              revealed, known, ready, u8, rem, queue, dirty, indirty, active)
    if code != Defect.NONE:
        return code
    nsafe = n - nmines
    out[F.MINES] = nmines
    out[F.SAFE] = nsafe
    out[F.REVEALED] = nrev
    out[F.REVEALED_CORE] = ncore
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


@njit(cache=True, nogil=True)
def generate_boards(seeds, w, h, n_planned, target, min_safe, attempts, region_count,
                    region_size, pool_constraint, pool_hides, use_subset, trans, popcount,
                    nb, i8, i32, u8, cur, st, ints, keep, best):
    """One board per stream seed (A1 stages 2-4, F5 exits): ints[i] gets board i's record
    (``codes.F`` order). Each board runs its attempts on its own stream
    pcg32_srandom_r(seed, default seq). With ``keep``, ``best[0..6]`` receive the grids
    mine, var, fog, revealed, r0, reach, num of the last board's chosen attempt (the
    per-board API passes one seed). One entry point for both paths: one compile, one cache
    entry. ``nb`` is ``board.neighbour_table(w, h)``; the rest are ``workspace(w, h)``.

    Returns (defect code, board position); (NONE, len(seeds)) on success.
    """
    n = w * h
    for i in range(seeds.shape[0]):
        out = ints[i]
        pcg_seed(st, seeds[i], PCG_DEFAULT_SEQ)
        chosen = -1
        chosen_exit = Exit.ACCEPT_LEAST_BAD
        best_inf = -1.0
        bad_unreach = 0
        bad_gap = 0
        k = 0
        for k in range(1, attempts + 1):
            code = _attempt(st, w, h, n_planned, region_count, region_size, pool_constraint,
                            pool_hides, use_subset, nb, trans, popcount, i8, i32, u8, cur)
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
                if keep:
                    for c in range(n):
                        best[0, c] = i8[0, c]  # mine
                        best[1, c] = i8[5, c]  # var
                        best[2, c] = i8[6, c]  # fog
                        best[3, c] = i8[7, c]  # revealed
                        best[4, c] = i8[3, c]  # r0
                        best[5, c] = i8[4, c]  # reach
                        best[6, c] = i8[1, c]  # num
            if chosen_exit == Exit.MET:
                break
        out[F.PLANNED_MINES] = n_planned
        out[F.ATTEMPTS_USED] = k
        out[F.EXIT] = chosen_exit
        out[F.DEFECT] = Defect.NONE
    return Defect.NONE, seeds.shape[0]

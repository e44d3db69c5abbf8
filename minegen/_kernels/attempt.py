"""The generate-verify loop (A1 stage 4, F5) and the batch kernel (SPEC §8 cost model).

``generate_boards`` runs every attempt of each board on its own stream and writes the
chosen attempt's integer record (``codes.F`` order), one row of an int64 block per board,
so the batch path pays no Python per board; with ``keep`` it also copies the grids out
(the per-board API). ``derive_seeds`` gives the seeds of a batch range.
"""

import numpy as np
from numba import njit

from ..codes import F, Defect, Exit, N_INT_FIELDS
from . import board as B
from .pcg import derive_seed, pcg_seed, PCG_DEFAULT_SEQ
from .solver import solve


@njit(cache=True, nogil=True)
def _workspace(n):
    i8 = np.zeros((14, n), dtype=np.int8)
    i32 = np.zeros((8, n), dtype=np.int32)
    return i8, i32


@njit(cache=True, nogil=True)
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
    B.spawn_mask(w, h, spawn)
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
def derive_seeds(name_hash, first_index, count):
    """Stream seeds of stream indices first_index + i, i in [0, count) (SPEC §3)."""
    seeds = np.empty(count, dtype=np.uint64)
    for i in range(count):
        seeds[i] = derive_seed(name_hash, first_index + i)
    return seeds


@njit(cache=True, nogil=True)
def generate_boards(seeds, w, h, n_planned, target, min_safe, attempts, region_count,
                    region_size, pool_constraint, pool_hides, use_subset, trans, popcount,
                    ints, keep, best):
    """One board per stream seed (A1 stages 2-4, F5 exits): ints[i] gets board i's record
    (``codes.F`` order). Each board runs its attempts on its own stream
    pcg32_srandom_r(seed, default seq). With ``keep``, ``best[0..5]`` receive the grids
    mine, var, fog, revealed, r0, reach of the last board's chosen attempt (the per-board
    API passes one seed). One entry point for both paths: one compile, one cache entry.

    Returns (defect code, board position); (NONE, len(seeds)) on success.
    """
    n = w * h
    nb = B.neighbour_table(w, h)
    i8, i32 = _workspace(n)
    u8 = np.zeros(n, dtype=np.uint8)
    cur = np.zeros(N_INT_FIELDS, dtype=np.int64)
    st = np.zeros(2, dtype=np.uint64)
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
            if chosen_exit == Exit.MET:
                break
        out[F.PLANNED_MINES] = n_planned
        out[F.ATTEMPTS_USED] = k
        out[F.EXIT] = chosen_exit
        out[F.DEFECT] = Defect.NONE
    return Defect.NONE, seeds.shape[0]

"""The simulator's diagnostics of one lost tool-free run (``sim.simulate`` with ``diagnose``;
decisions 65, 67, 109, 139).

Diagnose (tool-free runs, after the run, on the recorded states ``path[j]`` = the mask
after j clicks, with the search of ``search.py`` and the attempt's memo, cleared once per
``simulate``). A won run is its own witness: all its states are winnable, nothing is
searched. A lost run with n clicks: its doomed states (search NO) are a suffix d .. n (a
legal click from a doomed state leads to a doomed state; state n is a hard deadlock), found
by searching backwards from n while the answer is NO; the answer at d - 1 is YES or UNKNOWN.
- TF_DOOM_STEP_SUM += d, TF_DOOMED_LOSSES += 1 when d is exact: d = 0, or state d - 1 is
  YES (then every earlier state is winnable too);
- TF_DOOMED_5 / TF_UNKNOWN_5 (runs alive after their 5th click, i.e. lost ones): state 5 is
  NO if 5 >= d, YES if state d - 1 >= 5 is YES, else the search's answer at state 5;
- TF_SOFT: some state j in [max(d, 1), n - 1] (doomed, not hard: the run still had a legal
  click there) from which one Undo (budget_undo >= 1 and >= 1 lane: the last-inserted slot
  piece goes to a lane, ``search.undo_occ``) or one Remove (budget_remove >= 1: the first
  min(3, n) slot pieces go to the bypass, which the search models with its return loop)
  gives a state the search calls YES (``search.recoverable``).
Every answer is exact unless the search hit its cap (UNKNOWN); with no UNKNOWN these are
the definitions "first doomed click", "doomed after click 5", "passed a soft deadlock".
Budget: the searches of one ``simulate`` expand at most DIAG_BUDGET_CAPS x dfs_node_cap
nodes together (each search's cap is what is left, at most dfs_node_cap; once spent every
search answers UNKNOWN at once). Boards of the reference presets use ~4k nodes per attempt
(at most ~40k seen); the budget only stops pathological boards (e.g. T = 60, 20 elements,
75 % occupancy: ~1e8 nodes, minutes per attempt, without it).
"""

import numpy as np
from numba import njit

from ..codes import OPENING_CLICKS, P, S, Solvable
from .dfs import budget_cap, solve_on
from .search import _recoverable

DIAG_BUDGET_CAPS = 10  # the diagnostics of one simulate expand <= this x dfs_node_cap nodes


@njit(cache=True, nogil=True)
def _diagnose(elem, occ, prm, n, path, undo_at, rem_code, table, spill, meta, stk, occ_u,
              stats, budget_end):
    """The (diag) stats of the tool-free run just played and lost after n clicks (its
    states ``path`` / ``undo_at`` / ``rem_code`` of ``SimWork``), searching on the memo's
    arrays (see the module docstring)."""
    T = prm[P.T]
    E = prm[P.E]
    rule = prm[P.SLOT_RULE]
    cap = prm[P.DFS_CAP]
    doom = n + 1  # the doomed states are a suffix doom .. n: find its start, backwards
    before = -1  # the answer at state doom - 1 (-1: none)
    for j in range(n, -1, -1):
        res, _ = solve_on(elem, occ, T, E, path[j], 0, -1, rule,
                          budget_cap(meta, cap, budget_end), table, spill, meta, stk)
        if res != Solvable.NO:
            before = np.int64(res)
            break
        doom = j
    if doom <= n and (doom == 0 or before == Solvable.YES):  # the doom step is exact
        stats[S.TF_DOOM_STEP_SUM] += doom
        stats[S.TF_DOOMED_LOSSES] += 1
    if n >= OPENING_CLICKS:
        if doom <= OPENING_CLICKS:
            r5 = np.int64(Solvable.NO)
        elif before == Solvable.YES or doom == OPENING_CLICKS + 1:
            r5 = before  # state 5 is state doom - 1, or before it: winnable
        else:
            res, _ = solve_on(elem, occ, T, E, path[OPENING_CLICKS], 0, -1, rule,
                              budget_cap(meta, cap, budget_end), table, spill, meta, stk)
            r5 = np.int64(res)
        if r5 == Solvable.NO:
            stats[S.TF_DOOMED_5] += 1
        elif r5 == Solvable.UNKNOWN:
            stats[S.TF_UNKNOWN_5] += 1
    undo_ok = prm[P.BUDGET_UNDO] >= 1 and prm[P.N_LANES] >= 1
    remove_ok = prm[P.BUDGET_REMOVE] >= 1
    for j in range(max(doom, 1), n):
        u = undo_at[j] if undo_ok else -1
        rem = rem_code[j] if remove_ok else 0
        if _recoverable(elem, occ, T, E, rule, cap, budget_end, table, spill, meta, stk, occ_u,
                        path[j], 0, u, rem):
            stats[S.TF_SOFT] += 1
            break

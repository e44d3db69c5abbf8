"""The batch's runs (``tilegen/_kernels/fast.py``) against the one run code (``run._runs``),
run by run (decision 189; the division-free draw they use: ``test_rng.py``); the closing
work's sample (decision 190).

The slow, obvious side is ``_runs`` (itself held to the plain twin ``naive_tile_sim`` by
``test_tile_sim.py``): one run at a time, with its result slots read after each run. The fast
side plays n runs in one call. Equal means: every stat slot, the stream state after the runs,
and the start states of exactly the lost tool-free runs (what the diagnostics replay).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from test_tile_sim import SETTINGS, boards, params  # noqa: E402

from boardcore._kernels.pcg import pcg_seed  # noqa: E402
from tilegen import batch  # noqa: E402
from tilegen._kernels import fast, moves  # noqa: E402
from tilegen._kernels import sim as KM  # noqa: E402
from tilegen._kernels.run import _runs  # noqa: E402
from tilegen.codes import ALL_CLOSING, N_S, Close, Defect, P, R, S, Strategy  # noqa: E402
from tilegen.generate import plan_for  # noqa: E402


def one_at_a_time(elem, occ, prm, strategy, tools, seed, seq, n):
    """n runs of ``_runs``, one call each: (stats, stream state, start states of lost
    tool-free runs)."""
    work = KM.make_work(int(prm[P.N_LANES]))
    KM.prepare(elem, occ, prm, work)
    pcg_seed(work.st, np.uint64(seed), np.uint64(seq))
    stats = np.zeros(N_S, dtype=np.int64)
    lost = []
    for _ in range(n):
        start = (int(work.st[0]), int(work.st[1]))
        played, code = _runs(elem, occ, prm, strategy, tools, work.st, work, 1, False, False,
                             work.no_trace, work.no_trace_elem, stats)
        assert played == 1 and code == Defect.NONE
        if not tools and not work.run[0]:  # Run.WON
            lost.append(start + (int(strategy),))
    return stats.tolist(), (int(work.st[0]), int(work.st[1])), lost


def in_one_call(elem, occ, prm, strategy, tools, seed, seq, n):
    work = KM.make_work(int(prm[P.N_LANES]))
    KM.prepare(elem, occ, prm, work)
    pcg_seed(work.st, np.uint64(seed), np.uint64(seq))
    stats = np.zeros(N_S, dtype=np.int64)
    lost = np.zeros((n, 3), dtype=np.uint64)
    if tools:
        code, n_lost = fast.ta_runs(elem, occ, prm, strategy, work.st, work, n, stats), 0
    else:
        n_lost, code = fast.tf_runs(elem, occ, prm, strategy, work.st, work, n, stats, lost, 0)
    assert code == Defect.NONE
    return stats.tolist(), (int(work.st[0]), int(work.st[1])), [tuple(int(x) for x in r)
                                                       for r in lost[:n_lost]]


@settings(max_examples=200, **SETTINGS)
@given(data=st.data())
def test_the_batch_runs_equal_the_run_code_run_by_run(data):
    elem, occ, E = data.draw(boards())
    prm = data.draw(params(len(elem), E))
    seed = data.draw(st.integers(0, 2**64 - 1))
    n = data.draw(st.sampled_from([12, 1, 5]))
    for tools in (False, True):
        for s in Strategy:
            seq = 8 + 3 * int(tools) + int(s)
            want = one_at_a_time(elem, occ, prm, s, tools, seed, seq, n)
            got = in_one_call(elem, occ, prm, s, tools, seed, seq, n)
            assert got == want
            st_ = want[0]
            if tools:
                for t, name in ((S.USES_REMOVE, "remove"), (S.USES_SHUFFLE, "shuffle"),
                                (S.USES_UNDO, "undo")):
                    if st_[t]:
                        event(f"{name} used")
            else:
                event("a tool-free loss" if want[2] else "tool-free: all won")


@settings(max_examples=300, **SETTINGS)
@given(data=st.data())
def test_choose_reads_element_masks_with_extra_pieces(data):
    """``choose`` on each element's clickable pieces equals ``choose`` on any superset of
    them that adds only pieces that are not clickable (fast.py's element masks)."""
    E = data.draw(st.integers(1, 12))
    em = np.array([data.draw(st.integers(0, 2**20 - 1)) for _ in range(E)], dtype=np.uint64)
    for e in range(E):  # pieces are clickable for one element only
        for f in range(e):
            em[e] &= ~em[f]
    clk = np.uint64(0)
    eon = np.uint64(0)
    for e in range(E):
        clk |= em[e]
        if em[e]:
            eon |= np.uint64(1) << np.uint64(e)
    extra = np.array([data.draw(st.integers(0, 2**40 - 1)) for _ in range(E)],
                     dtype=np.uint64) & ~clk
    c1 = np.uint64(data.draw(st.integers(0, 2**E - 1)))
    c2 = np.uint64(data.draw(st.integers(0, 2**E - 1))) & ~c1
    full = data.draw(st.booleans())
    for s in Strategy:
        assert moves.choose(s, full, em | extra, eon, c1, c2, clk) == \
            moves.choose(s, full, em, eon, c1, c2, clk)


def test_the_sample_gets_the_closing_work_and_the_rest_is_unchanged():
    """Boards -1 .. 40 of one row: the production board and audit boards 0, 16, 32 are
    diagnosed, with the values a full closing gives; every other board has nulls there and
    every column computed on all boards equals the full closing's."""
    plan = plan_for("beijing", 4)
    closing = batch.closing_of(plan, -1, 42)
    diag = np.arange(-1, 41)[(closing & Close.DIAGNOSE) != 0]
    assert diag.tolist() == [-1, 0, 16, 32]
    assert ((closing & Close.SEARCH) != 0).all()
    seeds = batch.seeds_of(plan, -1, 42)
    sampled = batch.run_seeds(plan, seeds, closing)[0]
    full = batch.run_seeds(plan, seeds, np.full(42, int(ALL_CLOSING)))[0]
    assert (sampled[:, R.DIAGNOSED] == ((closing & Close.DIAGNOSE) != 0)).all()
    kept = [r for r in R if not (R.TF_DOOMED_5 <= r <= R.TF_DOOMED_LOSSES or
                                 R.ALT_SLOT_TF_WINS <= r <= R.ONLY_UNDO_TA_WINS
                                 or r in (R.DIAGNOSED, R.TOOLS_TO_WIN))]
    assert (sampled[:, kept] == full[:, kept]).all()
    on = (closing & Close.DIAGNOSE) != 0
    assert (sampled[on] == full[on]).all()
    assert (sampled[~on][:, R.ALT_SLOT_TF_WINS:R.ONLY_UNDO_TA_WINS + 1] == -1).all()
    assert (sampled[~on][:, R.TOOLS_TO_WIN] == -2).all()
    assert full[~on][:, R.TF_DOOMED_LOSSES].sum() > 0  # the sample left out real work
    cols = batch.run_block(plan, -1, 42)
    assert np.isnan(cols["opening_stability"][~on]).all()
    assert not np.isnan(cols["opening_stability"][on]).any()


def test_no_closing_work_changes_no_attempt():
    """The core alone (bench's core figure) plays the same attempts as the audit."""
    plan = plan_for("beijing", 5)
    seeds = batch.seeds_of(plan, 0, 12)
    none = batch.run_seeds(plan, seeds, np.zeros(12, dtype=np.int64))[0]
    full = batch.run_seeds(plan, seeds)[0]
    loop = [R.ATTEMPTS_USED, R.EXIT, R.RETURNED, R.FIRST_VALID, R.RAW_TF_WINS, R.TF_WINS,
            R.TA_WINS, R.TF_PEAK_SUM, R.USES_UNDO]
    assert (none[:, loop] == full[:, loop]).all()
    assert (none[:, R.SOLVABLE] == -1).all() and (full[:, R.SOLVABLE] >= 0).all()


def test_a_board_outside_the_sample_says_so_in_words():
    from tilegen.generate import generate_board
    from tilegen.render import header

    inside = header(generate_board("beijing", 1, index=16))
    outside = header(generate_board("beijing", 1, index=1))
    assert "(openingStability) 0." in inside
    assert "(openingStability) not computed" in outside and "diagnose_every = 16" in outside

"""Exhaustive tool-free solvability (brief §11.5, decision 108): a depth-first search over
uint64 masks with a memo; it draws nothing.

State. Tool-free, a state is the set of pieces that have left the board (``mask``, bit p =
piece p clicked) plus, after a Remove, the bypass (``byp``: up to 3 pieces in bypass order,
packed 7 bits each as piece + 1, first piece in the low bits, 0 = empty). The slot count of
element e is ``(left(e) - in_bypass(e)) mod 3`` (triples vanish at once, eliminated pieces
come in threes, the slot holds <= 2 of an element at rest), so the slot's order is never
needed. A piece is clickable iff it is on the board and ``occ[p] & on_board == 0``.

Moves, in ascending piece index: a clickable piece whose click is legal under the slot
rule (slot count < ``legal_cap``: SLOT_CAP, or SLOT_CAP - 1 for LOSE_ON_FULL; or its
element has exactly 2 in the slot); the click resolves its triple, then the bypass return loop of
brief §10.2 runs (``_returns``; the same fit test as a click). A state is won when every
piece has left the board and the bypass is empty (then every piece has been eliminated).

Memo. An open-addressing table (``Memo.keys`` / ``Memo.stamp``, linear probing) maps a
state to DEAD (no win from it: its subtree was exhausted) or WIN (it lies on a found winning
line), exact facts about the board, or UNKNOWN (a search started there hit the cap: a later
search from that state answers UNKNOWN at once, one capped search per state and board,
which bounds the repeated scans of the diagnostics). The table is reused by every search on
the same board and cleared in O(1) (``memo_clear``: a new generation; entries of older
generations read as empty) when the board changes or when the table fills past half. A key
is the mask; the stamp is ``generation << TAG_BITS | Found << VALUE_SHIFT | tag``, the tag
the bypass code and, for a search on the board with one piece u undone onto a lane
(``undo_piece`` = u, ``occ`` with u's edges cleared, see ``undo_occ``), u + 1 when u is on
the board. A state with u off the board has the same future on both boards (u neither
occludes nor is counted), so it shares the base board's entries.

Deadlocks (brief §10.4). ``recoverable``: does one Undo (the piece goes to a lane: the
search runs on ``undo_occ``) or one Remove (the first three slot pieces become the
bypass) lead to a state the search calls YES? ``classify_deadlock``: HARD (no legal click),
SOFT (not hard, search NO, recoverable) or NONE, for any resting state of a run.

Nodes. ``nodes`` counts expanded states (a state whose moves are generated); a state
answered by the memo is not expanded. Before expanding a state past ``cap`` expanded nodes
the search stops with UNKNOWN; of what it had not finished only its start is stored (as
UNKNOWN). YES / NO are exact and independent of the memo's contents; UNKNOWN and ``nodes``
depend on what earlier searches on the same board stored (deterministic for a fixed order
of searches). ``Memo.meta`` counts searches, expanded nodes and UNKNOWN answers.
"""

from enum import IntEnum
from typing import NamedTuple

import numpy as np
from numba import njit

from ..codes import BYPASS_CAP, MAX_PIECES, SLOT_CAP, Deadlock, P, SlotRule, Solvable

U64 = np.uint64
ONE = U64(1)
ALL = U64(0xFFFFFFFFFFFFFFFF)
HASH_MULT = U64(0x9E3779B97F4A7C15)
TAG_MULT = U64(0xBF58476D1CE4E5B9)
BYP_BITS = 7  # one bypass entry: piece + 1 (0 = empty)
BYP_FIELD = (1 << BYP_BITS) - 1
UNDO_SHIFT = BYP_BITS * BYPASS_CAP  # the undone piece + 1 sits above the bypass code
VALUE_SHIFT = UNDO_SHIFT + BYP_BITS  # the entry's Found value (2 bits) above the tag
VALUE_MASK = 3 << VALUE_SHIFT
TAG_BITS = VALUE_SHIFT + 2  # stamp = generation << TAG_BITS | Found << VALUE_SHIFT | tag
LOAD_NUM, LOAD_DEN = 1, 2  # the table is cleared before it fills past half
STACK = MAX_PIECES + 1  # one DFS level per click
NO_BUDGET = np.int64(1) << np.int64(62)  # ``budget_end`` that never binds


class MemoSlot(IntEnum):
    """Slots of ``Memo.meta`` (int64)."""

    GEN = 0  # current generation (>= 1); an entry is live iff its stamp >> TAG_BITS == GEN
    COUNT = 1  # live entries
    CLEARS = 2  # clears so far (board changes and fills), for diagnostics
    SEARCHES = 3  # searches so far, their expanded nodes, and how many hit the cap
    NODES = 4
    UNKNOWNS = 5


N_MEMO = len(MemoSlot)


class Found(IntEnum):
    """What the memo knows about a state."""

    ABSENT = 0
    DEAD = 1  # no win from it (its subtree was exhausted)
    WIN = 2  # it lies on a winning line that was found
    UNKNOWN = 3  # a search started from it hit the cap


class Memo(NamedTuple):
    """The search's memo and DFS stack (``make_memo``): caller-owned, reused across
    searches; nothing is allocated inside a kernel."""

    keys: np.ndarray  # uint64[M] (M a power of two): the state's mask
    stamp: np.ndarray  # int64[M]: generation << TAG_BITS | Found << VALUE_SHIFT | tag
    meta: np.ndarray  # int64[N_MEMO], slots MemoSlot
    stk_mask: np.ndarray  # uint64[STACK]: mask at each depth
    stk_byp: np.ndarray  # int64[STACK]: bypass code at each depth
    stk_next: np.ndarray  # int64[STACK]: next piece index to try at each depth
    stk_total: np.ndarray  # int64[STACK]: slot count at each depth
    stk_cnt: np.ndarray  # int32[STACK, MAX_PIECES]: slot count per element at each depth
    occ_u: np.ndarray  # uint64[MAX_PIECES]: scratch occ of an Undo search (``undo_occ``)


def memo_size(cap: int) -> int:
    """Table size for a node cap: a power of two holding one search's states below the load
    factor (each expanded state stores at most one entry, a win line at most 65)."""
    need = (int(cap) + STACK) * LOAD_DEN // LOAD_NUM + 1
    size = 1024
    while size < need:
        size *= 2
    return size


def make_memo(cap: int, size: int | None = None) -> Memo:
    """A cleared memo for searches with node cap ``cap`` (``size`` overrides the table size,
    a power of two: tests use tiny tables to exercise the clear-on-fill path)."""
    m = memo_size(cap) if size is None else int(size)
    if m < 2 or m & (m - 1):
        raise ValueError(f"memo size must be a power of two >= 2, got {m}")
    meta = np.zeros(N_MEMO, dtype=np.int64)
    meta[MemoSlot.GEN] = 1
    return Memo(keys=np.zeros(m, dtype=np.uint64), stamp=np.zeros(m, dtype=np.int64),
                meta=meta, stk_mask=np.zeros(STACK, dtype=np.uint64),
                stk_byp=np.zeros(STACK, dtype=np.int64), stk_next=np.zeros(STACK, dtype=np.int64),
                stk_total=np.zeros(STACK, dtype=np.int64),
                stk_cnt=np.zeros((STACK, MAX_PIECES), dtype=np.int32),
                occ_u=np.zeros(MAX_PIECES, dtype=np.uint64))


@njit(cache=True, nogil=True)
def memo_clear(memo):
    """Forget every entry in O(1): start a new generation. Call it when the board changes."""
    meta = memo.meta
    meta[MemoSlot.GEN] += 1
    meta[MemoSlot.COUNT] = 0
    meta[MemoSlot.CLEARS] += 1


@njit(cache=True, nogil=True)
def full_mask(T):
    """The mask of pieces 0 .. T-1 (T in 1 .. 64)."""
    return ALL >> U64(64 - T)


@njit(cache=True, nogil=True)
def byp_get(byp, i):
    """Piece at bypass position i (-1: empty)."""
    return np.int64((byp >> (BYP_BITS * i)) & BYP_FIELD) - 1


@njit(cache=True, nogil=True)
def byp_push(byp, i, piece):
    """The code with ``piece`` written at position i (positions below i are filled)."""
    return byp | (np.int64(piece + 1) << (BYP_BITS * i))


@njit(cache=True, nogil=True)
def _byp_drop(byp, i):
    """The code without its entry i (later entries move down one)."""
    low = byp & ((np.int64(1) << (BYP_BITS * i)) - 1)
    high = byp >> (BYP_BITS * (i + 1))
    return low | (high << (BYP_BITS * i))


@njit(cache=True, nogil=True)
def undo_occ(occ, T, u, out):
    """``out`` = ``occ`` after an Undo of piece u onto a lane: u has no occluders and
    occludes nothing."""
    clear = ~(ONE << U64(u))
    for p in range(T):
        out[p] = occ[p] & clear
    out[u] = U64(0)


@njit(cache=True, nogil=True)
def _tag(mask, byp, undo_piece):
    tag = byp
    if undo_piece >= 0 and ((mask >> U64(undo_piece)) & ONE) == U64(0):
        tag |= np.int64(undo_piece + 1) << UNDO_SHIFT
    return tag


@njit(cache=True, nogil=True)
def _slot_of(key, tag, size_mask):
    h = (key ^ (U64(tag) * TAG_MULT)) * HASH_MULT
    return np.int64((h ^ (h >> U64(31))) & U64(size_mask))


@njit(cache=True, nogil=True)
def memo_find(memo, key, tag):
    """What the memo holds for the state (key, tag): a Found value (int)."""
    keys = memo.keys
    stamp = memo.stamp
    live = memo.meta[MemoSlot.GEN] << TAG_BITS
    want = live | tag
    size_mask = keys.shape[0] - 1
    h = _slot_of(key, tag, size_mask)
    while True:
        s = stamp[h]
        if s < live:
            return Found.ABSENT
        if keys[h] == key and (s & ~VALUE_MASK) == want:
            return (s & VALUE_MASK) >> VALUE_SHIFT
        h = (h + 1) & size_mask


@njit(cache=True, nogil=True)
def memo_store(memo, key, tag, value):
    """Record the state (key, tag) as ``value`` (Found DEAD / WIN / UNKNOWN); clears the
    table first when it is full to the load factor. DEAD or WIN replaces UNKNOWN; otherwise
    a state already present keeps its entry."""
    keys = memo.keys
    stamp = memo.stamp
    meta = memo.meta
    size = keys.shape[0]
    if (meta[MemoSlot.COUNT] + 1) * LOAD_DEN > size * LOAD_NUM:
        memo_clear(memo)
    live = meta[MemoSlot.GEN] << TAG_BITS
    want = live | tag
    size_mask = size - 1
    h = _slot_of(key, tag, size_mask)
    while True:
        s = stamp[h]
        if s < live:
            break
        if keys[h] == key and (s & ~VALUE_MASK) == want:
            if (s & VALUE_MASK) >> VALUE_SHIFT == Found.UNKNOWN:
                stamp[h] = want | (np.int64(value) << VALUE_SHIFT)
            return
        h = (h + 1) & size_mask
    keys[h] = key
    stamp[h] = want | (np.int64(value) << VALUE_SHIFT)
    meta[MemoSlot.COUNT] += 1


@njit(cache=True, nogil=True)
def legal_cap(slot_rule):
    """Slot count below which any clickable piece is legal (brief §10.1)."""
    return SLOT_CAP - 1 if slot_rule == SlotRule.LOSE_ON_FULL else SLOT_CAP


@njit(cache=True, nogil=True)
def _returns(elem, cnt, byp, total, empty, cap):
    """Bypass return loop (brief §10.2) on the slot counts ``cnt`` (updated in place):
    repeatedly the first bypass piece whose element is in the slot (or any, when the board is
    ``empty``) and that fits returns and resolves. Returns (bypass code, slot count)."""
    moved = True
    while moved and byp != 0:
        moved = False
        for i in range(BYPASS_CAP):
            b = byp_get(byp, i)
            if b < 0:
                break
            e = elem[b]
            c = cnt[e]
            if (c >= 1 or empty) and (total < cap or c == 2):
                byp = _byp_drop(byp, i)
                if c == 2:
                    cnt[e] = 0
                    total -= 2
                else:
                    cnt[e] = c + 1
                    total += 1
                moved = True
                break
    return byp, total


@njit(cache=True, nogil=True)
def solve(elem, occ, T, E, start_mask, start_byp, undo_piece, slot_rule, cap, memo):
    """Is there a tool-free win from the state (``start_mask``, ``start_byp``)?

    elem int32[>= T] (0 .. E-1), occ uint64[>= T] (bit q of occ[p]: q occludes p), T in
    1 .. 64, start_mask uint64 (pieces off the board), start_byp int64 (bypass code, 0:
    empty), undo_piece (-1, or the piece u whose Undo ``occ`` already reflects: only tags
    the memo), slot_rule SlotRule, cap (node cap), memo (``make_memo``; cleared by the
    caller when the board changes). Returns (Solvable, nodes expanded).
    """
    res, nodes = _dfs(elem, occ, T, E, start_mask, start_byp, undo_piece, slot_rule, cap, memo)
    if res == Solvable.UNKNOWN and nodes > 0:  # answered at once by later searches
        memo_store(memo, start_mask, _tag(start_mask, start_byp, undo_piece), Found.UNKNOWN)
    meta = memo.meta
    meta[MemoSlot.SEARCHES] += 1
    meta[MemoSlot.NODES] += nodes
    if res == Solvable.UNKNOWN:
        meta[MemoSlot.UNKNOWNS] += 1
    return res, nodes


@njit(cache=True, nogil=True)
def _dfs(elem, occ, T, E, start_mask, start_byp, undo_piece, slot_rule, cap, memo):
    """``solve``'s search (no counters)."""
    full = full_mask(T)
    cap_legal = legal_cap(slot_rule)
    if start_mask == full and start_byp == 0:
        return Solvable.YES, 0
    known = memo_find(memo, start_mask, _tag(start_mask, start_byp, undo_piece))
    if known == Found.DEAD:
        return Solvable.NO, 0
    if known == Found.WIN:
        return Solvable.YES, 0
    if known == Found.UNKNOWN or cap < 1:
        return Solvable.UNKNOWN, 0
    stk_mask = memo.stk_mask
    stk_byp = memo.stk_byp
    stk_next = memo.stk_next
    stk_total = memo.stk_total
    stk_cnt = memo.stk_cnt
    cnt = stk_cnt[0]
    for e in range(E):
        cnt[e] = 0
    for p in range(T):
        if (start_mask >> U64(p)) & ONE:
            cnt[elem[p]] += 1
    for i in range(BYPASS_CAP):
        b = byp_get(start_byp, i)
        if b >= 0:
            cnt[elem[b]] -= 1
    total = 0
    for e in range(E):
        cnt[e] = cnt[e] % 3
        total += cnt[e]
    stk_mask[0] = start_mask
    stk_byp[0] = start_byp
    stk_next[0] = 0
    stk_total[0] = total
    nodes = 1
    d = 0
    while d >= 0:
        mask = stk_mask[d]
        onb = full & ~mask
        total = stk_total[d]
        cnt = stk_cnt[d]
        p = stk_next[d]
        while p < T:
            if (onb >> U64(p)) & ONE and (occ[p] & onb) == U64(0):
                if total < cap_legal or cnt[elem[p]] == 2:
                    break
            p += 1
        if p >= T:  # exhausted: dead
            memo_store(memo, mask, _tag(mask, stk_byp[d], undo_piece), Found.DEAD)
            d -= 1
            continue
        stk_next[d] = p + 1
        mask2 = mask | (ONE << U64(p))
        cnt2 = stk_cnt[d + 1]
        for e in range(E):
            cnt2[e] = cnt[e]
        e = elem[p]
        if cnt2[e] == 2:
            cnt2[e] = 0
            total2 = total - 2
        else:
            cnt2[e] += 1
            total2 = total + 1
        byp2 = stk_byp[d]
        if byp2 != 0:
            byp2, total2 = _returns(elem, cnt2, byp2, total2, mask2 == full, cap_legal)
        if mask2 == full and byp2 == 0:  # won: every state on the line is winnable
            for j in range(d + 1):
                memo_store(memo, stk_mask[j], _tag(stk_mask[j], stk_byp[j], undo_piece),
                           Found.WIN)
            return Solvable.YES, nodes
        known = memo_find(memo, mask2, _tag(mask2, byp2, undo_piece))
        if known == Found.DEAD:
            continue
        if known == Found.WIN:
            for j in range(d + 1):
                memo_store(memo, stk_mask[j], _tag(stk_mask[j], stk_byp[j], undo_piece),
                           Found.WIN)
            return Solvable.YES, nodes
        if nodes >= cap:
            return Solvable.UNKNOWN, nodes
        nodes += 1
        d += 1
        stk_mask[d] = mask2
        stk_byp[d] = byp2
        stk_next[d] = 0
        stk_total[d] = total2
    return Solvable.NO, nodes


@njit(cache=True, nogil=True)
def budget_cap(memo, cap, budget_end):
    """The cap of the next search when all searches together may expand nodes only until
    ``memo.meta[NODES]`` reaches ``budget_end`` (0 once it has)."""
    return max(0, min(cap, budget_end - memo.meta[MemoSlot.NODES]))


@njit(cache=True, nogil=True)
def recoverable(elem, occ, T, E, slot_rule, cap, budget_end, memo, mask, byp, undo_piece,
                rem_code):
    """Does one Undo of ``undo_piece`` (-1: Undo not available) or one Remove giving the
    bypass code ``rem_code`` (0: Remove not available) lead from the state (``mask``,
    ``byp``) to a state the search calls YES? ``occ`` is the board the memo holds; each
    search has the cap ``budget_cap(memo, cap, budget_end)``."""
    if undo_piece >= 0:
        undo_occ(occ, T, undo_piece, memo.occ_u)
        res, _ = solve(elem, memo.occ_u, T, E, mask & ~(ONE << U64(undo_piece)), byp,
                       undo_piece, slot_rule, budget_cap(memo, cap, budget_end), memo)
        if res == Solvable.YES:
            return True
    if rem_code != 0 and byp == 0:
        res, _ = solve(elem, occ, T, E, mask, rem_code, -1, slot_rule,
                       budget_cap(memo, cap, budget_end), memo)
        if res == Solvable.YES:
            return True
    return False


@njit(cache=True, nogil=True)
def classify_deadlock(elem, occ, prm, onb, slot, slot_n, byp, byp_n, undo_piece, remove_left,
                      memo):
    """Deadlock of one resting state (brief §10.4): HARD when no click is legal; SOFT when
    not hard, doomed (the search says NO) and one Undo or one Remove gives a state the
    search calls YES; NONE otherwise (an UNKNOWN counts as not doomed).

    elem / occ: the current board (after Shuffles and Undos; int32[T] / uint64[T]); onb
    uint64: pieces on the board (lanes included); slot int32[>= slot_n] and byp
    int32[>= byp_n] in order; undo_piece: the last-inserted slot piece when an Undo is
    available (budget and a free lane), else -1; remove_left: Remove budget left (Remove
    also needs an empty bypass and a non-empty slot). Clears ``memo`` (a new board).
    """
    T = prm[P.T]
    E = prm[P.E]
    rule = prm[P.SLOT_RULE]
    cap_legal = legal_cap(rule)
    hard = True
    for p in range(T):
        if (onb >> U64(p)) & ONE and (occ[p] & onb) == U64(0):
            c = 0
            for i in range(slot_n):
                if elem[slot[i]] == elem[p]:
                    c += 1
            if slot_n < cap_legal or c == 2:
                hard = False
                break
    if hard:
        return Deadlock.HARD
    memo_clear(memo)
    mask = full_mask(T) & ~onb
    code = np.int64(0)
    for i in range(byp_n):
        code = byp_push(code, i, byp[i])
    res, _ = solve(elem, occ, T, E, mask, code, -1, rule, prm[P.DFS_CAP], memo)
    if res != Solvable.NO:
        return Deadlock.NONE
    rem = np.int64(0)
    if remove_left > 0 and byp_n == 0:
        for i in range(min(3, slot_n)):
            rem = byp_push(rem, i, slot[i])
    if recoverable(elem, occ, T, E, rule, prm[P.DFS_CAP], NO_BUDGET, memo, mask, code,
                   undo_piece, rem):
        return Deadlock.SOFT
    return Deadlock.NONE

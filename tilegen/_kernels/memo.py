"""The exhaustive search's memo (decisions 108, 140): state encoding, the
generation-stamped open-addressing table and the caller-owned DFS stack (``Memo``). The
search itself is ``dfs.py``; the deadlock classes are ``search.py``.

State. Tool-free, a state is the set of pieces that have left the board (``mask``, bit p =
piece p clicked) plus, after a Remove, the bypass (``byp``: up to 3 pieces in bypass order,
packed 7 bits each as piece + 1, first piece in the low bits, 0 = empty; ``byp_get`` /
``byp_push``).

Memo. An open-addressing table (``Memo.table``, linear probing) maps a state to DEAD (no
win from it: its subtree was exhausted) or WIN (it lies on a found winning line), exact
facts about the board, or UNKNOWN (a search started there hit the cap: a later search from
that state answers UNKNOWN at once, one capped search per state and board, which bounds
the repeated scans of the diagnostics). The table is reused by every search on the same
board and cleared in O(1) (``memo_clear``: a new generation; entries of older generations
read as empty) when the board changes or when the table fills past half. A key is the
mask; the stamp is ``generation << TAG_BITS | Found << VALUE_SHIFT | tag``, the tag the
bypass code and, for a search on the board with one piece u undone onto a lane
(``undo_piece`` = u, ``occ`` with u's edges cleared, see ``undo_occ``), u + 1 when u is on
the board. A state with u off the board has the same future on both boards (u neither
occludes nor is counted), so it shares the base board's entries. ``Memo.meta`` counts
searches, expanded nodes and UNKNOWN answers (slots ``MemoSlot``).

Layout (speed only: what the memo answers does not depend on it). A slot holds the key and
its stamp side by side (one cache line per probe). The probes stay in the first ``SPAN``
slots, FIRST_SPAN after a clear, doubling (the live entries re-placed) when that part fills
to the load factor; the clear-on-fill rule counts the whole table, as ever. A board's
searches (a few thousand states) so stay in a cache-resident part of a table sized for the
node cap (2^19 slots for 200 000 nodes).
"""

from enum import IntEnum
from typing import NamedTuple

import numpy as np
from numba import njit

from ..codes import BYPASS_CAP, MAX_PIECES

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
TAG_FIELD = (1 << VALUE_SHIFT) - 1  # the tag's bits of a stamp
FIRST_SPAN = 1 << 12  # slots in use after a clear (64 KiB: cache-resident)
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
    SPAN = 6  # slots in use (a power of two <= M): the probes stay in table[0 .. SPAN - 1]


N_MEMO = len(MemoSlot)


class Stk(IntEnum):
    """Columns of ``Memo.stk`` (int64[STACK, N_STK]): one row per DFS depth."""

    MASK = 0  # the state's mask (its bits)
    BYP = 1  # its bypass code
    MOVES = 2  # its moves not yet tried (a piece mask, its bits)
    TOTAL = 3  # its slot count
    C1 = 4  # elements with 1 piece in the slot (a mask, its bits)
    C2 = 5  # ... with 2


N_STK = len(Stk)


class Found(IntEnum):
    """What the memo knows about a state."""

    ABSENT = 0
    DEAD = 1  # no win from it (its subtree was exhausted)
    WIN = 2  # it lies on a winning line that was found
    UNKNOWN = 3  # a search started from it hit the cap


class Memo(NamedTuple):
    """The search's memo and DFS stack (``make_memo``): caller-owned, reused across
    searches; nothing is allocated inside a kernel."""

    table: np.ndarray  # int64[M, 2] (M a power of two): the state's mask (its bits), stamp
    spill: np.ndarray  # int64[M // 4 + 1, 2]: the live entries while the span doubles
    meta: np.ndarray  # int64[N_MEMO], slots MemoSlot
    stk: np.ndarray  # int64[STACK, N_STK]: the DFS stack, columns Stk
    occ_u: np.ndarray  # uint64[MAX_PIECES]: scratch occ of an Undo search (``undo_occ``)
    tools: np.ndarray  # int64[M', 5]: the tool search's table (``rescue.py``)
    tools_meta: np.ndarray  # int64[3]: its generation, live entries, size
    tools_stk: np.ndarray  # int64[rescue.DEPTH + 1, rescue.N_COL]: its stack


def memo_size(cap: int) -> int:
    """Table size for a node cap: a power of two holding one search's states below the load
    factor (each expanded state stores at most one entry, a win line at most 65)."""
    need = (int(cap) + STACK) * LOAD_DEN // LOAD_NUM + 1
    size = 1024
    while size < need:
        size *= 2
    return size


TOOLS_DEPTH = 80  # rows of the tool search's stack (rescue.py): clicks + re-clicks + tools
TOOLS_COLS = 25  # its columns (rescue.py names them)


def tools_scratch(cap: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tool search's (``rescue.py``) table int64[M, 5] (four key words, generation),
    its meta int64[3] (generation, live entries, M) and stack, for a node cap: M holds one
    search's states below the load factor, as ``memo_size``."""
    need = (int(cap) + TOOLS_DEPTH) * LOAD_DEN // LOAD_NUM + 1
    size = 1024
    while size < need:
        size *= 2
    return (np.zeros((size, 5), dtype=np.int64), np.array([1, 0, size], dtype=np.int64),
            np.zeros((TOOLS_DEPTH + 1, TOOLS_COLS), dtype=np.int64))


def make_memo(cap: int, size: int | None = None) -> Memo:
    """A cleared memo for searches with node cap ``cap`` (``size`` overrides the table size,
    a power of two: tests use tiny tables to exercise the clear-on-fill path)."""
    m = memo_size(cap) if size is None else int(size)
    if m < 2 or m & (m - 1):
        raise ValueError(f"memo size must be a power of two >= 2, got {m}")
    meta = np.zeros(N_MEMO, dtype=np.int64)
    meta[MemoSlot.GEN] = 1
    meta[MemoSlot.SPAN] = min(m, FIRST_SPAN)
    tools, tools_meta, tools_stk = tools_scratch(cap)
    return Memo(table=np.zeros((m, 2), dtype=np.int64),
                spill=np.zeros((m // 4 + 1, 2), dtype=np.int64), meta=meta,
                stk=np.zeros((STACK, N_STK), dtype=np.int64),
                occ_u=np.zeros(MAX_PIECES, dtype=np.uint64), tools=tools,
                tools_meta=tools_meta, tools_stk=tools_stk)


@njit(cache=True, nogil=True)
def memo_clear(memo):
    """Forget every entry in O(1): start a new generation. Call it when the board changes."""
    _clear(memo.table, memo.meta)


@njit(cache=True, nogil=True)
def _clear(table, meta):
    meta[MemoSlot.GEN] += 1
    meta[MemoSlot.COUNT] = 0
    meta[MemoSlot.CLEARS] += 1
    meta[MemoSlot.SPAN] = min(table.shape[0], FIRST_SPAN)


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
def memo_find(table, meta, key, tag):
    """What the memo (``Memo.table`` / ``Memo.meta``) holds for the state (key, tag): a
    Found value (int)."""
    live = meta[MemoSlot.GEN] << TAG_BITS
    want = live | tag
    k = np.int64(key)
    size_mask = meta[MemoSlot.SPAN] - 1
    h = _slot_of(key, tag, size_mask)
    while True:
        s = table[h, 1]
        if s < live:
            return Found.ABSENT
        if table[h, 0] == k and (s & ~VALUE_MASK) == want:
            return (s & VALUE_MASK) >> VALUE_SHIFT
        h = (h + 1) & size_mask


@njit(cache=True, nogil=True)
def _double_span(table, spill, meta):
    """Double the slots in use, moving the live entries to their slots under the new mask
    (a slot past the old span holds an older generation's entry: free)."""
    live = meta[MemoSlot.GEN] << TAG_BITS
    span = meta[MemoSlot.SPAN]
    n = 0
    for h in range(span):
        if table[h, 1] >= live:
            spill[n, 0] = table[h, 0]
            spill[n, 1] = table[h, 1]
            n += 1
            table[h, 1] = 0
    size_mask = 2 * span - 1
    meta[MemoSlot.SPAN] = 2 * span
    for i in range(n):
        h = _slot_of(U64(spill[i, 0]), spill[i, 1] & TAG_FIELD, size_mask)
        while table[h, 1] >= live:
            h = (h + 1) & size_mask
        table[h, 0] = spill[i, 0]
        table[h, 1] = spill[i, 1]


@njit(cache=True, nogil=True)
def memo_room(table, spill, meta):
    """Make room for one more entry: clear the table when it is full to the load factor,
    else double the span when its part is (a no-op when there is room)."""
    if (meta[MemoSlot.COUNT] + 1) * LOAD_DEN > table.shape[0] * LOAD_NUM:
        _clear(table, meta)
    elif (meta[MemoSlot.COUNT] + 1) * LOAD_DEN > meta[MemoSlot.SPAN] * LOAD_NUM:
        _double_span(table, spill, meta)


@njit(cache=True, nogil=True)
def memo_put(table, meta, key, tag, value):
    """``memo_store`` after ``memo_room`` (the search's inner loop calls the two apart)."""
    live = meta[MemoSlot.GEN] << TAG_BITS
    want = live | tag
    k = np.int64(key)
    stamp = want | (np.int64(value) << VALUE_SHIFT)
    size_mask = meta[MemoSlot.SPAN] - 1
    h = _slot_of(key, tag, size_mask)
    while True:
        s = table[h, 1]
        if s < live:
            table[h, 0] = k
            table[h, 1] = stamp
            meta[MemoSlot.COUNT] += 1
            return
        if table[h, 0] == k and (s & ~VALUE_MASK) == want:
            if (s & VALUE_MASK) >> VALUE_SHIFT == Found.UNKNOWN:
                table[h, 1] = stamp
            return
        h = (h + 1) & size_mask


@njit(cache=True, nogil=True)
def memo_store(table, spill, meta, key, tag, value):
    """Record the state (key, tag) as ``value`` (Found DEAD / WIN / UNKNOWN); clears the
    table first when it is full to the load factor. DEAD or WIN replaces UNKNOWN; otherwise
    a state already present keeps its entry. Only the first SPAN slots are probed; the span
    doubles when its part of the table is full to the load factor (where an entry sits
    never changes what the memo answers)."""
    memo_room(table, spill, meta)
    memo_put(table, meta, key, tag, value)

"""Named constants and the named kernel interface of tilegen (shared by the kernels and
the Python side, as ``minegen.codes``).

numba treats IntEnum members as compile-time constants, so the kernels index every slot
by these names (``prm[P.T]``, ``board[p, B.X]``, ``stats[S.TF_WINS]``); no slot is indexed
by a bare number anywhere. Structural numbers of the design (05 §7, §14, §15.2, §6.2)
live here, not in tables.
"""

from enum import IntEnum

# ---- structural constants (not tuning options)
SLOT_CAP = 7  # 05 §4.4: the 7-cell slot
BYPASS_CAP = 3  # 05 §4.4: the 3-cell bypass filled by Remove
MAX_ATTEMPTS = 50  # 05 §15.2: redraws before the preset is judged faulty
OVERLAP_NUM, OVERLAP_DEN = 1, 5  # 05 §6.2: overlap area >= 1/5 of the lower piece's box
MAX_PIECES = 64  # load-time cap on T: the exhaustive search's masks are uint64
BP = 10000  # shares in the kernels are integers in basis points (1.00 = 10000)
LAYOUT_SEQ = 1442695040888963407  # initseq of the layout stream (pcg_basic's default)
OPENING_CLICKS = 5  # 05 §13.3 openingStability: "within the first 5 steps"
MAX_RUNS = 1000  # load-time cap on runs_per_strategy (scratch buffers are sized by it)


class Category(IntEnum):
    """ElementSpec.category (04); this order is the order of the selection's pass 1."""

    LANDMARK = 0
    FOOD = 1
    CULTURE = 2
    ITEM = 3
    NATURE = 4


CATEGORY_NAMES = tuple(c.name.lower() for c in Category)
DENSITIES = ("low", "medium", "medium_high", "high")


class Exit(IntEnum):
    """How the returned attempt was chosen (05 §8; decision 106)."""

    MET = 0  # first attempt passing V1-V5 and the gates
    FAILED_GATES = 1  # none met, some passed V1-V5: smallest gate distance, earliest on ties
    FAILED_LAYOUT = 2  # none passed V1-V5: fewest failing checks, highest clickable ratio


EXIT_NAMES = ("met", "failed_gates", "failed_layout")


class Reason(IntEnum):
    """failure_reason: the first failing check of the returned attempt, in this order."""

    NONE = 0
    CLICKABLE_RATIO = 1  # V1
    TRIPLE_CHAINS = 2  # V2
    DIRECT_TRIPLE = 3  # V3 (level 1 only)
    NEAR_SURFACE = 4  # V4
    SAME_LAYER_CLUSTER = 5  # V5
    TOOL_FREE_LOW = 6  # G1 low
    TOOL_FREE_HIGH = 7  # G1 high (level 6's closed band)
    TOOL_ASSIST_LOW = 8  # G2


REASON_NAMES = tuple(r.name.lower() for r in Reason)


class Strategy(IntEnum):
    """The three scripted players (05 §13.1, A-4)."""

    MATCH_FIRST = 0
    SLOT_BUILD = 1
    RISK_AVERSE = 2


STRATEGY_NAMES = ("match-first", "slot-build", "risk-averse")


class Close(IntEnum):
    """Bits of the attempt kernel's per-board ``closing`` flags: the closing work a board's
    returned attempt gets after the attempt loop (decision 190)."""

    SEARCH = 1  # the search from the start (line S)
    DIAGNOSE = 2  # the diagnostics of its lost tool-free runs (the (diag) slots of S) and
    #               the advisory rule-variant replays (alt_slot_*, *_only_pass_rate)


ALL_CLOSING = Close.SEARCH | Close.DIAGNOSE
DIAGNOSE_EVERY = 16  # default rules.toml diagnose_every: the sample of diagnosed audit boards


class Mode(IntEnum):
    TOOL_FREE = 0
    TOOL_ASSIST = 1


class SlotRule(IntEnum):
    """When the slot is lost (05 §14.1, A-1)."""

    BLOCK_AT_FULL = 0  # at 7 only a triple-completing click is legal
    LOSE_ON_FULL = 1  # legal: slot count < 6, or the click completes a triple


SLOT_RULE_NAMES = ("block_at_full", "lose_on_full")


class Tool(IntEnum):
    REMOVE = 0
    SHUFFLE = 1
    UNDO = 2


TOOL_NAMES = ("remove", "shuffle", "undo")


class Solvable(IntEnum):
    """Result of the exhaustive tool-free search (decision 108)."""

    NO = 0
    YES = 1
    UNKNOWN = 2  # node cap reached


SOLVABLE_NAMES = ("no", "yes", "unknown")
TOOLS_TO_WIN_NAMES = ("0", "1", "2", "3", "more")  # R.TOOLS_TO_WIN 0 .. 4; -1: "unknown"


class Deadlock(IntEnum):
    """The deadlock class of a resting state (05 §14; decision 245): the four classes
    partition the states that are not won. HARD: no legal click (05 §14.1). The others have
    a legal click: NONE, a tool-free win is still possible (or the search could not
    decide); SOFT, none is, and one Undo or one Remove makes one possible again (05 §14.2);
    DEEP (a deep deadlock), none is, and no single Undo or Remove brings one back."""

    NONE = 0
    SOFT = 1
    HARD = 2
    DEEP = 3


DEADLOCK_NAMES = ("none", "soft", "hard", "deep")


class P(IntEnum):
    """Slots of the int64 parameter vector ``prm`` (one row snapshot; ``TilePlan.kernel_inputs``)."""

    T = 0  # total pieces
    E = 1  # element_count
    L = 2  # layers
    N_CITY = 3  # elements of the city (eligible for selection)
    LEVEL_ID = 4
    PIECE = 5  # piece_size (boxes are PIECE x PIECE)
    PITCH = 6
    JITTER = 7  # also the margin m of the anchor grid
    ROT_MAX = 8
    N_ANCHORS = 9  # footprint anchors (wc * wr)
    CLICK_MIN = 10  # V1 floor, basis points: max(30 %, the level's clickable_min)
    TF_MIN = 11  # G1 band, basis points
    TF_MAX = 12
    TA_MIN = 13  # G2, basis points
    RUNS = 14  # runs_per_strategy R
    SLOT_RULE = 15  # SlotRule
    BUDGET_REMOVE = 16  # tool budget per assisted run
    BUDGET_SHUFFLE = 17
    BUDGET_UNDO = 18
    ORDER_0 = 19  # tool policy order (Tool ids), first one available is used
    ORDER_1 = 20
    ORDER_2 = 21
    DFS_CAP = 22  # node cap of the exhaustive search
    NEAR_DEPTH = 23  # V4: some piece of each element has initial depth <= NEAR_DEPTH
    CLUSTER_SIZE = 24  # V5: no same-layer 8-connected group of this many pieces of one element
    N_LANES = 25
    LANE_Y = 26  # lanes: boxes PIECE x PIECE at (lanes[k, 0], LANE_Y)
    GRID_W = 27  # grid rectangle (every piece box lies inside it)
    GRID_H = 28


N_PRM = len(P)


class B(IntEnum):
    """Columns of a board array ``board[T, N_B]`` (int32), one row per piece in piece order
    (layer ascending, then deal order; piece index p = id number - 1)."""

    ELEM = 0  # element, as its index in the selection order (0 .. E-1)
    LAYER = 1  # 1 = bottom .. L = top
    AC = 2  # anchor column and row within the grid (0-based, whole grid)
    AR = 3
    X = 4  # top-left of the unrotated box, board units
    Y = 5
    ROT = 6  # degrees, cosmetic
    DEPTH = 7  # initial depth (0: no occluder; else 1 + max depth of the occluders)


N_B = len(B)


class V(IntEnum):
    """Slots of the layout-check vector ``lay[N_V]`` (int64) of one attempt (05 §10.2, §11.2)."""

    CLICKABLE = 0  # |C0|
    CHAINS = 1  # elements whose self-uncovering closure reaches 3 pieces
    DIRECT = 2  # elements with >= 3 pieces in C0
    MAX_DEPTH = 3
    EDGES = 4  # edges of the overlap graph
    V1_OK = 5  # 1 / 0 each
    V2_OK = 6
    V3_OK = 7  # 1 when level_id != 1
    V4_OK = 8
    V5_OK = 9
    FAILS = 10  # number of failing V checks
    FIRST_FAIL = 11  # Reason of the first failing V check (NONE when all pass)


N_V = len(V)


class S(IntEnum):
    """Slots of the simulation stats vector ``stats[N_S]`` (int64) of one attempt: 3R
    tool-free and 3R tool-assisted runs (05 §13, A-5). Slots marked (diag) are filled only
    when ``diagnose`` is true (else 0): they need the exhaustive search."""

    TF_WINS = 0
    TF_WINS_MATCH_FIRST = 1  # per strategy, tool-free
    TF_WINS_SLOT_BUILD = 2
    TF_WINS_RISK_AVERSE = 3
    TA_WINS = 4
    TF_CLICKS_WON = 5  # sum of clicks over tool-free wins (== T * TF_WINS, an invariant)
    TF_PEAK_SUM = 6  # sum over tool-free runs of the peak resting slot count
    TF_FAIL_STEP_SUM = 7  # sum over tool-free losses of the clicks made at the loss
    TF_OPEN_LITERAL = 8  # tool-free runs lost at click <= 5 (always 0: a loss needs 7)
    TA_STUCK = 9  # assisted runs that hit >= 1 hard deadlock
    USES_REMOVE = 10  # tool uses summed over assisted runs
    USES_SHUFFLE = 11
    USES_UNDO = 12
    TF_DOOMED_5 = 13  # (diag) tool-free runs doomed after their 5th click (search: no)
    TF_UNKNOWN_5 = 14  # (diag) ... the search hit its cap at that state
    TF_SOFT = 15  # (diag) tool-free runs that passed through a soft deadlock (doomed, and
    #               one Undo or Remove would make the state winnable again)
    TF_DOOM_STEP_SUM = 16  # (diag) over tool-free losses: sum of the first click after which
    #                        the run was doomed (search: no)
    TF_DOOMED_LOSSES = 17  # (diag) tool-free losses whose doom step is known (no unknown)


N_S = len(S)


class R(IntEnum):
    """Columns of the per-board int64 block ``ints[n, N_R]`` the attempt kernel fills (one
    row per board); ``tilegen.record.columns`` derives the record from it."""

    ATTEMPTS_USED = 0
    EXIT = 1  # Exit
    FAILURE_REASON = 2  # Reason
    REJ_CLICKABLE_RATIO = 3  # over all attempts made: attempts failing that check
    REJ_TRIPLE_CHAINS = 4
    REJ_DIRECT_TRIPLE = 5
    REJ_NEAR_SURFACE = 6
    REJ_SAME_LAYER_CLUSTER = 7
    REJ_TOOL_FREE_LOW = 8
    REJ_TOOL_FREE_HIGH = 9
    REJ_TOOL_ASSIST_LOW = 10
    FIRST_VALID = 11  # first attempt passing V1-V5 (-1: none)
    RAW_TF_WINS = 12  # its tool-free / assisted wins (-1: none)
    RAW_TA_WINS = 13
    RETURNED = 14  # attempt number k of the returned board
    # layout of the returned board (V slots)
    CLICKABLE = 15
    CHAINS = 16
    DIRECT = 17
    MAX_DEPTH = 18
    EDGES = 19
    NEAR_OK = 20
    CLUSTER_OK = 21
    LAYOUT_VALID = 22
    # simulation of the returned board, diagnose on (S slots)
    TF_WINS = 23
    TF_WINS_MATCH_FIRST = 24
    TF_WINS_SLOT_BUILD = 25
    TF_WINS_RISK_AVERSE = 26
    TA_WINS = 27
    TF_CLICKS_WON = 28
    TF_PEAK_SUM = 29
    TF_FAIL_STEP_SUM = 30
    TF_OPEN_LITERAL = 31
    TA_STUCK = 32
    USES_REMOVE = 33
    USES_SHUFFLE = 34
    USES_UNDO = 35
    TF_DOOMED_5 = 36
    TF_UNKNOWN_5 = 37
    TF_SOFT = 38
    TF_DOOM_STEP_SUM = 39
    TF_DOOMED_LOSSES = 40
    # the exhaustive search from the returned board's initial state
    SOLVABLE = 41  # Solvable
    DFS_NODES = 42
    GATE_CLICKABLE = 43  # 1 / 0: the returned board passes V1 / G1 / G2
    GATE_TOOL_FREE = 44
    GATE_TOOL_ASSIST = 45
    DEFECT = 46  # Defect (0: none); the front door raises DefectError
    # rule variants on the returned board, same streams (report columns, advisory):
    ALT_SLOT_TF_WINS = 47  # tool-free / assisted wins under the other slot rule
    ALT_SLOT_TA_WINS = 48
    ONLY_REMOVE_TA_WINS = 49  # assisted wins with one tool's budget only (others 0),
    ONLY_SHUFFLE_TA_WINS = 50  # in codes.Tool order
    ONLY_UNDO_TA_WINS = 51
    DIAGNOSED = 52  # 1 if the board got the diagnostics and the rule variants (Close.DIAGNOSE)
    TOOLS_TO_WIN = 53  # (diag) least Remove / Undo uses making a win possible (rescue.py):
    #                    0 .. 3, 4 = more, -1 = unknown (node cap); -2 = not diagnosed


N_R = len(R)


class Defect(IntEnum):
    """Invariant violations a kernel reports (decision 123); the front door raises."""

    NONE = 0
    LAYER_COUNTS = 1
    TWO_ON_ONE_ANCHOR = 2
    BOX_OUTSIDE_GRID = 3
    BOX_ON_LANE = 4
    EDGE_NOT_DOWNWARD = 5
    TURNS_NOT_T = 6  # a tool-free win that did not click every piece once
    LITERAL_OPENING_FAIL = 7  # a tool-free loss at click <= 5
    SLOT_OVERFLOW = 8  # slot > 7 at rest or bypass > 3
    CATEGORY_COVERAGE = 9
    ELEMENT_COUNTS = 10
    REPLAY_DIFFERS = 11  # a lost run replayed for the diagnostics did not lose

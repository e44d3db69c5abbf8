"""The per-board front door (05 §18, decision 122): typed values in, typed values out.

``generate_board`` runs the very kernel the batch path runs (``batch.run_seeds`` with one
seed), so a board and its record are the same whichever path made them. The board is always
returned, with ``ok = (exit == "met")``, the failure reason and the attempts used: whether to
ship it is the caller's decision (05 §8, A-28).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

from . import batch
from . import record as rec
from .codes import B, N_B
from .errors import InputError
from .plan import TilePlan


@dataclass(frozen=True)
class Piece:
    """PieceInstance (05 §4.2): one tile on the board."""

    id: str  # piece_0001 .. in piece order (layer ascending, then deal order)
    element_id: str
    layer: int  # 1 = bottom .. L = top
    x: int  # top-left of the unrotated box, board units, y downward
    y: int
    width: int
    height: int
    rotation: int  # degrees, cosmetic only
    anchor: tuple[int, int]  # (column, row) of the grid anchor it was placed on
    depth: int  # initial occlusion depth (0: clickable at the start)
    removed: bool = False

    def as_json(self) -> dict:
        return {"id": self.id, "elementId": self.element_id, "layer": self.layer, "x": self.x,
                "y": self.y, "width": self.width, "height": self.height,
                "rotation": self.rotation, "removed": self.removed,
                "anchor": list(self.anchor)}


@dataclass(frozen=True)
class Board:
    """BoardState (05 §4.3) plus what the simulator needs (``elem``, ``occ``)."""

    board_id: str
    plan: TilePlan
    seed: int
    seed_index: int | None  # None: a seed given by hand
    pieces: tuple[Piece, ...]
    element_ids: tuple[str, ...]  # selection order
    return_lanes: tuple[tuple[int, int, int, int], ...]  # (x, y, width, height)
    elem: np.ndarray = field(repr=False, compare=False)  # int32[T], selection index per piece
    occ: np.ndarray = field(repr=False, compare=False)  # uint64[T], occluder masks

    @property
    def overlap_graph(self) -> dict[str, list[str]]:
        """{occluder id: [occluded ids]} (sorted; pieces with no out-edge omitted)."""
        return overlap_graph(self.pieces, self.occ)

    def clickable(self) -> list[str]:
        return get_clickable_pieces(self)

    def digest(self) -> str:
        """sha256 of the canonical JSON piece list (a golden value for ports)."""
        return _sha(self.as_json()["pieces"])

    def graph_digest(self) -> str:
        return _sha(self.overlap_graph)

    def as_json(self) -> dict:
        p = self.plan
        return {"boardId": self.board_id, "cityId": p.city_id, "levelId": p.level_id,
                "revision": p.revision, "seed": str(self.seed),
                "elementIds": list(self.element_ids),
                "pieces": [x.as_json() for x in self.pieces],
                "overlapGraph": self.overlap_graph,
                "returnLanes": [dict(zip(("x", "y", "width", "height"), lane))
                                for lane in self.return_lanes]}


@dataclass(frozen=True)
class GenerationResult:
    board: Board
    record: dict  # the metric record (docs/tilegen.md, The record), one value per field
    exit: str  # met | failed_gates | failed_layout
    ok: bool
    failure_reason: str  # none | clickable_ratio | ... | tool_assist_low
    attempts_used: int

    @property
    def metrics(self) -> dict:
        """The metric fields of 05 §4.3 / §13.3 under the document's names."""
        r = self.record
        return {"totalPieces": r["total_pieces"],
                "initialClickableRatio": r["initial_clickable_ratio"],
                "simulatedPassRate": r["simulated_pass_rate"],
                "avgTurnsToFinish": r["avg_turns_to_finish"],
                "toolFreePassRate": r["tool_free_pass_rate"],
                "toolAssistPassRate": r["tool_assist_pass_rate"],
                "avgPeakSlotUsage": r["avg_peak_slot_usage"],
                "openingStability": r["opening_stability"],
                "stuckRate": r["stuck_rate"]}


def _sha(obj) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def overlap_graph(pieces, occ: np.ndarray) -> dict[str, list[str]]:
    graph: dict[str, list[str]] = {}
    for p, piece in enumerate(pieces):
        mask = int(occ[p])
        for q in range(len(pieces)):
            if mask >> q & 1:
                graph.setdefault(pieces[q].id, []).append(piece.id)
    return {k: sorted(v) for k, v in sorted(graph.items())}


def plan_for(city_id: str, level_id: int, *, revision: int = 1, content=None) -> TilePlan:
    """The row snapshot of (city, level, revision) from ``content`` (a loaded catalog, a
    table root path, or None for the default tables)."""
    from .table_loader import load_tables, plans

    catalog = content if hasattr(content, "presets") else load_tables(content)
    return plans(catalog, [(city_id, int(level_id), int(revision))])[0]


def _board(plan: TilePlan, seed: int, seed_index, sel: np.ndarray, arr: np.ndarray,
           occ: np.ndarray) -> Board:
    g = plan.geometry
    names = [plan.city_elements[i] for i in sel]
    pieces = tuple(
        Piece(id=f"piece_{p + 1:04d}", element_id=names[arr[p, B.ELEM]],
              layer=int(arr[p, B.LAYER]), x=int(arr[p, B.X]), y=int(arr[p, B.Y]),
              width=g.piece_size, height=g.piece_size, rotation=int(arr[p, B.ROT]),
              anchor=(int(arr[p, B.AC]), int(arr[p, B.AR])), depth=int(arr[p, B.DEPTH]))
        for p in range(arr.shape[0]))
    lanes = tuple((x, g.lane_y, g.piece_size, g.piece_size) for x in g.lane_xs)
    return Board(board_id=plan.board_id(seed), plan=plan, seed=int(seed),
                 seed_index=seed_index, pieces=pieces, element_ids=tuple(names),
                 return_lanes=lanes, elem=arr[:, B.ELEM].astype(np.int32).copy(),
                 occ=occ.copy())


MAX_INDEX = 2**63 - 1  # audit board indices are int64 (the block [i, i + 1) must fit)


def seed_problem(value: int) -> str:
    """Why ``value`` is no raw seed ("" when it is one): the one wording of the command
    line, the library and runtime/tilegen.js (its node test holds them equal)."""
    return "" if 0 <= value < 2**64 else f"must be in [0, 2^64), got {value}"


def index_problem(value: int) -> str:
    """Why ``value`` is no board index of a row ("" when it is one)."""
    if value < -1:
        return f"must be >= -1 (-1: the production board), got {value}"
    if value >= MAX_INDEX:
        return f"must be < 2^63 - 1 (int64 board indices), got {value}"
    return ""


def generate_planned(plan: TilePlan, *, seed: int | None = None,
                     index: int | None = None) -> GenerationResult:
    """Board of ``plan`` for a raw ``seed``, or audit board ``index`` (-1: production), or
    (neither given) the production board."""
    if seed is not None and index is not None:
        raise InputError("give a seed or an index, not both")
    if seed is None:
        index = -1 if index is None else int(index)
        if why := index_problem(index):
            raise InputError(f"index {why}")
        seeds = batch.seeds_of(plan, index, 1)
        closing = batch.closing_of(plan, index, 1)  # as the audit computes that board
    else:
        if why := seed_problem(int(seed)):
            raise InputError(f"seed {why}")
        seeds = np.array([int(seed)], dtype=np.uint64)
        closing = None  # a hand-typed seed: all of it
    ints, sel, arr, occ, seconds = batch.run_seeds(plan, seeds, closing)
    cols = rec.columns(plan, ints, sel, seeds, np.array([-2 if index is None else index]),
                       1000.0 * seconds)
    record = {k: _plain(v[0]) for k, v in cols.items()}
    if index is None:  # a hand-typed seed is neither production nor an audit board
        record["seed_index"] = None
        record["is_production"] = int(seeds[0]) == plan.production_seed
    board = _board(plan, int(seeds[0]), index, sel[0], arr, occ)
    return GenerationResult(board=board, record=record, exit=record["exit"], ok=record["ok"],
                            failure_reason=record["failure_reason"],
                            attempts_used=record["attempts_used"])


def generate_board(city_id: str, level_id: int, seed: int | None = None, *, content=None,
                   revision: int | None = None, index: int | None = None) -> GenerationResult:
    """generateBoard(cityId, levelId, seed) (05 §18): the production board when neither
    ``seed`` nor ``index`` is given."""
    plan = plan_for(city_id, level_id, revision=revision or 1, content=content)
    return generate_planned(plan, seed=seed, index=index)


def _plain(v):
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v != v:
        return None
    return v


def get_clickable_pieces(board: Board, runtime=None) -> list[str]:
    """getClickablePieces (05 §7): ids of pieces not removed, not in slot or bypass, with no
    occluder left on the board. ``runtime`` None is the start of the game; else a
    ``RuntimeState`` (pieces in the slot, the bypass or eliminated are off the board; a
    piece on a return lane is on it with no occluder)."""
    ids = [p.id for p in board.pieces]
    on = set(ids) if runtime is None else runtime.on_board(board)
    lanes = set() if runtime is None else set(runtime.on_lanes)
    # pieces that can cover another: on the board and not on a lane (a lane is outside the
    # grid: its piece has no occluder and covers nothing)
    cover = sum(1 << i for i, pid in enumerate(ids) if pid in on and pid not in lanes)
    return [pid for i, pid in enumerate(ids)
            if pid in on and (pid in lanes or int(board.occ[i]) & cover == 0)]


def rebuild_graph_after_shuffle(board: Board, runtime=None) -> dict[str, list[str]]:
    """rebuildGraphAfterShuffle (05 §6.3): the overlap graph of the pieces in the grid now.
    Shuffle permutes element ids only, so positions, hence edges, are those of the pieces
    still in the grid (``runtime`` None: the start of the game, the whole board)."""
    return _grid_graph(board, runtime)


def rebuild_graph_after_undo(board: Board, runtime=None) -> dict[str, list[str]]:
    """rebuildGraphAfterUndo (05 §6.3): Undo lands a piece on a return lane, outside the
    grid (05 §5.2, A-15): it has no edge, so the graph is that of the pieces in the grid."""
    return _grid_graph(board, runtime)


def _grid_graph(board: Board, runtime) -> dict[str, list[str]]:
    """The graph rebuilt from positions over the pieces on the board and not on a lane."""
    if runtime is None:
        return build_overlap_graph(board.pieces)
    grid = runtime.on_board(board) - set(runtime.on_lanes)
    return build_overlap_graph([p for p in board.pieces if p.id in grid])


def build_overlap_graph(pieces) -> dict[str, list[str]]:
    """buildOverlapGraph (05 §6.3) of a piece list (any ``Piece`` sequence, piece order)."""
    from ._kernels import layout

    T = len(pieces)
    arr = np.zeros((T, N_B), dtype=np.int32)
    for p, x in enumerate(pieces):
        arr[p, B.LAYER], arr[p, B.X], arr[p, B.Y] = x.layer, x.x, x.y
    occ = np.zeros(T, dtype=np.uint64)
    size = pieces[0].width if pieces else 64
    layout.build_graph(arr, T, size, occ)
    return overlap_graph(pieces, occ)


# ----------------------------------------------------------------- simulation front doors
@dataclass(frozen=True)
class RuntimeState:
    """RuntimeState (05 §4.4): slot and bypass in order (piece ids), eliminated pieces, the
    piece last put in the slot (Undo's candidate; None: the slot's last piece) and the tool
    budget left. Pieces on return lanes are on the board with no edge (``on_lanes``)."""

    slot: tuple[str, ...] = ()
    bypass: tuple[str, ...] = ()
    removed_piece_ids: tuple[str, ...] = ()
    last_inserted: str | None = None
    tools_left: dict = field(default_factory=lambda: {"undo": 1, "remove": 1, "shuffle": 1})
    on_lanes: tuple[str, ...] = ()

    def on_board(self, board: Board) -> set[str]:
        gone = set(self.slot) | set(self.bypass) | set(self.removed_piece_ids)
        return {p.id for p in board.pieces} - gone


@dataclass(frozen=True)
class RunResult:
    """One simulated run (05 §13.2): outcome and the counters of a run."""

    won: bool
    clicks: int  # at a loss: the fail step
    peak_slot: int  # peak resting slot count
    stuck: bool  # hit a hard deadlock (an assisted run then used a tool)
    uses: dict  # tool -> uses


def _kernel_board(board: Board):
    from ._kernels import search, sim

    ki = board.plan.kernel_inputs()
    return ki, sim.make_work(len(ki.lane_xs)), search.make_memo(board.plan.rules.dfs_node_cap)


def simulate_board(board: Board, policy: str, *, tools: bool, stream) -> RunResult:
    """simulateBoard (05 §13.2): one run of ``policy`` (match-first | slot-build |
    risk-averse), tool-free or tool-assisted, drawing its tie-breaks (and Shuffle) from
    ``stream`` (a ``boardcore.streams.Pcg32``, advanced in place)."""
    from ._kernels import sim
    from .codes import STRATEGY_NAMES, TOOL_NAMES

    if policy not in STRATEGY_NAMES:
        raise InputError(f"unknown policy {policy!r}; one of {', '.join(STRATEGY_NAMES)}")
    ki, work, _ = _kernel_board(board)
    rows, cols = sim.trace_shape(ki.prm)
    trace = np.zeros((rows, cols), dtype=np.int32)
    trace_elem = np.zeros((rows, len(board.pieces)), dtype=np.int32)
    sim.play(board.elem, board.occ, ki.prm, STRATEGY_NAMES.index(policy), bool(tools),
             stream.state, work, trace, trace_elem)
    run = work.run
    if run[sim.Run.DEFECT]:
        from .errors import raise_defect

        raise_defect(int(run[sim.Run.DEFECT]), board.plan, board.seed)
    uses = {name: int(run[sim.Run.USES_REMOVE + t]) for t, name in enumerate(TOOL_NAMES)}
    return RunResult(won=bool(run[sim.Run.WON]), clicks=int(run[sim.Run.CLICKS]),
                     peak_slot=int(run[sim.Run.PEAK]), stuck=bool(run[sim.Run.STUCK]),
                     uses=uses)


def evaluate_board(board: Board, attempt: int = 1) -> dict:
    """evaluateBoard (05 §13.3): the 3R tool-free and 3R tool-assisted runs of the board on
    the simulation streams of ``attempt`` (initseq 8k + 3 mode + s), with the search-based
    figures; the same numbers the attempt loop records for the returned board."""
    from ._kernels import sim
    from .codes import N_S, S

    ki, work, memo = _kernel_board(board)
    stats = np.zeros(N_S, dtype=np.int64)
    code = sim.simulate(board.elem, board.occ, ki.prm, np.uint64(board.seed), int(attempt),
                        True, stats, work, memo)
    if code:
        from .errors import raise_defect

        raise_defect(int(code), board.plan, board.seed)
    runs = 3 * board.plan.rules.runs_per_strategy
    return {"toolFreePassRate": stats[S.TF_WINS] / runs,
            "toolAssistPassRate": stats[S.TA_WINS] / runs,
            "avgPeakSlotUsage": stats[S.TF_PEAK_SUM] / runs,
            "openingStability": stats[S.TF_DOOMED_5] / runs,
            "stuckRate": stats[S.TA_STUCK] / runs,
            "stats": {s.name.lower(): int(stats[s]) for s in S}}


def classify_deadlock(runtime: RuntimeState, board: Board) -> str:
    """classifyDeadlock (05 §14; ``codes.Deadlock``, four classes that partition the states
    not won): ``hard`` (no legal click), ``soft`` (a click is legal, no tool-free win is
    left, and one Undo or one Remove makes one possible again), ``deep`` (a click is
    legal, no tool-free win is left, and no single Undo or Remove brings one back) or
    ``none`` (a tool-free win is still possible, or the search could not decide)."""
    from ._kernels import search
    from .codes import DEADLOCK_NAMES, SLOT_CAP

    ids = [p.id for p in board.pieces]
    index = {pid: i for i, pid in enumerate(ids)}
    unknown = [x for x in (*runtime.slot, *runtime.bypass, *runtime.removed_piece_ids)
               if x not in index]
    if unknown:
        raise InputError(f"runtime names pieces not on this board: {unknown}")
    onb = 0
    for pid in runtime.on_board(board):
        onb |= 1 << index[pid]
    occ = board.occ.copy()
    for pid in runtime.on_lanes:  # a piece on a lane has no edge (design: return lanes)
        u = index[pid]
        occ[u] = 0
        occ &= ~np.uint64(1 << u)
    slot = np.array([index[x] for x in runtime.slot] or [0], dtype=np.int32)
    byp = np.array([index[x] for x in runtime.bypass] or [0], dtype=np.int32)
    left = runtime.tools_left
    lanes_free = len(board.return_lanes) - len(runtime.on_lanes)
    last = runtime.last_inserted or (runtime.slot[-1] if runtime.slot else None)
    undo = index[last] if (last and left.get("undo", 0) > 0 and lanes_free > 0) else -1
    assert len(runtime.slot) <= SLOT_CAP
    ki, _, memo = _kernel_board(board)
    got = search.classify_deadlock(board.elem, occ, ki.prm, np.uint64(onb), slot,
                                   len(runtime.slot), byp, len(runtime.bypass), undo,
                                   int(left.get("remove", 0)), memo)
    return DEADLOCK_NAMES[int(got)]

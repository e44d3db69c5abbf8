"""Text drawing of a tile board for people (``tilegen generate --format text``).

Functions from values to strings: the board (``generate.Board``), its metric record and,
for ``--replay``, a traced run (``Trace``). Nothing here computes a metric; every number
printed is read off the record, the board or the trace. The one kernel call is
``trace_run``: the simulator's traced run (``sim.replay``), decoded into ``Step`` values.

Element codes: the i-th element of the selection order gets the i-th letter (A, B, ...;
at most 21 elements fit in T <= 64 pieces). A piece clickable at the start is drawn
``[A]`` (uppercase, bracketed), a covered piece `` a `` (lowercase), a footprint anchor
with no piece on that layer `` . ``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

from .codes import BP, BYPASS_CAP, CATEGORY_NAMES, OPENING_CLICKS, SLOT_CAP, P

WIDE = 100  # layers side by side while the drawing fits this many columns, else stacked

LEGEND = ("cells: '[A]' clickable at the start (no occluder)   ' a ' covered   "
          "' . ' footprint anchor, empty on this layer")


def code(i: int) -> str:
    """Letter of the i-th selected element (selection order)."""
    return string.ascii_uppercase[i]


def element_index(board) -> dict[str, int]:
    return {e: i for i, e in enumerate(board.element_ids)}


EXIT_WORDS = {
    "met": "the first attempt passing V1-V5 and the gates",
    "failed_gates": "the layout-valid one closest to the gates (no attempt met them)",
    "failed_layout": "the one with the fewest failing V checks (no attempt passed V1-V5)",
}


def reason_words(reason: str, plan) -> str:
    """The failing check of a returned board in words (05 §10.2, §11.2, §15.1)."""
    r = plan.rules
    return {
        "none": "none",
        "clickable_ratio": "V1, too few pieces clickable at the start",
        "triple_chains": "V2, fewer than 2 elements can uncover a triple by themselves",
        "direct_triple": "V3, no element has 3 pieces clickable at the start (level 1)",
        "near_surface": f"V4, an element has no piece at depth <= {r.near_depth}",
        "same_layer_cluster": f"V5, {r.cluster_size} pieces of one element adjacent on one "
                              "layer",
        "tool_free_low": "G1, tool-free pass rate below the band (too hard)",
        "tool_free_high": "G1, tool-free pass rate above the band (too easy)",
        "tool_assist_low": "G2, tool-assisted pass rate below the minimum",
    }.get(reason, reason)


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _doomed(r: dict, plan) -> str:
    if r.get("diagnosed", True):
        return _pct(r["opening_stability"])
    return (f"not computed (the audit diagnoses the production board and the boards whose "
            f"index is a multiple of diagnose_every = {plan.rules.diagnose_every})")


def _band(plan) -> str:
    g = plan.gates
    lo, hi = g.tool_free_min_bp / BP, g.tool_free_max_bp / BP
    return f">= {lo:.2f}" if g.tool_free_max_bp >= BP else f"in [{lo:.2f}, {hi:.2f}]"


def _seed_words(board) -> str:
    if board.seed_index is None:
        return "a seed given by hand"
    if board.seed_index == -1:
        return "the production board (seed FNV-1a-64 of the row key)"
    return f"audit board {board.seed_index} of the row"


def header(result, seed_words: str | None = None) -> str:
    """The board's identity, how it was chosen (``seed_words``: said by the caller, e.g. a
    daily's date) and its key metrics, in words."""
    b, r, plan = result.board, result.record, result.board.plan
    g = plan.gates
    ok = lambda flag: "pass" if flag else "FAIL"  # noqa: E731
    wc, wr = plan.geometry.window[2:]
    lines = [
        f"board {b.board_id}  (city {plan.city_id}, level {plan.level_id}, revision "
        f"{plan.revision}, {plan.difficulty_tier})",
        f"seed {b.seed}: {seed_words or _seed_words(b)}",
        f"exit {result.exit} after {result.attempts_used} attempt(s): returned attempt "
        f"{r['returned_attempt']}, {EXIT_WORDS.get(result.exit, result.exit)}",
        *([] if result.ok else [f"failure reason {result.failure_reason}: "
                                f"{reason_words(result.failure_reason, plan)}"]),
        f"preset: {plan.element_count} elements x {plan.pieces_per_element_text} pieces = "
        f"{plan.total_pieces} pieces on {plan.layers} layer(s) {list(plan.layer_counts)} "
        f"(bottom first), density {plan.density}, footprint {wc}x{wr} anchors",
        f"opening: {r['initial_clickable']} of {r['total_pieces']} pieces clickable "
        f"({r['initial_clickable_ratio']:.2f}; gate >= "
        f"{plan.kernel_inputs().prm[P.CLICK_MIN] / BP:.2f}: {ok(r['gate_clickable'])}), "
        f"{r['chain_elements']} element(s) with a triple chain, "
        f"{r['direct_triple_elements']} with a direct triple, depth up to {r['max_depth']}, "
        f"{r['edges']} overlap edges",
        f"tool-free pass rate {_pct(r['tool_free_pass_rate'])} ({r['tool_free_wins']} of "
        f"{r['tool_free_runs']} runs; gate {_band(plan)}: {ok(r['gate_tool_free'])}); by "
        f"strategy: match-first {_pct(r['pass_rate_match_first'])}, slot-build "
        f"{_pct(r['pass_rate_slot_build'])}, risk-averse {_pct(r['pass_rate_risk_averse'])}",
        f"tool-assisted pass rate {_pct(r['tool_assist_pass_rate'])} ({r['tool_assist_wins']} "
        f"of {r['tool_assist_runs']} runs; gate >= {g.tool_assist_min_bp / BP:.2f}: "
        f"{ok(r['gate_tool_assist'])}), stuck rate {_pct(r['stuck_rate'])}",
        f"peak slot usage {r['avg_peak_slot_usage']:.2f} of {SLOT_CAP} on average; doomed "
        f"after {OPENING_CLICKS} clicks (openingStability) {_doomed(r, plan)}; tool-free "
        f"solvable: {r['tool_free_solvable']} ({r['dfs_nodes']} search nodes)",
    ]
    return "\n".join(lines)


def _layer_block(board, layer: int, clickable: set[str], idx: dict[str, int]) -> list[str]:
    c0, r0, wc, wr = board.plan.geometry.window
    cells = {p.anchor: p for p in board.pieces if p.layer == layer}
    top = board.plan.layers
    title = f"layer {layer}" + (" (top)" if layer == top else " (bottom)" if layer == 1 else "")
    lines = [title, "    " + "".join(f"{c0 + c:^3}" for c in range(wc))]
    for r in range(wr):
        row = []
        for c in range(wc):
            p = cells.get((c0 + c, r0 + r))
            if p is None:
                row.append(" . ")
            elif p.id in clickable:
                row.append(f"[{code(idx[p.element_id])}]")
            else:
                row.append(f" {code(idx[p.element_id]).lower()} ")
        lines.append(f"{r0 + r:>3} " + "".join(row))
    width = max(len(s) for s in lines)
    return [s.ljust(width) for s in lines]


def draw_layers(board) -> str:
    """Every layer as a grid over the footprint window (whole-grid column/row numbers),
    bottom layer first; side by side when they fit in ``WIDE`` columns."""
    clickable = set(board.clickable())
    idx = element_index(board)
    blocks = [_layer_block(board, layer, clickable, idx)
              for layer in range(1, board.plan.layers + 1)]
    gap = "    "
    if sum(len(b[0]) for b in blocks) + len(gap) * (len(blocks) - 1) <= WIDE:
        rows = [gap.join(parts).rstrip() for parts in zip(*blocks)]
    else:
        rows = []
        for b in blocks:
            rows += [s.rstrip() for s in b] + [""]
        rows = rows[:-1]
    return "\n".join(rows) + "\n" + LEGEND


def draw_legend(board) -> str:
    """Element code -> id, category, pieces, clickable at the start (selection order)."""
    plan = board.plan
    clickable = set(board.clickable())
    cat = {e: CATEGORY_NAMES[c] for e, c in zip(plan.city_elements, plan.city_categories)}
    width = max(len(e) for e in board.element_ids)
    lines = ["elements (selection order):"]
    for i, e in enumerate(board.element_ids):
        mine = [p for p in board.pieces if p.element_id == e]
        up = sum(p.id in clickable for p in mine)
        layers = ",".join(str(p.layer) for p in mine)
        lines.append(f"  {code(i)}  {e:<{width}}  {cat[e]:<8}  {len(mine)} pieces "
                     f"(layers {layers}), {up} clickable at the start")
    return "\n".join(lines)


def draw_lanes(board) -> str:
    lanes = board.return_lanes
    if not lanes:
        return "return lanes: none"
    x_list = ", ".join(str(x) for x, _, _, _ in lanes)
    _, y, w, h = lanes[0]
    g = board.plan.geometry
    return (f"return lanes (Undo lands here, layer {board.plan.layers + 1}, no edges): "
            f"{len(lanes)} boxes {w}x{h} at y {y}, x {x_list}; board {g.board_w}x{g.board_h} "
            f"units, grid {g.grid_w}x{g.grid_h}")


def draw_board(result, seed_words: str | None = None) -> str:
    """The whole text view of ``generate``: header, layers, legend, lanes."""
    b = result.board
    return "\n\n".join([header(result, seed_words), draw_layers(b), draw_legend(b),
                        draw_lanes(b)])


# ----------------------------------------------------------------------------- --replay

@dataclass(frozen=True)
class Step:
    """One action of a traced run and the state after it (piece indices, 0-based)."""

    action: str  # sim.ACT_NAMES: click | remove | shuffle | undo | return | lost | won
    piece: int  # -1: none
    lane: int  # lane the piece left (click) or landed on (undo); -1 otherwise
    eliminated: int  # element index whose triple vanished (-1: none)
    clicks: int
    slot: tuple[int, ...]  # pieces in slot order
    bypass: tuple[int, ...]
    lanes: tuple[int, ...]  # piece on each lane (-1: free)
    clickable: tuple[int, ...]  # clickable pieces after the action, ascending
    elem: tuple[int, ...]  # element index of every piece after the action (Shuffle)
    tools_left: tuple[int, ...]  # budget left per codes.Tool: remove, shuffle, undo


@dataclass(frozen=True)
class Trace:
    """Run ``run`` of (returned attempt, mode, strategy) exactly as the batch played it."""

    strategy: str
    tools: bool
    attempt: int
    run: int
    initseq: int
    start_clickable: tuple[int, ...]
    steps: tuple[Step, ...]

    @property
    def won(self) -> bool:
        return bool(self.steps) and self.steps[-1].action == "won"

    def as_json(self, board) -> dict:
        ids = [p.id for p in board.pieces]
        names = board.element_ids
        pid = lambda i: None if i < 0 else ids[i]  # noqa: E731
        return {
            "strategy": self.strategy, "tools": self.tools, "attempt": self.attempt,
            "run": self.run, "initseq": self.initseq, "won": self.won,
            "clicks": self.steps[-1].clicks if self.steps else 0,
            "startClickable": [ids[i] for i in self.start_clickable],
            "steps": [{
                "action": s.action, "piece": pid(s.piece),
                "elementId": None if s.piece < 0 else names[s.elem[s.piece]],
                "lane": None if s.lane < 0 else s.lane,
                "eliminated": None if s.eliminated < 0 else names[s.eliminated],
                "clicks": s.clicks, "slot": [ids[i] for i in s.slot],
                "bypass": [ids[i] for i in s.bypass], "lanes": [pid(i) for i in s.lanes],
                "clickable": [ids[i] for i in s.clickable],
                "toolsLeft": dict(zip(("remove", "shuffle", "undo"), s.tools_left)),
            } for s in self.steps],
        }


def trace_run(result, strategy: str, *, tools: bool = False, run: int = 0) -> Trace:
    """Run ``run`` of ``strategy`` on the returned attempt of ``result``, played by the
    simulator's traced run (``sim.replay``: the same code and draws as the batch), decoded
    step by step. Raises DefectError on a broken invariant."""
    import numpy as np

    from ._kernels import compiling, sim
    from .codes import STRATEGY_NAMES, Mode
    from .errors import raise_defect

    board, plan = result.board, result.board.plan
    s = STRATEGY_NAMES.index(strategy)
    mode = int(Mode.TOOL_ASSIST if tools else Mode.TOOL_FREE)
    k = int(result.record["returned_attempt"])
    ki = plan.kernel_inputs()
    n_rows, n_cols = sim.trace_shape(ki.prm)
    T = plan.total_pieces
    trace = np.full((n_rows, n_cols), -1, dtype=np.int32)
    trace_elem = np.zeros((n_rows, T), dtype=np.int32)
    work = sim.make_work(len(ki.lane_xs))
    args = (board.elem, board.occ, ki.prm, np.uint64(board.seed), k, mode, s, int(run), work,
            trace, trace_elem)
    if not sim.replay.signatures:
        with compiling():
            rows = sim.replay(*args)
    else:
        rows = sim.replay(*args)
    if work.run[sim.Run.DEFECT]:
        raise_defect(int(work.run[sim.Run.DEFECT]), plan, board.seed)
    return Trace(strategy=strategy, tools=tools, attempt=k, run=int(run),
                 initseq=8 * k + 3 * mode + s,
                 start_clickable=tuple(_clickable(board.occ, (1 << T) - 1)),
                 steps=tuple(_decode(board, trace[:rows], trace_elem[:rows], len(ki.lane_xs))))


def _clickable(occ, on: int) -> list[int]:
    return [p for p in range(len(occ)) if on >> p & 1 and int(occ[p]) & on == 0]


def _decode(board, trace, trace_elem, n_lanes: int) -> list[Step]:
    """Steps of a trace; the clickable set is replayed here from the actions (a click takes
    a piece off the board, an Undo puts it on a lane with no edges) and checked against the
    kernel's on-board count."""
    from ._kernels.sim import ACT_NAMES, Act, Tr
    from .codes import Tool

    T = len(board.pieces)
    occ = [int(x) for x in board.occ]
    on = (1 << T) - 1
    steps = []
    for row, el in zip(trace, trace_elem):
        kind, piece = int(row[Tr.KIND]), int(row[Tr.PIECE])
        if kind == Act.CLICK:
            on &= ~(1 << piece)
        elif kind == Act.UNDO:
            on |= 1 << piece
            occ = [o & ~(1 << piece) for o in occ]
            occ[piece] = 0
        if bin(on).count("1") != int(row[Tr.ON_BOARD]):
            raise AssertionError(f"replay out of step with the simulator at {ACT_NAMES[kind]}")
        steps.append(Step(
            action=ACT_NAMES[kind], piece=piece, lane=int(row[Tr.LANE]),
            eliminated=int(row[Tr.ELIM]), clicks=int(row[Tr.CLICKS]),
            slot=tuple(int(x) for x in row[Tr.SLOT_0:Tr.SLOT_0 + int(row[Tr.SLOT_N])]),
            bypass=tuple(int(x) for x in row[Tr.BYP_0:Tr.BYP_0 + int(row[Tr.BYP_N])]),
            lanes=tuple(int(x) for x in row[Tr.LANE_0:Tr.LANE_0 + n_lanes]),
            clickable=tuple(_clickable(occ, on)), elem=tuple(int(x) for x in el),
            tools_left=tuple(int(row[Tr.LEFT_0 + t]) for t in Tool)))
    return steps


def _cells(pieces, elem, cap: int) -> str:
    return "".join(f"[{code(elem[p])}]" for p in pieces) + "[ ]" * (cap - len(pieces))


def _listing(pieces, elem) -> str:
    """Clickable pieces grouped by element: ``A 3,11  C 12`` (piece numbers, 1-based)."""
    groups: dict[int, list[int]] = {}
    for p in pieces:
        groups.setdefault(elem[p], []).append(p + 1)
    return "  ".join(f"{code(e)} {','.join(map(str, ps))}" for e, ps in sorted(groups.items()))


def _action(board, s: Step) -> str:
    name = lambda p, el: f"piece_{p + 1:04d} ({code(el[p])})"  # noqa: E731
    gone = f"; triple {code(s.eliminated)} vanishes" if s.eliminated >= 0 else ""
    if s.action == "click":
        where = (f"from lane {s.lane}" if s.lane >= 0
                 else f"layer {board.pieces[s.piece].layer}")
        return f"click {name(s.piece, s.elem)}, {where}{gone}"
    if s.action == "return":
        return f"bypass return: {name(s.piece, s.elem)} back to the slot{gone}"
    if s.action == "remove":
        return f"Remove: {len(s.bypass)} slot piece(s) to the bypass"
    if s.action == "shuffle":
        return "Shuffle: the elements of the pieces on the board permuted"
    if s.action == "undo":
        return f"Undo: {name(s.piece, s.elem)} from the slot to lane {s.lane}"
    if s.action == "lost":
        return "LOST: no legal click (hard deadlock) and no tool left"
    return f"WON: every piece eliminated in {s.clicks} clicks"


def draw_trace(board, trace: Trace) -> str:
    """The replay, one block per action: what was done, then the slot (7 cells), the bypass
    (3 cells), the lanes in use and the clickable pieces the next choice is made among."""
    mode = "tool-assisted" if trace.tools else "tool-free"
    end = trace.steps[-1] if trace.steps else None
    result = ("won" if trace.won else "lost") + (f" after {end.clicks} clicks" if end else "")
    lines = [f"replay: {trace.strategy}, {mode}, run {trace.run} of the returned attempt "
             f"{trace.attempt} (sim stream initseq {trace.initseq}): {result}",
             "  slot/bypass cells show element codes; clickable: code then piece numbers",
             f"  start  slot {_cells((), (), SLOT_CAP)}  bypass {_cells((), (), BYPASS_CAP)}",
             f"         clickable {len(trace.start_clickable)}: "
             f"{_listing(trace.start_clickable, board.elem)}"]
    for i, s in enumerate(trace.steps, start=1):
        lines.append(f"  {i:>3}. {_action(board, s)}")
        if s.action == "won":
            break
        on_lanes = [f"{k}:{code(s.elem[p])}" for k, p in enumerate(s.lanes) if p >= 0]
        lanes = f"  lanes {' '.join(on_lanes)}" if on_lanes else ""
        tools = (f"  tools left R{s.tools_left[0]} S{s.tools_left[1]} U{s.tools_left[2]}"
                 if trace.tools else "")
        lines.append(f"       slot {_cells(s.slot, s.elem, SLOT_CAP)}  bypass "
                     f"{_cells(s.bypass, s.elem, BYPASS_CAP)}{lanes}{tools}")
        if s.action != "lost":
            lines.append(f"       clickable {len(s.clickable)}: {_listing(s.clickable, s.elem)}"
                         if s.clickable else "       clickable: none")
    return "\n".join(lines)

"""Row snapshot: everything the kernels need about one (city, level, revision) row, resolved
once from the tables (``table_loader.plans``) and frozen for the whole generation.

A plan is picklable and compares by value; ``snapshot()`` is its canonical JSON-ready form
(two plans with equal snapshots give byte-identical records: the audit's resume key).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np

from boardcore.streams import derive_seeds, fnv1a_64

from .codes import BP, DIAGNOSE_EVERY, N_PRM, P, SLOT_RULE_NAMES, TOOL_NAMES

STREAM_PREFIX = "tilegen:"


@dataclass(frozen=True)
class Layout:
    """layout.toml as loaded (A-12 … A-14, provisional): what ``geometry.geometry_for``
    turns into a row's ``Geometry``."""

    piece_size: int
    grid_cols: int
    grid_rows: int
    pitch: int
    jitter: int
    rotation_max: int
    occupancy: str
    lane_count: int
    lane_pitch: int
    lane_gap: int


@dataclass(frozen=True)
class Geometry:
    """layout.toml plus what follows from it for one row (05 §5.1, §5.2; A-12 … A-15)."""

    piece_size: int
    grid_cols: int
    grid_rows: int
    pitch: int
    jitter: int
    rotation_max: int
    occupancy: str  # decimal as written, e.g. "0.40"
    lane_count: int
    lane_pitch: int
    lane_gap: int
    # derived for this row
    window: tuple[int, int, int, int]  # (c0, r0, wc, wr): the footprint sub-rectangle
    grid_w: int  # W_g = 2m + (cols - 1) pitch + piece
    grid_h: int
    lane_xs: tuple[int, ...]  # lane k box: (lane_xs[k], lane_y), piece x piece
    lane_y: int
    board_w: int  # board rectangle = grid + lane strip
    board_h: int

    def anchors(self) -> list[tuple[int, int]]:
        """Footprint anchors (c, r), whole-grid coordinates, in row-major order."""
        c0, r0, wc, wr = self.window
        return [(c0 + c, r0 + r) for r in range(wr) for c in range(wc)]


@dataclass(frozen=True)
class Gates:
    """acceptance.toml row of the level (05 §15.1), as basis points."""

    tool_free_min_bp: int
    tool_free_max_bp: int  # 10000 unless the level has a closed band (level 6)
    tool_assist_min_bp: int
    clickable_min_bp: int


@dataclass(frozen=True)
class Rules:
    """rules.toml (provisional simulation settings, docs/tilegen.md, Tables)."""

    runs_per_strategy: int
    slot_rule: str  # SLOT_RULE_NAMES
    budget_remove: int
    budget_shuffle: int
    budget_undo: int
    tool_order: tuple[str, str, str]  # a permutation of TOOL_NAMES
    dfs_node_cap: int
    near_depth: int
    cluster_size: int
    diagnose_every: int = DIAGNOSE_EVERY  # the audit boards with seed_index % this == 0 (and
    #   the production board) get the diagnostics and the rule variants (decision 190)


@dataclass(frozen=True)
class TilePlan:
    city_id: str
    level_id: int
    revision: int
    difficulty_tier: str
    density: str
    element_count: int
    pieces_per_element: tuple[int, ...]  # length element_count (a scalar expanded)
    pieces_per_element_text: str  # canonical: "3" or "3,3,3,3,3,6,3,3,3,3"
    layers: int
    layer_distribution: tuple[str, ...]  # shares used, bottom first, before normalising
    layer_counts: tuple[int, ...]  # n_l bottom -> top
    target_pass_rate: float
    target_duration_sec: tuple[int, int] | None
    city_elements: tuple[str, ...]  # the city's element ids, sorted by code point
    city_categories: tuple[int, ...]  # codes.Category per city element
    city_weights: tuple[int, ...]  # recognisability weight per city element (>= 1)
    geometry: Geometry
    gates: Gates
    rules: Rules

    # ---- identity and seeds (05 §12.1)
    @property
    def key(self) -> tuple[str, int, int]:
        return self.city_id, self.level_id, self.revision

    @property
    def row_key(self) -> str:
        return f"{self.city_id}:{self.level_id}:{self.revision}"

    @property
    def stream_name(self) -> str:
        return STREAM_PREFIX + self.row_key

    @property
    def production_seed(self) -> int:
        """FNV-1a-64(utf8("city:level:revision")): the board the game ships."""
        return fnv1a_64(self.row_key.encode("utf-8"))

    def audit_seeds(self, first: int, count: int) -> np.ndarray:
        """derive_at("tilegen:" + rowKey, i) for i in [first, first + count)."""
        return derive_seeds(self.stream_name, first, count)

    @property
    def total_pieces(self) -> int:
        return sum(self.pieces_per_element)

    def board_id(self, seed: int) -> str:
        return f"{self.city_id}-{self.level_id}-{seed}"

    def snapshot(self) -> dict:
        d = asdict(self)
        d["geometry"]["window"] = list(self.geometry.window)
        return d

    def kernel_inputs(self) -> KernelInputs:
        g, a, r = self.geometry, self.gates, self.rules
        prm = np.zeros(N_PRM, dtype=np.int64)
        prm[P.T] = self.total_pieces
        prm[P.E] = self.element_count
        prm[P.L] = self.layers
        prm[P.N_CITY] = len(self.city_elements)
        prm[P.LEVEL_ID] = self.level_id
        prm[P.PIECE] = g.piece_size
        prm[P.PITCH] = g.pitch
        prm[P.JITTER] = g.jitter
        prm[P.ROT_MAX] = g.rotation_max
        prm[P.N_ANCHORS] = g.window[2] * g.window[3]
        prm[P.CLICK_MIN] = max(3000, a.clickable_min_bp)
        prm[P.TF_MIN] = a.tool_free_min_bp
        prm[P.TF_MAX] = a.tool_free_max_bp
        prm[P.TA_MIN] = a.tool_assist_min_bp
        prm[P.RUNS] = r.runs_per_strategy
        prm[P.SLOT_RULE] = SLOT_RULE_NAMES.index(r.slot_rule)
        prm[P.BUDGET_REMOVE] = r.budget_remove
        prm[P.BUDGET_SHUFFLE] = r.budget_shuffle
        prm[P.BUDGET_UNDO] = r.budget_undo
        order = [TOOL_NAMES.index(t) for t in r.tool_order]
        prm[P.ORDER_0], prm[P.ORDER_1], prm[P.ORDER_2] = order
        prm[P.DFS_CAP] = r.dfs_node_cap
        prm[P.NEAR_DEPTH] = r.near_depth
        prm[P.CLUSTER_SIZE] = r.cluster_size
        prm[P.N_LANES] = g.lane_count
        prm[P.LANE_Y] = g.lane_y
        prm[P.GRID_W] = g.grid_w
        prm[P.GRID_H] = g.grid_h
        assert BP == 10000
        return KernelInputs(
            prm=prm,
            city_cat=np.array(self.city_categories, dtype=np.int32),
            city_weight=np.array(self.city_weights, dtype=np.int64),
            ppe=np.array(self.pieces_per_element, dtype=np.int32),
            layer_counts=np.array(self.layer_counts, dtype=np.int32),
            anchors=np.array(self.geometry.anchors(), dtype=np.int32).reshape(-1, 2),
            lane_xs=np.array(g.lane_xs, dtype=np.int32),
        )


class KernelInputs(NamedTuple):
    """A row snapshot as the kernels read it."""

    prm: np.ndarray  # int64[N_PRM], slots codes.P
    city_cat: np.ndarray  # int32[N_CITY]: Category of each city element (sorted by id)
    city_weight: np.ndarray  # int64[N_CITY]
    ppe: np.ndarray  # int32[E]: pieces of the i-th selected element
    layer_counts: np.ndarray  # int32[L], bottom -> top
    anchors: np.ndarray  # int32[N_ANCHORS, 2]: footprint (c, r), row-major
    lane_xs: np.ndarray  # int32[N_LANES]

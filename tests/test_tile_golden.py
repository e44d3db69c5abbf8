"""Golden vectors of tilegen (docs/tile-draw-protocol.md): the worked example of the design
(Beijing, level 1, revision 1) and (row, board index) -> element ids, piece digest, graph
digest and metric record for a spread of reference levels.

The worked-example numbers below are the design's own (written down by hand there, not
produced by this code). The per-board vectors pin every board and record: a change that
alters one fails here. If intended (new draw protocol or metric definition: bump
METRIC_VERSION / GENERATOR_VERSION), rewrite them with
  TILEGEN_WRITE_GOLDEN=1 .venv/bin/python -m pytest tests/test_tile_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from boardcore.streams import Pcg32, derive_at, fnv1a_64
from tilegen.codes import LAYOUT_SEQ
from tilegen.generate import generate_planned
from tilegen.table_loader import load_tables, plans

GOLDEN = Path(__file__).parent / "golden" / "tilegen.json"
# A frozen table root, so that tuning tables/tilematch never moves the vectors.
TABLES = Path(__file__).parent / "fixtures" / "tilematch" / "golden"
CASES = [("beijing", 1, 1), ("beijing", 3, 1), ("tokyo", 5, 1), ("istanbul", 6, 1)]
INDICES = (-1, 0, 1)


@pytest.fixture(scope="module")
def catalog():
    return load_tables(TABLES)


def test_worked_example_seeds():
    """05 §12.1 seeds of Beijing 1 r1: production, audit boards 0 and 1, the daily seed."""
    assert fnv1a_64(b"beijing:1:1") == 14323768753098000001 == 0xC6C83FCA553F0681
    assert derive_at("tilegen:beijing:1:1", 0) == 11821669524437222257
    assert derive_at("tilegen:beijing:1:1", 1) == 14290132254026056550
    assert fnv1a_64(b"2026-01-01:daily:beijing") == 11961325612859096164


def test_worked_example_streams():
    """The layout stream of the production seed, and pcg_basic's reference (42, 54)."""
    rng = Pcg32(14323768753098000001, LAYOUT_SEQ)
    assert [rng.next_u32() for _ in range(3)] == [453450163, 2809558607, 709795194]
    ref = Pcg32(42, 54)
    assert [ref.next_u32() for _ in range(4)] == [0xA15C02B7, 0x7B47F409, 0xBA1D3330,
                                                  0x83D2F293]


def test_worked_example_row(catalog):
    """E = 6, T = 18, L = 2, low truncated to 0.40 : 0.35 -> [10, 8]; window 5x5 at (1, 1)
    with nominal anchor corners 64, 120, ..., 288; V1 needs 7 clickable pieces."""
    (plan,) = plans(catalog, [("beijing", 1, 1)])
    assert (plan.element_count, plan.total_pieces, plan.layers) == (6, 18, 2)
    assert plan.layer_distribution == ("0.40", "0.35")
    assert plan.layer_counts == (10, 8)
    assert plan.geometry.window == (1, 1, 5, 5)
    g = plan.geometry
    corners = sorted({g.jitter + c * g.pitch for c, _ in g.anchors()})
    assert corners == [64, 120, 176, 232, 288]
    assert plan.board_id(plan.production_seed) == "beijing-1-14323768753098000001"
    # V1 in integers: 100 |C0| >= 38 * 18  <=>  |C0| >= 7
    assert min(c for c in range(19) if 10000 * c >= plan.gates.clickable_min_bp * 18) == 7


def current(catalog) -> dict:
    out = []
    for key in CASES:
        (plan,) = plans(catalog, [key])
        for i in INDICES:
            res = generate_planned(plan, index=i)
            record = {k: v for k, v in res.record.items() if k != "gen_ms"}
            record["stream_seed"] = str(record["stream_seed"])  # JSON has no uint64
            out.append({"row": plan.row_key, "index": i, "board_id": res.board.board_id,
                        "element_ids": list(res.board.element_ids),
                        "piece_digest": res.board.digest(),
                        "graph_digest": res.board.graph_digest(), "record": record})
    return {"boards": out}


def test_golden_vectors(catalog):
    got = current(catalog)
    if os.environ.get("TILEGEN_WRITE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert [(b["row"], b["index"]) for b in got["boards"]] == \
        [(b["row"], b["index"]) for b in want["boards"]]
    for g, w in zip(got["boards"], want["boards"]):
        where = f"{g['row']} board {g['index']}"
        for name in ("board_id", "element_ids", "piece_digest", "graph_digest"):
            assert g[name] == w[name], f"{where}: {name} moved"
        diff = {k: (w["record"].get(k), v) for k, v in g["record"].items()
                if w["record"].get(k) != v}
        assert not diff, f"{where}: record fields moved (want, got): {diff}"


def test_production_board_is_the_designs_seed(catalog):
    (plan,) = plans(catalog, [("beijing", 1, 1)])
    res = generate_planned(plan)
    assert res.board.seed == 14323768753098000001
    assert res.record["is_production"] and res.record["seed_index"] == -1
    assert res.board.board_id == "beijing-1-14323768753098000001"

"""Golden vectors pin the draw protocol (STYLE 5): (row, seed index) -> board digest and record.

A change that alters any board or record fails here. If the change is intended (a new
draw protocol or metric definition), bump METRIC_VERSION / GENERATOR_VERSION as the seeds
require and rewrite with:  MINEGEN_WRITE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path

import numpy as np

from minegen import DegradedBoardWarning, generate
from boardcore.streams import Pcg32, derive_at
from minegen.rng import sigma
from minegen.table_loader import load_tables

GOLDEN = Path(__file__).parent / "golden" / "boards.json"
# A frozen table root, so that tuning tables/ never moves the vectors.
TABLES = Path(__file__).parent / "fixtures" / "tables" / "golden"
CASES = [(1, 0), (2, 0), (2, 6), (3, 4), (3, 6), (4, 0), (4, 6)]
INDICES = (0, 1, 255)


def board_digest(board) -> str:
    """sha256 over W, H, then per cell row-major: mine bit | fog bit << 1."""
    h = hashlib.sha256(f"{board.width}x{board.height}:".encode())
    cells = board.mines.astype(np.uint8) | (board.fog.astype(np.uint8) << 1)
    h.update(cells.tobytes())
    return h.hexdigest()


def current() -> dict:
    out = {"stream": {}, "boards": []}
    seed = derive_at("board_gen", sigma(2, 0))
    rng = Pcg32(seed)
    out["stream"] = {"seed": seed, "first_u32": [rng.next_u32() for _ in range(8)]}
    tables = load_tables(TABLES)
    for key in CASES:
        for i in INDICES:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegradedBoardWarning)
                b = generate(*key, tables=tables, index=i)
            out["boards"].append({
                "level": key[0], "depth": key[1], "index": i,
                "digest": board_digest(b),
                "mines": b.cells(b.mines), "fog": b.cells(b.fog),
                "record": b.record,
            })
    return out


def test_golden_vectors():
    got = current()
    want = json.loads(GOLDEN.read_text())  # the committed vectors, read before any rewrite
    if os.environ.get("MINEGEN_WRITE_GOLDEN") == "1":
        # rewrite the file for review, and still compare against what was committed: a
        # regeneration run fails wherever the vectors moved, it never passes vacuously
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got["stream"] == want["stream"]
    assert len(got["boards"]) == len(want["boards"])
    for g, w in zip(got["boards"], want["boards"]):
        assert (g["level"], g["depth"], g["index"]) == (w["level"], w["depth"], w["index"])
        assert g["digest"] == w["digest"], (g["level"], g["depth"], g["index"])
        # the committed record fields, each unchanged (fields added to the record later,
        # e.g. record_schema_version 2's tiers, are pinned once the vectors are rewritten)
        committed = w["record"]
        now = {k: g["record"].get(k, "<missing>") for k in committed}
        assert now == committed, (g["level"], g["depth"], g["index"])

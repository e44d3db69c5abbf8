"""How minegen rows are tuned: per hard line, the table fields that move it, which way, in
the order a designer should try them (the drill-down shows it; ``minegen tune`` searches
it), the candidate values of each, and writing a proposed table root.

Tuning order (documented in docs/design.md): for line B, fog_target_ratio down (smaller
regions fit), then fog_region_count down (never to 0: tuning does not remove fog from a
row), then mine_density up (more numbered, so more eligible, cells), then board_size up;
for A, mine_density down, max_gen_attempts up, fog_target_ratio down, then the target
down (last: it lowers the promise instead of improving the boards); for A', mine_density
down, min_safe_count down, max_gen_attempts up; for A'', the target up to the floor.
Within a field, candidates go from the smallest change outwards; the first field with a
passing candidate wins, with its smallest passing change.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from pipeline.store import atomic

LOWER, HIGHER = "lower", "higher"
BOARD_SIZE = "board_size"  # width and height together (square rows only)

TUNING: dict[str, list[tuple[str, str, str]]] = {
    "B": [("fog_target_ratio", LOWER, "smaller regions fit in the thin bands of eligible cells"),
          ("fog_region_count", LOWER, "fewer regions to place"),
          ("mine_density", HIGHER, "more mines: more numbered (eligible) cells"),
          (BOARD_SIZE, HIGHER, "a larger board has larger eligible patches")],
    "A": [("mine_density", LOWER, "fewer mines leave fewer cells that need a guess"),
          ("max_gen_attempts", HIGHER, "more attempts to find a board that meets the target"),
          ("fog_target_ratio", LOWER, "less fog hides fewer numbers"),
          ("inferability_target", LOWER, "a lower target accepts the boards as they are")],
    "A'": [("mine_density", LOWER, "fewer mines: fewer cut-off safe cells"),
           ("min_safe_count", LOWER, "fewer safe cells required"),
           ("max_gen_attempts", HIGHER, "more attempts to find a legal board")],
    "A''": [("inferability_target", HIGHER, "the floor is 0.85")],
    "B'": [],  # fog on a no-fog row is a generator defect, not a tuning matter
}
STEPS = 10  # candidates per field at the most


def _floats(cur: float, step: float, way: str, lo: float, hi: float) -> list[float]:
    sign = -1 if way == LOWER else 1
    out = []
    for k in range(1, STEPS + 1):
        v = round(cur + sign * k * step, 4)
        if not lo <= v <= hi:
            break
        out.append(v)
    return out


def candidates(row, lines: list[str]) -> list[tuple[str, list]]:
    """[(field, values from the smallest change outwards)] for a row failing ``lines``,
    fields in tuning order (each field once). Values may still be invalid as a whole row
    (the caller validates each varied row)."""
    out, seen = [], set()
    for line in lines:
        for field, way, _ in TUNING.get(line, []):
            if field in seen:
                continue
            seen.add(field)
            if field == "fog_target_ratio":
                values = _floats(row.fog_target_ratio, 0.01, way, 0.01, 0.25)
            elif field == "fog_region_count":
                values = list(range(row.fog_region_count - 1, 0, -1))
            elif field == "mine_density":
                values = _floats(row.mine_density, 0.01, way, 0.01, 0.5)
            elif field == "inferability_target":
                values = ([0.85] if way == HIGHER else
                          _floats(row.inferability_target, 0.01, way, 0.85, 1.0))
            elif field == "max_gen_attempts":
                values = [v for v in (row.max_gen_attempts + 4 * k for k in range(1, 8))
                          if v <= 32]
            elif field == "min_safe_count":
                values = [v for v in (row.min_safe_count - 5 * k for k in range(1, STEPS + 1))
                          if v >= 1]
            elif field == BOARD_SIZE:
                values = ([row.board_width + k for k in range(1, 9)]
                          if row.board_width == row.board_height else [])
            else:
                values = []
            if values:
                out.append((field, values))
    return out


def patch_tables(src: str | Path, dst: Path, changes: dict[tuple[int, int], dict]) -> None:
    """Copy the table root ``src`` to ``dst`` with ``changes`` ({(L, D): {field: value}})
    written into board_gen.toml in place: comments and layout stay, only the changed
    field lines of the changed rows differ."""
    shutil.copytree(src, dst)
    path = dst / "board_gen.toml"
    text = path.read_text(encoding="utf-8")
    blocks = re.split(r"(?m)^(?=\[\[rows\]\])", text)
    for i, block in enumerate(blocks):
        key = _key(block)
        if key not in changes:
            continue
        for field, value in changes[key].items():
            names = ("board_width", "board_height") if field == BOARD_SIZE else (field,)
            for name in names:
                block, n = re.subn(rf"(?m)^(\s*{name}\s*=\s*)[^#\n]*?(\s*(#.*)?)$",
                                   lambda m: f"{m.group(1)}{_toml(value)}{m.group(2)}", block,
                                   count=1)
                if n != 1:
                    raise ValueError(f"row {key}: no `{name} = ...` line to change")
        blocks[i] = block
    atomic.write_text(path, "".join(blocks))


def _key(block: str) -> tuple[int, int] | None:
    lv = re.search(r"(?m)^\s*level_index\s*=\s*(\d+)", block)
    dp = re.search(r"(?m)^\s*node_depth\s*=\s*(\d+)", block)
    return (int(lv.group(1)), int(dp.group(1))) if lv and dp else None


def _toml(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)

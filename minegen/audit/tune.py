"""How minegen rows are tuned: the candidate values of each table field that moves a failing
line (the fields and their order are the lines' moves, ``lines.py``), what a change costs
the player (``COSTS``: the fog a row keeps above all), the rule behind a failure no change
fixes, and writing a proposed table root. Within a field, candidates go from the smallest
change outwards; ``minegen tune`` ranks them (``pipeline.analysis.cost``).
"""

from __future__ import annotations

import math
from pathlib import Path

from boardcore import files
from boardcore.toml_patch import patch_rows
from pipeline.api.contract import Cost, Dim, Line, Space
from pipeline.api.runs import atomic
from pipeline.api.stats import se_mean, se_quantile, se_share

from ..table_model import region_target_size
from .lines import BOARD_SIZE, HIGHER, LOWER, MINE_DRIFT_WARN, fog_asked, region_cells

FOG_KEEP = 0.5  # a proposal delivering under half the fog cells the row asks is flagged
DROP_FOG = {"fog_region_count": 0, "fog_target_ratio": 0.0}  # the row without its fog


# What a change costs the player (docs/design.md, "tune"): the fog first (a fix that
# removes most of it is flagged), then how the board plays.
COSTS = (
    Cost("fog cells per board", lambda r: r["fog_cells_mean"], unit=1.0, intent=fog_asked,
         keep=FOG_KEEP, feature="the fog", digits=1,
         se=se_mean("fog_cells_mean", "fog_cells_sd")),
    Cost("fog burden p50", lambda r: r["fog_burden_ratio_p50"], unit=0.05,
         se=se_quantile("fog_burden_ratio_p50")),
    Cost("mines placed per board", lambda r: r["mines_mean"], unit=1.0, digits=1,
         se=se_mean("mines_mean", "mines_sd")),
    Cost("boards needing tier 3 or 4", lambda r: r.get("tier_hard_share"), unit=0.05,
         se=se_share("tier_hard_share")),
)


SHOWN = (  # what else a proposal shows before -> after (issue 30 item 2; not ranked)
    Cost("board cells", lambda r: r["width"] * r["height"], unit=1.0, digits=0),
    Cost("mines planned per board", lambda r: r["planned_mines"], unit=1.0, digits=0),
    Cost("retry rate", lambda r: r["retry_rate"], unit=0.05, se=se_share("retry_rate")),
    Cost("inferability p10", lambda r: r["inferability_p10"], unit=0.05, digits=3,
         se=se_quantile("inferability_p10")),
    Cost("inferability p50", lambda r: r["inferability_p50"], unit=0.05, digits=3,
         se=se_quantile("inferability_p50")),
)


REDRAW_WORDS = ("stage 2 redraws the mines it removes from the spawn's opening and its "
                "ring, elsewhere on the board, so the board keeps the planned mine count "
                "(the design's rule removes them and never redraws one)")


def blames_remove_only(row: dict, lines: list[str]) -> bool:
    """B fails on a row whose mines the remove-only rule eats (mine drift p50 above the
    warning of diagnostics D): the rule, not the table, is the first cause."""
    return ("B" in lines and bool(row.get("fog_regions_requested"))
            and (row.get("mine_drift_p50") or 0) > MINE_DRIFT_WARN)


def structural(row: dict, lines: list[str]) -> str:
    """The rule behind a B failure no table change fixes, in the row's numbers."""
    if "B" not in lines or not row.get("fog_regions_requested"):
        return ""
    count, t = row["fog_regions_requested"], region_cells(row)
    if blames_remove_only(row, lines):
        return (f"the remove-only mine rule (stage 2 removes every mine in the spawn's "
                f"opening and its ring, and never redraws one) places "
                f"{row['mines_mean']:.1f} of the {row['planned_mines']} planned mines on a "
                f"{row['width']}x{row['height']} board, so too few cells carry a number for "
                f"{count} fog region(s) of {t} cells")
    return (f"on a {row['width']}x{row['height']} board with {row['mines_mean']:.1f} mines "
            f"the eligible cells (safe, numbered, outside the spawn's reach) rarely form a "
            f"4-connected patch of {t} cells")

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


def candidates(row, lines: list[Line], floor: float) -> list[tuple[str, list]]:
    """[(field, values from the smallest change outwards)] for a row failing ``lines``,
    fields in the lines' move order (each field once); ``floor``: the lowest target (line
    A''). A value that is a dict is a change of several keys at once ({field: value}).
    Values may still be invalid as a whole row (the caller validates each)."""
    out, seen = [], set()
    for line in lines:
        for field, way in ((m.field, m.way) for m in line.moves):
            if field in seen:
                continue
            seen.add(field)
            if field == "fog_target_ratio":
                values = _floats(row.fog_target_ratio, 0.01, way, 0.01, 0.25)
            elif field == "fog_region_count":  # down to 0: dropping the fog is an option
                # (flagged, shown with its cost); no fog means a ratio of 0 too (A1 F2), so
                # the last value changes both keys at once
                values = [*range(row.fog_region_count - 1, 0, -1), DROP_FOG]
            elif field == "mine_density":
                values = _floats(row.mine_density, 0.01, way, 0.01, 0.5)
            elif field == "inferability_target":
                values = ([floor] if way == HIGHER else
                          _floats(row.inferability_target, 0.01, way, floor, 1.0))
            elif field == "max_gen_attempts":
                values = [v for v in (row.max_gen_attempts + 4 * k for k in range(1, 8))
                          if v <= 32]
            elif field == "min_safe_count":
                values = [v for v in (row.min_safe_count - 5 * k for k in range(1, STEPS + 1))
                          if v >= 1]
            elif field == BOARD_SIZE and row.board_width != row.board_height:
                # a non-square board grows one side at a time (board_size sets both to
                # one value: it would change the board's shape)
                for side in ("board_width", "board_height"):
                    grown = [v for v in (getattr(row, side) + k for k in range(1, 9))
                             if v <= 64]
                    if grown:
                        out.append((side, grown))
                continue
            elif field == BOARD_SIZE:
                values = [v for v in (row.board_width + k for k in range(1, 9)) if v <= 64]
            else:
                values = []
            if values:
                out.append((field, values))
    return out


def patch_tables(src: str | Path, dst: Path, changes: dict[tuple[int, int], dict]) -> None:
    """Copy the table root ``src`` to ``dst`` with ``changes`` ({(L, D): {field: value}})
    written into board_gen.toml in place: comments and layout stay, only the changed
    field lines of the changed rows differ (board_size: width and height)."""
    files.copy_tree(src, dst)  # regular files only: no FIFO or device is copied
    path = Path(dst) / "board_gen.toml"
    fields = {key: {name: value for field, value in row.items()
                    for name in (("board_width", "board_height") if field == BOARD_SIZE
                                 else (field,))}
              for key, row in changes.items()}
    atomic.write_text(path, patch_rows(files.read_text(path),
                                       ("level_index", "node_depth"), fields))


# The multi-field search (issue 40 item 2; ``pipeline.jobs.explore``): a row failing B is
# searched over its board size, density, fog regions and fog cells together, within its
# intent: the board never shrinks, the fog stays (at least one region, never under
# FOG_SEARCH_KEEP of the fog cells the row asks: above the FOG_KEEP flag), and every point
# is a row the loader accepts or is scored as refused.
FOG_SEARCH_KEEP = 0.55
GROW = 10  # cells the search may add to each side (the loader's F2c bounds it too)
DENSITY_DOWN, DENSITY_UP = 0.03, 0.12


def fog_ratio(cells: int, width: int, height: int) -> float:
    """A fog ratio asking ``cells`` cells of a ``width`` x ``height`` board, on a grid of
    0.001 (rounded up, so the regions are not smaller than the cells asked)."""
    return math.ceil(1000 * cells / (width * height)) / 1000


def space(row, lines: list[str], floors: dict | None = None) -> Space | None:
    """The search space of a row failing B (None for any other failure: its single-field
    candidates and pairs cover it). ``floors``: least values a joint change of the level
    requires ({field: value}, e.g. board_width from the row before it)."""
    if "B" not in lines or not row.fog_region_count:
        return None
    floors = floors or {}
    asked = row.fog_region_count * region_target_size(
        row.board_width, row.board_height, row.fog_target_ratio, row.fog_region_count)
    w0 = max(row.board_width, floors.get("board_width", 0))
    h0 = max(row.board_height, floors.get("board_height", 0))
    d0 = max(round(row.mine_density - DENSITY_DOWN, 2), floors.get("mine_density", 0.0))
    dims = (Dim("board_width", w0, min(64, w0 + GROW)),
            Dim("board_height", h0, min(64, h0 + GROW)),
            Dim("mine_density", d0, round(max(d0, row.mine_density) + DENSITY_UP, 2), 0.01),
            Dim("fog_region_count", 1, max(3, row.fog_region_count + 1)),
            Dim("fog_cells", math.ceil(FOG_SEARCH_KEEP * asked), asked))
    now = {"board_width": row.board_width, "board_height": row.board_height,
           "mine_density": row.mine_density, "fog_region_count": row.fog_region_count,
           "fog_target_ratio": row.fog_target_ratio}

    def change(p: dict) -> dict:
        w, h = int(p["board_width"]), int(p["board_height"])
        new = {"board_width": w, "board_height": h,
               "mine_density": round(p["mine_density"], 2),
               "fog_region_count": int(p["fog_region_count"]),
               "fog_target_ratio": fog_ratio(int(p["fog_cells"]), w, h)}
        return {f: v for f, v in new.items() if v != now[f]}

    words = (f"board {w0}-{w0 + GROW} x {h0}-{h0 + GROW} (never smaller), mine_density "
             f"{d0:.2f}-{max(d0, row.mine_density) + DENSITY_UP:.2f}, 1-"
             f"{max(3, row.fog_region_count + 1)} fog regions, "
             f"{math.ceil(FOG_SEARCH_KEEP * asked)}-{asked} fog cells (the row asks {asked})")
    return Space(dims, change, words)


def joint(rows, changes: dict) -> dict:
    """The least joint change that keeps line E with ``changes`` ({(L, D): {field: value}})
    in place: along each changed level's depths, every monotone_in_depth field of a row is
    raised to the row before it where it fell below -> {(L, D): the row's whole change}
    for each row that needs one (a row of ``changes`` included when it is raised too)."""
    out = {}
    for level in sorted({k[0] for k in changes}):
        running: dict = {}
        for r in sorted((r for r in rows if r.level_index == level), key=lambda r: r.node_depth):
            key = (level, r.node_depth)
            mine = {n: v for f, v in changes.get(key, {}).items()
                    for n in (("board_width", "board_height") if f == BOARD_SIZE else (f,))}
            need = {}
            for f in r.monotone_in_depth:
                value = mine.get(f, getattr(r, f))
                if f in running and value < running[f]:
                    need[f] = value = running[f]
                running[f] = value
            if need:
                out[key] = {**mine, **need}
    return out

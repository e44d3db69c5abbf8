"""minegen's audit lines (SPEC A1 F4), declared once: what each line reads and requires,
why it fails on a row in words and numbers (the drill-down), and the table fields that move
it in the order a designer should try them (the drill-down's table; ``minegen tune``
searches them in that order). Every threshold the report, the sweep hints and tune show is
read from here.

Tuning order (docs/design.md): for B, fog_target_ratio down (smaller regions fit), then
fog_region_count down (never to 0: tuning does not remove fog from a row), then
mine_density up (more numbered, so more eligible, cells), then board_size up; for A,
mine_density down, max_gen_attempts up, fog_target_ratio down, then the target down (last:
it lowers the promise instead of improving the boards); for A', mine_density down,
min_safe_count down, max_gen_attempts up; for A'', the target up to the floor. B' (fog on a
no-fog row) is a generator defect, not a tuning matter.
"""

from __future__ import annotations

from pipeline.api.contract import Line, Move
from pipeline.api.pages import exact, num
from pipeline.api.stats import share_interval

from ..table_checks import TARGET_FLOOR
from ..table_model import region_target_size

LOWER, HIGHER = "lower", "higher"
BOARD_SIZE = "board_size"  # width and height together (square rows only)
MINE_DRIFT_WARN = 0.25  # SPEC §8 D: the drift warning (structural, not an option)


def pct(v: float) -> str:
    return f"{100 * v:g} %"


def _a(row: dict, line: Line) -> str:
    return (f"{row['below_target']} of {row['boards']} boards leave safe cells a player must "
            f"guess: inferability p10 {num(row['inferability_p10'])} (without fog "
            f"{num(row['inferability_core_p10'])}) against the target "
            f"{num(row['inferability_target'])}.")


def _a_floor(row: dict, line: Line) -> str:
    return (f"the row's target {num(row['inferability_target'])} is below the floor "
            f"{exact(line.threshold)}.")


def _a_prime(row: dict, line: Line) -> str:
    return (f"{row['illegal_boards']} of {row['boards']} boards found no legal attempt: safe "
            "cells cut off from the spawn, or fewer safe cells than min_safe_count.")


def region_cells(row: dict) -> int:
    """The cells one fog region of a per-row aggregate row is asked for (A1 stage 3)."""
    return region_target_size(row["width"], row["height"], row["fog_target_ratio"],
                              row["fog_regions_requested"])


def fog_asked(row: dict) -> int:
    """The fog cells per board the row's table asks for: regions x region size."""
    return row["fog_regions_requested"] * region_cells(row)


def _b(row: dict, line: Line) -> str:
    n, count = row["boards"], row["fog_regions_requested"]
    t = region_cells(row)
    share = row["regions_full_share"]
    lo, hi = share_interval(share, n)
    return (f"{count} fog region(s) of {t} cells fit on {share:.1%} of boards "
            f"({round(share * n)} of {n}, 95 % interval {lo:.1%}–{hi:.1%}; the line needs "
            f"{pct(line.threshold)}): a region "
            f"needs a 4-connected patch of {t} eligible cells (safe, numbered, outside the "
            f"spawn's reach), and on a {row['width']}x{row['height']} board with "
            f"{row['mines_mean']:.1f} mines on average those cells form thin bands around the "
            "mines" + _drift(row) + ".")


def _drift(row: dict) -> str:
    """A row whose mines the remove-only rule eats: raising mine_density helps less."""
    planned, placed = row.get("planned_mines"), row.get("mines_mean")
    if not planned or placed is None or placed >= (1 - MINE_DRIFT_WARN) * planned:
        return ""
    return (f"; the table plans {planned} mines but the remove-only rule leaves "
            f"{placed:.1f}, so raising mine_density adds fewer numbered cells than it seems")


def _b_prime(row: dict, line: Line) -> str:
    return (f"{row['fogged_boards']} boards carry fog on a row that asks for none: a "
            "generator defect, to be reported.")


def _b1(row: dict, line: Line) -> str:
    return (f"the settlement's dig-risk margin {num(row['b1_margin'])} (left / right, "
            f"from the row's inferability p10 {num(row['inferability_p10'])}) is "
            f"not above {exact(line.threshold)}: a blind dig still pays in the settlement.")


LINES = (
    Line("A", "below_target", "==", 0, True,
         "boards with inferability or inferability_core below the row's target",
         quantity="boards below target", explain=_a, moves=(
             Move("mine_density", LOWER, "fewer mines leave fewer cells that need a guess"),
             Move("max_gen_attempts", HIGHER,
                  "more attempts to find a board that meets the target"),
             Move("fog_target_ratio", LOWER, "less fog hides fewer numbers"),
             Move("inferability_target", LOWER, "a lower target accepts the boards as they are"))),
    Line("A''", "inferability_target", ">=", TARGET_FLOOR, True,
         "the row's inferability target", quantity="target", explain=_a_floor, moves=(
             Move("inferability_target", HIGHER, "up to the floor: the threshold of line A''"),)),
    Line("A'", "illegal_boards", "==", 0, True,
         "boards flagged illegal (accept_least_bad)", quantity="illegal boards",
         explain=_a_prime, moves=(
             Move("mine_density", LOWER, "fewer mines: fewer cut-off safe cells"),
             Move("min_safe_count", LOWER, "fewer safe cells required"),
             Move("max_gen_attempts", HIGHER, "more attempts to find a legal board"))),
    Line("B", "b_regions_full_share", ">=", 0.95, True,
         "share of boards with all requested fog regions placed",
         quantity="boards with every fog region placed",
         applies="rows with fog regions and a non-empty variant pool", explain=_b,
         trials="boards", moves=(
             Move("fog_target_ratio", LOWER,
                  "smaller regions fit in the thin bands of eligible cells"),
             Move("fog_region_count", LOWER, "fewer regions to place"),
             Move("mine_density", HIGHER, "more mines: more numbered (eligible) cells"),
             Move(BOARD_SIZE, HIGHER, "a larger board has larger eligible patches",
                  shown="board_width and board_height"))),
    Line("B'", "b_prime_fogged_boards", "==", 0, True, "boards with fog on a no-fog row",
         quantity="fogged boards", applies="rows with no fog regions", explain=_b_prime),
    Line("B1-CP", "b1_margin", ">", 1.0, False,
         "the settlement's dig-risk margin (left / right), where it is evaluated",
         quantity="clause ③ margin", explain=_b1,
         applies="rows where (1 - p10) * |S| >= 1, when the tables are known"),
    Line("E", "e_monotone_ok", "==", 1, False,
         "monotone_in_depth fields non-decreasing along depth within the level",
         quantity="monotone (1 = yes)", applies="levels that mark monotone_in_depth"),
)

"""minegen's curve review: one difficulty curve across every row, and a drill-down for each
failing row (and the rows closest to failing): why, in words and numbers; which table
fields move the line and which way; a ready ``minegen sweep`` command; the worst boards
with their ``minegen generate`` commands, drawn.
"""

from __future__ import annotations

from pipeline.hints import RunHints
from pipeline.reports.audit_page import groups
from pipeline.reports.document import (
    FAIL, WARN, Bullets, Cell, Figure, Figures, Para, Section, Table, num,
)
from pipeline.reports.svg import Series, line_chart

from ..table_model import region_target_size
from .tune import TUNING


WORST_BOARDS = 3  # boards drawn per drilled row
NEAR_MISSES = 3  # passing rows closest to a threshold, drilled as well
MAX_DRILLED = 40  # rows drilled at the most (a report stays readable)

MOVES = TUNING  # per hard line: (field, which way helps, why), in tuning order


def worst_rows(doc) -> list[tuple[dict, list[str], bool]]:
    """(row, lines it fails or nearly fails, failing?) for the failing rows, then the
    passing rows closest to a hard line's threshold."""
    by_key = {doc.key(r): r for r in doc.rows}
    failing: dict[tuple, list[str]] = {}
    for r in doc.hard_failures:
        failing.setdefault(doc.key(r), []).append(r["line"])
    out = [(by_key[k], names, True) for k, names in failing.items()]
    margins = []
    lines = {ln.name: ln for ln in doc.lines if ln.hard}
    for r in doc.results:
        ln = lines.get(r["line"])
        if ln is None or r["passed"] is not True or ln.op not in (">=", ">") or \
                doc.key(r) in failing:
            continue
        margins.append((r["observed"] - ln.threshold, doc.key(r), ln.name))
    for _, key, name in sorted(margins)[:NEAR_MISSES]:
        if key not in failing and all(doc.key(row) != key for row, _, _ in out):
            out.append((by_key[key], [name], False))
    return out[:MAX_DRILLED]


def wanted(doc) -> list[tuple[tuple, int]]:
    """The boards the drill-down draws: the worst boards of every drilled row."""
    return [(doc.key(row), int(i)) for row, _, _ in worst_rows(doc)
            for i in (row.get("worst_boards") or [])[:WORST_BOARDS]]


def reason(row: dict, line: str) -> str:
    n = row["boards"]
    if line == "A":
        return (f"{row['below_target']} of {n} boards leave safe cells a player must guess: "
                f"inferability p10 {num(row['inferability_p10'])} (without fog "
                f"{num(row['inferability_core_p10'])}) against the target "
                f"{num(row['inferability_target'])}.")
    if line == "A''":
        return f"the row's target {num(row['inferability_target'])} is below the floor 0.85."
    if line == "A'":
        return (f"{row['illegal_boards']} of {n} boards found no legal attempt: safe cells cut "
                "off from the spawn, or fewer safe cells than min_safe_count.")
    if line == "B":
        count = row["fog_regions_requested"]
        t = region_target_size(row["width"], row["height"], row["fog_target_ratio"], count)
        share = row["regions_full_share"]
        return (f"{count} fog region(s) of {t} cells fit on {share:.1%} of boards "
                f"({round(share * n)} of {n}; the line needs 95 %): a region needs a "
                f"4-connected patch of {t} eligible cells (safe, numbered, outside the "
                f"spawn's reach), and on a {row['width']}x{row['height']} board with "
                f"{row['mines_mean']:.1f} mines on average those cells form thin bands "
                "around the mines.")
    if line == "B'":
        return (f"{row['fogged_boards']} boards carry fog on a row that asks for none: a "
                "generator defect, to be reported.")
    return f"line {line} fails."


def sweep_command(row: dict, line: str, hints: RunHints) -> str | None:
    moves = MOVES.get(line) or []
    if not moves:
        return None
    field, way, _ = moves[0]
    cur = row.get(field)
    if field == "inferability_target" and way == "higher":
        grid = "0.85:0.95:0.01"
    elif isinstance(cur, float) and cur > 0:
        lo, hi = (cur / 4, cur) if way == "lower" else (cur, min(0.5, cur * 2))
        step = next((s for s in (0.005, 0.01, 0.02, 0.05, 0.1) if (hi - lo) / s <= 10), 0.1)
        lo = max(step, round(lo / step) * step) if way == "lower" else cur
        grid = f"{lo:g}:{hi:g}:{step:g}"
    elif isinstance(cur, int):
        lo, hi = (max(1, cur // 2), cur) if way == "lower" else (cur, cur * 2)
        grid = f"{lo}:{hi}:{max(1, (hi - lo) // 6)}"
    else:
        return None
    return hints.audit("sweep", "--row", f"{row['level_index']}:{row['node_depth']}", "--vary",
                       f"{field}={grid}", "--n", row["boards"])


def drill_down(doc, hints: RunHints) -> list[Section]:
    sec = Section("drill-down", "Drill-down: failing rows and near misses")
    out = [sec]
    rows = worst_rows(doc)
    if not rows:
        sec.blocks.append(Para("Every hard line holds with room on every row."))
        return out
    sec.blocks.append(Para("Per row: why it fails (or nearly fails), which table fields move "
                           "that line and which way, a sweep to find the value, and its worst "
                           "boards (the audit's own seeds; amber cells need a guess)."))
    for row, names, failing in rows:
        key = doc.key(row)
        label = doc.row_label(row)
        head = Section(f"drill-{row['level_index']}-{row['node_depth']}",
                       f"{label}: {'fails' if failing else 'closest to failing'} "
                       f"{', '.join(names)}", depth=3)
        head.blocks.append(Bullets([Cell(f"{name}: {reason(row, name)}",
                                         FAIL if failing else WARN) for name in names]))
        moves = [(name, *m) for name in names for m in MOVES.get(name, [])]
        if moves:
            head.blocks.append(Table(["line", "table field", "move it", "because"],
                                     [[Cell(n), Cell(f), Cell(w), Cell(why)]
                                      for n, f, w, why in moves]))
        for name in names:
            cmd = sweep_command(row, name, hints)
            if cmd:
                head.blocks.append(Para(f"Sweep for line {name}: {cmd}"))
        boards = [int(i) for i in (row.get("worst_boards") or [])[:WORST_BOARDS]]
        drawn = []
        for i in boards:
            cmd = hints.program("minegen", "generate", row["level_index"], row["node_depth"],
                                "--index", i)
            svg = doc.drawings.get((key, i))
            if svg is not None:
                drawn.append(Figure(f"board-{row['level_index']}-{row['node_depth']}-{i}",
                                    svg, f"board {i}: {cmd}"))
            else:
                head.blocks.append(Para(f"board {i}: {cmd}"))
        if drawn:
            head.blocks.append(Figures(f"Worst boards of {label}", drawn))
        out.append(head)
    return out


def difficulty_curve(doc) -> Section:
    """Every row in key order on one axis, levels shaded: the shares a designer tunes."""
    rows = doc.rows
    xs = list(range(len(rows)))
    shades = groups(doc)  # the same level bands as the per-line charts

    def col(name):
        return [r.get(name) for r in rows]

    series = [Series("inferability p10", col("inferability_p10"), "#1f77b4", marker="triangle"),
              Series("inferability p50", col("inferability_p50"), "#1f3f77"),
              Series("boards with every fog region placed (B)", col("b_regions_full_share"),
                     "#2ca02c", marker="square"),
              Series("mine drift p50", col("mine_drift_p50"), "#8c564b", dash="4 2"),
              Series("fog burden p50", col("fog_burden_ratio_p50"), "#17becf", dash="2 2"),
              Series("retry rate", col("retry_rate"), "#ff7f0e", dash="6 2")]
    if rows and "tier_hard_share" in rows[0]:
        series.append(Series("boards needing tier 3 or 4", col("tier_hard_share"), "#9467bd",
                             dash="1 2"))
    svg = line_chart(ns="curve", title="Difficulty curve: every row, levels shaded",
                     xlabel="row (level, depth), in table order", ylabel="share", xs=xs,
                     xticks=[f"{r['level_index']}:{r['node_depth']}" for r in rows],
                     ylim=(0.0, 1.02), shades=shades, series=series,
                     width=max(560, min(1400, 16 * len(rows))))
    return Section("curve", "Difficulty curve", blocks=[
        Para("One axis for the whole table: inferability p10 / p50, the share of boards whose "
             "fog regions all fit (line B needs 0.95), mine drift (advisory above 0.25), fog "
             "burden and the retry rate; a gap means the quantity does not apply to the row."),
        Figure("plot-curve", svg, "Difficulty curve across every row (level bands shaded).")])


"""minegen behind the generator interface: the F4 audit of the board table (SPEC §8).

Rows are (level_index, node_depth), planned by R1 floor; board i of a row uses
derive_at("board_gen", sigma(L, D) + i). Lines (A1 F4): A, A'', A', B, B' hard; E
advisory. Report C and diagnostics D are the per-row aggregations; the shortfall
histogram is a side table; the B1 clause-③ reconciliation a run table.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import Any

import numpy as np
import polars as pl

from boardcore import kernel_cache
from boardcore.errors import InputError
from pipeline.api.contract import Drawings, Generator, Kernels, RunTables, SweepField, Tune
from pipeline.api.pages import exact
from pipeline.api.stats import percentiles, quantile_bounds

from . import b1, boards, sections, tune
from .drill import DRILL, WORST_BOARDS
from .lines import BOARD_SIZE, LINES, MINE_DRIFT_WARN
from .. import record as minegen_record
from ..plan import REDRAW_REMOVED, RowPlan, plan_row
from ..record import FIELDS, GENERATOR_VERSION, METRIC_VERSION, RECORD
from ..rng import MAX_BOARDS_PER_ROW
from ..table_loader import DEFAULT_ROOT, check_board_gen_row, load_tables, row_fields
from ..table_model import Tables


TIERS = "tier" in FIELDS  # record_schema_version 2: difficulty tiers (advisory)
# the entry kernels' cache index files (numba names them after the module and function)
ENTRY = "attempt.generate_boards-*.nbi"  # the batch and per-board entry kernel
TIERS_ENTRY = "attempt.generate_boards_tiers-*.nbi"  # the tier path's entry kernel
N_TIERS = 5
LARGEST, SMALLEST = "largest", "smallest"
# the row's table values, carried into the per-row frame and compared by ``diff``
SNAPSHOT = (("row_level", "table row level"), ("row_depth", "table row depth"),
            ("width", "width"), ("height", "height"), ("mine_density", "density"),
            ("inferability_target", "target"), ("solver_rules", "solver rules"),
            ("fog_regions_requested", "fog regions"), ("fog_target_ratio", "fog ratio"),
            ("pool_empty", "fog pool empty"), ("planned_mines", "planned mines"))


class MinegenAudit(Generator, Tune, RunTables, Kernels, Drawings):
    """The audit side of minegen (``pipeline.generator``: the core, sweep and tune)."""

    name = "minegen"
    metric_version = METRIC_VERSION
    generator_version = GENERATOR_VERSION
    record_schema_version = getattr(minegen_record, "RECORD_SCHEMA_VERSION", 1)
    report_subdir = ""
    seed_rule = ("sigma(L, D) = 10^9 + 2^20*L + 2^12*D; board i: "
                 "derive_at('board_gen', sigma + i)")
    max_boards = MAX_BOARDS_PER_ROW
    key_fields = ("level_index", "node_depth")
    index_field = "seed_index"
    record = RECORD

    lines = LINES
    drill = DRILL
    default_root = str(DEFAULT_ROOT)

    # ------------------------------------------------------------------------ rows
    def load(self, root: str | None) -> Tables:
        return load_tables(root)

    def parse_key(self, text: str) -> tuple[int, int]:
        try:
            level, depth = (int(p) for p in str(text).strip().split(":"))
        except ValueError:
            raise InputError(f"{text!r} is not L:D (e.g. 2:4)") from None
        return level, depth

    def format_key(self, key) -> str:
        return f"{key[0]}:{key[1]}"

    def plans(self, catalog: Tables, keys) -> list[RowPlan]:
        keys = list(keys) or [r.key for r in catalog.board_gen]
        return [plan_row(catalog, level, depth) for level, depth in sorted(keys)]

    def key(self, plan: RowPlan) -> tuple[int, int]:
        return plan.level, plan.depth

    def label(self, key) -> str:
        return f"({key[0]}, {key[1]})"

    def describe(self, row: dict) -> str:
        return (f"{row.get('width')}x{row.get('height')}, density "
                f"{exact(row.get('mine_density'))}, target "
                f"{exact(row.get('inferability_target'))}, fog regions "
                f"{exact(row.get('fog_regions_requested'))}, N {exact(row.get('boards'))}")

    def snapshot(self, plan: RowPlan) -> dict:
        return {
            "level": plan.level, "depth": plan.depth, "row": row_fields(plan.row),
            "pool": [{**asdict(v), "biome_tag": sorted(v.biome_tag),
                      "counter_item_ids": list(v.counter_item_ids)} for v in plan.pool],
            "dig_ap_cost": plan.dig_ap_cost,
            # a what-if rule's boards are other boards (never a table row's: then absent,
            # so every table row's shard key is what it always was)
            **({"what_if": plan.what_if} if plan.what_if else {}),
        }

    # --------------------------------------------------------------------- records
    # The kernels (numba) are imported where boards are made, on the workers: the client
    # process never needs them (it stays ~100 MB lighter).
    # The audit computes the difficulty tiers (record schema 2): +21 % / +32 % per attempt
    # at 12x12 / 30x16 (within the issue's 50 %), measured by the tiers' author.
    def block(self, plan: RowPlan, first: int, count: int) -> dict[str, np.ndarray]:
        from ..batch import generate_block

        return generate_block(plan, first, count, tiers=TIERS)

    worker_modules = ("minegen.batch",)  # the kernels' module; ``warm`` loads them
    warm_module = "minegen.audit.warmed"

    def warm(self) -> None:
        from ..batch import warm_up

        warm_up(tiers=TIERS)

    def expected_columns(self, plan: RowPlan, first: int, count: int) -> dict:
        """The stream seeds derive_at("board_gen", sigma(L, D) + i) (SPEC A1 F4) and the
        row's own values every record repeats."""
        from boardcore.streams import derive_seeds

        from ..rng import BOARD_GEN_STREAM, sigma

        r, s = plan.row, sigma(plan.level, plan.depth)
        return {"stream_seed": derive_seeds(BOARD_GEN_STREAM, s + first, count), "sigma": s,
                "row_level": r.level_index, "row_depth": r.node_depth, "width": r.board_width,
                "height": r.board_height, "mine_density": r.mine_density,
                "inferability_target": r.inferability_target}

    def cold(self) -> bool:
        return not kernel_cache.is_warm(TIERS_ENTRY if TIERS else ENTRY)

    compile_seconds = 16  # measured: written by benchmarks/compile.py --doc

    def row_cost(self, plan: RowPlan) -> float:
        """A board's cost grows with its cells and the attempts it may take: W x H x
        max_gen_attempts (the split of rows into tasks, when no earlier run timed them)."""
        return float(plan.width * plan.height * plan.row.max_gen_attempts)

    # -------------------------------------------------------------------- analysis
    def aggregations(self) -> list[pl.Expr]:
        target = pl.col("inferability_target")
        below = (pl.col("inferability") < target) | (pl.col("inferability_core") < target)
        drift = (pl.col("planned_mines") - pl.col("mines")) / pl.col("planned_mines")
        return [
            *(pl.first(c) for c, _ in SNAPSHOT),
            pl.len().alias("boards"),
            *(e for c in ("inferability", "inferability_core")
              for e in percentiles(c, (0.10, 0.50, 0.90))),
            *(e for c in ("delta_budget_fog", "fog_burden_ratio")
              for e in percentiles(c, (0.50, 0.90))),
            below.sum().cast(pl.Int64).alias("below_target"),
            pl.col("illegal").sum().cast(pl.Int64).alias("illegal_boards"),
            (pl.col("fog_regions_achieved") == pl.col("fog_regions_requested"))
            .mean().alias("regions_full_share"),
            (pl.col("fog_cells") > 0).sum().cast(pl.Int64).alias("fogged_boards"),
            (pl.col("attempts_used") >= 2).mean().alias("retry_rate"),
            pl.col("attempts_used").mean().alias("mean_attempts"),
            *((pl.col("exit") == e).sum().alias(f"exit_{e}")
              for e in ("met", "accept_best", "accept_least_bad")),
            pl.col("fog_shortfall").mean().alias("shortfall_mean"),
            pl.col("fog_shortfall").max().alias("shortfall_max"),
            (pl.col("fog_shortfall") >= 1).mean().alias("shortfall_share"),
            drift.quantile(0.5, interpolation="linear").alias("mine_drift_p50"),
            pl.col("mines").mean().alias("mines_mean"),
            pl.col("fog_cells").mean().alias("fog_cells_mean"),
            # the figures' noise, which tune reads (``tune.COSTS``: a change within it is
            # not shown as a change)
            pl.col("mines").std().alias("mines_sd"),
            pl.col("fog_cells").std().alias("fog_cells_sd"),
            *quantile_bounds("inferability", 0.10), *quantile_bounds("inferability", 0.50),
            *quantile_bounds("fog_burden_ratio", 0.50),
            # the boards the drill-down draws: illegal first, then fewest fog regions
            # placed, then lowest inferability (core), then most attempts
            pl.col("seed_index").sort_by(
                [pl.col("illegal").not_(),
                 pl.col("fog_regions_achieved") - pl.col("fog_regions_requested"),
                 "inferability", "inferability_core", pl.col("attempts_used").neg()],
                maintain_order=True).head(WORST_BOARDS).alias("worst_boards"),
            *(tier_aggregations() if TIERS else ()),
        ]

    def row_columns(self, rows: pl.DataFrame, catalog: Tables | None) -> pl.DataFrame:
        """B / B' applicability as nullable observed columns, the drift warning, and E and
        B1-CP from the tables (null when no table is known, e.g. a sweep of one row)."""
        out = rows.with_columns(
            pl.when(pl.col("fog_regions_requested") >= 1, ~pl.col("pool_empty"))
            .then(pl.col("regions_full_share")).otherwise(None).alias("b_regions_full_share"),
            pl.when(pl.col("fog_regions_requested") == 0)
            .then(pl.col("fogged_boards")).otherwise(None).alias("b_prime_fogged_boards"),
            (pl.col("mine_drift_p50") > MINE_DRIFT_WARN).alias("mine_drift_warning"),
        )
        if catalog is None:
            return out.with_columns(e_monotone_ok=pl.lit(None, pl.Int64), e_detail=pl.lit(""),
                                    b1_margin=pl.lit(None, pl.Float64))
        # B1 clause ③ as the advisory line B1-CP: the reconciliation's own margin (null
        # where it is not evaluated), so the verdict names its failures like any line's
        margin = b1.reconcile(out, catalog.settlement).select(
            *self.key_fields, pl.col("margin").alias("b1_margin"))
        return out.join(monotone_frame(catalog), on=list(self.key_fields), how="left") \
            .join(margin, on=list(self.key_fields), how="left")

    def side_tables(self, records: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
        by = [*self.key_fields, "fog_shortfall"]
        return {"shortfall": records.group_by(by).agg(pl.len().alias("boards")).sort(by)}

    def run_tables(self, rows: pl.DataFrame, catalog: Tables) -> dict[str, pl.DataFrame]:
        return {"b1_reconciliation": b1.reconcile(rows, catalog.settlement)}

    def report_sections(self, doc) -> list:
        return sections.sections(doc)

    def exhibit(self, plan: RowPlan, index: int) -> str:
        return boards.exhibit(plan, index, tiers=TIERS)

    def play_page(self, plan: RowPlan, index: int) -> str | None:
        """The board as a page where a designer plays it, with the solver's hints
        (``minegen.play_page``; it needs the board's tiers)."""
        if not TIERS:
            return None
        from ..play_page import page_html

        return page_html(boards.made(plan, index, tiers=TIERS))

    def summary_notes(self, rows: pl.DataFrame) -> list[str]:
        drift = rows.filter(pl.col("mine_drift_warning"))
        if not drift.height:
            return []
        return [f"mine drift p50 above {MINE_DRIFT_WARN} on {drift.height} row(s): the "
                "remove-only rule eats their density"]

    # What ``diff`` compares per row: (column, label, kind); kind snapshot = the row's
    # table values, figure = a measured value, count = a count of boards.
    diff_columns = (
        *((c, label, "snapshot") for c, label in SNAPSHOT),
        *((c, label, "figure") for c, label in (
            ("inferability_p10", "inferability p10"), ("inferability_p50", "inferability p50"),
            ("inferability_p90", "inferability p90"), ("inferability_core_p10", "core p10"),
            ("inferability_core_p50", "core p50"), ("inferability_core_p90", "core p90"),
            ("retry_rate", "retry rate"), ("fog_cells_mean", "fog cells per board"),
            ("fog_burden_ratio_p50", "fog burden p50"), ("mines_mean", "mines placed per board"),
            ("mine_drift_p50", "mine drift p50"))),
        *((f"exit_{e}", f"exits {e}", "count") for e in ("met", "accept_best",
                                                          "accept_least_bad")),
        *((("tier_mean", "mean tier", "figure"), ("tier_hard_share", "tier 3-4 share",
                                                   "figure")) if TIERS else ()),
    )

    # ----------------------------------------------------------------------- sweep
    sweep_fields = (
        SweepField("board_width", "int", LARGEST, "a wider board is more to infer"),
        SweepField("board_height", "int", LARGEST, "a taller board is more to infer"),
        SweepField(BOARD_SIZE, "int", LARGEST, "sets width and height together"),
        SweepField("mine_density", "float", LARGEST, "more mines, less inferable"),
        SweepField("inferability_target", "float", LARGEST, "a stricter line A"),
        SweepField("min_safe_count", "int", LARGEST,
                   "a larger safe region is harder to guarantee"),
        SweepField("max_gen_attempts", "int", SMALLEST, "fewer attempts is cheaper"),
        SweepField("fog_region_count", "int", LARGEST, "more regions to place (line B)"),
        SweepField("fog_target_ratio", "float", LARGEST, "larger regions to place (line B)"),
    )

    def vary(self, catalog: Tables, key, field: str, value: Any):
        """The row resolved for ``key`` with ``field`` replaced, validated in memory; the
        plan keeps the requested (L, D), so its seeds are the audit's."""
        return self.vary_many(catalog, key, {field: value})

    def vary_many(self, catalog: Tables, key, changes: dict):
        level, depth = key
        raw = row_fields(catalog.resolve(level, depth))
        for field, value in changes.items():
            for f in (("board_width", "board_height") if field == BOARD_SIZE else (field,)):
                raw[f] = value
        row, diags = check_board_gen_row(raw)
        errors = [d for d in diags if d.severity == "error"]
        if errors:
            return None, errors
        return RowPlan(level=level, depth=depth, row=row,
                       pool=catalog.pool(level, row.board_biome),
                       dig_ap_cost=catalog.economy.dig_ap_cost), []

    def current_value(self, catalog: Tables, key, field: str) -> Any:
        base = catalog.resolve(*key)
        if field == BOARD_SIZE:
            return base.board_width if base.board_width == base.board_height else None
        return getattr(base, field)

    def resolved_key(self, catalog: Tables, key) -> tuple[int, int]:
        return catalog.resolve(*key).key

    # ------------------------------------------------------------------------ tune
    tune_costs = tune.COSTS
    tune_shown = tune.SHOWN
    intents = sections.INTENTS
    jargon = (("core", "core"), ("tier", "tier"), ("tiers", "tier"),
              ("remove-only rule", "remove-only clearing"),
              ("remove-only mine rule", "remove-only clearing"))
    table_file = "board_gen.toml"
    lock_key = "tune_locked"
    table_rows = {"board_gen.toml": (("level_index", "node_depth"),),
                  "variation.toml": (("variant_id",),)}

    def locked(self, catalog: Tables, key) -> bool:
        return catalog.resolve(*key).tune_locked

    def locked_why(self, catalog: Tables, key) -> str:
        return ("board_gen.toml marks it tune_locked = true: a reference row of the design, "
                "kept as it is")

    def structural(self, row: dict, lines: list[str]) -> str:
        return tune.structural(row, lines)

    def what_ifs(self, catalog: Tables, key, lines: list[str], row: dict) -> list:
        """B failing where the remove-only mine rule eats the row's density (the rule
        ``structural`` names): the same row with stage 2 redrawing the mines it removes."""
        if not tune.blames_remove_only(row, lines):
            return []
        return [(tune.REDRAW_WORDS, replace(plan_row(catalog, *key), what_if=REDRAW_REMOVED))]

    def tune_candidates(self, catalog: Tables, key, lines: list[str]) -> list[tuple[str, list]]:
        floor = next(ln.threshold for ln in self.lines if ln.name == "A''")
        return tune.candidates(catalog.resolve(*key), [ln for ln in self.lines
                                                       if ln.name in lines], floor)

    def tune_space(self, catalog: Tables, key, lines: list[str], floors: dict | None = None):
        return tune.space(catalog.resolve(*key), lines, floors)

    def tune_joint(self, catalog: Tables, changes: dict) -> dict:
        return tune.joint(catalog.board_gen, changes)

    def table_edits(self, catalog: Tables, key, field: str, old, new) -> list:
        """board_size is two keys of board_gen.toml: board_width and board_height."""
        if field == BOARD_SIZE:
            return [(f, str(old), str(new)) for f in ("board_width", "board_height")]
        return super().table_edits(catalog, key, field, old, new)

    def patch_tables(self, catalog: Tables, dst, changes: dict) -> None:
        tune.patch_tables(catalog.root, dst, changes)


def tier_aggregations() -> list[pl.Expr]:
    """Per row: the share of boards at each difficulty tier, the share needing tier 3 or 4,
    the mean tier and deductions of the board's own tier, and the guess share p50 / p90."""
    return [
        *((pl.col("tier") == t).mean().alias(f"tier_{t}_share") for t in range(N_TIERS)),
        (pl.col("tier") >= 3).mean().alias("tier_hard_share"),
        pl.col("tier").mean().alias("tier_mean"),
        pl.col("tier_deductions").mean().alias("tier_deductions_mean"),
        *percentiles("guess_share", (0.50, 0.90)),
    ]


def monotone_frame(tables: Tables) -> pl.DataFrame:
    """(L, D, e_monotone_ok, e_detail): E per row. A field is checked within a level when any
    row of the level marks it; a row fails when a marked field drops from the previous depth."""
    rows = []
    for level in tables.levels():
        level_rows = sorted((r for r in tables.board_gen if r.level_index == level),
                            key=lambda r: r.node_depth)
        marked = sorted({f for r in level_rows for f in r.monotone_in_depth})
        prev = None
        for r in level_rows:
            drops = [f"{f} {getattr(prev, f)} -> {getattr(r, f)}" for f in marked
                     if prev is not None and getattr(r, f) < getattr(prev, f)]
            rows.append({"level_index": level, "node_depth": r.node_depth,
                         "e_monotone_ok": (0 if drops else 1) if marked else None,
                         "e_detail": "; ".join(drops)})
            prev = r
    return pl.DataFrame(rows, schema={"level_index": pl.Int64, "node_depth": pl.Int64,
                                      "e_monotone_ok": pl.Int64, "e_detail": pl.String})


GENERATOR = MinegenAudit()

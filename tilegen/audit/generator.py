"""tilegen behind the generator interface: the audit of the tile-match presets
(docs/tilegen.md, The audit).

Rows are (city_id, level_id, revision); each row runs its production board (seed_index
-1, seed FNV-1a-64("city:level:revision"), ``first_index = -1``) and N audit boards
i = 0..N-1 (seed derive_at("tilegen:city:level:revision", i)). Aggregations read the N
audit boards; the production board is reported apart (``production_*``). Lines (§20.4):
P, Q, S and the sub-lines G-TF, G-TA, G-ICR, L-V hard; M, V, U advisory. Report C and
diagnostics D: ``sections``; tuning along the 05 §16 ladder: ``tune``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import polars as pl

from pipeline.api.contract import (Calibration, Daily, Drawings, Generator, Kernels, Progression,
                                   Revisions, SweepField, Tune)
from pipeline.api.stats import binomial_se, percentiles, quantile_bounds

from . import sections, tune
from .crossrows import cross_rows
from .drill import DRILL
from .lines import LINES, Q_RISK, gate_shares
from .. import record as tile_record
from ..codes import EXIT_NAMES, MAX_ATTEMPTS, REASON_NAMES
from ..ladder import SWEPT
from ..record import FIELDS, GENERATOR_VERSION, METRIC_VERSION, RECORD
from ..table_loader import DEFAULT_ROOT

AUDIT = pl.col("seed_index") >= 0  # the N audit boards (the production board is -1)
PROD = pl.col("seed_index") == -1
# the row's table values, carried into the per-row frame and compared by ``diff``
SNAPSHOT = (("element_count", "element types"), ("pieces_per_element", "pieces per element"),
            ("total_pieces", "pieces"), ("layers", "layers"), ("density", "density"),
            ("target_pass_rate", "target pass rate"), ("window_cols", "window columns"),
            ("window_rows", "window rows"), ("runs_per_strategy", "runs per strategy"))
KEY = ("city_id", "level_id", "revision")
REJECTS = ("clickable_ratio", "triple_chains", "direct_triple", "near_surface",
           "same_layer_cluster", "tool_free_low", "tool_free_high", "tool_assist_low")
PERCENTILE_COLUMNS = ("tool_free_pass_rate", "tool_assist_pass_rate",
                      "initial_clickable_ratio", "raw_tool_free_pass_rate")
GATE_COLUMNS = {"tool_free_min": pl.Float64, "tool_free_max": pl.Float64,
                "tool_assist_min": pl.Float64, "clickable_min": pl.Float64}
LARGEST = "largest"
# a board's relative cost by level (default presets, N 256: level 5's gates retry most)
LEVEL_COST = (1.0, 1.5, 2.4, 3.3, 8.8, 7.4)
# rule variants of the returned board (advisory record columns, when the record has them)
VARIANTS = tuple(c for c in ("alt_slot_tool_free_pass_rate", "alt_slot_tool_assist_pass_rate",
                             "remove_only_pass_rate", "shuffle_only_pass_rate",
                             "undo_only_pass_rate") if c in FIELDS)


def _prod(col: str, name: str | None = None) -> pl.Expr:
    return pl.col(col).filter(PROD).first().alias(name or f"production_{col}")


def _count(cond: pl.Expr, name: str) -> pl.Expr:
    return cond.filter(AUDIT).sum().cast(pl.Int64).alias(name)


SAMPLED = AUDIT & pl.col("diagnosed")  # the audit boards with diagnostics and variants
TOOLS_TO_WIN = ("0", "1", "2", "3", "more", "unknown")  # record.tools_to_win's values


def _sample_mean(col: str) -> list[pl.Expr]:
    """``<col>_mean`` over the row's diagnosed audit boards and ``<col>_hw``, the half-width
    of its 95 % interval (1.96 standard errors: the boards are the sample, decision 190)."""
    c = pl.col(col).filter(SAMPLED)
    return [c.mean().alias(f"{col}_mean"),
            (1.96 * c.std() / c.count().cast(pl.Float64).sqrt()).alias(f"{col}_hw")]


class TilegenAudit(Generator, Tune, Daily, Calibration, Progression, Revisions, Kernels, Drawings):
    """The audit side of tilegen: the core, sweep, tune and the daily boards (``daily``)."""

    name = "tilegen"
    metric_version = METRIC_VERSION
    generator_version = GENERATOR_VERSION
    record_schema_version = tile_record.RECORD_SCHEMA_VERSION
    report_subdir = "tilegen"
    rules_doc = "docs/tilegen.md"  # the rules the report points designers to
    seed_rule = ("production board (seed_index -1): FNV-1a-64('city:level:revision'); audit "
                 "board i: derive_at('tilegen:city:level:revision', i)")
    max_boards = 1 << 16  # 65,536 boards a row: ~1 h for the 36 default rows on 2 cores
    first_index = -1  # the production board runs beside the N audit boards
    key_fields = KEY
    index_field = "seed_index"
    record = RECORD
    worker_modules, warm_module = ("tilegen.batch",), "tilegen.audit.warmed"  # kernels, warm-up
    lines = LINES
    drill = DRILL
    default_root = str(DEFAULT_ROOT)

    # ------------------------------------------------------------------------ rows
    def load(self, root: str | None):
        from ..table_loader import load_tables

        return load_tables(root)

    def parse_key(self, text: str) -> tuple:
        from ..table_loader import parse_key

        return tuple(parse_key(text))

    def format_key(self, key) -> str:
        return ":".join(str(v) for v in key)

    def plans(self, catalog, keys) -> list:
        from ..table_loader import plans

        keys = list(keys)
        return sorted(plans(catalog, keys), key=lambda p: p.key)

    def key(self, plan) -> tuple:
        return tuple(plan.key)

    def label(self, key) -> str:
        city, level, *rest = key
        return f"{city} {level}" + (f" r{rest[0]}" if rest and rest[0] is not None else "")

    def describe(self, row: dict) -> str:
        ppe = str(row.get("pieces_per_element"))
        pieces = (f"{row.get('element_count')} elements x {ppe}" if "," not in ppe
                  else f"{row.get('element_count')} elements ({ppe})")
        return (f"level {row.get('level_id')} of {row.get('city_id')}, revision "
                f"{row.get('revision')}: {pieces} = {row.get('total_pieces')} pieces on "
                f"{row.get('layers')} layer(s), density {row.get('density')}, target pass "
                f"rate {row.get('target_pass_rate')}, N {row.get('boards')}")

    def snapshot(self, plan) -> dict:
        return plan.snapshot()

    # --------------------------------------------------------------------- records
    # The kernels (numba) load where boards are made, on the workers, never in the client.
    def block(self, plan, first: int, count: int) -> dict[str, np.ndarray]:
        from ..batch import run_block

        return run_block(plan, first, count)

    def warm(self) -> None:
        from ..batch import warm_up

        warm_up()

    def expected_columns(self, plan, first: int, count: int) -> dict:
        """The row's seeds (index -1: FNV-1a-64 of the row key; i >= 0: derive_at of the
        row's stream, 05 §12.1) and the preset's own values every record repeats."""
        idx = np.arange(first, first + count)
        seeds = np.full(count, plan.production_seed, dtype=np.uint64)
        if (idx >= 0).any():
            start = max(first, 0)
            seeds[idx >= 0] = plan.audit_seeds(start, first + count - start)
        return {"stream_seed": seeds, "element_count": plan.element_count,
                "total_pieces": plan.total_pieces, "layers": plan.layers,
                "target_pass_rate": plan.target_pass_rate}

    def cold(self) -> bool:
        from ..batch import is_warm

        return not is_warm()

    def compile_parts(self) -> tuple:
        from ..batch import PARTS, compile_part

        return tuple(functools.partial(compile_part, part) for part in PARTS)

    compile_seconds = 35  # measured: written by benchmarks/compile.py --doc

    def row_cost(self, plan) -> float:  # the split into tasks when no earlier run timed them
        return LEVEL_COST[min(max(plan.level_id, 1), len(LEVEL_COST)) - 1]

    # -------------------------------------------------------------------- analysis
    def calibrated(self, path: str) -> TilegenAudit:
        """A copy that predicts players' pass rates from a reconcile.json's calibration
        (``calibration``: the per-row aggregates and the report's Players section)."""
        from copy import copy

        from ..players import calibration

        out = copy(self)
        out.calibration = calibration.read(path)
        return out

    def aggregations(self) -> list[pl.Expr]:
        extra = []
        if self.calibration is not None:
            from ..players import calibration

            extra = calibration.aggregations(self.calibration)
        return self._aggregations() + extra

    def _aggregations(self) -> list[pl.Expr]:
        attempts = pl.col("attempts_used").filter(AUDIT)
        met = _count(pl.col("exit") == "met", "met")
        p_hat = ((pl.col("exit") == "met").filter(AUDIT).sum()
                 / attempts.sum()).cast(pl.Float64)
        n = AUDIT.sum().cast(pl.Float64)
        return [
            *(pl.first(c) for c, _ in SNAPSHOT),
            *(pl.first(f"n_layer_{i}") for i in range(1, 5)),
            AUDIT.sum().cast(pl.Int64).alias("boards"),
            met,
            _count(pl.col("exit") != "met", "not_met"),
            _count(pl.col("tool_free_solvable") == "no", "unsolvable_boards"),
            _count(pl.col("tool_free_solvable") == "unknown", "dfs_unknown_boards"),
            _count(~pl.col("gate_tool_free"), "miss_tool_free"),
            _count(~pl.col("gate_tool_assist"), "miss_tool_assist"),
            _count(~pl.col("gate_clickable"), "miss_clickable"),
            _count(~pl.col("layout_valid"), "miss_layout"),
            *(_count(pl.col("exit") == e, f"exit_{e}") for e in EXIT_NAMES),
            *(_count(pl.col("failure_reason") == r, f"reason_{r}") for r in REASON_NAMES),
            *(e for c in PERCENTILE_COLUMNS for e in percentiles(c, (0.10, 0.50, 0.90), AUDIT)),
            # the medians' 95 % intervals: tune reads their noise (``tune.COSTS``)
            *(e for c in PERCENTILE_COLUMNS for e in quantile_bounds(c, 0.50, AUDIT)),
            *(e for c in ("raw_tool_assist_pass_rate", "avg_peak_slot_usage", "stuck_rate",
                          "tool_value", "pass_rate_match_first", "pass_rate_slot_build",
                          "pass_rate_risk_averse", "mean_fail_step")
              for e in percentiles(c, (0.50,), AUDIT)),
            *_sample_mean("opening_stability"), *_sample_mean("soft_deadlock_rate"),
            *percentiles("mean_doom_step", (0.10, 0.50, 0.90), SAMPLED),
            _count(pl.col("diagnosed"), "diagnosed_boards"),
            *((pl.col("tools_to_win").filter(SAMPLED) == v).sum().cast(pl.Int64)
              .alias(f"tools_to_win_{v}") for v in TOOLS_TO_WIN),
            pl.col("raw_tool_free_pass_rate").filter(AUDIT).is_null().sum().cast(pl.Int64)
            .alias("no_valid_layout_boards"),
            (attempts >= 2).mean().alias("retry_rate"),
            attempts.mean().alias("mean_attempts"),
            attempts.quantile(0.90, interpolation="linear").alias("p90_attempts"),
            attempts.max().alias("max_attempts"),
            attempts.sum().cast(pl.Int64).alias("attempts_total"),
            p_hat.alias("p_hat"),
            # 15.2 reading: a seed fails with (1 - p)^50; some seed of N fails with this
            (1.0 - (1.0 - (1.0 - p_hat).pow(MAX_ATTEMPTS)).pow(n)).alias("q_risk"),
            *((pl.col(f"rej_{r}").filter(AUDIT).sum() / attempts.sum()).cast(pl.Float64)
              .alias(f"reject_share_{r}") for r in REJECTS),
            (pl.col("raw_tool_free_pass_rate").filter(AUDIT)
             .quantile(0.5, interpolation="linear") - pl.first("target_pass_rate"))
            .alias("target_gap"),
            (pl.col("exit").filter(PROD).first() == "met").cast(pl.Int64)
            .alias("production_met"),
            *(_prod(c) for c in (
                "exit", "failure_reason", "stream_seed", "element_ids", "attempts_used",
                "tool_free_pass_rate", "tool_assist_pass_rate", "initial_clickable_ratio",
                "raw_tool_free_pass_rate", "tool_free_solvable", "avg_peak_slot_usage",
                "stuck_rate", "opening_stability", "tool_free_wins", "tool_free_runs",
                "tool_assist_wins", "tool_assist_runs")),
            # the audit boards a drill-down would draw: not met first, then lowest pass rate
            pl.col("seed_index").filter(AUDIT).sort_by(
                [pl.col("exit").filter(AUDIT) == "met",
                 pl.col("tool_free_pass_rate").filter(AUDIT)], maintain_order=True)
            .head(3).alias("worst_boards"),
            *((pl.first("alt_slot_rule"),) if "alt_slot_rule" in FIELDS else ()),
            *(e for c in VARIANTS + ("tool_free_pass_rate", "tool_assist_pass_rate")
              for e in _sample_mean(c)),
        ]

    def row_columns(self, rows: pl.DataFrame, catalog) -> pl.DataFrame:
        """The 15.1 gates of each row's level (from the tables) and the cross-row advisory
        lines M and V; all null without the tables (a sweep or tune of one row)."""
        if catalog is None or rows.height == 0:
            return rows.with_columns(
                *(pl.lit(None, t).alias(c) for c, t in GATE_COLUMNS.items()),
                m_monotone_ok=pl.lit(None, pl.Int64), m_detail=pl.lit(""),
                v_variety_ok=pl.lit(None, pl.Int64), v_detail=pl.lit(""))
        keys = [tuple(k) for k in rows.select(KEY).rows()]
        gates = {p.key: p.gates for p in self.plans(catalog, keys)}
        extra = [{**dict(zip(KEY, k)), **gate_shares(gates[k])} for k in keys]
        out = rows.join(pl.DataFrame(extra, schema={"city_id": pl.String, "level_id": pl.Int64,
                                                    "revision": pl.Int64, **GATE_COLUMNS}),
                        on=list(KEY), how="left", maintain_order="left")
        return out.join(cross_rows(out, self.label), on=list(KEY), how="left",
                        maintain_order="left")

    def report_sections(self, doc) -> list:
        out = sections.sections(doc, self)
        if self.calibration is not None:
            from ..players.calibration import section

            out.insert(2, section(doc, self.calibration))  # after report C
        return out

    def exhibit(self, plan, index: int) -> str:
        """Board ``index`` of the row (-1: production) drawn as stacked SVG (``boards``:
        layers offset, clickable pieces outlined, elements lettered as the text view of
        ``tilegen generate`` letters them)."""
        from ..generate import generate_planned
        from .boards import board_svg

        which = "production board" if index == -1 else f"audit board {index}"
        return board_svg(generate_planned(plan, index=index),
                         f"{self.label(plan.key)}, {which}")

    def progression_page(self, baseline, proposed, tune_id: str) -> str:
        from ..funnel.model import Params
        from ..funnel.runs import SOURCE, shipped_rates
        from ..players.funnel_page import tune_html

        return tune_html(shipped_rates(baseline), shipped_rates(proposed), Params(), SOURCE,
                         tune_id)

    def play_page(self, plan, index: int) -> str:
        """Board ``index`` of the row as a page a designer plays (``tilegen.play_page``)."""
        from ..generate import generate_planned
        from ..play_page import page

        which = "production board" if index == -1 else f"audit board {index}"
        return page(generate_planned(plan, index=index), f"Play {self.label(plan.key)}, {which}")

    def summary_notes(self, rows: pl.DataFrame) -> list[str]:
        risky = rows.filter((pl.col("not_met") == 0) & (pl.col("q_risk") > Q_RISK))
        if not risky.height:
            return []
        names = ", ".join(f"{self.label(k)} {v:.0%}" for *k, v in
                          risky.select(*KEY, "q_risk").rows())
        return [f"Q holds but is at risk on {risky.height} row(s) (chance a nightly run "
                f"fails Q: {names})"]

    diff_columns = (
        *((c, label, "snapshot") for c, label in SNAPSHOT),
        *((c, label, "figure") for c, label in (
            ("tool_free_pass_rate_p10", "tool-free p10"),
            ("tool_free_pass_rate_p50", "tool-free p50"),
            ("tool_free_pass_rate_p90", "tool-free p90"),
            ("raw_tool_free_pass_rate_p50", "raw tool-free p50"),
            ("tool_assist_pass_rate_p50", "tool-assisted p50"),
            ("initial_clickable_ratio_p50", "clickable ratio p50"),
            ("p_hat", "per-attempt acceptance p"), ("q_risk", "Q risk"),
            ("retry_rate", "retry rate"), ("mean_attempts", "mean attempts"),
            ("production_tool_free_pass_rate", "production tool-free"))),
        *((f"exit_{e}", f"exits {e}", "count") for e in EXIT_NAMES),
        ("unsolvable_boards", "unsolvable boards", "count"),
    )

    # ----------------------------------------------------------------------- sweep
    sweep_fields = (
        SweepField("element_count", "int", LARGEST, "more element types are harder to match"),
        SweepField("layers", "int", LARGEST, "more layers bury more pieces"),
        SweepField("density", "int", LARGEST,  # density_class by its key (ladder.SWEPT)
                   "by class 0 low, 1 medium, 2 medium_high, 3 high: denser is harder"),
        SweepField("pieces_per_element", "int", LARGEST,
                   "more pieces per element (a multiple of 3): more pieces to clear"),
        SweepField("target_pass_rate", "float", LARGEST,
                   "the advisory target; must sit in the level's tool-free band"),
    )

    def vary(self, catalog, key, field: str, value: Any):
        """The row ``key`` with ``field`` (a sweep's density: ``ladder.SWEPT``) = ``value``,
        validated as the loader would; the plan keeps the key, so its seeds are the audit's."""
        return tune.vary(catalog, key, {SWEPT.get(field, field): value})

    def vary_many(self, catalog, key, changes: dict):
        return tune.vary(catalog, key, changes)

    def lineage(self, key) -> tuple:  # (city, level): a new revision is the same level
        return tuple(key)[:2]

    def current_value(self, catalog, key, field: str) -> Any:
        (plan,) = self.plans(catalog, [key])
        return tune.current(plan, SWEPT.get(field, field))

    def resolved_key(self, catalog, key) -> tuple:
        (plan,) = self.plans(catalog, [key])
        return tuple(plan.key)

    # ----------------------------------------------------------------------- daily
    def daily(self) -> Generator:
        from .daily import GENERATOR as DAILY

        return DAILY

    def daily_keys(self, catalog, first: str, rows) -> list:
        return self.daily().daily_keys(catalog, first, rows)

    # ------------------------------------------------------------------------ tune
    tune_costs = tune.COSTS
    tune_shown = tune.SHOWN
    intents = sections.INTENTS
    todo_hint = staticmethod(sections.todo_hint)  # what fails, on the row's to-do line
    jargon = tuple((w, w) for w in ("band", "gate", "slot", "bypass", "doomed", "clickable",
                                    "revision", "triple", "occluder"))
    table_file = tune.PRESETS

    def shipped(self, row: dict) -> dict | None:
        """The production board (seed_index -1, seed FNV-1a-64 of 'city:level:revision'):
        a new revision ships another board."""
        if row.get("production_stream_seed") is None:
            return None
        return {"seed": str(row["production_stream_seed"]),
                "play": f"tilegen generate {row['city_id']} {row['level_id']} --revision "
                        f"{row['revision']} --play board.html",
                "tool-free pass rate": row.get("production_tool_free_pass_rate"),
                "tool-assisted pass rate": row.get("production_tool_assist_pass_rate"),
                "clickable ratio": row.get("production_initial_clickable_ratio"),
                "meets its gates": row.get("production_met"),
                "errors": {label: binomial_se(row.get(f"production_{k}_wins"),  # runs won
                                               row.get(f"production_{k}_runs"))
                           for label, k in (("tool-free pass rate", "tool_free"),
                                            ("tool-assisted pass rate", "tool_assist"))}}
    table_rows = {"presets.toml": (("city_id", "level_id", "revision"), ("city_id", "level_id")),
                  "acceptance.toml": (("level_id",),), "cities/*.toml": (("id",),)}

    def tune_candidates(self, catalog, key, lines: list[str]) -> list[tuple[str, list]]:
        (plan,) = self.plans(catalog, [key])
        return tune.candidates(plan, lines)

    def table_edits(self, catalog, key, field: str, old, new) -> list:
        """presets.toml's own keys: density by name (density_class is the sweep's knob),
        a pieces_per_element list cut or lengthened with element_count, and the revision
        the proposal bumps."""
        return tune.table_edits(catalog, key, field, new)

    def patch_tables(self, catalog, dst, changes: dict) -> None:
        tune.patch_tables(catalog, dst, changes)


GENERATOR = TilegenAudit()

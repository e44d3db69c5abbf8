"""The audit of tilegen's daily boards (``minegen audit --generator tilegen --daily
FROM:DAYS``; docs/tilegen.md, Daily challenges): before a daily ships, the board of every
date of a range is made as the game makes it and held to its preset's gates.

A row is (city_id, from_date): board i is the daily of from_date + i days (seed
FNV-1a-64("YYYY-MM-DD:daily:city"), ``tilegen.daily``), made with the preset
``daily.toml`` names (decision 201). A date *fails* when its board found no acceptable
board in 50 attempts (the game would ship a board that misses a gate) or cannot be cleared
without tools; the lines count them, the drill-down and the "Failing dates" section name
every one, ``failing_dates.csv`` lists them for the nightly log and ``dates.csv`` every
date's figures (the calendar of ``daily_page``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from boardcore.dates import parse_date
from boardcore.errors import InputError
from pipeline.api.contract import (Categories, Daily, Drawings, Drill, Generator, Kernels,
                                   Line, OwnVerdict)
from pipeline.api.pages import exact, num
from pipeline.api.stats import percentiles

from .. import daily as dly
from ..codes import EXIT_NAMES, MAX_ATTEMPTS, REASON_NAMES
from ..record import GENERATOR_VERSION, METRIC_VERSION
from ..table_loader import DEFAULT_ROOT
from . import daily_page, daily_todo
from .lines import CHECKS, band_text, gate_shares, unsolvable

KEY = ("city_id", "from_date")
BAD = (pl.col("exit") != "met") | (pl.col("tool_free_solvable") == "no")  # a failing date
DRAWN = 24  # the soonest failing dates the report draws, with a play page (the rest: named)


@dataclass(frozen=True)
class DailyCatalog:
    """A loaded table root and its daily.toml (``root``/``content_hash``: the pipeline's)."""

    tables: Any  # tilegen's Catalog
    setting: dly.Setting

    @property
    def root(self) -> str:
        return self.tables.root

    @property
    def content_hash(self) -> str:
        return self.tables.content_hash


def _count(cond: pl.Expr, name: str) -> pl.Expr:
    return cond.sum().cast(pl.Int64).alias(name)


def _failing(row: dict) -> str:
    """The row's failing dates grouped by what fails (12 dates at the most)."""
    dates = row.get("failing_dates") or []
    by: dict[str, list[str]] = {}
    for d, r in list(zip(dates, row.get("failing_reasons") or []))[:12]:
        by.setdefault(CHECKS.get(r, r) if r != "none" else "no tool-free clearing path",
                      []).append(d)
    more = f" and {len(dates) - 12} more (the Failing dates section)" if len(dates) > 12 else ""
    return "; ".join(f"{what} on {', '.join(ds)}" for what, ds in by.items()) + more


def _d(row: dict, line: Line) -> str:
    return (f"{row['not_met']} of {row['boards']} dates from {row['from_date']} found no "
            f"acceptable board in {MAX_ATTEMPTS} attempts, so the board the game would "
            f"give every player that day misses a gate of level {row['level_id']} "
            f"(tool-free band {band_text(row)}, tool-assisted min "
            f"{exact(row.get('tool_assist_min'))}, clickable min "
            f"{exact(row.get('clickable_min'))}): {_failing(row)}. {_odds(row)}")


def _odds(row: dict) -> str:
    """p in words: how often an attempt is acceptable, and the share of dates that fail."""
    p = row.get("p_hat") or 0.0
    if not p:
        return "No attempt met every gate."
    fail = (1 - p) ** MAX_ATTEMPTS
    return (f"About one attempt in {1 / p:.0f} meets every gate (p = {num(p)}); a date fails "
            f"when all {MAX_ATTEMPTS} miss, (1 - p)^{MAX_ATTEMPTS} = {100 * fail:.1f} % of "
            f"dates, about {365 * fail:.0f} a year.")


LINES = (
    Line("D", "not_met", "==", 0, True,
         f"dates whose daily board found no acceptable board in {MAX_ATTEMPTS} attempts "
         "(the board that would ship misses a gate of its level)",
         quantity="failing dates", explain=_d),
    Line("S", "unsolvable_boards", "==", 0, True,
         "daily boards with no tool-free clearing path (exhaustive search: no)",
         quantity="unsolvable boards", explain=unsolvable("daily boards")),
    Line("U", "dfs_unknown_boards", "==", 0, False,
         "daily boards the exhaustive search could not decide (node cap)",
         quantity="undecided boards"),
)


def _day(key, i: int) -> str:
    return dly.dates(key[1], int(i), 1)[0]


DRILL = Drill(
    limit=40,
    drawn_rows=40,
    boards=lambda row: [(int(i), f"daily of {d}") for i, d in
                        zip((row.get("failing_days") or [])[:2],
                            (row.get("failing_dates") or [])[:2])],
    generate=lambda key, i: ("tilegen", "generate", key[0], "--daily", _day(key, i)),
    intro="Per city with a failing date: why its dailies fail, and the first failing "
          "boards with the command that makes each one (add --play FILE to play it). A "
          "failing date is fixed by the preset the daily uses (daily.toml names its level; "
          "the audit of that level's row says which table change fixes it).",
)


class TilegenDaily(Generator, Daily, OwnVerdict, Kernels, Drawings, Categories):
    """tilegen's daily boards behind the generator interface (the ``Daily`` capability of
    ``tilegen``, and a generator of its own: ``--generator tilegen-daily``)."""

    name = "tilegen-daily"
    metric_version = METRIC_VERSION
    generator_version = GENERATOR_VERSION
    report_subdir = "tilegen-daily"
    rules_doc = "docs/tilegen.md"
    seed_rule = ("board i of a row: the daily of from_date + i days, seed "
                 "FNV-1a-64('YYYY-MM-DD:daily:city'), made with the preset daily.toml names")
    max_boards = dly.MAX_DAYS
    key_fields = KEY
    index_field = "seed_index"
    record = dly.RECORD
    lines = LINES
    drill = DRILL
    default_root = str(DEFAULT_ROOT)
    jargon = tuple((w, w) for w in ("band", "gate", "revision"))

    def daily(self) -> Generator:
        return self

    def verdict_notes(self, rows: list[dict]) -> list[str]:
        return [daily_page.levels_text(rows)]  # the level the dailies use, on the first screen

    # the verdict counted in dates and the to-do list, one line per failing city; the page
    # opens on them, the rest folded (``audit_page``)
    first_screen = staticmethod(daily_todo.first_screen)

    def load(self, root: str | None) -> DailyCatalog:
        from ..table_loader import load_tables

        tables = load_tables(root)
        return DailyCatalog(tables, dly.load_setting(tables.root, tables))

    def parse_key(self, text: str) -> tuple:
        city, sep, first = str(text).partition(":")
        if not sep or not city:
            raise InputError(f"bad daily row {text!r}: expected city:YYYY-MM-DD, e.g. "
                             "beijing:2026-01-01")
        parse_date(first, f"daily row {text}:")
        return city, first

    def format_key(self, key) -> str:
        return f"{key[0]}:{key[1]}"

    def label(self, key) -> str:
        return f"{key[0]} (dailies from {key[1]})"

    def daily_keys(self, catalog: DailyCatalog, first: str, rows: Sequence[str]) -> list:
        known = [c.id for c in catalog.tables.cities]
        unknown = [r for r in rows if r not in known]
        if unknown:
            raise InputError(f"--rows {','.join(unknown)}: with --daily, --rows names cities; "
                             f"known: {', '.join(known)}")
        return [(c, first) for c in (rows or known)]

    def plans(self, catalog: DailyCatalog, keys) -> list:
        from ..table_loader import plans

        keys = list(keys)
        if not keys:
            raise InputError("a daily audit needs its dates: give --daily FROM:DAYS (or "
                             "--rows city:YYYY-MM-DD with --n DAYS)")
        out = []
        for city, first in keys:
            catalog.tables.city(city)  # InputError naming the known cities
            parse_date(first, "daily row date")
            (preset,) = plans(catalog.tables, [dly.preset_key(catalog.tables,
                                                              catalog.setting, city)])
            out.append(dly.DailyPlan(first, preset))
        return sorted(out, key=lambda p: p.key)

    def key(self, plan) -> tuple:
        return plan.key

    def snapshot(self, plan) -> dict:
        return plan.snapshot()

    def describe(self, row: dict) -> str:
        return (f"the dailies of {row.get('city_id')} for {row.get('boards')} dates from "
                f"{row.get('from_date')}, made with level {row.get('level_id')} revision "
                f"{row.get('revision')}: {row.get('element_count')} elements, "
                f"{row.get('total_pieces')} pieces on {row.get('layers')} layer(s), density "
                f"{row.get('density')}")

    # --------------------------------------------------------------------- records
    def block(self, plan, first: int, count: int):
        return dly.run_block(plan, first, count)

    def expected_columns(self, plan, first: int, count: int) -> dict:
        """Day i's seed FNV-1a-64('DATE:daily:city') and the preset's own values."""
        p = plan.preset
        return {"stream_seed": plan.seeds(first, count), "element_count": p.element_count,
                "total_pieces": p.total_pieces, "layers": p.layers}

    def warm(self) -> None:
        from ..batch import warm_up

        warm_up()

    def cold(self) -> bool:
        from ..batch import is_warm

        return not is_warm()

    # -------------------------------------------------------------------- analysis
    def aggregations(self) -> list[pl.Expr]:
        attempts = pl.col("attempts_used")
        return [
            *(pl.first(c) for c in ("level_id", "revision", "element_count", "total_pieces",
                                    "layers", "density", "target_pass_rate")),
            pl.len().cast(pl.Int64).alias("boards"),
            pl.col("date").first().alias("first_date"),
            pl.col("date").last().alias("last_date"),
            _count(pl.col("exit") == "met", "met"),
            _count(pl.col("exit") != "met", "not_met"),
            _count(pl.col("tool_free_solvable") == "no", "unsolvable_boards"),
            _count(pl.col("tool_free_solvable") == "unknown", "dfs_unknown_boards"),
            *(_count(pl.col("exit") == e, f"exit_{e}") for e in EXIT_NAMES),
            *(_count(pl.col("failure_reason") == r, f"reason_{r}") for r in REASON_NAMES),
            _count(BAD, "failing_boards"),
            *(pl.col(c).filter(BAD).alias(name) for c, name in (
                ("date", "failing_dates"), ("seed_index", "failing_days"),
                ("failure_reason", "failing_reasons"), ("stream_seed", "failing_seeds"),
                ("tool_free_wins", "failing_tool_free_wins"))),
            pl.first("tool_free_runs"),
            *(e for c in ("tool_free_pass_rate", "tool_assist_pass_rate",
                          "initial_clickable_ratio")
              for e in percentiles(c, (0.10, 0.50, 0.90))),
            ((pl.col("exit") == "met").sum() / attempts.sum()).cast(pl.Float64).alias("p_hat"),
            attempts.mean().alias("mean_attempts"),
            attempts.max().alias("max_attempts"),
        ]

    def row_columns(self, rows: pl.DataFrame, catalog) -> pl.DataFrame:
        """The 15.1 gates of the level each row's dailies use (null without the tables)."""
        names = ("tool_free_min", "tool_free_max", "tool_assist_min", "clickable_min")
        if catalog is None or rows.height == 0:
            return rows.with_columns(pl.lit(None, pl.Float64).alias(c) for c in names)
        shares = {lv: gate_shares(g) for lv, g in catalog.tables.acceptance.items()}
        return rows.with_columns(
            pl.col("level_id").replace_strict({lv: v[c] for lv, v in shares.items()},
                                              default=None, return_dtype=pl.Float64).alias(c)
            for c in names)

    def side_tables(self, records: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
        """``failing_dates.csv``: one line per failing date, for the nightly log;
        ``dates.csv``: every date's figures (the report's calendar reads them)."""
        return {daily_page.DATES: daily_page.side_table(records),
                "failing_dates": records.filter(BAD).select(
            "date", "city_id", "level_id", "revision", "stream_seed", "exit", "failure_reason",
            "tool_free_pass_rate", "tool_assist_pass_rate", "initial_clickable_ratio",
            "attempts_used", "tool_free_solvable")}

    def exhibits(self, rows: pl.DataFrame, results: list[dict]) -> list[tuple[tuple, int]]:
        """Drawn, with a play page each: every city's first two failing dates (the
        drill-down shows them), the ``DRAWN`` soonest failing dates of the run and every
        city's first ``daily_page.NEXT_DAYS`` dates (the page's "play them" table)."""
        first, every, soon = [], [], []
        for r in rows.select(*KEY, "boards", "failing_days", "failing_dates"
                             ).iter_rows(named=True):
            key = (r["city_id"], r["from_date"])
            days = [int(i) for i in r["failing_days"] or []]
            first += [(key, i) for i in days[:2]]
            soon += [(key, i) for i in range(min(daily_page.NEXT_DAYS, r["boards"]))]
            every += [(d, key, i) for d, i in zip(r["failing_dates"] or [], days)]
        return list(dict.fromkeys(first + [(k, i) for _, k, i in sorted(every)[:DRAWN]]
                                  + soon))

    def exhibit(self, plan, index: int) -> str:
        from .boards import board_svg

        return board_svg(_board(plan, index), self._title(plan, index))

    def play_page(self, plan, index: int) -> str:
        from ..play_page import page

        return page(_board(plan, index), "Play " + self._title(plan, index))

    def _title(self, plan, index: int) -> str:
        return f"the {plan.preset.city_id} daily of {_day(plan.key, index)}"

    def report_sections(self, doc) -> list:
        return daily_page.sections(doc)

    def summary_details(self, rows: pl.DataFrame) -> list[str]:
        """Every failing date, per city (the nightly log names them all)."""
        return [f"{r['city_id']} failing dates: {', '.join(r['failing_dates'])}"
                for r in rows.filter(pl.col("failing_boards") > 0).iter_rows(named=True)]


def _board(plan, index: int):
    """Daily ``index`` of ``plan``: the preset's board of that date's daily seed."""
    from ..generate import generate_planned

    return generate_planned(plan.preset, seed=int(plan.seeds(index, 1)[0]))


GENERATOR = TilegenDaily()

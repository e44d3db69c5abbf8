"""Daily challenges (05 §12.1, §12.2; A-27): every player of a city gets the same board on a
date (UTC), seed FNV-1a-64(utf8("YYYY-MM-DD:daily:<city_id>")).

Which preset a daily uses is open in the design (A-27); the table root says it in
``daily.toml`` (decision 201): a ``level_id`` for every city, optionally another level per
city under ``[cities]``; the city's highest revision of that level is the preset (05 §12.3:
the revision the game currently ships). A daily *range* is one row per city: board i of
the row is the daily board of ``from_date + i`` days, made exactly as the game makes it
(the attempt loop of the preset, gates per board).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from boardcore.dates import parse_date
from boardcore.errors import InputError, TableError
from boardcore.fields import Field
from boardcore.streams import fnv1a_64
from boardcore.tables import Collector, parse_toml, show

from . import batch
from . import record as rec
from .plan import TilePlan
from .table_checks import DAILY_FILE

MAX_DAYS = 1 << 12  # 4,096 days (eleven years) in one range


def _daily_field(f: Field) -> Field:
    return {"seed_index": replace(f, meaning="day i of the range: the daily of from_date + i "
                                  "days", ge=0),
            "is_production": replace(f, meaning="false: a daily is not its level's "
                                     "production board"),
            "stream_seed": replace(f, meaning="the daily seed FNV-1a-64('YYYY-MM-DD:daily:"
                                   "city')")}.get(f.name, f)


# tilegen's record of the board (``record.RECORD``) with the row's first date and the date
RECORD: tuple[Field, ...] = (
    *rec.RECORD[:3],  # metric_version, generator_version, city_id
    Field("from_date", "str", "the first date of the daily range (its row), YYYY-MM-DD"),
    Field("date", "str", "the date (UTC) whose daily this board is, YYYY-MM-DD"),
    *(_daily_field(f) for f in rec.RECORD[3:]),
)


def daily_seed(date: str, city_id: str) -> int:
    """FNV-1a-64(utf8(f"{YYYY-MM-DD}:daily:{cityId}")) (05 §12.1; the golden vector of
    2026-01-01 Beijing is pinned in tests)."""
    return fnv1a_64(f"{date}:daily:{city_id}".encode("utf-8"))


def dates(first: str, start: int, count: int) -> list[str]:
    """The dates ``first + start`` .. ``first + start + count - 1`` days, YYYY-MM-DD."""
    base = dt.date.fromisoformat(first).toordinal()
    return [dt.date.fromordinal(base + i).isoformat() for i in range(start, start + count)]


@dataclass(frozen=True)
class Setting:
    """daily.toml as loaded: the level every city's daily uses, and the exceptions."""

    level_id: int
    cities: tuple[tuple[str, int], ...] = ()  # (city_id, level_id), sorted

    def level_of(self, city_id: str) -> int:
        return dict(self.cities).get(city_id, self.level_id)


def load_setting(root: str | Path, catalog) -> Setting:
    """Read and check ``daily.toml`` of a loaded table root: every finding at once, as a
    TableError (exit 2); InputError when the root has no such file."""
    path = Path(root) / DAILY_FILE
    if not path.is_file():
        raise InputError(f"{path}: missing; a daily needs it to say which preset each "
                         "city's daily uses (level_id = N, optionally [cities] city = N)")
    doc, rule = parse_toml(path)
    out = Collector()
    if doc is None:
        out.add("parse", DAILY_FILE, rule=rule)
        raise TableError(out.items)
    for k in sorted(set(doc) - {"level_id", "cities"}):
        out.add("unknown_field", DAILY_FILE, field=k, value=show(doc[k]),
                rule="keys: level_id (an int) and cities (a table city_id = level_id)")
    levels = {c.id: {r.level_id for r in catalog.presets if r.city_id == c.id}
              for c in catalog.cities}

    def level(v, row: str, fld: str) -> int | None:
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 6:
            out.add("type", DAILY_FILE, row, fld, show(v), "must be a level id, an int 1..6")
            return None
        return v

    default = level(doc.get("level_id"), "-", "level_id")
    cities = doc.get("cities", {})
    if not isinstance(cities, dict):
        out.add("type", DAILY_FILE, "-", "cities", show(cities),
                "must be a table of city_id = level_id")
        cities = {}
    own = {}
    for city, v in sorted(cities.items()):
        if city not in levels:
            out.add("unknown_key", DAILY_FILE, city, "cities", show(city),
                    f"no such city; cities: {', '.join(sorted(levels))}")
        elif (lv := level(v, city, f"cities.{city}")) is not None:
            own[city] = lv
    for city, have in sorted(levels.items()):
        lv = own.get(city, default)
        if lv is not None and lv not in have:
            out.add("missing_row", DAILY_FILE, city, "level_id", show(lv),
                    f"the city has no preset of level {lv} in presets.toml (levels: "
                    f"{', '.join(map(str, sorted(have))) or 'none'})")
    if out.errors():
        raise TableError(out.items)
    return Setting(default, tuple(sorted(own.items())))


def optional_setting(catalog) -> Setting | None:
    """``load_setting`` of a loaded catalog's root, or None when it has no daily.toml
    (the regular audit and the exports do without one)."""
    if not (Path(catalog.root) / DAILY_FILE).is_file():
        return None
    return load_setting(catalog.root, catalog)


def preset_key(catalog, setting: Setting, city_id: str) -> tuple[str, int, int]:
    """The preset row a city's daily uses: its highest revision of the setting's level."""
    level = setting.level_of(city_id)
    return max(r.key for r in catalog.presets if r.city_id == city_id and r.level_id == level)


def board_of(catalog, city_id: str, date: str) -> tuple[TilePlan, int]:
    """(preset, seed) of ``city_id``'s daily of ``date``: what ``tilegen generate CITY
    --daily DATE`` makes (the same board the daily audit holds to its gates)."""
    from .table_loader import plans

    parse_date(date, "--daily")
    catalog.city(city_id)  # InputError naming the known cities
    setting = load_setting(catalog.root, catalog)
    (preset,) = plans(catalog, [preset_key(catalog, setting, city_id)])
    return preset, daily_seed(date, city_id)


@dataclass(frozen=True)
class DailyPlan:
    """The daily boards of one city from ``from_date``: board i is the daily of
    ``from_date + i`` days, made with ``preset`` (picklable, compares by value)."""

    from_date: str  # YYYY-MM-DD
    preset: TilePlan

    @property
    def key(self) -> tuple[str, str]:
        return self.preset.city_id, self.from_date

    def seeds(self, first: int, count: int) -> np.ndarray:
        return np.array([daily_seed(d, self.preset.city_id)
                         for d in dates(self.from_date, first, count)], dtype=np.uint64)

    def snapshot(self) -> dict:
        return {"daily_from": self.from_date, **self.preset.snapshot()}


def run_block(plan: DailyPlan, first: int, count: int) -> dict[str, np.ndarray]:
    """Record columns of the daily boards [first, first + count) of ``plan``: the
    preset's record (``record.columns``, seed_index = the day i) plus from_date and date.
    Diagnostics and variants on the days a multiple of the rules' ``diagnose_every`` (as
    the audit samples its boards, decision 190)."""
    if first < 0 or count < 0:
        raise ValueError(f"day range [{first}, {first + count}) must start at 0 or later")
    seeds = plan.seeds(first, count)
    ints, sel, _, _, seconds = batch.run_seeds(plan.preset, seeds,
                                               batch.closing_of(plan.preset, first, count))
    cols = rec.columns(plan.preset, ints, sel, seeds, np.arange(first, first + count),
                       1000.0 * seconds / max(1, count))
    head = {k: cols.pop(k) for k in ("metric_version", "generator_version", "city_id")}
    return {**head, "from_date": np.full(count, plan.from_date, dtype=object),
            "date": np.array(dates(plan.from_date, first, count), dtype=object), **cols}

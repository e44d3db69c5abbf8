"""The daily report's own sections (``minegen audit --generator tilegen --daily FROM:DAYS``;
docs/tilegen.md, Daily challenges): the level the dailies use, a calendar of every date
(cities × days) coloured by its board's tool-free pass rate against the level's band, how
sure each date's figure is, every failing date with its uncertainty, and the first
``NEXT_DAYS`` dates' boards to play.

Every figure is read from the run's records: the side table ``dates`` (``dates.csv``, one
line per city and date, ``DATE_COLUMNS``) and the per-city rows (the level's band). A
date's tool-free pass rate is its board's tool-free wins of runs (the scripted players'
runs, runs_per_strategy × 3); its interval is the 95 % Wilson interval of those
(``margin.wilson``): the same board simulated with other runs lands there. A figure is
*within noise* of a gate when its interval contains the gate (``margin.within_noise``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import polars as pl

from pipeline.api.pages import (Bullets, Cell, FAIL, Figure, Figures, Para, Section, Table, WARN,
                                calendar, exact, num)
from pipeline.api.stats import wilson, within_noise

from ..codes import MAX_ATTEMPTS
from .lines import CHECKS

DATES = "dates"  # the side table (dates.csv): every date's figures, passing or not
DATE_COLUMNS = ("date", "city_id", "level_id", "revision", "seed_index", "stream_seed",
                "exit", "failure_reason", "tool_free_wins", "tool_free_runs",
                "tool_free_pass_rate", "tool_assist_wins", "tool_assist_runs",
                "tool_assist_pass_rate", "initial_clickable_ratio", "attempts_used",
                "tool_free_solvable")
NEXT_DAYS = 7  # the first dates of the range with a play page per city

# The calendar's colours: where a date's tool-free pass rate lies against its level's
# band, given its 95 % interval (``Date.tone``), in the order the legend lists them.
TONES = (
    ("below", "#c62828", "below the floor beyond noise (the whole interval is under it)"),
    ("floor", "#f9a825", "within noise of the floor (the interval contains it)"),
    ("in", "#66bb6a", "inside the band with margin"),
    ("ceiling", "#90caf9", "within noise of the ceiling (the interval contains it)"),
    ("above", "#1565c0", "above the ceiling beyond noise (too easy)"),
    ("unknown", "#bdbdbd", "no band known (the run has no tables)"),
)
COLOR = {t: c for t, c, _ in TONES}
SHORT = {t: m.split(" (")[0] for t, _, m in TONES}  # "within noise of the floor"
MEANING = {t: m for t, _, m in TONES}


def bad(exit_: str, solvable: str) -> bool:
    """A failing date (``daily.BAD``): no acceptable board in 50 attempts, or a board that
    cannot be cleared without tools."""
    return exit_ != "met" or solvable == "no"


def needs(share: float, runs: int) -> int:
    """The wins of ``runs`` a gate of ``share`` asks for."""
    return math.ceil(share * runs - 1e-9)


@dataclass(frozen=True)
class Date:
    """One daily board's figures (a line of ``dates.csv``) and its level's band."""

    city: str
    date: str
    index: int  # day i of the range
    level: int
    revision: int
    seed: int
    exit: str
    reason: str
    wins: int
    runs: int
    assist_wins: int
    assist_runs: int
    clickable: float | None
    attempts: int
    solvable: str
    floor: float | None  # the band's floor (tool_free_min), None without the tables
    ceiling: float | None  # its ceiling; None or >= 1: open above
    assist_min: float | None

    @property
    def rate(self) -> float:
        return self.wins / self.runs

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.runs)

    @property
    def fails(self) -> bool:
        return bad(self.exit, self.solvable)

    @property
    def capped(self) -> bool:
        return self.ceiling is not None and self.ceiling < 1

    @property
    def tone(self) -> str:
        """The calendar colour: the interval against the floor first, then the ceiling."""
        if self.floor is None:
            return "unknown"
        lo, hi = self.interval
        if hi < self.floor:
            return "below"
        if within_noise((lo, hi), self.floor):
            return "floor"
        if self.capped and lo > self.ceiling:
            return "above"
        if self.capped and within_noise((lo, hi), self.ceiling):
            return "ceiling"
        return "in"

    def rate_text(self) -> str:
        lo, hi = self.interval
        return f"{self.wins} of {self.runs} = {num(self.rate)} (95 %: {num(lo)}–{num(hi)})"

    def short_text(self) -> str:
        """The rate and its interval, for a table cell: 0.587 (0.530–0.641)."""
        lo, hi = self.interval
        return f"{num(self.rate)} ({num(lo)}–{num(hi)})"

    def tip(self) -> str:
        """The cell's hover text (short: a year of six cities is 2,190 cells)."""
        what = "FAILS: " + why(self) if self.fails else "meets every gate"
        floor = "" if self.floor is None else \
            f", floor {exact(self.floor)} needs {needs(self.floor, self.runs)}"
        return (f"{self.city} {self.date}: tool-free {self.rate_text()}{floor}: "
                f"{SHORT[self.tone]}; {what}")


def why(d: Date) -> str:
    """What fails on a failing date, in the checks' words."""
    if d.exit == "met":
        return "no tool-free clearing path (exhaustive search)"
    return f"{CHECKS.get(d.reason, d.reason)} ({d.reason})"


def sureness(d: Date) -> tuple[str, bool]:
    """How sure a failing date's failure is: (the sentence, within noise?). A simulated
    gate (G1, G2) has an interval; a layout check or the exhaustive search is exact."""
    if d.exit == "met" or d.reason not in ("tool_free_low", "tool_free_high",
                                           "tool_assist_low"):
        what = "the exhaustive search" if d.exit == "met" else "a layout check"
        return f"exact ({what}, no simulation)", False
    if d.reason == "tool_assist_low":
        gate, k, n, name = d.assist_min, d.assist_wins, d.assist_runs, "tool-assisted minimum"
    else:
        gate, k, n = (d.floor, d.wins, d.runs) if d.reason == "tool_free_low" else \
            (d.ceiling, d.wins, d.runs)
        name = "floor" if d.reason == "tool_free_low" else "ceiling"
    lo, hi = wilson(k, n)
    text = f"{k} of {n} = {num(k / n)} (95 %: {num(lo)}–{num(hi)})"
    if gate is None:
        return text, False
    noisy = within_noise((lo, hi), gate)
    return (f"{text}; the {name} {exact(gate)} needs {needs(gate, n)}: "
            + ("within" if noisy else "beyond") + f" noise of the {name}", noisy)


def dates(doc) -> list[Date]:
    """Every date of the run, city by city in date order (empty: a run without the side
    table, e.g. written before it existed)."""
    frame = doc.tables.get(DATES)
    if frame is None or frame.height == 0:
        return []
    band = {r["city_id"]: (r.get("tool_free_min"), r.get("tool_free_max"),
                           r.get("tool_assist_min")) for r in doc.rows}
    out = []
    for r in frame.sort("city_id", "date").iter_rows(named=True):
        lo, hi, assist = band.get(r["city_id"], (None, None, None))
        out.append(Date(r["city_id"], r["date"], int(r["seed_index"]), int(r["level_id"]),
                        int(r["revision"]), int(r["stream_seed"]), r["exit"],
                        r["failure_reason"], int(r["tool_free_wins"]),
                        int(r["tool_free_runs"]), int(r["tool_assist_wins"]),
                        int(r["tool_assist_runs"]), r["initial_clickable_ratio"],
                        int(r["attempts_used"]), r["tool_free_solvable"], lo, hi, assist))
    return out


def levels_text(rows: list[dict]) -> str:
    """Which preset each city's dailies use, said once per level."""
    by: dict[tuple[int, int], list[str]] = {}
    for r in rows:
        by.setdefault((r["level_id"], r["revision"]), []).append(r["city_id"])
    parts = [f"level {lv} (revision {rev}) for "
             + ("every city" if len(by) == 1 else ", ".join(sorted(cs)))
             for (lv, rev), cs in sorted(by.items())]
    return ("The dailies use " + "; ".join(parts) + ": each city's highest revision of the "
            "level daily.toml names (level_id for every city, [cities] city = level for "
            "one), made as presets.toml says.")


def _months(days: list[Date]) -> list[tuple[int, int]]:
    return sorted({(int(d.date[:4]), int(d.date[5:7])) for d in days})


def calendar_section(doc) -> Section:
    """The level, the legend with its counts, a month grid per month, a line per city."""
    sec = Section("daily-calendar", "Calendar: every date's tool-free pass rate")
    sec.blocks.append(Para(levels_text(doc.rows)))
    days = dates(doc)
    if not days:
        sec.blocks.append(Para("This run carries no per-date figures (dates.csv): run the "
                               "daily audit again to see its calendar."))
        return sec
    sec.blocks.append(Para(
        "Each cell is one city's daily board of one date, coloured by where its tool-free "
        "pass rate lies against the level's tool-free band (acceptance.toml) given the "
        "rate's 95 % interval: the rate is the board's tool-free wins of its "
        f"{days[0].runs} scripted runs (runs_per_strategy × 3, rules.toml), so another set "
        "of runs of the same board lands anywhere in the interval. A black outline marks a "
        "failing date. Hover a cell for its figures; dates.csv lists every date's."))
    counts = {t: [0, 0] for t in COLOR}
    for d in days:
        counts[d.tone][0] += 1
        counts[d.tone][1] += d.fails
    sec.blocks.append(Bullets([
        Cell(f"{MEANING[t]} ({COLOR_WORD[t]}): {n} of {len(days)} dates"
             + (f", {k} of them failing" if k else ""),
             FAIL if t == "below" and n else WARN if t in ("floor", "ceiling") and n else None)
        for t, (n, k) in counts.items() if n or t in ("below", "floor", "in")]))
    cities = sorted({d.city for d in days})
    figs = []
    for y, m in _months(days):
        cells = {(d.city, int(d.date[8:])): calendar.Day(COLOR[d.tone], d.tip(), d.fails,
                                                         (("tone", d.tone),))
            for d in days if (int(d.date[:4]), int(d.date[5:7])) == (y, m)}
        figs.append(Figure(f"calendar-{y:04d}-{m:02d}",
                           calendar.month(ns=f"cal-{y:04d}-{m:02d}", year=y, month=m,
                                          rows=cities, days=cells),
                           f"{y:04d}-{m:02d}: {sum(1 for c in cells.values() if c.outlined)} "
                           f"failing of {len(cells)} dates."))
    sec.blocks.append(Figures("Month by month", figs))
    sec.blocks.append(per_city(doc, days))
    return sec


COLOR_WORD = {"below": "red", "floor": "amber", "in": "green", "ceiling": "light blue",
              "above": "blue", "unknown": "grey"}


def per_city(doc, days: list[Date]) -> Table:
    """Per city: its preset, its dates, how many fail and how many sit within noise of the
    floor, and the spread of its dates' tool-free rates."""
    rows = []
    for r in doc.rows:
        own = [d for d in days if d.city == r["city_id"]]
        if not own:
            continue
        low = min(own, key=lambda d: (d.rate, d.date))
        p = r.get("p_hat") or 0.0
        year = 365 * (1 - p) ** MAX_ATTEMPTS if p else None
        rows.append([
            Cell(r["city_id"]), Cell(f"{r['level_id']}:{r['revision']}"),
            Cell(str(len(own))),
            Cell(str(sum(d.fails for d in own)), FAIL if any(d.fails for d in own) else None),
            Cell(str(sum(d.tone == "floor" for d in own))),
            Cell(" / ".join(num(r.get(f"tool_free_pass_rate_{q}")) for q in ("p10", "p50",
                                                                                "p90"))),
            Cell(f"{low.short_text()} on {low.date}"),
            Cell(num(p)), Cell("—" if year is None else f"{year:.1f}")])
    return Table(["city", "level:revision", "dates", "failing", "within noise of the floor",
                  "tool-free p10 / p50 / p90 of its dates",
                  "lowest tool-free rate (95 % interval)",
                  "per-attempt acceptance p",
                  f"failing dates a year expected, 365 (1 − p)^{MAX_ATTEMPTS}"], rows)


def failing_dates(doc) -> Section:
    """Every failing date of the run, in date order: what failed, how sure, the board."""
    sec = Section("daily-failing", "Failing dates")
    failing = sorted((d for d in dates(doc) if d.fails), key=lambda d: (d.date, d.city))
    total = sum(r.get("boards") or 0 for r in doc.rows)
    if not failing:
        sec.blocks.append(Para(f"Every one of the {total} daily boards meets every gate of "
                               "its preset: none of these dates would ship a bad board."))
        return sec
    rows, noisy = [], 0
    for d in failing:
        page = play(doc, d)
        sure, near = sureness(d)
        noisy += near
        rows.append([Cell(d.date, FAIL), Cell(d.city), Cell(f"{d.level}:{d.revision}"),
                     Cell(why(d)), Cell(sure, WARN if near else None), Cell(str(d.seed)),
                     Cell(f"[play]({page})" if page else "—")])
    presets, cmd = presets_command(doc)
    sec.blocks.append(Para(
        f"{len(failing)} of {total} daily boards fail: on these dates the game would give "
        "every player of the city a board that misses a gate of its level (all "
        f"{MAX_ATTEMPTS} attempts missed; the first failing check of the board it would "
        "return is named, with its name in failing_dates.csv) or that cannot be cleared "
        f"without tools. {noisy} of them fail within noise: the 95 % interval of the "
        "simulated figure contains the gate, so the same board simulated with other runs "
        "could pass (as a passing date near the gate could fail: the calendar's amber "
        "cells). A layout check and the exhaustive search are exact."))
    sec.blocks.append(Para(
        f"What to change: the preset these dailies are made with, presets.toml row(s) "
        f"{', '.join(presets)} (city:level:revision). `{cmd}` audits them; its drill-down "
        "prints the `minegen tune` command that proposes the presets.toml change holding "
        "the gates. Or give a city another level in daily.toml (level_id for every "
        "city, [cities] city = level for one), then run this audit again to check the "
        "dates. failing_dates.csv lists the same dates, city by city."))
    sec.blocks.append(Table(["date", "city", "level:revision", "what fails",
                             "how sure (the failing figure, 95 % interval)", "seed",
                             "board"], rows))
    return sec


def presets_command(doc) -> tuple[list[str], str]:
    """The presets.toml rows (city:level:revision) the failing dailies are made with, and
    the audit of those rows (its drill-down prints the tune that fixes them)."""
    from pipeline.api.runs import audit_command

    presets = sorted({f"{r['city_id']}:{r['level_id']}:{r['revision']}" for r in doc.rows
                      if r.get("failing_boards")})
    m = doc.manifest
    tables = None if m.get("table_root") in (None, doc.gen.default_root) else m["table_root"]
    return presets, audit_command("audit", "--rows", ",".join(presets), generator="tilegen",
                                  out=m.get("out"), tables=tables)


def _first(doc, city: str) -> str:
    return next(r["from_date"] for r in doc.rows if r["city_id"] == city)


def play(doc, d: Date) -> str | None:
    """The play page of date ``d``'s board, when the run made one (``daily.exhibits``)."""
    return doc.pages.get(((d.city, _first(doc, d.city)), d.index))


def next_days(doc) -> Section:
    """The first ``NEXT_DAYS`` dates of the range, a line per date and a column per city:
    the tool-free rate with its interval and the board's play page."""
    sec = Section("daily-next", f"The first {NEXT_DAYS} dates: play them")
    days = [d for d in dates(doc) if d.index < NEXT_DAYS]
    if not days:
        return sec
    cities = sorted({d.city for d in days})
    by = {(d.date, d.city): d for d in days}
    rows = []
    for date in sorted({d.date for d in days}):
        cells = [Cell(date)]
        for c in cities:
            d = by.get((date, c))
            if d is None:
                cells.append(Cell("—"))
                continue
            page = doc.pages.get(((c, _first(doc, c)), d.index))
            cells.append(Cell(d.short_text()
                              + (" FAILS" if d.fails else "")
                              + (f" [play]({page})" if page else ""),
                              FAIL if d.fails else WARN if d.tone == "floor" else None))
        rows.append(cells)
    sec.blocks.append(Para(
        f"The daily boards of the run's first {NEXT_DAYS} dates (from {days[0].date}: the "
        "next seven days when the run starts today), each with its tool-free pass rate, "
        "its 95 % interval and a page to play it (the board every player of the city gets "
        "that day). Marked: failing (red), within noise of the floor (amber)."))
    sec.blocks.append(Table(["date", *cities], rows))
    return sec


def sections(doc) -> list[Section]:
    return [calendar_section(doc), failing_dates(doc), next_days(doc)]


def side_table(records: pl.LazyFrame) -> pl.LazyFrame:
    """``dates.csv``: one line per city and date with the figures the page reads."""
    return records.select(*DATE_COLUMNS)

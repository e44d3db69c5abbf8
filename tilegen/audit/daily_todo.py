"""The daily report's first screen (``minegen audit --generator tilegen --daily``), in the
audit report's shape (``pipeline.reports.todo``): the verdict counted in dates, with the
dates that hold only within noise of their level's floor and how far from telling they
are, then "what to do tonight", one line per failing city: each failing check with the
figures against the band and how sure they are, the soonest dates (each linked to its
board's play page) and the next step. The page opens on it, everything else folded
(``audit_page``: a generator with the ``OwnVerdict`` capability).

Every figure is a date's (``daily_page.Date``, from ``dates.csv``): its tool-free rate is
its board's wins of the scripted runs; *within noise* of a gate means the 95 % Wilson
interval of that rate contains the gate.
"""

from __future__ import annotations

import math

from pipeline.api.pages import Bullets, Cell, FAIL, Para, exact, num
from pipeline.api.stats import Z95, wilson

from . import daily_page as dp
from .lines import CHECKS

SOONEST = 3  # the failing dates a to-do line names (every one: the Failing dates section)
SIMULATED = {"tool_free_low": "floor", "tool_free_high": "ceiling",
             "tool_assist_low": "tool-assisted minimum"}


def first_screen(doc) -> tuple[str, list] | None:
    """(the verdict's headline, the blocks after it) of a daily run; None (the generic
    verdict) for a run without per-date figures or whose dates disagree with its lines."""
    days = dp.dates(doc)
    failing = [d for d in days if d.fails]
    if not days or bool(failing) == doc.ok:
        return None
    return headline(days), [*(todo(doc, days) if failing else []), *noise(days)]


def _floors(days: list[dp.Date]) -> str:
    floors = sorted({d.floor for d in days if d.floor is not None})
    if len(floors) == 1:
        return f"the floor {exact(floors[0])}"
    return "their level's floor" + (f" ({', '.join(exact(f) for f in floors)})" if floors
                                    else " (unknown: the run has no tables)")


def headline(days: list[dp.Date]) -> str:
    """PASS: all 1,080 dates hold (…); 428 of them within noise of the floor 0.7."""
    cities = sorted({d.city for d in days})
    held = [d for d in days if not d.fails]
    near = sum(d.tone == "floor" for d in held)
    span = (f"{len(cities)} cities × {len(days) // len(cities):,} dates" if
            len(days) % len(cities) == 0 else f"{len(cities)} cities",
            f"{min(d.date for d in days)} to {max(d.date for d in days)}")
    if len(held) == len(days):
        return (f"PASS: all {len(days):,} dates hold ({span[0]}, {span[1]}); {near:,} of "
                f"them within noise of {_floors(days)}.")
    bad = {d.city for d in days if d.fails}
    return (f"FAIL: {len(days) - len(held):,} of {len(days):,} dates fail, in {len(bad)} of "
            f"{len(cities)} cities ({span[1]}); of the {len(held):,} that hold, {near:,} "
            f"are within noise of {_floors(days)}.")


def runs_to_tell(d: dp.Date) -> int | None:
    """The runs at which date ``d``'s interval would clear its floor, were its rate to
    hold: the Wilson interval leaves out f exactly when (r - f)^2 > z^2 f (1 - f) / n (the
    score test it inverts). None: the rate is on the floor, no number of runs tells."""
    f, r = d.floor, d.rate
    if f is None or r <= f:
        return None
    return int(Z95 * Z95 * f * (1 - f) / (r - f) ** 2) + 1


def noise(days: list[dp.Date]) -> list[Para]:
    """What "within noise of the floor" means for the dates that hold, and how sure."""
    held = [d for d in days if not d.fails]
    near = [d for d in held if d.tone == "floor"]
    if not near:
        return [Para(f"No date that holds is within noise of {_floors(days)}: each one's "
                     "95 % interval clears it.")] if held else []
    runs = near[0].runs
    per = {}
    for d in near:
        per[d.city] = per.get(d.city, 0) + 1
    half = sorted(runs_to_tell(d) or math.inf for d in near)[(len(near) - 1) // 2]
    on = sum(runs_to_tell(d) is None for d in near)
    ceiling = sum(d.tone == "ceiling" for d in held)
    tell = ("Were their rates to hold, telling them from the floor takes "
            + (f"{half:,} runs a board or more for half of them ({half / runs:.0f}× the "
               f"{runs} the game runs)" if half != math.inf else
               "more runs than any audit makes for half of them")
            + (f"; {on} sit on the floor itself, which no number of runs tells apart"
               if on else ""))
    return [Para(
        f"Within noise of the floor: the 95 % interval of the date's tool-free rate (its "
        f"board's wins of {runs} scripted runs) contains the floor, so the same board "
        "played again could fall under it; the game judged these runs and ships the board "
        f"as it is. Per city: {', '.join(f'{c} {n}' for c, n in sorted(per.items()))}. "
        f"{tell}. They are [the calendar's amber cells](#daily-calendar)"
        + (f"; {ceiling} more hold within noise of a ceiling (light blue)" if ceiling
           else "") + ".")]


def _check(d: dp.Date) -> str:
    """A failing date's check in short: ``G1 tool_free_low``, ``V2 triple_chains``."""
    if d.exit == "met":
        return "no tool-free clearing path"
    return f"{CHECKS.get(d.reason, d.reason).split(':')[0]} {d.reason}"


def _cause(ds: list[dp.Date]) -> str:
    """One failing check of one city: the figures against the gate and how sure."""
    d = ds[0]
    what = f"{_check(d)} on {len(ds)}"
    side = SIMULATED.get(d.reason) if d.exit != "met" else None
    if side is None:
        return f"{what} ({dp.sureness(d)[0]})"
    assist = d.reason == "tool_assist_low"
    gate = d.assist_min if assist else d.floor if d.reason == "tool_free_low" else d.ceiling
    rates = sorted(x.assist_wins / x.assist_runs if assist else x.rate for x in ds)
    near = sum(dp.sureness(x)[1] for x in ds)
    span = num(rates[0]) if len(rates) == 1 else f"{num(rates[0])}–{num(rates[-1])}"
    return (f"{what}: {'tool-assisted' if assist else 'tool-free'} rate {span} "
            f"{'over' if side == 'ceiling' else 'under'} the {side} "
            f"{'(unknown)' if gate is None else exact(gate)}; {near} of them within noise "
            f"(the board played again could pass), {len(ds) - near} beyond")


def line(doc, city: str, failing: list[dp.Date], dates: int) -> Cell:
    """The to-do line of one city with failing dates."""
    d = failing[0]
    lo, hi = wilson(len(failing), dates)
    causes: dict[str, list[dp.Date]] = {}
    for x in failing:
        causes.setdefault(_check(x), []).append(x)
    soon = []
    for x in failing[:SOONEST]:
        page = dp.play(doc, x)
        soon.append(f"[{x.date}]({page})" if page else x.date)
    first = next(r["from_date"] for r in doc.rows if r["city_id"] == city)
    return Cell(
        f"[{city}](#drill-{city}-{first}), level {d.level}:{d.revision}: {len(failing)} of "
        f"{dates} dates fail (95 %: {100 * lo:.1f}–{100 * hi:.1f} % of dates) — "
        + "; ".join(_cause(ds) for ds in causes.values())
        + f" — soonest {', '.join(soon)}"
        + (f" and {len(failing) - SOONEST} more" if len(failing) > SOONEST else "")
        + f" — next: fix preset {city}:{d.level}:{d.revision} or give {city} another "
        "level in daily.toml.", FAIL)


def todo(doc, days: list[dp.Date]) -> list:
    """What to do tonight: one line per city with a failing date, in city order, then the
    command that audits the presets behind them."""
    by: dict[str, list[dp.Date]] = {}
    for d in days:
        by.setdefault(d.city, [])
    for d in sorted((d for d in days if d.fails), key=lambda d: d.date):
        by[d.city].append(d)
    failing = {c: ds for c, ds in by.items() if ds}
    count = {c: sum(d.city == c for d in days) for c in failing}
    _, cmd = dp.presets_command(doc)
    return [
        Para(f"What to do tonight: {sum(map(len, failing.values()))} failing dates in "
             f"{len(failing)} cities, one line per city; a city's link opens its "
             "drill-down, a date's the board to play.", strong=True),
        Bullets([line(doc, c, ds, count[c]) for c, ds in sorted(failing.items())]),
        Para(f"Next step for each line: `{cmd}` audits the presets these dailies use; its "
             "drill-down prints the `minegen tune` command that proposes the presets.toml "
             "change holding the gates. Or give a city another level in daily.toml "
             "([cities] city = level) and audit these dates again. Every failing date with "
             "how sure it is: [Failing dates](#daily-failing).")]

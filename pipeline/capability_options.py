"""The audit options of the platform's own capabilities (``audit_options.py`` says how an
option is asked), registered in ``pyproject.toml`` like a plug-in's:

- ``--daily FROM:DAYS`` (``Daily``): the daily boards of DAYS dates from FROM, a generator
  of their own (its runs, resumes and reports are its own), one row per part of the game
  that has a daily, N = DAYS;
- ``--calibration FILE`` (``Calibration``): the players' calibration the report predicts
  from; kept in run.json, so a resume predicts from the same file.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from boardcore.dates import DATE, parse_date
from boardcore.errors import InputError

from . import capabilities
from .audit_options import AuditOption
from .generator import require


def parse_daily(text: str) -> tuple[str, int]:
    """``--daily FROM:DAYS`` (``2026-01-01:365``) -> (FROM, DAYS): FROM a calendar date
    written YYYY-MM-DD (UTC), DAYS >= 1, the range ending by 9999-12-31."""
    first, sep, days = str(text).strip().partition(":")
    if not sep or not DATE.fullmatch(first) or not days.isdigit() or int(days) < 1:
        raise InputError(f"--daily {text!r}: expected FROM:DAYS with FROM a date written "
                         "YYYY-MM-DD and DAYS >= 1, e.g. 2026-01-01:365")
    start = parse_date(first, f"--daily {text}:")
    if start.toordinal() + int(days) - 1 > dt.date.max.toordinal():
        raise InputError(f"--daily {text}: the range runs past {dt.date.max}")
    return first, int(days)


class _Daily(AuditOption):
    def check(self, value: str) -> None:
        parse_daily(value)

    def generator(self, gen: Any, value: str) -> Any:
        require(gen, "daily")
        return gen.daily()

    def rows(self, gen: Any, value: str, catalog: Any, rows: tuple, n: int
             ) -> tuple[tuple, int]:
        first, days = parse_daily(value)
        if days > gen.max_boards:
            raise InputError(f"--daily {value}: at most {gen.max_boards} days a run")
        return tuple(gen.daily_keys(catalog, first, rows)), days


class _Calibration(AuditOption):
    def generator(self, gen: Any, value: str) -> Any:  # read before anything is written
        return capabilities.calibrated(gen, value)


DAILY = _Daily(
    "daily", "FROM:DAYS", sets_n=True,
    help="audit the daily boards of DAYS dates from FROM (YYYY-MM-DD, UTC), one row per "
         "part of the game that has a daily (--rows names them), e.g. 2026-01-01:365; a "
         "generator with dailies only (tilegen)")
CALIBRATION = _Calibration(
    "calibration", "FILE", kept=True,
    help="the players' calibration (the reconcile.json of `minegen reconcile`): the report "
         "predicts what players pass per row (a generator with a calibration only: tilegen)")

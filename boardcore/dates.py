"""UTC calendar dates as the games write them in seeds and options: ``YYYY-MM-DD``, exactly
(``date.fromisoformat`` alone also takes ``20260101`` and other ISO forms, which would
change a seed's bytes).
"""

from __future__ import annotations

import datetime as dt
import re

from .errors import InputError

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_date(text: str, what: str = "date") -> dt.date:
    """A calendar date written YYYY-MM-DD; InputError naming ``what`` otherwise."""
    if not isinstance(text, str) or not DATE.fullmatch(text):
        raise InputError(f"{what} {text!r}: write the date as YYYY-MM-DD, e.g. 2026-01-01")
    try:
        return dt.date.fromisoformat(text)
    except ValueError as e:
        raise InputError(f"{what} {text}: not a calendar date ({e})") from None

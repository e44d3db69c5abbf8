"""The telemetry session, declared once (05 §17, A-30; decision 196): one row per session.

``SESSION`` declares the columns as the record does (``boardcore.fields.Field``): the
Pandera model of a clean session block (``tilegen/players/reconcile.py``) and the docs table
come from it. ``with_reasons`` is the same declaration as row rules in Polars expressions: the
first rule a raw row breaks, so that a bad row is counted with its reason and never
silently dropped (a streaming query: nothing is collected per row).

Raw input is read as text (every format, ``read.py``) and parsed here, so a value that does
not parse is a reason, not a crash; so is a whole number past the 64-bit range its column is
parsed into (it would parse to null and make a session of no row), and a time past the
whole seconds the time histogram counts in.

Bounds that keep every sum in range (decision 298). The counts reconcile adds up
(``revived`` and the three tool uses; ``peak_slot_usage`` is at most 7) and the fail step,
a histogram's key whose range a chart spans, are at most ``COUNT_MAX`` (10^5) a session. A
dataset holds at most 2^17 files of at most 2^28 rows each (``firsts``: the order key of a
first attempt; ``read.files`` and ``chunks`` refuse more, exit 2), so at most 2^45 sessions,
and every sum is at most 2^45 * 10^5 < 3.6e18, inside int64 (9.2e18) with room for the
duplicates' subtraction. A date lies in 1970-01-01 .. 2149-06-06, the 2^16 days that order
key holds. A value outside is a bad row with its reason, never a wrapped sum or a crash.

``result``: the session's final outcome; a session that revived and then won is ``win``
with ``revived`` >= 1 (A-30). A pass is ``result == "win"``.
"""

from __future__ import annotations

import datetime as dt
import functools

import polars as pl

from boardcore.fields import Field

RESULTS = ("win", "fail", "revive", "quit")
MAX_SLOT = 7
I64_MAX = 2**63 - 1  # the largest int64 value: an int64 column's (and whole seconds') top
COUNT_MAX = 100_000  # a count per session: 2^45 sessions of it sum to under 2^62 (above)
DATE_MIN, DATE_MAX = "1970-01-01", "2149-06-06"  # days 0 .. 2^16 - 1 (firsts.DAY_BITS)

SESSION: tuple[Field, ...] = (
    Field("city_id", "str", "city of the board"),
    Field("level_id", "int64", "level of the board (1-6)", ge=1, le=6),
    Field("revision", "int64", "generation revision of the level", ge=1),
    Field("seed", "uint64", "the board's seed (decimal): the production seed, a daily seed, "
          "or any seed the game shipped"),
    Field("result", "str", "final outcome of the session", values=RESULTS),
    Field("revived", "int64", "revives during the session", ge=0, le=COUNT_MAX),
    Field("peak_slot_usage", "int64", "most pieces in the slot at rest", "cells", ge=0,
          le=MAX_SLOT),
    Field("undo_uses", "int64", "Undo uses", ge=0, le=COUNT_MAX),
    Field("remove_uses", "int64", "Remove uses", ge=0, le=COUNT_MAX),
    Field("shuffle_uses", "int64", "Shuffle uses", ge=0, le=COUNT_MAX),
    Field("time_spent_sec", "float64", "time in the level", "s", ge=0.0),
    Field("first_fail_step", "int64", "clicks made when the session first failed (null: it "
          "never failed)", "clicks", ge=0, le=COUNT_MAX, nullable=True),
    Field("date", "str", f"UTC date of the session, YYYY-MM-DD, {DATE_MIN} to {DATE_MAX}"),
    Field("player_id", "str", "the player, when the game sends one", nullable=True),
)
NAMES = tuple(f.name for f in SESSION)
REQUIRED = tuple(f.name for f in SESSION if not f.nullable)
KEY = ("city_id", "level_id", "revision")

_INT = r"^\s*[0-9]+\s*$"
_DATE = r"^\d{4}-\d{2}-\d{2}$"


def _int(name: str) -> pl.Expr:
    return pl.col(name).str.strip_chars().cast(pl.Int64, strict=False)


@functools.cache  # built once per process: every file's query reuses it
def parsed() -> tuple[pl.Expr, ...]:
    """Each column parsed from its text (null where it does not parse)."""
    out = []
    for f in SESSION:
        c = pl.col(f.name)
        if f.dtype == "int64":
            out.append(_int(f.name).alias(f.name))
        elif f.dtype == "uint64":
            out.append(c.str.strip_chars().cast(pl.UInt64, strict=False).alias(f.name))
        elif f.dtype == "float64":
            out.append(c.str.strip_chars().cast(pl.Float64, strict=False).alias(f.name))
        else:
            out.append(pl.when(c.str.strip_chars() == "").then(None).otherwise(c)
                       .alias(f.name))
    return tuple(out)


def with_reasons(lf: pl.LazyFrame, first: pl.Expr | None = None, *,
                 parse: bool = False) -> pl.LazyFrame:
    """``lf`` (raw text columns) with ``reason``: ``first`` where it is not null (a line's
    own reason), else the first rule the row breaks, in declaration order; null when none.
    ``parse``: the columns come back parsed as ``parsed()`` parses them, read off the same
    helper columns (not stripped and cast a second time).

    Each column is stripped and parsed once into helper columns (``_s_``: stripped text,
    ``_m_``: missing, ``_d_``: digits only, ``_i_``/``_u_``/``_f_``: the value as Int64,
    UInt64, Float64, ``_day``: the date) that every rule then reads, and dropped again: the
    rules as one expression would strip and cast a column once per rule (3.6 times the
    time; tests/test_telemetry.py holds the rules to a row-by-row reading)."""
    names = [f.name for f in SESSION]
    lf = lf.with_columns(pl.col(n).str.strip_chars().alias(f"_s_{n}") for n in names)
    lf = lf.with_columns(_helpers())
    helpers = [f"_s_{n}" for n in names] + [e.meta.output_name() for e in _helpers()]
    why = _chain() if first is None else pl.coalesce(first, _chain())
    lf = lf.with_columns(why.alias("reason"))
    return (lf.with_columns(_parsed_from_helpers()) if parse else lf).drop(helpers)


@functools.cache
def _parsed_from_helpers() -> tuple[pl.Expr, ...]:
    """``parsed()`` read off ``_helpers``: the cast of the stripped text, or the text
    itself (null where it is missing)."""
    cast = {"int64": "_i_", "uint64": "_u_", "float64": "_f_"}
    return tuple(pl.col(f"{cast[f.dtype]}{f.name}").alias(f.name) if f.dtype in cast else
                 pl.when(pl.col(f"_m_{f.name}")).then(None).otherwise(pl.col(f.name))
                 .alias(f.name) for f in SESSION)


@functools.cache  # built once per process, as ``_chain``
def _helpers() -> tuple[pl.Expr, ...]:
    out = [pl.col("_s_date").str.to_date("%Y-%m-%d", strict=False).alias("_day")]
    for f in SESSION:
        s = pl.col(f"_s_{f.name}")
        out.append((s.is_null() | (s == "")).alias(f"_m_{f.name}"))
        if f.dtype in ("int64", "uint64"):
            out.append(s.str.contains(_INT).alias(f"_d_{f.name}"))
        if f.dtype in ("int64", "float64"):
            out.append(s.cast(pl.Float64, strict=False).alias(f"_f_{f.name}"))
        if f.dtype == "int64":
            out.append(s.cast(pl.Int64, strict=False).alias(f"_i_{f.name}"))
        if f.dtype == "uint64":
            out.append(s.cast(pl.UInt64, strict=False).alias(f"_u_{f.name}"))
    return tuple(out)


@functools.cache  # built once per process: every file's query reuses it
def _chain() -> pl.Expr:
    """The first rule a row (with ``_helpers``) breaks, in declaration order; null when
    none."""
    rules: list[tuple[pl.Expr, str]] = []
    for f in SESSION:
        missing, text = pl.col(f"_m_{f.name}"), pl.col(f"_s_{f.name}")
        digits = pl.col(f"_d_{f.name}")
        if not f.nullable:
            rules.append((missing, f"{f.name} is missing"))
        if f.dtype in ("int64", "uint64"):
            bad = ~missing & ~digits
            if f.dtype == "uint64":
                bad = bad | (~missing & pl.col(f"_u_{f.name}").is_null())
            rules.append((bad, f"{f.name} is not a whole number >= 0"))
        if f.dtype == "float64":
            v = pl.col(f"_f_{f.name}")
            rules.append((~missing & (v.is_null() | v.is_nan() | v.is_infinite()),
                          f"{f.name} is not a number"))
        if f.dtype in ("int64", "float64") and (f.ge is not None or f.le is not None):
            v = pl.col(f"_f_{f.name}")
            lo = f.ge if f.ge is not None else float("-inf")
            hi = f.le if f.le is not None else float("inf")
            rules.append((~missing & v.is_not_null() & ((v < lo) | (v > hi)),
                          f"{f.name} is outside {_range(f)}"))
        if f.dtype == "int64" and f.le is None:
            # within the declared range but past int64: it would parse to null (a phantom
            # session of no row), so it is outside the range the column can hold
            rules.append((~missing & digits & pl.col(f"_i_{f.name}").is_null(),
                          f"{f.name} is outside {_range(f, I64_MAX)}"))
        if f.dtype == "float64" and f.le is None:
            # time is binned to whole seconds as int64 (tally._queries): a value past that
            # cannot be binned
            v = pl.col(f"_f_{f.name}")
            rules.append((~missing & v.is_finite() & (v >= 2.0**63),
                          f"{f.name} is outside {_range(f, I64_MAX)}"))
        if f.values is not None:
            rules.append((~missing & ~text.is_in(list(f.values)),
                          f"{f.name} is not one of {', '.join(f.values)}"))
    d, day = pl.col("_s_date"), pl.col("_day")
    rules.append((d.is_not_null() & (~d.str.contains(_DATE) | day.is_null()),
                  "date is not a UTC date YYYY-MM-DD"))
    lo, hi = (pl.lit(dt.date.fromisoformat(x)) for x in (DATE_MIN, DATE_MAX))
    rules.append((day.is_not_null() & ((day < lo) | (day > hi)),
                  f"date is outside {DATE_MIN} to {DATE_MAX}"))
    res, step = pl.col("_s_result"), pl.col("_s_first_fail_step")
    rules.append(((res == "fail") & (step.is_null() | (step == "")),
                  "first_fail_step is missing on a failed session"))
    expr = pl.lit(None, dtype=pl.String)
    for cond, text in reversed(rules):
        expr = pl.when(cond.fill_null(False)).then(pl.lit(text)).otherwise(expr)
    return expr.alias("reason")


def _range(f: Field, top: int | None = None) -> str:
    """The declared range as the reasons say it ("1-6", ">= 1"); ``top``: the upper end of
    what the column can hold, for a field declared without one ("1-9223372036854775807")."""
    if f.ge is not None and f.le is not None:
        return f"{f.ge:g}-{f.le:g}"
    if top is not None:  # every digit: a rounded top would read as a limit
        return f"{f.ge if f.ge is not None else 0:g}-{top}"
    return f">= {f.ge:g}" if f.ge is not None else f"<= {f.le:g}"


"""A declared column: the one place a record field's name, type, meaning, unit and range
are written. A generator declares its record with these (its ``record.RECORD``);
the audit derives from the same declaration the Polars schema, the Pandera model that
validates every records block, the kernel-side allocation and the docs table.

Dependency-free on purpose (no Polars, no Pandera): a generator imports nothing of the
audit, and the audit reads these plain values.
"""

from __future__ import annotations

from dataclasses import dataclass

DTYPES = ("int64", "uint64", "float64", "str", "bool")


@dataclass(frozen=True)
class Field:
    name: str
    dtype: str  # one of DTYPES
    meaning: str
    unit: str = ""  # "cells", "share", "AP", ... ("" = a count or a label)
    ge: float | None = None  # inclusive bounds every value must hold (None: unbounded)
    le: float | None = None
    values: tuple[str, ...] | None = None  # the allowed strings of an enum-like column
    nullable: bool = False
    timing: bool = False  # wall-clock measurement: excluded from every determinism key

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"field {self.name}: dtype {self.dtype!r} not in {DTYPES}")


def names(fields: tuple[Field, ...]) -> list[str]:
    return [f.name for f in fields]


def markdown_table(fields: tuple[Field, ...]) -> str:
    """The declaration as a Markdown table (``docs/record.md`` is this, for RECORD)."""
    def rng(f: Field) -> str:
        if f.values is not None:
            return " / ".join(f.values)
        lo = "" if f.ge is None else f"{f.ge:g}"
        hi = "" if f.le is None else f"{f.le:g}"
        return f"[{lo}, {hi}]" if lo and hi else f">= {lo}" if lo else f"<= {hi}" if hi else ""

    rows = [f"| `{f.name}` | {f.dtype}{'?' if f.nullable else ''} | {f.unit} | {rng(f)} | "
            f"{f.meaning.replace('|', '/')}{' (timing)' if f.timing else ''} |" for f in fields]
    return "\n".join(["| field | type | unit | range | meaning |", "|---|---|---|---|---|", *rows])

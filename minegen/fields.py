"""A declared column: the one place a record field's name, type, meaning, unit and range
are written. The generator library declares its record with these (``record.RECORD``);
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

"""Record blocks: the Polars schema and the Pandera model, both derived from a generator's
declared record (``boardcore.fields.Field``), and the determinism key of a run's records.

Every block the engine receives becomes a frame through ``to_frame`` (exact dtypes, record
column order) and is validated by ``model`` (dtype, nullability, declared ranges and
allowed strings). Validation runs on batches of whole rows (``analysis.collect``): the
cost of a Pandera pass is mostly per check, not per row, so batching keeps it cheap.
"""

from __future__ import annotations

import functools
import hashlib
import io
from collections.abc import Iterable, Sequence

import numpy as np
import polars as pl

from boardcore.fields import Field

POLARS = {"int64": pl.Int64, "uint64": pl.UInt64, "float64": pl.Float64, "str": pl.String,
          "bool": pl.Boolean}


def polars_schema(fields: Sequence[Field]) -> dict[str, pl.DataType]:
    return {f.name: POLARS[f.dtype] for f in fields}


def to_frame(fields: Sequence[Field], cols: dict[str, np.ndarray]) -> pl.DataFrame:
    """Numpy columns (a block) -> a frame with the declared dtypes, in record order."""
    missing = [f.name for f in fields if f.name not in cols]
    if missing:
        raise ValueError(f"record block lacks declared column(s) {missing}")
    # A str column goes in as a list: Polars reads an object array by its first values and
    # refuses one that opens with nulls and then holds text (a nullable column of a block).
    frame = pl.DataFrame({f.name: list(cols[f.name]) if f.dtype == "str" else cols[f.name]
                          for f in fields}, schema=polars_schema(fields))
    # A nullable float column carries "no value" as NaN in numpy; the record says null.
    nan_null = [f.name for f in fields if f.nullable and f.dtype == "float64"]
    return frame.with_columns(pl.col(nan_null).fill_nan(None)) if nan_null else frame


def empty(fields: Sequence[Field]) -> pl.DataFrame:
    return pl.DataFrame(schema=polars_schema(fields))


# Pandera is imported where a model is made, not with the module: the workers make frames
# (``to_frame``) and never validate, and its import is a tenth of a second of their start.

def _column(f: Field):
    import pandera.polars as pa

    checks = []
    if f.ge is not None:
        checks.append(pa.Check.ge(f.ge))
    if f.le is not None:
        checks.append(pa.Check.le(f.le))
    if f.values is not None:
        checks.append(pa.Check.isin(list(f.values)))
    return pa.Column(POLARS[f.dtype], checks=checks, nullable=f.nullable, description=f.meaning,
                     title=f.unit or None)


@functools.lru_cache(maxsize=8)
def model(fields: tuple[Field, ...]):
    """The Pandera model of a records block (a ``pandera.polars.DataFrameSchema``):
    exactly the declared columns, in order."""
    import pandera.polars as pa

    return pa.DataFrameSchema({f.name: _column(f) for f in fields}, strict=True, ordered=True,
                              name="records block")


def validate(fields: tuple[Field, ...], frame: pl.DataFrame) -> None:
    """Raise RecordsError listing every violation (a generator defect, not bad input)."""
    import pandera.polars as pa

    try:
        model(fields).validate(frame, lazy=True)
    except pa.errors.SchemaErrors as err:
        cases = err.failure_cases.head(20)
        raise RecordsError("records block violates the declared record:\n"
                           + "\n".join(f"  {r['column']}: {r['check']} (value {r['failure_case']})"
                                       for r in cases.iter_rows(named=True))) from None


class RecordsError(AssertionError):
    """A block that breaks its generator's declared record: a defect, raised loudly."""


DIGEST_ROWS = 8192  # rows of CSV the records digest writes at a time


def digest_fields(fields: Sequence[Field]) -> list[str]:
    return [f.name for f in fields if not f.timing]


class RecordsDigest:
    """sha256 of the records' canonical CSV (header once, rows in order), timing fields
    excluded: the determinism key ``records_sha256``. Fed row frames in key order, it
    equals the digest of the whole sorted frame without ever holding it."""

    def __init__(self, fields: Sequence[Field]):
        self._cols = digest_fields(fields)
        self._h = hashlib.sha256()
        self._header = True

    def update(self, frame: pl.DataFrame) -> None:
        """Hash ``frame``'s CSV lines, written ``DIGEST_ROWS`` rows at a time as bytes: the
        same bytes as the whole frame's CSV (a row's line does not depend on its
        neighbours), without holding a batch's CSV as text and again encoded (tens of MB
        at a collector's batch)."""
        if frame.height == 0 and not self._header:
            return
        part = frame.select(self._cols)
        for start in range(0, max(part.height, 1), DIGEST_ROWS):
            buf = io.BytesIO()
            part.slice(start, DIGEST_ROWS).write_csv(buf, include_header=self._header)
            self._h.update(buf.getbuffer())
            self._header = False

    def hexdigest(self) -> str:
        if self._header:  # no rows at all: the digest of the header alone
            self._h.update((",".join(self._cols) + "\n").encode())
            self._header = False
        return self._h.hexdigest()


def digest(fields: Sequence[Field], frames: Iterable[pl.DataFrame]) -> str:
    d = RecordsDigest(fields)
    for f in frames:
        d.update(f)
    return d.hexdigest()

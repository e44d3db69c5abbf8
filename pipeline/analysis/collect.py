"""The finishing pass over a run's row shards: validate, digest, aggregate, write records.

Rows are read back one at a time in position order (key order) and grouped into batches
of whole rows (about ``BATCH_BOARDS`` boards). Per batch: the Pandera model of the record
validates it; the records digest and ``records.parquet`` (one file, one row group per
batch) are extended; the generator's aggregations run over the batch grouped by row
position, and its side tables over the batch. The client's memory is bounded by a batch,
never by the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from . import records

BATCH_BOARDS = 65536
ROW = "_row"  # the row position column the aggregation groups by


@dataclass
class Collected:
    rows: pl.DataFrame  # one row per position: ROW, the key fields, the aggregations
    side: dict[str, pl.DataFrame] = field(default_factory=dict)
    records_sha256: str = ""
    boards: int = 0


def _aggregate(gen, batch: pl.DataFrame) -> pl.DataFrame:
    return (batch.lazy().group_by(ROW, maintain_order=True)
            .agg(*(pl.first(k) for k in gen.key_fields), *gen.aggregations())
            .collect())


def collect(gen, frames: Iterable[tuple[int, pl.DataFrame]], records_path: Path | None,
            batch_boards: int = BATCH_BOARDS) -> Collected:
    """``frames``: (position, that row's records) in position order."""
    fields = tuple(gen.record)
    digest = records.RecordsDigest(fields)
    aggs: list[pl.DataFrame] = []
    side: dict[str, list[pl.DataFrame]] = {}
    writer: pq.ParquetWriter | None = None
    boards = 0
    pending: list[pl.DataFrame] = []
    pending_boards = 0

    def flush() -> None:
        nonlocal writer, pending, pending_boards
        if not pending:
            return
        batch = pl.concat(pending)
        plain = batch.drop(ROW)
        records.validate(fields, plain)
        digest.update(plain)
        if records_path is not None:
            table = plain.to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(records_path, table.schema, compression="zstd")
            writer.write_table(table)
        aggs.append(_aggregate(gen, batch))
        for name, lf in gen.side_tables(plain.lazy()).items():
            side.setdefault(name, []).append(lf.collect())
        pending, pending_boards = [], 0

    try:
        for pos, frame in frames:
            pending.append(frame.with_columns(pl.lit(pos, pl.Int64).alias(ROW)))
            pending_boards += frame.height
            boards += frame.height
            if pending_boards >= batch_boards:
                flush()
        flush()
        if records_path is not None and writer is None:  # no rows: an empty, typed file
            records.empty(fields).write_parquet(records_path)
    finally:
        if writer is not None:
            writer.close()
    rows = pl.concat(aggs) if aggs else pl.DataFrame()
    return Collected(rows, {k: pl.concat(v) for k, v in side.items()}, digest.hexdigest(),
                     boards)

"""The finishing pass over a run's rows: validate, digest, aggregate, write records.

Rows are fed in position order (key order), each once, and grouped into batches of whole
rows (about ``BATCH_BOARDS`` boards). Per batch: the Pandera model of the record validates
it; the records digest and ``records.parquet`` (one file, one row group per batch) are
extended; the generator's aggregations run over the batch grouped by row position, and
its side tables over the batch. The memory held is one batch, never the run.

``InOrder`` feeds a ``Collector`` while a run is still going: rows arrive in any order
(as the graph finishes them), are fed as soon as every earlier row is in, and rows that
wait too long are dropped from memory and read back from their shard when their turn
comes. So the finishing pass overlaps the fan-out instead of following it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from boardcore import files

from ..store.atomic import os_errors
from . import records

# a batch's copies are the client's peak memory; each batch costs one Pandera pass (~0.1 s,
# whatever its size): decisions 34 and 270
BATCH_BOARDS = 32768
ROW = "_row"  # the row position column the aggregation groups by


@dataclass
class Collected:
    rows: pl.DataFrame  # one row per position: ROW, the key fields, the aggregations
    side: dict[str, pl.DataFrame] = field(default_factory=dict)
    records_sha256: str = ""
    boards: int = 0


def _aggregate(gen, batch: pl.DataFrame) -> pl.DataFrame:
    """One row per ROW value of ``batch``: ROW, the key fields, the generator's
    aggregations (each runs within its group: a row's figures do not depend on the batch
    it came in)."""
    return (batch.lazy().group_by(ROW, maintain_order=True)
            .agg(*(pl.first(k) for k in gen.key_fields), *gen.aggregations()).collect())


def _side_tables(gen, plain: pl.DataFrame) -> dict[str, pl.DataFrame]:
    return {name: lf.collect() for name, lf in gen.side_tables(plain.lazy()).items()}


class Collector:
    """The finishing pass of one run (see the module's docstring)."""

    def __init__(self, gen, records_path: Path | None, batch_boards: int = BATCH_BOARDS):
        self.gen = gen
        self.fields = tuple(gen.record)
        self.records_path = records_path
        self.batch_boards = batch_boards
        self._digest = records.RecordsDigest(self.fields)
        self._aggs: list[pl.DataFrame] = []
        self._side: dict[str, list[pl.DataFrame]] = {}
        self._writer: pq.ParquetWriter | None = None
        self._file = None
        self._pending: list[pl.DataFrame] = []
        self._pending_boards = 0
        self.boards = 0

    def feed(self, position: int, frame: pl.DataFrame) -> None:
        self._pending.append(frame.with_columns(pl.lit(position, pl.Int64).alias(ROW)))
        self._pending_boards += frame.height
        self.boards += frame.height
        if self._pending_boards >= self.batch_boards:
            self._flush()

    def _flush(self) -> None:
        if not self._pending:
            return
        batch = pl.concat(self._pending)
        self._pending, self._pending_boards = [], 0
        plain = batch.drop(ROW)
        records.validate(self.fields, plain)
        self._digest.update(plain)
        if self.records_path is not None:
            table = plain.to_arrow()
            with os_errors(self.records_path):  # a full disk names the file (exit 2)
                if self._writer is None:  # a new file in the run's own folder
                    self._file = files.new_file(self.records_path)
                    self._writer = pq.ParquetWriter(self._file, table.schema,
                                                    compression="zstd")
                self._writer.write_table(table)
        self._aggs.append(_aggregate(self.gen, batch))
        for name, frame in _side_tables(self.gen, plain).items():
            self._side.setdefault(name, []).append(frame)

    def finish(self) -> Collected:
        try:
            self._flush()
            if self.records_path is not None and self._writer is None:  # no rows at all
                files.create(self.records_path, records.empty(self.fields).write_parquet)
        finally:
            if self._writer is not None:
                self._writer.close()
                self._file.close()
        rows = pl.concat(self._aggs) if self._aggs else pl.DataFrame()
        return Collected(rows, {k: pl.concat(v) for k, v in self._side.items()},
                         self._digest.hexdigest(), self.boards)


def collect(gen, frames: Iterable[tuple[int, pl.DataFrame]], records_path: Path | None,
            batch_boards: int = BATCH_BOARDS) -> Collected:
    """``frames``: (position, that row's records) in position order."""
    c = Collector(gen, records_path, batch_boards)
    for pos, frame in frames:
        c.feed(pos, frame)
    return c.finish()


def collect_each(gen, frames: Iterable[tuple[int, pl.DataFrame]],
                 batch_boards: int = BATCH_BOARDS) -> Iterator[tuple[int, Collected]]:
    """Each row collected on its own (its own digest and aggregates: a sweep's value, a
    tune's candidate), in the order given. Their records are validated and aggregated
    together, in batches of about ``batch_boards`` boards: a Pandera pass and a group-by
    cost per check and per expression, not per row, so one pass per batch instead of one
    per row (hundreds of candidates in a tune)."""
    fields = tuple(gen.record)
    pending: list[tuple[int, pl.DataFrame]] = []
    boards = 0

    def flush() -> Iterator[tuple[int, Collected]]:
        # one frame, each row's records under its own ROW value (its place in the batch):
        # validated and aggregated in one pass each; an aggregation runs within its group,
        # so each row's aggregates are those ``collect`` gives it alone (a test holds them
        # equal); the digest and the side tables stay per row
        batch = pl.concat([f.with_columns(pl.lit(i, pl.Int64).alias(ROW))
                           for i, (_, f) in enumerate(pending)])
        records.validate(fields, batch.drop(ROW))
        aggs = _aggregate(gen, batch)
        parts = aggs.partition_by(ROW, as_dict=True, include_key=True)
        for i, (pos, frame) in enumerate(pending):
            rows = parts.get((i,), aggs.clear()).with_columns(pl.lit(pos, pl.Int64).alias(ROW))
            yield pos, Collected(rows, _side_tables(gen, frame),
                                 records.digest(fields, [frame]), frame.height)

    for pos, frame in frames:
        pending.append((pos, frame))
        boards += frame.height
        if boards >= batch_boards:
            yield from flush()
            pending, boards = [], 0
    if pending:
        yield from flush()


class InOrder:
    """Feed ``collector`` rows 0..n-1 in order while they arrive in any order.

    ``arrived(pos, frame)``: a row is done (its shard is saved). Waiting rows are held in
    memory up to ``hold_boards`` boards; beyond that a row is dropped and ``read(pos)``
    fetches it again when its turn comes. ``ready(pos)`` rows (done before this run, e.g.
    a resume) are read when their turn comes. ``drain()`` feeds whatever is left.
    """

    def __init__(self, collector: Collector, n_rows: int, read: Callable[[int], pl.DataFrame],
                 ready: Iterable[int] = (), hold_boards: int = 2 * BATCH_BOARDS):
        self.collector, self.n_rows, self.read = collector, n_rows, read
        self.hold_boards = hold_boards
        self._done = set(ready)
        self._held: dict[int, pl.DataFrame] = {}
        self._held_boards = 0
        self.next = 0
        self._advance()

    def arrived(self, position: int, frame: pl.DataFrame) -> None:
        self._done.add(position)
        if position == self.next or self._held_boards + frame.height <= self.hold_boards:
            self._held[position] = frame
            self._held_boards += frame.height
        self._advance()

    def _advance(self) -> None:
        while self.next < self.n_rows and self.next in self._done:
            frame = self._held.pop(self.next, None)
            if frame is None:
                frame = self.read(self.next)
            else:
                self._held_boards -= frame.height
            self.collector.feed(self.next, frame)
            self.next += 1

    def drain(self) -> Collected:
        self._done.update(range(self.next, self.n_rows))  # every row is on disk by now
        self._advance()
        return self.collector.finish()

"""One telemetry file read in bounded memory (decision 299): in chunks of about
``CHUNK_ROWS`` rows, in file order, each with the columns ``read.scan`` gives (``row``,
numbered across the file from 0; the declared columns as text; ``file``; ``unreadable``).
A query runs on each chunk and the chunks' results are added (``tally``), so one file of
10 M sessions needs no more memory than ten files of 1 M.

- **Parquet**: Polars reads each chunk as a slice of the file, whole row groups.
  From a chunk Polars refuses on, pyarrow's ``iter_batches`` reads the rest, each string or
  binary column checked as UTF-8: a row with a value whose bytes are not UTF-8 is a bad
  row, ``not UTF-8 text`` (Polars refuses the whole column). A file neither can decode is
  refused whole (its damage has no row).
- **CSV and NDJSON**: the bytes in blocks of ``BLOCK`` that end where a record ends (a
  newline; in CSV one outside quotes), each parsed by Polars (a CSV block behind the
  file's header line). A block Polars refuses (a line that is not JSON, more fields than
  the header, bytes that are not UTF-8) is read line by line by ``read``'s readers, so
  only that block is slower. An NDJSON block with a ``\\uD800``-``\\uDFFF`` escape is read
  line by line too: Polars turns a lone surrogate into U+FFFD, a value the line does not
  hold, where the line reader makes it a bad row (``not UTF-8 text``).

A file of more than ``firsts.MAX_ROWS`` (2^28) rows is refused in one line (exit 2): the
first attempts' order key holds no more (decision 298).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from boardcore.files import DATA, Refused, checked, opened

from . import firsts, read, schema

CHUNK_ROWS = 200_000  # rows a chunk holds (about 60 MB of text and parsed columns)
BLOCK = 4 << 20  # bytes of CSV or NDJSON parsed at a time (about 50,000 CSV rows)
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_BINARY = (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view,
           pa.types.is_binary, pa.types.is_large_binary, pa.types.is_binary_view)
ARROW_ERRORS = (pa.ArrowException,)


def chunks(f: Path, kind: str, rows: int | None = None) -> Iterator[pl.DataFrame]:
    """The text of file ``f`` (format ``kind``) in chunks of about ``rows`` rows
    (default ``CHUNK_ROWS``); at least one chunk (an empty one for a file of no row).
    TelemetryError (one line naming the file): the file cannot be read, lacks a declared
    column (an NDJSON file: no readable line gives it), or holds more than 2^28 rows."""
    rows = rows or CHUNK_ROWS
    at, given, readable, sent = 0, set(), False, False
    try:
        source = _parquet(f, rows) if kind == "parquet" else _grouped(_text(f, kind), rows)
        for frame in source:
            if at + frame.height > firsts.MAX_ROWS:
                raise _too_long(f)
            if kind == "ndjson":  # whether a readable line gives each column: any, per file
                ok = pl.col("unreadable").is_null()
                flags = frame.select((pl.col(n).is_not_null() & ok).any()
                                     for n in schema.REQUIRED).row(0) if frame.height else ()
                given |= {n for n, g in zip(schema.REQUIRED, flags) if g}
                readable |= frame["unreadable"].null_count() > 0
            yield _numbered(frame, f, at)
            at += frame.height
            sent = True
    except Refused as e:
        raise read.TelemetryError(f"telemetry {e}") from None
    except (*read.POLARS_ERRORS, *ARROW_ERRORS) as e:
        raise read.unreadable(f, e) from None
    if not sent:
        yield _numbered(read._frame([]), f, 0)
    if kind == "ndjson" and readable:
        read._lacks(f, given)


def _too_long(f: Path) -> read.TelemetryError:
    return read.TelemetryError(f"telemetry {f}: holds more than 2^{firsts.ROW_BITS} rows "
                               f"({firsts.MAX_ROWS:,}), the most a file may hold; split it")


def _numbered(frame: pl.DataFrame, f: Path, at: int) -> pl.DataFrame:
    return (frame.with_row_index("row", offset=at).with_columns(pl.lit(str(f)).alias("file"))
            .select("row", *schema.NAMES, "file", "unreadable"))


def collect(f: Path, kind: str,
            query: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None) -> pl.DataFrame:
    """``query`` (default: none) run on each chunk of one file, the results in file order.
    The query must keep the columns it is given (``with_columns``, filters)."""
    return pl.concat([(query(c.lazy()) if query is not None else c.lazy()).collect()
                      for c in chunks(f, kind)])


def text(f: Path, kind: str) -> pl.DataFrame:
    """One file's text (``collect`` without a query)."""
    return collect(f, kind)


def by_line(f: Path, kind: str) -> pl.DataFrame:
    """A CSV or NDJSON file read whole by ``read``'s line readers (the reader of a block
    Polars refuses): the same columns as ``text``."""
    with opened(f, DATA, follow=True) as fh:
        frame = _lines(f, kind, fh.read())
    return _numbered(frame, f, 0)


# ---------------------------------------------------------------------------- Parquet

def _parquet(f: Path, rows: int) -> Iterator[pl.DataFrame]:
    """Polars reads each chunk, whole row groups (``_spans``); from the first chunk Polars
    refuses (a string that is not UTF-8) to the end, pyarrow does, value by value checked
    (its batches without pre_buffer: a row group's columns are not all read ahead)."""
    with pq.ParquetFile(checked(f, DATA, follow=True), pre_buffer=False) as pf:
        have = pf.schema_arrow.names
        read._lacks(f, have)
        cols = [n for n in schema.NAMES if n in have]
        if pf.metadata.num_rows > firsts.MAX_ROWS:  # known before a row is read
            raise _too_long(f)
        lf = pl.scan_parquet(checked(f, DATA, follow=True)).select(cols)
        for at, n in _spans(pf.metadata, rows):
            try:
                frame = _as_text(lf.slice(at, n).collect(), None)
            except read.POLARS_ERRORS:
                yield from _arrow(pf, cols, at, rows)
                return
            yield frame


def _spans(meta: pq.FileMetaData, rows: int) -> Iterator[tuple[int, int]]:
    """(first row, rows) of each chunk: whole row groups, joined until a chunk holds
    ``rows`` (a slice that ends inside a row group keeps all of its decoded group: about
    a quarter more memory), a row group of more than twice ``rows`` split."""
    at = n = 0
    for g in range(meta.num_row_groups):
        size = meta.row_group(g).num_rows
        if size > 2 * rows:
            if n:
                yield at, n
            for k in range(0, size, rows):
                yield at + n + k, min(rows, size - k)
            at, n = at + n + size, 0
            continue
        n += size
        if n >= rows:
            yield at, n
            at, n = at + n, 0
    if n:
        yield at, n


def _arrow(pf: pq.ParquetFile, cols: list[str], at: int, rows: int) -> Iterator[pl.DataFrame]:
    """Rows ``at`` onwards, by pyarrow's ``iter_batches`` from the row group holding row
    ``at``."""
    meta, start, group = pf.metadata, 0, 0
    while start + meta.row_group(group).num_rows <= at:
        start += meta.row_group(group).num_rows
        group += 1
    skip = at - start
    for batch in pf.iter_batches(batch_size=rows, columns=cols,
                                 row_groups=range(group, meta.num_row_groups)):
        if skip:
            batch, skip = batch.slice(min(skip, batch.num_rows)), max(0, skip - batch.num_rows)
        if batch.num_rows:
            yield _arrow_frame(batch, cols)


def _as_text(frame: pl.DataFrame, bad: np.ndarray | None) -> pl.DataFrame:
    """The declared columns as text (absent ones null); ``unreadable``: ``not UTF-8 text``
    where ``bad``."""
    why = (pl.when(pl.Series(bad)).then(pl.lit(read.NOT_UTF8)) if bad is not None and bad.any()
           else pl.lit(None, pl.String))
    return frame.select(
        *(pl.col(n).cast(pl.String) if n in frame.columns else pl.lit(None, pl.String).alias(n)
          for n in schema.NAMES), why.alias("unreadable"))


def _arrow_frame(batch: pa.RecordBatch, cols: list[str]) -> pl.DataFrame:
    """A batch as text columns; a row with a value that is not UTF-8 gets ``unreadable``."""
    arrays, bad = [], np.zeros(batch.num_rows, dtype=bool)
    for name in cols:
        col, invalid = _utf8(batch.column(name))
        arrays.append(col)
        bad |= invalid
    return _as_text(pl.from_arrow(pa.record_batch(arrays, names=cols)), bad)


def _utf8(col: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """A string or binary column as large_string, and which values are not UTF-8 (null
    in the column); any other column as it is. Checked whole first (Arrow's validation),
    value by value only when that fails."""
    none = np.zeros(len(col), dtype=bool)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    if not any(test(col.type) for test in _BINARY):
        return col, none
    raw = col.cast(pa.large_binary())  # the bytes as stored: a string column unchecked
    try:
        return raw.cast(pa.large_string()), none
    except pa.ArrowInvalid:
        values, bad = [], none.copy()
        for i, v in enumerate(raw.to_pylist()):
            try:
                values.append(None if v is None else v.decode("utf-8"))
            except UnicodeDecodeError:
                values.append(None)
                bad[i] = True
        return pa.array(values, pa.large_string()), bad


# -------------------------------------------------------------------------- CSV, NDJSON

def _grouped(frames: Iterator[pl.DataFrame], rows: int) -> Iterator[pl.DataFrame]:
    """Blocks' frames joined into chunks of at least ``rows`` rows (the last: what is
    left)."""
    held, n = [], 0
    for frame in frames:
        held.append(frame)
        n += frame.height
        if n >= rows:
            yield pl.concat(held)
            held, n = [], 0
    if held:
        yield pl.concat(held)


def _text(f: Path, kind: str) -> Iterator[pl.DataFrame]:
    """Each block's frame (the declared columns as text, ``unreadable``), in file order."""
    quoted, header, carry = kind == "csv", None, b""
    with opened(f, DATA, follow=True) as fh:
        while True:
            data = fh.read(BLOCK)
            if not data and header is None and not carry and kind == "csv":
                raise read.TelemetryError(f"telemetry {f}: is empty (0 bytes): a CSV file "
                                          "starts with its header line")
            buf = carry + data if carry else data
            cut = len(buf) if not data else _cut(buf, quoted)
            if not cut:  # no record ends in it: read on (a very long record)
                if not data:
                    return
                carry = buf
                continue
            block, carry = buf[:cut], buf[cut:]
            if header is None and quoted:  # the first block starts with the header
                header = block[:_header_end(block)].removeprefix(b"\xef\xbb\xbf")
                yield _parse(f, kind, block)
            else:
                yield _parse(f, kind, (header or b"") + block)
            if not data:
                return


def _cut(buf: bytes, quoted: bool) -> int:
    """Where the last whole record of ``buf`` ends (0: none ends in it). In CSV a newline
    inside quotes ends nothing: a record ends at a newline after an even number of
    quotes (a quote inside a quoted field is written twice)."""
    p = buf.rfind(b"\n")
    if quoted and p >= 0:
        odd = buf.count(b'"', 0, p) & 1
        while p >= 0 and odd:
            q = buf.rfind(b"\n", 0, p)
            odd ^= buf.count(b'"', q + 1, p) & 1
            p = q
    return p + 1


def _header_end(block: bytes) -> int:
    """Where the CSV header record ends (its newline included)."""
    p = block.find(b"\n")
    while p >= 0 and block.count(b'"', 0, p) & 1:
        p = block.find(b"\n", p + 1)
    return p + 1 if p >= 0 else len(block)


def _parse(f: Path, kind: str, data: bytes) -> pl.DataFrame:
    """One block by Polars; by the line readers when Polars refuses it (or, NDJSON, it
    holds a surrogate escape)."""
    try:
        if kind == "csv":
            frame = pl.read_csv(io.BytesIO(data), infer_schema=False)
            read._lacks(f, frame.columns)
        elif not _SURROGATE.search(data):
            frame = pl.read_ndjson(io.BytesIO(data), schema=read.TEXT)
        else:
            return _lines(f, kind, data)
    except read.POLARS_ERRORS:
        return _lines(f, kind, data)
    return _as_text(frame, None)


def _lines(f: Path, kind: str, data: bytes) -> pl.DataFrame:
    records = (read.json_records(data.split(b"\n")) if kind == "ndjson"
               else read.csv_records(f, io.BytesIO(data)))
    return read._frame(list(records))

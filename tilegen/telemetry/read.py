"""Reading telemetry (decision 196): Parquet (a file, or a folder of them: a partitioned
dataset), CSV and NDJSON, as text columns, so that every format goes through the same row
rules (``schema.with_reasons``) and nothing is collected per row. Every value is read as its
text, whatever type the format gives it: an NDJSON column may hold 1 on one line and "x",
1.5 or [1] on another, and only those lines break a rule.

``sessions(path)`` gives (clean, bad): ``clean`` the parsed valid rows (typed as
``schema.SESSION``), ``bad`` each invalid row's number and reason. Exact duplicate sessions
are the clean rows equal in every column; ``duplicates`` counts them. A missing column or
an unreadable file is bad input (``TelemetryError``), named in one line.

A file is read in chunks (``chunks``: bounded memory, decision 299). A CSV or NDJSON block
Polars refuses (a truncated last line of a log still being written, a line that is not JSON
or not a JSON object, a CSV line with more fields than the header, bytes that are not
UTF-8) is read again line by line (``json_records``, ``csv_records``, slower): each line
that cannot be a session is a bad row with its reason ("not valid JSON" ...), the others
are read as Polars reads them. A Parquet file that cannot be decoded is refused whole: its
damage has no row. A device, a FIFO or a socket is refused by name
(``files``): it is not a file that is missing, and reading it would block or never end.

Rows are numbered from 0 in file order, per file: CSV data rows (the header is not a row;
a blank line is a row, of missing fields), NDJSON lines that are not blank (on a file
without blank lines, row k is line k + 1), Parquet rows.
"""

from __future__ import annotations

import csv
import io
import json
import stat
from decimal import Decimal
from pathlib import Path

import polars as pl

from boardcore.errors import InputError
from boardcore.files import DATA, Refused, checked

from . import firsts, schema

FORMATS = {".parquet": "parquet", ".csv": "csv", ".ndjson": "ndjson", ".jsonl": "ndjson"}
TEXT = {n: pl.String for n in schema.NAMES}
# a line that cannot be a session: its reason, ahead of every row rule (schema.with_reasons)
NOT_JSON = "not valid JSON"
NOT_OBJECT = "not a JSON object"
NOT_UTF8 = "not UTF-8 text"
# what Polars raises on a file it cannot read (a Rust panic on damaged bytes included: it
# is a BaseException, and must not end the command with a traceback)
POLARS_ERRORS = (pl.exceptions.PolarsError, pl.exceptions.PanicException, OSError)


class TelemetryError(InputError):
    pass


def _kind(mode: int) -> str | None:
    """What a path that is neither a regular file nor a folder is, in words."""
    for test, what in ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "not a regular file"


def _regular(path: Path) -> None:
    """TelemetryError unless ``path`` is a regular file or a folder (symbolic links
    followed): a device or a FIFO would be read for ever or block, and is not "missing"."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise TelemetryError(f"telemetry {path} does not exist") from None
    except OSError as e:
        raise TelemetryError(f"telemetry {path}: cannot be read ({e.strerror or e})") from None
    what = _kind(st.st_mode)
    if what is not None:
        raise TelemetryError(f"telemetry {path} is {what}, not a regular file or a folder "
                             "(give a telemetry file or a folder of them)")


def files(path: Path) -> tuple[str, list[Path]]:
    """(format, the files of ``path``: the file, or every telemetry file under a folder)."""
    _regular(path)
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.suffix in FORMATS and not p.is_dir())
        for p in found:  # a FIFO named day.csv in the folder is refused, not read
            _regular(p)
        kinds = {FORMATS[p.suffix] for p in found}
        if not found:
            raise TelemetryError(f"{path}: no telemetry file in it (*.parquet, *.csv, "
                                 "*.ndjson)")
        if len(kinds) > 1:
            raise TelemetryError(f"{path}: mixes formats ({', '.join(sorted(kinds))}); give "
                                 "one kind per folder")
        if len(found) > firsts.MAX_FILES:  # the first attempts' order key (decision 298)
            raise TelemetryError(f"{path}: {len(found):,} telemetry files, more than the "
                                 f"{firsts.MAX_FILES:,} a dataset may hold; join some")
        return kinds.pop(), found
    if path.suffix not in FORMATS:
        raise TelemetryError(f"telemetry {path}: unknown format {path.suffix!r} (use .parquet, "
                             ".csv or .ndjson)")
    return FORMATS[path.suffix], [path]


def unreadable(f: Path, e: BaseException) -> TelemetryError:
    """The one line for a file Polars or the OS cannot read."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    return TelemetryError(f"telemetry {f}: cannot be read ({text})")


def _lacks(f: Path, have) -> None:
    missing = [n for n in schema.REQUIRED if n not in have]
    if missing:
        raise TelemetryError(f"telemetry {f}: lacks column(s) {', '.join(missing)} (the "
                             "schema: docs/telemetry.md)")


def scan(f: Path, kind: str) -> pl.LazyFrame:
    """One file as a lazy query: every declared column as text, ``row`` (0-based, in file
    order), ``file``, and ``unreadable`` (null here: set only by the line-by-line read).
    A Parquet or CSV file without a declared column is refused here; an NDJSON file names
    its columns line by line, so ``chunks.chunks`` checks them once it is read."""
    try:  # each a regular file of bounded size when it is opened (links followed to one)
        if kind == "parquet":
            lf = pl.scan_parquet(checked(f, DATA, follow=True))
        elif kind == "csv":
            if f.stat().st_size == 0:
                raise TelemetryError(f"telemetry {f}: is empty (0 bytes): a CSV file starts "
                                     "with its header line")
            lf = pl.scan_csv(checked(f, DATA, follow=True), infer_schema=False)
        else:  # every value read as its text, whatever JSON type a line gives it
            lf = pl.scan_ndjson(checked(f, DATA, follow=True), schema=TEXT)
        have = lf.collect_schema().names()
    except Refused as e:
        raise TelemetryError(f"telemetry {e}") from None
    except POLARS_ERRORS as e:
        raise unreadable(f, e) from None
    if kind != "ndjson":
        _lacks(f, have)
    cols = [pl.col(n).cast(pl.String) if n in have else pl.lit(None, pl.String).alias(n)
            for n in schema.NAMES]
    return (lf.select(cols).with_row_index("row")
            .with_columns(pl.lit(str(f)).alias("file"),
                          pl.lit(None, pl.String).alias("unreadable")))


def raw(path: str | Path) -> pl.LazyFrame:
    """Every file of ``path`` as one lazy query (``scan``)."""
    kind, found = files(Path(path))
    return pl.concat([scan(f, kind) for f in found], how="vertical")


def _frame(block: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(block, schema={**TEXT, "unreadable": pl.String}, orient="row")


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: Polars refuses them too


def _float_text(token: str) -> str:
    """A JSON number with a fraction or exponent as Polars writes it into a text column:
    the shortest decimal that reads back to the same float, without an exponent ("1e20"
    -> "100000000000000000000", "1.0" -> "1")."""
    return format(Decimal(repr(float(token))).normalize(), "f")


def _json_text(v) -> str | None:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v)  # a list or an object: its JSON text, never a session value


def json_records(lines):
    """NDJSON lines (bytes) as records: the declared columns' text and the line's own
    reason. A line whose bytes are not UTF-8 (UTF-16, UTF-32, Latin-1, an encoded
    surrogate) or whose text holds a lone surrogate escape is ``not UTF-8 text``: JSON's
    own decoder would take UTF-16 and UTF-32 lines as text."""
    for line in lines:
        line = line.strip()
        if not line:  # Polars skips blank lines: so do the row numbers
            continue
        try:
            obj = json.loads(line.decode("utf-8-sig"), parse_int=str,
                             parse_float=_float_text, parse_constant=_no_constant)
        except UnicodeDecodeError:
            yield (None,) * len(schema.NAMES) + (NOT_UTF8,)
            continue
        except (ValueError, RecursionError):
            yield (None,) * len(schema.NAMES) + (NOT_JSON,)
            continue
        if not isinstance(obj, dict):
            yield (None,) * len(schema.NAMES) + (NOT_OBJECT,)
            continue
        row = tuple(_json_text(obj.get(n)) for n in schema.NAMES)
        if any(v is not None and _lone(v) for v in row):
            yield (None,) * len(schema.NAMES) + (NOT_UTF8,)
            continue
        yield row + (None,)


def csv_records(f: Path, fh):
    """A CSV stream (bytes, its header first) as records, as ``json_records``."""
    stream = io.TextIOWrapper(fh, encoding="utf-8-sig", errors="surrogateescape",
                              newline="")  # a BOM is not text: Polars drops it too
    reader = csv.reader(stream)
    try:
        header = next(reader)
    except StopIteration:
        header = []
    _lacks(f, header)
    at = {n: header.index(n) for n in schema.NAMES if n in header}
    width = len(header)
    try:
        for rec in reader:
            if not rec:  # a blank line: a row of missing fields, as Polars reads it
                yield (None,) * len(schema.NAMES) + (None,)
            elif any(_surrogates(v) for v in rec):
                yield (None,) * len(schema.NAMES) + (NOT_UTF8,)
            elif len(rec) > width:
                yield ((None,) * len(schema.NAMES)
                       + (f"has more fields than the header ({width})",))
            else:  # a short line's last fields are missing (Polars reads them so)
                yield tuple((rec[at[n]] or None) if n in at and at[n] < len(rec) else None
                            for n in schema.NAMES) + (None,)
    except csv.Error as e:  # e.g. a NUL byte: the line cannot be told apart
        raise TelemetryError(f"telemetry {f}: cannot be read (line {reader.line_num}: "
                             f"{e})") from None


def _surrogates(v: str) -> bool:
    return any("\udc80" <= c <= "\udcff" for c in v)


def _lone(v: str) -> bool:
    """Whether ``v`` holds a surrogate (from a JSON escape: a pair is decoded as one)."""
    return any("\ud800" <= c <= "\udfff" for c in v)


def sessions(path: str | Path) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(clean sessions, bad rows with their reason), both lazy."""
    tagged = with_reason(raw(path))
    bad = tagged.filter(pl.col("reason").is_not_null()).select("file", "row", "reason")
    clean = tagged.filter(pl.col("reason").is_null()).select(schema.parsed())
    return clean, bad


def with_reason(lf: pl.LazyFrame, parse: bool = False) -> pl.LazyFrame:
    """``lf`` with each row's reason: the line's own (``unreadable``), else the first row
    rule it breaks (``schema.with_reasons``); ``parse``: the columns parsed too."""
    return schema.with_reasons(lf, pl.col("unreadable"), parse=parse)


def hashed(clean: pl.LazyFrame) -> pl.LazyFrame:
    """The clean sessions with ``h``, a 64-bit hash of the whole session: duplicates are
    found by it with memory for one word per session, and confirmed on the full columns
    (``duplicates``)."""
    return clean.with_columns(pl.struct(list(schema.NAMES)).hash(seed=0).alias("h"))


def duplicates(clean: pl.LazyFrame) -> pl.LazyFrame:
    """Exact duplicate sessions: each distinct session seen more than once, with its count.
    Candidates share a hash; they are grouped again on every column, so a hash collision
    of two different sessions is never taken for a duplicate."""
    h = hashed(clean)
    twice = h.group_by("h").agg(pl.len().alias("n")).filter(pl.col("n") > 1).select("h")
    return (h.join(twice, on="h", how="semi").group_by(list(schema.NAMES))
            .agg(pl.len().alias("copies")).filter(pl.col("copies") > 1))


def synthetic(path: str | Path) -> bool:
    """Whether the input says it is synthetic (``synth``: a ``source`` column "synthetic"
    on its first file's first row). A file that cannot be read this way says nothing: the
    tally reports it."""
    kind, found = files(Path(path))
    f = found[0]
    try:
        lf = (pl.scan_parquet(checked(f, DATA, follow=True)) if kind == "parquet" else
              pl.scan_csv(checked(f, DATA, follow=True), infer_schema=False) if kind == "csv"
              else pl.scan_ndjson(checked(f, DATA, follow=True), schema={"source": pl.String}))
        if "source" not in lf.collect_schema().names():
            return False
        return lf.select(pl.col("source").cast(pl.String).first()).collect().item() == \
            "synthetic"
    except (*POLARS_ERRORS, Refused):
        return False

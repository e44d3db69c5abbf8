"""Reading telemetry (decision 196): Parquet (a file, or a folder of them: a partitioned
dataset), CSV and NDJSON, as one lazy query of text columns, so that every format goes
through the same row rules (``schema.reasons``) and nothing is collected per row.

``sessions(path)`` gives (clean, bad): ``clean`` the parsed valid rows (typed as
``schema.SESSION``), ``bad`` each invalid row's number and reason. Exact duplicate sessions
are the clean rows equal in every column; ``duplicates`` counts them. A missing column or
an unreadable file is bad input (``TelemetryError``), named in one line.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from boardcore.errors import InputError

from . import schema

FORMATS = {".parquet": "parquet", ".csv": "csv", ".ndjson": "ndjson", ".jsonl": "ndjson"}


class TelemetryError(InputError):
    pass


def files(path: Path) -> tuple[str, list[Path]]:
    """(format, the files of ``path``: the file, or every telemetry file under a folder)."""
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.suffix in FORMATS)
        kinds = {FORMATS[p.suffix] for p in found}
        if not found:
            raise TelemetryError(f"{path}: no telemetry file in it (*.parquet, *.csv, "
                                 "*.ndjson)")
        if len(kinds) > 1:
            raise TelemetryError(f"{path}: mixes formats ({', '.join(sorted(kinds))}); give "
                                 "one kind per folder")
        return kinds.pop(), found
    if not path.is_file():
        raise TelemetryError(f"telemetry {path} does not exist")
    if path.suffix not in FORMATS:
        raise TelemetryError(f"telemetry {path}: unknown format {path.suffix!r} (use .parquet, "
                             ".csv or .ndjson)")
    return FORMATS[path.suffix], [path]


def raw(path: str | Path) -> pl.LazyFrame:
    """Every declared column as text, plus ``row`` (0-based, in file order) and ``file``."""
    kind, found = files(Path(path))
    frames = []
    for f in found:
        try:
            if kind == "parquet":
                lf = pl.scan_parquet(f)
            elif kind == "csv":
                lf = pl.scan_csv(f, infer_schema=False)
            else:
                lf = pl.scan_ndjson(f, infer_schema_length=None)
            have = lf.collect_schema().names()
        except (pl.exceptions.ComputeError, OSError) as e:
            raise TelemetryError(f"telemetry {f}: cannot be read ({e})".splitlines()[0]) from None
        missing = [n for n in schema.REQUIRED if n not in have]
        if missing:
            raise TelemetryError(f"telemetry {f}: lacks column(s) {', '.join(missing)} (the "
                                 "schema: docs/telemetry.md)")
        cols = [pl.col(n).cast(pl.String) if n in have else pl.lit(None, pl.String).alias(n)
                for n in schema.NAMES]
        frames.append(lf.select(cols).with_row_index("row")
                      .with_columns(pl.lit(str(f)).alias("file")))
    return pl.concat(frames, how="vertical")


def sessions(path: str | Path) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """(clean sessions, bad rows with their reason), both lazy."""
    tagged = raw(path).with_columns(schema.reasons())
    bad = tagged.filter(pl.col("reason").is_not_null()).select("file", "row", "reason")
    clean = tagged.filter(pl.col("reason").is_null()).select(schema.parsed())
    return clean, bad


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
    """Whether the input says it is synthetic (``synth``: a ``source`` column "synthetic")."""
    kind, found = files(Path(path))
    f = found[0]
    lf = (pl.scan_parquet(f) if kind == "parquet" else pl.scan_csv(f, infer_schema=False)
          if kind == "csv" else pl.scan_ndjson(f, infer_schema_length=None))
    if "source" not in lf.collect_schema().names():
        return False
    return lf.select(pl.col("source").cast(pl.String).first()).collect().item() == "synthetic"

"""Per-seed tallies of telemetry, file by file (decision 199): every figure reconcile
reports is a sum, or read off a histogram of sums, so the files of a dataset are tallied one
at a time and added. Memory holds one file's query and the small tallies, however many
sessions the dataset has.

Exact duplicates are found within a file (a dataset partitioned by date keeps every copy of
a session in one file: the date is one of its columns). Their extra copies are tallied
again with their weight and subtracted, so each duplicate counts once. Quantiles are read
off histograms: the fail step is a whole number of clicks; time is binned to whole seconds
(its median is the nearest-rank median of the whole seconds).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from . import read, schema

SEED = [*schema.KEY, "seed"]
SUMS = ("sessions", "quits", "played", "wins", "revives", "undo", "remove", "shuffle", "peak")


def _sums(lf: pl.LazyFrame, w: pl.Expr) -> pl.LazyFrame:
    res = pl.col("result")
    return lf.group_by(SEED).agg(
        w.sum().alias("sessions"), (w * (res == "quit")).sum().alias("quits"),
        (w * (res != "quit")).sum().alias("played"), (w * (res == "win")).sum().alias("wins"),
        (w * pl.col("revived")).sum().alias("revives"),
        (w * pl.col("undo_uses")).sum().alias("undo"),
        (w * pl.col("remove_uses")).sum().alias("remove"),
        (w * pl.col("shuffle_uses")).sum().alias("shuffle"),
        (w * pl.col("peak_slot_usage")).sum().alias("peak"))


def _hist(lf: pl.LazyFrame, w: pl.Expr, value: pl.Expr, keep: pl.Expr) -> pl.LazyFrame:
    return (lf.filter(keep).group_by([*SEED, value.alias("v")])
            .agg(w.sum().alias("n")))


def _queries(lf: pl.LazyFrame, w: pl.Expr) -> list[pl.LazyFrame]:
    return [_sums(lf, w),
            _hist(lf, w, pl.col("first_fail_step"), pl.col("result") == "fail"),
            _hist(lf, w, pl.col("time_spent_sec").floor().cast(pl.Int64), pl.lit(True))]


def tally_file(path: Path) -> dict[str, pl.DataFrame]:
    """Bad rows by reason, exact duplicates, and the per-seed sums and histograms of the
    distinct sessions of one file (held in memory while it is tallied: one file at a time)."""
    tagged = read.raw(path).with_columns(schema.reasons()).collect(engine="streaming")
    bad = tagged.lazy().filter(pl.col("reason").is_not_null()).select("file", "row", "reason")
    clean = (tagged.lazy().filter(pl.col("reason").is_null()).select(schema.parsed())
             .collect().lazy())  # parsed once: every query below reads this one file's rows
    del tagged
    one = pl.col("city_id").is_not_null().cast(pl.Int64)  # 1 per row (a literal sums once)
    bad_q = bad.group_by("reason").agg(pl.len().alias("rows"),
                                       pl.concat_str(pl.col("file"), pl.lit(":"),
                                                     pl.col("row").cast(pl.String))
                                       .head(3).alias("first_rows"))
    dup_q = read.duplicates(clean)
    rep_q = read.hashed(clean).group_by("h").agg(pl.len().alias("n")).filter(
        pl.col("n") > 1).select(pl.len().alias("hashes"), (pl.col("n") - 1).sum().alias("extra"))
    bad_rows, dups, rep, sums, fails, times = pl.collect_all(
        [bad_q, dup_q, rep_q, *_queries(clean, one)], engine="streaming")
    extra = int((dups["copies"] - 1).sum()) if dups.height else 0
    if dups.height != rep["hashes"][0] or extra != (rep["extra"][0] or 0):
        raise RuntimeError(f"{path}: two different sessions share a 64-bit hash; the "
                           "de-duplication cannot trust it (report this input)")
    if dups.height:  # each duplicate counts once: take its extra copies back out
        w = (pl.col("copies") - 1).cast(pl.Int64)
        less = pl.collect_all(_queries(dups.lazy(), w))
        sums, fails, times = (_less(a, b) for a, b in zip((sums, fails, times), less))
    return {"bad": bad_rows, "dups": dups,
            "sums": sums, "fails": fails, "times": times}


def _less(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in a.columns if c in SEED or c == "v"]
    vals = [c for c in a.columns if c not in keys]
    return (pl.concat([a, b.with_columns(-pl.col(c) for c in vals)])
            .group_by(keys).agg(pl.col(c).sum() for c in vals))


def tally(path: str | Path, mapper: Callable | None = None) -> dict[str, pl.DataFrame]:
    """``tally_file`` over every file of ``path``, added. ``mapper(tally_file, files)``
    runs the files elsewhere (a Dask cluster's map, results in file order); the sum is the
    same whichever runs them (every part is exact integers, added in file order)."""
    _, files = read.files(Path(path))
    parts = list((mapper or map)(tally_file, files))
    cat = {k: pl.concat([p[k] for p in parts]) for k in parts[0]}
    bad = (cat["bad"].group_by("reason", maintain_order=True)
           .agg(pl.col("rows").sum(), pl.col("first_rows").list.explode(
               keep_nulls=False, empty_as_null=False).head(3))
           .sort(["rows", "reason"], descending=[True, False]))
    out = {"bad": bad, "dups": cat["dups"]}
    for k in ("sums", "fails", "times"):
        keys = SEED if k == "sums" else [*SEED, "v"]
        vals = [c for c in cat[k].columns if c not in keys]
        out[k] = cat[k].group_by(keys).agg(pl.col(c).sum() for c in vals).sort(keys)
    return out


def quantiles(hist: pl.DataFrame, qs: tuple[float, ...]) -> pl.DataFrame:
    """Per seed, the nearest-rank quantiles of a histogram (columns v, n)."""
    rows = []
    for key, g in hist.filter(pl.col("n") > 0).sort("v").group_by(SEED, maintain_order=True):
        v, n = g["v"].to_numpy(), np.cumsum(g["n"].to_numpy())
        rows.append({**dict(zip(SEED, key)),
                     **{f"q{q}": int(v[np.searchsorted(n, max(1, np.ceil(q * n[-1])))])
                        for q in qs}})
    return pl.DataFrame(rows, schema_overrides={"seed": pl.UInt64}) if rows else pl.DataFrame(
        schema={**{k: pl.String for k in schema.KEY[:1]}, "level_id": pl.Int64,
                "revision": pl.Int64, "seed": pl.UInt64, **{f"q{q}": pl.Int64 for q in qs}})

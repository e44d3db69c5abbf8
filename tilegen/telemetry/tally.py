"""Per-seed tallies of telemetry, file by file (decision 199): every figure reconcile
reports is a sum, or read off a histogram of sums, so the files of a dataset are tallied one
at a time and added; a file is read in chunks and its chunks' tallies are added too
(decision 299). Memory holds one chunk's query, the small tallies, 12 bytes a session of
the file being read (its duplicates) and 16 bytes a (player, board) pair (first attempts),
however many sessions the dataset has and however they are split into files.

The files' tallies are added into running totals as each file's arrives (``Totals``), on
this process or from a Dask cluster in the order the files finish. Every tally is a sum of
values the schema bounds (decision 298), so no sum leaves int64.

Exact duplicates are found within a file (a dataset partitioned by date keeps every copy of
a session in one file: the date is one of its columns). Their extra copies are tallied
again with their weight and subtracted, so each duplicate counts once. Quantiles are read
off histograms: the fail step is a whole number of clicks; time is binned to whole seconds
(its median is the nearest-rank median of the whole seconds).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

from . import chunks, firsts, read, schema

SEED = [*schema.KEY, "seed"]
SUMS = ("sessions", "quits", "played", "wins", "free_wins", "identified", "revives", "undo",
        "remove", "shuffle", "peak")
# a pass comparable with target_pass_rate (decision 250): a win with no tool used and no
# revive; "identified": a session with a player id (first attempts are counted over those)
FREE_WIN = ((pl.col("result") == "win") & (pl.col("revived") == 0) & (pl.col("undo_uses") == 0)
            & (pl.col("remove_uses") == 0) & (pl.col("shuffle_uses") == 0))


def _sums(lf: pl.LazyFrame, w: pl.Expr) -> pl.LazyFrame:
    res = pl.col("result")
    return lf.group_by(SEED).agg(
        w.sum().alias("sessions"), (w * (res == "quit")).sum().alias("quits"),
        (w * (res != "quit")).sum().alias("played"), (w * (res == "win")).sum().alias("wins"),
        (w * FREE_WIN).sum().alias("free_wins"),
        (w * pl.col("player_id").is_not_null()).sum().alias("identified"),
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


UNKNOWN_ROW = "city_id, level_id, revision is not a row of the run"
UNKNOWN_SEED = "seed is not a board of the run for its row"


def _match(tagged: pl.DataFrame, boards: pl.DataFrame) -> pl.DataFrame:
    """A parsed session that breaks no rule but whose row (city, level, revision) the run
    does not hold, or whose seed is not one of the run's boards of that row, gets that as
    its reason: reconcile has nothing to compare it with (a bad row, counted and listed,
    never a session of its own row). The file's distinct (row, seed) keys are looked up,
    not its rows: the rows are joined only when some key is unknown (about a tenth of a
    file's tally otherwise)."""
    rows = boards.select(schema.KEY).unique().with_columns(pl.lit(True).alias("_row"))
    seeds = boards.select(SEED).unique().with_columns(pl.lit(True).alias("_board"))
    unknown = (tagged.lazy().filter(pl.col("reason").is_null()).select(SEED).unique()
               .join(rows.lazy(), on=list(schema.KEY), how="left")
               .join(seeds.lazy(), on=SEED, how="left")
               .select(*SEED, pl.when(pl.col("_row").is_null()).then(pl.lit(UNKNOWN_ROW))
                       .when(pl.col("_board").is_null()).then(pl.lit(UNKNOWN_SEED))
                       .alias("_why"))
               .filter(pl.col("_why").is_not_null()).collect())
    if not unknown.height:
        return tagged
    return (tagged.lazy().join(unknown.lazy(), on=SEED, how="left", maintain_order="left")
            .with_columns(pl.coalesce("reason", "_why").alias("reason")).drop("_why")
            .collect())


def tally_file(path: Path, boards: pl.DataFrame | None = None) -> dict:
    """Bad rows by reason (with their first three rows, in file order), exact duplicates
    (``dups``: how many sessions, how many extra copies), the per-seed sums and histograms
    of the distinct sessions of one file, and its first attempts (``firsts``: a
    ``firsts.Firsts`` gathered as file 0, ``Totals.add`` places it). The file is read in
    chunks (``chunks``: decision 299) and each chunk's tallies are added, so memory holds a
    chunk, the tallies and 12 bytes a session (its hash and row, for the duplicates), not
    the file. ``boards``: the run's boards (columns ``SEED``); a session on another row or
    seed is a bad row (``_match``). None: every valid session counts."""
    kind, (path,) = read.files(Path(path))
    part = _File()
    for text in chunks.chunks(path, kind):
        part.add(text, boards)
    return part.result(path, kind)


class _File:
    """One file's tallies, added chunk by chunk in file order."""

    def __init__(self) -> None:
        self.bad: dict[str, list] = {}  # reason -> [rows, its first three "file:row"]
        self.hist: dict[str, pl.DataFrame | None] = dict.fromkeys(HISTS)
        self.keys: list[tuple[np.ndarray, np.ndarray]] = []  # per chunk: (hash, row)
        self.firsts = firsts.Firsts()

    def add(self, text: pl.DataFrame, boards: pl.DataFrame | None) -> None:
        tagged = read.with_reason(text.lazy(), parse=True).collect()
        del text
        if boards is not None:
            tagged = _match(tagged, boards)
        ok = pl.col("reason").is_null()
        bad = tagged.filter(~ok).select("file", "row", "reason").lazy()
        # without a bad row the columns are taken as they are (a filter would copy them)
        valid = tagged.filter(ok) if tagged["reason"].null_count() < tagged.height else tagged
        del tagged
        clean = valid.select(schema.NAMES).lazy()
        first_q = firsts.query(valid.select(*schema.NAMES, "row").lazy(), SEED, FREE_WIN)
        key_q = read.hashed(valid.select(*schema.NAMES, "row").lazy()).select("h", "row")
        del valid
        one = pl.col("city_id").is_not_null().cast(pl.Int64)  # 1 per row (a literal sums once)
        bad_q = bad.sort("row").group_by("reason", maintain_order=True).agg(
            pl.len().alias("rows"), pl.concat_str(pl.col("file"), pl.lit(":"),
                                                  pl.col("row").cast(pl.String))
            .head(3).alias("first_rows"))
        bad_rows, first, keys, *hists = pl.collect_all(
            [bad_q, first_q, key_q, *_queries(clean, one)], engine="streaming")
        for why, rows, head in bad_rows.rows():
            entry = self.bad.setdefault(why, [0, []])
            entry[0] += rows
            entry[1] = (entry[1] + head)[:3]  # chunks come in row order
        self.keys.append((keys["h"].to_numpy(), keys["row"].to_numpy().astype(np.uint32)))
        self.firsts.add(0, first)
        self._fold(dict(zip(HISTS, hists)))

    def _fold(self, part: dict[str, pl.DataFrame]) -> None:
        for k, keys in HISTS.items():
            held = self.hist[k]
            self.hist[k] = part[k] if held is None else (
                pl.concat([held, part[k]]).group_by(keys).agg(
                    pl.col(c).sum() for c in part[k].columns if c not in keys))

    def result(self, path: Path, kind: str) -> dict:
        """The file's tally, its exact duplicates counted once: sessions sharing a 64-bit
        hash are read again (their rows only) and grouped on every column, so a hash
        collision of two different sessions is never taken for a duplicate."""
        hs = np.concatenate([h for h, _ in self.keys])
        hs.sort()  # in place: the chunks' own arrays say which row has which hash
        twice = hs[1:] == hs[:-1]
        extra, shared = int(twice.sum()), np.unique(hs[1:][twice])
        del hs, twice
        rows = [r[np.isin(h, shared)] for h, r in self.keys] if extra else []
        self.keys = []
        dups = _duplicates(path, kind, np.concatenate(rows)) if extra else None
        if dups is not None:
            if dups.height != len(shared) or int((dups["copies"] - 1).sum()) != extra:
                raise RuntimeError(f"{path}: two different sessions share a 64-bit hash; "
                                   "the de-duplication cannot trust it (report this input)")
            w = (pl.col("copies") - 1).cast(pl.Int64)  # each counts once: take the copies out
            less = pl.collect_all(_queries(dups.lazy(), w))
            for k, b in zip(HISTS, less):
                self.hist[k] = _less(self.hist[k], b)
        bad = pl.DataFrame([(why, rows, head) for why, (rows, head) in self.bad.items()],
                           schema={"reason": pl.String, "rows": pl.UInt32,
                                   "first_rows": pl.List(pl.String)}, orient="row")
        return {"bad": bad, "dups": {"sessions": dups.height if dups is not None else 0,
                                     "extra_copies": extra},
                **self.hist, "firsts": self.firsts}


def _duplicates(path: Path, kind: str, rows: np.ndarray) -> pl.DataFrame:
    """The distinct sessions among ``rows`` of the file that occur more than once, with
    their ``copies`` (the file read again, each chunk's rows of ``rows`` parsed)."""
    want = pl.LazyFrame({"row": np.unique(rows)}, schema={"row": pl.UInt32})
    groups = None
    for text in chunks.chunks(path, kind):
        got = (text.lazy().with_columns(pl.col("row").cast(pl.UInt32))
               .join(want, on="row", how="semi").select(schema.parsed()).group_by(schema.NAMES)
               .agg(pl.len().cast(pl.Int64).alias("copies")).collect())
        groups = got if groups is None else pl.concat([groups, got]).group_by(
            schema.NAMES).agg(pl.col("copies").sum())
    return groups.filter(pl.col("copies") > 1)


def _less(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in a.columns if c in SEED or c == "v"]
    vals = [c for c in a.columns if c not in keys]
    return (pl.concat([a, b.with_columns(-pl.col(c) for c in vals)])
            .group_by(keys).agg(pl.col(c).sum() for c in vals))


HISTS = {"sums": SEED, "fails": [*SEED, "v"], "times": [*SEED, "v"]}  # each tally's keys


class Totals:
    """The running sum of the files' tallies (decision 199), added as each file's arrives,
    in any order: memory holds the totals and at most ``fold`` files' tallies, however
    many files the dataset has. Every part is exact integers, so the sum is the same in
    any order; the first rows of a bad-row reason are the first three in (file, row)
    order, as if the files had been read one after another."""

    def __init__(self, fold: int = 16):
        self.fold = fold
        self.bad: dict[str, list] = {}  # reason -> [rows, [(file index, k, "file:row")]]
        self.dups = {"sessions": 0, "extra_copies": 0}
        self.hist: dict[str, pl.DataFrame | None] = dict.fromkeys(HISTS)
        self.pending: dict[str, list[pl.DataFrame]] = {k: [] for k in HISTS}
        self.firsts = firsts.Firsts()  # per (player, board): the first attempt, merged
        self.files = 0

    def add(self, index: int, part: dict) -> None:
        """Add the tally of file ``index`` (its place in the dataset's file order). Its first
        attempts are taken over, not copied: a file's tally is added once."""
        for why, rows, first in part["bad"].select("reason", "rows", "first_rows").rows():
            entry = self.bad.setdefault(why, [0, []])
            entry[0] += int(rows)
            entry[1] = sorted(entry[1] + [(index, k, t) for k, t in enumerate(first)])[:3]
        for k in self.dups:
            self.dups[k] += part["dups"][k]
        for k in HISTS:
            self.pending[k].append(part[k])
        self.firsts.absorb(index, part["firsts"])  # merged at once: 16 bytes a pair
        self.files += 1
        if len(self.pending["sums"]) >= self.fold:
            self._fold()

    def _fold(self) -> None:
        for k, keys in HISTS.items():
            frames = [f for f in (self.hist[k], *self.pending[k]) if f is not None]
            if frames:
                cat = pl.concat(frames)
                vals = [c for c in cat.columns if c not in keys]
                self.hist[k] = cat.group_by(keys).agg(pl.col(c).sum() for c in vals)
            self.pending[k] = []

    def result(self) -> dict:
        """``bad`` (reason, rows, first_rows; most rows first), ``dups``, the per-seed
        ``sums``, ``fails`` and ``times``, sorted by their keys, and ``firsts``: per seed of
        ``sums``, its first attempts (``firsts.Firsts.per_board``)."""
        self._fold()
        bad = pl.DataFrame(
            [(why, rows, [t for *_, t in first]) for why, (rows, first) in self.bad.items()],
            schema={"reason": pl.String, "rows": pl.Int64, "first_rows": pl.List(pl.String)},
            orient="row").sort(["rows", "reason"], descending=[True, False])
        out = {k: self.hist[k].sort(keys) for k, keys in HISTS.items()}
        return {"bad": bad, "dups": dict(self.dups), **out,
                "firsts": self.firsts.per_board(out["sums"], SEED)}


def here(func: Callable, files: list[Path]):
    """The files tallied in this process, one after another: (file index, tally)."""
    yield from enumerate(map(func, files))


def tally(path: str | Path, mapper: Callable | None = None,
          boards: pl.DataFrame | None = None) -> dict:
    """``tally_file`` over every file of ``path``, added into running totals (``Totals``)
    as each arrives. ``mapper(func, files)`` yields (file index, tally) pairs in any order,
    as files finish (a Dask cluster's, ``reconcile._on_dask``; default: ``here``): the sum
    is the same whichever runs them and in whatever order they arrive."""
    _, files = read.files(Path(path))
    func = tally_file if boards is None else functools.partial(tally_file, boards=boards)
    totals = Totals()
    for index, part in (mapper or here)(func, files):
        totals.add(index, part)
    return totals.result()


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

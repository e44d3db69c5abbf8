"""Each identified player's first attempt at each board (decision 250), kept across the
files of a dataset in as little memory as the question allows: per board, two sorted numpy
arrays, the players' 64-bit hashes and a packed int64 of where the attempt sits and how it
ended. 16 bytes per distinct (player, board) pair, with nothing held per session.

A first attempt is the player's earliest session on the board by (date, file, row): the
schema has no time of day, and a log lists a day's sessions in the order they were played.
The packed value orders exactly that way, and carries the outcome in its lowest 2 bits, so
the earliest session is the minimum, whatever order the files arrive in (a Dask cluster's
``as_completed``), and merging a file is a sorted search and an insert per board.
"""

from __future__ import annotations

import numpy as np
import polars as pl

QUIT, PLAYED, WON_FREE = 0, 1, 2  # a first attempt's outcome (the lowest 2 bits)
DAY_BITS, FILE_BITS, ROW_BITS = 16, 17, 28  # + 2 outcome bits: 63, an int64's positive range
# what the order key holds, so what a dataset may hold (decision 298): more files or rows
# are refused (``read.files``, ``chunks``); a date outside the days is a bad row (schema)
MAX_FILES, MAX_ROWS = 2**FILE_BITS, 2**ROW_BITS
_AT = ROW_BITS + 2  # where the file index sits in the packed value


def query(lf: pl.LazyFrame, seed_key: list[str], free_win: pl.Expr) -> pl.LazyFrame:
    """One file's candidates: per (board, identified player) the earliest session of the
    file: ``sk`` (a hash of the board's key), ``player`` (a hash of the player id),
    ``day`` (days since 1970), ``row`` and ``outcome``."""
    return (lf.filter(pl.col("player_id").is_not_null())
            .select(pl.struct(seed_key).hash(7).alias("sk"),
                    pl.col("player_id").hash(11).alias("player"),
                    pl.col("date").str.to_date("%Y-%m-%d").cast(pl.Int64).alias("day"),
                    pl.col("row").cast(pl.Int64),
                    pl.when(pl.col("result") == "quit").then(QUIT)
                    .when(free_win).then(WON_FREE).otherwise(PLAYED)
                    .cast(pl.Int64).alias("outcome"))
            .sort("day", "row").unique(["sk", "player"], keep="first", maintain_order=True))


class Firsts:
    """The running first attempts: board hash -> (sorted player hashes, packed values)."""

    def __init__(self) -> None:
        self.boards: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def add(self, index: int, f: pl.DataFrame) -> None:
        """Merge file ``index``'s candidates (``query``; one chunk of the file or all of
        it): a pair already held keeps the smaller packed value (the earlier session); a
        new pair is inserted in order."""
        if not f.height:
            return
        day, row = f["day"].to_numpy(), f["row"].to_numpy()
        if (row.max() >= MAX_ROWS or index >= MAX_FILES or day.min() < 0
                or day.max() >= 2**DAY_BITS):  # refused or a bad row before it comes here
            raise RuntimeError("a first attempt's place does not fit its order key (a file "
                               f"of 2^{ROW_BITS} rows, 2^{FILE_BITS} files, or a date "
                               "before 1970 or after 2149)")
        packed = (((day << FILE_BITS) | index) << ROW_BITS | row) << 2 | f["outcome"].to_numpy()
        sk, player = f["sk"].to_numpy(), f["player"].to_numpy()
        order = np.lexsort((player, sk))
        sk, player, packed = sk[order], player[order], packed[order]
        starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
        for a, b in zip(starts, np.r_[starts[1:], len(sk)]):
            self._merge(int(sk[a]), player[a:b], packed[a:b], copy=True)

    def absorb(self, index: int, other: Firsts) -> None:
        """Merge ``other``, one file's first attempts gathered as file 0 (``add``, chunk by
        chunk), as file ``index``: its arrays are taken over, not copied."""
        if index >= MAX_FILES:
            raise RuntimeError(f"a file index past the order key's 2^{FILE_BITS} files")
        for sk, (player, packed) in other.boards.items():
            packed |= index << _AT  # the file bits of every value are 0
            self._merge(sk, player, packed, copy=False)
        other.boards = {}

    def _merge(self, sk: int, player: np.ndarray, packed: np.ndarray, copy: bool) -> None:
        held = self.boards.get(sk)
        if held is None:
            self.boards[sk] = (player.copy(), packed.copy()) if copy else (player, packed)
            return
        p, v = held
        at = np.searchsorted(p, player)
        found = at < len(p)
        found[found] = p[at[found]] == player[found]
        v[at[found]] = np.minimum(v[at[found]], packed[found])  # in place: the earlier
        new = ~found
        if new.any():
            self.boards[sk] = (np.insert(p, at[new], player[new]),
                               np.insert(v, at[new], packed[new]))

    def per_board(self, sums: pl.DataFrame, seed_key: list[str]) -> pl.DataFrame:
        """Per board of ``sums`` (its ``seed_key`` columns): ``players`` (identified
        players who played it), ``first_played`` (their first attempts, quits left out)
        and ``first_free_wins`` (those won with no tool and no revive)."""
        rows = [(sk, len(v), int(((v & 3) != QUIT).sum()), int(((v & 3) == WON_FREE).sum()))
                for sk, (_, v) in self.boards.items()]
        per = pl.DataFrame(rows, schema={"sk": pl.UInt64, "players": pl.Int64,
                                         "first_played": pl.Int64,
                                         "first_free_wins": pl.Int64}, orient="row")
        return (sums.select(*seed_key, pl.struct(seed_key).hash(7).alias("sk"))
                .join(per, on="sk", how="left").drop("sk")
                .with_columns(pl.col("players", "first_played", "first_free_wins")
                              .fill_null(0)))

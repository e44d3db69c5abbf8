"""Players' progression read from telemetry, and the funnel fitted to it (decision 259):
what ``minegen reconcile`` adds to reconcile.json as ``funnel`` (orchestration; the model
is ``model`` and ``fit``).

A player's history in a city: per level, the distinct sessions the player played there
(a ``quit`` is an attempt not passed) and whether one was a ``win``. A history is regular
when it starts at level 1 and every level before the last one played was won; others
(a player who started above level 1, or played on after a level never won: a second
device, a replay of an old revision) are counted and left out. Revisions of a level are
pooled. When there are many sessions, the players are a fixed sample, by a hash of their
id, of about ``SAMPLE_SESSIONS`` sessions' worth (the same data gives the same sample).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from ..telemetry import candidates, chunks, read, schema
from . import fit, model

LEVELS = 6
SAMPLE_SESSIONS = 200_000  # bounds the pass: its row rules run on the sample only
MIN_PLAYERS = 100  # regular histories in a city before its funnel is fitted


def histories(telemetry: Path, boards: pl.DataFrame, total: int) -> dict:
    """{"groups": {city: int[players, 6]} (``fit``'s records, in player-id order),
    "players", "irregular", "sampled" (the share of ids kept)}. The sample is taken on the
    raw text before any row is parsed, so a large input costs one scan of its ids; the
    sampled rows then follow reconcile's rules (bad rows out, the run's boards only,
    duplicates once)."""
    share = min(1.0, SAMPLE_SESSIONS / max(1, total))

    def query(lf: pl.LazyFrame) -> pl.LazyFrame:  # keeps its columns (``chunks.collect``)
        if share < 1.0:  # a fixed sample of players: the hash of the id, not a draw
            lf = lf.filter(pl.col("player_id").hash(seed=7) % 1_000_000
                           < int(share * 1_000_000))
        return (read.with_reason(lf).filter(pl.col("reason").is_null())
                .with_columns(schema.parsed()).filter(pl.col("player_id").is_not_null()))

    # file by file, as the tallies read them: a line no reader takes is a bad row there,
    # and here it is simply not a session
    kind, found = read.files(Path(telemetry))
    clean = pl.concat([chunks.collect(f, kind, query).select(schema.NAMES) for f in found])
    per = (clean.join(boards, on=[*schema.KEY, "seed"], how="semi").unique()
           .group_by("city_id", "player_id", "level_id")
           .agg(pl.len().alias("n"), (pl.col("result") == "win").any().alias("won"))
           .sort("city_id", "player_id", "level_id"))
    groups: dict[str, np.ndarray] = {}
    irregular = players = 0
    for (city,), g in per.group_by("city_id", maintain_order=True):
        ids = g["player_id"].to_numpy()
        first = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
        owner = np.repeat(np.arange(first.size), np.diff(np.r_[first, len(ids)]))
        lvl = g["level_id"].to_numpy()
        signed = np.where(g["won"].to_numpy(), 1, -1) * g["n"].to_numpy()
        rec = np.zeros((first.size, LEVELS), dtype=np.int64)
        rec[owner, lvl - 1] = signed
        ok = _regular(rec)
        irregular += int((~ok).sum())
        players += int(ok.sum())
        groups[city] = rec[ok]
    return {"groups": groups, "players": players, "irregular": irregular,
            "sampled": share}


def _regular(rec: np.ndarray) -> np.ndarray:
    """Histories that start at level 1, have no gap, and were won on every level before
    the last one played."""
    played = rec != 0
    last = LEVELS - 1 - np.argmax(played[:, ::-1], axis=1)
    cols = np.arange(LEVELS)
    before = cols[None, :] < last[:, None]
    return (played[:, 0] & (played == (cols[None, :] <= last[:, None])).all(1)
            & ((rec > 0) | ~before).all(1))


def part(telemetry: Path, run_dir: Path, total: int) -> dict:
    """reconcile.json's ``funnel``: the population fitted to the players' histories, its
    held-out error, and per city the observed and predicted funnel."""

    boards = candidates.board_figures(run_dir).select(*schema.KEY, "seed")
    h = histories(telemetry, boards, total)
    out: dict = {"players": h["players"], "irregular": h["irregular"],
                 "sampled": h["sampled"], "min_players": MIN_PLAYERS, "cities": {}}
    groups = {c: r for c, r in h["groups"].items() if r.shape[0] >= MIN_PLAYERS}
    if not groups:
        return out
    # a level no player reaches has no rate (0 / 0), and the search may try a parameter
    # at its edge (log 0): both are handled, neither is news for the person at the console
    with np.errstate(divide="ignore", invalid="ignore"):
        f = fit.fit(groups)
        out["params"] = vars(f["params"]).copy()
        out["held_out"] = fit.held_out(groups, start=f["params"])
        for c, rec in groups.items():
            obs, pred = fit.observed(rec), model.predict(f["lam"][c], f["params"])
            out["cities"][c] = {"players": int(rec.shape[0]),
                                "observed": {k: _figures(obs[k]) for k in
                                             ("reach", "attempts", "pass_rate")},
                                "predicted": {k: _figures(pred[k]) for k in
                                              ("reach", "attempts", "pass_rate", "churn")},
                                "lam": _figures(f["lam"][c])}
    return out


def _figures(values) -> list[float | None]:
    """A level's figures as JSON numbers; null where none exists (a rate of a level no
    player reached): reconcile.json stays JSON that any reader parses (no NaN)."""
    return [float(x) if np.isfinite(x) else None for x in values]

"""Synthetic players with a curve (decision 257; docs/telemetry.md, "Synthetic telemetry"):
a population walks each city's levels in order, as a live game's players do, so that its
sessions hold a pass-rate curve that falls as the bots' does, tool use that rises with
difficulty, a skill distribution, repeat attempts and quitting. What ``tilegen telemetry
synth`` writes; every file says it is synthetic (``synth.write``: the ``source`` column,
the file name, ``planted.json``).

The model (``Players``; logit scale throughout):

- a board's difficulty is F, its scripted tool-free pass rate (``tool_free_pass_rate``:
  the three strategies together, what the audit compares ``target_pass_rate`` with); a
  player of skill s clears an attempt without tools with probability
  ``logistic(a + b logit(F) + s)``: the planted mapping, s = 0 the median player;
- skill s ~ Normal(0, ``skill_sd``), one per player, for every level of the city;
- a player gets one board of each row (the production board or an audit board, uniform)
  and replays it until passing it or leaving;
- an attempt not cleared without tools gets stuck at a fail step (around the bots' mean
  fail step of the board); the player reaches for the tools with probability
  ``tool_reach`` (Undo, Remove, Shuffle: one use each at most, the budget of A-3), which
  rescue with probability ``rescue``; else, or when they fail, revives with probability
  ``revive_rate``, which rescues with probability ``rescue``. Rescued: ``win`` (its tool
  uses or ``revived`` say how); else ``fail``. Harder boards get stuck more often, so
  tools per session rise with difficulty;
- after a ``fail`` the player tries again with probability ``persistence``, else leaves
  the game; a leaving player's last session is ``quit`` (abandoned mid-board, no
  outcome) with probability ``quit_share``;
- after passing a level below the last the player leaves with probability ``boredom``;
- ``anomalies`` planted boards have their median player's tool-free rate moved by
  ``shift`` (down, or up when that would leave [0.02, 0.98]).

Draws come from the project's stream (PCG32, docs/tile-draw-protocol.md §1): player i
(numbered across cities in table order) draws skill, boards and start day from stream i;
its attempt k at level L from stream ``2^61 + (6 i + L - 1) (max_attempts + 1) + k - 1``
(k = max_attempts + 1: whether it leaves after passing L); the
planted boards from ``Pcg32(seed, 2^62)`` (as ``synth``). Each draw is tied to its stream,
not to the order of the vectorised loop, so the same arguments write the same bytes.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from . import schema
from .synth import SOURCE, logistic, logit, plant, uniforms_at

LEVELS = 6
ATTEMPT_BASE = 2**61
PLAYER_DRAWS = 2 + LEVELS + 1  # skill (2), a board per level, start day
ATTEMPT_DRAWS = 13
MAX_PLAYERS = 2_000_000  # per city: the sessions of one city stay within a few GB


@dataclass(frozen=True)
class Players:
    a: float = -0.4  # the planted mapping: logistic(a + b logit(F) + s)
    b: float = 1.1
    skill_sd: float = 0.8
    persistence: float = 0.8  # another attempt after a fail
    boredom: float = 0.04  # leaving after a passed level (below the last)
    quit_share: float = 0.3  # of the sessions that end a player's game after a fail
    tool_reach: float = 0.6  # reaching for the tools when stuck
    rescue: float = 0.5  # tools, or a revive, turn a stuck attempt into a win
    revive_rate: float = 0.3
    shift: float = 0.25
    anomalies: int = 4
    max_attempts: int = 60  # attempts of one level at the most (0.8^60: none reaches it)


def rate(b: pl.DataFrame, model: Players) -> np.ndarray:
    """Per board: the median player's tool-free pass rate of one attempt (the planted
    mapping on the board's scripted tool-free pass rate)."""
    return logistic(model.a + model.b * logit(b["tool_free"].to_numpy()))


def sessions(b: pl.DataFrame, players: int, days: int, model: Players, seed: int,
             start: str = "2026-11-01") -> tuple[pl.DataFrame, dict]:
    """(sessions, planted): ``players`` players per city walk its levels from level 1 on
    the boards ``b`` (``synth.boards``), over ``days`` days."""
    true = rate(b, model)
    planted, moved = plant(true, model, seed)
    eta = logit(moved)  # clipped to [0.01, 0.99]: a planted rate stays a rate
    cities = sorted(set(b["city_id"].to_list()))
    board_of = _board_index(b, cities)  # [city, level] -> the row's board indices
    n = players * len(cities)
    city = np.repeat(np.arange(len(cities)), players)
    u = uniforms_at(seed, np.arange(n, dtype=np.uint64), PLAYER_DRAWS)
    skill = model.skill_sd * np.sqrt(-2 * np.log1p(-u[0])) * np.cos(2 * np.pi * u[1])
    first_day = (u[PLAYER_DRAWS - 1] * days).astype(np.int64)
    played = np.zeros(n, dtype=np.int64)  # sessions so far (the day advances with them)
    parts: list[dict[str, np.ndarray]] = []
    active = np.arange(n)
    for level in range(1, LEVELS + 1):
        boards = np.full(n, -1)
        for c in range(len(cities)):
            idx = board_of.get((c, level))
            sel = active[city[active] == c]
            if idx is None:  # the city has no such row: its players stop here
                active = active[city[active] != c]
                continue
            boards[sel] = idx[(u[1 + level][sel] * len(idx)).astype(np.int64)]
        trying = active
        passed = np.zeros(n, dtype=bool)
        for k in range(1, model.max_attempts + 1):
            if not trying.size:
                break
            part, win, stay = _attempt(model, b, eta, skill, boards, trying, level, k, seed)
            part["day"] = np.minimum(first_day[trying] + played[trying] // 3, days - 1)
            played[trying] += 1
            parts.append(part)
            passed[trying[win]] = True
            trying = trying[~win & stay]
        active = active[passed[active]]
        if level < LEVELS:  # boredom: some who passed leave before the next level
            v = uniforms_at(seed, _stream(active, level, model.max_attempts + 1,
                                          model.max_attempts + 1), 1)[0]
            active = active[v >= model.boredom]
    frame = _frame(b, parts, start)
    keys = b.select("city_id", "level_id", "revision", "seed", "seed_index").to_dicts()
    info = {"synthetic": True, "model": {"name": "players with a curve", **asdict(model)},
            "seed": seed, "players_per_city": players, "days": days,
            "mapping": "a player of skill s clears an attempt without tools with "
                       "logistic(a + b * logit(board's scripted tool-free pass rate) + s), "
                       "s ~ Normal(0, skill_sd)",
            "abnormal_boards": [{**{k: (str(v) if k == "seed" else v)
                                    for k, v in keys[i].items()},
                                 "true_rate": float(true[i]), "planted_rate": float(moved[i])}
                                for i in planted]}
    return frame, info


def _stream(players: np.ndarray, level: int, k: int, cap: int) -> np.ndarray:
    return (np.uint64(ATTEMPT_BASE) + ((players.astype(np.uint64) * np.uint64(LEVELS)
                                        + np.uint64(level - 1)) * np.uint64(cap)
                                       + np.uint64(k - 1)))


def _board_index(b: pl.DataFrame, cities: list[str]) -> dict[tuple[int, int], np.ndarray]:
    """(city number, level) -> indices of that row's boards in ``b`` (the first revision
    the table holds for the level: a player meets one row per level)."""
    out: dict[tuple[int, int], np.ndarray] = {}
    cid, lvl, rev = (b[c].to_numpy() for c in ("city_id", "level_id", "revision"))
    for c, name in enumerate(cities):
        for level in range(1, LEVELS + 1):
            mine = np.flatnonzero((cid == name) & (lvl == level))
            if mine.size:
                out[(c, level)] = mine[rev[mine] == rev[mine].min()]
    return out


OUTCOMES = ("win", "quit", "fail")  # an attempt's result, by the code ``_attempt`` gives


def _attempt(model: Players, b: pl.DataFrame, eta: np.ndarray, skill: np.ndarray,
             boards: np.ndarray, who: np.ndarray, level: int, k: int, seed: int):
    """One attempt of the players ``who`` at ``level``: its session columns, who won, and
    who (of those who did not win) tries again."""
    u = uniforms_at(seed, _stream(who, level, k, model.max_attempts + 1), ATTEMPT_DRAWS)
    bd = boards[who]
    clear = u[0] < logistic(eta[bd] + skill[who])
    stuck = ~clear
    reach = stuck & (u[1] < model.tool_reach)
    undo, remove, shuffle = reach & (u[2] < 0.6), reach & (u[3] < 0.7), reach & (u[4] < 0.4)
    remove |= reach & ~undo & ~shuffle  # reaching uses at least one tool
    by_tools = reach & (u[5] < model.rescue)
    revive = stuck & ~by_tools & (u[6] < model.revive_rate)
    win = clear | by_tools | (revive & (u[7] < model.rescue))
    stay = u[8] < model.persistence
    quit_ = ~win & ~stay & (u[9] < model.quit_share)
    pieces = b["pieces"].to_numpy()[bd]
    # the slot (7 cells) fills at click 7 at the earliest: no attempt is stuck before it
    step = np.clip(np.round(b["fail_step"].to_numpy()[bd] + 6 * (u[10] - 0.5)), 7, pieces - 1)
    peak = np.clip(np.round(b["peak"].to_numpy()[bd] + 2 * u[11] - 0.5), 0, schema.MAX_SLOT)
    part = {"board": bd, "player": who, "level": np.full(who.size, level),
            "attempt": np.full(who.size, k),
            "result": np.where(win, 0, np.where(quit_, 1, 2)).astype(np.int8),  # OUTCOMES
            "revived": revive.astype(np.int64), "undo_uses": undo.astype(np.int64),
            "remove_uses": remove.astype(np.int64), "shuffle_uses": shuffle.astype(np.int64),
            "peak_slot_usage": np.where(stuck & ~quit_, schema.MAX_SLOT, peak).astype(np.int64),
            "time_spent_sec": np.round(b["duration"].to_numpy()[bd] * (0.5 + u[12]), 1),
            "first_fail_step": np.where(stuck & ~quit_, step, np.nan)}
    return part, win, stay


def _frame(b: pl.DataFrame, parts: list[dict], start: str) -> pl.DataFrame:
    """The sessions in (player, level, attempt) order, as the schema declares them. Text
    columns are gathered from their few distinct values by Polars (a board's, an outcome's)
    or formatted by it (the date, the player id), not built as NumPy strings."""
    cols = pl.DataFrame({k: np.concatenate([p[k] for p in parts]) for k in parts[0]}).sort(
        "player", "level", "attempt")  # one row each: the order is total
    board = b.select("city_id", "level_id", "revision",
                     pl.col("seed").cast(pl.UInt64))[cols["board"]]
    return board.with_columns(cols.select(
        pl.lit(pl.Series(OUTCOMES)).get(pl.col("result")).alias("result"),
        "revived", "peak_slot_usage", "undo_uses", "remove_uses", "shuffle_uses",
        "time_spent_sec", pl.col("first_fail_step").cast(pl.Int64, strict=False),
        (pl.lit(dt.date.fromisoformat(start)) + pl.duration(days=pl.col("day")))
        .cast(pl.String).alias("date"),
        pl.format("p{}", "player").alias("player_id"),
        pl.lit(SOURCE).alias("source")))

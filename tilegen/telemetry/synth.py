"""A synthetic player model for tests and demos (decision 197; docs/telemetry.md). Every
file it writes says it is synthetic: a ``source`` column with the value "synthetic" on every
row, the file name, and a ``planted.json`` beside the data naming the model and its planted
anomalies.

The model, per board (a row's production board and its audit boards 0 .. seeds-2, with the
figures tilegen computes for them):

- the players' true pass rate is ``logistic(a + b * logit(q))``, q the board's best
  strategy's tool-free pass rate (clipped to [0.01, 0.99]): the planted mapping a
  calibration must recover;
- a planted abnormal board has its true rate moved by ``shift`` (down, or up when that
  would leave [0.02, 0.98]);
- each session: the player quits with probability ``quit_rate`` (result "quit"); else wins
  with the true rate; a loss is "fail" (first_fail_step: a click drawn around the board's
  mean fail step), and a win after a revive is drawn with probability ``revive_rate``;
  tool uses, peak slot and time are drawn from simple distributions around the board's
  simulated figures.

Draws come from the project's stream (PCG32, docs/tile-draw-protocol.md §1): session i draws
from ``pcg32_srandom_r(seed, i)``, computed for all sessions at once on numpy's wrapping
uint64 arithmetic (``uniforms``); the planted boards from ``Pcg32(seed, 2^62)``. The same
arguments write the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl

from . import schema

SOURCE = "synthetic"


@dataclass(frozen=True)
class Model:
    a: float = 0.3  # the planted mapping: logistic(a + b logit(q))
    b: float = 0.8
    quit_rate: float = 0.05
    revive_rate: float = 0.15
    shift: float = 0.25  # how far a planted abnormal board's true rate moves
    anomalies: int = 4  # planted abnormal boards


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def logit(p):
    p = np.clip(p, 0.01, 0.99)
    return np.log(p / (1.0 - p))


def true_rate(q: np.ndarray, model: Model) -> np.ndarray:
    """The planted mapping from the bot's best tool-free rate to the players' pass rate."""
    return logistic(model.a + model.b * logit(np.asarray(q, dtype=np.float64)))


def boards(catalog, seeds: int) -> pl.DataFrame:
    """The boards the synthetic players play: per row the production board and audit
    boards 0 .. seeds-2, with the figures the model reads (from tilegen's records)."""
    from ..batch import run_block
    from ..table_loader import plans

    out = []
    for plan in plans(catalog, sorted(catalog.keys())):
        c = run_block(plan, -1, seeds)
        for i in range(seeds):
            fail = c["mean_fail_step"][i]
            out.append({"city_id": plan.city_id, "level_id": plan.level_id,
                        "revision": plan.revision, "seed": int(c["stream_seed"][i]),
                        "seed_index": int(c["seed_index"][i]),
                        "q_best": float(max(c["pass_rate_match_first"][i],
                                            c["pass_rate_slot_build"][i],
                                            c["pass_rate_risk_averse"][i])),
                        "peak": float(c["avg_peak_slot_usage"][i]),
                        "tool_free": float(c["tool_free_pass_rate"][i]),
                        "fail_step": float(fail) if fail == fail else plan.total_pieces / 2,
                        "pieces": plan.total_pieces,
                        "duration": (sum(plan.target_duration_sec) / 2
                                     if plan.target_duration_sec else 120.0)})
    return pl.DataFrame(out, schema_overrides={"seed": pl.UInt64})


MULT = np.uint64(6364136223846793005)


def uniforms(seed: int, n: int, k: int) -> np.ndarray:
    """float64[k, n] in [0, 1): the first k outputs / 2^32 of the PCG32 streams
    ``pcg32_srandom_r(seed, i)``, i = 0 .. n-1 (the protocol's seeding and output step)."""
    return uniforms_at(seed, np.arange(n, dtype=np.uint64), k)


def uniforms_at(seed: int, streams: np.ndarray, k: int) -> np.ndarray:
    """float64[k, len(streams)]: as ``uniforms``, of the given stream ids (each < 2^63)."""
    n = len(streams)
    with np.errstate(over="ignore"):
        inc = (np.asarray(streams, dtype=np.uint64) << np.uint64(1)) | np.uint64(1)
        state = inc.copy()  # state = 0; step: 0 * MULT + inc
        state = state + np.uint64(seed % 2**64)
        state = state * MULT + inc
        out = np.empty((k, n))
        for j in range(k):
            old = state
            state = old * MULT + inc
            x = (((old >> np.uint64(18)) ^ old) >> np.uint64(27)) & np.uint64(0xFFFFFFFF)
            rot = old >> np.uint64(59)
            r = ((x >> rot) | (x << ((np.uint64(32) - rot) & np.uint64(31)))) \
                & np.uint64(0xFFFFFFFF)
            out[j] = r / 2.0**32
    return out


def plant(rate: np.ndarray, model: Model, seed: int) -> tuple[list[int], np.ndarray]:
    """(the planted boards, in order; every board's rate with theirs moved): ``anomalies``
    distinct boards drawn from the seed's own stream, each moved by ``shift`` (down, or up
    where down would leave under 0.02). Both player models plant this way."""
    from boardcore.streams import Pcg32

    pick = Pcg32(seed, 2**62)
    planted: list[int] = []
    while len(planted) < min(model.anomalies, rate.size):
        i = pick.bounded(rate.size)
        if i not in planted:
            planted.append(i)
    planted.sort()
    moved = rate.copy()
    for i in planted:
        moved[i] = rate[i] - model.shift if rate[i] - model.shift >= 0.02 else rate[i] + model.shift
    return planted, moved


def sessions(b: pl.DataFrame, per_board: int, days: int, model: Model, seed: int,
             start: str = "2026-11-01") -> tuple[pl.DataFrame, dict]:
    """(sessions, planted): ``per_board`` sessions on each board over ``days`` days."""
    n_boards = b.height
    rate = true_rate(b["q_best"].to_numpy(), model)
    planted, moved = plant(rate, model, seed)
    idx = np.repeat(np.arange(n_boards), per_board)
    n = idx.size
    u = uniforms(seed, n, 11)
    quit_ = u[0] < model.quit_rate
    win = ~quit_ & (u[1] < moved[idx])
    revived = (win & (u[2] < model.revive_rate)).astype(np.int64)
    result = np.where(quit_, "quit", np.where(win, "win", "fail"))
    pieces = b["pieces"].to_numpy()[idx]
    step = np.clip(np.round(b["fail_step"].to_numpy()[idx] + 6 * (u[3] - 0.5)), 6, pieces - 1)
    day = np.datetime64(start) + (u[4] * days).astype(np.int64).astype("timedelta64[D]")
    frame = pl.DataFrame({
        "city_id": b["city_id"].to_numpy()[idx], "level_id": b["level_id"].to_numpy()[idx],
        "revision": b["revision"].to_numpy()[idx], "seed": b["seed"].to_numpy()[idx],
        "result": result, "revived": revived,
        "peak_slot_usage": np.clip(np.round(b["peak"].to_numpy()[idx] + 2 * u[5] - 0.5),
                                   0, schema.MAX_SLOT).astype(np.int64),
        "undo_uses": (u[6] < 0.3).astype(np.int64), "remove_uses": (u[7] < 0.2).astype(np.int64),
        "shuffle_uses": (u[8] < 0.1).astype(np.int64),
        "time_spent_sec": np.round(b["duration"].to_numpy()[idx] * (0.5 + u[9]), 1),
        "first_fail_step": np.where(result == "fail", step, np.nan),
        "date": day.astype(str),
        "player_id": np.char.add("p", (u[10] * max(1, n // 20)).astype(np.int64).astype(str)),
        "source": SOURCE,
    }).with_columns(pl.col("first_fail_step").cast(pl.Int64, strict=False),
                    pl.col("seed").cast(pl.UInt64))
    keys = b.select("city_id", "level_id", "revision", "seed", "seed_index").to_dicts()
    info = {"synthetic": True, "model": asdict(model), "seed": seed,
            "sessions_per_board": per_board, "days": days,
            "mapping": "player pass rate = logistic(a + b * logit(best strategy's tool-free "
                       "pass rate))",
            "abnormal_boards": [{**{k: (str(v) if k == "seed" else v)
                                    for k, v in keys[i].items()},
                                 "true_rate": float(rate[i]), "planted_rate": float(moved[i])}
                                for i in planted]}
    return frame, info


def write(out: Path, frame: pl.DataFrame, info: dict) -> list[Path]:
    """The sessions as ``synthetic-sessions.parquet`` and ``planted.json`` in ``out`` (a
    folder ``boardcore.output.usable_folder`` accepted), each written whole or not at all."""
    from boardcore.output import write_file

    data = write_file(out / "synthetic-sessions.parquet", frame.write_parquet, "--out",
                      "telemetry")
    meta = write_file(out / "planted.json", json.dumps(info, indent=1) + "\n", "--out",
                      "telemetry")
    return [data, meta]

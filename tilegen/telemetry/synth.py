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

Draws come from numpy's PCG64 seeded by ``seed``: the same arguments write the same bytes.
"""

from __future__ import annotations

import json
import math
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
                        "fail_step": float(fail) if fail == fail else plan.total_pieces / 2,
                        "pieces": plan.total_pieces,
                        "duration": (sum(plan.target_duration_sec) / 2
                                     if plan.target_duration_sec else 120.0)})
    return pl.DataFrame(out, schema_overrides={"seed": pl.UInt64})


def sessions(b: pl.DataFrame, per_board: int, days: int, model: Model, seed: int,
             start: str = "2026-11-01") -> tuple[pl.DataFrame, dict]:
    """(sessions, planted): ``per_board`` sessions on each board over ``days`` days."""
    rng = np.random.default_rng(seed)
    n_boards = b.height
    planted = sorted(rng.choice(n_boards, size=min(model.anomalies, n_boards),
                                replace=False).tolist())
    rate = true_rate(b["q_best"].to_numpy(), model)
    moved = rate.copy()
    for i in planted:
        moved[i] = rate[i] - model.shift if rate[i] - model.shift >= 0.02 else rate[i] + model.shift
    idx = np.repeat(np.arange(n_boards), per_board)
    n = idx.size
    quit_ = rng.random(n) < model.quit_rate
    win = ~quit_ & (rng.random(n) < moved[idx])
    revived = (win & (rng.random(n) < model.revive_rate)).astype(np.int64)
    result = np.where(quit_, "quit", np.where(win, "win", "fail"))
    pieces = b["pieces"].to_numpy()[idx]
    step = np.clip(np.round(rng.normal(b["fail_step"].to_numpy()[idx], 3.0)), 6, pieces - 1)
    day = np.datetime64(start) + rng.integers(0, days, n).astype("timedelta64[D]")
    frame = pl.DataFrame({
        "city_id": b["city_id"].to_numpy()[idx], "level_id": b["level_id"].to_numpy()[idx],
        "revision": b["revision"].to_numpy()[idx], "seed": b["seed"].to_numpy()[idx],
        "result": result, "revived": revived,
        "peak_slot_usage": np.clip(np.round(rng.normal(b["peak"].to_numpy()[idx] + 1, 1.0)),
                                   0, schema.MAX_SLOT).astype(np.int64),
        "undo_uses": rng.binomial(1, 0.3, n), "remove_uses": rng.binomial(1, 0.2, n),
        "shuffle_uses": rng.binomial(1, 0.1, n),
        "time_spent_sec": np.round(rng.gamma(4.0, b["duration"].to_numpy()[idx] / 4.0), 1),
        "first_fail_step": np.where(result == "fail", step, np.nan),
        "date": day.astype(str), "player_id": np.char.add("p", rng.integers(0, max(1, n // 20),
                                                                            n).astype(str)),
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
    """The sessions as ``synthetic-sessions.parquet`` and ``planted.json`` in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data = out / "synthetic-sessions.parquet"
    frame.write_parquet(data)
    meta = out / "planted.json"
    meta.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return [data, meta]


assert math.isclose(float(true_rate(np.array([0.5]), Model(a=0.0, b=1.0))[0]), 0.5)

"""The progression funnel (decision 258; docs/telemetry.md, "The progression funnel"): a
population model of players who walk a city's levels in order, in the spirit of Roohi et
al. (CHI PLAY 2020), who predicted a live puzzle game's per-level pass and churn rates from
a simulated population with skill, persistence and boredom. Numpy only; no I/O.

The model (``Params``), per city:

- a player has a skill s ~ Normal(0, ``skill_sd``) (logit scale), the same on every level;
- on level L each attempt is passed with p = logistic(lam[L] + s): lam[L] is the level's
  difficulty, logistic(lam[L]) the median player's pass rate per attempt;
- after a failed attempt the player tries again with probability ``persistence``, else
  leaves (churns) at that level;
- after passing a level below the last the player leaves with probability ``boredom``.

So a player of skill s who reaches L passes it with P = p / (1 - (1 - p) persistence),
after 1 / (1 - (1 - p) persistence) attempts on average, and reaches L + 1 with
P (1 - boredom). The population's figures integrate over s by Gauss-Hermite quadrature
(``NODES`` nodes), so they are exact up to that rule, and the skill of those who reach a
level is the skill of survivors (good players go further). ``simulate`` draws players
from the same model, for the fit's known truth.

Assumptions: attempts of one level are alike (no learning between attempts); a player's
skill is one number for the city; every player starts at level 1; the telemetry the model
is fitted to holds players' whole histories (a player still playing when the data ends
counts as having left).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NODES = 24  # Gauss-Hermite nodes: the figures move < 1e-4 from 24 to 80


@dataclass(frozen=True)
class Params:
    skill_sd: float = 0.8
    persistence: float = 0.8
    boredom: float = 0.04


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def logit(p):
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def nodes(skill_sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Skill values and their weights (summing to 1) for Normal(0, skill_sd)."""
    x, w = np.polynomial.hermite_e.hermegauss(NODES)
    return skill_sd * x, w / w.sum()


def per_skill(lam: np.ndarray, prm: Params) -> dict[str, np.ndarray]:
    """[..., level, node] arrays for each skill node (``lam``: [..., level], e.g. one row
    per city): the pass rate per attempt, the chance to pass a reached level, the expected
    attempts there, and the chance to reach it."""
    s, _ = nodes(prm.skill_sd)
    p = logistic(np.asarray(lam, dtype=np.float64)[..., None] + s)
    keep = (1 - p) * prm.persistence
    passed = p / (1 - keep)
    attempts = 1 / (1 - keep)
    reach = np.ones_like(p)
    for i in range(1, p.shape[-2]):
        reach[..., i, :] = reach[..., i - 1, :] * passed[..., i - 1, :] * (1 - prm.boredom)
    return {"p": p, "passed": passed, "attempts": attempts, "reach": reach}


def predict(lam, prm: Params) -> dict[str, np.ndarray]:
    """Per level (arrays shaped as ``lam``: [..., level]): ``reach``, the share of
    starting players who reach it; ``attempts``, attempts per player who reaches it;
    ``pass_rate``, passed attempts / attempts (what telemetry observes per level);
    ``churn``, the share of those who reach it who leave there (after failing, or bored
    after passing; at the last level, those who never pass it); ``complete``, the share of
    starters who pass the last level."""
    k = per_skill(lam, prm)
    _, w = nodes(prm.skill_sd)
    reach = k["reach"] @ w
    attempts = (k["reach"] * k["attempts"]) @ w
    passes = (k["reach"] * k["passed"]) @ w
    going_on = passes * (1 - prm.boredom)
    going_on[..., -1] = passes[..., -1]
    return {"reach": reach, "attempts": attempts / reach, "pass_rate": passes / attempts,
            "churn": 1 - going_on / reach, "complete": passes[..., -1]}


def lam_from_median(rates) -> np.ndarray:
    """Level difficulties from the median player's pass rate per attempt."""
    return logit(rates)


def lam_from_pass_rates(rates, prm: Params) -> np.ndarray:
    """Level difficulties ([..., level]) whose predicted per-attempt pass rate (passed
    attempts / attempts of the players who reach the level) equals ``rates``: level by
    level, by bisection (the rate rises with lam; who reaches a level, and so their
    skill, follows from the levels before it)."""
    rates = np.clip(np.asarray(rates, dtype=np.float64), 1e-4, 1 - 1e-4)
    s, w = nodes(prm.skill_sd)
    lam = np.zeros_like(rates)
    reach = np.ones((*rates.shape[:-1], len(s)))
    for i in range(rates.shape[-1]):
        lo, hi = np.full(rates.shape[:-1], -12.0), np.full(rates.shape[:-1], 12.0)
        for _ in range(32):  # 24 / 2^32: far below any figure's digits
            mid = (lo + hi) / 2
            p = logistic(mid[..., None] + s)
            tries = reach / (1 - (1 - p) * prm.persistence)
            low = ((tries * p) @ w) / (tries @ w) < rates[..., i]
            lo, hi = np.where(low, mid, lo), np.where(low, hi, mid)
        lam[..., i] = (lo + hi) / 2
        p = logistic(lam[..., i, None] + s)
        reach = reach * p / (1 - (1 - p) * prm.persistence) * (1 - prm.boredom)
    return lam


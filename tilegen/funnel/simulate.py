"""Players drawn from the funnel's model (``model``), for a known truth: the fit's tests and
its held-out checks. Draws come from the project's stream (PCG32, as the synthetic
telemetry's, ``telemetry.synth.uniforms_at``): player i's skill from stream i, its
attempt k at level L from stream ``2^61 + (6 i + L - 1) * 64 + k - 1`` (k = 64: whether
it leaves after passing L), so the same arguments give the same histories."""

from __future__ import annotations

import numpy as np

from ..telemetry.synth import uniforms_at
from .model import Params, logistic

BASE = 2**61
CAP = 64  # attempts of one level at the most, and the boredom draw's slot


def _streams(players: np.ndarray, level: int, k: int) -> np.ndarray:
    return (np.uint64(BASE) + (players.astype(np.uint64) * np.uint64(6)
                               + np.uint64(level)) * np.uint64(CAP) + np.uint64(k - 1))


def progression(lam, prm: Params, players: int, seed: int) -> np.ndarray:
    """int[players, levels]: attempts each player made at each level (0: never reached
    it); a negative count is the level the player left after failing it (``fit``'s
    records). At most ``CAP - 1`` attempts a level (a player still trying then leaves)."""
    u = uniforms_at(seed, np.arange(players, dtype=np.uint64), 2)
    s = prm.skill_sd * np.sqrt(-2 * np.log1p(-u[0])) * np.cos(2 * np.pi * u[1])
    out = np.zeros((players, len(lam)), dtype=np.int64)
    alive = np.arange(players)
    for i, lv in enumerate(lam):
        tries = np.zeros(players, dtype=np.int64)
        passed = np.zeros(players, dtype=bool)
        trying = alive
        for k in range(1, CAP):
            if not trying.size:
                break
            d = uniforms_at(seed, _streams(trying, i, k), 2)
            tries[trying] += 1
            win = d[0] < logistic(lv + s[trying])
            passed[trying[win]] = True
            trying = trying[~win & (d[1] < prm.persistence)]
        out[alive, i] = np.where(passed[alive], tries[alive], -tries[alive])
        alive = alive[passed[alive]]
        if i < len(lam) - 1 and alive.size:
            bored = uniforms_at(seed, _streams(alive, i, CAP), 1)[0] < prm.boredom
            alive = alive[~bored]
    return out

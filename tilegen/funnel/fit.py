"""The funnel's population fitted to players' progression (decision 259): skill spread,
persistence and boredom by maximum likelihood, each level's difficulty set so that the
model's per-attempt pass rate equals the one observed (``model.lam_from_pass_rates``), and
the held-out error of the share of players reaching each level. Numpy only.

A progression is int[players, levels] per city: the attempts a player made at each level
(0: never reached it); a negative count is a level the player left after failing it (the
last level they played). ``progress.histories`` reads these from telemetry;
``simulate.progression`` makes them for a known truth.

A player's likelihood, given skill s (p_L = logistic(lam[L] + s), pi persistence, beta
boredom): a passed level after a attempts ((1 - p) pi)^(a - 1) p, then 1 - beta to go on
(or beta when the history stops there, below the last level); a level left after a failed
attempts ((1 - p) pi)^(a - 1) (1 - p) (1 - pi). It is integrated over s by the model's
quadrature. The optimiser is Nelder-Mead on (log skill_sd, logit persistence, logit
boredom), started from the model's defaults.
"""

from __future__ import annotations

import numpy as np

from . import model as m

FOLDS = 5


def observed(rec: np.ndarray) -> dict[str, np.ndarray]:
    """Per level: players who reached it, attempts, passed attempts, and the shares and
    rates the model predicts, as the records show them."""
    a = np.abs(rec)
    players = (a > 0).sum(0)
    attempts = a.sum(0)
    passes = (rec > 0).sum(0)
    n = max(1, rec.shape[0])
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"players": players, "attempts_total": attempts, "passes": passes,
                "reach": players / n, "attempts": attempts / np.maximum(players, 1),
                "pass_rate": np.where(attempts > 0, passes / np.maximum(attempts, 1), np.nan)}


def _patterns(rec: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct histories and how many players share each (the likelihood is summed
    once per history), in lexicographic order: what ``np.unique(rec, axis=0,
    return_counts=True)`` gives -- the same rows, order and counts -- five times faster
    (np.unique sorts the rows as records; a reconcile's fit asks six times). The likelihood
    sums in this order, so it is the same to the last bit (tests/test_funnel.py holds the
    two equal)."""
    if not rec.size:
        return rec.reshape(0, rec.shape[1] if rec.ndim == 2 else 0), np.zeros(0)
    rows = rec[np.lexsort(rec.T[::-1])]  # the first column the primary key
    new = np.empty(len(rows), dtype=bool)
    new[0] = True
    np.any(rows[1:] != rows[:-1], axis=1, out=new[1:])
    starts = np.flatnonzero(new)
    return rows[starts], np.diff(np.r_[starts, len(rows)]).astype(np.float64)


def loglik(rec: np.ndarray, count: np.ndarray, lam: np.ndarray, prm: m.Params) -> float:
    s, w = m.nodes(prm.skill_sd)
    p = m.logistic(lam[:, None] + s)  # [level, node]
    a = np.abs(rec)
    levels = rec.shape[1]
    ll = np.zeros((rec.shape[0], len(s)))
    stay = np.log((1 - p) * prm.persistence)
    for i in range(levels):
        ai = a[:, i:i + 1].astype(np.float64)
        won, lost = rec[:, i] > 0, rec[:, i] < 0
        rep = (ai - 1) * stay[i]
        ll += np.where(won[:, None], rep + np.log(p[i]), 0.0)
        ll += np.where(lost[:, None], rep + np.log1p(-p[i]) + np.log1p(-prm.persistence), 0.0)
        if i < levels - 1:
            on = won & (rec[:, i + 1] != 0)
            off = won & (rec[:, i + 1] == 0)
            ll += np.where(on, np.log1p(-prm.boredom), 0.0)[:, None]
            ll += np.where(off, np.log(prm.boredom), 0.0)[:, None]
    top = ll.max(1, keepdims=True)
    return float(count @ (top[:, 0] + np.log(np.exp(ll - top) @ w)))


def _params(theta: np.ndarray) -> m.Params:
    return m.Params(skill_sd=float(np.exp(theta[0])),
                    persistence=float(m.logistic(theta[1])),
                    boredom=float(m.logistic(theta[2])))


def _theta(prm: m.Params) -> np.ndarray:
    return np.array([np.log(prm.skill_sd), m.logit(prm.persistence), m.logit(prm.boredom)])


def _nelder_mead(f, x0: np.ndarray, step: float = 0.4, iters: int = 300,
                 tol: float = 1e-6) -> np.ndarray:
    """The minimum of ``f`` near ``x0`` (the standard simplex moves; deterministic)."""
    pts = [x0] + [x0 + step * e for e in np.eye(len(x0))]
    vals = [f(x) for x in pts]
    for _ in range(iters):
        order = np.argsort(vals)
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tol * (1 + abs(vals[0])):
            break
        centre = np.mean(pts[:-1], axis=0)
        refl = centre + (centre - pts[-1])
        fr = f(refl)
        if fr < vals[0]:
            exp = centre + 2 * (centre - pts[-1])
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = centre + 0.5 * (pts[-1] - centre)
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:  # shrink towards the best
                pts = [pts[0]] + [pts[0] + 0.5 * (x - pts[0]) for x in pts[1:]]
                vals = [vals[0]] + [f(x) for x in pts[1:]]
    return pts[int(np.argmin(vals))]


def fit(groups: dict[str, np.ndarray], start: m.Params = m.Params(),
        step: float = 0.4) -> dict:
    """The population shared by the groups (cities: ``{city: records}``): skill spread,
    persistence and boredom, and per city its levels' difficulties (``lam``, from its own
    observed per-attempt pass rates). ``start`` and ``step``: the optimiser's first point
    and simplex size (a warm start near a known fit takes a smaller step)."""
    pats = {c: _patterns(r) for c, r in groups.items() if r.shape[0]}
    names = list(pats)
    # a level no player reached has no rate: any value will do (no history reads it)
    rates = np.array([np.nan_to_num(observed(groups[c])["pass_rate"], nan=0.5)
                      for c in names])

    def lams(prm: m.Params) -> dict[str, np.ndarray]:
        return dict(zip(names, m.lam_from_pass_rates(rates, prm))) if names else {}

    def cost(theta: np.ndarray) -> float:
        prm = _params(theta)
        lam = lams(prm)
        return -sum(loglik(u, n, lam[c], prm) for c, (u, n) in pats.items())

    best = _params(_nelder_mead(cost, _theta(start), step))
    return {"params": best, "lam": lams(best), "players": int(sum(
        n.sum() for _, n in pats.values())), "loglik": -cost(_theta(best))}


def held_out(groups: dict[str, np.ndarray], folds: int = FOLDS,
             start: m.Params = m.Params()) -> dict:
    """Each player's fold is their row number mod ``folds`` (the records come in player-id
    order, so the folds are fixed by the data). Per fold: fitted on the other folds, the
    predicted share of players reaching each level and attempts per player against the
    fold's own. Mean absolute errors over folds, groups and levels (reach in shares of
    the players who started; attempts in attempts per player). ``start``: where each
    fold's fit starts (the fit on every player, so the folds converge sooner)."""
    reach_err, tries_err = [], []
    for k in range(folds):
        train = {c: r[np.arange(r.shape[0]) % folds != k] for c, r in groups.items()}
        test = {c: r[np.arange(r.shape[0]) % folds == k] for c, r in groups.items()}
        if not all(t.shape[0] for t in test.values()):
            continue
        f = fit(train, start, 0.1)
        for c, r in test.items():
            if c not in f["lam"]:
                continue
            pred, obs = m.predict(f["lam"][c], f["params"]), observed(r)
            reach_err.append(np.abs(pred["reach"] - obs["reach"]))
            seen = obs["players"] > 0
            tries_err.append(np.abs(pred["attempts"] - obs["attempts"])[seen])
    if not reach_err:
        return {"folds": 0, "reach_mae": None, "attempts_mae": None}
    return {"folds": folds, "reach_mae": float(np.mean(np.concatenate(reach_err))),
            "attempts_mae": float(np.mean(np.concatenate(tries_err)))}

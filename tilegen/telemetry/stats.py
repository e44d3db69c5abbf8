"""The statistics of the reconciliation (decision 198), plain numpy: the players'
calibration (a binomial logistic fit of the observed pass rate on the logit of a bot
figure: monotone when its slope is positive), held-out error by k-fold, and the
Benjamini-Hochberg step-up for the abnormal-seed flags. The seeds' exact test, with the
boards' scatter, is ``overdispersion`` (decision 252). The Wilson interval is
``pipeline.analysis.margin.wilson`` (on the audit side, which reconcile is).
"""

from __future__ import annotations

import math

import numpy as np

def logit(p) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=np.float64), 0.01, 0.99)
    return np.log(p / (1 - p))


def fit(x: np.ndarray, wins: np.ndarray, n: np.ndarray, iters: int = 50,
        weights=None) -> tuple[float, float]:
    """(a, b) maximising the binomial likelihood of wins / n = logistic(a + b logit(x)),
    each board's term times its ``weights`` (None: 1; ``overdispersion.robust_fit`` gives
    the boards' scatter and their residuals a say): Newton steps from the pooled rate
    (a = its logit, b = 0), each halved until the likelihood does not fall (a fixed number
    of steps: deterministic; a full Newton step from far away overshoots and diverges)."""
    x, wins, n = (np.asarray(v, dtype=np.float64) for v in (x, wins, n))
    c = np.ones_like(x) if weights is None else np.asarray(weights, dtype=np.float64)
    X = np.column_stack([np.ones_like(x), logit(x)])
    pooled = min(max(((c * wins).sum() + 0.5) / ((c * n).sum() + 1.0), 1e-6), 1 - 1e-6)
    beta = np.array([math.log(pooled / (1 - pooled)), 0.0])

    def loglik(b: np.ndarray) -> float:
        eta = X @ b
        return float((c * (wins * eta - n * np.logaddexp(0.0, eta))).sum())

    ll = loglik(beta)
    for _ in range(iters):
        p = 1 / (1 + np.exp(-(X @ beta)))
        w = c * n * p * (1 - p) + 1e-12
        g = X.T @ (c * (wins - n * p))
        H = X.T @ (X * w[:, None]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(H, g)
        for _ in range(30):
            new = beta + step
            ll_new = loglik(new)
            if ll_new >= ll - 1e-12:
                break
            step = step / 2
        beta, ll = new, ll_new
        if np.abs(step).max() < 1e-12:
            break
    return float(beta[0]), float(beta[1])


def uncertainty(x, wins, n, ab: tuple[float, float], weights=None) -> dict:
    """How sure the fit is, for prediction intervals (decision 202): ``cov``, the 2x2
    covariance of (a, b) (the inverse Fisher information of the fit's weighted likelihood,
    times the dispersion when the boards scatter more than that allows), ``dispersion``
    (Pearson chi-square per degree of freedom, at least 1) and ``tau2``, the boards' own
    scatter around the mapping on the logit scale (method of moments: the squared
    residuals less their binomial part)."""
    x, wins, n = (np.asarray(v, dtype=np.float64) for v in (x, wins, n))
    c = np.ones_like(x) if weights is None else np.asarray(weights, dtype=np.float64)
    X = np.column_stack([np.ones_like(x), logit(x)])
    p = predict(ab, x)
    w = n * p * (1 - p) + 1e-12
    phi = max(1.0, float((c * (wins - n * p) ** 2 / w).sum() / max(1, len(x) - 2)))
    cov = np.linalg.inv(X.T @ (X * (c * w)[:, None]) + 1e-9 * np.eye(2)) * phi
    obs = np.clip((wins + 0.5) / (n + 1.0), 1e-6, 1 - 1e-6)  # the empirical logit
    resid = np.log(obs / (1 - obs)) - (X @ np.array(ab))
    tau2 = max(0.0, float(np.average(resid ** 2 - 1.0 / w, weights=n)))
    return {"cov": cov.tolist(), "dispersion": phi, "tau2": tau2}


def interval(cal: dict, x, z: float = 1.96) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(predicted, lo, hi): the players' pass rate on boards of bot figure ``x`` and its
    95 % prediction interval: the fit's uncertainty and the boards' scatter ``tau2``, on
    the logit scale, mapped back."""
    l = logit(x)
    (c00, c01), (_, c11) = cal["cov"]
    eta = cal["a"] + cal["b"] * l
    sd = np.sqrt(c00 + 2 * c01 * l + c11 * l ** 2 + cal["tau2"])
    return logistic(eta), logistic(eta - z * sd), logistic(eta + z * sd)


def mean_interval(cal: dict, x, w, z: float = 1.96) -> tuple[float, float, float]:
    """(predicted, lo, hi): the weighted mean of the predicted pass rates of boards ``x``
    (weights ``w``: their played sessions) and its 95 % interval: the fit's uncertainty
    through the delta method, and the boards' scatter ``tau2`` averaged over them."""
    x, w = np.asarray(x, dtype=np.float64), np.asarray(w, dtype=np.float64)
    w = w / w.sum()
    l, p = logit(x), predict((cal["a"], cal["b"]), x)
    d = p * (1 - p)  # d p / d eta
    g = np.array([(w * d).sum(), (w * d * l).sum()])
    var = float(g @ np.array(cal["cov"]) @ g) + cal["tau2"] * float(((w * d) ** 2).sum())
    m, sd = float((w * p).sum()), math.sqrt(max(var, 0.0))
    return m, max(0.0, m - z * sd), min(1.0, m + z * sd)


def wilson(p: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a share ``p`` of ``n`` trials, ``n`` any positive number
    (an effective sample size: ``scattered_interval``); the audit's own
    (``pipeline.analysis.margin.wilson``, its z) at a whole n."""
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(max(p * (1 - p), 0.0) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (0.0 if p <= 0 else max(0.0, centre - half),
            1.0 if p >= 1 else min(1.0, centre + half))


def scattered_interval(wins, n, tau2: float,
                       z: float = 1.959963984540054) -> tuple[float, float, float]:
    """(n_effective, lo, hi): the 95 % interval of the pooled pass rate of boards with
    ``wins`` of ``n`` each, counting the boards' scatter ``tau2`` (logit scale) beside the
    sessions' binomial noise: the pooled rate's variance is p (1 - p) / N plus
    tau2 * sum(w_i^2 (p_i (1 - p_i))^2), w_i = n_i / N (the delta method), and the Wilson
    interval is taken at the sample size that variance gives (N at tau2 = 0: the plain
    Wilson interval over sessions; rates smoothed by a half win for the ratio only)."""
    wins, n = np.asarray(wins, dtype=np.float64), np.asarray(n, dtype=np.float64)
    total = float(n.sum())
    p = float(wins.sum()) / total
    sm = (wins + 0.5) / (n + 1.0)
    ps = (wins.sum() + 0.5) / (total + 1.0)
    extra = tau2 * float((((n / total) * sm * (1 - sm)) ** 2).sum())
    eff = total / (1.0 + total * extra / (ps * (1 - ps)))
    return (eff, *wilson(p, eff, z))


def logistic(v) -> np.ndarray:
    return 1 / (1 + np.exp(-np.asarray(v, dtype=np.float64)))


def predict(ab: tuple[float, float], x) -> np.ndarray:
    a, b = ab
    return logistic(a + b * logit(x))


def held_out_errors(x, wins, n, folds: int = 5) -> np.ndarray:
    """Per board, the absolute error of its predicted pass rate when it was left out of
    the fit (boards dealt to ``folds`` folds in order: deterministic)."""
    x, wins, n = (np.asarray(v, dtype=np.float64) for v in (x, wins, n))
    fold = np.arange(len(x)) % folds
    err = np.zeros(len(x))
    for f in range(folds):
        test = fold == f
        if test.all() or not test.any():
            continue
        ab = fit(x[~test], wins[~test], n[~test])
        err[test] = np.abs(predict(ab, x[test]) - wins[test] / np.maximum(n[test], 1))
    return err


def held_out_error(x, wins, n, folds: int = 5) -> float:
    """Mean absolute error of the predicted pass rate on boards left out of the fit
    (``held_out_errors``), weighted by sessions."""
    n = np.asarray(n, dtype=np.float64)
    return float((held_out_errors(x, wins, n, folds) * n).sum() / max(n.sum(), 1))


def bh(p: np.ndarray, q: float) -> np.ndarray:
    """Benjamini-Hochberg: True where the hypothesis is rejected at false-discovery rate q."""
    m = len(p)
    if m == 0:
        return np.zeros(0, dtype=bool)
    order = np.argsort(p, kind="stable")
    ranked = p[order] <= q * (np.arange(1, m + 1) / m)
    k = np.nonzero(ranked)[0].max() + 1 if ranked.any() else 0
    out = np.zeros(m, dtype=bool)
    out[order[:k]] = True
    return out

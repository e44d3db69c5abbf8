"""Boards of a row differ beyond binomial noise (issue 32; decision 252): the abnormal-seed
test models that scatter, so its false-discovery rate holds at any number of sessions per
board while the model's conditions hold (a logistic-linear map from the bot figure to the
players, and boards scattering around it: ``check`` measures both).

The model: a board's players pass at a rate drawn around the calibrated prediction for its
bot figure, with ``tau2`` (on the logit scale) the boards' own scatter plus the prediction's
uncertainty; given that rate, its sessions are binomial. The board's wins are then
beta-binomial: the Beta with the prediction's mean and the variance the logit scatter gives
(``rho = mu (1 - mu) var_logit``, the delta method), mixed over the binomial. Without
scatter (``var_logit = 0``) it is the binomial itself.

Each p-value is exact for that model: the two-sided sum of the beta-binomial probabilities
no larger than the observed one (R's ``binom.test`` rule), summed over every outcome 0 .. n
(numpy, no approximation at any n). ``tau2`` is estimated robustly (a median equation), so
a few abnormal boards do not inflate it and hide themselves.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import stats

CHI2_1_MEDIAN = 0.454936423119572  # the median of a chi-square with 1 degree of freedom
RHO_MAX = 0.5  # an intra-board correlation above this would say boards are coin flips


def empirical_logit(wins, n) -> np.ndarray:
    """log((w + 1/2) / (n - w + 1/2)): finite at 0 and n wins (Haldane's correction)."""
    wins, n = np.asarray(wins, dtype=np.float64), np.asarray(n, dtype=np.float64)
    return np.log((wins + 0.5) / (n - wins + 0.5))


def logit_variance(n, p) -> np.ndarray:
    """The variance of ``empirical_logit`` over the binomial (n, p) alone: exact (summed
    over 0 .. n) where n p (1 - p) < 50, where the corrected logit is bounded and the
    textbook 1 / (n p (1 - p)) overstates it; that formula elsewhere."""
    n, p = np.asarray(n, dtype=np.float64), np.clip(np.asarray(p, dtype=np.float64),
                                                    1e-12, 1 - 1e-12)
    v = 1.0 / (n * p * (1 - p))
    for i in np.nonzero(n * p * (1 - p) < 50)[0]:
        m = int(n[i])
        lp = _log_pmf(m, float(p[i]), 0.0)
        w = np.exp(lp - lp.max())
        w /= w.sum()
        el = empirical_logit(np.arange(m + 1), m)
        v[i] = float((w * (el - (w * el).sum()) ** 2).sum())
    return v


def scatter(eta: np.ndarray, wins, n) -> float:
    """``tau2``: the boards' variance around the logits ``eta`` beyond their binomial part,
    the value where the median of r^2 / (tau2 + v) is the chi-square(1) median (r the
    residual logit, v its binomial variance). A median, not a mean: the few boards the test
    is looking for do not move it. 0 when the boards scatter no more than chance."""
    wins, n = np.asarray(wins, dtype=np.float64), np.asarray(n, dtype=np.float64)
    p = stats.logistic(eta)
    r2 = (empirical_logit(wins, n) - eta) ** 2
    v = logit_variance(n, p)

    def excess(t: float) -> float:
        return float(np.median(r2 / (t + v))) - CHI2_1_MEDIAN

    if len(r2) == 0 or excess(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, max(1e-6, float(np.median(r2)) * 10)
    while excess(hi) > 0:
        hi *= 2
    for _ in range(60):  # bisection: deterministic to ~1e-18 of the bracket
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
    return (lo + hi) / 2


@functools.lru_cache(maxsize=8)
def _log_choose(n: int) -> np.ndarray:
    """log C(n, k), k = 0 .. n (shared by every board with n sessions; read-only)."""
    k = np.arange(n, dtype=np.float64)
    out = np.concatenate(([0.0], np.cumsum(np.log(n - k) - np.log(k + 1))))
    out.flags.writeable = False
    return out


def _log_pmf(n: int, mu: float, rho: float) -> np.ndarray:
    """log P(k), k = 0 .. n, of the beta-binomial of mean ``mu`` and intra-board
    correlation ``rho`` (the binomial at rho = 0): log C(n, k) plus the log of the Beta
    integral, built from the ratio of its successive terms."""
    k = np.arange(n, dtype=np.float64)
    if rho <= 0:
        return _log_choose(n) + np.arange(n + 1) * math.log(mu) + (n - np.arange(n + 1)) \
            * math.log1p(-mu)
    s = 1 / rho - 1
    a, b = mu * s, (1 - mu) * s
    start = math.lgamma(n + b) + math.lgamma(a + b) - math.lgamma(n + a + b) - math.lgamma(b)
    ratio = np.log((k + a) / (n - k - 1 + b))
    return _log_choose(n) + np.concatenate(([start], start + np.cumsum(ratio)))


def p_value(k: int, n: int, mu: float, rho: float = 0.0) -> float:
    """Exact two-sided p-value of ``k`` wins in ``n`` sessions: the total probability of
    the outcomes no more likely than k, under the beta-binomial (mu, rho)."""
    if n <= 0:
        return 1.0
    mu = min(max(mu, 1e-12), 1 - 1e-12)
    lp = _log_pmf(int(n), mu, min(max(rho, 0.0), RHO_MAX))
    pmf = np.exp(lp - lp.max())
    pmf /= pmf.sum()  # the ratios accumulate rounding; the total is 1 by definition
    return float(min(1.0, pmf[pmf <= pmf[int(k)] * (1 + 1e-7)].sum()))


def p_text(p: float) -> str:
    """A p-value as pages print it: below the smallest double it is no longer a number
    (the exact sum underflows to 0), so it says so instead of printing 0."""
    return "< 1e-300" if p < 1e-300 else f"{p:.1e}"


def p_values(wins, n, mu, var_logit) -> np.ndarray:
    """Per board: ``p_value`` with rho = mu (1 - mu) var_logit (the logit scatter on the
    rate scale, the delta method)."""
    wins, n, mu = (np.asarray(v, dtype=np.float64) for v in (wins, n, mu))
    var = np.broadcast_to(np.asarray(var_logit, dtype=np.float64), mu.shape)
    rho = np.clip(mu * (1 - mu) * var, 0.0, RHO_MAX)
    return np.array([p_value(int(k), int(m), float(e), float(r))
                     for k, m, e, r in zip(wins, n, mu, rho)])


HUBER, BIWEIGHT = 1.345, 4.685  # the textbook tuning constants (95 % efficiency)
ITERS = 50


def _huber(z: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, HUBER / np.maximum(np.abs(z), 1e-300))


def _biweight(z: np.ndarray) -> np.ndarray:
    return np.where(np.abs(z) < BIWEIGHT, (1 - (z / BIWEIGHT) ** 2) ** 2, 0.0)


def robust_fit(x, wins, n) -> tuple[tuple[float, float], np.ndarray, np.ndarray, float]:
    """The calibration fitted so that abnormal boards cannot move it (decision 280):
    ((a, b), each board's robustness weight, its weight in the fit, ``tau2``). Each board's
    residual logit is standardised by what the model allows it, its binomial variance
    plus the boards' scatter ``tau2`` (the median equation, ``scatter``, over every board,
    so the abnormal few cannot inflate it): z = (logit observed - logit predicted) /
    sqrt(tau2 + v). The fit weighs each board's binomial likelihood by its robustness
    weight over 1 + n p (1 - p) tau2 (a board's share of the scatter: with thousands of
    sessions a board says no more than its scatter allows) and is repeated with the new
    weights until (a, b) moves by less than 1e-9 (at most ITERS times): first with Huber's
    weights (min(1, 1.345 / |z|): one solution, whatever the start), then from there with
    Tukey's biweight ((1 - (z / 4.685)^2)^2, 0 beyond 4.685: a board that far off the
    mapping has no say at all). Fewer than 3 boards left with a say: the Huber fit."""
    x, wins, n = (np.asarray(v, dtype=np.float64) for v in (x, wins, n))
    l, el = stats.logit(x), empirical_logit(wins, n)
    ab = stats.fit(x, wins, n)
    rob, w, tau2 = np.ones_like(x), np.ones_like(x), 0.0
    for psi in (_huber, _biweight):
        for _ in range(ITERS):
            eta = ab[0] + ab[1] * l
            p = stats.logistic(eta)
            tau2 = scatter(eta, wins, n)
            r = psi((el - eta) / np.sqrt(tau2 + logit_variance(n, p)))
            if (r > 0).sum() < 3:
                break  # the biweight would leave too few boards: keep the Huber fit
            rob, w = r, r / (1 + n * p * (1 - p) * tau2)
            new = stats.fit(x, wins, n, weights=w)
            moved = max(abs(new[0] - ab[0]), abs(new[1] - ab[1]))
            ab = new
            if moved < 1e-9:
                break
    return ab, rob, w, tau2


def test_boards(x, wins, n, fdr: float, margin: float = 0.0) -> dict:
    """Flag the boards whose players pass unlike the calibration predicts for their bot
    figure ``x``: the robust fit (``robust_fit``), then each board's exact test against
    it (Benjamini-Hochberg at ``fdr``); a board is abnormal when its test is significant
    and its players' rate lies more than ``margin`` from the prediction (the practical
    threshold, decision 279). Returns the mapping (a, b), its uncertainty
    (``stats.uncertainty`` on the boards with a say in the fit, plus ``tau2_seeds``: the
    robust scatter the test used), ``keep`` (those boards), the robustness weights, the
    prediction, the variance each board's test allows, the p-values, the significant and
    the abnormal boards."""
    x, wins, n = (np.asarray(v, dtype=np.float64) for v in (x, wins, n))
    ab, rob, w, tau2 = robust_fit(x, wins, n)
    keep = rob > 0
    unc = stats.uncertainty(x[keep], wins[keep], n[keep], ab, weights=w[keep])
    unc["tau2_seeds"] = tau2
    # the intervals keep decision 202's tau2 (the mean excess over the kept boards: every
    # misfit of the mapping's form widens them); the seeds' test takes the median's, which
    # the boards it looks for cannot inflate
    l = stats.logit(x)
    (c00, c01), (_, c11) = unc["cov"]
    var = tau2 + np.maximum(c00 + 2 * c01 * l + c11 * l * l, 0.0)  # scatter + the fit's own
    pred = stats.logistic(ab[0] + ab[1] * l)
    p = p_values(wins, n, pred, var)
    significant = stats.bh(p, fdr)
    far = np.abs(wins / np.maximum(n, 1) - pred) > margin + 1e-12
    return {"ab": ab, "uncertainty": unc, "keep": keep, "weights": rob, "predicted": pred,
            "var_logit": var, "p": p, "significant": significant,
            "abnormal": significant & far}


def check(wins, n, res: dict, groups, margin: float) -> dict:
    """The model's conditions measured on the tested boards (decision 283). The map: per
    group of boards (a level), the median of the boards' gaps (players less prediction)
    and z, the median of their standardised residuals times sqrt(2 m / pi) (standard
    normal for m boards where the map holds); medians, so a few abnormal boards do not
    make a level depart, and a level the map misses shows though each of its boards is
    flagged. A group departs when its median gap is beyond ``margin`` and |z| beyond the
    two-sided 95 % point with Bonferroni over the groups. The scatter: how many boards not
    flagged lie beyond 1.96 of their allowed deviation, against the 5 % normal scatter
    gives (its 99 % upper count: heavier tails are more boards than that)."""
    from statistics import NormalDist

    wins, n = np.asarray(wins, dtype=np.float64), np.asarray(n, dtype=np.float64)
    pred = res["predicted"]
    z = ((empirical_logit(wins, n) - stats.logit(pred))
         / np.sqrt(res["var_logit"] + logit_variance(n, pred)))
    gap = wins / np.maximum(n, 1) - pred
    groups = np.asarray(groups)
    labels = sorted(set(groups.tolist()))
    crit = NormalDist().inv_cdf(1 - 0.025 / max(1, len(labels)))
    out = []
    for g in labels:
        m = groups == g
        med = float(np.median(gap[m]))
        zg = float(np.median(z[m]) * math.sqrt(2 * m.sum() / math.pi))
        out.append({"group": g, "boards": int(m.sum()), "sessions": int(n[m].sum()),
                    "abnormal": int(res["abnormal"][m].sum()), "gap": med, "z": zg,
                    "departs": bool(abs(med) > margin + 1e-12 and abs(zg) > crit)})
    ok = ~res["abnormal"]
    m = int(ok.sum())
    beyond = int((np.abs(z[ok]) > 1.96).sum())
    cdf, allowed = 0.0, m
    for k in range(m + 1):  # the 99 % point of Binomial(m, 0.05)
        cdf += math.exp(math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1)
                        + k * math.log(0.05) + (m - k) * math.log(0.95))
        if cdf >= 0.99:
            allowed = k
            break
    return {"groups": out, "critical_z": crit, "margin": margin, "boards": m,
            "beyond": beyond, "beyond_allowed": allowed,
            "map_holds": not any(o["departs"] for o in out),
            "scatter_holds": beyond <= allowed}

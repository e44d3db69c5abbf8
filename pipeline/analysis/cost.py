"""What a table change costs the player, and how ``tune`` ranks the changes that fix a row.

A generator declares its cost once (``Tune.tune_costs``): the delivered figures a designer
must not lose while fixing a line (minegen: fog cells, fog burden, mines placed, the share
of hard boards; tilegen: pass rates, clickable ratio, elements, layers). A candidate's cost
is the sum over those figures of its change from the row as it is, each relative to the
row's value (a value near zero counts in the figure's declared ``unit``), so "0.6" reads
"60 % of one figure's worth of change".

A figure may also declare what the row *intends* (``intent``: read from the table's own
ask, e.g. the fog cells its regions request) and the share of it a proposal must keep
(``keep``): a candidate that delivers less is flagged as removing most of the feature and is
never presented as the fix.

Ranking (``ranked``): candidates that hold every hard line and are not flagged come first;
among them those whose every share line clears its threshold with its 95 % interval
(*with margin*) before those within noise; then the least cost, where costs within
``COST_TIE`` of each other are a tie that the smallest change to the table wins (the
declared order).
"""

from __future__ import annotations

from collections.abc import Callable

from ..declarations import Cost
from .aggregate import read
from .margin import binomial_se, wilson


def se_mean(mean: str, sd: str) -> Callable[[dict], float]:
    """The standard error of a mean over the row's boards: sd / sqrt(boards)."""
    return lambda r: r[sd] / r["boards"] ** 0.5


def se_share(share: str) -> Callable[[dict], float]:
    """The standard error of a share of the row's boards, sqrt(p (1 - p) / boards), with
    p kept off 0 and 1 by half a board (a share of 0 of 256 is not known exactly)."""
    return lambda r: binomial_se(r[share] * r["boards"], r["boards"])


def se_quantile(stem: str) -> Callable[[dict], float]:
    """The standard error of a quantile, read from its 95 % interval (``<stem>_lo``,
    ``_hi``; ``aggregate.quantile_bounds``): (hi - lo) / (2 x 1.96)."""
    return lambda r: (r[f"{stem}_hi"] - r[f"{stem}_lo"]) / 3.92


def errors(costs: tuple[Cost, ...], row: dict | None) -> dict[str, float | None]:
    """{label: standard error} of a per-row aggregate row (None where unknown)."""
    return {c.label: None if c.se is None else
            (None if (v := read(c.se, row)) is None else float(v)) for c in costs}


def beyond_noise(before: float | None, after: float | None, se_before: float | None,
                 se_after: float | None) -> bool | None:
    """True when after - before lies outside the 95 % interval of a difference of two
    independent estimates (1.96 sqrt(se_b^2 + se_a^2)); None when a figure or its noise is
    unknown."""
    if None in (before, after, se_before, se_after):
        return None
    return abs(after - before) > 1.96 * (se_before ** 2 + se_after ** 2) ** 0.5


def figures(costs: tuple[Cost, ...], row: dict | None) -> dict[str, float | None]:
    """{label: value} of a per-row aggregate row (None when the row has no such value)."""
    return {c.label: None if (v := read(c.value, row)) is None else float(v) for c in costs}


def cost(costs: tuple[Cost, ...], before: dict, after: dict) -> float:
    """The sum of each figure's change relative to ``before`` (figures either side lacks
    count as nothing)."""
    total = 0.0
    for c in costs:
        b, a = before.get(c.label), after.get(c.label)
        if b is None or a is None:
            continue
        total += abs(a - b) / max(abs(b), c.unit)
    return round(total, 6)  # the ranking compares costs: no float noise decides a tie


def flags(costs: tuple[Cost, ...], intent_row: dict, after: dict) -> list[str]:
    """The features ``after`` removes most of: "fog cells per board 3.1, under 50 % of the
    14.0 the table asks (the fog)"; empty when it keeps them all."""
    out = []
    for c in costs:
        if c.intent is None or c.keep is None:
            continue
        want, got = c.intent(intent_row), after.get(c.label)
        if want and got is not None and got < c.keep * want:
            out.append(f"{c.label} {got:.{c.digits}f}, under {100 * c.keep:.0f} % of the "
                       f"{want:.{c.digits}f} the table asks ({c.feature or c.label})")
    return out


def drops_feature(costs: tuple[Cost, ...], after: dict) -> bool:
    """True when ``after`` delivers none of a declared feature (a figure with a ``keep``
    share at 0): the row without it, an option tune measures and shows, never proposes."""
    return any(c.keep is not None and after.get(c.label) == 0 for c in costs)


def rank_key(candidate: dict) -> tuple:
    """Sort key of an evaluated candidate (``holds``, ``flags``, ``margin``, ``cost``,
    ``order``): the best first."""
    return (not candidate["holds"], bool(candidate["flags"]), not candidate["margin"],
            candidate["cost"], candidate["order"])


# Costs this close are a tie (about the noise of a cost measured on N 256 boards per row:
# a figure's mean moves a few per cent between two seed sets); a tie goes to the smallest
# change to the table's own values, the candidate tried first (``order``).
COST_TIE = 0.05


def ranked(candidates: list[dict], tie: float = COST_TIE) -> list[dict]:
    """The acceptable candidates, best first: those with margin before those within
    noise; within each, the least cost, except that costs within ``tie`` of the best
    remaining one are a tie, broken by the smallest change (the lowest ``order``)."""
    out = []
    ok = sorted((c for c in candidates if acceptable(c)), key=rank_key)
    for margin in (True, False):
        tier = [c for c in ok if bool(c["margin"]) is margin]
        while tier:
            best = min(c["cost"] for c in tier)
            tied = sorted((c for c in tier if c["cost"] <= best + tie),
                          key=lambda c: c["order"])
            out.extend(tied)
            tier = [c for c in tier if c not in tied]
    return out


def acceptable(candidate: dict) -> bool:
    """Holds every hard line and keeps every declared feature: may be proposed (an invalid
    table value, never run, is not)."""
    return bool(candidate.get("holds")) and not candidate.get("flags")


def n_to_clear(share: float, threshold: float, above: bool = True,
               limit: int = 1 << 20) -> int | None:
    """The smallest N at which a share observed as ``share`` would clear ``threshold`` with
    its 95 % Wilson interval (entirely above it, or below it when ``above`` is False); None
    when it never would (the share sits on the wrong side or on the threshold) within
    ``limit`` boards."""
    if (share <= threshold) if above else (share >= threshold):
        return None

    def clears(n: int) -> bool:
        lo, hi = wilson(round(share * n), n)
        return lo > threshold if above else hi < threshold

    hi = 1
    while not clears(hi):
        hi *= 2
        if hi > limit:
            return None
    lo = hi // 2  # clears(lo) is False (or lo == 0)
    while hi - lo > 1:  # rounding makes clears() nearly, not exactly, monotone: the
        mid = (lo + hi) // 2  # smallest N found by bisection between two powers of two
        lo, hi = (lo, mid) if clears(mid) else (mid, hi)
    return hi

"""How sure a share is: the Wilson score interval of k successes in n trials, and whether
a share line passes *with margin* (its interval clears the threshold) or *within noise*
(the interval crosses it: the same table, audited with other seeds, could fail).

Wilson, not the normal approximation: it stays inside [0, 1] and is honest at the
extremes a line usually sits at (0 of 256, 255 of 256). z = 1.96: a 95 % interval.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054  # the two-sided 95 % normal quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of the share k / n (n >= 1, 0 <= k <= n)."""
    if not (isinstance(n, int) and n >= 1 and 0 <= k <= n):
        raise ValueError(f"wilson needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    p, z2 = k / n, z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    lo = 0.0 if k == 0 else max(0.0, centre - half)  # exact at the ends, not 1 - 1e-16
    hi = 1.0 if k == n else min(1.0, centre + half)
    return lo, hi


def share_interval(share: float, n: int) -> tuple[float, float]:
    """The interval of an observed share of n boards (its count is share * n)."""
    return wilson(round(share * n), n)


def within_noise(interval: tuple[float, float], threshold: float) -> bool:
    """True when the threshold lies inside the interval: the verdict could flip."""
    return interval[0] <= threshold <= interval[1]


def binomial_se(wins: int | None, runs: int | None) -> float | None:
    """The standard error of a rate of ``wins`` of ``runs`` trials, sqrt(p (1 - p) / runs),
    with p kept off 0 and 1 by half a trial (0 of 300 is not known exactly); None when
    either is unknown."""
    if not runs or wins is None:
        return None
    p = min(max(wins / runs, 0.5 / runs), 1 - 0.5 / runs)
    return math.sqrt(p * (1 - p) / runs)

"""The Wilson interval (``pipeline.analysis.margin``) against the definition it solves, by
a slow twin: the shares p whose score |k/n - p| / sqrt(p(1-p)/n) is at most z."""

from __future__ import annotations

import math

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.analysis.lines import evaluate
from pipeline.declarations import Line
from pipeline.analysis.margin import Z95, share_interval, wilson, within_noise


def twin(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The ends of {p in [0, 1]: (k/n - p)^2 <= z^2 p (1 - p) / n}, by bisection."""
    phat = k / n

    def inside(p: float) -> bool:
        return (phat - p) ** 2 <= z * z * p * (1 - p) / n + 1e-15

    def edge(a: float, b: float) -> float:  # a inside, b outside (or the end itself)
        if inside(b):
            return b
        for _ in range(200):
            m = (a + b) / 2
            a, b = (m, b) if inside(m) else (a, m)
        return a

    return edge(phat, 0.0), edge(phat, 1.0)


def test_the_textbook_ends():
    z2 = Z95 * Z95
    assert wilson(0, 10) == (0.0, z2 / (10 + z2))  # the upper end of 0 of 10, in closed form
    assert wilson(10, 10) == (10 / (10 + z2), 1.0)


@settings(max_examples=300, derandomize=True)
@given(n=st.integers(1, 5000), data=st.data())
def test_wilson_equals_its_definition(n, data):
    k = data.draw(st.integers(0, n))
    lo, hi = wilson(k, n)
    tlo, thi = twin(k, n)
    assert math.isclose(lo, tlo, abs_tol=1e-9) and math.isclose(hi, thi, abs_tol=1e-9)
    mirror = [1 - v for v in reversed(wilson(n - k, n))]  # k successes = n - k failures
    assert lo <= k / n <= hi and all(math.isclose(a, b, abs_tol=1e-12)
                                     for a, b in zip((lo, hi), mirror))


def test_a_share_line_says_when_it_passes_within_noise():
    line = Line("B", "share", ">=", 0.95, True, "share of boards", trials="boards")
    frame = pl.DataFrame({"row": [1, 2, 3], "share": [0.953125, 0.99609375, 0.5],
                          "boards": [256, 256, 256]})
    results, _ = evaluate(frame, [line], ("row",))
    noise = {r["row"]: (r["passed"], r["within_noise"]) for r in results}
    assert noise == {1: (True, True), 2: (True, False), 3: (False, False)}
    assert results[0]["interval"] == list(share_interval(0.953125, 256))
    assert within_noise(tuple(results[0]["interval"]), 0.95)


@settings(max_examples=60, derandomize=True)
@given(data=st.data())
def test_judging_frames_together_equals_judging_each(data):
    """``evaluate_many`` (a tune's candidates in one Pandera pass) gives each frame the
    results ``evaluate`` gives it alone: frames of one row or several, values that fail,
    pass, or do not apply (null), hard and advisory lines, and two schemas (an integer
    column in some frames, a float one in others)."""
    import warnings

    from pipeline.analysis.lines import evaluate_many

    lines = [Line("B", "share", ">=", 0.95, True, "share of boards", trials="boards"),
             Line("G", "count", "==", 0, True, "boards that fail"),
             Line("W", "share", ">=", 0.99, False, "an advisory share")]
    frames = []
    for f in range(data.draw(st.integers(1, 6))):
        n = data.draw(st.integers(1, 3))
        shares = data.draw(st.lists(st.one_of(st.none(), st.sampled_from(
            [0.5, 0.95, 0.953125, 0.99, 1.0])), min_size=n, max_size=n))
        counts = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        as_float = data.draw(st.booleans())
        frames.append(pl.DataFrame({
            "row": [10 * f + i for i in range(n)], "share": pl.Series(shares, dtype=pl.Float64),
            "boards": [256] * n,
            "count": pl.Series(counts, dtype=pl.Float64 if as_float else pl.Int64)}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = [evaluate(f, lines, ("row",))[0] for f in frames]
        together = evaluate_many(frames, lines, ("row",))
    assert together == alone

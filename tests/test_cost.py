"""What a change costs and how tune ranks (``pipeline.analysis.cost``): the cost is the sum
of relative changes, a flag fires exactly under the kept share of the table's ask, the
ranking puts holding, feature-keeping, with-margin, cheap candidates first, and the N that
would tell a share from its threshold is a boundary of the Wilson interval."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.analysis.cost import acceptable, cost, figures, flags, n_to_clear, rank_key
from pipeline.declarations import Cost
from pipeline.analysis.margin import wilson

FOG = Cost("fog", lambda r: r["fog"], unit=1.0, intent=lambda r: r["asked"], keep=0.5,
           feature="the fog")
SHARE = Cost("hard", lambda r: r.get("hard"), unit=0.05)


def test_cost_is_the_sum_of_relative_changes():
    before = figures((FOG, SHARE), {"fog": 20.0, "hard": 0.02})
    after = figures((FOG, SHARE), {"fog": 15.0, "hard": 0.12})
    # fog: 5 of 20 = 0.25; hard: 0.10 in units of 0.05 (the row's 0.02 is below the unit) = 2
    assert cost((FOG, SHARE), before, after) == 2.25
    assert cost((FOG, SHARE), before, before) == 0.0
    # a figure one side lacks counts as nothing
    assert cost((FOG, SHARE), before, figures((FOG, SHARE), {"fog": 20.0})) == 0.0


def test_a_flag_fires_under_the_kept_share_of_the_ask_only():
    row = {"asked": 40}
    assert flags((FOG,), row, {"fog": 19.9}) == [
        "fog 19.90, under 50 % of the 40.00 the table asks (the fog)"]
    assert flags((FOG,), row, {"fog": 20.0}) == []
    assert flags((FOG,), {"asked": 0}, {"fog": 0.0}) == []  # a row that asks for none
    assert flags((SHARE,), row, {"hard": 0.0}) == []  # no intent declared: never flagged


def _c(order, holds=True, flagged=False, margin=True, c=1.0):
    return {"order": order, "holds": holds, "flags": ["x"] if flagged else [],
            "margin": margin, "cost": c}


def test_ranking_order():
    cands = [_c(0, holds=False, c=0.0), _c(1, flagged=True, c=0.1), _c(2, margin=False, c=0.2),
             _c(3, c=5.0), _c(4, c=0.5), _c(5, c=0.5)]
    ranked = [c["order"] for c in sorted(cands, key=rank_key)]
    # with margin and cheapest first (ties: the declared order), then within noise, then
    # the flagged, then what does not hold
    assert ranked == [4, 5, 3, 2, 1, 0]
    assert [acceptable(c) for c in cands] == [False, False, True, True, True, True]
    assert not acceptable({"status": "invalid", "rule": "a class 0..3"})  # never run


def _clears(share, threshold, n, above=True):
    lo, hi = wilson(round(share * n), n)
    return lo > threshold if above else hi < threshold


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.floats(0.5, 0.999), st.floats(0.5, 0.99), st.booleans())
def test_n_to_clear_is_a_boundary_of_the_interval(share, threshold, above):
    if not above:
        share, threshold = 1 - share, 1 - threshold
    n = n_to_clear(share, threshold, above)
    if (share <= threshold) if above else (share >= threshold):
        assert n is None
        return
    if n is None:  # past the limit: the share is within about 1e-3 of the threshold
        assert abs(share - threshold) < 0.01 and not _clears(share, threshold, 1 << 20, above)
        return
    assert _clears(share, threshold, n, above) and not _clears(share, threshold, n - 1, above)
    # never past the first power of two that clears
    p = 1
    while not _clears(share, threshold, p, above):
        p *= 2
    assert n <= p


def test_n_to_clear_of_a_share_just_above_its_threshold():
    # B 0.953 at N 256 against 0.95 is within noise (a default-table tune); the N that tells
    n = n_to_clear(0.953, 0.95)
    assert n is not None and 10_000 < n < 40_000
    assert wilson(round(0.953 * n), n)[0] > 0.95 >= wilson(round(0.953 * (n - 1)), n - 1)[0]


def test_quantile_bounds_are_the_order_statistics_around_the_quantile():
    """``aggregate.quantile_bounds``: the boards' values at ranks n q -/+ 1.96 sqrt(n q
    (1 - q)) (floor / ceil, clipped), read from the sorted values by hand."""
    import math

    import numpy as np
    import polars as pl

    from pipeline.analysis.aggregate import quantile_bounds

    rng = np.random.default_rng(7)
    for n, q in ((256, 0.10), (256, 0.50), (40, 0.10), (5, 0.5)):
        x = rng.random(n)
        got = pl.DataFrame({"k": [0] * n, "x": x}).group_by("k").agg(
            *quantile_bounds("x", q)).row(0, named=True)
        half = 1.96 * math.sqrt(n * q * (1 - q))
        lo, hi = max(0, math.floor(n * q - half)), min(n - 1, math.ceil(n * q + half))
        xs = sorted(x)
        assert got[f"x_p{round(q * 100)}_lo"] == xs[lo]
        assert got[f"x_p{round(q * 100)}_hi"] == xs[hi]
        assert xs[lo] <= np.quantile(x, q) <= xs[hi]


def test_a_change_within_noise_is_not_a_cost_in_words():
    """``cost.beyond_noise`` and the tune page's words: a change larger than the 95 %
    interval of the difference is named, a smaller one is not (and the table says so)."""
    from pipeline.analysis.cost import beyond_noise
    from pipeline.reports.tune_figures import cost_table, cost_words

    assert beyond_noise(10.0, 11.0, 0.3, 0.3) is True  # 1.0 > 1.96 * 0.42
    assert beyond_noise(10.0, 10.5, 0.3, 0.3) is False
    assert beyond_noise(10.0, 10.5, None, 0.3) is None
    doc = {"costs": [{"label": "a", "unit": 1.0, "digits": 1},
                     {"label": "b", "unit": 1.0, "digits": 1}]}
    now, then = {"a": 10.0, "b": 20.0}, {"a": 11.0, "b": 20.5}
    noise = ({"a": 0.3, "b": 0.3}, {"a": 0.3, "b": 0.3})
    assert cost_words(doc, now, then, noise=noise) == "a +10 %"
    assert cost_words(doc, now, then) == "a +10 %, b +2 %"  # noise unknown: shown
    table = cost_table(doc, now, then, noise=noise)
    cells = {r[0].text: [c.text for c in r] for r in table.rows}
    assert cells["a"][2] == "10.0 (9.4–10.6)" and "within noise" not in cells["a"][4]
    assert cells["b"][4].endswith("; within noise")

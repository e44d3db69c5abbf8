"""The progression funnel (decisions 258-260; docs/telemetry.md): the population model's
properties, its fit recovering known parameters from simulated progression and from the
synthetic players, and the tune's funnel page in figures."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilegen.players import funnel_page as page
from tilegen.players import reconcile
from tilegen.funnel import fit, model, progress, simulate
from tilegen.table_loader import load_tables
from tilegen.telemetry import players, synth, tally

CURVE = np.array([0.97, 0.93, 0.80, 0.70, 0.58, 0.45])  # a median player's rates per attempt


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_funnel_only_narrows_and_adds_up(seed):
    rng = np.random.default_rng(seed)
    lam = rng.normal(1.0, 1.5, 6)
    prm = model.Params(skill_sd=rng.uniform(0.1, 2), persistence=rng.uniform(0, 0.95),
                       boredom=rng.uniform(0, 0.2))
    f = model.predict(lam, prm)
    assert f["reach"][0] == pytest.approx(1.0)
    assert (np.diff(f["reach"]) <= 1e-12).all()
    assert (f["attempts"] >= 1).all() and ((0 <= f["churn"]) & (f["churn"] <= 1)).all()
    # who reaches the next level is who reached this one and did not leave here
    assert np.allclose(f["reach"][1:], f["reach"][:-1] * (1 - f["churn"][:-1]))
    # a harder level (lower lam) passes fewer attempts and keeps fewer players after it
    harder = lam.copy()
    harder[2] -= 1
    g = model.predict(harder, prm)
    assert g["pass_rate"][2] < f["pass_rate"][2] and g["reach"][3] < f["reach"][3]
    # the difficulties that give a funnel's observed pass rates are that funnel's own
    assert np.allclose(model.lam_from_pass_rates(f["pass_rate"], prm), lam, atol=1e-6)


def test_the_model_matches_its_own_simulation():
    prm = model.Params(skill_sd=1.2, persistence=0.7, boredom=0.05)
    lam = model.logit(CURVE)
    rec = simulate.progression(lam, prm, 40_000, 5)
    obs, pred = fit.observed(rec), model.predict(lam, prm)
    assert np.abs(obs["reach"] - pred["reach"]).max() < 0.01
    assert np.abs(obs["pass_rate"] - pred["pass_rate"]).max() < 0.01
    assert (simulate.progression(lam, prm, 500, 5) == simulate.progression(lam, prm, 500, 5)).all()


def test_the_fit_recovers_known_parameters():
    """Three cities' progression simulated from a known population: the fit finds it
    within the stated tolerance (skill spread 0.15, persistence 0.02, boredom 0.01), and
    the held-out error of the share reaching a level is under 2 points."""
    truth = model.Params(skill_sd=1.0, persistence=0.75, boredom=0.05)
    groups = {f"c{i}": simulate.progression(model.logit(CURVE - 0.03 * i), truth, 4000, 20 + i)
              for i in range(3)}
    f = fit.fit(groups)
    got = f["params"]
    assert abs(got.skill_sd - truth.skill_sd) < 0.15, got
    assert abs(got.persistence - truth.persistence) < 0.02, got
    assert abs(got.boredom - truth.boredom) < 0.01, got
    small = {"c0": groups["c0"][:800]}
    assert fit.fit(small)["params"] == fit.fit(small)["params"]  # same data, same fit
    h = fit.held_out(groups, start=got)
    assert h["folds"] == fit.FOLDS and h["reach_mae"] < 0.02, h


def test_the_fit_reads_the_synthetic_players(tmp_path):
    """The synthetic players walk the levels with the model's persistence and boredom:
    read back from their telemetry file, every history is regular and the fit finds both
    (the skill spread differs by design: tools and revives rescue players of every skill)."""
    boards = synth.boards(load_tables(), 2)
    frame, info = players.sessions(boards, 1500, 10, players.Players(), 4)
    (tmp_path / "s").mkdir()
    data, _ = synth.write(tmp_path / "s", frame, info)
    keys = frame.select("city_id", "level_id", "revision", "seed").unique()
    h = progress.histories(data, keys, frame.height)
    assert h["players"] == 1500 * 6 and h["irregular"] == 0 and h["sampled"] == 1.0
    f = fit.fit({c: h["groups"][c] for c in sorted(h["groups"])[:3]})  # three cities
    want = players.Players()
    assert abs(f["params"].persistence - want.persistence) < 0.02, f["params"]
    assert abs(f["params"].boredom - want.boredom) < 0.01, f["params"]
    for city, rec in h["groups"].items():  # the observed pass rate falls across levels
        rate = fit.observed(rec)["pass_rate"]
        assert rate[0] - rate[-1] > 0.2, (city, rate)


def test_a_history_that_skips_or_starts_late_is_left_out():
    rec = np.array([[1, 2, -3, 0, 0, 0],   # regular: left at level 3 after 3 attempts
                    [0, 1, 1, 0, 0, 0],    # started at level 2
                    [1, -2, 1, 0, 0, 0],   # played level 3 without passing level 2
                    [1, 0, 1, 0, 0, 0],    # a gap
                    [1, 1, 1, 1, 1, 2]])   # finished the city
    assert progress._regular(rec).tolist() == [True, False, False, False, True]


def test_the_tune_page_says_what_the_proposal_keeps():
    now = {"x": {"rates": list(CURVE), "rows": [f"x {i} r1" for i in range(1, 7)]}}
    easier = list(CURVE)
    easier[4] += 0.1
    then = {"x": {"rates": easier, "rows": [f"x {i} r{1 + (i == 5)}" for i in range(1, 7)]}}
    prm = model.Params()
    text = page.tune_html(now, then, prm, "Rates given.", "t1")
    a, b = page.funnel(now["x"]["rates"], prm), page.funnel(then["x"]["rates"], prm)
    points = 100 * (b["reach"][-1] - a["reach"][-1])
    assert points > 0  # an easier level 5 keeps more players to level 6
    assert f"keeps {points:.1f} points more of its players to level 6" in text
    assert f"{100 * a['reach'][-1]:.1f} % → {100 * b['reach'][-1]:.1f} %" in text
    assert "x 5 r1 → x 5 r2" in text and "Roohi et al." in text
    same = page.tune_html(now, now, prm, "Rates given.", "t1")
    assert "keeps as many players to level 6" in same


def test_fail_steps_count_only_failed_sessions(tmp_path):
    boards = synth.boards(load_tables(), 2)
    frame, info = players.sessions(boards, 100, 5, players.Players(), 9)
    (tmp_path / "s").mkdir()
    data, _ = synth.write(tmp_path / "s", frame, info)
    keys = frame.select("city_id", "level_id", "revision", "seed").unique()
    steps = pl.DataFrame(reconcile.fail_steps(tally.tally(data, None, boards=keys)["fails"]))
    fails = frame.filter(pl.col("result") == "fail")
    assert steps["sessions"].sum() == fails.height
    want = fails.group_by("level_id", "first_fail_step").len().sort("level_id",
                                                                    "first_fail_step")
    assert steps.select("level_id", "first_fail_step").rows() == \
        want.select("level_id", "first_fail_step").rows()


def test_players_who_never_go_on_fit_without_warnings_and_write_json(tmp_path, tile_run):
    """Players seen once each, on level 1 (a day of first sessions): no level after it is
    reached, so its rates do not exist. The funnel says so with null (reconcile.json stays
    JSON any reader parses: no NaN) and the console shows no numpy warning."""
    import json
    import warnings

    from test_reconcile_input import PROD

    run = tile_run
    n = 400
    pl.DataFrame({
        "city_id": "beijing", "level_id": 1, "revision": 1,
        "seed": pl.Series([int(PROD)] * n, dtype=pl.UInt64),
        "result": ["win" if i % 2 else "fail" for i in range(n)], "revived": 0,
        "peak_slot_usage": 3, "undo_uses": 0, "remove_uses": 0, "shuffle_uses": 0,
        "time_spent_sec": 60.5, "first_fail_step": 9, "date": "2026-11-30",
        "player_id": [f"p{i}" for i in range(n)]}).write_parquet(tmp_path / "day.parquet")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = progress.part(tmp_path / "day.parquet", run, n)
    assert [str(w.message) for w in caught] == []
    city = out["cities"]["beijing"]
    assert city["observed"]["reach"][1:] == [0.0] * 5
    assert city["observed"]["pass_rate"][0] == 0.5 and city["observed"]["pass_rate"][1:] == \
        [None] * 5
    json.dumps(out, allow_nan=False)  # raises on a NaN or an infinity


@settings(max_examples=200, derandomize=True, deadline=None)
@given(st.integers(1, 400), st.integers(1, 7), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_patterns_are_numpys_unique_rows(players_n, levels, spread, seed):
    """``fit._patterns`` is ``np.unique(axis=0, return_counts=True)``: the same rows in the
    same order with the same counts (the likelihood sums in that order)."""
    rng = np.random.default_rng(seed)
    rec = rng.integers(-spread, spread + 1, size=(players_n, levels))
    uniq, count = fit._patterns(rec)
    want, times = np.unique(rec, axis=0, return_counts=True)
    assert np.array_equal(uniq, want) and np.array_equal(count, times.astype(np.float64))
    assert count.dtype == np.float64 and uniq.dtype == rec.dtype

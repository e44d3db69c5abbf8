"""Synthetic players with a curve (decision 257; docs/telemetry.md): players of varied skill
walk each city's levels in order, so the sessions' pass rates fall across levels as the
bots' do, tool use rises with difficulty, players retry and quit, the planted boards stay,
every file says synthetic, and the same seed writes the same bytes."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from tilegen.table_loader import load_tables
from tilegen.telemetry import players, synth

SEED = 11


@pytest.fixture(scope="module")
def boards() -> pl.DataFrame:
    return synth.boards(load_tables(), 4)


@pytest.fixture(scope="module")
def made(boards):
    return players.sessions(boards, 1600, 20, players.Players(), SEED)


def _per_level(frame: pl.DataFrame) -> pl.DataFrame:
    tools = pl.col("undo_uses") + pl.col("remove_uses") + pl.col("shuffle_uses")
    return (frame.group_by("city_id", "level_id").agg(
        players=pl.col("player_id").n_unique(),
        sessions=pl.len(),
        tool_free=((pl.col("result") == "win") & (tools + pl.col("revived") == 0)).mean(),
        tools=tools.mean(), quits=(pl.col("result") == "quit").sum())
        .sort("city_id", "level_id"))


def test_the_curve_falls_across_levels_as_the_bots_does(made, boards):
    frame, _ = made
    per = _per_level(frame)
    bots = boards.group_by("city_id", "level_id").agg(pl.col("tool_free").mean().alias("bot"))
    per = per.join(bots, on=["city_id", "level_id"])
    for city, g in per.group_by("city_id"):
        g = g.sort("level_id")
        rate, bot = g["tool_free"].to_numpy(), g["bot"].to_numpy()
        # players: the same order of levels as the bots (rank correlation), and a real drop
        assert np.corrcoef(np.argsort(np.argsort(rate)), np.argsort(np.argsort(bot)))[0, 1] \
            > 0.8, (city, rate, bot)
        assert rate[0] - rate[-1] > 0.3, (city, rate)
        # tools per session rise with difficulty: the hardest level uses far more
        tools = g["tools"].to_numpy()
        assert tools[-1] > 4 * tools[0] and tools[-1] > 0.3, (city, tools)
        # the funnel: fewer players reach each later level, and some quit on the way
        reach = g["players"].to_numpy().astype(np.int64)
        assert (np.diff(reach) <= 0).all() and reach[-1] < 0.9 * reach[0], (city, reach)
        assert g["quits"].sum() > 0


def test_players_retry_a_level_and_keep_their_order(made):
    frame, _ = made
    attempts = frame.group_by("player_id", "city_id", "level_id").len()
    assert attempts["len"].max() > 3 and (attempts["len"] == 1).mean() > 0.5
    # a player's sessions come level by level: level ids never fall within a player
    falls = frame.group_by("player_id", maintain_order=True).agg(
        (pl.col("level_id").diff() < 0).any().alias("falls"))
    assert not falls["falls"].any()
    # a level after the first is played only by players who won the one before it
    won = frame.filter(pl.col("result") == "win").select(
        "player_id", (pl.col("level_id") + 1).alias("level_id")).unique()
    later = frame.filter(pl.col("level_id") > 1).select("player_id", "level_id").unique()
    assert later.join(won, on=["player_id", "level_id"], how="anti").height == 0


def test_the_planted_boards_stay(made, boards):
    frame, info = made
    assert len(info["abnormal_boards"]) == 4
    for a in info["abnormal_boards"]:
        on = frame.filter(pl.col("seed") == int(a["seed"]))
        tools = pl.col("undo_uses") + pl.col("remove_uses") + pl.col("shuffle_uses")
        first = on.filter(pl.col("result") != "quit")
        clear = ((first["result"] == "win") & (first.select(tools + pl.col("revived"))
                                                .to_series() == 0)).mean()
        # the planted rate, not the model's own, is what its players meet (median player;
        # the skill spread pulls a population's rate towards 1/2)
        assert abs(clear - a["planted_rate"]) < abs(clear - a["true_rate"]), (a, clear)


def test_same_seed_same_bytes_and_every_file_says_synthetic(boards, tmp_path):
    files = []
    for name, seed in (("a", SEED), ("b", SEED), ("c", SEED + 1)):
        frame, info = players.sessions(boards, 200, 5, players.Players(), seed)
        (tmp_path / name).mkdir()
        data, meta = synth.write(tmp_path / name, frame, info)
        files.append((data.read_bytes(), meta.read_bytes()))
        assert set(frame["source"]) == {"synthetic"} and "synthetic" in data.name
        assert json.loads(meta.read_text())["synthetic"] is True
    assert files[0] == files[1] and files[0][0] != files[2][0]


def test_too_many_players_is_one_line_exit_2(tmp_path):
    from pathlib import Path

    from cli_harness import run_cli

    p = run_cli("tilegen", "telemetry", "synth", "--out", tmp_path, "--seeds", 4096,
                "--sessions", 1000, cwd=Path(__file__).resolve().parent.parent)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "players per city is more than 2,000,000" in p.stderr
    assert list(tmp_path.iterdir()) == []

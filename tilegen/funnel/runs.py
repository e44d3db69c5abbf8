"""The funnel's input from an audit run (decision 260): per city, each level's shipped
board (the production board of the level's latest revision) and its scripted tool-free
pass rate, the rate the tune's funnel page takes for the median player's pass rate per
attempt (reads the run's records; the model is ``model``, the page
``tilegen.players.funnel_page``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from boardcore import files


SOURCE = ("Each level's pass rate per attempt is taken as the median player's: the shipped "
          "board's scripted tool-free pass rate (`tool_free_pass_rate`, the three "
          "strategies together; the production board of the level's latest revision), "
          "from each table's own audit. Tools and revives are not counted, so both funnels "
          "lose more players than players who use them would.")


def shipped_rates(run: Path) -> dict[str, dict]:
    """{city: {"rates": [per level], "runs": [the bots' runs behind each rate], "rows":
    ["city level rN"]}} of the run's records."""
    rec = pl.read_parquet(files.checked(Path(run) / "records.parquet"), columns=[
        "city_id", "level_id", "revision", "seed_index", "tool_free_pass_rate",
        "tool_free_runs"])
    latest = (rec.filter(pl.col("seed_index") == -1)
              .sort("city_id", "level_id", "revision")
              .group_by("city_id", "level_id", maintain_order=True).last())
    out: dict[str, dict] = {}
    for (city,), g in latest.group_by("city_id", maintain_order=True):
        g = g.sort("level_id")
        if g["level_id"].to_list() != list(range(1, g.height + 1)):
            continue  # a city without all its levels from 1 has no funnel
        out[city] = {"rates": [float(v) for v in g["tool_free_pass_rate"]],
                     "runs": [int(v) for v in g["tool_free_runs"]],
                     "rows": [f"{city} {lv} r{r}" for lv, r in
                              zip(g["level_id"], g["revision"])]}
    return out


"""The tile-match lines across rows (M, V), computed from every row's figures: the
generator's ``row_columns`` joins them in, and ``tune`` judges a proposal's whole table
with them (``pipeline.jobs.curve``)."""

from __future__ import annotations

import polars as pl

from .tune import KEY


def cross_rows(rows: pl.DataFrame, label) -> pl.DataFrame:
    """Per row: M (p50 raw tool-free pass rate not above the nearest lower level of the
    city that has one; several revisions of a level: the highest counts) and V (the
    production element set differs from every other level's of the city)."""
    by_city: dict[str, list[dict]] = {}
    for r in rows.select(*KEY, "raw_tool_free_pass_rate_p50",
                         "production_element_ids").iter_rows(named=True):
        by_city.setdefault(r["city_id"], []).append(r)
    out = []
    for city, mine in by_city.items():
        current: dict[int, dict] = {}
        for r in mine:
            if r["level_id"] not in current or r["revision"] > current[r["level_id"]]["revision"]:
                current[r["level_id"]] = r
        for r in mine:
            lower = [current[lv] for lv in sorted(current) if lv < r["level_id"]
                     and current[lv]["raw_tool_free_pass_rate_p50"] is not None]
            v = r["raw_tool_free_pass_rate_p50"]
            m_ok, m_detail = None, ""
            if lower and v is not None:
                prev = lower[-1]
                m_ok = int(v <= prev["raw_tool_free_pass_rate_p50"])
                m_detail = (f"p50 raw tool-free {v:.3f} at level {r['level_id']} vs "
                            f"{prev['raw_tool_free_pass_rate_p50']:.3f} at level "
                            f"{prev['level_id']}")
            mine_set = _element_set(r["production_element_ids"])
            others = [o for o in mine if o["level_id"] != r["level_id"]]
            same = [label(tuple(o[k] for k in KEY)) for o in others
                    if _element_set(o["production_element_ids"]) == mine_set]
            out.append({**{k: r[k] for k in KEY}, "m_monotone_ok": m_ok, "m_detail": m_detail,
                        "v_variety_ok": (0 if same else 1) if others else None,
                        "v_detail": ("same element set as " + ", ".join(same)) if same else ""})
    return pl.DataFrame(out, schema={"city_id": pl.String, "level_id": pl.Int64,
                                     "revision": pl.Int64, "m_monotone_ok": pl.Int64,
                                     "m_detail": pl.String, "v_variety_ok": pl.Int64,
                                     "v_detail": pl.String})


def _element_set(ids) -> frozenset:
    return frozenset(str(ids or "").split(","))

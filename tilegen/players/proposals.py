"""Target-rate proposals a designer can trust (issue 32; decision 253).

A row's target_pass_rate is judged against its players' tool-free first-attempt pass rate
(decision 250) over the row's boards less its abnormal seeds. It is off when the players'
95 % interval excludes it (significant) and the gap is larger than the practical margin
``margin`` (``--margin``, 3 points by default): a gap inside the margin is not worth a table
edit however sure it is. An off row proposes the players' rate, with its interval and the
sessions behind it.

Proposals never flatten a city's curve: a city's targets, with every proposal applied, must
fall from each level to the next by at least ``min_step`` (``--min-step``). A proposal that
would break that (level 5 at 0.98 beside level 4 at 0.97) is withheld, with the reason: the
data cannot support a curve with it, and the designer gets the conflict instead of a number.

A proposal outside its level's tool-free band (acceptance.toml) is one ``tilegen validate``
refuses: its next step is the band edit that admits it (decision 282), named by file,
level, key and value, one value per level that admits every city's proposal there.
"""

from __future__ import annotations

from collections import defaultdict

MARGIN = 0.03
MIN_STEP = 0.02


def judge(row: dict, margin: float, min_sessions: int = 1) -> None:
    """Mark ``row`` off its target (``off_target``) and give its ``proposal`` when the
    players' interval (lo, hi) excludes the target and the gap exceeds ``margin``; a row
    with fewer than ``min_sessions`` sessions behind its rate is not judged (as a seed with
    fewer is not tested)."""
    t, obs = row.get("target"), row.get("observed")
    if t is None or obs is None or row.get("pass_n", 0) < min_sessions:
        return
    row["gap"] = obs - t
    row["significant"] = not row["lo"] <= t <= row["hi"]
    if row["significant"] and abs(obs - t) > margin + 1e-12:
        row["off_target"] = True
        row["proposal"] = round(obs, 2)


def _steps(levels: list[tuple[int, float, dict]], min_step: float) -> list[tuple]:
    """Consecutive levels whose targets do not fall by ``min_step``: (upper, lower) rows."""
    bad = []
    for (l1, t1, r1), (l2, t2, r2) in zip(levels, levels[1:]):
        if t1 - t2 < min_step - 1e-9:
            bad.append((r1, r2, l1, t1, l2, t2))
    return bad


def keep_curves(rows: list[dict], min_step: float) -> None:
    """Withhold the proposals that would break a city's curve (in place): while a pair of
    consecutive levels falls by less than ``min_step`` with the proposals applied, the
    proposals of that pair are withheld (``proposal_withheld``: why) and the curve is
    checked again with the tables' own targets there."""
    cities = defaultdict(list)
    for r in rows:
        if r.get("target") is not None:
            cities[(r["city_id"], r["revision"])].append(r)
    for group in cities.values():
        group.sort(key=lambda r: r["level_id"])
        while True:
            levels = [(r["level_id"], r.get("proposal", r["target"]), r) for r in group]
            broken = [b for b in _steps(levels, min_step)
                      if "proposal" in b[0] or "proposal" in b[1]]
            if not broken:
                break
            for r1, r2, l1, t1, l2, t2 in broken:
                why = (f"would flatten the city's curve: level {l1} at {t1:.2f}, level {l2} "
                       f"at {t2:.2f} (a step of {min_step:.2f} at least)")
                for r in (r1, r2):
                    if "proposal" in r:
                        r["proposal_withheld"] = {"value": r.pop("proposal"), "why": why}


def band_edits(rows: list[dict], bands: dict[int, list[float]], file: str) -> None:
    """Per row with a proposal: its level's tool-free band (``band``, from ``bands``: level
    -> [min, max], ``reconcile_tables.bands``); a proposal outside
    it gets ``next_step``, the edit of ``file`` (the run's acceptance.toml) that admits it:
    the level's tool_free_min lowered to the lowest proposal below it, or tool_free_max
    raised to the highest above it (every city's row of the level shares the band)."""
    need = defaultdict(list)
    for r in rows:
        band = bands.get(r["level_id"])
        if "proposal" not in r or not band:
            continue
        r["band"] = band
        if r["proposal"] < band[0]:
            need[(r["level_id"], "tool_free_min", band[0])].append(r)
        elif r["proposal"] > band[1]:
            need[(r["level_id"], "tool_free_max", band[1])].append(r)
    for (level, key, now), group in need.items():
        values = [r["proposal"] for r in group]
        value = min(values) if key == "tool_free_min" else max(values)
        for r in group:
            r["next_step"] = {"file": file, "level_id": level, "key": key, "from": now,
                              "value": value, "rows": len(group)}


def next_step_text(r: dict) -> str:
    """The band edit a proposal outside its band needs first, in words."""
    e = r["next_step"]
    side = "below" if e["key"] == "tool_free_min" else "above"
    return (f"the players' {r['proposal']} lies {side} level {e['level_id']}'s tool-free "
            f"band [{r['band'][0]}, {r['band'][1]}], so `tilegen validate` refuses it as a "
            f"target; next step: in {e['file']}, the [[levels]] row level_id = "
            f"{e['level_id']}: {e['key']} = {e['value']} (now {e['from']}; the band of "
            f"every city's level {e['level_id']} and its boards' gate, so audit again), "
            f"then target_pass_rate {r['target']} -> {r['proposal']}")

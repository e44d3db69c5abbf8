"""Tune's multi-field search, joint changes and confirmation (issue 40 items 1-2), without a
cluster: every point of a row's search space is a change within the row's intent; the
joint closure keeps line E on every level it touches and raises no more than it must;
the search's score orders candidates as the ranking does; a proposal that does not hold on
the fresh boards is not proposed, and the next-ranked one that holds is; part of a joint
change is never applied alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minegen.audit import tune as mtune
from minegen.audit.generator import GENERATOR
from minegen.table_loader import check_board_gen_row, row_fields
from minegen.table_model import region_target_size
from pipeline.jobs import explore, settle
from pipeline.jobs.confirm import window

CATALOG = GENERATOR.load(None)
B_ROWS = [(2, 2), (2, 4), (2, 6), (3, 0), (3, 2), (3, 4), (3, 6), (4, 0), (4, 2)]


def _points(space, data):
    return {d.name: data.draw(st.integers(int(d.low), int(d.high)) if d.is_int else
                              st.integers(0, round((d.high - d.low) / d.step)).map(
                                  lambda k, d=d: d.low + k * d.step))
            for d in space.dims}


@given(st.sampled_from(B_ROWS), st.data())
def test_every_point_of_the_space_keeps_the_row_s_intent(key, data):
    """Never a smaller board, at least one fog region, never under FOG_SEARCH_KEEP of the
    fog cells the row asks (so never the FOG_KEEP flag by construction), and the change a
    point means is exactly the fields that differ from the row."""
    row = CATALOG.resolve(*key)
    space = GENERATOR.tune_space(CATALOG, key, ["B"])
    change = space.change(_points(space, data))
    new = {**row_fields(row), **change}
    assert all(row_fields(row)[f] != v for f, v in change.items())
    assert new["board_width"] >= row.board_width and new["board_height"] >= row.board_height
    assert new["fog_region_count"] >= 1
    asked = row.fog_region_count * region_target_size(row.board_width, row.board_height,
                                                      row.fog_target_ratio,
                                                      row.fog_region_count)
    got, diags = check_board_gen_row(new)
    if got is not None:  # a point the loader refuses is scored INVALID, never run
        cells = got.fog_region_count * region_target_size(
            got.board_width, got.board_height, got.fog_target_ratio, got.fog_region_count)
        assert cells >= mtune.FOG_SEARCH_KEEP * asked > mtune.FOG_KEEP * asked
    else:
        assert diags


def test_a_row_not_failing_b_has_no_space_and_floors_bound_it():
    assert GENERATOR.tune_space(CATALOG, (1, 2), ["A"]) is None
    space = GENERATOR.tune_space(CATALOG, (3, 2), ["B"],
                                 floors={"board_width": 24, "mine_density": 0.21})
    dims = {d.name: d for d in space.dims}
    assert dims["board_width"].low == 24 and dims["mine_density"].low == 0.21


@given(st.lists(st.tuples(st.sampled_from([(3, 0), (3, 2), (3, 4), (3, 6), (4, 0), (4, 4)]),
                          st.integers(8, 40), st.integers(5, 40)), max_size=4))
def test_the_joint_closure_keeps_e_and_raises_no_more_than_it_must(edits):
    """Against a plain reading of line E: after the closure every monotone field is
    non-decreasing along each level's depths, every raised value equals the row before it,
    and rows of untouched levels are never changed."""
    changes = {}
    for key, w, d in edits:
        changes[key] = {"board_width": w, "mine_density": round(d / 100, 2)}
    need = GENERATOR.tune_joint(CATALOG, changes)
    final = {r.key: {**row_fields(r), **changes.get(r.key, {}), **need.get(r.key, {})}
             for r in CATALOG.board_gen}
    for level in {k[0] for k in changes}:
        rows = sorted((k for k in final if k[0] == level), key=lambda k: k[1])
        for f in CATALOG.resolve(level, 0).monotone_in_depth:
            values = [final[k][f] for k in rows]
            assert values == sorted(values)
            for a, b in zip(rows, rows[1:]):
                if b in need and f in need[b] and need[b][f] != changes.get(b, {}).get(f):
                    assert need[b][f] == final[a][f]  # raised exactly to the row before
    assert all(k[0] in {e[0] for e in changes} for k in need)


def _cand(change, holds=True, margin=True, cost=1.0, b=0.99, order=0):
    return {"change": change, "status": "ok", "holds": holds, "flags": [], "margin": margin,
            "cost": cost, "order": order, "noise": [], "lines": {
                "B": {"observed": b, "passed": holds, "interval": [b - 0.02, b + 0.01]}},
            "figures": {}, "_raw": None, "records_sha256": ""}


def test_the_score_ranks_as_the_ranking_does():
    ops = {ln.name: ln for ln in GENERATOR.lines}
    good, cheap_noise = _cand({"a": 1}, cost=3.0), _cand({"a": 2}, margin=False, cost=0.1)
    near, far = _cand({"a": 3}, holds=False, b=0.93), _cand({"a": 4}, holds=False, b=0.5)
    s = [explore.score(c, ops) for c in (good, cheap_noise, near, far)]
    assert s[0] == 3.0 and s[0] < s[1] < s[2] < s[3]
    assert explore.score({"status": "invalid"}, ops) == explore.INVALID > s[3]


def test_confirmation_boards_are_never_the_audit_s():
    assert window(GENERATOR, 256, renamed=False) == (256, 1024)  # boards 256..1023
    assert window(GENERATOR, 2048, renamed=False) == (2048, GENERATOR.max_boards)
    assert window(GENERATOR, 256, renamed=True) == (None, 256)  # a new revision's own


class _Curve:
    checked = 0

    def breaks(self, changes):
        return []


def test_a_proposal_that_fails_on_fresh_boards_gives_way_or_is_not_confirmed(monkeypatch,
                                                                            tmp_path):
    """The pick held on the audit's boards; on the fresh ones it does not, the next-ranked
    candidate does: that one is proposed, with the attempts in rank order. A row whose
    every candidate fails there is "not confirmed" with the fresh figures."""
    k1, k2 = (4, 0), (4, 2)
    every = {k1: [_cand({"x": 1}, cost=0.1, order=0), _cand({"x": 2}, cost=0.5, order=1)],
             k2: [_cand({"y": 1}, cost=0.1, order=0)]}
    fresh = {("x", 1): 0.90, ("x", 2): 0.99, ("y", 1): 0.91}

    def fake_confirm(gen, catalog, a, base, folder, sets, progress):
        out = {}
        for row, options in sets.items():
            out[row] = [{k: {**_cand(ch, b=fresh[next(iter(ch.items()))],
                                     holds=fresh[next(iter(ch.items()))] >= 0.95,
                                     margin=fresh[next(iter(ch.items()))] >= 0.98),
                             "boards": "boards 1-2"} for k, ch in o.items()} for o in options]
        return out

    monkeypatch.setattr(settle, "confirm", fake_confirm)
    done = settle.settle(GENERATOR, CATALOG, None, None, tmp_path, _Curve(), {k1: ["B"],
                         k2: ["B"]}, every, {k1: every[k1][0], k2: every[k2][0]}, {}, None)
    assert done.picks[k1]["change"] == {"x": 2} and done.picks[k1]["lines"]["B"][
        "observed"] == 0.99  # the fresh boards' figure
    assert done.attempts[k1] == [({"x": 1}, False), ({"x": 2}, True)]
    assert k2 not in done.picks and done.unconfirmed[k2]["lines"]["B"]["observed"] == 0.91
    row = settle.confirmation(GENERATOR, k2, done, None, None, lambda ch: str(ch))
    assert row["class"] == "not confirmed" and row["change"] is None
    assert "not on boards 1-2" in row["why"]


def test_part_of_a_joint_change_is_refused(tmp_path):
    """``tune --apply ID --only`` naming some rows of a joint change refuses in one line,
    naming the rest; nothing is written."""
    from boardcore.errors import InputError
    from pipeline.jobs.tune import apply_tune

    out = tmp_path / "out"
    folder = out / "tune" / "t1"
    folder.mkdir(parents=True)
    doc = {"changes": {"(3, 0)": {}}, "generator": "minegen", "tables": str(
        Path(CATALOG.root)), "table_hash": CATALOG.content_hash, "joint": [],
           "rows": [{"key": [3, 0], "label": "(3, 0)", "class": "joint change",
                     "joint_group": ["(3, 2)"], "change": {"fields": [
                         {"field": "mine_density", "new": 0.2}]}},
                    {"key": [3, 2], "label": "(3, 2)", "class": "joint change",
                     "joint_group": ["(3, 0)"], "change": {"fields": [
                         {"field": "mine_density", "new": 0.2}]}}]}
    (folder / "tune.json").write_text(json.dumps(doc))
    before = Path(CATALOG.root, "board_gen.toml").read_bytes()
    with pytest.raises(InputError, match=r"one joint change with \(3, 2\)"):
        apply_tune("t1", str(out), only="3:0")
    assert Path(CATALOG.root, "board_gen.toml").read_bytes() == before


def test_the_to_do_never_offers_a_change_the_tune_refuses():
    """Issue 40 item 3: a structural row's next step is the measured row without its
    feature (when it holds and keeps the table) or locking it, never a flagged change (one
    that removes most of the feature, which the tune refuses to propose); a row whose
    proposal did not hold on fresh boards says so, with the boards that would settle it."""
    from pipeline.reports.tuned import TuneView, advice

    flagged = [{"change": "fog_target_ratio = 0.01", "flags": ["fog cells 3.0, under 50 %"]}]
    rows = [{"key": [2, 2], "label": "(2, 2)", "class": "structural", "why": "rule",
             "flagged": flagged, "drop": {"change": "fog_region_count = 0", "holds": True,
                                          "breaks": []}},
            {"key": [2, 4], "label": "(2, 4)", "class": "structural", "why": "rule",
             "flagged": flagged, "drop": {"change": "fog_region_count = 0", "holds": True,
                                          "breaks": ["B1-CP on (2, 4)"]}},
            {"key": [2, 6], "label": "(2, 6)", "class": "not confirmed", "change": None,
             "unconfirmed": {"change": "fog_target_ratio = 0.07", "boards": "boards 256-1023",
                             "n_needed": 4000}}]
    view = TuneView.of({"tune_id": "t", "rows": rows, "lock_key": "tune_locked",
                        "table_file": "board_gen.toml"}, "tune.html")
    said = {tuple(r["key"]): advice(view, tuple(r["key"]), r["label"], "") for r in rows}
    assert all("0.01" not in s for s in said.values())
    assert "without the row's feature it holds (`fog_region_count = 0`)" in said[(2, 2)]
    assert "`tune_locked = true`" in said[(2, 4)]  # the drop breaks the table: lock it
    assert "not on boards 256-1023" in said[(2, 6)] and "N 4,000" in said[(2, 6)]


def test_dropping_a_feature_says_what_its_level_keeps():
    """Issue 40 item 3: the level-2 rows' next step "without the fog it holds" says that
    level 2 would then ship without the fog when its other rows place none either ((2, 0), the
    locked reference row, places none on the default tables), and names the rows that
    keep it otherwise."""
    from types import SimpleNamespace

    fog = {(2, 0): 0.1, (2, 2): 0.0, (2, 4): 2.0, (2, 6): 6.0, (3, 0): 4.0}
    base = SimpleNamespace(rows={k: {"fog_cells_mean": v} for k, v in fog.items()})

    def row(key, change=None, drop=True):
        return {"key": list(key), "change": change,
                "drop": {"holds": drop, "change": "fog_region_count = 0"} if drop else None}

    rows = [row((2, 2)), row((2, 4)), row((2, 6))]
    settle.consequences(GENERATOR, base, rows)
    said = rows[0]["drop"]["consequence"]
    assert said.startswith("level_index 2 would keep the fog on (2, 0) only")
    assert "(2, 2) drops it" in said and "(3, 0)" not in said
    base.rows[(2, 0)] = {"fog_cells_mean": 0.0}
    rows = [row((2, 2)), row((2, 4)), row((2, 6), change={"figures": {
        "fog cells per board": 12.0}}, drop=False)]
    settle.consequences(GENERATOR, base, rows)
    assert rows[0]["drop"]["consequence"].startswith("level_index 2 would keep the fog on "
                                                     "(2, 6) only")
    rows[2] = row((2, 6))
    settle.consequences(GENERATOR, base, rows)
    assert rows[1]["drop"]["consequence"].startswith("level_index 2 would then ship "
                                                     "without the fog")

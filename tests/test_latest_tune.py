"""Which tune a run's report cites (decision 238) and which moves it no longer offers
(decision 239), on hand-made tune.json and sweep.json files: no audit runs here."""

from __future__ import annotations

import json
from pathlib import Path

from pipeline.jobs.latest_tune import find, sweeps
from pipeline.reports import tuned

HASH = "468d27bc" + "0" * 56


def _tune(out: Path, tune_id: str, created: str, **over) -> None:
    folder = out / "tune" / tune_id
    folder.mkdir(parents=True)
    doc = {"tune_id": tune_id, "created_utc": created, "generator": "minegen",
           "table_hash": HASH, "n": 32, "rows": [], "locked": [], **over}
    (folder / "tune.json").write_text(json.dumps(doc))


def test_the_latest_finished_tune_of_the_same_tables_and_n_is_the_runs(tmp_path):
    out = tmp_path / "out"
    run = out / "metric_v1" / "20261202T100000Z-468d27bc-n32"
    run.mkdir(parents=True)
    manifest = {"out": str(out), "generator": "minegen", "table_hash": HASH, "n": 32}
    assert find(run, manifest) is None  # no tune yet
    _tune(out, "20261202T110000Z-468d27bc-n32", "2026-12-02T11:00:00+00:00")
    _tune(out, "20261202T120000Z-468d27bc-n32", "2026-12-02T12:00:00+00:00")
    # newer, but of another N, other tables, another generator, or unfinished
    _tune(out, "20261202T130000Z-468d27bc-n64", "2026-12-02T13:00:00+00:00", n=64)
    _tune(out, "20261202T140000Z-468d27bc-n32", "2026-12-02T14:00:00+00:00",
          table_hash="468d27bc" + "1" * 56)
    _tune(out, "20261202T150000Z-468d27bc-n32", "2026-12-02T15:00:00+00:00",
          generator="tilegen")
    unfinished = out / "tune" / "20261202T160000Z-468d27bc-n32"
    unfinished.mkdir()
    (unfinished / ".tuning").write_text("{}")
    view = find(run, manifest)
    assert view.tune_id == "20261202T120000Z-468d27bc-n32"
    assert view.when == "2026-12-02 12:00:00 UTC"
    assert view.href == "../../tune/20261202T120000Z-468d27bc-n32/tune.html"
    assert (run / view.href).parent.name == view.tune_id


def _row(tried: list[dict], cls: str = "structural", **over) -> dict:
    return {"key": [3, 4], "label": "(3, 4)", "lines": ["B"], "class": cls, "tried": tried,
            "why": "the rule", "flagged": [], **over}


def _cand(field: str, value, passed: bool) -> dict:
    return {"change": {field: value}, "value": value, "status": "ok",
            "lines": {"B": {"passed": passed}}}


def test_a_move_is_useless_only_when_every_value_tried_alone_failed_its_line():
    vain = [_cand("mine_density", v, False) for v in (0.2, 0.25)]
    half = [_cand("fog_target_ratio", 0.05, False), _cand("fog_target_ratio", 0.03, True)]
    pair = {"change": {"mine_density": 0.3, "board_width": 24}, "value": [0.3, 24],
            "status": "ok", "lines": {"B": {"passed": True}}}
    view = tuned.TuneView.of({"tune_id": "t", "rows": [_row(vain + half + [pair])]}, "t.html")
    key = (3, 4)
    assert tuned.useless(view, key, "mine_density", "", "B") == ("tune", [0.2, 0.25])
    assert tuned.useless(view, key, "fog_target_ratio", "", "B") is None  # 0.03 held
    assert tuned.useless(view, key, "fog_region_count", "", "B") is None  # not tried
    assert tuned.useless(view, key, "mine_density", "", "A") is None  # another line
    assert tuned.useless(view, (2, 2), "mine_density", "", "B") is None  # another row
    # a knob of two keys: tried through either key
    size = tuned.TuneView.of({"tune_id": "t", "rows": [_row(
        [_cand("board_width", 20, False), _cand("board_height", 20, False)])]}, "t.html")
    assert tuned.useless(size, key, "board_size", "board_width and board_height", "B") == \
        ("tune", [20, 20])


def test_a_sweep_of_the_same_tables_that_never_held_makes_a_move_useless(tmp_path):
    out = tmp_path / "out"
    for i, (field, passed) in enumerate((("fog_region_count", [False, False]),
                                         ("mine_density", [False, True]))):
        folder = out / "sweeps" / f"s{i}"
        folder.mkdir(parents=True)
        (folder / "sweep.json").write_text(json.dumps({
            "sweep_id": f"s{i}", "generator": "minegen", "table_hash": HASH,
            "inputs": {"row": [3, 4], "resolved_row": [3, 4], "field": field},
            "values": [{"value": k, "status": "ok", "lines": {"B": {"passed": p}}}
                       for k, p in enumerate(passed)]
            + [{"value": 9, "status": "invalid"}]}))
    other = out / "sweeps" / "other"
    other.mkdir()
    (other / "sweep.json").write_text(json.dumps({
        "sweep_id": "other", "generator": "minegen", "table_hash": "f" * 64,
        "inputs": {"row": [3, 4], "field": "fog_target_ratio"},
        "values": [{"value": 1, "status": "ok", "lines": {"B": {"passed": False}}}]}))
    found = sweeps({"out": str(out), "generator": "minegen", "table_hash": HASH})
    assert sorted(s.sweep_id for s in found) == ["s0", "s1"]  # not the other tables'
    key = (3, 4)
    assert tuned.useless(None, key, "fog_region_count", "", "B", found) == ("sweep s0", [0, 1])
    assert tuned.useless(None, key, "mine_density", "", "B", found) is None
    assert tuned.useless(None, key, "fog_target_ratio", "", "B", found) is None


def test_each_class_gets_its_action():
    proposal = _row([], "one field", change={"summary": "fog_target_ratio = 0.04",
                                             "margin": True})
    broken = _row([], "breaks the curve", key=[3, 2], label="(3, 2)",
                  breaks={"change": "board_width = 20", "lines": ["E on (3, 4)"]})
    stuck = _row([], "structural", key=[2, 2], label="(2, 2)", why="the remove-only rule")
    view = tuned.TuneView.of({"tune_id": "t", "rows": [proposal, broken, stuck],
                              "locked": [{"key": [2, 0], "why": "a reference row"}],
                              "lock_key": "tune_locked", "table_file": "board_gen.toml"},
                             "../../tune/t/tune.html")
    assert tuned.klass(view, (3, 4)) == "proposal"
    assert tuned.advice(view, (3, 4), "(3, 4)", None) == (
        "tune proposes `fog_target_ratio = 0.04` in board_gen.toml (with margin): "
        "[tune.html](../../tune/t/tune.html#row-3--4)")
    assert tuned.klass(view, (3, 2)) == "breaks the curve"
    assert "`board_width = 20` fixes it but breaks E on (3, 4)" in \
        tuned.advice(view, (3, 2), "(3, 2)", None)
    assert tuned.klass(view, (2, 2)) == "structural"
    assert tuned.advice(view, (2, 2), "(2, 2)", None).startswith(
        "the remove-only rule; next step: accept the failure: `tune_locked = true` on its row "
        "of board_gen.toml")
    assert tuned.klass(view, (2, 0)) == "locked"
    assert tuned.klass(None, (2, 0), {(2, 0): "a reference row"}) == "locked"
    assert tuned.klass(None, (3, 4)) == "not tuned"
    assert "`minegen tune --run X`" in tuned.advice(None, (3, 4), "(3, 4)",
                                                    "minegen tune --run X")

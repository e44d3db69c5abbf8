"""``minegen tune`` on fixture tables, on real loopback clusters: the change it proposes is
the boundary that separate audits on both sides confirm; a row the table locks is never
changed; the proposed tables pass their own audit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.jobs.audit import run_audit
from pipeline.jobs.tune import TuneOptions, run_tune
from pipeline.options import AuditOptions

pytestmark = pytest.mark.cluster
N = 64
# the one fog variant, as the diff tests use it
VARIATION = Path(__file__).parent / "fixtures" / "tables" / "monotone_drop" / "variation.toml"


def row(level, depth, size, density, count, ratio, locked=False) -> str:
    return f"""[[rows]]
level_index = {level}
node_depth = {depth}
board_width = {size}
board_height = {size}
mine_density = {density}
inferability_target = 0.85
solver_rules = "single_subset"
min_safe_count = 20
max_gen_attempts = 8
fog_region_count = {count}
fog_target_ratio = {ratio}
board_biome = ["dungeon"]
{"tune_locked = true" if locked else ""}
"""


def tables(root: Path, ratio: float = 0.10, locked: bool = False) -> str:
    root.mkdir(parents=True)
    (root / "variation.toml").write_bytes(VARIATION.read_bytes())
    (root / "board_gen.toml").write_text(row(1, 0, 10, 0.10, 0, 0.0)
                                         + row(2, 0, 20, 0.18, 1, ratio, locked))
    return str(root)


def b_of(run) -> dict:
    return next(r for r in run.results if r["line"] == "B" and r["level_index"] == 2)


def test_tune_finds_the_boundary_and_its_tables_pass(tmp_path):
    base = tables(tmp_path / "t")
    res = run_tune(TuneOptions(AuditOptions(tables=base, n=N, workers=2,
                                            out=str(tmp_path / "out"))), progress=False)
    doc = res.doc
    (fixed,) = doc["rows"]
    change = fixed["change"]
    assert fixed["label"] == "(2, 0)" and fixed["lines"] == ["B"]
    assert change["field"] == "fog_target_ratio" and change["old"] == 0.10
    assert res.exit_code == 0 and doc["proposed_exit_code"] == 0  # passes its own audit
    # the boundary, by separate audits of tables holding each side
    new = change["new"]
    other = round(new + 0.01, 4)  # the candidate tried just before: a smaller change
    ok = run_audit(AuditOptions(tables=tables(tmp_path / "ok", new), n=N, workers=1,
                                out=str(tmp_path / "a")), progress=False)
    bad = run_audit(AuditOptions(tables=tables(tmp_path / "bad", other), n=N, workers=1,
                                 out=str(tmp_path / "b")), progress=False)
    assert b_of(ok)["passed"] is True and b_of(bad)["passed"] is False
    assert change["evidence"]["B"]["observed"] == b_of(ok)["observed"]
    # the proposed root differs from the original in that one line only
    proposed = (res.folder / "tables" / "board_gen.toml").read_text().splitlines()
    original = Path(base, "board_gen.toml").read_text().splitlines()
    assert [(a, b) for a, b in zip(original, proposed) if a != b] == [
        ("fog_target_ratio = 0.1", f"fog_target_ratio = {new}")]
    assert change["edits"] == [["fog_target_ratio", "0.1", str(new)]]  # the file's own line
    patch = (res.folder / "patch.md").read_text()
    assert f"`fog_target_ratio = 0.1` → `fog_target_ratio = {new}`" in patch
    assert (res.folder / "diff.html").is_file()
    assert not (res.folder / ".tuning").exists()
    assert not list(res.folder.glob(".partial-*"))  # candidate shards gone once done
    assert json.loads((res.folder / "tune.json").read_text())["exit_code"] == 0


def test_tune_never_changes_a_locked_row(tmp_path):
    base = tables(tmp_path / "t", locked=True)
    res = run_tune(TuneOptions(AuditOptions(tables=base, n=N, workers=2,
                                            out=str(tmp_path / "out"))), progress=False)
    assert res.doc["rows"] == [] and [r["label"] for r in res.doc["locked"]] == ["(2, 0)"]
    assert (res.folder / "tables" / "board_gen.toml").read_text() == \
        Path(base, "board_gen.toml").read_text()
    assert res.exit_code == 1 and "B on (2, 0)" in res.doc["still_failing"]
    assert "(2, 0) fails B" in (res.folder / "patch.md").read_text()

"""``minegen sweep``: one row across values of one field, on a real loopback cluster,
checked against separate audits of table roots that hold each value."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from cli_harness import run_cli, some_value_holds

from boardcore.errors import InputError
from minegen.table_loader import load_tables
from minegen.audit.generator import BOARD_SIZE, GENERATOR
from pipeline.jobs.audit import run_audit
from pipeline.jobs.sweep import LARGEST, SMALLEST, SweepOptions, boundary, parse_vary, run_sweep
from pipeline.options import AuditOptions

N = 32
# One small no-fog row: target 0.95 with a single attempt, so density quickly breaks a
# hard line (measured: 0.10 holds on all 32 boards, 0.15 has an illegal board).
ROW = {
    "level_index": 1, "node_depth": 0, "board_width": 10, "board_height": 10,
    "mine_density": 0.10, "inferability_target": 0.95, "solver_rules": "single_subset",
    "min_safe_count": 50, "max_gen_attempts": 1, "fog_region_count": 0,
    "fog_target_ratio": 0.0, "board_biome": ["dungeon"],
}
VARIATION = """[[rows]]
variant_id = "fog"
display_name = "fog"
unlock_level = 2
scope = "region"
info_mask = "hide_numbers"
cell_constraint = "safe_nonzero"
"""


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


def table_root(path: Path, **changes) -> str:
    """A table root holding ROW (with ``changes``) and the fog variation."""
    path.mkdir(parents=True)
    row = {**ROW, **changes}
    body = "[[rows]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in row.items())
    (path / "board_gen.toml").write_text(body, encoding="utf-8")
    (path / "variation.toml").write_text(VARIATION, encoding="utf-8")
    return str(path)


def sweep(tmp_path, vary: str, n: int = N, row=(1, 0), **kw):
    """A sweep on the session's shared cluster (``scheduler=``) or, without one, on a
    one-worker LocalCluster of its own."""
    root = kw.pop("tables", None) or table_root(tmp_path / "tables")
    where = {"scheduler": kw.pop("scheduler")} if kw.get("scheduler") else {"workers": 1}
    opts = SweepOptions(row=row, vary=parse_vary(vary), tables=root, n=n,
                        out=str(tmp_path / "reports"), **where, **kw)
    return run_sweep(opts, progress=False)


# ------------------------------------------------------------------ parsing, no cluster

def test_grid_is_decimal_exact():
    v = parse_vary("mine_density=0.10:0.20:0.02")
    assert v.values == (0.1, 0.12, 0.14, 0.16, 0.18, 0.2)
    assert [repr(x) for x in v.values] == ["0.1", "0.12", "0.14", "0.16", "0.18", "0.2"]
    assert v.start == Decimal("0.10") and v.direction == LARGEST
    assert parse_vary("mine_density=0.10:0.21:0.02").values[-1] == 0.2  # STOP off the grid
    assert parse_vary("max_gen_attempts=1:16:5").values == (1, 6, 11, 16)
    assert parse_vary("max_gen_attempts=4:4:1").direction == SMALLEST


@pytest.mark.parametrize("text", [
    "mine_density", "mine_density=0.1:0.2", "mine_density=0.1-0.2-0.05", "=0.1:0.2:0.1",
    "solver_rules=1:2:1", "level_index=1:3:1", "no_such_field=1:2:1",
    "mine_density=0.1:0.2:0", "mine_density=0.1:0.2:-0.05", "mine_density=0.3:0.2:0.05",
    "mine_density=0:1:0.01", "board_width=8:64:0.5", "board_width=8.0:16:1",
    "mine_density=nan:1:1", "mine_density=0.1:inf:0.1", "mine_density=a:b:c",
    "mine_density=0:1e999999:1e-999999",
])
def test_bad_vary_is_bad_input(text):
    with pytest.raises(InputError):
        parse_vary(text)


@pytest.mark.parametrize("text", ["1", "1:x", "1:0:0", ""])
def test_bad_row_is_bad_input(text):
    with pytest.raises(InputError):
        GENERATOR.parse_key(text)


def test_board_size_sets_width_and_height(tmp_path):
    tables = load_tables(table_root(tmp_path / "t"))
    plan, diags = GENERATOR.vary(tables, (1, 0), BOARD_SIZE, 12)
    assert (plan.row.board_width, plan.row.board_height) == (12, 12) and diags == []
    assert (plan.level, plan.depth) == (1, 0)  # the audit's seeds
    got = [GENERATOR.vary(tables, (1, 0), BOARD_SIZE, v)
           for v in parse_vary("board_size=10:130:60").values]
    assert [p is not None for p, _ in got] == [True, False, False]  # 70, 130 break [8, 64]
    assert GENERATOR.current_value(tables, (1, 0), BOARD_SIZE) == 10
    assert {d.category for d in got[1][1]} == {"domain"}


def test_boundary_direction_and_gaps():
    vals = [{"value": v, "status": s, "holds": h} for v, s, h in
            [(1, "ok", False), (2, "ok", True), (3, "ok", False), (4, "ok", True),
             (5, "ok", False), (6, "invalid", None)]]
    big = boundary(vals, LARGEST)
    assert (big["value"], big["next"], big["failing_inside"]) == (4, 5, [1, 3])
    small = boundary(vals, SMALLEST)
    assert (small["value"], small["next"], small["failing_inside"]) == (2, 1, [3, 5])
    none = boundary([{**v, "holds": False if v["status"] == "ok" else None} for v in vals],
                    LARGEST)
    assert none["value"] is None and none["text"].startswith("none holds")


def test_a_value_that_removes_the_feature_is_never_the_boundary():
    """Issue 30 item 7: the largest value that holds, 2, keeps under half of what the row
    asks (flags), so the boundary is 1, and the sentence names 2."""
    vals = [{"value": 1, "status": "ok", "holds": True, "flags": []},
            {"value": 2, "status": "ok", "holds": True, "flags": ["fog cells 3.1, under 50 %"]},
            {"value": 3, "status": "ok", "holds": False, "flags": []}]
    b = boundary(vals, LARGEST)
    assert b["value"] == 1 and "2 hold only by removing most of what the row asks" in b["text"]
    only = boundary([vals[1], vals[2]], LARGEST)
    assert only["value"] is None and only["text"].startswith(
        "none holds while keeping what the row asks: 2 pass every hard line only by removing")


def test_a_sweep_page_says_how_sure_and_draws_no_flat_chart(tmp_path, cluster):
    """The default row (3, 4) across fog_target_ratio: B's value carries its 95 % interval
    and "within noise" where the interval straddles the threshold, small ratios are marked
    as removing the fog (under half the cells the table asks), and a line that does not
    move (A' is 0 everywhere) gets a sentence, not a chart."""
    from pipeline.reports import sweep_page

    r = sweep(tmp_path, "fog_target_ratio=0.02:0.04:0.01", n=32, row=(3, 4),
              tables=str(Path(__file__).resolve().parent.parent / "tables"),
              scheduler=cluster)
    by = {v["label"]: v for v in r.doc["values"]}
    assert by["0.02"]["flags"] and "under 50 %" in by["0.02"]["flags"][0]
    assert r.doc["boundary"]["value"] not in [v["value"] for v in r.doc["values"]
                                              if v.get("flags")]
    b = by["0.04"]["lines"]["B"]
    assert len(b["interval"]) == 2 and b["interval"][0] <= b["observed"] <= b["interval"][1]
    md = sweep_page.markdown(r.doc)
    assert "95 %:" in md and "Line A' stays at 0 for every value of fog_target_ratio" in md
    assert "Line A' against" not in md  # no flat chart


def test_only_invalid_values_report_without_a_cluster(tmp_path):
    res = sweep(tmp_path, "mine_density=0.55:0.65:0.05")
    assert res.exit_code == 1 and res.records_sha256 == {}
    assert [v["status"] for v in res.doc["values"]] == ["invalid"] * 3
    assert res.doc["boundary"]["value"] is None
    assert (res.sweep_dir / "sweep.html").is_file()


# ------------------------------------------------------------- on a real loopback cluster

@pytest.mark.cluster
def test_density_sweep_boundary_agrees_with_separate_audits(tmp_path, cluster):
    res = sweep(tmp_path, "mine_density=0.10:0.30:0.05", scheduler=cluster)
    doc = res.doc
    assert [v["label"] for v in doc["values"]] == ["0.1", "0.15", "0.2", "0.25", "0.3"]
    assert all(v["status"] == "ok" for v in doc["values"])
    b = doc["boundary"]
    assert b["value"] is not None and b["next"] is not None, b
    assert res.exit_code == 0

    by_value = {v["value"]: (i, v) for i, v in enumerate(doc["values"])}
    for value, should_hold in ((b["value"], True), (b["next"], False)):
        root = table_root(tmp_path / f"tables-{value}", mine_density=value)
        audit = run_audit(AuditOptions(tables=root, rows=((1, 0),), n=N, scheduler=cluster,
                                       out=str(tmp_path / f"audit-{value}")), progress=False)
        i, v = by_value[value]
        assert (audit.exit_code == 0) is should_hold
        assert v["holds"] is should_hold
        # same seeds, same snapshot: the sweep's value IS that audit's row
        assert v["records_sha256"] == audit.manifest["records_sha256"]
        assert res.records_sha256[i] == audit.manifest["records_sha256"]
        agg = audit.aggregates.row(0, named=True)
        for col in ("inferability_p10", "inferability_p50", "inferability_core_p10",
                    "retry_rate", "mine_drift_p50"):
            assert v[col] == agg[col], col
        failed = {r["line"] for r in audit.results if r["hard"] and r["passed"] is False}
        assert set(v["failed_lines"]) == failed

    # the folder: atomic, complete, self-contained
    sweeps = res.sweep_dir.parent
    assert res.sweep_dir.name == doc["sweep_id"] and doc["sweep_id"].endswith("-1-0-mine_density")
    assert [p.name for p in sweeps.iterdir()] == [doc["sweep_id"]]  # no temp, no scratch
    assert sorted(p.name for p in res.sweep_dir.iterdir()) == [
        "sweep.csv", "sweep.html", "sweep.json", "sweep.md"]
    on_disk = json.loads((res.sweep_dir / "sweep.json").read_text(encoding="utf-8"))
    assert on_disk["boundary"] == json.loads(json.dumps(b))
    assert on_disk["table_hash"] == load_tables(tmp_path / "tables").content_hash
    assert on_disk["n"] == N and on_disk["metric_version"] == 1 and on_disk["packages"]
    assert on_disk["scheduler"] == f"external scheduler {cluster}"  # where it ran, recorded
    csv = pl.read_csv(res.sweep_dir / "sweep.csv")
    assert csv.height == 5 and csv.get_column("holds").to_list() == [
        v["holds"] for v in doc["values"]]
    page = (res.sweep_dir / "sweep.html").read_text(encoding="utf-8")
    assert "<svg" in page and 'id="plot-sweep-A"' in page
    assert "http://" not in page and "https://" not in page and "<script src" not in page
    assert "| 0.15 |" in (res.sweep_dir / "sweep.md").read_text(encoding="utf-8")


@pytest.mark.cluster
def test_out_of_domain_values_are_reported_not_run(tmp_path, cluster):
    res = sweep(tmp_path, "mine_density=0.45:0.60:0.05", n=8, scheduler=cluster)
    status = {v["label"]: v for v in res.doc["values"]}
    assert [status[k]["status"] for k in ("0.45", "0.5", "0.55", "0.6")] == [
        "ok", "ok", "invalid", "invalid"]
    for k in ("0.55", "0.6"):
        assert status[k]["categories"] == ["domain"]
        rule = status[k]["diagnostics"][0]["rule"]
        assert "mine_density must be a finite number in (0, 0.5]" in rule
    assert sorted(res.records_sha256) == [0, 1]  # only the valid values ran
    assert all(status[k]["records_sha256"] for k in ("0.45", "0.5"))
    assert res.exit_code == (0 if some_value_holds(res.doc) else 1) == res.doc["exit_code"]
    assert "invalid: domain" in (res.sweep_dir / "sweep.md").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------------- CLI

def cli(*args: str, **env: str) -> subprocess.CompletedProcess:
    """``minegen sweep ARGS`` in a process of its own, every warning shown."""
    return subprocess.run([sys.executable, "-m", "minegen.cli", "sweep", *args],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "default", **env})


def in_process(*args: str) -> subprocess.CompletedProcess:
    """``minegen sweep ARGS`` in this process, every warning shown (as PYTHONWARNINGS=default
    shows them to a process)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        return run_cli("minegen", "sweep", *args)


@pytest.mark.parametrize("args", [
    ["--row", "1:0", "--vary", "mine_density:0.1:0.2"],
    ["--row", "1:0", "--vary", "bogus=1:2:1"],
    ["--row", "1:0", "--vary", "mine_density=0.1:0.2:0"],
    ["--row", "one", "--vary", "mine_density=0.1:0.2:0.05"],
    ["--row", "9:0", "--vary", "mine_density=0.1:0.2:0.05"],
    ["--row", "1:0", "--vary", "mine_density=0.1:0.2:0.05", "--n", "0"],
])
def test_cli_bad_input_exits_2_without_traceback(tmp_path, args):
    p = in_process(*args, "--out", str(tmp_path / "reports"))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.startswith("minegen: ")
    assert not (tmp_path / "reports").exists()


@pytest.mark.cluster
def test_cli_prints_table_and_folder(tmp_path, cluster):
    root = table_root(tmp_path / "tables")
    p = in_process("--row", "1:0", "--vary", "mine_density=0.1:0.2:0.1", "--n", "8",
                   "--scheduler", cluster, "--tables", root, "--out", str(tmp_path / "reports"))
    assert p.returncode == 0, p.stderr
    assert "| mine_density | verdict |" in p.stdout and "| 0.1 | holds |" in p.stdout
    folder = Path(p.stdout.strip().splitlines()[-1].removeprefix("sweep: "))
    assert folder.is_dir() and folder.parent == tmp_path / "reports" / "sweeps"


def test_cli_unreachable_scheduler_exits_3_and_writes_nothing(tmp_path):
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = cli("--row", "1:0", "--vary", "mine_density=0.1:0.2:0.1", "--n", "4",
            "--tables", table_root(tmp_path / "tables"), "--scheduler",
            f"tcp://127.0.0.1:{port}", "--out", str(tmp_path / "reports"),
            MINEGEN_CONNECT_TIMEOUT="1")
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "cannot reach the Dask scheduler" in p.stderr
    assert not (tmp_path / "reports").exists()

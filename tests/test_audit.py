"""The F4 audit on real Dask clusters (loopback only), real Parquet, real Pandera checks."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from cli_harness import run_cli

from pipeline.analysis import records
from pipeline.analysis.lines import evaluate, hard_failures
from minegen.audit.generator import GENERATOR
from pipeline.jobs.audit import AuditResult, run_audit
from pipeline.options import AuditOptions

pytestmark = pytest.mark.cluster
FIXTURES = Path(__file__).parent / "fixtures" / "tables"
ROWS = ((1, 0), (2, 4), (3, 4), (4, 4))
N = 24


def audit(tmp_path, **kw) -> AuditResult:
    opts = AuditOptions(out=str(tmp_path / "reports"), n=kw.pop("n", N),
                        rows=kw.pop("rows", ROWS), **kw)
    return run_audit(opts, progress=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    return audit(tmp_path_factory.mktemp("base"), workers=1)


def test_records_identical_across_workers_chunking_and_scheduler(baseline, tmp_path, cluster):
    """One worker, two workers in tasks of 5 boards (LocalClusters of their own) and the
    session's external scheduler (`dask scheduler` and `dask worker` processes) in tasks
    of 7: the same records, byte for byte."""
    two = audit(tmp_path / "two", workers=2, seeds_per_task=5)
    ext = audit(tmp_path / "ext", scheduler=cluster, seeds_per_task=7)
    assert baseline.records.height == len(ROWS) * N
    for other in (two, ext):
        assert other.records.equals(baseline.records)
        assert other.manifest["records_sha256"] == baseline.manifest["records_sha256"]
        a = (baseline.run_dir / "records.parquet").read_bytes()
        assert (other.run_dir / "records.parquet").read_bytes() == a
    assert "external scheduler" in ext.manifest["scheduler"]
    assert two.manifest["workers"] == 2


def test_report_folder(baseline):
    d = baseline.run_dir
    assert d.parent.name == "metric_v1"
    assert not (d.parent / "LATEST").exists()  # a --rows subset never becomes LATEST
    for name in ("manifest.json", "records.parquet", "aggregates.parquet", "aggregates.csv",
                 "assertions.json", "report.md", "report.html", "shortfall.csv"):
        assert (d / name).is_file(), name
    assert not list(d.parent.glob(".tmp-*"))
    m = json.loads((d / "manifest.json").read_text())
    for key in ("run_id", "created_utc", "code_version", "git_commit", "table_hash", "n",
                "sigma_formula", "metric_version", "packages", "scheduler", "wall_s"):
        assert key in m, key
    assert m["n"] == N and m["metric_version"] == 1 and m["packages"]["dask"] != "missing"
    # written once, with the report's own time: the file is the manifest the run returned
    assert m == json.loads(json.dumps(baseline.manifest, default=str))
    t = m["timings_s"]
    assert t["report"] > 0 and m["wall_s"] >= t["generate"] + t["finish"] + t["report"]
    recs = pl.read_parquet(d / "records.parquet")
    assert recs.equals(baseline.records)
    agg = pl.read_parquet(d / "aggregates.parquet")
    assert agg.select("level_index", "node_depth").rows() == list(ROWS)
    html = (d / "report.html").read_text()
    assert html.count("<svg") >= 3 and "plot-inferability-L2" in html


def test_second_run_gets_its_own_folder(baseline, tmp_path, cluster):
    out = baseline.run_dir.parent.parent
    again = run_audit(AuditOptions(out=str(out), n=4, rows=((1, 0),), scheduler=cluster),
                      progress=False)
    assert again.run_dir != baseline.run_dir and baseline.run_dir.is_dir()


def test_latest_names_the_newest_complete_full_table_run(tmp_path, cluster):
    tables = str(FIXTURES / "monotone_drop")
    full = run_audit(AuditOptions(tables=tables, n=4, scheduler=cluster, out=str(tmp_path)),
                     progress=False)
    latest = full.run_dir.parent / "LATEST"
    assert latest.read_text().strip() == full.run_dir.name
    subset = run_audit(AuditOptions(tables=tables, n=4, rows=("1:0",), scheduler=cluster,
                                    out=str(tmp_path)), progress=False)
    assert subset.manifest["full_table"] is False
    assert latest.read_text().strip() == full.run_dir.name  # the subset did not move it
    again = run_audit(AuditOptions(tables=tables, n=4, scheduler=cluster, out=str(tmp_path)),
                      progress=False)
    assert latest.read_text().strip() == again.run_dir.name
    assert not list(latest.parent.glob(".LATEST*")) and not list(latest.parent.glob("*.tmp"))


def test_hard_lines_fire_and_report_names_rows(tmp_path, cluster):
    res = audit(tmp_path, tables=str(FIXTURES / "audit_fires"), rows=(), n=32,
                scheduler=cluster)
    assert res.exit_code == 1
    doc = json.loads((res.run_dir / "assertions.json").read_text())
    failed = {(r["line"], r["level_index"], r["node_depth"]) for r in doc["results"]
              if r["hard"] and r["passed"] is False}
    assert {("A", 1, 0), ("A'", 2, 0), ("B", 3, 0)} <= failed
    assert not any(level == 4 for _, level, _ in failed)
    b = next(r for r in doc["results"] if (r["line"], r["level_index"]) == ("B", 3))
    assert b["observed"] < 0.95 and b["threshold"] == 0.95
    assert any(fc["level_index"] == 3 and fc["column"] == "b_regions_full_share"
               for fc in doc["failure_cases"])
    md = (res.run_dir / "report.md").read_text()
    assert "FAIL" in md and "(3, 0)" in md


def test_e_warns_without_failing(tmp_path, cluster):
    res = audit(tmp_path, tables=str(FIXTURES / "monotone_drop"), rows=(), n=8,
                scheduler=cluster)
    assert res.exit_code == 0
    e = [r for r in res.results if r["line"] == "E"]
    assert [r["passed"] for r in e] == [True, False]


def judge(frame: pl.DataFrame):
    return evaluate(frame, GENERATOR.lines, GENERATOR.key_fields)


def test_a_double_prime_and_b_prime_fire_on_hand_made_frames(baseline):
    agg = baseline.aggregates
    ok_results, _ = judge(agg)
    base_failed = {(r["line"], r["level_index"]) for r in hard_failures(ok_results)}
    # read by hand from the same frame: B fails exactly where its share is below 0.95,
    # and no other hard line fails on these rows
    by_hand = {("B", r["level_index"]) for r in agg.iter_rows(named=True)
               if r["b_regions_full_share"] is not None and r["b_regions_full_share"] < 0.95}
    assert base_failed == by_hand
    bad = agg.with_columns(
        pl.when(pl.col("level_index") == 2).then(0.80).otherwise(pl.col("inferability_target"))
        .alias("inferability_target"),
        pl.when(pl.col("level_index") == 1).then(3).otherwise(pl.col("b_prime_fogged_boards"))
        .alias("b_prime_fogged_boards"),
    )
    results, failures = judge(bad)
    failed = {(r["line"], r["level_index"]) for r in hard_failures(results)}
    assert failed == base_failed | {("A''", 2), ("B'", 1)}
    assert {"inferability_target", "b_prime_fogged_boards"} <= set(failures["column"].to_list())
    # B' does not apply to fog rows, B does not apply to no-fog rows
    bp = {r["level_index"]: r["applies"] for r in results if r["line"] == "B'"}
    assert bp[1] is True and bp[2] is False


def cli(*args, env=None):
    """A ``minegen`` process of its own (for what is read when a process starts)."""
    return subprocess.run([sys.executable, "-m", "minegen.cli", *args], capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args", [["--n", "0"], ["--n", "5000"], ["--workers", "0"],
                                  ["--scheduler", "localhost"], ["--rows", ""],
                                  ["--profile", "no_such_profile"], ["--rows", "1-0"],
                                  ["--rows", "9:0"], ["--profile", "configs/none.toml"],
                                  ["--tables", str(FIXTURES / "many_errors")]])
def test_bad_input_exits_2(args, tmp_path):
    p = run_cli("minegen", "audit", "--out", str(tmp_path), *args)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert not any(tmp_path.iterdir())  # nothing written for bad input


def test_unreachable_scheduler_exits_3(tmp_path):
    p = cli("audit", "--out", str(tmp_path), "--n", "4", "--scheduler",
            f"tcp://127.0.0.1:{free_port()}", env={"MINEGEN_CONNECT_TIMEOUT": "2"})
    assert p.returncode == 3, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and "cannot reach" in p.stderr
    assert not list(tmp_path.rglob("manifest.json"))


def test_cli_failing_line_exits_1_with_summary(tmp_path, cluster):
    p = run_cli("minegen", "audit", "--tables", str(FIXTURES / "audit_fires"), "--rows",
                "3:0,4:0", "--n", "16", "--scheduler", cluster, "--out", str(tmp_path))
    assert p.returncode == 1, p.stderr
    assert "FAIL" in p.stdout and "B failed on 1 row(s)" in p.stdout and "(3, 0)" in p.stdout
    assert "report:" in p.stdout


def test_slurm_dry_run_prints_job_script():
    p = run_cli("minegen", "audit", "--slurm",
                str(FIXTURES.parent.parent.parent / "configs" / "slurm.toml"), "--dry-run")
    assert p.returncode == 0, p.stderr
    assert "#SBATCH" in p.stdout and "dask" in p.stdout and "#SBATCH -J minegen-audit" in p.stdout
    assert "a real run starts its own" in p.stderr  # the address in the script is not reused


def test_progress_bar_only_on_a_terminal(capsys):
    from pipeline.engine.graph import Progress

    quiet = Progress(rows=2, boards=8)  # pytest's stderr is not a terminal: silent
    quiet.advance(4, 1)
    quiet.close()
    assert capsys.readouterr().err == ""
    loud = Progress(rows=2, boards=8, enabled=True)
    loud.advance(4, 1)
    loud.advance(4, 1)
    loud.close()
    err = capsys.readouterr().err
    assert "rows 1/2  boards 4/8" in err and "rows 2/2  boards 8/8" in err


def test_tier_shares_are_the_records_tier_distribution(baseline):
    """The audit computes every board's difficulty tier (record schema 2) and the report's
    per-row shares are exactly the records' distribution."""
    recs = baseline.records
    assert (recs["record_schema_version"] == 2).all() and (recs["tier"] >= 0).all()
    assert baseline.manifest["record_schema_version"] == 2
    key = ["level_index", "node_depth"]
    by_hand = recs.group_by(key).agg(
        *((pl.col("tier") == t).mean().alias(f"tier_{t}_share") for t in range(5)),
        pl.col("tier").mean().alias("tier_mean")).sort(key)
    got = baseline.aggregates.select(key + [f"tier_{t}_share" for t in range(5)]
                                     + ["tier_mean"]).sort(key)
    assert got.equals(by_hand)
    total = got.select(sum(pl.col(f"tier_{t}_share") for t in range(5))).to_series()
    assert ((total - 1).abs() < 1e-12).all()


def _interrupted_run(tmp_path, monkeypatch, cluster, rows, n=16) -> Path:
    """A run folder interrupted after every row's shard was saved (its .partial-*)."""
    import signal

    from pipeline.errors import Interrupted, RunInterrupted
    from pipeline.jobs import audit as job

    def interrupted(*a, **kw):
        raise Interrupted(signal.SIGINT)

    with monkeypatch.context() as m:
        m.setattr(job, "_finish", interrupted)
        with pytest.raises(RunInterrupted):
            audit(tmp_path, rows=rows, n=n, scheduler=cluster)
    (partial,) = (tmp_path / "reports" / "metric_v1").glob(".partial-*")
    return partial


def _forge(shards: Path, position: int, frame: pl.DataFrame, journal: bool = False) -> None:
    """Write ``frame`` as the shard at ``position`` with a key file that matches it (the
    row count, the schema, the sha256 of the new bytes); ``journal``: and a journal line
    that matches it too (someone who can write the run folder)."""
    import hashlib

    data, key = shards / f"r{position:05d}.parquet", shards / f"r{position:05d}.json"
    frame.write_parquet(data, compression="lz4", statistics=False)
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    doc = json.loads(key.read_text())
    doc.update(rows=frame.height, sha256=digest)
    key.write_text(json.dumps(doc, sort_keys=True))
    if journal:
        with open(shards.parent / "journal.jsonl", "a") as f:
            f.write(json.dumps({"position": position, "rows": frame.height,
                                "sha256": digest}) + "\n")


def _one_value_changed(shards: Path, position: int, board: int) -> pl.DataFrame:
    """The shard's records with one figure of one board changed (schema and count kept)."""
    frame = pl.read_parquet(shards / f"r{position:05d}.parquet")
    changed = frame.with_columns(pl.when(pl.col("seed_index") == board)
                                 .then(pl.col("revealed") + 1).otherwise(pl.col("revealed"))
                                 .alias("revealed"))
    assert changed.schema == frame.schema and changed.height == frame.height
    assert (changed["revealed"] != frame["revealed"]).sum() == 1
    return changed


def test_a_forged_shard_is_named_and_recomputed(tmp_path, monkeypatch, cluster, capsys):
    """Issue 29's forgery: row (1, 0)'s shard copied over row (1, 2)'s, relabelled
    node_depth 2, its key file's hash fixed: the records' stream seeds and board size are
    not row (1, 2)'s. And a shard whose every record keeps the plan's columns but lies about
    a figure: the board made again from it differs. Both are recomputed and named, and
    the records equal a clean run's."""
    rows = ((1, 0), (1, 2), (2, 0))
    partial = _interrupted_run(tmp_path / "a", monkeypatch, cluster, rows)
    shards = partial / "shards"
    first = pl.read_parquet(shards / "r00000.parquet")
    _forge(shards, 1, first.with_columns(pl.lit(2, pl.Int64).alias("node_depth")), True)
    third = pl.read_parquet(shards / "r00002.parquet")
    _forge(shards, 2, third.with_columns(pl.col("revealed") - 1), True)
    capsys.readouterr()
    resumed = run_audit(AuditOptions(out=str(tmp_path / "a" / "reports"), scheduler=cluster,
                                     resume=partial.name.removeprefix(".partial-")),
                        progress=False)
    said = capsys.readouterr().err
    assert resumed.manifest["reused_rows"] == [[1, 0]]
    assert "row (1, 2) is not reused (its records' stream_seed are not the row's)" in said
    assert "row (2, 0) is not reused (board " in said and "differs from its record" in said
    clean = audit(tmp_path / "b", rows=rows, n=16, scheduler=cluster)
    assert resumed.manifest["records_sha256"] == clean.manifest["records_sha256"]


def test_one_changed_record_in_a_reused_shard_is_found(tmp_path, monkeypatch, cluster,
                                                       capsys):
    """Operations IV item 2: one record's value changed in a shard rewritten whole (its
    row count, schema and key file consistent). The run's journal still holds the digest
    the shard had when it was written: the resume refuses the shard and recomputes it
    (before, one board made again found it with chance 1/N). Forged with its journal line
    too, the default check may miss it (3 boards of 16); ``--verify full`` makes every
    board again and finds it. Both resumes' records equal a clean run's."""
    from pipeline.store.shards import ShardStore

    rows = ((1, 0), (2, 0))
    clean = audit(tmp_path / "c", rows=rows, n=16, scheduler=cluster)
    for tag, journal, verify, why in (
            ("a", False, "spot", "its bytes are not those the run's journal recorded"),
            ("b", True, "full", "board 11 made again differs from its record")):
        partial = _interrupted_run(tmp_path / tag, monkeypatch, cluster, rows)
        shards = partial / "shards"
        _forge(shards, 1, _one_value_changed(shards, 1, 11), journal)
        if journal:  # key file and journal agree with the forged bytes: only boards tell
            expect = json.loads((shards / "r00001.json").read_text())
            assert ShardStore(partial).inspect(1, expect)[0] is not None
        capsys.readouterr()
        resumed = run_audit(AuditOptions(out=str(tmp_path / tag / "reports"),
                                         scheduler=cluster, verify=verify,
                                         resume=partial.name.removeprefix(".partial-")),
                            progress=False)
        said = capsys.readouterr().err
        assert f"row (2, 0) is not reused ({why}" in said, said
        assert resumed.manifest["reused_rows"] == [[1, 0]]
        assert resumed.manifest["verified"]["mode"] == verify
        assert resumed.manifest["records_sha256"] == clean.manifest["records_sha256"]


def test_the_spot_check_picks_boards_from_the_resume_nonce():
    """The default check's boards: 3 distinct boards per shard, the same for the same nonce
    and shard (the manifest's nonce replays them), others for another nonce; every board
    of a small shard; every board with ``full``."""
    from pipeline.engine.spot import Check

    a = Check("spot", b"\x01" * 16)
    picks = a.boards(3, "ab" * 32, 256)
    assert len(set(picks)) == 3 and picks == sorted(picks) and max(picks) < 256
    assert Check("spot", b"\x01" * 16).boards(3, "ab" * 32, 256) == picks
    assert any(Check("spot", bytes([i]) * 16).boards(3, "ab" * 32, 256) != picks
               for i in range(2, 12))
    assert a.boards(4, "ab" * 32, 256) != picks or a.boards(3, "cd" * 32, 256) != picks
    assert a.boards(3, "ab" * 32, 2) == [0, 1]
    assert Check("full").boards(0, "", 5) == [0, 1, 2, 3, 4]
    assert a.facts() == {"mode": "spot", "boards_per_shard": 3, "nonce": "01" * 16}
    with pytest.raises(ValueError):
        Check("some")


def test_verify_goes_with_resume(tmp_path):
    p = run_cli("minegen", "audit", "--verify", "full", "--out", tmp_path / "o")
    assert p.returncode == 2 and "give it with --resume" in p.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("name", ["minegen", "tilegen"])
def test_records_prove_their_own_row_and_no_other(name):
    """``expected_columns`` of both generators: a block of a row passes its own plan's
    check, and fails every other row's (seeds or the preset's values differ)."""
    from pipeline.generator import load_generator
    from pipeline.store.shards import disproves, shard_key

    gen = load_generator(name)
    plans = gen.plans(gen.load(None), [])[:3]
    expect = shard_key(gen, plans[0], 2)  # boards [first_index, 2)
    frame = records.to_frame(gen.record, gen.block(plans[0], expect["first"], expect["count"]))
    assert disproves(frame, gen, expect, plans[0]) == ""
    relabelled = frame.with_columns(*(pl.lit(v).cast(frame.schema[f]).alias(f) for f, v in
                                      zip(gen.key_fields, gen.key(plans[1]))))
    other = {**expect, "key": list(gen.key(plans[1]))}
    assert "are not the row's" in disproves(relabelled, gen, other, plans[1])


def test_a_resume_with_every_row_done_draws_the_same_report(tmp_path, monkeypatch, cluster):
    """Interrupted after its last row was saved: the resume has nothing to compute, yet
    starts a cluster for the board drawings, so its report equals a clean run's."""
    import signal

    from pipeline.errors import Interrupted, RunInterrupted
    from pipeline.jobs import audit as job

    rows = ((2, 0), (2, 2))  # both fail B: the drill-down draws their worst boards
    real = job._finish

    def interrupted(*a, **kw):
        raise Interrupted(signal.SIGINT)

    monkeypatch.setattr(job, "_finish", interrupted)
    with pytest.raises(RunInterrupted):
        audit(tmp_path / "a", rows=rows, n=16, scheduler=cluster)
    monkeypatch.setattr(job, "_finish", real)
    (partial,) = (tmp_path / "a" / "reports" / "metric_v1").glob(".partial-*")
    resumed = run_audit(AuditOptions(out=str(tmp_path / "a" / "reports"), scheduler=cluster,
                                     resume=partial.name.removeprefix(".partial-")),
                        progress=False)
    assert resumed.manifest["reused_rows"] == [list(r) for r in rows]
    assert "drawings only" in resumed.manifest["scheduler"]
    clean = audit(tmp_path / "b", rows=rows, n=16, scheduler=cluster)
    drawn = [(r.run_dir / "report.html").read_text().count('<figure id="board-') for r in
             (resumed, clean)]
    assert drawn[0] == drawn[1] > 0 and "drawings_missing" not in resumed.manifest


def test_a_near_miss_sentence_is_computed_from_the_results():
    """Issue 30 item 8: a near miss says how many rows hold its line by less, and which,
    as the results have it (not "one of the smallest margins" of prose); a line that checks
    a table value (A'': the row's own target) is no near miss."""
    from types import SimpleNamespace

    from pipeline.reports.drill import _why, margin_rank, near_lines

    b = next(ln for ln in GENERATOR.lines if ln.name == "B")
    assert "B" in near_lines(GENERATOR) and "A''" not in near_lines(GENERATOR)
    results = [{"line": "B", "level_index": 4, "node_depth": d, "passed": p, "observed": o}
               for d, p, o in ((0, False, 0.5), (2, True, 0.969), (4, True, 1.0),
                               (6, True, 1.0))]
    assert margin_rank(GENERATOR, results, b, (4, 2)) == (1, 3, [])
    rank, n, smaller = margin_rank(GENERATOR, results, b, (4, 6))
    assert (rank, n) == (2, 3) and [k for k, _ in smaller] == [(4, 2)]  # a tie is not less
    doc = SimpleNamespace(gen=GENERATOR, results=results,
                          key=lambda row: (row["level_index"], row["node_depth"]))
    row = {"level_index": 4, "node_depth": 6, "b_regions_full_share": 1.0, "boards": 32}
    said = _why(b, row, False, doc)
    assert "1 of the 3 rows that hold B hold it by less: (4, 2) 0.019" in said


@pytest.mark.parametrize("durable", [True, False])
def test_a_store_that_is_not_durable_writes_the_same_shard_without_fsync(tmp_path, monkeypatch,
                                                                          durable):
    """Decision 302: a tune's candidate store saves the same bytes, journal line and key as
    an audit's, and calls fsync for none of them; the shard reads back and is reused."""
    from pipeline.store.shards import ShardStore

    synced = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    store = ShardStore.create(tmp_path, "t", {"t": 1}, durable=durable)
    synced.clear()
    frame = pl.DataFrame({"a": [1, 2, 3]})
    store.save(0, {"row": [1, 0]}, frame)
    assert (len(synced) > 0) == durable
    again = ShardStore(store.folder, durable=durable)
    got, why = again.inspect(0, {"row": [1, 0]})
    assert why == "" and got.equals(frame)
    assert again.journal()[0] == json.loads((store.shards / "r00000.json").read_text())["sha256"]

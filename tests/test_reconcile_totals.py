"""The files' tallies added as they arrive (issue 29): the result is the one the all-at-once
sum gave, whatever order the files arrive in (a Dask cluster's ``as_completed``); what it
costs in memory: test_reconcile_memory.py."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from tilegen.players.reconcile import reconcile
from tilegen.table_loader import load_tables
from tilegen.telemetry import synth, tally

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, tile_run):
    """(a run folder, a dataset of six date files: exact duplicates in two, bad rows of two
    reasons in three, a session of a row the run does not hold in one)."""
    root = tmp_path_factory.mktemp("totals")
    run = tile_run
    frame, _ = synth.sessions(synth.boards(load_tables(), 3), 8, 6, synth.Model(), 3)
    data = root / "by-date"
    for k, (date, part) in enumerate(sorted(frame.group_by("date"), key=lambda t: t[0])):
        part = part.cast(pl.String)
        if k in (1, 4):  # copies of its first sessions
            part = pl.concat([part, part.head(3 + k)])
        if k in (0, 2, 5):  # rows no reader can use, and one of no row of the run
            part = pl.concat([part, part.head(2 + k).with_columns(pl.lit("9").alias("level_id")),
                              part.head(1).with_columns(pl.lit("x").alias("time_spent_sec")),
                              part.head(1).with_columns(pl.lit("7").alias("revision"))])
        (data / f"date={date[0]}").mkdir(parents=True)
        part.write_parquet(data / f"date={date[0]}" / "part.parquet")
    files = sorted(data.rglob("*.parquet"))
    boards = pl.read_parquet(run / "records.parquet").select(
        "city_id", "level_id", "revision", pl.col("stream_seed").alias("seed"))
    parts = [tally.tally_file(f, boards=boards) for f in files]
    return run, data, parts


def all_at_once(parts: list[dict]) -> dict:
    """The sum as it was made before the running totals: every file's tallies held, then
    concatenated in file order and added (the reference the totals must equal)."""
    cat = {k: pl.concat([p[k] for p in parts]) for k in ("bad", "sums", "fails", "times")}
    bad = (cat["bad"].group_by("reason", maintain_order=True)
           .agg(pl.col("rows").sum(), pl.col("first_rows").list.explode(
               keep_nulls=False, empty_as_null=False).head(3))
           .sort(["rows", "reason"], descending=[True, False]))
    out = {"bad": bad, "dups": {k: sum(p["dups"][k] for p in parts)
                                for k in ("sessions", "extra_copies")}}
    for k, keys in tally.HISTS.items():
        vals = [c for c in cat[k].columns if c not in keys]
        out[k] = cat[k].group_by(keys).agg(pl.col(c).sum() for c in vals).sort(keys)
    return out


@settings(max_examples=25, deadline=None)
@given(order=st.permutations(range(6)), fold=st.integers(1, 7))
def test_running_totals_equal_the_all_at_once_sum(dataset, order, fold):
    _, _, parts = dataset
    want = all_at_once(parts)
    assert want["bad"].height == 3 and want["dups"]["extra_copies"] == 4 + 7
    totals = tally.Totals(fold=fold)
    for i in order:
        totals.add(i, parts[i])
        assert len(totals.pending["sums"]) < fold  # never more than fold files' tallies
    got = totals.result()
    assert got["dups"] == want["dups"]
    assert_frame_equal(got["bad"], want["bad"], check_dtypes=False)
    for k in tally.HISTS:
        assert_frame_equal(got[k], want[k])


def test_reconcile_json_is_the_same_whatever_order_the_files_arrive(dataset):
    """A mapper that hands the files' tallies back last file first (as a cluster may):
    the same reconcile.json as the files read one after another here."""
    run, data, _ = dataset

    def backwards(func, files):
        for i in reversed(range(len(files))):
            yield i, func(files[i])

    here = reconcile(run, data)
    there = reconcile(run, data, mapper=backwards)
    assert json.dumps(here, default=str) == json.dumps(there, default=str)
    assert [b["reason"] for b in here["bad_rows"]] == [
        "level_id is outside 1-6", "city_id, level_id, revision is not a row of the run",
        "time_spent_sec is not a number"]


@pytest.mark.cluster
def test_dask_adds_the_files_as_they_finish_with_the_same_result(dataset, cluster, tmp_path):
    """``--engine dask`` adds each file's tally as it finishes (``as_completed``), in
    whatever order: reconcile.json is the one written here, byte for byte, bad rows' first
    rows (three files have them) included."""
    from cli_harness import reconcile_exit, run_cli

    run, data, _ = dataset
    docs = []
    for k, extra in enumerate(((), ("--engine", "dask", "--scheduler", cluster))):
        out = tmp_path / str(k)
        p = run_cli("minegen", "reconcile", "--run", run, "--out", out, "--telemetry", data,
                    *extra, cwd=REPO)
        reconcile_exit(p)
        (folder,) = (out / "tilegen" / "reconcile").iterdir()
        docs.append((folder / "reconcile.json").read_bytes())
    assert docs[0] == docs[1]
    assert len(json.loads(docs[0])["bad_rows"][0]["first_rows"]) == 3

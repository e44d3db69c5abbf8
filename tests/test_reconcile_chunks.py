"""One telemetry file read in chunks (Operations IV item 7, defect 13; decision 299): the
tallies of a file read in many chunks (Parquet row groups and batches, CSV and NDJSON
blocks) are the tallies of the file read whole, duplicates across chunks, bad rows, lines
Polars refuses and quoted newlines included (one large file's memory:
test_reconcile_memory.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from tilegen.table_loader import load_tables
from tilegen.telemetry import chunks, read, synth, tally


@pytest.fixture(scope="module")
def sessions() -> pl.DataFrame:
    """About 3,000 sessions as text: copies of early sessions at the end (another chunk),
    rows of a level no table has and of a revision the run does not hold, and player ids
    with a comma, a quote and a newline (a CSV record over two lines)."""
    frame, _ = synth.sessions(synth.boards(load_tables(), 3), 30, 5, synth.Model(), 5)
    frame = frame.drop("source").cast(pl.String)
    odd = frame.slice(40, 3).with_columns(pl.Series("player_id", ['a,"b"', "c\nd", '"']))
    return pl.concat([frame.head(1500), odd,
                      frame.slice(10, 4).with_columns(pl.lit("9").alias("level_id")),
                      frame.slice(1500), frame.head(7), frame.slice(100, 2),
                      frame.slice(20, 3).with_columns(pl.lit("7").alias("revision"))])


@pytest.fixture(scope="module")
def boards(tile_run) -> pl.DataFrame:
    return pl.read_parquet(tile_run / "records.parquet").select(
        "city_id", "level_id", "revision", pl.col("stream_seed").alias("seed"))


def write(frame: pl.DataFrame, path: Path) -> Path:
    kind = path.suffix.lstrip(".")
    if kind == "parquet":
        frame.write_parquet(path, row_group_size=400)  # several row groups
    elif kind == "csv":
        frame.write_csv(path)
        lines = path.read_bytes().split(b"\n")  # a line Polars refuses, in a middle block
        lines.insert(1000, lines[1000] + b",extra")
        path.write_bytes(b"\n".join(lines))
    else:
        text = [json.dumps(r) for r in frame.to_dicts()]
        text.insert(1000, text[1000][:50])  # a truncated line: not valid JSON
        path.write_text("\n".join(text) + "\n")
    return path


def whole_and_chunked(path: Path, boards, monkeypatch) -> tuple[dict, dict, int]:
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 10**9)
    monkeypatch.setattr(chunks, "BLOCK", 1 << 30)
    kind = read.files(path)[0]
    assert len(list(chunks.chunks(path, kind))) == 1
    whole = tally.tally_file(path, boards=boards)
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 300)
    monkeypatch.setattr(chunks, "BLOCK", 8 << 10)
    n = len(list(chunks.chunks(path, kind)))
    return whole, tally.tally_file(path, boards=boards), n


@pytest.mark.parametrize("kind", ["parquet", "csv", "ndjson"])
def test_a_file_read_in_chunks_tallies_as_the_file_read_whole(tmp_path, sessions, boards,
                                                               monkeypatch, kind):
    path = write(sessions, tmp_path / f"t.{kind}")
    whole, chunked, n = whole_and_chunked(path, boards, monkeypatch)
    assert n >= 8, n  # many chunks (Parquet: batches across row groups of 400)
    assert_frame_equal(chunked["bad"], whole["bad"])
    assert chunked["dups"] == whole["dups"] == {"sessions": 9, "extra_copies": 9}
    for k, keys in tally.HISTS.items():
        assert_frame_equal(chunked[k].sort(keys), whole[k].sort(keys))
    a, b = whole["firsts"].boards, chunked["firsts"].boards
    assert a.keys() == b.keys() and all(
        np.array_equal(a[s][0], b[s][0]) and np.array_equal(a[s][1], b[s][1]) for s in a)
    reasons = {r["reason"]: r["rows"] for r in whole["bad"].to_dicts()}
    assert reasons["level_id is outside 1-6"] == 4 and reasons[tally.UNKNOWN_ROW] == 3
    if kind != "parquet":
        assert sum(reasons.values()) == 8  # and the line Polars refused
    # and the sessions are the distinct good rows, counted independently of the tally
    good = sessions.filter(pl.col("level_id") != "9", pl.col("revision") != "7").unique()
    assert whole["sums"]["sessions"].sum() == good.height


def test_csv_blocks_end_only_where_a_record_ends():
    """A newline inside quotes ends no record; a quote written twice is one quote."""
    assert chunks._cut(b'a,b\n"x\ny",1\n"p', True) == len(b'a,b\n"x\ny",1\n')
    assert chunks._cut(b'a,"q""\n', True) == len(b"")
    assert chunks._cut(b'a,"q"""\nb', True) == len(b'a,"q"""\n')
    assert chunks._header_end(b'"a\nb",c\n1,2\n') == len(b'"a\nb",c\n')


def test_a_parquet_value_that_is_not_utf8_far_into_the_file(tmp_path, sessions, boards,
                                                              monkeypatch):
    """Polars reads the chunks before it; from the chunk it refuses, pyarrow reads the rest
    (from the middle of a row group), and the row is a bad row at its own number."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = sessions.to_arrow()
    city = table.column("city_id").to_pylist()
    city[2500] = "Zürich".encode("latin-1")
    arrays = [pa.array([v if isinstance(v, bytes) else v.encode() for v in city],
                       pa.binary()).view(pa.string()) if n == "city_id" else table.column(n)
              for n in table.column_names]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table(arrays, names=table.column_names), path, row_group_size=400)
    whole, chunked, n = whole_and_chunked(path, boards, monkeypatch)
    assert n >= 8
    assert_frame_equal(chunked["bad"], whole["bad"])
    assert {r["reason"]: r["first_rows"] for r in whole["bad"].to_dicts()}[read.NOT_UTF8] == [
        f"{path}:2500"]
    for k, keys in tally.HISTS.items():
        assert_frame_equal(chunked[k].sort(keys), whole[k].sort(keys))


@pytest.mark.parametrize("kind", ["csv", "ndjson"])
def test_blocks_of_any_size_give_the_text_of_the_whole_file(tmp_path, sessions,
                                                            monkeypatch, kind):
    """Every block size from a few bytes up: records over two lines, quotes written twice
    and a BOM are cut nowhere but between records."""
    frame = sessions.slice(1495, 12)  # the three odd player ids among others
    path = tmp_path / f"t.{kind}"
    if kind == "csv":
        frame.write_csv(path)
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dicts()))
    monkeypatch.setattr(chunks, "BLOCK", 1 << 30)
    whole = chunks.text(path, kind)
    assert whole["player_id"].to_list()[5:8] == ['a,"b"', "c\nd", '"']
    for size in (1, 7, 64, 100, 333, 1000):
        monkeypatch.setattr(chunks, "BLOCK", size)
        monkeypatch.setattr(chunks, "CHUNK_ROWS", 5)
        assert_frame_equal(chunks.text(path, kind), whole)

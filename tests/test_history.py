"""``<out>/index.html`` for nightly runs (``pipeline.jobs.history``): every run listed with
its verdict and report, the trend of a table lineage per row, what moved since the run
before, and links that resolve from the output folder; real audits of the toy generator
on a loopback cluster."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from pipeline.jobs.audit import run_audit
from pipeline.jobs.history import INDEX, gather
from pipeline.options import AuditOptions

from test_toygen import GEN, ROWS, by_hand, tables

pytestmark = pytest.mark.cluster
N = 100


def _hrefs(page: str) -> list[str]:
    return re.findall(r'href="([^"#][^"]*)"', page)


def test_the_index_lists_runs_and_says_what_moved(tmp_path, cluster):
    root = Path(tables(tmp_path / "t"))
    out = tmp_path / "out"
    first = run_audit(AuditOptions(generator=GEN, tables=str(root), n=N, scheduler=cluster,
                                   out=str(out)), progress=False)
    # the next night: beta's p raised, so its line H holds again; nothing else changed
    rows = [(n, s, 0.9 if n == "beta" else p) for n, s, p in ROWS]
    (root / "toy.toml").unlink()
    root.rmdir()
    tables(root, rows)
    second = run_audit(AuditOptions(generator=GEN, tables=str(root), n=N, scheduler=cluster,
                                    out=str(out)), progress=False)
    assert first.exit_code == 1
    doc = gather(out)
    assert [a["run_id"] for a in doc["audits"]] == [first.run_dir.name, second.run_dir.name]
    (lineage,) = doc["lineages"]
    assert lineage["table_root"] == str(root.resolve()) and len(lineage["runs"]) == 2
    was = by_hand("beta", 1, 0.2, N)
    assert lineage["runs"][0]["fails"]["beta/1"] == {"H": was}
    assert "beta/1" not in lineage["runs"][1]["fails"]

    page = (out / INDEX).read_text(encoding="utf-8")
    assert f"beta/1: H holds again (it was {was:.3f})" in page
    assert first.run_dir.name in page and second.run_dir.name in page
    assert "share of boards that hit" in page  # the line code is defined on the page
    for href in _hrefs(page):  # every link resolves from the output folder
        assert (out / href.split("#")[0]).is_file(), href
    # each report links the index, and that link resolves from the run folder
    report = (second.run_dir / "report.html").read_text(encoding="utf-8")
    (link,) = [h for h in _hrefs(report) if h.split("#")[0].endswith(INDEX)]
    assert (second.run_dir / link.split("#")[0]).resolve() == (out / INDEX).resolve()


def test_a_subset_run_is_listed_but_not_in_the_trend(tmp_path, cluster):
    out = tmp_path / "out"
    run_audit(AuditOptions(generator=GEN, tables=tables(tmp_path / "t"), n=20, scheduler=cluster,
                           rows=(("alpha", 1),), out=str(out)), progress=False)
    doc = gather(out)
    assert len(doc["audits"]) == 1 and doc["lineages"] == []
    assert "subset run" in (out / INDEX).read_text(encoding="utf-8")


def test_the_cached_index_equals_the_index_read_whole(tmp_path, cluster, monkeypatch):
    """Operations IV item 6: each finished run's index entry is kept in its folder
    (``index_entry.json``, written by the run's own refresh), the index reads that one file
    a run, and what it shows equals the index read from every manifest and assertions. An
    entry that is damaged, another run's, of another shape or older than the run's files is
    rebuilt from the run, never used."""
    from pipeline.jobs import history
    from pipeline.reports import index_page

    out = tmp_path / "out"
    run = run_audit(AuditOptions(generator=GEN, tables=tables(tmp_path / "t"), n=20,
                                 scheduler=cluster, out=str(out)), progress=False).run_dir
    assert (run / history.ENTRY).is_file()  # written when the run finished
    manifest = json.loads((run / "manifest.json").read_text())
    runs = [run]
    for day in (1, 2, 3):  # three more nights: copies with their own ids and dates
        other = run.parent / run.name.replace(run.name[:8], f"2099010{day}")
        shutil.copytree(run, other, ignore=shutil.ignore_patterns(history.ENTRY))
        (other / "manifest.json").write_text(json.dumps(
            {**manifest, "run_id": other.name, "created_utc": f"2099-01-0{day}T02:00:00+00:00",
             "exit_code": day % 2}))
        runs.append(other)

    def same() -> dict:
        cached, whole = history.gather(out), history.gather(out, cached=False)
        assert json.dumps(cached, sort_keys=True) == json.dumps(whole, sort_keys=True)
        assert index_page.html(cached) == index_page.html(whole)
        return cached

    doc = same()  # the copies' entries are built now
    assert [a["run_id"] for a in doc["audits"]] == [r.name for r in runs]
    assert [a["exit_code"] for a in doc["audits"]][1:] == [1, 0, 1]
    assert all((r / history.ENTRY).is_file() for r in runs)
    read = []
    real = history.json_or_empty
    monkeypatch.setattr(history, "json_or_empty", lambda p: read.append(p.name) or real(p))
    history.write_index(out)
    assert read == [history.ENTRY] * len(runs)  # one small file a run, nothing else
    monkeypatch.setattr(history, "json_or_empty", real)

    entry = json.loads((runs[1] / history.ENTRY).read_text())
    (runs[1] / history.ENTRY).write_bytes(b"\x00{torn")  # damaged
    (runs[2] / history.ENTRY).write_text(json.dumps(entry))  # another run's entry
    lying = json.loads((runs[3] / history.ENTRY).read_text())
    (runs[3] / history.ENTRY).write_text(json.dumps({**lying, "fails": "none"}))  # shape
    (run / "manifest.json").write_text(json.dumps({**manifest, "exit_code": 3}))  # newer
    doc = same()
    assert doc["audits"][0]["exit_code"] == 3 and doc["audits"][2]["exit_code"] == 0
    for r in runs:  # each rebuilt from its own run
        got = json.loads((r / history.ENTRY).read_text())
        assert got == history.entry_of(r, history._sources(str(r)))
        assert got["run_id"] == r.name

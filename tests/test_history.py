"""``<out>/index.html`` for nightly runs (``pipeline.jobs.history``): every run listed with
its verdict and report, the trend of a table lineage per row, what moved since the run
before, and links that resolve from the output folder; real audits of the toy generator
on a loopback cluster."""

from __future__ import annotations

import re
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

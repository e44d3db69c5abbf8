"""The latest tune of a run, and the run's report written again when a tune finishes
(issue 30 item 6: the audit's drill-down and to-do list carry the tune's classes and
proposals).

Which tune is a run's (decision 238): a finished tune of ``<out>/tune/`` (the run's own
output folder) of the same generator, the same table hash and the same N as the run. Its
baseline is then this run, or an audit of the same tables with the same N, hence the same
seeds and byte-identical records (decision 17): the tune judged this run's rows. The
latest is the one started last (``created_utc``, then the tune id).

Writing a report again reads only what the run folder stores (manifest, per-row
aggregates, line results, side tables, the drawn boards in ``drawings.json`` and the play
pages): nothing is generated again.
"""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from boardcore import files
from boardcore.errors import InputError

from .. import capabilities
from ..generator import Tune, load_generator
from ..reports import audit_page
from ..reports.audit_page import AuditDoc
from ..reports.tuned import SweepView, TuneView
from ..store import atomic, runs
from . import history

DRAWINGS = "drawings.json"  # the run folder's drawn boards: what a report shows again


def find(run_dir: Path, manifest: dict) -> TuneView | None:
    """The latest finished tune of the run (None when there is none)."""
    out = manifest.get("out")
    root = Path(out) / "tune" if out else None
    if root is None or not root.is_dir():
        return None
    best = None
    # a tune's id names its table hash and N (runs.run_id_base): only those are read
    short = str(manifest.get("table_hash", ""))[:8]
    for path in root.glob(f"*-{short}-n{manifest.get('n')}*/tune.json"):
        try:
            doc = files.read_json(path)
        except (OSError, ValueError, files.Refused):
            continue  # a tune being written, or damaged: not one to cite
        if not isinstance(doc, dict) or not _of_run(doc, manifest):
            continue
        rank = (str(doc.get("created_utc", "")), str(doc.get("tune_id", "")))
        if best is None or rank > best[0]:
            best = (rank, doc, path.parent)
    if best is None:
        return None
    _, doc, folder = best
    return TuneView.of(doc, os.path.relpath(folder / "tune.html", run_dir))


def sweeps(manifest: dict) -> tuple[SweepView, ...]:
    """The finished sweeps in the run's output folder of the same generator and table
    hash (any N: a value that fails at one N is evidence enough to offer it no more)."""
    out = manifest.get("out")
    found = []
    for path in sorted(Path(out).glob("sweeps/*/sweep.json")) if out else []:
        try:
            doc = files.read_json(path)
            if doc.get("generator") == manifest.get("generator") \
                    and doc.get("table_hash") == manifest.get("table_hash"):
                found.append(SweepView.of(doc))
        except (OSError, ValueError, KeyError, TypeError, files.Refused):
            continue  # a sweep being written, or damaged: not one to cite
    return tuple(found)


def _of_run(doc: dict, manifest: dict) -> bool:
    return (doc.get("generator") == manifest.get("generator")
            and doc.get("table_hash") == manifest.get("table_hash")
            and doc.get("n") == manifest.get("n") and "tune_id" in doc)


def save_drawings(folder: Path, drawings: dict, pages: dict) -> None:
    """The boards a report draws ((row key, board index) -> drawing) and their play pages,
    kept beside the report so it can be written again."""
    boards = [{"key": list(key), "index": i, "svg": drawing, "page": pages.get((key, i))}
              for (key, i), drawing in sorted(drawings.items(), key=lambda kv: str(kv[0]))]
    files.create(folder / DRAWINGS, runs.to_json({"boards": boards}))  # a new run folder's


def rerender(run_dir: Path) -> str | None:
    """Write the run's report.md and report.html again from its stored data, with its
    latest tune; returns why it could not (a run written before ``drawings.json``, or a
    calibration file that is gone), else None."""
    manifest = runs.read_json(run_dir / "manifest.json")
    if not (run_dir / DRAWINGS).is_file():
        return f"{run_dir} keeps no {DRAWINGS} (written by an older version)"
    gen = load_generator(manifest.get("generator_ref") or manifest["generator"])
    calibration = manifest.get("calibration")
    if calibration:
        try:
            gen = capabilities.calibrated(gen, calibration["file"])
        except (InputError, OSError, KeyError) as e:
            return f"{run_dir}: its calibration cannot be read again ({e})"
    frame = pl.read_parquet(files.checked(run_dir / "aggregates.parquet"))
    results = runs.read_json(run_dir / "assertions.json")["results"]
    tables = {p.stem: pl.read_csv(files.checked(p)) for p in sorted(run_dir.glob("*.csv"))
              if p.stem != "aggregates"}
    stored = runs.read_json(run_dir / DRAWINGS)["boards"]
    drawings = {(tuple(b["key"]), b["index"]): b["svg"] for b in stored}
    pages = {(tuple(b["key"]), b["index"]): b["page"] for b in stored if b.get("page")}
    root = run_dir / "tables" if manifest.get("tables_copied") else manifest.get("table_root")
    keys = [tuple(r) for r in frame.select(gen.key_fields).rows()]
    locked = {}
    if isinstance(gen, Tune):
        catalog = gen.load(str(root))
        locked = {k: gen.locked_why(catalog, k) for k in keys if gen.locked(catalog, k)}
    notes = gen.summary_notes(frame)
    if manifest.get("drawings_missing"):
        notes.append(f"the report's board drawings are missing: {manifest['drawings_missing']}")
    index = Path(manifest["out"]) / history.INDEX if manifest.get("out") else None
    link = os.path.relpath(index, run_dir) if index is not None and index.is_file() else ""
    site = os.path.relpath(manifest["out"], run_dir) if manifest.get("out") else None
    doc = AuditDoc(manifest, frame.to_dicts(), results, gen, tables, notes, drawings,
                   index=link, locked=locked, pages=pages, site=site,
                   tune=find(run_dir, manifest), rewritten=True, sweeps=sweeps(manifest))
    sections = gen.report_sections(doc)
    md, page = audit_page.pages(doc, sections)
    atomic.write_text(run_dir / "report.md", md)
    atomic.write_text(run_dir / "report.html", page)
    return None


def after_tune(doc: dict, out: str, run: str | None, announce) -> None:
    """When a tune finishes: the report of the run it names (``--run``), else of the
    newest finished run in ``out`` with the tune's generator, table hash and N, is written
    again with the tune's classes and proposals. A report that cannot be is said, never
    fatal: the tune's own pages are written already."""
    gen = load_generator(doc.get("generator_ref") or doc["generator"])
    target = Path(run) if run else None
    if target is None:
        vdir = runs.version_dir(out, gen.report_subdir, gen.metric_version)
        done = sorted(p for p in vdir.glob("2*") if (p / "manifest.json").is_file()
                      and _of_run(doc, runs.read_json(p / "manifest.json")))
        target = done[-1] if done else None
    if target is None:
        return
    try:
        why = rerender(target)
    except (OSError, ValueError, KeyError, pl.exceptions.PolarsError) as e:
        why = f"{target}: {type(e).__name__}: {e}"
    if why:
        announce(f"the run's report was not written again with this tune: {why}")
    else:
        announce(f"{target / 'report.html'} now carries this tune's classes and proposals")

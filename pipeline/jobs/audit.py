"""``minegen audit``: the batch audit of a generator's table, end to end (orchestration only).

tables → plans → engine (row shards as rows finish) → finishing pass (validate, digest,
aggregate, records.parquet) → lines (Pandera) → reports → one atomic run folder.
Exit code: 0 every hard line holds, 1 some failed (the report is still written), 2 bad
input, 3 the run could not complete.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import polars as pl

from minegen.errors import MinegenError

from ..analysis import lines as L
from ..analysis.collect import ROW, Collector, InOrder
from ..engine.run import execute
from ..errors import EXIT_ASSERTION_FAILED, EXIT_OK, RunError
from ..generator import load_generator
from ..options import AuditOptions
from ..reports import audit_page
from ..reports.audit_page import AuditDoc
from ..store import runs
from ..store.shards import ShardStore, shard_key


@dataclass
class AuditResult:
    exit_code: int
    run_dir: Path
    manifest: dict
    aggregates: pl.DataFrame
    results: list[dict]
    gen: object = None  # the generator that ran

    @cached_property
    def records(self) -> pl.DataFrame:
        """All records, read back from the run folder (the run never held them)."""
        return pl.read_parquet(self.run_dir / "records.parquet")


def keys_of(gen, rows) -> list[tuple]:
    """``--rows`` items (typed text or tuples) -> keys."""
    return [gen.parse_key(r) if isinstance(r, str) else tuple(r) for r in rows]


def check_n(gen, n) -> None:
    limit = gen.max_boards
    if not isinstance(n, int) or n < 1 or (limit is not None and n > limit):
        raise MinegenError(f"boards per row must be an int in [1, {limit or 'inf'}] for "
                           f"{gen.name} (got {n!r})")


def run_audit(opts: AuditOptions, progress: bool | None = None, gen=None) -> AuditResult:
    t_start = time.perf_counter()
    gen = gen or load_generator(opts.generator)
    store = None
    if opts.resume:
        vdir = runs.version_dir(opts.out, gen.report_subdir, gen.metric_version)
        store = ShardStore.find(opts.resume, vdir)
        facts = store.facts()
        if facts.get("generator", gen.name) != gen.name:
            raise MinegenError(f"--resume {opts.resume}: that run is a {facts['generator']} "
                               f"run; give --generator {facts['generator']}")
        opts = replace(opts, tables=facts["tables"], n=facts["n"],
                       rows=tuple(tuple(r) for r in facts["rows"]),
                       seeds_per_task=facts["seeds_per_task"])
    catalog = gen.load(opts.tables)
    check_n(gen, opts.n)
    plans = gen.plans(catalog, keys_of(gen, opts.rows))
    keys = [gen.key(p) for p in plans]
    vdir = runs.version_dir(opts.out, gen.report_subdir, gen.metric_version)
    created = runs.utc_now()
    run_id = store.run_id if store else runs.new_run_id(vdir, catalog.content_hash, opts.n,
                                                        created)
    manifest = runs.base_manifest(gen, run_id, created, catalog, opts.n, opts.seeds_per_task,
                                  keys)
    manifest["generator_ref"] = opts.generator or gen.name  # how to load it again (diff)
    if store is None:
        vdir.mkdir(parents=True, exist_ok=True)
        store = ShardStore.create(vdir, run_id, {
            "run_id": run_id, "generator": gen.name, "tables": str(catalog.root),
            "table_hash": catalog.content_hash, "n": opts.n, "rows": [list(k) for k in keys],
            "seeds_per_task": opts.seeds_per_task, "created_utc": manifest["created_utc"]})
        reused = []
    else:
        manifest["resumed_from"] = run_id
        reused = [pos for pos, p in enumerate(plans)
                  if store.load(pos, shard_key(gen, p, opts.n)) is not None]
    expects = [shard_key(gen, p, opts.n) for p in plans]
    manifest["reused_rows"] = [list(keys[pos]) for pos in reused]
    todo = [pos for pos in range(len(plans)) if pos not in set(reused)]
    t0 = time.perf_counter()
    try:
        with runs.run_folder(vdir, run_id) as tmp:
            # the finishing pass runs as rows arrive, in key order (analysis.collect)
            feeder = InOrder(Collector(gen, tmp / "records.parquet"), len(plans), store.read,
                             ready=reused)
            with execute(gen, opts.cluster(scratch=str(store.folder / "scratch")), plans,
                         todo, opts.n, opts.seeds_per_task, store, expects, progress,
                         then=feeder.arrived) as ex:
                t1 = time.perf_counter()
                result = _finish(gen, catalog, feeder.drain(), tmp, vdir / run_id, manifest,
                                 ex, t_start, {"setup": round(t0 - t_start, 3),
                                               "generate": round(t1 - t0, 3)})
    except RunError as e:
        raise RunError(f"{e}\n{resume_hint(run_id, opts.out)}") from e
    store.remove()  # the run is complete: its shards are in records.parquet now
    return result


def _finish(gen, catalog, got, tmp: Path, run_dir: Path, manifest: dict, ex, t_start: float,
            timings: dict) -> AuditResult:
    """Lines, tables and reports of a collected run, written into ``tmp`` (the run folder
    before its atomic rename)."""
    t2 = time.perf_counter()
    rows = gen.row_columns(got.rows.drop(ROW), catalog)
    results, failures = L.evaluate(rows, gen.lines, gen.key_fields)
    exit_code = EXIT_ASSERTION_FAILED if L.hard_failures(results) else EXIT_OK
    tables = {**got.side, **gen.run_tables(rows, catalog)}
    t3 = time.perf_counter()
    manifest.update({
        "scheduler": ex.scheduler, "workers": ex.workers, "exit_code": exit_code,
        "records_sha256": got.records_sha256, "boards": got.boards,
        "timings_s": {**timings, **ex.timings, "finish": round(t3 - t2, 3)},
    })
    rows.write_parquet(tmp / "aggregates.parquet")
    rows.write_csv(tmp / "aggregates.csv")
    for name, frame in tables.items():
        frame.write_csv(tmp / f"{name}.csv")
    (tmp / "assertions.json").write_text(runs.to_json({
        "metric_version": gen.metric_version, "hard_lines_hold": exit_code == EXIT_OK,
        "results": results, "failure_cases": failures.to_dicts()}), encoding="utf-8")
    doc = AuditDoc(manifest, rows.to_dicts(), results, gen.lines, gen.key_fields, gen.label,
                   tables, gen.summary_notes(rows))
    sections = gen.report_sections(doc)
    manifest["wall_s"] = round(time.perf_counter() - t_start, 3)  # as the report shows it
    (tmp / "report.md").write_text(audit_page.markdown(doc, sections), encoding="utf-8")
    (tmp / "report.html").write_text(audit_page.html(doc, sections), encoding="utf-8")
    manifest["timings_s"]["report"] = round(time.perf_counter() - t3, 3)
    manifest["wall_s"] = round(time.perf_counter() - t_start, 3)  # until the folder is done
    (tmp / "manifest.json").write_text(runs.to_json(manifest), encoding="utf-8")
    return AuditResult(exit_code, run_dir, manifest, rows, results, gen)


def resume_hint(run_id: str, out: str) -> str:
    return (f"finished rows are kept; complete the run with: minegen audit --resume {run_id} "
            f"--out {out}")


def summary(result: AuditResult) -> str:
    """One screen for a nightly log: where the report is and what failed where."""
    gen = result.gen
    m = result.manifest
    fails = L.hard_failures(result.results)
    lines = [
        f"audit {m['run_id']}: {'PASS' if result.exit_code == 0 else 'FAIL'} "
        f"({m['boards']} boards, {len(result.aggregates)} rows, N = {m['n']}, "
        f"{m['scheduler']}, {m['wall_s']:.1f} s)",
        f"report: {result.run_dir / 'report.html'}",
    ]
    if m.get("resumed_from"):
        lines.append(f"  resumed run: {len(m['reused_rows'])} row(s) reused from shards, "
                     f"{len(result.aggregates) - len(m['reused_rows'])} recomputed")
    by_line: dict[str, list[dict]] = {}
    for r in fails:
        by_line.setdefault(r["line"], []).append(r)
    for name, rs in by_line.items():
        shown = ", ".join(f"{gen.label(tuple(r[k] for k in gen.key_fields))} "
                          f"{_fmt(r['observed'])}" for r in rs[:6])
        more = f" and {len(rs) - 6} more" if len(rs) > 6 else ""
        lines.append(f"  {name} failed on {len(rs)} row(s) [{rs[0]['op']} {rs[0]['threshold']}]:"
                     f" {shown}{more}")
    for ln in gen.lines:
        warned = [r for r in L.advisory_warnings(result.results) if r["line"] == ln.name]
        if warned:
            lines.append(f"  {ln.name} (advisory) warns on {len(warned)} row(s)")
    lines += [f"  {note} (advisory)" for note in gen.summary_notes(result.aggregates)]
    return "\n".join(lines)


def _fmt(v) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)

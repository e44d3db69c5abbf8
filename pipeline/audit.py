"""``minegen audit``: the F4 batch audit end to end (SPEC §8-§9).

tables -> row snapshots -> Dask graph -> sorted records -> Polars aggregates -> Pandera
assertions -> atomic run folder. Exit code: 0 all hard lines hold, 1 some failed (the
report is still written), 2 bad input, 3 the run could not complete.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from minegen.errors import MinegenError
from minegen.plan import RowPlan, plan_row
from minegen.rng import check_board_count
from minegen.table_loader import load_tables
from minegen.table_model import Tables

from . import report
from .aggregate import aggregate, shortfall_distribution
from .assertions import assertion_frame, evaluate, hard_failures
from .b1 import reconcile
from .cluster import start_cluster
from .errors import EXIT_ASSERTION_FAILED, EXIT_OK, RunError
from .graph import Progress, run_rows
from .options import AuditOptions
from .shards import ShardStore
from .tasks import SORT_KEY


@dataclass
class AuditResult:
    exit_code: int
    run_dir: Path
    manifest: dict
    records: pl.DataFrame
    aggregates: pl.DataFrame
    results: list[dict]


def select_plans(tables: Tables, rows: tuple[tuple[int, int], ...]) -> list[RowPlan]:
    """Every table row by default; ``rows`` are (L, D) requests resolved by R1 floor."""
    keys = list(rows) or [r.key for r in tables.board_gen]
    if len(set(keys)) != len(keys):
        raise MinegenError(f"--rows names a row twice: {keys}")
    return [plan_row(tables, level, depth) for level, depth in sorted(keys)]


def run_audit(opts: AuditOptions, progress: bool | None = None) -> AuditResult:
    t_start = time.perf_counter()
    store, resumed_from = None, None
    if opts.resume:
        store = ShardStore.find(opts.resume, opts.out)
        facts = store.facts()
        opts = replace(opts, tables=facts["tables"], n=facts["n"],
                       rows=tuple(tuple(r) for r in facts["rows"]),
                       seeds_per_task=facts["seeds_per_task"],
                       out=str(store.folder.parent.parent))
        resumed_from = store.run_id
    tables = load_tables(opts.tables)
    check_board_count(opts.n)
    plans = select_plans(tables, opts.rows)
    created = report.utc_now()
    run_id = resumed_from or report.new_run_id(opts.out, tables.content_hash, opts.n, created)
    manifest = report.base_manifest(run_id, created, tables.root, tables.content_hash, opts.n,
                                    opts.seeds_per_task, [(p.level, p.depth) for p in plans])
    if store is None:
        store = ShardStore.create(report.version_dir(opts.out), run_id, {
            "run_id": run_id, "tables": tables.root, "table_hash": tables.content_hash,
            "n": opts.n, "rows": [[p.level, p.depth] for p in plans],
            "seeds_per_task": opts.seeds_per_task, "created_utc": manifest["created_utc"]})
    reused = {pos: f for pos, p in enumerate(plans) if (f := store.load(p, opts.n)) is not None}
    todo = [p for pos, p in enumerate(plans) if pos not in reused]
    manifest["resumed_from"] = resumed_from
    manifest["reused_rows"] = [[plans[pos].level, plans[pos].depth] for pos in reused]
    t0 = time.perf_counter()
    try:
        handle = start_cluster(opts.cluster(scratch=str(store.folder / "scratch")))
    except RunError as e:
        raise RunError(f"{e}\n{_resume_hint(run_id, opts.out)}") from e
    closer = None
    try:
        t1 = time.perf_counter()
        workers = len(handle.client.scheduler_info().get("workers", {}))
        graph_timings: dict = {}
        fresh = run_rows(handle.client, todo, opts.n, opts.seeds_per_task,
                         Progress(len(todo), opts.n * len(todo), progress), graph_timings,
                         on_row=lambda pos, frame: store.save(todo[pos], opts.n, frame))
        records = pl.concat([*reused.values(), *fresh.values()]).sort(SORT_KEY)
        t2 = time.perf_counter()
        # Workers shut down on a side thread while this one aggregates and writes.
        closer = threading.Thread(target=handle.close)
        closer.start()
    except RunError as e:
        raise RunError(f"{e}\n{_resume_hint(run_id, opts.out)}") from e
    finally:
        if closer is None:
            handle.close()
    desc = handle.description
    aggregates = aggregate(records)
    frame = assertion_frame(aggregates, tables)
    results, failures = evaluate(frame)
    shortfall = shortfall_distribution(records)
    b1 = reconcile(frame, tables.settlement)
    exit_code = EXIT_ASSERTION_FAILED if hard_failures(results) else EXIT_OK
    t3 = time.perf_counter()
    manifest.update({
        "scheduler": desc, "workers": workers, "exit_code": exit_code,
        "records_sha256": report.records_digest(records), "boards": records.height,
        "timings_s": {"setup": round(t0 - t_start, 3), "cluster_start": round(t1 - t0, 3),
                      "generate": round(t2 - t1, 3), **graph_timings,
                      "aggregate": round(t3 - t2, 3)},
    })
    manifest["wall_s"] = round(time.perf_counter() - t_start, 3)  # as the report shows it

    def finish(m: dict) -> None:  # wall_s: from the start until the run folder is complete
        m["timings_s"]["report"] = round(time.perf_counter() - t3, 3)
        m["wall_s"] = round(time.perf_counter() - t_start, 3)

    run_dir = report.write_run(opts.out, run_id, manifest, records, frame, results, failures,
                               shortfall, b1, finish=finish)
    closer.join()
    store.remove()  # the run is complete: its shards are in records.parquet now
    return AuditResult(exit_code, run_dir, manifest, records, frame, results)


def _resume_hint(run_id: str, out: str) -> str:
    return (f"finished rows are kept; complete the run with: minegen audit --resume {run_id} "
            f"--out {out}")


def summary(result: AuditResult) -> str:
    """One screen for a nightly log: where the report is and what failed where."""
    m = result.manifest
    fails = hard_failures(result.results)
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
        shown = ", ".join(f"({r['level_index']}, {r['node_depth']}) {_fmt(r['observed'])}"
                          for r in rs[:6])
        more = f" and {len(rs) - 6} more" if len(rs) > 6 else ""
        lines.append(f"  {name} failed on {len(rs)} row(s) [{rs[0]['op']} {rs[0]['threshold']}]:"
                     f" {shown}{more}")
    e_warn = [r for r in result.results if r["line"] == "E" and r["passed"] is False]
    if e_warn:
        lines.append(f"  E (advisory) warns on {len(e_warn)} row(s)")
    drift = result.aggregates.filter(pl.col("mine_drift_warning"))
    if drift.height:
        lines.append(f"  mine drift (advisory) p50 > 0.25 on {drift.height} row(s): the "
                     "remove-only rule eats their density")
    return "\n".join(lines)


def _fmt(v) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)

"""``minegen audit``: the batch audit of a generator's table, end to end (orchestration only).

tables → plans → engine (row shards as rows finish) → finishing pass (validate, digest,
aggregate, records.parquet) → lines (Pandera) → reports → one atomic run folder.
Exit code: 0 every hard line holds, 1 some failed (the report is still written), 2 bad
input, 3 the run could not complete.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

import polars as pl

from boardcore import files
from boardcore.errors import InputError
from boardcore.tables import copy_root

from ..analysis import lines as L
from ..analysis.collect import ROW, Collector, InOrder
from ..engine import spot, split
from ..engine.run import ahead, execute
from ..engine.interrupts import interruptible
from ..errors import (
    EXIT_ASSERTION_FAILED, EXIT_OK, Interrupted, OutputError, RunError, RunInterrupted,
    describe_os_error,
)
from .. import audit_options, capabilities, hints
from . import history, latest_tune
from ..generator import Tune, load_generator
from ..options import DEFAULT_OUT, AuditOptions, usable_out
from ..reports import audit_page, docsite
from ..reports.audit_page import AuditDoc
from ..store import atomic, runs
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
        return pl.read_parquet(files.checked(self.run_dir / "records.parquet"))


def keys_of(gen, rows) -> list[tuple]:
    """``--rows`` items (typed text or tuples) -> keys; InputError when one row is named
    twice (the same key, however it is written)."""
    keys = [gen.parse_key(r) if isinstance(r, str) else tuple(r) for r in rows]
    for key in keys:
        check_key(gen, key)
    twice = sorted({gen.format_key(k) for k in keys if keys.count(k) > 1})
    if twice:
        raise InputError(f"--rows names a row twice: {', '.join(twice)}")
    return keys


INT64 = (-(1 << 63), (1 << 63) - 1)
# an OSError of these is the output folder's, even when it names no file (Arrow's do not)
OUTPUT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES)
PLAY_DIR = "play"  # the run folder's play pages of the boards the report draws


def check_key(gen, key: tuple, what: str = "--rows") -> None:
    """InputError unless every part of ``key`` fits its record column: the type, and the
    bounds the record declares (an int64 at the least)."""
    fields = {f.name: f for f in gen.record}
    for name, value in zip(gen.key_fields, key):
        f = fields.get(name)
        if f is None or f.dtype != "int64":
            continue
        lo = f.ge if f.ge is not None else INT64[0]
        hi = f.le if f.le is not None else INT64[1]
        if not isinstance(value, int) or not lo <= value <= hi:
            raise InputError(f"{what} {gen.format_key(key)}: {name} must be an integer in "
                             f"[{lo}, {hi}]; got {value!r}")


def check_n(gen, n) -> None:
    limit = gen.max_boards
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= limit:
        raise InputError(f"boards per row must be an int in [1, {limit}] for {gen.name} "
                         f"(got {n!r})")


def run_audit(opts: AuditOptions, progress: bool | None = None, gen=None,
              index: bool = True, site: str | None = None) -> AuditResult:
    """The audit of ``opts``; ``index``: keep ``<out>/index.html`` (a tune's own audits,
    inside the tune's folder, do not: the tune's page links them); ``site``: the output
    folder whose rendered docs the pages link (default ``opts.out``; a tune's own audits
    link the tune's output folder's)."""
    t_start = time.perf_counter()
    gen = gen or load_generator(opts.generator)
    full = not opts.rows  # every row of the table (or every row an option sets)
    swapped = gen
    for o, value in audit_options.chosen(opts.extras):  # before a resume: its run's generator
        if not o.kept:
            swapped = o.generator(swapped, value)
    # how to load the generator again (resume, diff, hints)
    ref = (opts.generator or gen.name) if swapped is gen else swapped.name
    gen = swapped
    vdir = runs.version_dir(opts.out, gen.report_subdir, gen.metric_version)
    store, facts = None, {}
    if opts.resume:
        store = ShardStore.find(opts.resume, vdir)
        if store.folder.parent != vdir:  # a folder named by its path: finish it there
            vdir, opts = store.folder.parent, replace(opts, out=_out_of(gen, store, opts))
        facts = store.facts()
        if facts.get("generator", gen.name) != gen.name:
            raise InputError(f"--resume {opts.resume}: that run is a {facts['generator']} "
                               f"run; give --generator {facts['generator']}")
        opts = replace(opts, tables=facts["tables"], n=facts["n"],
                       rows=tuple(tuple(r) for r in facts["rows"]),
                       seeds_per_task=facts["seeds_per_task"],
                       extras=_kept(facts))
    for o, value in audit_options.chosen(opts.extras):  # kept ones (a resume's own too):
        if o.kept:                                         # before anything is written
            gen = o.generator(gen, value)
    with ahead(gen, opts.cluster()):  # the workers' template imports while the tables load
        return _audit(gen, opts, full, ref, vdir, store, facts, progress, index, site,
                      t_start)


def _kept(facts: dict) -> tuple[tuple[str, str], ...]:
    """The kept registered options of an interrupted run (its run.json) for its resume."""
    return tuple((o.key, facts[o.key]) for o in audit_options.registered()
                 if o.kept and facts.get(o.key) is not None)


def _audit(gen, opts: AuditOptions, full: bool, ref: str, vdir: Path,
           store: ShardStore | None, facts: dict, progress: bool | None, index: bool,
           site: str | None, t_start: float) -> AuditResult:
    """``run_audit`` once its generator and options are settled (a resume's included)."""
    catalog = gen.load(opts.tables)
    for w in getattr(catalog, "warnings", ()):  # as `validate` prints them: a misspelled
        announce(w.format())                   # file name must not pass unseen at night
    for o, value in audit_options.chosen(opts.extras):
        rows, n = o.rows(gen, value, catalog, opts.rows, opts.n)
        opts = replace(opts, rows=rows, n=n)
    check_n(gen, opts.n)
    plans = gen.plans(catalog, keys_of(gen, opts.rows))
    keys = [gen.key(p) for p in plans]
    expects = [shard_key(gen, p, opts.n) for p in plans]
    usable_out(opts.out)  # before anything is written: exit 2 and nothing left behind
    created = runs.utc_now()
    if store is None:
        store = ShardStore.claim(vdir, runs.run_id_base(catalog.content_hash, opts.n, created), {
            "generator": gen.name, "generator_ref": ref,
            "tables": str(catalog.root),
            "table_hash": catalog.content_hash, "n": opts.n, "rows": [list(k) for k in keys],
            "full_table": full, "seeds_per_task": opts.seeds_per_task,
            **{o.key: opts.extra(o.key) for o in audit_options.registered() if o.kept},
            "snapshots": [e["snapshot"] for e in expects],
            "created_utc": created.isoformat(timespec="seconds")})
    else:
        store.lock()  # one process owns a run folder at a time
        full = bool(facts.get("full_table"))
        try:
            refuse_changed_rows(gen, opts.resume, facts, keys, expects)
        except InputError:
            store.unlock()
            raise
    run_id = store.run_id
    manifest = runs.base_manifest(gen, run_id, created, catalog, opts.n, opts.seeds_per_task,
                                  keys)
    manifest["generator_ref"] = ref
    manifest["out"] = str(opts.out)  # where the run was written (the report's hints name it)
    manifest["full_table"] = full
    manifest.update(capabilities.manifest_facts(gen))
    if opts.resume:
        manifest["resumed_from"] = run_id
    # LATEST names the newest complete full-table audit of its table root; a subset, the
    # resume of an older run while a newer full run exists, or a run of another root than
    # the generator's own, leaves it where it is (decided when the run folder is in place,
    # under a lock: runs.advance_latest; decision 273)
    created = store.facts()["created_utc"] if full else None

    def kept(other: str, root: str) -> None:
        announce(f"LATEST stays on run {other}, of the tables at {root}; this run audited "
                 f"{catalog.root}, so name it by its id: " + hints.audit_command(
                     "tune", "--run", run_id, generator=ref, out=opts.out,
                     tables=hints.tables_flag(catalog.root, gen.default_root)))
    t0 = time.perf_counter()
    try:
        with docsite.beside(site or opts.out) if index else contextlib.nullcontext(), \
                interruptible(), \
                runs.run_folder(vdir, run_id, created, str(catalog.root),
                                gen.default_root, kept) as tmp:
            # a shard proves its row: its records, the plan's columns, the run's journal and
            # boards made again (engine.spot: --verify); any other is computed again, named
            check = spot.Check(opts.verify)
            reused = spot.reusable(gen, store, plans, expects, announce, check) \
                if opts.resume else []
            if opts.resume:
                manifest["verified"] = check.facts()
            manifest["reused_rows"] = [list(keys[pos]) for pos in reused]
            todo = [pos for pos in range(len(plans)) if pos not in set(reused)]
            # the finishing pass runs as rows arrive, in key order (analysis.collect)
            feeder = InOrder(Collector(gen, tmp / "records.parquet"), len(plans), store.read,
                             ready=reused)
            with execute(gen, opts.cluster(scratch=str(store.folder / "scratch")), plans,
                         todo, opts.n, opts.seeds_per_task, store, expects, progress,
                         then=feeder.arrived, announce=announce) as ex:
                t1 = time.perf_counter()
                result = _finish(gen, catalog, plans, feeder.drain(), tmp, vdir / run_id,
                                 manifest, ex, t_start, {"setup": round(t0 - t_start, 3),
                                                         "generate": round(t1 - t0, 3)},
                                 index, site or opts.out)
    except OutputError as e:  # a finished row could not be written (a full disk)
        raise OutputError(f"--out {opts.out}: {e}; {resume_hint(run_id, ref, opts.out)}"
                          ) from None
    except RunError as e:
        if not opts.resume and not store.done():  # nothing finished: nothing to resume
            store.remove()
            raise
        raise RunError(f"{e}\n{resume_hint(run_id, ref, opts.out)}") from e
    except OSError as e:  # the output folder failed under the run (full, removed, read-only)
        if getattr(e, "filename", None) is None and e.errno not in OUTPUT_ERRNOS:
            # not a file: the comm layer (distributed's CommClosedError is an OSError)
            raise RunError(f"the run could not complete ({type(e).__name__}: {e}); "
                           f"{resume_hint(run_id, ref, opts.out)}") from e
        raise OutputError(f"--out {opts.out}: cannot write the run ({describe_os_error(e)}"
                          + (f": {e.filename}" if e.filename else "") + "); "
                          f"{resume_hint(run_id, ref, opts.out)}") from None
    except Interrupted as e:
        raise RunInterrupted(e.signum, f"interrupted ({e}); finished rows are kept; resume "
                             f"with: {hints.resume_audit(run_id, ref, opts.out)}") from None
    finally:
        store.unlock()
    # the run is complete: its shards are in records.parquet now (the index reads none)
    store.remove()
    if index:
        history.refresh(opts.out, announce)
    return result


def _out_of(gen, store: ShardStore, opts: AuditOptions) -> str:
    """The --out a run folder named by its path belongs to (``<out>/<report_subdir>/
    metric_v<k>/.partial-<id>``); InputError when it is not laid out so, or when --out
    names another place."""
    vdir = store.folder.parent
    out = vdir.parent if not gen.report_subdir else vdir.parent.parent
    if vdir.name != f"metric_v{gen.metric_version}" or \
            (gen.report_subdir and vdir.parent.name != gen.report_subdir):
        raise InputError(f"--resume {opts.resume}: not under <out>/"
                         f"{gen.report_subdir + '/' if gen.report_subdir else ''}metric_v"
                         f"{gen.metric_version}/ (a {gen.name} run folder stays where the "
                         "run started)")
    if str(opts.out) != DEFAULT_OUT and Path(opts.out).resolve() != out.resolve():
        raise InputError(f"--resume {opts.resume}: that run belongs to --out {out}, not "
                         f"{opts.out}; drop --out (the run finishes where its folder is)")
    return str(out)


def announce(message: str) -> None:
    """One line for the person or the nightly log watching the run (stderr)."""
    print(f"audit: {message}", file=sys.stderr, flush=True)


def refuse_changed_rows(gen, run: str, facts: dict, keys: list, expects: list[dict]) -> None:
    """A resume must equal a clean run of the tables as they are now: refuse, naming the
    rows, when a row of the run reads other table values than when the run started."""
    before = dict(zip((tuple(k) for k in facts["rows"]), facts.get("snapshots") or []))
    changed = [gen.label(k) for k, e in zip(keys, expects)
               if k in before and before[k] != e["snapshot"]]
    if changed:
        raise InputError(f"--resume {run}: the tables changed since the run started; "
                           f"row(s) {', '.join(changed)} now read other values. Start a new "
                           "audit (a resumed run must equal a clean run of today's tables).")


def _finish(gen, catalog, plans, got, tmp: Path, run_dir: Path, manifest: dict, ex,
            t_start: float, timings: dict, index: bool, site: str) -> AuditResult:
    """Lines, tables and reports of a collected run, written into ``tmp`` (the run folder
    before its atomic rename). The boards the report draws are made on the cluster, which
    then closes while the files are written."""
    t2 = time.perf_counter()
    rows = gen.row_columns(got.rows.drop(ROW), catalog)
    results, failures = L.evaluate(rows, gen.lines, gen.key_fields)
    exit_code = EXIT_ASSERTION_FAILED if L.hard_failures(results) else EXIT_OK
    by_key = {gen.key(p): p for p in plans}
    tables, copied = {**got.side}, {}

    def meanwhile() -> None:
        """What needs no drawing, done while the workers draw (decision 264)."""
        tables.update(capabilities.run_tables(gen, rows, catalog))
        with atomic.os_errors(tmp / "aggregates.parquet"):  # new files in the run's folder
            files.create(tmp / "aggregates.parquet", rows.write_parquet)
            files.create(tmp / "aggregates.csv", flat(rows).write_csv)
            for name, frame in tables.items():
                files.create(tmp / f"{name}.csv", flat(frame).write_csv)
        # the tables as the run read them: diff reads a table change from two runs' copies
        # (decision 221), whatever happened to the root since
        copied["tables"] = copy_root(catalog.root, tmp / "tables", catalog.content_hash) \
            if hasattr(catalog, "root") and hasattr(catalog, "content_hash") else False
        files.create(tmp / "assertions.json", runs.to_json_rows({
            "metric_version": gen.metric_version, "hard_lines_hold": exit_code == EXIT_OK,
            "results": results, "failure_cases": failures.to_dicts()}))

    made = ex.exhibits(gen, [(by_key[k], i) for k, i in capabilities.exhibits(gen, rows, results)
                             if k in by_key], meanwhile=meanwhile)
    ex.close_soon()
    drawings = {k: drawing for k, (drawing, _) in made.items()}
    pages = _write_pages(tmp, {k: page for k, (_, page) in made.items() if page})
    t3 = time.perf_counter()
    manifest.update({
        "scheduler": ex.scheduler, "workers": ex.workers, "exit_code": exit_code,
        "records_sha256": got.records_sha256, "boards": got.boards,
        "timings_s": {**timings, **ex.timings, "finish": round(t3 - t2, 3)},
        "tables_copied": copied["tables"], "split": ex.split,
    })
    if ex.row_seconds:  # each row's seconds, the next run's split (engine.split)
        split.write(tmp, gen, plans, ex.row_seconds, getattr(catalog, "content_hash", None))
    notes = gen.summary_notes(rows)
    if ex.missing:  # a report without its pictures says so
        manifest["drawings_missing"] = ex.missing
        notes.append(f"the report's board drawings are missing: {ex.missing}")
    locked = {k: gen.locked_why(catalog, k) for k in by_key
              if isinstance(gen, Tune) and gen.locked(catalog, k)}
    link = os.path.relpath(Path(manifest["out"]) / history.INDEX, run_dir) if index else ""
    latest_tune.save_drawings(tmp, drawings, pages)  # the report can be written again
    doc = AuditDoc(manifest, rows.to_dicts(), results, gen, tables, notes, drawings,
                   index=link, locked=locked, pages=pages,
                   site=os.path.relpath(site, run_dir),
                   tune=latest_tune.find(run_dir, manifest) if index else None,
                   sweeps=latest_tune.sweeps(manifest) if index else ())
    sections = gen.report_sections(doc)
    manifest["wall_s"] = round(time.perf_counter() - t_start, 3)  # as the report shows it
    md, page = audit_page.pages(doc, sections)
    files.create(tmp / "report.md", md)
    files.create(tmp / "report.html", page)
    manifest["timings_s"]["report"] = round(time.perf_counter() - t3, 3)
    manifest["wall_s"] = round(time.perf_counter() - t_start, 3)  # until the folder is done
    files.create(tmp / "manifest.json", runs.to_json(manifest))
    return AuditResult(exit_code, run_dir, manifest, rows, results, gen)


def _write_pages(tmp: Path, pages: dict) -> dict:
    """Each board's play page as ``play/<row key>-<board index>.html`` in the run folder;
    returns {(row key, board index): that path, relative to the report}."""
    out = {}
    for key, page in pages.items():
        rel = f"{PLAY_DIR}/{'-'.join(str(v) for v in (*key[0], key[1]))}.html"
        (tmp / PLAY_DIR).mkdir(exist_ok=True)
        files.create(tmp / rel, page)
        out[key] = rel
    return out


def flat(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV has no lists: list columns become ``a;b;c`` text."""
    lists = [c for c, t in frame.schema.items() if isinstance(t, pl.List)]
    return frame.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join(";")
                              for c in lists) if lists else frame


def resume_hint(run_id: str, generator: str, out: str) -> str:
    return ("finished rows are kept; complete the run with: "
            f"{hints.resume_audit(run_id, generator, out)}")


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
                     f"{len(result.aggregates) - len(m['reused_rows'])} recomputed (--verify "
                     f"{(m.get('verified') or {}).get('mode', 'spot')})")
    by_line: dict[str, list[dict]] = {}
    for r in fails:
        by_line.setdefault(r["line"], []).append(r)
    for name, rs in by_line.items():
        shown = ", ".join(f"{gen.label(tuple(r[k] for k in gen.key_fields))} "
                          f"{_fmt(r['observed'])}" for r in rs[:6])
        more = f" and {len(rs) - 6} more" if len(rs) > 6 else ""
        lines.append(f"  {name} failed on {len(rs)} row(s) [{rs[0]['op']} {rs[0]['threshold']}]:"
                     f" {shown}{more}")
    lines += [f"  {d}" for d in capabilities.summary_details(gen, result.aggregates)]
    for ln in gen.lines:
        warned = [r for r in L.advisory_warnings(result.results) if r["line"] == ln.name]
        if warned:
            lines.append(f"  {ln.name} (advisory) warns on {len(warned)} row(s)")
    lines += [f"  {note} (advisory)" for note in gen.summary_notes(result.aggregates)]
    return "\n".join(lines)


def _fmt(v) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)

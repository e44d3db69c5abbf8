"""``minegen tune``: for each row failing a hard line, the smallest single-field change that
makes every hard line of the row hold (orchestration only).

1. A baseline audit of the tables (or ``--run``, an audit already made of these tables).
2. Per failing row that the design does not fix (``Generator.locked``): the candidates of
   ``Generator.tune_candidates``, fields in tuning order, values from the smallest change
   out; each varied row validated in memory (``Generator.vary``), with the audit's seeds.
3. Every candidate of every row as ONE graph (the engine), rows streamed to shards, so an
   interrupted tune resumes (``--resume ID``) and recomputes only what is missing.
4. Per row the first field with a passing candidate, and its smallest passing value; rows
   no single-field change fixes are named with the evidence (values tried, the best value
   each failing line reached).
5. A proposed table root (``Generator.patch_tables``), its own audit, and the diff of that
   audit against the baseline.

Output ``<out>/tune/<id>/`` (a ``.tuning`` marker while it is incomplete): tables/,
baseline/ (unless --run), audit/, .partial-candidates/ (shards, removed when done), tune.json,
patch.md, diff.md and diff.html. Exit 0 when the proposed tables pass their own audit, 1
when some hard line still fails there, 2 bad input, 3 the run could not complete.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from boardcore.errors import InputError

from ..analysis import lines as L
from ..analysis.collect import ROW, collect
from ..analysis.compare import compare
from ..engine.interrupts import interruptible
from ..engine.run import execute
from ..errors import EXIT_ASSERTION_FAILED, EXIT_OK, Interrupted, RunInterrupted
from .. import hints
from ..generator import DEFAULT_GENERATOR, load_generator, require
from ..options import AuditOptions, usable_out
from ..reports import diff_page
from ..store import atomic, runs
from ..store.shards import ShardStore, shard_key
from .audit import announce, check_n, run_audit

MARKER = ".tuning"


@dataclass(frozen=True)
class TuneOptions:
    audit: AuditOptions  # tables, n, cluster options, out, generator
    run: str | None = None  # a finished audit of these tables to start from
    resume: str | None = None  # a tune id to complete
    n_given: bool = True  # False: --n was not given (a --run's own N is used)


@dataclass
class TuneResult:
    exit_code: int
    folder: Path
    doc: dict = field(default_factory=dict)


def run_tune(opts: TuneOptions, progress: bool | None = None) -> TuneResult:
    a = opts.audit
    root = Path(a.out) / "tune"
    if opts.resume:
        folder = root / opts.resume
        if not (folder / MARKER).is_file():
            raise InputError(f"--resume {opts.resume}: no unfinished tune at {folder}")
        facts = json.loads((folder / MARKER).read_text())
        recorded = facts.get("generator") or DEFAULT_GENERATOR
        if a.generator and a.generator != recorded:
            raise InputError(f"--resume {opts.resume}: that tune is of generator {recorded}, "
                             f"not {a.generator}")
        a = replace(a, tables=facts["tables"], n=facts["n"], generator=recorded)
        opts = replace(opts, run=facts.get("run"), audit=a)
    gen = load_generator(a.generator)
    require(gen, "tune")
    ref = a.generator or gen.name
    catalog = gen.load(a.tables)
    if opts.run:  # the run must be of these tables, this generator and this N
        path = runs.resolve_run(opts.run, a.out, gen.report_subdir)
        manifest = runs.read_json(path / "manifest.json")
        if not opts.n_given and isinstance(manifest.get("n"), int):
            a = replace(a, n=manifest["n"])
        runs.check_fits(manifest, gen, catalog, a.n, f"--run {opts.run}")
        opts = replace(opts, run=str(path.resolve()), audit=a)
    check_n(gen, a.n)
    usable_out(a.out)
    created = runs.utc_now()
    if not opts.resume:
        folder = _claim(root, runs.run_id_base(catalog.content_hash, a.n, created))
        atomic.write_text(folder / MARKER, json.dumps(
            {"generator": ref, "tables": str(catalog.root), "n": a.n, "run": opts.run}))
    t0 = time.perf_counter()
    try:
        with interruptible():
            base = _baseline(gen, opts, folder, progress)
            doc = _search(gen, catalog, a, base, folder, progress)
            doc.update(_propose(gen, catalog, a, base, doc, folder, progress))
    except Interrupted as e:
        raise RunInterrupted(e.signum, f"interrupted ({e}); finished candidates are kept; "
                             "resume with: " + hints.audit_command(
                                 "tune", "--resume", folder.name, generator=ref, out=a.out)
                             ) from None
    doc.update(tune_id=folder.name, created_utc=created.isoformat(timespec="seconds"),
               tables=str(catalog.root), n=a.n, wall_s=round(time.perf_counter() - t0, 3))
    atomic.write_text(folder / "tune.json", runs.to_json(doc))
    atomic.write_text(folder / "patch.md", patch_markdown(gen, doc))
    (folder / MARKER).unlink()
    return TuneResult(doc["exit_code"], folder, doc)


def _claim(root: Path, base: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)

    def take(name: str) -> Path:
        (root / name).mkdir()  # FileExistsError: taken
        return root / name

    return atomic.claim_name(base, take, "tune id", root)


def _baseline(gen, opts: TuneOptions, folder: Path, progress) -> runs.Run:
    if opts.run:
        path = Path(opts.run)  # resolved and checked against the tables by run_tune
    else:
        vdir = runs.version_dir(folder / "baseline", gen.report_subdir, gen.metric_version)
        done = sorted(p for p in vdir.glob("2*") if (p / "manifest.json").is_file())
        path = done[-1] if done else run_audit(
            replace(opts.audit, rows=(), out=str(folder / "baseline")), progress, gen).run_dir
    return runs.load_run(path, gen.key_fields)


def _search(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, progress) -> dict:
    failing: dict[tuple, list[str]] = {}
    for key, results in base.results.items():
        names = [n for n, r in results.items() if r.get("hard") and r.get("passed") is False]
        if names:
            failing[key] = names
    locked = {k: v for k, v in failing.items() if gen.locked(catalog, k)}
    rows: list[dict] = []
    plans, meta = [], []
    for key, names in sorted(failing.items()):
        if key in locked:
            continue
        tried = []
        for fld, values in gen.tune_candidates(catalog, key, names):
            for value in values:
                plan, diags = gen.vary(catalog, key, fld, value)
                if plan is None:
                    tried.append({"field": fld, "value": value, "status": "invalid",
                                  "rule": diags[0].rule if diags else ""})
                    continue
                meta.append((key, fld, value))
                plans.append(plan)
        rows.append({"key": list(key), "label": gen.label(key), "lines": names,
                     "tried": tried})
    cand = folder / f"{runs.PARTIAL_PREFIX}candidates"  # kept by an interrupted tune
    store = ShardStore(cand) if (cand / "run.json").is_file() else \
        ShardStore.create(folder, "candidates", {"candidates": len(plans)})
    expects = [shard_key(gen, p, a.n) for p in plans]
    todo = [i for i, p in enumerate(plans) if store.load(i, expects[i], gen) is None]
    with execute(gen, a.cluster(scratch=str(store.folder / "scratch")), plans, todo, a.n,
                 a.seeds_per_task, store, expects, progress, what="tune",
                 announce=announce) as ex:
        ex.close_soon()
        verdicts = [_verdict(gen, store, i) for i in range(len(plans))]
    by_row: dict[tuple, list] = {}
    for (key, fld, value), v in zip(meta, verdicts):
        by_row.setdefault(key, []).append({"field": fld, "value": value, **v})
    changes = {}
    for row in rows:
        key = tuple(row["key"])
        row["tried"] = by_row.get(key, []) + row["tried"]
        pick = next((c for c in by_row.get(key, []) if c["holds"]), None)
        old = None if pick is None else gen.current_value(catalog, key, pick["field"])
        row["change"] = None if pick is None else {
            "field": pick["field"], "old": old, "new": pick["value"],
            "edits": [list(e) for e in gen.table_edits(catalog, key, pick["field"], old,
                                                        pick["value"])],
            "evidence": {n: pick["lines"][n] for n in row["lines"] if n in pick["lines"]}}
        if pick is not None:
            changes[key] = {pick["field"]: pick["value"]}
        row["best"] = _best(gen, row["tried"], row["lines"])
    store.remove()
    return {"rows": rows, "changes": {gen.label(k): v for k, v in changes.items()},
            "_changes": changes, "scheduler": ex.scheduler,
            "locked": [{"key": list(k), "label": gen.label(k), "lines": v}
                       for k, v in sorted(locked.items())]}


def _verdict(gen, store: ShardStore, pos: int) -> dict:
    got = collect(gen, store.rows([pos]), None)
    results, _ = L.evaluate(gen.row_columns(got.rows.drop(ROW), None), gen.lines,
                            gen.key_fields)
    hard = [r for r in results if r["hard"] and r["applies"]]
    return {"holds": not L.hard_failures(results), "records_sha256": got.records_sha256,
            "lines": {r["line"]: {"observed": r["observed"], "passed": r["passed"]}
                      for r in hard}}


def _best(gen, tried: list[dict], lines: list[str]) -> dict:
    """Per failing line, the best observed value any candidate reached (the evidence for a
    row no single-field change fixes): the largest for a line that needs >= or >, else the
    smallest (read from the line's declaration)."""
    ops = {ln.name: ln.op for ln in gen.lines}
    out = {}
    for name in lines:
        seen = [(c["lines"][name]["observed"], c["field"], c["value"]) for c in tried
                if c.get("lines", {}).get(name, {}).get("observed") is not None]
        if seen:
            obs, fld, value = max(seen) if ops.get(name) in (">=", ">") else min(seen)
            out[name] = {"observed": obs, "field": fld, "value": value}
    return out


def _propose(gen, catalog, a: AuditOptions, base: runs.Run, doc: dict, folder: Path,
             progress) -> dict:
    changes = doc.pop("_changes")
    tables = folder / "tables"
    if tables.exists():
        import shutil

        shutil.rmtree(tables)
    gen.patch_tables(catalog, tables, changes)
    proposed = run_audit(replace(a, tables=str(tables), rows=(), out=str(folder / "audit")),
                         progress, gen)
    d = compare(gen, base, runs.load_run(proposed.run_dir, gen.key_fields))
    atomic.write_text(folder / "diff.md", diff_page.markdown(d))
    atomic.write_text(folder / "diff.html", diff_page.html(d))
    code = EXIT_OK if proposed.exit_code == EXIT_OK else EXIT_ASSERTION_FAILED
    return {"baseline_run": str(base.path), "proposed_run": str(proposed.run_dir),
            "proposed_exit_code": proposed.exit_code, "exit_code": code,
            "still_failing": [f"{r['line']} on {gen.label(tuple(r[k] for k in gen.key_fields))}"
                              for r in L.hard_failures(proposed.results)]}


def patch_markdown(gen, doc: dict) -> str:
    out = [f"# {gen.name} tune {doc['tune_id']}", "",
           f"Tables: {doc['tables']}; N = {doc['n']}; baseline run: {doc['baseline_run']}.", ""]
    fixed = [r for r in doc["rows"] if r["change"]]
    out += ["## Proposed changes", ""]
    if fixed:
        out += ["| row | fails | field | old → new | the table's lines (old → new) | "
                "evidence (line: observed) |", "|---|---|---|---|---|---|"]
        for r in fixed:
            c = r["change"]
            ev = "; ".join(f"{n}: {_v(x['observed'])}" for n, x in c["evidence"].items())
            edits = "; ".join(f"`{k} = {o}` → `{k} = {n}`" for k, o, n in c["edits"])
            out.append(f"| {r['label']} | {', '.join(r['lines'])} | {c['field']} | "
                       f"{c['old']} → {c['new']} | {edits} | {ev} |")
    else:
        out.append("No single-field change fixes any failing row.")
    unfixed = [r for r in doc["rows"] if not r["change"]]
    out += ["", "## Rows no single-field change fixes", ""]
    for r in unfixed:
        valid = [c for c in r["tried"] if "holds" in c]
        fields = sorted({c["field"] for c in valid})
        best = "; ".join(f"best {n} {_v(b['observed'])} at {b['field']} = {b['value']}"
                         for n, b in r["best"].items())
        out.append(f"- {r['label']} fails {', '.join(r['lines'])}: tried "
                   + (", ".join(f"{f} = " + ", ".join(str(c['value']) for c in valid
                                                      if c['field'] == f) for f in fields)
                      or "no valid value") + (f"; {best}" if best else ""))
    if not unfixed:
        out.append("None.")
    out += ["", "## Rows fixed by the design (never changed)", ""]
    out += [f"- {r['label']} fails {', '.join(r['lines'])}" for r in doc["locked"]] or ["None."]
    out += ["", "## The proposed tables", "",
            f"Audit: {doc['proposed_run']} (exit {doc['proposed_exit_code']}); diff against "
            "the baseline: diff.md, diff.html."]
    if doc["still_failing"]:
        out.append("Still failing there: " + ", ".join(doc["still_failing"]) + ".")
    return "\n".join(out) + "\n"


def _v(x) -> str:
    return f"{x:.3f}" if isinstance(x, float) else str(x)


def cmd_tune(args) -> int:
    from ..options import merge

    opts = TuneOptions(merge(args), run=args.run, resume=args.resume_tune,
                       n_given=args.n is not None)
    result = run_tune(opts)
    print((result.folder / "patch.md").read_text(encoding="utf-8"))
    print(f"tune: {result.folder}")
    return result.exit_code

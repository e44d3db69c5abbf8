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

from ..analysis import cost
from ..analysis import lines as L
from ..analysis.collect import ROW, collect
from ..analysis.compare import compare
from ..engine.interrupts import interruptible
from ..engine.run import execute
from ..errors import EXIT_ASSERTION_FAILED, EXIT_OK, Interrupted, RunInterrupted
from .. import hints
from ..generator import DEFAULT_GENERATOR, load_generator, require
from ..options import AuditOptions, usable_out
from ..reports import diff_page, tune_page
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
               generator=gen.name, generator_ref=ref, rules_doc=gen.rules_doc,
               table_file=gen.table_file,
               tables=str(catalog.root), table_hash=catalog.content_hash, n=a.n,
               apply_command=hints.audit_command("tune", "--apply", folder.name,
                                                 generator=ref, out=a.out),
               wall_s=round(time.perf_counter() - t0, 3))
    for c, spec in zip(doc["costs"], gen.tune_costs):
        c["digits"] = spec.digits
    atomic.write_text(folder / "tune.json", runs.to_json(doc))
    atomic.write_text(folder / "patch.md", tune_page.markdown(doc))
    atomic.write_text(folder / "tune.html", tune_page.html(doc, str(folder)))
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


PAIR_FIELDS = 4  # the pair search: pairs of the row's first 4 candidate fields ...
PAIR_VALUES = 3  # ... 3 values each (the smallest change, the middle, the largest valid)


def _search(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, progress) -> dict:
    """Every failing row's candidates, ranked (``analysis.cost``): one field at a time, then,
    for a row no single field fixes acceptably, pairs of fields within the stated budget."""
    failing: dict[tuple, list[str]] = {}
    for key, results in base.results.items():
        names = [n for n, r in results.items() if r.get("hard") and r.get("passed") is False]
        if names:
            failing[key] = names
    locked = {k: v for k, v in failing.items() if gen.locked(catalog, k)}
    todo = {k: v for k, v in sorted(failing.items()) if k not in locked}
    singles = {key: [{fld: value} for fld, values in gen.tune_candidates(catalog, key, names)
                     for value in values] for key, names in todo.items()}
    tried, scheduler = _round(gen, catalog, a, base, folder, "candidates", singles, progress)
    pairs = {key: _pairs(tried[key]) for key in todo
             if not any(cost.acceptable(c) for c in tried[key])}
    more, scheduler2 = _round(gen, catalog, a, base, folder, "pairs",
                              {k: v for k, v in pairs.items() if v}, progress)
    rows, changes = [], {}
    for key, names in todo.items():
        every = tried[key] + more.get(key, [])
        row = _decide(gen, catalog, key, names, every, base.rows.get(key) or {},
                      searched_pairs=key in pairs)
        rows.append(row)
        if row["change"]:
            changes[key] = {f["field"]: f["new"] for f in row["change"]["fields"]}
    return {"rows": rows, "changes": {gen.label(k): v for k, v in changes.items()},
            "_changes": changes, "scheduler": scheduler2 or scheduler,
            "budget": {"pair_fields": PAIR_FIELDS, "pair_values": PAIR_VALUES},
            "line_words": {ln.name: ln.what for ln in gen.lines},
            "share_lines": [ln.name for ln in gen.lines if ln.hard and ln.trials],
            "costs": [{"label": c.label, "unit": c.unit, "keep": c.keep,
                       "feature": c.feature} for c in gen.tune_costs],
            "locked": [{"key": list(k), "label": gen.label(k), "lines": v, "class": "locked",
                        "why": gen.locked_why(catalog, k),
                        "figures": cost.figures(gen.tune_costs, base.rows.get(k))}
                       for k, v in sorted(locked.items())]}


def _pairs(single: list[dict]) -> list[dict]:
    """Pairs of the first PAIR_FIELDS fields with valid single candidates, PAIR_VALUES of
    each field's valid values spread from the smallest change to the largest."""
    by_field: dict[str, list] = {}
    for c in single:
        if c["status"] == "ok":
            ((fld, value),) = c["change"].items()
            by_field.setdefault(fld, []).append(value)
    fields = list(by_field)[:PAIR_FIELDS]
    return [{f1: v1, f2: v2} for i, f1 in enumerate(fields) for f2 in fields[i + 1:]
            for v1 in _spread(by_field[f1]) for v2 in _spread(by_field[f2])]


def _spread(values: list) -> list:
    if len(values) <= PAIR_VALUES:
        return values
    last = len(values) - 1
    return [values[round(i * last / (PAIR_VALUES - 1))] for i in range(PAIR_VALUES)]


def _round(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, name: str,
           wanted: dict[tuple, list[dict]], progress) -> tuple[dict[tuple, list], str]:
    """Run every valid candidate of every row as one graph (shards under
    ``.partial-<name>``, so an interrupted tune resumes) -> ({key: evaluated candidates in
    the declared order}, the scheduler's description)."""
    out: dict[tuple, list] = {key: [] for key in wanted}
    plans, meta = [], []
    for key, changes in wanted.items():
        for order, change in enumerate(changes):
            plan, diags = gen.vary_many(catalog, key, change)
            entry = {"change": change, "field": " + ".join(change),
                     "value": next(iter(change.values())) if len(change) == 1
                     else list(change.values()), "order": order}
            if plan is None:
                out[key].append({**entry, "status": "invalid",
                                 "rule": diags[0].rule if diags else ""})
                continue
            meta.append((key, entry))
            plans.append(plan)
    if not plans:
        return out, ""
    cand = folder / f"{runs.PARTIAL_PREFIX}{name}"  # kept by an interrupted tune
    store = ShardStore(cand) if (cand / "run.json").is_file() else \
        ShardStore.create(folder, name, {name: len(plans)})
    expects = [shard_key(gen, p, a.n) for p in plans]
    todo = [i for i, p in enumerate(plans) if store.load(i, expects[i], gen) is None]
    with execute(gen, a.cluster(scratch=str(store.folder / "scratch")), plans, todo, a.n,
                 a.seeds_per_task, store, expects, progress, what="tune",
                 announce=announce) as ex:
        ex.close_soon()
        verdicts = [_verdict(gen, store, i) for i in range(len(plans))]
    for (key, entry), v in zip(meta, verdicts):
        out[key].append(_evaluated(gen, base.rows.get(key) or {}, entry, v))
    for key in out:
        out[key].sort(key=lambda c: c["order"])
    store.remove()
    return out, ex.scheduler


def _verdict(gen, store: ShardStore, pos: int) -> dict:
    got = collect(gen, store.rows([pos]), None)
    frame = gen.row_columns(got.rows.drop(ROW), None)
    results, _ = L.evaluate(frame, gen.lines, gen.key_fields)
    hard = [r for r in results if r["hard"] and r["applies"]]
    return {"holds": not L.hard_failures(results), "records_sha256": got.records_sha256,
            "row": frame.to_dicts()[0],
            "lines": {r["line"]: {"observed": r["observed"], "passed": r["passed"],
                                  **({"interval": r["interval"],
                                      "within_noise": r["within_noise"]}
                                     if "interval" in r else {})} for r in hard}}


def _evaluated(gen, base_row: dict, entry: dict, verdict: dict) -> dict:
    """A candidate's verdict with its cost to the player, its flags and its margin."""
    before = cost.figures(gen.tune_costs, base_row)
    after = cost.figures(gen.tune_costs, verdict["row"])
    ops = {ln.name: ln for ln in gen.lines}
    noise = [{"line": n, "observed": x["observed"], "interval": x["interval"],
              "threshold": ops[n].threshold,
              "n_needed": cost.n_to_clear(x["observed"], ops[n].threshold,
                                          above=ops[n].op in (">=", ">"))}
             for n, x in verdict["lines"].items() if x.get("within_noise")]
    return {**entry, "status": "ok", "holds": verdict["holds"],
            "margin": verdict["holds"] and not noise, "noise": noise,
            "lines": verdict["lines"], "records_sha256": verdict["records_sha256"],
            "figures": after, "cost": cost.cost(gen.tune_costs, before, after),
            "flags": cost.flags(gen.tune_costs, base_row, after) if verdict["holds"] else []}


def _decide(gen, catalog, key: tuple, names: list[str], tried: list[dict], base_row: dict,
            searched_pairs: bool) -> dict:
    """A failing row's class and proposal: the best-ranked acceptable candidate ("one
    field" or "several fields"), else "structural" with the rule behind it and the best
    each line reached."""
    valid = sorted((c for c in tried if c["status"] == "ok"), key=cost.rank_key)
    good = [c for c in valid if cost.acceptable(c)]
    flagged = [c for c in valid if c["holds"] and c["flags"]]
    pick = good[0] if good else None

    def literal(c: dict) -> str:
        return _summary(_edits(gen, catalog, key, c["change"]))

    row = {"key": list(key), "label": gen.label(key), "lines": names, "tried": tried,
           "figures": cost.figures(gen.tune_costs, base_row),
           "pairs_searched": searched_pairs,
           "best": {n: {**b, "at": literal(b.pop("candidate"))}
                    for n, b in _best(gen, tried, names).items()},
           "alternatives": [literal(c) for c in good[1:3]],
           "flagged": [{"change": literal(c), "flags": c["flags"], "figures": c["figures"]}
                       for c in flagged[:2]]}
    if pick is None:
        return {**row, "class": "structural", "change": None,
                "why": gen.structural(base_row, names)}
    fields = [{"field": f, "old": gen.current_value(catalog, key, f), "new": v}
              for f, v in pick["change"].items()]
    edits = _edits(gen, catalog, key, pick["change"])
    return {**row, "class": "one field" if len(fields) == 1 else "several fields",
            "change": {"fields": fields, "summary": _summary(edits), "edits": edits,
                       "margin": pick["margin"], "noise": pick["noise"],
                       "cost": pick["cost"], "figures": pick["figures"],
                       "evidence": {n: pick["lines"][n] for n in names
                                    if n in pick["lines"]}},
           "why": ""}


def _edits(gen, catalog, key: tuple, change: dict) -> list[list[str]]:
    """A candidate as the table file's lines [key, old, new], each key once (a pair of
    tilegen fields says the revision bump once)."""
    out, seen = [], set()
    for f, v in change.items():
        for e in gen.table_edits(catalog, key, f, gen.current_value(catalog, key, f), v):
            if e[0] not in seen:
                seen.add(e[0])
                out.append(list(e))
    return out


def _summary(edits: list[list[str]]) -> str:
    """The new lines, as the file will read: ``board_width = 24, board_height = 24``."""
    return ", ".join(f"{k} = {n}" for k, _, n in edits)


def _best(gen, tried: list[dict], lines: list[str]) -> dict:
    """Per failing line, the best observed value any candidate reached (the evidence for a
    row no change fixes): the largest for a line that needs >= or >, else the smallest
    (read from the line's declaration)."""
    ops = {ln.name: ln.op for ln in gen.lines}
    out = {}
    for name in lines:
        seen = [(c["lines"][name]["observed"], i) for i, c in enumerate(tried)
                if c.get("lines", {}).get(name, {}).get("observed") is not None]
        if seen:
            obs, i = max(seen) if ops.get(name) in (">=", ">") else min(seen)
            out[name] = {"observed": obs, "candidate": tried[i]}
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
    return tune_page.markdown(doc)


def apply_tune(tune_id: str, out: str, tables: str | None = None
               ) -> tuple[Path, list[str], str]:
    """Write a finished tune's proposed tables over the table root it tuned (or ``tables``,
    a root with the same content): only the files that differ, each atomically. Refused
    (InputError, nothing written) when the tune is unknown or unfinished, proposes nothing,
    or the root's files are no longer the ones tuned (edited since: nothing is lost)."""
    folder = Path(out) / "tune" / tune_id
    if not (folder / "tune.json").is_file():
        why = "it is unfinished" if (folder / MARKER).is_file() else "no finished tune there"
        raise InputError(f"--apply {tune_id}: {why} ({folder})")
    doc = runs.read_json(folder / "tune.json")
    if not doc.get("changes"):
        raise InputError(f"--apply {tune_id}: the tune proposes no change")
    gen = load_generator(doc.get("generator_ref") or doc.get("generator"))
    root = Path(tables or doc["tables"])
    now = gen.load(str(root))
    if now.content_hash != doc["table_hash"]:
        raise InputError(f"--apply {tune_id}: {root} changed since the tune (content "
                         f"{now.content_hash[:12]}, tuned {doc['table_hash'][:12]}); tune "
                         "again, or copy the lines by hand from patch.md")
    proposed = folder / "tables"
    changed = []
    for src in sorted(p for p in proposed.rglob("*") if p.is_file()):
        dst = root / src.relative_to(proposed)
        new = src.read_bytes()
        if not dst.is_file() or dst.read_bytes() != new:
            changed.append(str(src.relative_to(proposed)))
    gen.load(str(proposed))  # the proposal still loads (a defect if not: raise loudly)
    for name in changed:
        atomic.write_bytes(root / name, (proposed / name).read_bytes())
    again = hints.audit_command("audit", generator=doc.get("generator_ref"), out=out,
                                tables=None if str(now.root) == str(gen.default_root)
                                else now.root)
    return root, changed, again


def cmd_tune(args) -> int:
    from ..options import merge

    if args.apply:
        from ..options import DEFAULT_OUT

        out = args.out if args.out is not None else DEFAULT_OUT
        root, changed, again = apply_tune(args.apply, out, args.tables)
        print(f"tune {args.apply} applied to {root}: {', '.join(changed) or 'nothing to do'}")
        print(f"audit them again: {again}")
        return EXIT_OK
    opts = TuneOptions(merge(args), run=args.run, resume=args.resume_tune,
                       n_given=args.n is not None)
    result = run_tune(opts)
    print((result.folder / "patch.md").read_text(encoding="utf-8"))
    print(f"page: {result.folder / 'tune.html'}")
    print(f"tune: {result.folder}")
    return result.exit_code

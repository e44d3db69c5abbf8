"""``minegen tune``: for each row failing a hard line, the table change that fixes it at the
least cost to the player (orchestration only).

1. A baseline audit of the tables (or ``--run``, an audit already made of these tables).
2. The search (``candidates``): per failing row the design does not fix
   (``Tune.locked``), candidates one field at a time, then several fields together (pairs,
   or the generator's search space: ``explore``), joint changes along a level where a
   row's fix breaks the curve (``joint``), every proposal confirmed on fresh boards
   (``confirm``; issue 40), all with the audit's seeds, rows streamed to shards so an interrupted tune resumes (``--resume ID``);
   each row classed and, where a candidate is acceptable, the best-ranked one proposed.
3. A proposed table root (``Tune.patch_tables``), its own audit, and the diff of that audit
   against the baseline; patch.md and tune.html say it all (``reports.tune_page``).
4. ``--apply ID`` writes a finished tune's proposal over the tables it tuned (a symlinked
   file through to its target), refusing tables that changed since, a hard-linked file and
   a root it cannot write (decision 278).

Output ``<out>/tune/<id>/`` (a ``.tuning`` marker while it is incomplete): tables/,
baseline/ (unless --run), audit/, .partial-candidates/ and .partial-pairs/ (shards, removed
when done), tune.json, patch.md, tune.html, diff.md, diff.html and, for a generator with a
progression page (tilegen), funnel.html. Exit 0 when the proposed
tables pass their own audit, 1 when some hard line still fails there, 2 bad input, 3 the run
could not complete.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from boardcore import files
from boardcore.errors import InputError
from boardcore.output import describe_os_error

from ..analysis import lines as L
from ..analysis.compare import compare
from ..engine.interrupts import interruptible
from ..errors import EXIT_ASSERTION_FAILED, EXIT_OK, Interrupted, RunInterrupted
from .. import capabilities, hints
from ..generator import DEFAULT_GENERATOR, load_generator, require
from ..options import AuditOptions, parse_rows, usable_out
from ..reports import diff_page, tune_page
from ..reports.svg import SVG_NS
from ..store import atomic, fits, runs
from . import history, latest_tune
from .audit import announce, check_n, run_audit
from .candidates import search

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
        facts = files.read_json(folder / MARKER)
        recorded = facts.get("generator") or DEFAULT_GENERATOR
        if a.generator and a.generator != recorded:
            raise InputError(f"--resume {opts.resume}: that tune is of generator {recorded}, "
                             f"not {a.generator}")
        a = replace(a, tables=facts["tables"], n=facts["n"], generator=recorded)
        opts = replace(opts, run=facts.get("run"), audit=a)
    gen = load_generator(a.generator)
    require(gen, "tune")
    ref = a.generator or gen.name
    if opts.run:  # without --tables, the run's own tables (decision 274)
        path = runs.resolve_run(opts.run, a.out, gen.report_subdir)
        manifest = runs.read_json(path / "manifest.json")
        if a.tables is None:
            a = replace(a, tables=fits.run_tables(manifest, gen, f"--run {opts.run}"))
    catalog = gen.load(a.tables)
    if opts.run:  # the run must be of these tables, this generator and this N
        if not opts.n_given and isinstance(manifest.get("n"), int):
            a = replace(a, n=manifest["n"])
        fits.check_fits(manifest, gen, catalog, a.n, f"--run {opts.run}")
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
            doc = search(gen, catalog, a, base, folder, progress)
            doc.update(_propose(gen, catalog, a, base, doc, folder, progress))
    except Interrupted as e:
        raise RunInterrupted(e.signum, f"interrupted ({e}); finished candidates are kept; "
                             "resume with: " + hints.audit_command(
                                 "tune", "--resume", folder.name, generator=ref, out=a.out)
                             ) from None
    doc.update(tune_id=folder.name, created_utc=created.isoformat(timespec="seconds"),
               generator=gen.name, generator_ref=ref, rules_doc=gen.rules_doc,
               table_file=gen.table_file, jargon=[list(j) for j in gen.jargon],
               tables=str(catalog.root), table_hash=catalog.content_hash, n=a.n,
               apply_command=hints.audit_command("tune", "--apply", folder.name,
                                                 generator=ref, out=a.out),
               wall_s=round(time.perf_counter() - t0, 3))
    progression = capabilities.progression_page(gen, Path(doc["baseline_run"]),
                                                Path(doc["proposed_run"]), folder.name)
    if progression is not None:  # players through the rows, now and proposed (decision 260)
        atomic.write_text(folder / "progression.html", progression)
        doc["progression_page"] = "progression.html"
    atomic.write_text(folder / "tune.json", runs.to_json(doc))
    atomic.write_text(folder / "patch.md", tune_page.markdown(doc))
    atomic.write_text(folder / "tune.html", tune_page.html(doc, str(folder)))
    (folder / MARKER).unlink()
    latest_tune.after_tune(doc, a.out, opts.run, announce)  # the run's report cites it
    history.refresh(a.out, announce)
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
            replace(opts.audit, rows=(), out=str(folder / "baseline")), progress, gen,
            index=False, site=opts.audit.out).run_dir
    return runs.load_run(path, gen.key_fields)


def _propose(gen, catalog, a: AuditOptions, base: runs.Run, doc: dict, folder: Path,
             progress) -> dict:
    changes = doc.pop("_changes")
    tables = folder / "tables"
    if tables.exists():
        import shutil

        shutil.rmtree(tables)
    gen.patch_tables(catalog, tables, changes)
    proposed = run_audit(replace(a, tables=str(tables), rows=(), out=str(folder / "audit")),
                         progress, gen, index=False, site=a.out)
    after = runs.load_run(proposed.run_dir, gen.key_fields)
    _shipped(gen, doc, base, after, catalog.root, tables, folder)
    d = compare(gen, base, after)
    atomic.write_text(folder / "diff.md", diff_page.markdown(d))
    atomic.write_text(folder / "diff.html", diff_page.html(
        d, str(folder), str(Path(a.out) / history.INDEX)))
    code = EXIT_OK if proposed.exit_code == EXIT_OK else EXIT_ASSERTION_FAILED
    return {"baseline_run": str(base.path), "proposed_run": str(proposed.run_dir),
            "proposed_exit_code": proposed.exit_code, "exit_code": code,
            "still_failing": [f"{r['line']} on {gen.label(tuple(r[k] for k in gen.key_fields))}"
                              for r in L.hard_failures(proposed.results)]}


def _shipped(gen, doc: dict, base: runs.Run, after: runs.Run, root_now, root_after,
             folder: Path) -> None:
    """Each proposal that changes the board the game ships (a new revision: a new seed)
    says so, with the shipped board's figures now (the baseline) and after (the proposed
    tables' own audit, the row of the same lineage), both boards' pictures and play pages
    written under ``<tune>/shipped/`` (linked relatively, issue 30 item 3), and the
    commands, with their table roots, that write the same play pages again."""
    import shlex

    if not isinstance(gen, capabilities.Drawings):  # a board it cannot draw: nothing to show
        return
    later = {capabilities.lineage(gen, k): k for k in after.rows}
    catalogs = {}
    for r in doc["rows"]:
        key = tuple(r["key"])
        new_key = later.get(capabilities.lineage(gen, key))
        now = gen.shipped(base.rows.get(key) or {})
        then = gen.shipped(after.rows.get(new_key) or {}) if new_key else None
        if not (r.get("change") and now and then and now["seed"] != then["seed"]):
            continue
        now["play"] += f" --tables {shlex.quote(str(root_now))}"
        then["play"] += f" --tables {shlex.quote(str(root_after))}"
        files = {}
        for when, root, k in (("now", root_now, key), ("after", root_after, new_key)):
            if root not in catalogs:
                catalogs[root] = gen.load(str(root))
            (plan,) = gen.plans(catalogs[root], [k])
            stem = f"shipped/{_slug(gen.label(key))}-{when}"
            (folder / "shipped").mkdir(exist_ok=True)
            svg = gen.exhibit(plan, -1)  # inline markup; a file shown by <img> needs its
            if "xmlns=" not in svg.split(">", 1)[0]:  # namespace
                svg = svg.replace("<svg ", f'<svg xmlns="{SVG_NS}" ', 1)
            atomic.write_text(folder / f"{stem}.svg", svg)
            page = gen.play_page(plan, -1)
            if page:
                atomic.write_text(folder / f"{stem}.html", page)
            files[when] = {"picture": f"{stem}.svg", "page": f"{stem}.html" if page else None}
        r["shipped"] = {"before": now, "after": then, "files": files}


def _slug(label: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in label).strip("-")


def apply_tune(tune_id: str, out: str, tables: str | None = None, only: str | None = None
               ) -> tuple[Path, list[str], str]:
    """Write a finished tune's proposed tables over the table root it tuned (or ``tables``,
    a root with the same content): only the files that differ, each atomically; ``only``
    (rows as ``--rows`` takes them): just those rows' proposals. Refused (InputError,
    nothing written) when the tune is unknown or unfinished, proposes nothing (for those
    rows), the root's files are no longer the ones tuned (edited since: nothing is
    lost), a changed file has other names (hard links) or cannot be written (``_targets``)."""
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
    if only is None:
        return _write_over(gen, doc, root, folder / "tables", now, out, tune_id)
    keys = {tuple(gen.parse_key(t)) for t in parse_rows(only)}
    picked = {tuple(r["key"]): {f["field"]: f["new"] for f in r["change"]["fields"]}
              for r in [*doc["rows"], *({"key": j["key"], "change": {"fields": [
                  {"field": f, "new": v} for f, v in j["fields"].items()]}}
                  for j in doc.get("joint") or [])]
              if r.get("change") and tuple(r["key"]) in keys}
    missing = sorted(keys - set(picked))
    if missing:
        raise InputError(f"--only {only}: the tune proposes nothing for "
                         + ", ".join(gen.label(k) for k in missing))
    labels = {gen.label(k) for k in keys}
    for r in doc["rows"]:  # a joint change is applied whole, or its level breaks E
        group = [r["label"], *r.get("joint_group", [])]
        if r["label"] in labels and not labels.issuperset(group):
            raise InputError(f"--only {only}: {r['label']} is one joint change with "
                             f"{', '.join(r['joint_group'])}; name every row of it")
    with tempfile.TemporaryDirectory(prefix="apply-", dir=folder) as scratch:
        proposed = Path(scratch) / "tables"  # a proposed root of only the rows asked for
        gen.patch_tables(now, proposed, picked)
        return _write_over(gen, doc, root, proposed, now, out, tune_id)


def _targets(tune_id: str, root: Path, names) -> dict[str, Path]:
    """Where each changed file of ``root`` is written (decision 278): the file itself or,
    for a symbolic link, the file it leads to (written atomically in that file's folder:
    the designer's real table is updated, the link stays). InputError, nothing written,
    for a file with other names (hard links: an atomic replace would leave them with the
    old rows) or a file or folder the system will not write (a read-only root)."""
    out = {}
    for name in names:
        path = root / name
        real = path.resolve()
        links = real.stat().st_nlink
        if links > 1:
            raise InputError(f"--apply {tune_id}: {path} has {links} names (hard links); a "
                             "new file in its place would leave the others with the old "
                             "rows: nothing written; make it a file of its own (or a "
                             "symbolic link) and apply again")
        for place in (real.parent, real):
            if not os.access(place, os.W_OK):
                why = errno.EROFS if os.statvfs(place).f_flag & os.ST_RDONLY else errno.EACCES
                raise InputError(f"--apply {tune_id}: cannot write {place} ("
                                 f"{describe_os_error(OSError(why, os.strerror(why)))}): "
                                 "nothing written")
        out[name] = real
    return out


def _write(target: Path, data: bytes) -> None:
    """``data`` over ``target`` atomically, the file's permission bits kept."""
    files.write(target, data, mode=stat.S_IMODE(target.stat().st_mode))


def _write_over(gen, doc: dict, root: Path, proposed: Path, now, out: str, tune_id: str
                ) -> tuple[Path, list[str], str]:
    changed = {}
    for src in sorted(p for p in proposed.rglob("*") if p.is_file()):
        name, new = str(src.relative_to(proposed)), files.read_bytes(src)
        dst = root / name
        # a proposal edits the root's own files: a file the root lacks (a subfolder the
        # tuned root had and this copy has not) is never written into it
        if dst.is_file() and files.read_bytes(dst, follow=True) != new:
            changed[name] = new
    gen.load(str(proposed))  # the proposal still loads (a defect if not: raise loudly)
    targets = _targets(tune_id, root, changed)
    for name, new in changed.items():
        try:
            _write(targets[name], new)
        except OSError as e:  # said before any write when it can be (``_targets``)
            raise InputError(f"--apply {tune_id}: cannot write {targets[name]} "
                             f"({describe_os_error(e)})") from None
    again = hints.audit_command("audit", generator=doc.get("generator_ref"), out=out,
                                tables=None if str(now.root) == str(gen.default_root)
                                else now.root)
    return root, [f"{n} (through the link to {targets[n]})" if (root / n).is_symlink() else n
                  for n in changed], again


def cmd_tune(args) -> int:
    from ..options import merge

    if args.only is not None and not args.apply:
        raise InputError("--only goes with --apply ID: the rows whose proposals to apply")
    if args.apply:
        from ..options import DEFAULT_OUT

        out = args.out if args.out is not None else DEFAULT_OUT
        root, changed, again = apply_tune(args.apply, out, args.tables, args.only)
        print(f"tune {args.apply} applied to {root}: {', '.join(changed) or 'nothing to do'}")
        print(f"audit them again: {again}")
        return EXIT_OK
    opts = TuneOptions(merge(args), run=args.run, resume=args.resume_tune,
                       n_given=args.n is not None)
    result = run_tune(opts)
    print(files.read_text(result.folder / "patch.md"))
    print(f"page: {result.folder / 'tune.html'}")
    print(f"tune: {result.folder}")
    return result.exit_code

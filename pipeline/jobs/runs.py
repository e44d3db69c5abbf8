"""``minegen runs``: the runs under an output folder, finished and partial; removes partial
ones on request (never one a live process still owns).

A partial run is an interrupted or failed audit's ``.partial-<run_id>`` folder: its
finished rows, kept for ``minegen audit --resume <run_id>``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from boardcore import files
from boardcore.errors import InputError

from .. import hints
from ..store import atomic
from ..store.runs import LATEST, PARTIAL_PREFIX, VERSION_DIR, latest, latest_problem
from ..store.shards import ShardStore


@dataclass(frozen=True)
class Entry:
    run_id: str
    state: str  # "finished", "partial", "running" (a partial run a process holds)
    path: Path
    generator: str
    created: str
    n: object
    rows: int
    detail: str  # finished: exit code (and LATEST); partial: rows done / rows
    ref: str = ""  # how the run loaded its generator (a name or module:attribute)
    # what the folder says of itself: a finished run's manifest, a partial run's run.json
    facts: dict = field(default_factory=dict, compare=False, repr=False)


def json_or_empty(path: Path) -> dict:
    """A JSON object read from ``path``; {} when it is missing, unreadable or not one (a
    listing never fails on one bad folder)."""
    try:  # a regular file, bounded, never through a link: a FIFO never blocks the listing
        doc = files.read_json(path)
        return doc if isinstance(doc, dict) else {}
    except (OSError, ValueError, files.Refused):
        return {}


def version_dirs(out: str) -> list[Path]:
    root = Path(out)
    return sorted(d for d in [*root.glob("metric_v*"), *root.glob("*/metric_v*")]
                  if VERSION_DIR.match(d.name) and d.is_dir())


def damaged_latest(out: str) -> list[str]:
    """One line for each LATEST under ``out`` that names no finished run (it names a run
    that is not there, cannot be read, holds no run id, or is no regular file)."""
    return [f"{vdir / LATEST} {why}: no run there is LATEST (the runs are listed; the "
            "next full audit of its tables rewrites it)"
            for vdir in version_dirs(out) if (why := latest_problem(vdir))]


def list_runs(out: str) -> list[Entry]:
    entries = []
    for vdir in version_dirs(out):
        newest = latest(vdir)
        for d in sorted(p for p in vdir.iterdir() if p.is_dir()):
            if d.name.startswith(PARTIAL_PREFIX):
                facts = json_or_empty(d / "run.json")
                store = ShardStore(d)
                try:
                    store.lock()
                    store.unlock()
                    state = "partial"
                except files.Refused:  # its lock is not a file, or cannot be opened
                    state = "partial"
                except InputError:
                    state = "running"
                rows = len(facts.get("rows") or [])
                entries.append(Entry(store.run_id, state, d, facts.get("generator", "?"),
                                     facts.get("created_utc", "?"), facts.get("n"), rows,
                                     f"{store.done()} of {rows} rows done",
                                     facts.get("generator_ref") or facts.get("generator", ""),
                                     facts))
            elif (d / "manifest.json").is_file():
                m = json_or_empty(d / "manifest.json")
                detail = f"exit {m.get('exit_code')}" + (" (LATEST)" if d.name == newest
                                                          else "")
                entries.append(Entry(d.name, "finished", d, m.get("generator", "minegen"),
                                     m.get("created_utc", "?"), m.get("n"),
                                     len(m.get("rows") or []), detail, facts=m))
    return sorted(entries, key=lambda e: (e.created, e.run_id))


def remove_partial(out: str, which: list[str]) -> list[Entry]:
    """Remove the named partial runs (``all``: every partial run not held by a process)."""
    partial = {e.run_id: e for e in list_runs(out) if e.state in ("partial", "running")}
    names = sorted(partial) if which == ["all"] else which
    unknown = [n for n in names if n not in partial]
    if unknown:
        raise InputError(f"no partial run {', '.join(unknown)} under {out} (see "
                           "`minegen runs`)")
    busy = [n for n in names if partial[n].state == "running"]
    if busy and which != ["all"]:
        raise InputError(f"run(s) {', '.join(busy)} are running (a process holds them); "
                           "stop that process first")
    removed = []
    for n in names:
        if partial[n].state == "running":
            continue
        store = ShardStore(partial[n].path)
        store.lock()  # taken just now by nobody else: safe to remove
        store.remove()
        atomic.remove_stale(partial[n].path.parent / n)  # its half-written final folder
        removed.append(partial[n])
    return removed


def cmd_runs(args) -> int:
    if args.remove_partial:
        removed = remove_partial(args.out, args.remove_partial)
        for e in removed:
            print(f"removed partial run {e.run_id} ({e.detail})")
        kept = [e for e in list_runs(args.out) if e.state == "running"]
        for e in kept if args.remove_partial == ["all"] else []:
            print(f"kept partial run {e.run_id}: a process holds it (it is running)")
        if not removed and not kept:
            print(f"no partial run to remove under {args.out}")
        return 0
    entries = list_runs(args.out)
    for line in damaged_latest(args.out):  # said, and the listing goes on
        print(f"minegen runs: {line}", file=sys.stderr)
    if not entries:
        print(f"no runs under {args.out}")
        return 0
    print(f"{'state':<9} {'run id':<40} {'generator':<10} {'N':>5} {'rows':>5}  detail")
    for e in entries:
        print(f"{e.state:<9} {e.run_id:<40} {e.generator:<10} {e.n!s:>5} {e.rows:>5}  "
              f"{e.detail}")
    partial = [e for e in entries if e.state == "partial"]
    if partial:
        last = partial[-1]
        print(f"\nresume one with: {hints.resume_audit(last.run_id, last.ref, args.out)}; "
              f"remove it with: "
              f"{hints.audit_command('runs', '--remove-partial', last.run_id, out=args.out)}")
    return 0


"""``<out>/index.html``: every run under an output folder, for the nightly reader.

What it lists (read from the folders, never from memory, so any job rewrites it whole):
finished audit runs of every generator (verdict, N, table hash, the failing lines, links to
the report), the tunes, sweeps and diffs made there (each linked, a tune with the run it
started from), and per table lineage (a generator's full-table runs of one table root) a
trend of the last ``TREND_RUNS`` runs: per row, each run's failing hard lines and what
flipped since the run before. Written atomically after every audit, tune, sweep and diff,
each time with ``<out>/docs/`` (the repository's docs the pages link, ``reports.docsite``);
a folder it cannot read is listed as unreadable, never fatal.

A finished run's entry (its facts and its failing lines, keyed by row, before any label) is
kept in its folder, ``index_entry.json``, written atomically the first time an index reads
the run (right after the run, by the audit's own refresh): a year of nightly runs is one
small file a run, not every manifest and assertions file again (decision 286). The entry is
used only when it has the shape written here, names its own folder's run id and was made
from the manifest and assertions the folder holds now (their size and modification time);
anything else is rebuilt from the run, and a folder that cannot take the file (read-only)
is read whole each time.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from boardcore import files
from boardcore.errors import InputError

from ..generator import load_generator
from ..reports import docsite, index_page, tune_counts
from ..store import atomic
from ..store.runs import PARTIAL_PREFIX, VERSION_DIR
from .runs import json_or_empty

TREND_RUNS = 7  # the runs of one lineage a trend shows (a week of nightly runs)
INDEX = "index.html"
ENTRY = "index_entry.json"  # a finished run's cached entry, in its folder
ENTRY_FORMAT = 1  # raised when the entry's fields change: older files are rebuilt
SOURCES = ("manifest.json", "assertions.json")  # what an entry is made from


def _sources(run: str) -> list | None:
    """[size, mtime_ns] of each of ``SOURCES`` (None for one absent); None when the
    manifest is not a regular file (the folder holds no finished run)."""
    got = []
    for name in SOURCES:
        try:
            st = os.stat(os.path.join(run, name))
            got.append([st.st_size, st.st_mtime_ns] if stat.S_ISREG(st.st_mode) else None)
        except OSError:
            got.append(None)
    return got if got[0] is not None else None


def entry_of(run: Path, sources: list | None) -> dict:
    """A finished run's index entry, read from its manifest and assertions: its facts,
    the row key of every applicable hard line (each row once, in order), and each failing
    (key, line, observed)."""
    m = json_or_empty(run / "manifest.json")
    res = json_or_empty(run / "assertions.json")
    keys = tuple(m.get("key_fields") or ())
    results = res.get("results") if isinstance(res.get("results"), list) else []
    rows, seen, fails = [], set(), []
    for r in results:
        if not isinstance(r, dict) or not r.get("hard") or not r.get("applies"):
            continue
        key = [r.get(k) for k in keys]
        if repr(key) not in seen:
            seen.add(repr(key))
            rows.append(key)
        if r.get("passed") is False:
            fails.append([key, str(r.get("line")), r.get("observed")])
    return {"format": ENTRY_FORMAT, "run_id": run.name, "sources": sources,
            "generator": m.get("generator", "minegen"),
            "generator_ref": m.get("generator_ref") or m.get("generator") or "minegen",
            "created": m.get("created_utc", "?"), "n": m.get("n"),
            "rows": len(m.get("rows") or []), "exit_code": m.get("exit_code"),
            "table_root": m.get("table_root", "?"),
            "table_hash": str(m.get("table_hash", ""))[:12],
            "full_table": bool(m.get("full_table", True)),
            "calibrated": bool(m.get("calibration")), "keys": rows, "fails": fails}


_SHAPE = {"format": int, "run_id": str, "sources": list, "generator": str,
          "generator_ref": str, "created": str, "rows": int, "table_root": str,
          "table_hash": str, "full_table": bool, "calibrated": bool, "keys": list,
          "fails": list, "n": object, "exit_code": (int, type(None))}


def _valid(doc: dict, run: Path, sources: list) -> bool:
    """The cached entry has the shape ``entry_of`` writes, is this folder's run and was
    made from the manifest and assertions the folder holds now."""
    return doc.keys() == _SHAPE.keys() and doc["format"] == ENTRY_FORMAT and \
        doc["run_id"] == run.name and doc["sources"] == sources and \
        all(isinstance(doc[k], t) and (t is not int or type(doc[k]) is int)
            for k, t in _SHAPE.items()) and \
        all(isinstance(k, list) for k in doc["keys"]) and \
        all(isinstance(f, list) and len(f) == 3 and isinstance(f[0], list)
            and isinstance(f[1], str) for f in doc["fails"])


def cached_entry(run: Path) -> dict | None:
    """The run's index entry: its ``index_entry.json`` when valid, else built from the run
    and written there (atomically; a folder that will not take it is read whole next time
    too). None when ``run`` holds no finished run."""
    sources = _sources(str(run))
    if sources is None:
        return None
    doc = json_or_empty(run / ENTRY)
    if doc and _valid(doc, run, sources):
        return doc
    doc = entry_of(run, sources)
    try:
        atomic.write_text(run / ENTRY, json.dumps(doc, sort_keys=True))
    except (OSError, ValueError, InputError):  # read-only, a refused name: not kept
        pass
    return doc


def finished_runs(out: Path) -> list[Path]:
    """The folders under ``out`` that may hold a finished run (every generator and metric
    version, partial runs left out), in the order ``minegen runs`` walks them."""
    vdirs = sorted(d for d in [*out.glob("metric_v*"), *out.glob("*/metric_v*")]
                   if VERSION_DIR.match(d.name) and d.is_dir())
    got = []
    for v in vdirs:
        with os.scandir(v) as it:
            got += [v / n for n in sorted(e.name for e in it if e.is_dir() and
                                          not e.name.startswith(PARTIAL_PREFIX))]
    return got


def _run(e: dict, run: Path, where: Path, out: Path, labels) -> dict:
    """What the index shows of one run (its folder ``where``, resolved), from its entry."""
    facts = {"generator_ref": e["generator_ref"]}
    fails: dict[str, dict[str, object]] = {}
    rows: dict[str, list] = {}
    for key in e["keys"]:
        rows[labels(facts, tuple(key))] = key
    for key, line, observed in e["fails"]:
        fails.setdefault(labels(facts, tuple(key)), {})[line] = observed
    return {"run_id": e["run_id"], "generator": e["generator"],
            "created": e["created"], "n": e["n"], "rows": e["rows"],
            "exit_code": e["exit_code"], "table_root": e["table_root"],
            "table_hash": e["table_hash"], "full_table": e["full_table"],
            "calibrated": e["calibrated"],
            "report": str((run / "report.html").relative_to(out)),
            "path": str(where), "fails": fails,
            "row_keys": {label: list(key) for label, key in rows.items()}}


def audits(root: Path, labels, cached: bool = True) -> list[dict]:
    """Every finished audit under ``root``, oldest first; ``cached=False`` reads every run
    whole (what the cached entries are held equal to)."""
    got, folders = [], {}
    for run in finished_runs(root):
        sources = _sources(str(run)) if not cached else None
        e = cached_entry(run) if cached else entry_of(run, sources) if sources else None
        if e is None:
            continue
        if run.parent not in folders:  # resolved once per version folder
            folders[run.parent] = run.parent.resolve()
        where = run.resolve() if run.is_symlink() else folders[run.parent] / run.name
        got.append((e["created"], e["run_id"], run, where, e))
    return [_run(e, run, where, root, labels)
            for _, _, run, where, e in sorted(got, key=lambda g: g[:2])]


class _Generators:
    """Each run's generator, loaded once, for its labels and its lines' words; a generator
    that no longer loads (a test's module gone) labels keys plainly."""

    def __init__(self):
        self.known: dict[str, object] = {}
        self.labels: dict[tuple, str] = {}  # (generator ref, key) -> label

    def get(self, manifest: dict):
        ref = manifest.get("generator_ref") or manifest.get("generator") or "minegen"
        if ref not in self.known:
            try:
                self.known[ref] = load_generator(ref)
            except Exception:  # noqa: BLE001 - any failure to import: plain labels
                self.known[ref] = None
        return self.known[ref]

    def __call__(self, manifest: dict, key: tuple) -> str:
        memo = (manifest.get("generator_ref"), manifest.get("generator"), key)
        if memo not in self.labels:
            gen = self.get(manifest)
            self.labels[memo] = gen.label(key) if gen is not None else \
                "(" + ", ".join(str(v) for v in key) + ")"
        return self.labels[memo]

    def lines(self) -> dict[str, list[tuple[str, str, str]]]:
        """Per generator name: (code, hard or advisory, meaning) of every line."""
        return {g.name: [(ln.name, "hard" if ln.hard else "advisory", ln.meaning)
                         for ln in g.lines] for g in self.known.values() if g is not None}


def gather(out: str | Path, cached: bool = True) -> dict:
    """Everything the index shows, from the folders under ``out`` (each finished run from
    its cached entry unless ``cached`` is False)."""
    root = Path(out)
    gens = _Generators()
    runs = audits(root, gens, cached)
    tunes = []
    for f in sorted(root.glob("tune/*/tune.json")):
        t = json_or_empty(f)
        tunes.append({"id": f.parent.name, "generator": t.get("generator", "?"),
                      "page": str(f.parent.relative_to(root) / "tune.html"),
                      "baseline": str(Path(t.get("baseline_run", "")).resolve()),
                      "proposed_exit_code": t.get("proposed_exit_code"),
                      # the tune page's own counts (locked rows fail too)
                      "rows": tune_counts.counts(t)["failing"],
                      "fixed": tune_counts.counts(t)["proposals"]})
    sweeps = []
    for f in sorted(root.glob("sweeps/*/sweep.json")):
        s = json_or_empty(f)
        inp = s.get("inputs") or {}
        sweeps.append({"id": f.parent.name, "generator": s.get("generator", "?"),
                       "page": str(f.parent.relative_to(root) / "sweep.html"),
                       "row": inp.get("row_label", "?"), "vary": inp.get("vary", "?"),
                       "boundary": (s.get("boundary") or {}).get("text", "")})
    diffs = [{"id": f.stem, "page": str(f.relative_to(root))}
             for f in sorted(root.glob("diffs/*.html"))]
    recs = []
    for f in sorted(root.glob("*/reconcile/*/reconcile.json")):
        r = json_or_empty(f)
        recs.append({"id": f.parent.name, "generator": f.parent.parent.parent.name,
                     "page": str(f.parent.relative_to(root) / "report.html"),
                     "sessions": r.get("sessions", "?"), "synthetic": r.get("synthetic"),
                     "flags": len(r.get("abnormal_seeds") or []),
                     "run": Path(str(r.get("run") or "?")).name,
                     "off": sum(bool(x.get("outside")) for x in r.get("rows") or []),
                     "proposals": sum("proposal" in x for x in r.get("rows") or [])})
    return {"audits": runs, "tunes": tunes, "sweeps": sweeps, "diffs": diffs,
            "reconciliations": recs,
            "lineages": _lineages(runs), "trend_runs": TREND_RUNS, "lines": gens.lines()}


def _lineages(audits: list[dict]) -> list[dict]:
    """Per (generator, table root): its last TREND_RUNS full-table runs, oldest first."""
    groups: dict[tuple, list[dict]] = {}
    for a in audits:
        if a["full_table"]:
            groups.setdefault((a["generator"], a["table_root"]), []).append(a)
    return [{"generator": g, "table_root": t, "runs": runs[-TREND_RUNS:]}
            for (g, t), runs in sorted(groups.items())]


def write_index(out: str | Path) -> Path:
    """Rewrite ``<out>/index.html`` from what is on disk now."""
    path = Path(out) / INDEX
    atomic.write_text(path, index_page.html(gather(out)))
    return path


def refresh(out: str | Path, announce=None) -> Path | None:
    """``write_index`` and the docs the pages cite (``docsite.write``: rendered once per
    output folder), never fatal to the job that calls it: a run already written stays good
    when the index cannot be (said once, on stderr)."""
    try:
        docsite.write(out)
        return write_index(out)
    except OSError as e:
        if announce is not None:
            announce(f"{Path(out) / INDEX} not updated ({e.strerror or e})")
        return None
    except files.Refused as e:  # a link, FIFO or device where a page goes: left as it is
        if announce is not None:
            announce(f"{Path(out) / INDEX} not updated ({e})")
        return None

"""``<out>/index.html``: every run under an output folder, for the nightly reader.

What it lists (read from the folders, never from memory, so any job rewrites it whole):
finished audit runs of every generator (verdict, N, table hash, the failing lines, links to
the report), the tunes, sweeps and diffs made there (each linked, a tune with the run it
started from), and per table lineage (a generator's full-table runs of one table root) a
trend of the last ``TREND_RUNS`` runs: per row, each run's failing hard lines and what
flipped since the run before. Written atomically after every audit, tune, sweep and diff,
each time with ``<out>/docs/`` (the repository's docs the pages link, ``reports.docsite``);
a folder it cannot read is listed as unreadable, never fatal.
"""

from __future__ import annotations

from pathlib import Path

from ..generator import load_generator
from ..reports import docsite, index_page, tune_counts
from ..store import atomic
from .runs import json_or_empty, list_runs

TREND_RUNS = 7  # the runs of one lineage a trend shows (a week of nightly runs)
INDEX = "index.html"


def _run(entry, out: Path, labels) -> dict:
    m = entry.facts  # the manifest, as the listing read it
    res = json_or_empty(entry.path / "assertions.json")
    keys = tuple(m.get("key_fields") or ())
    results = res.get("results") if isinstance(res.get("results"), list) else []
    fails: dict[str, dict[str, object]] = {}
    rows: dict[str, tuple] = {}
    for r in results:
        if not isinstance(r, dict) or not r.get("hard") or not r.get("applies"):
            continue
        key = tuple(r.get(k) for k in keys)
        label = labels(m, key)
        rows[label] = key
        if r.get("passed") is False:
            fails.setdefault(label, {})[str(r.get("line"))] = r.get("observed")
    return {"run_id": entry.run_id, "generator": entry.generator,
            "created": entry.created, "n": entry.n, "rows": entry.rows,
            "exit_code": m.get("exit_code"), "table_root": m.get("table_root", "?"),
            "table_hash": str(m.get("table_hash", ""))[:12],
            "full_table": bool(m.get("full_table", True)),
            "calibrated": bool(m.get("calibration")),
            "report": str((entry.path / "report.html").relative_to(out)),
            "path": str(entry.path.resolve()), "fails": fails,
            "row_keys": {label: list(key) for label, key in rows.items()}}


class _Generators:
    """Each run's generator, loaded once, for its labels and its lines' words; a generator
    that no longer loads (a test's module gone) labels keys plainly."""

    def __init__(self):
        self.known: dict[str, object] = {}

    def get(self, manifest: dict):
        ref = manifest.get("generator_ref") or manifest.get("generator") or "minegen"
        if ref not in self.known:
            try:
                self.known[ref] = load_generator(ref)
            except Exception:  # noqa: BLE001 - any failure to import: plain labels
                self.known[ref] = None
        return self.known[ref]

    def __call__(self, manifest: dict, key: tuple) -> str:
        gen = self.get(manifest)
        return gen.label(key) if gen is not None else \
            "(" + ", ".join(str(v) for v in key) + ")"

    def lines(self) -> dict[str, list[tuple[str, str, str]]]:
        """Per generator name: (code, hard or advisory, meaning) of every line."""
        return {g.name: [(ln.name, "hard" if ln.hard else "advisory", ln.meaning)
                         for ln in g.lines] for g in self.known.values() if g is not None}


def gather(out: str | Path) -> dict:
    """Everything the index shows, from the folders under ``out``."""
    root = Path(out)
    gens = _Generators()
    audits = [_run(e, root, gens) for e in list_runs(str(root)) if e.state == "finished"]
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
    return {"audits": audits, "tunes": tunes, "sweeps": sweeps, "diffs": diffs,
            "reconciliations": recs,
            "lineages": _lineages(audits), "trend_runs": TREND_RUNS, "lines": gens.lines()}


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

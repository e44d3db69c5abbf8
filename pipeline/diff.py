"""``minegen diff RUN_A RUN_B``: row-by-row comparison of two audit runs (SPEC §9).

In: two run folders (``<out>/metric_v<version>/<run_id>/`` as ``pipeline.report`` writes
them) or run ids looked up under ``<out>/metric_v*/``. Read from each: ``manifest.json``,
``aggregates.parquet`` (the per-row frame, ``assertions.assertion_frame``) and
``assertions.json`` (``assertions.evaluate`` results). Nothing else is read.

Out: a ``RunDiff``: the rows of both runs outer-joined on (L, D), so a row present in one
run only is kept and marked, never dropped; per row the snapshot fields, N, inferability
and inferability_core p10/p50/p90, retry rate, exit counts and every assertion line's
status (a status change is a flip). A row is changed when any compared value differs;
stored floats are compared exactly (same seeds + same row => byte-identical values).
``cmd_diff`` prints the Markdown and writes one HTML page to
``<out>/diffs/<runA>__vs__<runB>.html`` (the only file it writes).

Runs of different metric_version measure different things: ``compare`` refuses them
(MinegenError, exit 2) unless ``allow_cross_version``, and then every rendering carries a
loud banner (SPEC §9: never compared silently).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from minegen.errors import MinegenError

from .aggregate import ROW_KEY
from .assertions import LINES

# Row snapshot: what the table row said (R1-floor row, board, targets, fog), per row.
SNAPSHOT = (("row_level", "table row level"), ("row_depth", "table row depth"),
            ("width", "width"), ("height", "height"), ("mine_density", "density"),
            ("inferability_target", "target"), ("solver_rules", "solver rules"),
            ("fog_regions_requested", "fog regions"), ("fog_target_ratio", "fog ratio"),
            ("pool_empty", "fog pool empty"), ("planned_mines", "planned mines"))
BOARDS = "boards"  # N of the row
METRICS = (("inferability_p10", "inferability p10"), ("inferability_p50", "inferability p50"),
           ("inferability_p90", "inferability p90"), ("inferability_core_p10", "core p10"),
           ("inferability_core_p50", "core p50"), ("inferability_core_p90", "core p90"),
           ("retry_rate", "retry rate"))
EXITS = (("exit_met", "met"), ("exit_accept_best", "accept_best"),
         ("exit_accept_least_bad", "accept_least_bad"))
# Columns shown by name, or through an assertion line's observed value; any other aggregate
# column that differs is listed as "other" (and makes the row changed).
_SHOWN = ({c for c, _ in SNAPSHOT + METRICS + EXITS} | {BOARDS, *ROW_KEY}
          | {ln.column for ln in LINES})
# Statuses of one assertion line on one row, as the audit report reads them.
PASS, FAIL, WARN, NA, ABSENT = "pass", "fail", "warn", "n/a", "absent"
ONLY_A, ONLY_B, BOTH = "only in A", "only in B", "both"
_VERSION_DIR = re.compile(r"^metric_v(\d+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Run:
    """One audit run as read back from its folder."""

    path: Path
    manifest: dict
    rows: dict[tuple[int, int], dict]  # (L, D) -> aggregates row
    results: dict[tuple[int, int], dict[str, dict]]  # (L, D) -> line -> result dict
    notes: tuple[str, ...] = ()  # inconsistencies inside the folder, said loudly

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or self.path.name)

    @property
    def metric_version(self):
        return self.manifest.get("metric_version")


@dataclass(frozen=True)
class Change:
    """One compared value that differs: ``column`` of the aggregates, A -> B."""

    column: str
    label: str
    a: object
    b: object


@dataclass(frozen=True)
class LineDiff:
    """One assertion line on one row in both runs (status: pass/fail/warn/n/a/absent)."""

    line: str
    hard: bool
    status_a: str
    status_b: str
    observed_a: object
    observed_b: object

    @property
    def flipped(self) -> bool:
        return self.status_a != self.status_b

    @property
    def changed(self) -> bool:
        return self.flipped or not same(self.observed_a, self.observed_b)


@dataclass(frozen=True)
class RowDiff:
    key: tuple[int, int]
    presence: str  # BOTH, ONLY_A, ONLY_B
    a: dict | None  # aggregates row of run A (None: only in B)
    b: dict | None
    snapshot: tuple[Change, ...] = ()  # differing snapshot fields and N
    metrics: tuple[Change, ...] = ()  # differing percentiles / retry rate
    exits: tuple[Change, ...] = ()
    lines: tuple[LineDiff, ...] = ()  # every line, changed or not (both-present rows)
    other: tuple[str, ...] = ()  # other aggregate columns that differ

    @property
    def flips(self) -> tuple[LineDiff, ...]:
        return tuple(ln for ln in self.lines if ln.flipped)

    @property
    def changed(self) -> bool:
        return self.presence == BOTH and bool(
            self.snapshot or self.metrics or self.exits or self.other
            or any(ln.changed for ln in self.lines))


@dataclass(frozen=True)
class RunDiff:
    a: Run
    b: Run
    rows: tuple[RowDiff, ...]  # sorted by (L, D), union of both runs
    cross_version: bool
    facts: tuple[tuple[str, object, object], ...] = ()  # run-level (label, A, B)
    notes: tuple[str, ...] = field(default=())

    @property
    def compared(self) -> list[RowDiff]:
        return [r for r in self.rows if r.presence == BOTH]

    @property
    def changed(self) -> list[RowDiff]:
        return [r for r in self.rows if r.changed]

    @property
    def unchanged(self) -> list[RowDiff]:
        return [r for r in self.compared if not r.changed]

    @property
    def only_a(self) -> list[RowDiff]:
        return [r for r in self.rows if r.presence == ONLY_A]

    @property
    def only_b(self) -> list[RowDiff]:
        return [r for r in self.rows if r.presence == ONLY_B]

    @property
    def flips(self) -> list[tuple[tuple[int, int], LineDiff]]:
        return [(r.key, ln) for r in self.rows for ln in r.flips]


# ------------------------------------------------------------------------------ reading

def resolve_run(ref: str, out: str | os.PathLike) -> Path:
    """A run folder path (a directory with manifest.json) or a run id looked up as
    ``<out>/metric_v*/<ref>/``. Unknown or ambiguous -> MinegenError saying where it looked."""
    p = Path(ref)
    if p.is_dir():
        if (p / "manifest.json").is_file():
            return p
        raise MinegenError(f"{ref} is a folder but not an audit run folder: it has no "
                           "manifest.json")
    root = Path(out)
    found = []
    if ref and ref not in (".", "..") and "/" not in ref and os.sep not in ref:
        vdirs = sorted(d for d in root.glob("metric_v*") if _VERSION_DIR.match(d.name))
        found = [d / ref for d in vdirs if (d / ref / "manifest.json").is_file()]
    if len(found) > 1:
        raise MinegenError(f"run id {ref} is ambiguous: it exists under "
                           f"{', '.join(str(f.parent) for f in found)}; pass the run folder "
                           "path instead")
    if not found:
        raise MinegenError(f"no audit run {ref!r}: it is not a run folder (a directory with "
                           f"manifest.json) and no {root}/metric_v*/{ref}/manifest.json "
                           "exists (give the run folder path, or the --out it was written to)")
    return found[0]


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MinegenError(f"{path} is missing: not a complete audit run folder") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MinegenError(f"{path} is not readable JSON: {e}") from None
    if not isinstance(data, dict):
        raise MinegenError(f"{path} is not a JSON object")
    return data


def load_run(path: str | os.PathLike) -> Run:
    """Read manifest.json, aggregates.parquet and assertions.json of one run folder."""
    path = Path(path)
    manifest = _read_json(path / "manifest.json")
    if "metric_version" not in manifest:
        raise MinegenError(f"{path / 'manifest.json'} has no metric_version: cannot tell "
                           "which metric definitions its numbers use")
    agg_path = path / "aggregates.parquet"
    try:
        agg = pl.read_parquet(agg_path)
    except FileNotFoundError:
        raise MinegenError(f"{agg_path} is missing: not a complete audit run folder") from None
    except Exception as e:  # polars raises several types for a damaged file
        raise MinegenError(f"{agg_path} is not a readable Parquet file: {e}") from None
    missing = [c for c in ROW_KEY if c not in agg.columns]
    if missing:
        raise MinegenError(f"{agg_path} has no column(s) {missing}: not per-row aggregates")
    rows: dict[tuple[int, int], dict] = {}
    for row in agg.to_dicts():
        key = (row["level_index"], row["node_depth"])
        if key in rows:
            raise MinegenError(f"{agg_path} lists row {key} twice")
        rows[key] = row
    assertions = _read_json(path / "assertions.json")
    results: dict[tuple[int, int], dict[str, dict]] = {}
    try:
        for r in assertions["results"]:
            results.setdefault((r["level_index"], r["node_depth"]), {})[r["line"]] = r
    except (KeyError, TypeError) as e:
        raise MinegenError(f"{path / 'assertions.json'} has no well-formed results list "
                           f"({e!r})") from None
    notes = []
    version = manifest["metric_version"]
    if assertions.get("metric_version", version) != version:
        notes.append(f"run {path.name}: assertions.json says metric_version "
                     f"{assertions['metric_version']} but manifest.json says {version}; "
                     "the manifest is used")
    parent = _VERSION_DIR.match(path.resolve().parent.name)
    if parent and str(version) != parent.group(1):
        notes.append(f"run {path.name} sits under {path.resolve().parent.name} but its manifest "
                     f"says metric_version {version}; the manifest is used")
    return Run(path, manifest, rows, results, tuple(notes))


# ---------------------------------------------------------------------------- comparing

def same(a, b) -> bool:
    """Exact equality of stored values; NaN equals NaN (an undefined value did not move)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, bool) != isinstance(b, bool):  # True is not the count 1
        return False
    return a == b


def status(result: dict | None) -> str:
    """pass / fail (hard line) / warn (advisory line) / n/a / absent (no result stored)."""
    if result is None:
        return ABSENT
    if not result.get("applies") or result.get("passed") is None:
        return NA
    if result["passed"]:
        return PASS
    return FAIL if result.get("hard", True) else WARN


def _changes(a: dict, b: dict, columns) -> tuple[Change, ...]:
    return tuple(Change(c, label, a.get(c), b.get(c)) for c, label in columns
                 if not same(a.get(c), b.get(c)))


def _row_diff(key, a: Run, b: Run) -> RowDiff:
    ra, rb = a.rows.get(key), b.rows.get(key)
    if ra is None or rb is None:
        return RowDiff(key, ONLY_B if ra is None else ONLY_A, ra, rb)
    lines = []
    for ln in LINES:
        xa, xb = a.results.get(key, {}).get(ln.name), b.results.get(key, {}).get(ln.name)
        lines.append(LineDiff(ln.name, ln.hard, status(xa), status(xb),
                              None if xa is None else xa.get("observed"),
                              None if xb is None else xb.get("observed")))
    other = sorted(c for c in (set(ra) | set(rb)) - _SHOWN if not same(ra.get(c), rb.get(c)))
    return RowDiff(key, BOTH, ra, rb,
                   snapshot=_changes(ra, rb, SNAPSHOT + ((BOARDS, "N"),)),
                   metrics=_changes(ra, rb, METRICS), exits=_changes(ra, rb, EXITS),
                   lines=tuple(lines), other=tuple(other))


_FACTS = (("run id", "run_id"), ("created (UTC)", "created_utc"),
          ("metric_version", "metric_version"), ("generator_version", "generator_version"),
          ("code version", "code_version"), ("git commit", "git_commit"),
          ("table root", "table_root"), ("table hash", "table_hash"), ("N", "n"),
          ("boards", "boards"), ("exit code", "exit_code"))


def compare(a: Run, b: Run, allow_cross_version: bool = False) -> RunDiff:
    """The row-by-row diff of ``a`` -> ``b`` (changes read as B - A).

    Raises MinegenError when the metric_versions differ and ``allow_cross_version`` is off.
    """
    cross = a.metric_version != b.metric_version
    if cross and not allow_cross_version:
        raise MinegenError(
            f"refusing to compare runs of different metric_version: {a.run_id} is "
            f"metric_version {a.metric_version}, {b.run_id} is metric_version "
            f"{b.metric_version}. The metric definitions differ, so the numbers are not "
            "comparable; pass --allow-cross-version to compare anyway (every output then "
            "says so).")
    rows = tuple(_row_diff(k, a, b) for k in sorted(set(a.rows) | set(b.rows)))
    facts = [("run folder", str(a.path), str(b.path))]
    facts += [(label, a.manifest.get(k), b.manifest.get(k)) for label, k in _FACTS]
    notes = list(a.notes + b.notes)
    if a.manifest.get("generator_version") != b.manifest.get("generator_version"):
        notes.append("the generator_version differs: the same row and seed may give other "
                     "boards, so row values can move without a table change")
    return RunDiff(a, b, rows, cross, tuple(facts), tuple(notes))


# ------------------------------------------------------------------------------ writing

def html_path(d: RunDiff, out: str | os.PathLike) -> Path:
    def safe(run_id: str) -> str:
        return _UNSAFE.sub("_", run_id).lstrip(".") or "run"

    return Path(out) / "diffs" / f"{safe(d.a.run_id)}__vs__{safe(d.b.run_id)}.html"


def write_html(d: RunDiff, out: str | os.PathLike) -> Path:
    """Write the HTML page under ``<out>/diffs/`` (temporary file, then rename)."""
    from . import diff_render

    final = html_path(d, out)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp")
    try:
        tmp.write_text(diff_render.html(d), encoding="utf-8")
        os.replace(tmp, final)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return final


def diff_runs(run_a: str, run_b: str, out: str | os.PathLike = "reports",
              allow_cross_version: bool = False) -> RunDiff:
    """Resolve, load and compare two runs (see ``resolve_run`` and ``compare``)."""
    a = load_run(resolve_run(run_a, out))
    b = load_run(resolve_run(run_b, out))
    return compare(a, b, allow_cross_version)


def cmd_diff(args) -> int:
    """CLI: Markdown on stdout, the HTML page under <out>/diffs/, its path; exit 0."""
    from . import diff_render

    d = diff_runs(args.run_a, args.run_b, args.out, args.allow_cross_version)
    page = write_html(d, args.out)  # first: the page exists even if stdout goes away
    print(diff_render.markdown(d), end="")
    print(f"\nHTML page: {page}")
    return 0

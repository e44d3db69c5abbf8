"""Compare two finished runs row by row (the model ``minegen diff`` prints).

The rows of both runs are outer-joined on the key, so a row present in one run only is
kept and marked, never dropped (one row of a lineage in each run, e.g. a level's revision
1 before and revision 2 after, is compared as one row); per row the changed snapshot values,
figures and counts (the generator's ``diff_columns``) and every line's status (a status change is a flip).
A row is changed when any compared value differs; stored floats are compared exactly
(same seeds + same row => byte-identical values). Runs of different metric_version
measure different things: ``compare`` refuses them unless ``allow_cross_version``.
Runs of different generators are always refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from boardcore.errors import InputError

from ..capabilities import lineage
from ..store.runs import Run

# Statuses of one line on one row, as the audit report reads them.
PASS, FAIL, WARN, NA, ABSENT = "pass", "fail", "warn", "n/a", "absent"
ONLY_A, ONLY_B, BOTH = "only before", "only after", "both"
SNAPSHOT, FIGURE, COUNT = "snapshot", "figure", "count"  # kinds of compared columns


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
    key: tuple
    presence: str  # BOTH, ONLY_A, ONLY_B
    a: dict | None  # aggregates row of run A (None: only in B)
    b: dict | None
    snapshot: tuple[Change, ...] = ()  # differing snapshot fields and N
    metrics: tuple[Change, ...] = ()  # differing percentiles / retry rate
    exits: tuple[Change, ...] = ()
    lines: tuple[LineDiff, ...] = ()  # every line, changed or not (both-present rows)
    other: tuple[str, ...] = ()  # other aggregate columns that differ
    key_a: tuple | None = None  # a paired row: its key in run A (another revision)
    table: tuple = ()  # the row's table edits (``boardcore.toml_diff.Edit``), in TOML words

    @property
    def flips(self) -> tuple[LineDiff, ...]:
        return tuple(ln for ln in self.lines if ln.flipped)

    @property
    def changed(self) -> bool:
        return self.presence == BOTH and bool(
            self.snapshot or self.metrics or self.exits or self.other or self.table
            or any(ln.changed for ln in self.lines))


@dataclass(frozen=True)
class RunDiff:
    a: Run
    b: Run
    rows: tuple[RowDiff, ...]  # sorted by key, union of both runs
    cross_version: bool
    gen: object = None  # the generator both runs come from
    facts: tuple[tuple[str, object, object], ...] = ()  # run-level (label, A, B)
    notes: tuple[str, ...] = field(default=())
    # table edits no row owns (another file, a row no run audited); None: the tables of
    # one run are not known (a run written before runs kept their tables)
    table: tuple | None = ()

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
    def flips(self) -> list[tuple[tuple, LineDiff]]:
        return [(r.key, ln) for r in self.rows for ln in r.flips]


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
    """Differing values of ``columns`` both rows have (a column of another record schema,
    present on one side only, is not a change of the row)."""
    return tuple(Change(c, label, a.get(c), b.get(c)) for c, label in columns
                 if c in a and c in b and not same(a.get(c), b.get(c)))


def _row_diff(gen, key, a: Run, b: Run, key_a: tuple | None = None) -> RowDiff:
    """``key`` in B against ``key_a`` (default: the same key) in A."""
    ka = key if key_a is None else key_a
    ra, rb = a.rows.get(ka), b.rows.get(key)
    if ra is None or rb is None:
        return RowDiff(key, ONLY_B if ra is None else ONLY_A, ra, rb)
    cols = {kind: tuple((c, label) for c, label, k in gen.diff_columns if k == kind)
            for kind in (SNAPSHOT, FIGURE, COUNT)}
    shown = ({c for c, _, _ in gen.diff_columns} | {"boards", *gen.key_fields}
             | {ln.column for ln in gen.lines})
    lines = []
    for ln in gen.lines:
        xa, xb = a.results.get(ka, {}).get(ln.name), b.results.get(key, {}).get(ln.name)
        lines.append(LineDiff(ln.name, ln.hard, status(xa), status(xb),
                              None if xa is None else xa.get("observed"),
                              None if xb is None else xb.get("observed")))
    other = sorted(c for c in (set(ra) & set(rb)) - shown if not same(ra.get(c), rb.get(c)))
    return RowDiff(key, BOTH, ra, rb,
                   snapshot=_changes(ra, rb, cols[SNAPSHOT] + (("boards", "N"),)),
                   metrics=_changes(ra, rb, cols[FIGURE]), exits=_changes(ra, rb, cols[COUNT]),
                   lines=tuple(lines), other=tuple(other), key_a=key_a)


def _paired(gen, rows: list[RowDiff], a: Run, b: Run) -> tuple[RowDiff, ...]:
    """A row only in A and a row only in B of the same lineage (``Generator.lineage``: e.g.
    one tile-match level's revisions 1 and 2), one each, are compared as one row."""
    only_a: dict[tuple, list[RowDiff]] = {}
    only_b: dict[tuple, list[RowDiff]] = {}
    for r in rows:
        if r.presence != BOTH:
            (only_a if r.presence == ONLY_A else only_b).setdefault(
                lineage(gen, r.key), []).append(r)
    pairs = {}  # key after -> key before
    for lin, ra in only_a.items():
        rb = only_b.get(lin, [])
        if len(ra) == 1 and len(rb) == 1:
            pairs[rb[0].key] = ra[0].key
    before = set(pairs.values())
    out = []
    for r in rows:
        if r.presence == ONLY_A and r.key in before:
            continue  # compared with its row after, below
        if r.presence == ONLY_B and r.key in pairs:
            r = _row_diff(gen, r.key, a, b, pairs[r.key])
        out.append(r)
    return tuple(out)


_FACTS = (("run id", "run_id"), ("created (UTC)", "created_utc"), ("generator", "generator"),
          ("metric_version", "metric_version"), ("generator_version", "generator_version"),
          ("record schema", "record_schema_version"),
          ("code version", "code_version"), ("git commit", "git_commit"),
          ("table root", "table_root"), ("table hash", "table_hash"), ("N", "n"),
          ("boards", "boards"), ("exit code", "exit_code"))


def compare(gen, a: Run, b: Run, allow_cross_version: bool = False) -> RunDiff:
    """The row-by-row diff of ``a`` -> ``b`` (changes read as B - A).

    Raises InputError when the metric_versions differ and ``allow_cross_version`` is off.
    """
    names = {r.manifest.get("generator", gen.name) for r in (a, b)}
    if len(names) > 1:
        raise InputError(f"refusing to compare runs of different generators: "
                           f"{' and '.join(sorted(names))}")
    cross = a.metric_version != b.metric_version
    if cross and not allow_cross_version:
        raise InputError(
            f"refusing to compare runs of different metric_version: {a.run_id} is "
            f"metric_version {a.metric_version}, {b.run_id} is metric_version "
            f"{b.metric_version}. The metric definitions differ, so the numbers are not "
            "comparable; pass --allow-cross-version to compare anyway (every output then "
            "says so).")
    rows = _paired(gen, [_row_diff(gen, k, a, b) for k in sorted(set(a.rows) | set(b.rows))],
                   a, b)
    rows, loose = _table_edits(gen, rows, a, b)
    facts = [("run folder", str(a.path), str(b.path))]
    facts += [(label, a.manifest.get(k), b.manifest.get(k)) for label, k in _FACTS]
    notes = list(a.notes + b.notes)
    schemas = [r.manifest.get("record_schema_version", 1) for r in (a, b)]
    if schemas[0] != schemas[1]:
        notes.append(f"the record schema differs ({schemas[0]} vs {schemas[1]}): columns one "
                     "run has and the other lacks (e.g. the difficulty tiers) are not compared")
    if a.manifest.get("generator_version") != b.manifest.get("generator_version"):
        notes.append("the generator_version differs: the same row and seed may give other "
                     "boards, so row values can move without a table change")
    if loose is None:
        notes.append("the table edits are not listed: a run folder without its tables/ "
                     "(written before runs kept a copy) and a table root changed since")
    return RunDiff(a, b, rows, cross, gen, tuple(facts), tuple(notes), loose)


def _tables_of(run: Run) -> Path | None:
    """The table root a run read: its own copy, else the root it names when that root
    still hashes as the run recorded."""
    from boardcore.tables import hashed_files

    own = run.path / "tables"
    if own.is_dir():
        return own
    root = run.manifest.get("table_root")
    if root and Path(root).is_dir() and \
            hashed_files(root, run.manifest.get("table_hash")) is not None:
        return Path(root)
    return None


def _table_edits(gen, rows: tuple[RowDiff, ...], a: Run, b: Run):
    """Each row with its table edits read from the two runs' tables (``toml_diff``, in the
    files' own words), and the edits no row owns; (rows, None) when a run's tables are
    not known."""
    from dataclasses import replace as _replace

    from boardcore.toml_diff import diff

    ta, tb = _tables_of(a), _tables_of(b)
    if ta is None or tb is None:
        return rows, None
    edits = diff(ta, tb, getattr(gen, "table_rows", {}))
    keys = list(gen.key_fields)
    owned: dict[tuple, list] = {}
    loose = []
    for e in edits:
        key = tuple(e.ids[k] for k in keys) if all(k in e.ids for k in keys) else None
        if key is not None and any(r.key == key for r in rows):
            owned.setdefault(key, []).append(e)
        else:
            loose.append(e)
    return tuple(_replace(r, table=tuple(owned.get(r.key, ()))) for r in rows), tuple(loose)

"""``minegen sweep``: the F4 audit of ONE row across values of ONE BoardGenTable field.

Inputs: ``--row L:D`` (resolved by R1 floor, SPEC §2), ``--vary FIELD=START:STOP:STEP``
(START to STOP inclusive when STOP is on the grid, computed in Decimal so
``0.10:0.20:0.02`` is exactly 0.1, 0.12, ..., 0.2), ``--n`` boards per value and the
cluster options of ``minegen audit``.

Per value: the resolved row with FIELD replaced is validated in memory
(``table_loader.check_board_gen_row``: field domains, F2, mine floor, F2b, F2c). A value
that fails is reported with status "invalid" and its diagnostics, and is not run. Every
valid value becomes a ``RowPlan`` with the *requested* (L, D), so board i uses
``derive_at("board_gen", σ(L, D) + i)`` exactly as the audit does: a value's records are
byte-identical to an audit of a table whose row holds that value. All valid values run as
one Dask graph on one cluster (``graph.run_rows`` keys rows by position, so the repeated
(L, D) is fine); each value's records go through the audit's own ``aggregate`` →
``assertion_frame(agg, None)`` → ``evaluate`` (the same Pandera schema; E does not apply
to a single row).

Boundary, by the field's direction (which end is the demanding one):

=====================  ==========  ============================================
field                  boundary    why
=====================  ==========  ============================================
board_width            largest     a wider board is more to infer
board_height           largest     a taller board is more to infer
board_size             largest     convenience: sets width and height together
mine_density           largest     more mines, less inferable
inferability_target    largest     a higher target is a stricter line A
min_safe_count         largest     a larger safe region is harder to guarantee
max_gen_attempts       smallest    fewer attempts is cheaper generation
fog_region_count       largest     more regions to place (line B)
fog_target_ratio       largest     larger regions to place (line B)
=====================  ==========  ============================================

The boundary is the most demanding valid value for which every hard line (A, A'', A',
B, B') holds, or "none holds". Pass/fail need not be monotone in the value (a finite N is
a sample): valid values on the easy side of the boundary that fail are listed as
``failing_inside`` so nobody reads the boundary as a clean threshold.

Output: ``<out>/sweeps/<sweep_id>/`` (``<UTC time>-L<L>D<D>-<field>``, ``-2``... when
taken) with sweep.json, sweep.csv, sweep.md and a self-contained sweep.html, written
into a temporary sibling folder and renamed into place. Exit code: 0 when at least one
valid value holds every hard line, 1 when none does, 2 bad input, 3 the run could not
complete.
"""

from __future__ import annotations

import decimal
import errno
import os
import re
import shutil
import threading
import time
import uuid
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path

import polars as pl

from minegen.errors import Diagnostic, MinegenError
from minegen.plan import RowPlan
from minegen.rng import check_board_count
from minegen.table_loader import check_board_gen_row, load_tables, row_fields
from minegen.table_model import BoardGenRow, Tables

from . import report
from .aggregate import aggregate
from .assertions import LINES, assertion_frame, evaluate, hard_failures
from .cluster import start_cluster
from .errors import EXIT_ASSERTION_FAILED, EXIT_OK
from .graph import Progress, run_rows
from .options import AuditOptions, check, slurm_options

MAX_VALUES = 64  # one graph, one report page: a wider sweep is several sweeps
BOARD_SIZE = "board_size"  # convenience knob: board_width = board_height = value
LARGEST, SMALLEST = "largest", "smallest"
# field -> (kind, direction of the boundary); see the module docstring's table.
FIELDS: dict[str, tuple[str, str]] = {
    "board_width": ("int", LARGEST),
    "board_height": ("int", LARGEST),
    BOARD_SIZE: ("int", LARGEST),
    "mine_density": ("float", LARGEST),
    "inferability_target": ("float", LARGEST),
    "min_safe_count": ("int", LARGEST),
    "max_gen_attempts": ("int", SMALLEST),
    "fog_region_count": ("int", LARGEST),
    "fog_target_ratio": ("float", LARGEST),
}
HARD_LINES = tuple(ln.name for ln in LINES if ln.hard)
# Aggregate columns a value reports (SPEC §8 report C and diagnostics D).
SUMMARY_COLUMNS = ("boards", "planned_mines", "inferability_p10", "inferability_p50",
                   "inferability_p90", "inferability_core_p10", "inferability_core_p50",
                   "retry_rate", "mean_attempts", "mine_drift_p50", "mine_drift_warning",
                   "exit_met", "exit_accept_best", "exit_accept_least_bad",
                   "below_target", "illegal_boards", "regions_full_share", "fogged_boards")
_VARY = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*([^:=\s]+)\s*:\s*([^:=\s]+)\s*:\s*([^:=\s]+)\s*$")
_INT = re.compile(r"^[+-]?\d+$")
_MAX_RENAME_TRIES = 100  # sweep ids taken concurrently within one second


@dataclass(frozen=True)
class Vary:
    """A parsed ``--vary``: the field and its grid (Python ints or floats, in order)."""

    field: str
    text: str  # as given, for the report
    start: Decimal
    stop: Decimal
    step: Decimal
    values: tuple[int | float, ...]

    @property
    def kind(self) -> str:
        return FIELDS[self.field][0]

    @property
    def direction(self) -> str:
        return FIELDS[self.field][1]


def _bad_vary(text: str, why: str) -> MinegenError:
    return MinegenError(f"--vary {text!r}: {why} (expected FIELD=START:STOP:STEP, e.g. "
                        "mine_density=0.10:0.20:0.02; fields: " + ", ".join(FIELDS) + ")")


def parse_vary(text: str) -> Vary:
    """``FIELD=START:STOP:STEP`` -> Vary. Raises MinegenError on bad syntax, an unknown
    field, a non-int bound of an int field, STEP <= 0, STOP < START or > MAX_VALUES values."""
    m = _VARY.match(str(text))
    if not m:
        raise _bad_vary(text, "bad syntax")
    name, *parts = m.groups()
    if name not in FIELDS:
        raise _bad_vary(text, f"unknown or non-numeric field {name!r}")
    kind = FIELDS[name][0]
    nums = []
    for label, part in zip(("START", "STOP", "STEP"), parts):
        if kind == "int" and not _INT.match(part):
            raise _bad_vary(text, f"{name} is an int field; {label} {part!r} is not an int")
        try:
            num = Decimal(part)
        except decimal.InvalidOperation:
            raise _bad_vary(text, f"{label} {part!r} is not a number") from None
        if not num.is_finite():
            raise _bad_vary(text, f"{label} {part!r} is not a finite number")
        nums.append(num)
    start, stop, step = nums
    if step <= 0:
        raise _bad_vary(text, f"STEP must be > 0, got {parts[2]}")
    if stop < start:
        raise _bad_vary(text, f"STOP {parts[1]} is below START {parts[0]}")
    try:
        with decimal.localcontext() as ctx:
            ctx.traps[decimal.Inexact] = False
            count = int((stop - start) // step) + 1
            if count > MAX_VALUES:
                raise _bad_vary(text, f"{count} values; at most {MAX_VALUES} per sweep")
            grid = [start + k * step for k in range(count)]
            values = tuple(int(v) if kind == "int" else float(v) for v in grid)
    except (decimal.DecimalException, OverflowError):
        raise _bad_vary(text, "the grid is not representable (too many values or too "
                        "large numbers)") from None
    if kind == "float" and not all(v == v and abs(v) != float("inf") for v in values):
        raise _bad_vary(text, "a value is not a finite float")
    return Vary(name, str(text), start, stop, step, values)


def parse_row(text: str) -> tuple[int, int]:
    """``L:D`` -> (L, D)."""
    try:
        level, depth = (int(p) for p in str(text).strip().split(":"))
    except ValueError:
        raise MinegenError(f"--row: {text!r} is not L:D (e.g. --row 2:4)") from None
    return level, depth


def label(value: int | float) -> str:
    """A grid value as the designer would write it: ``repr`` (0.12, not 0.12000000000000001)."""
    return repr(value)


@dataclass(frozen=True)
class SweepOptions:
    row: tuple[int, int]
    vary: Vary
    tables: str | None = None
    n: int = 256
    scheduler: str | None = None
    workers: int | None = None
    slurm: dict = field(default_factory=dict)
    seeds_per_task: int | None = None
    out: str = "reports"

    def audit_options(self) -> AuditOptions:
        """The same cluster options ``minegen audit`` takes (and checks)."""
        return AuditOptions(tables=self.tables, n=self.n, rows=(self.row,),
                            scheduler=self.scheduler, workers=self.workers,
                            seeds_per_task=self.seeds_per_task, out=self.out,
                            slurm=self.slurm)


def options_from_args(args) -> SweepOptions:
    """argparse namespace of ``minegen sweep`` -> checked SweepOptions (MinegenError if bad)."""
    opts = SweepOptions(
        row=parse_row(args.row), vary=parse_vary(args.vary), tables=args.tables, n=args.n,
        scheduler=args.scheduler, workers=args.workers,
        slurm=slurm_options(args.slurm) if args.slurm else {},
        seeds_per_task=args.seeds_per_task, out=args.out)
    check(opts.audit_options())
    return opts


@dataclass(frozen=True)
class Point:
    """One value of the sweep: its varied row, or the diagnostics that reject it."""

    value: int | float
    row: BoardGenRow | None
    diagnostics: tuple[Diagnostic, ...]
    current: bool  # the table's own value

    @property
    def valid(self) -> bool:
        return self.row is not None


def vary_row(base: BoardGenRow, name: str, value: int | float) -> dict:
    """``base`` in TOML shape with ``name`` replaced (board_size sets width and height)."""
    raw = row_fields(base)
    for f in (("board_width", "board_height") if name == BOARD_SIZE else (name,)):
        raw[f] = value
    return raw


def current_value(base: BoardGenRow, name: str) -> int | float | None:
    if name == BOARD_SIZE:
        return base.board_width if base.board_width == base.board_height else None
    return getattr(base, name)


def points(base: BoardGenRow, vary: Vary) -> list[Point]:
    """Every grid value validated in memory (nothing raised for an invalid value)."""
    now = current_value(base, vary.field)
    out = []
    for value in vary.values:
        row, diags = check_board_gen_row(vary_row(base, vary.field, value))
        errors = tuple(d for d in diags if d.severity == "error")
        out.append(Point(value, row if not errors else None, errors, value == now))
    return out


def plan_for(tables: Tables, level: int, depth: int, row: BoardGenRow) -> RowPlan:
    """A varied row's snapshot: requested (L, D) (so σ(L, D)), pool and AP cost as the audit."""
    return RowPlan(level=level, depth=depth, row=row, pool=tables.pool(level, row.board_biome),
                   dig_ap_cost=tables.economy.dig_ap_cost)


def evaluate_value(records: pl.DataFrame) -> dict:
    """One value's records -> its verdict and figures, through the audit's own aggregate
    and Pandera schema: holds, lines {name: {applies, passed, observed, op, threshold}},
    the SUMMARY_COLUMNS and records_sha256 (the audit's determinism key)."""
    frame = assertion_frame(aggregate(records), None)
    results, _ = evaluate(frame)
    row = frame.to_dicts()[0]
    lines = {r["line"]: {k: r[k] for k in ("applies", "passed", "observed", "op", "threshold")}
             for r in results if r["hard"]}
    return {
        "holds": not hard_failures(results),
        "lines": lines,
        "failed_lines": [name for name in HARD_LINES if lines[name]["passed"] is False],
        **{c: row[c] for c in SUMMARY_COLUMNS},
        "records_sha256": report.records_digest(records),
    }


def boundary(values: list[dict], direction: str, name: str = "value") -> dict:
    """The most demanding valid value that holds every hard line (see module docstring).

    values: per-value dicts with "value", "status" and "holds". Returns value (None when
    none holds), label, direction, next (the next valid value beyond it, which fails, or
    None), failing_inside (valid values on the easy side that fail) and a sentence."""
    valid = [v for v in values if v["status"] == "ok"]
    passing = [v["value"] for v in valid if v["holds"]]
    pick = max if direction == LARGEST else min
    if not passing:
        return {"direction": direction, "value": None, "label": None, "next": None,
                "failing_inside": [], "text": "none holds: no valid value passes every "
                "hard line" if valid else "none holds: no value is valid"}
    b = pick(passing)
    beyond = [v["value"] for v in valid if (v["value"] > b if direction == LARGEST
                                            else v["value"] < b)]
    inside = [v["value"] for v in valid if not v["holds"]
              and (v["value"] < b if direction == LARGEST else v["value"] > b)]
    nxt = (min if direction == LARGEST else max)(beyond) if beyond else None
    why = "cheapest" if direction == SMALLEST else "most demanding"
    text = f"{direction} {name} for which every hard line holds ({why}): {label(b)}"
    text += (f"; the next value {label(nxt)} fails" if nxt is not None
             else "; no valid value of the sweep is more demanding: widen it (within the "
             "field's domain) to see where it breaks")
    if inside:
        text += ("; not monotone: " + ", ".join(label(v) for v in inside)
                 + " fail on the easy side")
    return {"direction": direction, "value": b, "label": label(b), "next": nxt,
            "failing_inside": inside, "text": text}


@dataclass
class SweepResult:
    exit_code: int
    sweep_dir: Path
    doc: dict  # the content of sweep.json
    records: dict[int, pl.DataFrame]  # grid position -> that value's sorted records


def _invalid(diags: tuple[Diagnostic, ...]) -> dict:
    return {"holds": None, "categories": sorted({d.category for d in diags}),
            "diagnostics": [{"category": d.category, "field": d.field, "value": d.value,
                             "rule": d.rule} for d in diags]}


def run_sweep(opts: SweepOptions, progress: bool | None = None) -> SweepResult:
    """Load, vary, run all valid values as one graph, evaluate, write the sweep folder."""
    t_start = time.perf_counter()
    tables = load_tables(opts.tables)
    check_board_count(opts.n)
    level, depth = opts.row
    base = tables.resolve(level, depth)
    pts = points(base, opts.vary)
    valid = [i for i, p in enumerate(pts) if p.valid]
    plans = [plan_for(tables, level, depth, pts[i].row) for i in valid]
    created = report.utc_now()
    facts = report.base_manifest("", created, tables.root, tables.content_hash, opts.n,
                                 opts.seeds_per_task, [opts.row])
    facts.pop("run_id")
    scheduler, workers, records = "(not started: no valid value)", 0, {}
    closer = scratch = None
    try:
        if plans:
            spec = opts.audit_options().cluster()
            if spec.kind == "local":  # embedded workers' scratch under --out (decision 22)
                scratch = sweeps_dir(opts.out) / f".scratch-{os.getpid()}-{uuid.uuid4().hex[:8]}"
                scratch.mkdir(parents=True)
                spec = replace(spec, scratch=str(scratch))
            handle = start_cluster(spec)
            try:
                workers = len(handle.client.scheduler_info().get("workers", {}))
                rows = run_rows(handle.client, plans, opts.n, opts.seeds_per_task,
                                Progress(len(plans), opts.n * len(plans), progress))
                closer = threading.Thread(target=handle.close)  # workers stop while we write
                closer.start()
            finally:
                if closer is None:
                    handle.close()
            scheduler = handle.description
            records = {valid[pos]: frame for pos, frame in rows.items()}
        values = []
        for i, p in enumerate(pts):
            entry = {"value": p.value, "label": label(p.value), "current": p.current,
                     "status": "ok" if p.valid else "invalid"}
            entry.update(evaluate_value(records[i]) if p.valid else _invalid(p.diagnostics))
            values.append(entry)
        bound = boundary(values, opts.vary.direction, opts.vary.field)
        exit_code = EXIT_OK if bound["value"] is not None else EXIT_ASSERTION_FAILED
        doc = {
            "sweep_id": None,  # set when the folder name is taken
            **facts,
            "scheduler": scheduler, "workers": workers,
            "inputs": {"row": list(opts.row), "resolved_row": list(base.key),
                       "vary": opts.vary.text, "field": opts.vary.field,
                       "kind": opts.vary.kind, "start": str(opts.vary.start),
                       "stop": str(opts.vary.stop), "step": str(opts.vary.step),
                       "direction": opts.vary.direction, "n": opts.n,
                       "base_row": row_fields(base)},
            "hard_lines": list(HARD_LINES),
            "values": values,
            "boundary": bound,
            "exit_code": exit_code,
            "wall_s": round(time.perf_counter() - t_start, 3),
        }
        sweep_dir = write_sweep(opts.out, doc, created)
    finally:
        if closer is not None:
            closer.join()
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return SweepResult(exit_code, sweep_dir, doc, records)


def sweeps_dir(out: str | os.PathLike) -> Path:
    return Path(out) / "sweeps"


def _base_id(doc: dict, created) -> str:
    level, depth = doc["inputs"]["row"]
    return f"{created.strftime('%Y%m%dT%H%M%SZ')}-L{level}D{depth}-{doc['inputs']['field']}"


def write_sweep(out: str | os.PathLike, doc: dict, created) -> Path:
    """Write ``<out>/sweeps/<sweep_id>/`` atomically (temp folder, then rename) and set
    ``doc["sweep_id"]``. A name taken meanwhile (a concurrent sweep) gets the next suffix."""
    from . import sweep_render

    root = sweeps_dir(out)
    root.mkdir(parents=True, exist_ok=True)
    base = _base_id(doc, created)
    k = 1
    for _ in range(_MAX_RENAME_TRIES):
        sweep_id = base if k == 1 else f"{base}-{k}"
        k += 1
        final = root / sweep_id
        if final.exists():
            continue
        doc["sweep_id"] = sweep_id
        tmp = root / f".tmp-{sweep_id}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()  # not mkdtemp: the folder keeps the umask's permissions once renamed
        try:
            (tmp / "sweep.json").write_text(report.to_json(doc), encoding="utf-8")
            sweep_render.csv_frame(doc).write_csv(tmp / "sweep.csv")
            (tmp / "sweep.md").write_text(sweep_render.markdown(doc), encoding="utf-8")
            (tmp / "sweep.html").write_text(sweep_render.html(doc), encoding="utf-8")
            try:
                os.rename(tmp, final)
            except OSError as e:
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
                continue
            return final
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    raise MinegenError(f"no free sweep folder name under {root} after "
                       f"{_MAX_RENAME_TRIES} tries ({base}-N)")


def cmd_sweep(args) -> int:
    """``minegen sweep``: print the Markdown table, the boundary and the folder path."""
    from . import sweep_render

    result = run_sweep(options_from_args(args))
    print(sweep_render.markdown_table(result.doc))
    print()
    print(f"boundary: {result.doc['boundary']['text']}")
    print(f"sweep: {result.sweep_dir}")
    return result.exit_code

"""``minegen sweep``: the audit of ONE row across values of ONE table field.

Inputs: ``--row KEY`` (as the generator parses it), ``--vary FIELD=START:STOP:STEP``
(START to STOP inclusive when STOP is on the grid, computed in Decimal so
``0.10:0.20:0.02`` is exactly 0.1, 0.12, ..., 0.2), ``--n`` boards per value and the
cluster options of ``minegen audit``.

Per value: the generator varies the row in memory (``Generator.vary``) and validates it
as its table loader would; an invalid value is reported with its diagnostics and not run.
A valid value keeps the requested key, so its seeds are the audit's: its records are
byte-identical to an audit of a table whose row holds that value. All valid values run
as one graph on one cluster session (rows are keyed by position, so the repeated key is
fine), stream into shards, and go through the audit's own finishing pass, row columns
and lines.

Boundary, by the field's direction (``Generator.sweep_fields``: which end is the
demanding one): the most demanding valid value for which every hard line holds, or "none
holds". Pass/fail need not be monotone in the value (a finite N is a sample): valid values
on the easy side of the boundary that fail are listed as ``failing_inside``.

Output: ``<out>/sweeps/<sweep_id>/`` (``<UTC time>-<row>-<field>``, ``-2``... when taken)
with sweep.json, sweep.csv, sweep.md and a self-contained sweep.html, written atomically.
Exit code: 0 when at least one valid value holds every hard line, 1 when none does, 2 bad
input, 3 the run could not complete.
"""

from __future__ import annotations

import contextlib
import decimal
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import polars as pl

from boardcore import files
from boardcore.errors import InputError

from ..analysis import lines as L
from ..analysis.collect import ROW, collect_each
from ..engine.run import execute
from ..engine.interrupts import interruptible
from ..errors import EXIT_ASSERTION_FAILED, EXIT_OK, Interrupted, RunInterrupted
from ..generator import load_generator, require
from ..options import DEFAULT_N, DEFAULT_OUT, AuditOptions, check, slurm_options, usable_out
from ..store import atomic, runs
from ..store.shards import ShardStore, shard_key
from . import history
from .audit import announce, check_key, check_n

MAX_VALUES = 64  # one graph, one report page: a wider sweep is several sweeps
LARGEST, SMALLEST = "largest", "smallest"
_VARY = re.compile(r"^\s*([A-Za-z_]+)\s*=\s*([^:=\s]+)\s*:\s*([^:=\s]+)\s*:\s*([^:=\s]+)\s*$")
_INT = re.compile(r"^[+-]?\d+$")
_MAX_NAME_TRIES = 100  # sweep ids taken concurrently within one second


@dataclass(frozen=True)
class Vary:
    """A parsed ``--vary``: the field and its grid (Python ints or floats, in order)."""

    field: str
    kind: str  # "int" | "float"
    direction: str  # LARGEST | SMALLEST: the demanding end
    text: str  # as given, for the report
    start: Decimal
    stop: Decimal
    step: Decimal
    values: tuple[int | float, ...]


def _bad_vary(text: str, why: str, gen) -> InputError:
    return InputError(f"--vary {text!r}: {why} (expected FIELD=START:STOP:STEP, e.g. "
                        "mine_density=0.10:0.20:0.02; fields: "
                        + ", ".join(f.name for f in gen.sweep_fields) + ")")


def parse_vary(text: str, gen=None) -> Vary:
    """``FIELD=START:STOP:STEP`` -> Vary. Raises InputError on bad syntax, an unknown
    field, a non-int bound of an int field, STEP <= 0, STOP < START or > MAX_VALUES values."""
    gen = gen or load_generator()
    require(gen, "sweep")
    fields = {f.name: f for f in gen.sweep_fields}
    m = _VARY.match(str(text))
    if not m:
        raise _bad_vary(text, "bad syntax", gen)
    name, *parts = m.groups()
    if name not in fields:
        raise _bad_vary(text, f"unknown or non-numeric field {name!r}", gen)
    kind = fields[name].kind
    nums = []
    for label, part in zip(("START", "STOP", "STEP"), parts):
        if kind == "int" and not _INT.match(part):
            raise _bad_vary(text, f"{name} is an int field; {label} {part!r} is not an int", gen)
        try:
            num = Decimal(part)
        except decimal.InvalidOperation:
            raise _bad_vary(text, f"{label} {part!r} is not a number", gen) from None
        if not num.is_finite():
            raise _bad_vary(text, f"{label} {part!r} is not a finite number", gen)
        nums.append(num)
    start, stop, step = nums
    if step <= 0:
        raise _bad_vary(text, f"STEP must be > 0, got {parts[2]}", gen)
    if stop < start:
        raise _bad_vary(text, f"STOP {parts[1]} is below START {parts[0]}", gen)
    try:
        with decimal.localcontext() as ctx:
            ctx.traps[decimal.Inexact] = False
            count = int((stop - start) // step) + 1
            if count > MAX_VALUES:
                raise _bad_vary(text, f"{count} values; at most {MAX_VALUES} per sweep",
                                gen)
            grid = [start + k * step for k in range(count)]
            values = tuple(int(v) if kind == "int" else float(v) for v in grid)
    except (decimal.DecimalException, OverflowError):
        raise _bad_vary(text, "the grid is not representable (too many values or too "
                        "large numbers)", gen) from None
    if kind == "float" and not all(v == v and abs(v) != float("inf") for v in values):
        raise _bad_vary(text, "a value is not a finite float", gen)
    return Vary(name, kind, fields[name].direction, str(text), start, stop, step, values)


def label(value: int | float) -> str:
    """A grid value as the designer would write it: ``repr`` (0.12, not 0.12000000000000001)."""
    return repr(value)


@dataclass(frozen=True)
class SweepOptions:
    row: tuple
    vary: Vary
    generator: str | None = None
    tables: str | None = None
    n: int = DEFAULT_N
    scheduler: str | None = None
    workers: int | None = None
    slurm: dict = field(default_factory=dict)
    seeds_per_task: int | None = None
    out: str = DEFAULT_OUT
    worker_timeout: float | None = None

    def audit_options(self) -> AuditOptions:
        """The same cluster options ``minegen audit`` takes (and checks)."""
        return AuditOptions(generator=self.generator, tables=self.tables, n=self.n,
                            scheduler=self.scheduler, workers=self.workers,
                            seeds_per_task=self.seeds_per_task, out=self.out,
                            slurm=self.slurm, worker_timeout=self.worker_timeout)


def options_from_args(args) -> SweepOptions:
    """argparse namespace of ``minegen sweep`` -> checked SweepOptions (InputError if bad)."""
    gen = load_generator(args.generator)
    require(gen, "sweep")
    try:
        row = gen.parse_key(args.row)
    except InputError as e:
        raise InputError(f"--row: {e}") from None
    opts = SweepOptions(
        row=row, vary=parse_vary(args.vary, gen), generator=args.generator,
        tables=args.tables, n=args.n, scheduler=args.scheduler, workers=args.workers,
        slurm=slurm_options(args.slurm) if args.slurm else {},
        seeds_per_task=args.seeds_per_task, out=args.out,
        worker_timeout=getattr(args, "worker_timeout", None))
    check(opts.audit_options())
    return opts


def boundary(values: list[dict], direction: str, name: str = "value") -> dict:
    """The most demanding valid value that holds every hard line (see module docstring).

    values: per-value dicts with "value", "status" and "holds". Returns value (None when
    none holds), label, direction, next (the next valid value beyond it, which fails, or
    None), failing_inside (valid values on the easy side that fail) and a sentence."""
    valid = [v for v in values if v["status"] == "ok"]
    # a value that holds only by removing most of a feature the row asks for is marked,
    # never the boundary (the feature-keeping rule tune uses: analysis.cost.flags)
    passing = [v["value"] for v in valid if v["holds"] and not v.get("flags")]
    pick = max if direction == LARGEST else min
    removing = [v["value"] for v in valid if v["holds"] and v.get("flags")]
    if not passing:
        text = "none holds: no valid value passes every hard line" if valid else \
            "none holds: no value is valid"
        if removing:
            text = ("none holds while keeping what the row asks: " + ", ".join(
                label(v) for v in removing) + " pass every hard line only by removing most "
                "of it")
        return {"direction": direction, "value": None, "label": None, "next": None,
                "failing_inside": [], "text": text}
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
    if removing:
        text += ("; " + ", ".join(label(v) for v in removing) + " hold only by removing "
                 "most of what the row asks for (marked, not the boundary)")
    return {"direction": direction, "value": b, "label": label(b), "next": nxt,
            "failing_inside": inside, "text": text}


@dataclass
class SweepResult:
    exit_code: int
    sweep_dir: Path
    doc: dict  # the content of sweep.json
    records_sha256: dict[int, str]  # grid position -> that value's records digest


def _invalid(diags) -> dict:
    return {"holds": None, "categories": sorted({d.category for d in diags}),
            "diagnostics": [{"category": d.category, "field": d.field, "value": d.value,
                             "rule": d.rule} for d in diags]}


def _evaluated(gen, rows: pl.DataFrame) -> dict[int, dict]:
    """Per position: verdict, each hard line and every aggregate column, through the
    audit's own row columns and lines (lines that need the tables do not apply)."""
    rows = gen.row_columns(rows, None)
    results, _ = L.evaluate(rows, gen.lines, (ROW,))
    out = {}
    for row in rows.iter_rows(named=True):
        mine = [r for r in results if r[ROW] == row[ROW] and r["hard"]]
        lines = {r["line"]: {k: r[k] for k in ("applies", "passed", "observed", "op",
                                               "threshold", "interval", "within_noise")
                             if k in r} for r in mine}
        out[row[ROW]] = {"holds": not L.hard_failures(mine), "lines": lines,
                         "failed_lines": [r["line"] for r in L.hard_failures(mine)],
                         **{c: v for c, v in row.items() if c != ROW}}
    return out


def _flags(gen, entry: dict, field: str, now) -> list[str]:
    """The features a value's boards deliver under the share the generator keeps of what
    the row asks *as the table has it now* (the varied field at its table value)."""
    from ..analysis import cost

    costs = getattr(gen, "tune_costs", ())
    if not costs or entry.get("holds") is None:
        return []
    asked = {**entry, field: now} if field in entry else entry
    try:
        return cost.flags(costs, asked, cost.figures(costs, entry))
    except (KeyError, TypeError, ValueError):  # an intent the varied row cannot state
        return []


def run_sweep(opts: SweepOptions, progress: bool | None = None, gen=None) -> SweepResult:
    """Load, vary, run all valid values as one graph, evaluate, write the sweep folder."""
    t_start = time.perf_counter()
    gen = gen or load_generator(opts.generator)
    require(gen, "sweep")
    catalog = gen.load(opts.tables)
    check_n(gen, opts.n)
    check_key(gen, opts.row, "--row")
    gen.plans(catalog, [opts.row])  # the row must resolve (bad input before any work)
    now = gen.current_value(catalog, opts.row, opts.vary.field)
    varied = [gen.vary(catalog, opts.row, opts.vary.field, v) for v in opts.vary.values]
    valid = [i for i, (plan, _) in enumerate(varied) if plan is not None]
    plans = [varied[i][0] for i in valid]
    created = runs.utc_now()
    facts = runs.base_manifest(gen, "", created, catalog, opts.n, opts.seeds_per_task,
                               [opts.row])
    facts.pop("run_id")
    ref = opts.generator or gen.name  # how the sweep loaded its generator (as a run records it)
    facts["generator_ref"] = ref
    root = sweeps_dir(opts.out)
    made = [d for d in (root, root.parent) if not d.exists()]  # removed again on failure
    usable_out(opts.out)  # exit 2 with nothing left behind, before the sweep folder
    root.mkdir(parents=True, exist_ok=True)
    store = ShardStore.create(root, f"sweep-{created.strftime('%Y%m%dT%H%M%SZ')}-"
                              f"{time.monotonic_ns()}", {"sweep": opts.vary.text,
                                                         "generator": ref})
    expects = [shard_key(gen, p, opts.n) for p in plans]
    try:
        spec = opts.audit_options().cluster(scratch=str(store.folder / "scratch"))
        with interruptible(), execute(gen, spec, plans, list(range(len(plans))), opts.n,
                                      opts.seeds_per_task, store, expects, progress,
                                      what="sweep") as ex:
            ex.close_soon()  # every value is on disk: the cluster closes while we evaluate
            by_pos, digests = {}, {}
            # one value at a time (its own records digest), validated in batches
            for pos, got in collect_each(gen, store.rows(list(range(len(plans))))):
                by_pos.update(_evaluated(gen, got.rows.with_columns(pl.lit(pos).alias(ROW))))
                digests[valid[pos]] = got.records_sha256
            values = []
            for i, (value, (plan, diags)) in enumerate(zip(opts.vary.values, varied)):
                entry = {"value": value, "label": label(value), "current": value == now,
                         "status": "ok" if plan is not None else "invalid"}
                if plan is not None:
                    entry.update(by_pos[valid.index(i)], records_sha256=digests[i])
                    entry["flags"] = _flags(gen, entry, opts.vary.field, now)
                else:
                    entry.update(_invalid(diags))
                values.append(entry)
            bound = boundary(values, opts.vary.direction, opts.vary.field)
            exit_code = EXIT_OK if bound["value"] is not None else EXIT_ASSERTION_FAILED
            doc = {
                "sweep_id": None,  # set when the folder name is taken
                **facts, "scheduler": ex.scheduler if plans else
                "(not started: no valid value)", "workers": ex.workers,
                "inputs": {"row": list(opts.row),
                           "resolved_row": list(gen.resolved_key(catalog, opts.row)),
                           "vary": opts.vary.text, "field": opts.vary.field,
                           "kind": opts.vary.kind, "start": str(opts.vary.start),
                           "stop": str(opts.vary.stop), "step": str(opts.vary.step),
                           "direction": opts.vary.direction, "n": opts.n,
                           "row_label": gen.label(opts.row),
                           "figures": [[c, lab] for c, lab, k in gen.diff_columns
                                       if k == "figure"]},
                "hard_lines": [ln.name for ln in gen.lines if ln.hard],
                "rules_doc": gen.rules_doc,
                "jargon": [list(j) for j in gen.jargon],
                "values": values,
                "boundary": bound,
                "exit_code": exit_code,
                "wall_s": round(time.perf_counter() - t_start, 3),
            }
            sweep_dir = write_sweep(opts.out, doc, created, gen)
    except BaseException as e:
        store.remove()
        for d in made:  # a failed sweep leaves no trace, not even an empty folder
            with contextlib.suppress(OSError):
                d.rmdir()
        if isinstance(e, Interrupted):
            raise RunInterrupted(e.signum, f"interrupted ({e}); the sweep wrote nothing"
                                 ) from None
        raise
    store.remove()
    history.refresh(opts.out, announce)
    return SweepResult(exit_code, sweep_dir, doc, digests)


def sweeps_dir(out) -> Path:
    return Path(out) / "sweeps"


def write_sweep(out, doc: dict, created, gen) -> Path:
    """Write ``<out>/sweeps/<sweep_id>/`` atomically and set ``doc["sweep_id"]``; a name
    taken meanwhile (a concurrent sweep) gets the next suffix."""
    from ..reports import sweep_page

    root = sweeps_dir(out)
    row = re.sub(r"[^A-Za-z0-9]+", "-", doc["inputs"]["row_label"]).strip("-")
    base = f"{created.strftime('%Y%m%dT%H%M%SZ')}-{row}-{doc['inputs']['field']}"
    def take(sweep_id: str) -> Path:
        if (root / sweep_id).exists():
            raise FileExistsError(sweep_id)
        doc["sweep_id"] = sweep_id
        try:
            with atomic.folder(root / sweep_id) as tmp:
                files.create(tmp / "sweep.json", runs.to_json(doc))
                files.create(tmp / "sweep.csv", sweep_page.csv_frame(doc).write_csv)
                files.create(tmp / "sweep.md", sweep_page.markdown(doc))
                files.create(tmp / "sweep.html", sweep_page.html(doc))
        except OSError:
            if (root / sweep_id).exists():  # taken between the check and the rename
                raise FileExistsError(sweep_id) from None
            raise
        return root / sweep_id

    return atomic.claim_name(base, take, "sweep folder name", root, _MAX_NAME_TRIES)


def cmd_sweep(args) -> int:
    """``minegen sweep``: print the Markdown table, the boundary and the folder path."""
    from ..reports import sweep_page

    result = run_sweep(options_from_args(args))
    print(sweep_page.markdown_table(result.doc))
    print()
    print(f"boundary: {result.doc['boundary']['text']}")
    print(f"sweep: {result.sweep_dir}")
    return result.exit_code

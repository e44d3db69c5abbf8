"""Whether the run ``minegen reconcile`` reads audited the tables the players played.

Telemetry names no table root: its boards are taken as the shipped tables' (the game ships
the default root; decision 275). A run of other tables, an edited copy audited into the same
``--out`` or the shipped tables before an edit, is said in one line on stderr, with how many
sessions it holds no board for and the run to give instead; when no session is usable, the
same words end the exit-2 line.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from boardcore import files
from boardcore.errors import InputError
from pipeline.api.runs import fits, hints, runs

from ..table_checks import ACCEPTANCE_FILE
from ..table_loader import DEFAULT_ROOT, content_hash
from ..telemetry import tally

UNHELD = (tally.UNKNOWN_ROW, tally.UNKNOWN_SEED)


def differ(run_dir: Path, args) -> tuple[str, str] | None:
    """None when the run audited the shipped tables as they are now, or its manifest names
    no table hash (a run folder made by hand); else (a clause naming both tables, what to
    do instead)."""
    manifest = runs.read_json(run_dir / "manifest.json")
    if "table_hash" not in manifest:
        return None
    shipped = content_hash(DEFAULT_ROOT)
    clause = fits.tables_differ(manifest, DEFAULT_ROOT, shipped, f"--run {run_dir.name}")
    if not clause:
        return None
    return f"{clause}, the shipped tables the players played", _instead(args, shipped)


def _instead(args, shipped: str) -> str:
    """The run to give instead: this --out's tilegen LATEST when it audited the shipped
    tables as they are; else the audit that makes one."""
    try:
        path = runs.resolve_run(runs.LATEST, args.out, "tilegen")
        ours = runs.read_json(path / "manifest.json").get("table_hash") == shipped
    except InputError:
        ours = False
    if ours:
        return "reconcile their run: " + hints.audit_command(
            "reconcile", "--run", path.name, "--telemetry", args.telemetry, out=args.out)
    return "audit them first: " + hints.audit_command("audit", generator="tilegen",
                                                       out=args.out)


def line(differs: tuple[str, str], doc: dict) -> str:
    """The stderr line of a finished reconciliation of a run of other tables."""
    bad = doc["bad_rows"]
    unheld = sum(b["rows"] for b in bad if b["reason"] in UNHELD)
    total = doc["sessions"] + sum(b["rows"] for b in bad)
    held = (f"{unheld:,} of {total:,} sessions are of boards it does not hold" if unheld
            else "it holds a board for every session, but its targets may not be the game's")
    return f"reconcile: {differs[0]}: {held}; {differs[1]}"


def bands(run_dir: Path) -> tuple[dict[int, list[float]], str]:
    """(level -> its tool-free band [min, max], the acceptance file that holds them): the
    run's own gates (its aggregates) where it has them, else its table root's
    acceptance.toml (the shipped one for a run folder whose manifest names no root); an
    absent tool_free_max is 1. ({}, file) when neither can be read."""
    import polars as pl

    try:
        root = runs.read_json(run_dir / "manifest.json").get("table_root") or DEFAULT_ROOT
    except InputError:  # a folder of records alone: the shipped tables
        root = DEFAULT_ROOT
    file = str(Path(root) / ACCEPTANCE_FILE)
    agg = run_dir / "aggregates.parquet"
    if agg.is_file() and "tool_free_min" in pl.read_parquet_schema(files.checked(agg)):
        rows = pl.read_parquet(files.checked(agg),
                               columns=["level_id", "tool_free_min", "tool_free_max"])
        return ({lv: [lo, 1.0 if hi is None else hi] for lv, lo, hi in rows.rows()
                 if lo is not None}, file)
    try:
        levels = tomllib.loads(files.read_text(file, follow=True)).get("levels", [])
        return ({int(v["level_id"]): [float(v["tool_free_min"]),
                                      float(v.get("tool_free_max", 1.0))]
                 for v in levels}, file)
    except (OSError, ValueError, KeyError, TypeError, files.Refused):
        return {}, file

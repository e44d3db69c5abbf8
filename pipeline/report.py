"""Write a run folder (SPEC §9): <out>/metric_v<version>/<run_id>/ with manifest.json,
records.parquet, aggregates.parquet + .csv, shortfall.csv, assertions.json, report.md,
report.html. Everything is written into a temporary sibling folder first and renamed into
place, so a crashed run leaves no half report; ``LATEST`` then points at the new run.
Nothing is written outside ``out``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import polars as pl

from minegen.record import GENERATOR_VERSION, METRIC_VERSION, TIMING_FIELDS

PACKAGES = ("numpy", "numba", "polars", "pyarrow", "pandera", "dask", "distributed",
            "dask-jobqueue", "matplotlib")
SIGMA_FORMULA = "sigma(L, D) = 10^9 + 2^20*L + 2^12*D; board i: derive_at('board_gen', sigma + i)"
REPO = Path(__file__).resolve().parent.parent


def version_dir(out: str | os.PathLike, metric_version: int = METRIC_VERSION) -> Path:
    return Path(out) / f"metric_v{metric_version}"


def records_digest(records: pl.DataFrame) -> str:
    """sha256 of the records' canonical CSV, timing fields excluded (determinism key)."""
    data = records.drop([c for c in TIMING_FIELDS if c in records.columns])
    return hashlib.sha256(data.write_csv().encode()).hexdigest()


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=5)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def package_versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "missing"
    return out


def new_run_id(out: str | os.PathLike, table_hash: str, n: int, now: datetime) -> str:
    base = f"{now.strftime('%Y%m%dT%H%M%SZ')}-{table_hash[:8]}-n{n}"
    vdir = version_dir(out)
    run_id, k = base, 1
    while (vdir / run_id).exists() or (vdir / f".partial-{run_id}").exists():
        k += 1
        run_id = f"{base}-{k}"
    return run_id


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def to_json(obj) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n"


def write_run(out: str | os.PathLike, run_id: str, manifest: dict, records: pl.DataFrame,
              aggregates: pl.DataFrame, results: list[dict], failures: pl.DataFrame,
              shortfall: pl.DataFrame, b1: pl.DataFrame | None = None,
              finish: Callable[[dict], None] | None = None) -> Path:
    """Write the run folder atomically and return its final path.

    ``finish(manifest)``, if given, runs after every other file is written and before the
    manifest is, so the manifest can carry the time spent writing the report; it is
    written once, inside the folder before the rename.
    """
    from . import render

    vdir = version_dir(out, manifest["metric_version"])
    vdir.mkdir(parents=True, exist_ok=True)
    final = vdir / run_id
    tmp = vdir / f".tmp-{run_id}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        records.write_parquet(tmp / "records.parquet")
        aggregates.write_parquet(tmp / "aggregates.parquet")
        aggregates.write_csv(tmp / "aggregates.csv")
        shortfall.write_csv(tmp / "shortfall.csv")
        if b1 is not None:
            b1.write_csv(tmp / "b1_reconciliation.csv")
        (tmp / "assertions.json").write_text(to_json({
            "metric_version": manifest["metric_version"],
            "hard_lines_hold": manifest["exit_code"] == 0,
            "results": results,
            "failure_cases": failures.to_dicts(),
        }), encoding="utf-8")
        (tmp / "report.md").write_text(
            render.markdown(manifest, aggregates, results, shortfall, b1), encoding="utf-8")
        (tmp / "report.html").write_text(
            render.html(manifest, aggregates, results, shortfall, b1), encoding="utf-8")
        if finish is not None:
            finish(manifest)
        (tmp / "manifest.json").write_text(to_json(manifest), encoding="utf-8")
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    latest_tmp = vdir / ".LATEST.tmp"
    latest_tmp.write_text(run_id + "\n", encoding="utf-8")
    os.replace(latest_tmp, vdir / "LATEST")
    return final


def base_manifest(run_id: str, created: datetime, table_root: str, table_hash: str, n: int,
                  seeds_per_task: int | None, rows: list[tuple[int, int]]) -> dict:
    import minegen

    return {
        "run_id": run_id,
        "created_utc": created.isoformat(timespec="seconds"),
        "code_version": minegen.__version__,
        "generator_version": GENERATOR_VERSION,
        "metric_version": METRIC_VERSION,
        "git_commit": git_commit(),
        "table_root": table_root,
        "table_hash": table_hash,
        "n": n,
        "rows": [list(r) for r in rows],
        "sigma_formula": SIGMA_FORMULA,
        "seeds_per_task": seeds_per_task,
        "packages": package_versions(),
    }

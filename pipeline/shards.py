"""Resume shards (issue: fault tolerance). While a run goes, every finished row is written
to ``<out>/metric_v<version>/.partial-<run_id>/shards/L<L>-D<D>.parquet`` with a key file;
``minegen audit --resume RUN`` reuses a shard only when its row snapshot, N,
metric_version and generator version all match, and recomputes the rest. Records are
pure functions of those four, so the resumed run's records equal an uninterrupted run's.
The folder also holds ``run.json``: the run's own options, so a resume needs nothing else.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import polars as pl

from minegen.errors import MinegenError
from minegen.plan import RowPlan
from minegen.record import GENERATOR_VERSION, METRIC_VERSION
from minegen.table_loader import row_fields

PARTIAL_PREFIX = ".partial-"


def snapshot_digest(plan: RowPlan) -> str:
    """sha256 of the row snapshot in canonical JSON (sets sorted: no hash-seed order)."""
    doc = {
        "level": plan.level, "depth": plan.depth, "row": row_fields(plan.row),
        "pool": [{**asdict(v), "biome_tag": sorted(v.biome_tag),
                  "counter_item_ids": list(v.counter_item_ids)} for v in plan.pool],
        "dig_ap_cost": plan.dig_ap_cost,
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def shard_key(plan: RowPlan, n: int) -> dict:
    return {"snapshot": snapshot_digest(plan), "n": n, "metric_version": METRIC_VERSION,
            "generator_version": GENERATOR_VERSION}


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class ShardStore:
    def __init__(self, folder: Path):
        self.folder = folder
        self.shards = folder / "shards"

    @property
    def run_id(self) -> str:
        return self.folder.name[len(PARTIAL_PREFIX):]

    @classmethod
    def create(cls, version_dir: Path, run_id: str, facts: dict) -> "ShardStore":
        store = cls(version_dir / f"{PARTIAL_PREFIX}{run_id}")
        store.shards.mkdir(parents=True, exist_ok=False)
        _write_atomic(store.folder / "run.json", json.dumps(facts, indent=2).encode())
        return store

    @classmethod
    def find(cls, run: str, out: str | os.PathLike) -> "ShardStore":
        """``run``: a .partial-* folder, or a run id looked up in <out>/metric_v*/."""
        p = Path(run)
        candidates = [p] if p.name.startswith(PARTIAL_PREFIX) else sorted(
            Path(out).glob(f"metric_v*/{PARTIAL_PREFIX}{run}"))
        for c in candidates:
            if (c / "run.json").is_file():
                return cls(c)
        finished = sorted(Path(out).glob(f"metric_v*/{run}/manifest.json"))
        hint = " (that run already finished)" if finished else ""
        raise MinegenError(f"--resume {run}: no interrupted run found{hint}; looked for "
                           f"{p if p.name.startswith(PARTIAL_PREFIX) else Path(out) / 'metric_v*' / (PARTIAL_PREFIX + run)}")

    def facts(self) -> dict:
        try:
            return json.loads((self.folder / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise MinegenError(f"--resume: {self.folder / 'run.json'} is unreadable: {e}") from e

    def _paths(self, plan: RowPlan) -> tuple[Path, Path]:
        stem = f"L{plan.level}-D{plan.depth}"
        return self.shards / f"{stem}.parquet", self.shards / f"{stem}.json"

    def load(self, plan: RowPlan, n: int) -> pl.DataFrame | None:
        """The row's records if a matching shard exists, else None (recompute)."""
        data, key = self._paths(plan)
        try:
            if json.loads(key.read_text(encoding="utf-8")) != shard_key(plan, n):
                return None
            frame = pl.read_parquet(data)
        except (OSError, ValueError, pl.exceptions.PolarsError):
            return None
        return frame if frame.height == n else None

    def save(self, plan: RowPlan, n: int, frame: pl.DataFrame) -> None:
        data, key = self._paths(plan)
        tmp = data.with_name(data.name + ".tmp")
        frame.write_parquet(tmp)
        os.replace(tmp, data)  # data first, key last: a key always names a complete shard
        _write_atomic(key, json.dumps(shard_key(plan, n)).encode())

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

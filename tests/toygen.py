"""A tiny second generator: proof that the engine, store, analysis and report toolkit serve
any generator through ``pipeline.generator.Generator`` (audited, resumed, diffed and swept
in ``test_toygen.py``, with ``--generator toygen:GENERATOR``).

A table root holds ``toy.toml``: rows keyed by (name: str, size: int) with a hit
probability ``p`` and a per-block ``delay`` in seconds (to make a run slow enough to kill).
Board i of a row draws one uniform value from the portable stream
derive_at("toy:<name>:<size>", i); it is a hit when value < p. One hard line: H, the
share of hits per row must be >= 0.5. A string in the key, a per-row stream name and no
bound on N are on purpose: the tile-match generator has all three.
"""

from __future__ import annotations

import hashlib
import shutil
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from boardcore.errors import Diagnostic, InputError
from boardcore.fields import Field
from boardcore.streams import derive_seeds, fnv1a_64
from pipeline.declarations import Line
from pipeline.capabilities import Drawings
from pipeline.generator import Generator, SweepField, Tune


@dataclass(frozen=True)
class ToyRow:
    name: str
    size: int
    p: float
    delay: float = 0.0


@dataclass(frozen=True)
class ToyTables:
    root: str
    content_hash: str
    rows: tuple[ToyRow, ...]


def _load(root: str | None) -> ToyTables:
    if root is None:
        raise InputError("toygen has no default table root: give --tables")
    path = Path(root).resolve() / "toy.toml"
    try:
        raw = path.read_bytes()
        doc = tomllib.loads(raw.decode())
        rows = tuple(ToyRow(**r) for r in doc["rows"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a toy table ({e})") from None
    bad = [r for r in rows if not 0.0 <= r.p <= 1.0]
    if bad:
        raise InputError(f"{path}: p must be in [0, 1] on rows {[(r.name, r.size) for r in bad]}")
    return ToyTables(str(path.parent), hashlib.sha256(raw).hexdigest(), rows)


class ToyAudit(Generator):
    """The required core and its own row words and cross-row column: it audits, resumes
    and diffs (``AUDIT_ONLY``); it cannot sweep or tune."""

    name = "toygen"
    metric_version = 1
    generator_version = "toy-1"
    seed_rule = "board i: derive_at('toy:<name>:<size>', i)"
    key_fields = ("name", "size")
    index_field = "seed_index"
    record = (
        Field("name", "str", "row name"),
        Field("size", "int64", "row size", ge=1),
        Field("seed_index", "int64", "board index i", ge=0),
        Field("value", "float64", "the board's uniform draw", "share", ge=0.0, le=1.0),
        Field("hit", "bool", "value < p"),
    )
    lines = (Line("H", "hit_share", ">=", 0.5, True, "share of boards that hit",
                  quantity="hit share"),)
    diff_columns = (("p", "p", "snapshot"), ("hit_share", "hit share", "figure"),
                    ("hits", "hits", "count"))

    def load(self, root):
        return _load(root)

    def parse_key(self, text):
        name, _, size = str(text).partition(":")
        if not name or not size.isdigit():
            raise InputError(f"{text!r} is not NAME:SIZE")
        return name, int(size)

    def format_key(self, key):
        return f"{key[0]}:{key[1]}"

    def plans(self, catalog, keys):
        by_key = {(r.name, r.size): r for r in catalog.rows}
        keys = list(keys) or list(by_key)
        missing = [k for k in keys if tuple(k) not in by_key]
        if missing:
            raise InputError(f"no toy row {missing}")
        return [by_key[tuple(k)] for k in sorted(keys)]

    def key(self, plan):
        return plan.name, plan.size

    def snapshot(self, plan):
        return {"name": plan.name, "size": plan.size, "p": plan.p, "delay": plan.delay}

    def block(self, plan, first, count):
        time.sleep(plan.delay)
        seeds = derive_seeds(f"toy:{plan.name}:{plan.size}", first, count)
        value = (seeds >> np.uint64(11)).astype(np.float64) / float(1 << 53)
        return {"name": np.full(count, plan.name, dtype=object),
                "size": np.full(count, plan.size, dtype=np.int64),
                "seed_index": np.arange(first, first + count, dtype=np.int64),
                "value": value, "hit": value < plan.p}

    def aggregations(self):
        return [pl.len().alias("boards"), pl.col("hit").mean().alias("hit_share"),
                pl.col("hit").sum().cast(pl.Int64).alias("hits")]

    def label(self, key):
        return f"{key[0]}/{key[1]}"

    def describe(self, row):
        return f"p {row['p']}, N {row['boards']}"

    def row_columns(self, rows, catalog):
        if catalog is None:
            return rows.with_columns(p=pl.lit(None, pl.Float64))
        p = pl.DataFrame([{"name": r.name, "size": r.size, "p": r.p} for r in catalog.rows],
                         schema={"name": pl.String, "size": pl.Int64, "p": pl.Float64})
        return rows.join(p, on=["name", "size"], how="left")


class Toy(ToyAudit, Tune):
    """The toy with both capabilities: p is swept and tuned upwards by 0.1."""

    sweep_fields = (SweepField("p", "float", "smallest", "a lower p is harder"),)

    def vary(self, catalog, key, field, value):
        (base,) = self.plans(catalog, [key])
        if not 0.0 <= value <= 1.0:
            return None, [Diagnostic("domain", "toy.toml", self.format_key(key), field,
                                     str(value), "p must be in [0, 1]")]
        return ToyRow(base.name, base.size, float(value), base.delay), []

    def current_value(self, catalog, key, field):
        return self.plans(catalog, [key])[0].p

    def tune_candidates(self, catalog, key, lines):
        base = self.current_value(catalog, key, "p")
        return [("p", [round(base + 0.1 * k, 4) for k in range(1, 10) if base + 0.1 * k <= 1])]

    def patch_tables(self, catalog, dst, changes):
        shutil.copytree(catalog.root, dst)
        rows = [ToyRow(r.name, r.size, changes.get((r.name, r.size), {}).get("p", r.p),
                       r.delay) for r in catalog.rows]
        (dst / "toy.toml").write_text("".join(
            f'[[rows]]\nname = "{r.name}"\nsize = {r.size}\np = {r.p}\ndelay = {r.delay}\n\n'
            for r in rows), encoding="utf-8")


AUDIT_ONLY = ToyAudit()
GENERATOR = Toy()


class ToyDrawn(ToyAudit, Drawings):
    """The toy that draws its boards for the report: board i of a row is drawn as a line of
    text; board 3 cannot be drawn (its ``exhibit`` raises), to show what a report does
    without one of its pictures."""

    def exhibit(self, plan, index):
        if index == 3:
            raise ValueError("board 3 cannot be drawn")
        return f"{plan.name}:{plan.size} board {index}"


DRAWN = ToyDrawn()

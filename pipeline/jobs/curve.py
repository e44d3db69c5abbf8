"""The curve is the unit of a proposal (decision 220; issue 30 item 1).

A row's change can hold every line of that row and still break the table around it: a
smaller board at depth 2 than at depth 0 breaks E (monotone in depth), a level made easier
than the one before it breaks M. So ``tune`` judges a set of row changes on the whole
proposed table: the tables patched with every change (``Tune.patch_tables``, loaded as the
audit loads them), the baseline's per-row aggregates with the changed rows replaced by the
candidates' own, and every line of every row evaluated again with the generator's
cross-row columns (``Generator.row_columns`` with the proposed tables). A set is kept only
when no line that held (or did not apply) on a row fails there (a hard line) or warns (an
advisory one), and every hard line holds on the rows it changes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl

from boardcore import files

from ..analysis import lines as L
from ..capabilities import lineage
from ..store import runs


def raw_columns(gen) -> list[str]:
    """The per-row aggregate columns the records give (the key and the aggregations),
    before ``row_columns`` adds what needs the tables or the other rows."""
    return [*gen.key_fields, *(e.meta.output_name() for e in gen.aggregations())]


class Curve:
    """The baseline table and run a tune starts from; ``breaks`` judges a set of
    changes."""

    def __init__(self, gen, catalog, base: runs.Run, scratch: Path):
        """``scratch``: a folder inside the job's output folder, where each judged set's
        patched tables are written and removed again (nothing outside --out)."""
        self.gen, self.catalog, self.base, self.scratch = gen, catalog, base, Path(scratch)
        have = pl.read_parquet_schema(files.checked(base.path / "aggregates.parquet"))
        self.raw = pl.read_parquet(files.checked(base.path / "aggregates.parquet"),
                                   columns=[c for c in raw_columns(gen) if c in have])
        self.checked = 0  # whole-table evaluations made (the tune page says how many)

    def frame(self, changes: dict[tuple, pl.DataFrame]) -> pl.DataFrame:
        """The baseline's raw rows with each changed row replaced by its candidate's."""
        keys = list(self.gen.key_fields)
        changed = pl.DataFrame([dict(zip(keys, k)) for k in changes],
                               schema={k: self.raw.schema[k] for k in keys}, orient="row")
        kept = self.raw.join(changed, on=keys, how="anti") if changes else self.raw
        new = [f.select([c for c in self.raw.columns if c in f.columns])
               for f in changes.values()]
        return pl.concat([kept, *new], how="diagonal_relaxed").sort(keys)

    def breaks(self, changes: dict[tuple, tuple[dict, pl.DataFrame]]) -> list[str]:
        """What the set of changes ({row key: (the row's {field: value}, its candidate's
        raw aggregate row)}) breaks on the whole table, e.g. ``E on (3, 4)``; empty when
        it keeps every line."""
        gen = self.gen
        self.checked += 1
        self.scratch.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="curve-", dir=self.scratch) as scratch:
            root = Path(scratch) / "tables"
            gen.patch_tables(self.catalog, root, {k: c for k, (c, _) in changes.items()})
            proposed = gen.load(str(root))
        # a change may rename its row (tilegen bumps the revision): the proposed table's
        # key of the same lineage (``Generator.lineage``) carries the candidate's figures
        renamed = {lineage(gen, gen.key(p)): gen.key(p) for p in gen.plans(proposed, [])}
        old_of, raws = {}, {}
        for k, (_, raw) in changes.items():
            new = renamed.get(lineage(gen, k), k)
            old_of[new] = k
            raws[k] = raw.with_columns(pl.lit(v).cast(raw.schema[f]).alias(f)
                                       for f, v in zip(gen.key_fields, new))
        frame = gen.row_columns(self.frame(raws), proposed)
        results, _ = L.evaluate(frame, gen.lines, gen.key_fields)
        out = []
        for r in results:
            key = old_of.get(tuple(r[k] for k in gen.key_fields),
                             tuple(r[k] for k in gen.key_fields))
            was = self.base.results.get(key, {}).get(r["line"], {}).get("passed")
            if r["passed"] is False and (was is not False or (key in changes and r["hard"])):
                out.append(f"{r['line']} on {gen.label(key)}")
        return out

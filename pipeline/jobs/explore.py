"""``minegen tune``'s multi-field search (issue 40 item 2): for a row no single field fixes
acceptably, several table fields varied together within the row's intent, by a seeded
black-box optimiser (Optuna's TPE sampler, sequential ask / tell) instead of a hand-written
grid.

The generator declares the space (``Tune.tune_space``: a ``Space`` of named dimensions and
the table change a point of it means, never under the share of a feature the row asks
that ``Cost.keep`` protects). Each
batch asks ``PER_BATCH`` points of every searched row's study, audits them all as one graph
with the audit's seeds (``evaluate.round_of``) and tells each study its points' scores:
the cost to the player for an acceptable candidate with margin, else a penalty that falls
as the candidate nears its lines. The sampler is seeded and told in a fixed order, and every
evaluation is deterministic, so the same tables and N give the same candidates.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..analysis import cost
from ..options import AuditOptions
from ..store import runs
from ..space import Dim, Space
from .evaluate import round_of

SEED = 20261204  # the sampler's seed: part of what makes a tune reproducible
BATCHES = 3  # ask / audit / tell rounds ...
PER_BATCH = 12  # ... of this many points per row: the first batch is the sampler's random
STARTUP = PER_BATCH  # start-up, the later ones its model's (TPE)
FAIL = 10.0  # the least score of a candidate that is not acceptable with margin
INVALID = 1000.0  # a point whose row the table loader refuses


def suggest(trial, dim: Dim):
    if dim.is_int:
        return trial.suggest_int(dim.name, int(dim.low), int(dim.high), step=int(dim.step))
    return trial.suggest_float(dim.name, dim.low, dim.high, step=dim.step)


def score(c: dict, ops: dict) -> float:
    """What the study minimises: the cost of an acceptable candidate with margin; else
    ``FAIL`` plus how far its hard lines are from passing with margin (a share line: its
    interval's distance from the threshold; a count line: its share of the boards)."""
    if c.get("status") != "ok":
        return INVALID
    if cost.acceptable(c) and c["margin"]:
        return c["cost"]
    gap = 0.0
    for name, x in c["lines"].items():
        line = ops.get(name)
        if line is None or x["observed"] is None:
            continue
        if "interval" in x:
            lo, hi = x["interval"]
            gap += max(0.0, line.threshold - lo) if line.op in (">=", ">") else \
                max(0.0, hi - line.threshold)
        elif x["passed"] is False:
            gap += 1.0
    return FAIL + 10 * gap + (5.0 if c["flags"] else 0.0)


def frozen(change: dict) -> str:
    """A change as a hashable value (its values may be lists: a layer distribution)."""
    return json.dumps(change, sort_keys=True, default=str)


def explore(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path,
            spaces: dict[tuple, Space], progress, name: str = "explore"
            ) -> tuple[dict[tuple, list[dict]], str]:
    """Search each row of ``spaces`` -> ({key: its evaluated candidates, in the order they
    were asked}, the scheduler's description). Shards under ``.partial-<name>-<batch>``."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    ops = {ln.name: ln for ln in gen.lines}
    studies = {key: optuna.create_study(direction="minimize", sampler=optuna.samplers.TPESampler(
        seed=SEED, n_startup_trials=STARTUP, multivariate=True)) for key in spaces}
    seen: dict[tuple, dict[str, dict]] = {key: {} for key in spaces}
    out: dict[tuple, list[dict]] = {key: [] for key in spaces}
    scheduler = ""
    for batch in range(BATCHES):
        asked: dict[tuple, list] = {}
        wanted: dict[tuple, list[dict]] = {}
        for key, study in studies.items():
            sp = spaces[key]
            for _ in range(PER_BATCH):
                trial = study.ask()
                change = {**sp.pinned, **sp.change({d.name: suggest(trial, d) for d in sp.dims})}
                asked.setdefault(key, []).append((trial, change))
                if frozen(change) not in seen[key] and \
                        all(frozen(change) != frozen(w) for w in wanted.get(key, [])):
                    wanted.setdefault(key, []).append(change)
        got, sched = round_of(gen, catalog, a, base, folder, f"{name}-{batch}", wanted, progress)
        scheduler = sched or scheduler
        for key, cands in got.items():
            for c in cands:
                c["order"] = 10_000 + len(out[key])  # after every single-field candidate
                seen[key][frozen(c["change"])] = c
                out[key].append(c)
        for key, pairs in asked.items():
            for trial, change in pairs:
                c = seen[key].get(frozen(change))
                studies[key].tell(trial, INVALID if c is None else score(c, ops))
    return out, scheduler


def best(cands: list[dict]) -> dict | None:
    """The best-ranked acceptable candidate (``cost.ranked``), or None."""
    ranked = cost.ranked(cands)
    return ranked[0] if ranked else None


def closest(cands: list[dict], ops: dict) -> dict | None:
    """The candidate nearest to acceptable with margin (the least score): the search's
    evidence for a row it leaves without a proposal."""
    ok = [c for c in cands if c.get("status") == "ok"]
    return min(ok, key=lambda c: (score(c, ops), c["order"])) if ok else None


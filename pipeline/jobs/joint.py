"""Joint changes (issue 40 item 2): where each failing row's own fix breaks a line across
rows (minegen: E, a monotone field falling along a level's depths), the rows of that level
are changed together.

Starting from every row's chosen change (its proposal, or for a row that breaks the curve
its best acceptable candidate), the generator names the least change the other rows need
to keep the cross-row lines (``Tune.tune_joint``: minegen raises each monotone field to the
row before it). Those rows are audited with the audit's seeds; one that then fails a hard
line is searched again (``explore``) with the joint values as floors. This repeats until the
set needs no more change, and the set is kept only when it keeps every line of the whole
table (``Curve.breaks``). The cost of a joint change is the sum of its rows' costs.
"""

from __future__ import annotations

from pathlib import Path

from ..analysis import cost
from ..options import AuditOptions
from ..store import runs
from .curve import Curve
from .evaluate import round_of
from .explore import best, explore, frozen

PASSES = 4  # raise / audit / search rounds at the most (a level of four depths settles)



def good(c: dict) -> bool:
    """Acceptable with margin: what a row of a joint change must be on the audit's boards."""
    return cost.acceptable(c) and bool(c["margin"])


def joint_search(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, curve: Curve,
                 chosen: dict[tuple, dict], progress) -> tuple[dict[tuple, dict] | None, dict]:
    """``chosen``: {key: evaluated candidate} for every row with a change. -> (the joint set
    {key: evaluated candidate}, rows added included; None when none keeps every line),
    evidence {"passes", "rows_added", "breaks" (what the last set broke), "failed" (rows no
    search fixed)}."""
    chosen = dict(chosen)
    evidence: dict = {"passes": 0, "rows_added": [], "breaks": [], "failed": []}
    for i in range(PASSES):
        need = gen.tune_joint(catalog, {k: c["change"] for k, c in chosen.items()})
        new = {k: ch for k, ch in need.items()
               if k not in chosen or frozen(chosen[k]["change"]) != frozen(ch)}
        if not new:
            break
        evidence["passes"] = i + 1
        locked = [k for k in new if gen.locked(catalog, k)]
        if locked:
            evidence["failed"] = [gen.label(k) for k in locked]
            return None, evidence
        got, _ = round_of(gen, catalog, a, base, folder, f"joint-{i}",
                          {k: [ch] for k, ch in new.items()}, progress)
        redo = {}
        for k, (c,) in got.items():
            if k not in chosen:
                evidence["rows_added"].append(gen.label(k))
            if good(c):
                chosen[k] = c
                continue
            failing = [n for n, x in c.get("lines", {}).items() if x["passed"] is False] \
                or [n for n, x in c.get("lines", {}).items() if x.get("within_noise")]
            raised = {f: v for f, v in new[k].items()
                      if k not in chosen or chosen[k]["change"].get(f) != v}
            space = gen.tune_space(catalog, k, failing, floors=raised)
            if space is None:
                evidence["failed"].append(gen.label(k))
                return None, evidence
            redo[k] = space
        if redo:
            found, _ = explore(gen, catalog, a, base, folder, redo, progress,
                               name=f"joint-explore-{i}")
            for k, cands in found.items():
                b = best([c for c in cands if good(c)])
                if b is None:
                    evidence["failed"].append(gen.label(k))
                    return None, evidence
                chosen[k] = b
    evidence["breaks"] = curve.breaks({k: (c["change"], c["_raw"]) for k, c in chosen.items()})
    if evidence["breaks"] or gen.tune_joint(catalog, {k: c["change"]
                                                      for k, c in chosen.items()}):
        return None, evidence
    return chosen, evidence


def spill(gen, catalog, changes: dict[tuple, dict], key: tuple) -> float:
    """How much the other rows must change to keep the cross-row lines with ``changes``
    in place (``Tune.tune_joint``): the sum of each raised value's relative change."""
    total = 0.0
    for k, whole in gen.tune_joint(catalog, changes).items():
        if k == key:
            continue
        for f, v in whole.items():
            old = changes.get(k, {}).get(f, gen.current_value(catalog, k, f))
            if isinstance(v, (int, float)) and isinstance(old, (int, float)) and v != old:
                total += abs(v - old) / max(abs(old), 1e-9)
    return round(total, 6)


def starts(gen, catalog, picks: dict, broken: dict, every: dict) -> dict[tuple, dict]:
    """Each row that breaks the curve starts the joint search from its acceptable candidate
    with margin that asks least of the other rows (``spill``; then the rank order), chosen
    row by row in key order with the ones before it in place."""
    chosen = dict(picks)
    for k in sorted(broken):
        fine = [x for x in cost.ranked(every[k]) if good(x)] or [broken[k][0]]
        changes = {m: c["change"] for m, c in chosen.items()}
        chosen[k] = min(fine, key=lambda x: spill(gen, catalog, {**changes, k: x["change"]}, k))
    return chosen

"""``minegen tune``'s search: every failing row's candidates audited as one graph with the
audit's seeds, evaluated (holds, margin, cost, flags: ``analysis.cost``) and decided.

1. One field at a time: ``Tune.tune_candidates`` (fields in the drill-down's order, each
   from the smallest change out), each varied row validated in memory (``vary_many``).
2. For a row no single field fixes acceptably: pairs of its first ``PAIR_FIELDS`` fields,
   ``PAIR_VALUES`` values of each (the smallest change, the middle, the largest valid).
3. Per row the best-ranked acceptable candidate and its class ("one field", "several
   fields"), else "structural" with the rule behind it (``Tune.structural``), the best
   value each line reached and the candidates that hold only by removing a feature.

Each round's rows stream to shards (``.partial-candidates``, ``.partial-pairs`` under the
tune's folder), so an interrupted tune resumes and recomputes only what is missing.
"""

from __future__ import annotations

from pathlib import Path

from ..analysis import cost
from ..analysis import lines as L
from ..analysis.collect import ROW, collect_each
from ..engine import spot
from ..engine.run import execute
from ..options import AuditOptions
from ..store import runs
from ..store.shards import ShardStore, shard_key
from .audit import announce


PAIR_FIELDS = 4  # the pair search: pairs of the row's first 4 candidate fields ...
PAIR_VALUES = 3  # ... 3 values each (the smallest change, the middle, the largest valid)


def search(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, progress) -> dict:
    """Every failing row's candidates, ranked (``analysis.cost``): one field at a time, then,
    for a row no single field fixes acceptably, pairs of fields within the stated budget."""
    failing: dict[tuple, list[str]] = {}
    for key, results in base.results.items():
        names = [n for n, r in results.items() if r.get("hard") and r.get("passed") is False]
        if names:
            failing[key] = names
    locked = {k: v for k, v in failing.items() if gen.locked(catalog, k)}
    todo = {k: v for k, v in sorted(failing.items()) if k not in locked}
    singles = {key: [{fld: value} for fld, values in gen.tune_candidates(catalog, key, names)
                     for value in values] for key, names in todo.items()}
    tried, scheduler = _round(gen, catalog, a, base, folder, "candidates", singles, progress)
    pairs = {key: _pairs(tried[key]) for key in todo
             if not any(cost.acceptable(c) for c in tried[key])}
    more, scheduler2 = _round(gen, catalog, a, base, folder, "pairs",
                              {k: v for k, v in pairs.items() if v}, progress)
    rows, changes = [], {}
    for key, names in todo.items():
        every = tried[key] + more.get(key, [])
        row = _decide(gen, catalog, key, names, every, base.rows.get(key) or {},
                      searched_pairs=key in pairs)
        rows.append(row)
        if row["change"]:
            changes[key] = {f["field"]: f["new"] for f in row["change"]["fields"]}
    return {"rows": rows, "changes": {gen.label(k): v for k, v in changes.items()},
            "_changes": changes, "scheduler": scheduler2 or scheduler,
            "budget": {"pair_fields": PAIR_FIELDS, "pair_values": PAIR_VALUES},
            "line_words": {ln.name: ln.what for ln in gen.lines},
            "row_texts": {gen.label(k): gen.format_key(k) for k in todo},
            "field_names": {m.field: m.shown for ln in gen.lines for m in ln.moves if m.shown},
            "share_lines": [ln.name for ln in gen.lines if ln.hard and ln.trials],
            "costs": [{"label": c.label, "unit": c.unit, "keep": c.keep,
                       "feature": c.feature, "digits": c.digits} for c in gen.tune_costs],
            "locked": [{"key": list(k), "label": gen.label(k), "lines": v, "class": "locked",
                        "why": gen.locked_why(catalog, k),
                        "figures": cost.figures(gen.tune_costs, base.rows.get(k))}
                       for k, v in sorted(locked.items())]}


def _pairs(single: list[dict]) -> list[dict]:
    """Pairs of the first PAIR_FIELDS fields with valid single candidates, PAIR_VALUES of
    each field's valid values spread from the smallest change to the largest."""
    by_field: dict[str, list] = {}
    for c in single:
        if c["status"] == "ok":
            ((fld, value),) = c["change"].items()
            by_field.setdefault(fld, []).append(value)
    fields = list(by_field)[:PAIR_FIELDS]
    return [{f1: v1, f2: v2} for i, f1 in enumerate(fields) for f2 in fields[i + 1:]
            for v1 in _spread(by_field[f1]) for v2 in _spread(by_field[f2])]


def _spread(values: list) -> list:
    if len(values) <= PAIR_VALUES:
        return values
    last = len(values) - 1
    return [values[round(i * last / (PAIR_VALUES - 1))] for i in range(PAIR_VALUES)]


def _round(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, name: str,
           wanted: dict[tuple, list[dict]], progress) -> tuple[dict[tuple, list], str]:
    """Run every valid candidate of every row as one graph (shards under
    ``.partial-<name>``, so an interrupted tune resumes) -> ({key: evaluated candidates in
    the declared order}, the scheduler's description)."""
    out: dict[tuple, list] = {key: [] for key in wanted}
    plans, meta = [], []
    for key, changes in wanted.items():
        for order, change in enumerate(changes):
            plan, diags = gen.vary_many(catalog, key, change)
            entry = {"change": change, "field": " + ".join(change),
                     "value": next(iter(change.values())) if len(change) == 1
                     else list(change.values()), "order": order}
            if plan is None:
                out[key].append({**entry, "status": "invalid",
                                 "rule": diags[0].rule if diags else ""})
                continue
            meta.append((key, entry))
            plans.append(plan)
    if not plans:
        return out, ""
    cand = folder / f"{runs.PARTIAL_PREFIX}{name}"  # kept by an interrupted tune
    store = ShardStore(cand) if (cand / "run.json").is_file() else \
        ShardStore.create(folder, name, {name: len(plans)})
    expects = [shard_key(gen, p, a.n) for p in plans]
    kept = set(spot.reusable(gen, store, plans, expects, announce))  # an interrupted tune's
    todo = [i for i in range(len(plans)) if i not in kept]
    with execute(gen, a.cluster(scratch=str(store.folder / "scratch")), plans, todo, a.n,
                 a.seeds_per_task, store, expects, progress, what="tune",
                 announce=announce) as ex:
        ex.close_soon()
        verdicts = [_verdict(gen, got)
                    for _, got in collect_each(gen, store.rows(list(range(len(plans)))))]
    for (key, entry), v in zip(meta, verdicts):
        out[key].append(_evaluated(gen, base.rows.get(key) or {}, entry, v))
    for key in out:
        out[key].sort(key=lambda c: c["order"])
    store.remove()
    return out, ex.scheduler


def _verdict(gen, got) -> dict:
    """A candidate's lines and figures from its collected records."""
    frame = gen.row_columns(got.rows.drop(ROW), None)
    results, _ = L.evaluate(frame, gen.lines, gen.key_fields)
    hard = [r for r in results if r["hard"] and r["applies"]]
    return {"holds": not L.hard_failures(results), "records_sha256": got.records_sha256,
            "row": frame.to_dicts()[0],
            "lines": {r["line"]: {"observed": r["observed"], "passed": r["passed"],
                                  **({"interval": r["interval"],
                                      "within_noise": r["within_noise"]}
                                     if "interval" in r else {})} for r in hard}}


def _evaluated(gen, base_row: dict, entry: dict, verdict: dict) -> dict:
    """A candidate's verdict with its cost to the player, its flags and its margin."""
    before = cost.figures(gen.tune_costs, base_row)
    after = cost.figures(gen.tune_costs, verdict["row"])
    ops = {ln.name: ln for ln in gen.lines}
    noise = [{"line": n, "observed": x["observed"], "interval": x["interval"],
              "threshold": ops[n].threshold,
              "n_needed": cost.n_to_clear(x["observed"], ops[n].threshold,
                                          above=ops[n].op in (">=", ">"))}
             for n, x in verdict["lines"].items() if x.get("within_noise")]
    return {**entry, "status": "ok", "holds": verdict["holds"],
            "margin": verdict["holds"] and not noise, "noise": noise,
            "lines": verdict["lines"], "records_sha256": verdict["records_sha256"],
            "figures": after, "cost": cost.cost(gen.tune_costs, before, after),
            "flags": cost.flags(gen.tune_costs, base_row, after) if verdict["holds"] else []}


def _decide(gen, catalog, key: tuple, names: list[str], tried: list[dict], base_row: dict,
            searched_pairs: bool) -> dict:
    """A failing row's class and proposal: the best-ranked acceptable candidate ("one
    field" or "several fields"), else "structural" with the rule behind it and the best
    each line reached."""
    valid = sorted((c for c in tried if c["status"] == "ok"), key=cost.rank_key)
    good = [c for c in valid if cost.acceptable(c)]
    flagged = [c for c in valid if c["holds"] and c["flags"]]
    pick = good[0] if good else None

    def literal(c: dict) -> str:
        return _summary(_edits(gen, catalog, key, c["change"]))

    row = {"key": list(key), "label": gen.label(key), "lines": names, "tried": tried,
           "figures": cost.figures(gen.tune_costs, base_row),
           "pairs_searched": searched_pairs,
           "best": {n: {**b, "at": literal(b.pop("candidate"))}
                    for n, b in _best(gen, tried, names).items()},
           "alternatives": [literal(c) for c in good[1:3]],
           "flagged": [{"change": literal(c), "flags": c["flags"], "figures": c["figures"]}
                       for c in flagged[:2]]}
    if pick is None:
        return {**row, "class": "structural", "change": None,
                "why": gen.structural(base_row, names)}
    fields = [{"field": f, "old": gen.current_value(catalog, key, f), "new": v}
              for f, v in pick["change"].items()]
    edits = _edits(gen, catalog, key, pick["change"])
    return {**row, "class": "one field" if len(fields) == 1 else "several fields",
            "change": {"fields": fields, "summary": _summary(edits), "edits": edits,
                       "margin": pick["margin"], "noise": pick["noise"],
                       "cost": pick["cost"], "figures": pick["figures"],
                       "evidence": {n: pick["lines"][n] for n in names
                                    if n in pick["lines"]}},
           "why": ""}


def _edits(gen, catalog, key: tuple, change: dict) -> list[list[str]]:
    """A candidate as the table file's lines [key, old, new], each key once (a pair of
    tilegen fields says the revision bump once)."""
    out, seen = [], set()
    for f, v in change.items():
        for e in gen.table_edits(catalog, key, f, gen.current_value(catalog, key, f), v):
            if e[0] not in seen:
                seen.add(e[0])
                out.append(list(e))
    return out


def _summary(edits: list[list[str]]) -> str:
    """The new lines, as the file will read: ``board_width = 24, board_height = 24``."""
    return ", ".join(f"{k} = {n}" for k, _, n in edits)


def _best(gen, tried: list[dict], lines: list[str]) -> dict:
    """Per failing line, the best observed value any candidate reached (the evidence for a
    row no change fixes): the largest for a line that needs >= or >, else the smallest
    (read from the line's declaration)."""
    ops = {ln.name: ln.op for ln in gen.lines}
    out = {}
    for name in lines:
        seen = [(c["lines"][name]["observed"], i) for i, c in enumerate(tried)
                if c.get("lines", {}).get(name, {}).get("observed") is not None]
        if seen:
            obs, i = max(seen) if ops.get(name) in (">=", ">") else min(seen)
            out[name] = {"observed": obs, "candidate": tried[i]}
    return out



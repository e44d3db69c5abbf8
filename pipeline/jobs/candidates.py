"""``minegen tune``'s search: every failing row's candidates audited as one graph with the
audit's seeds, evaluated (holds, margin, cost, flags: ``analysis.cost``) and decided.

1. One field at a time: ``Tune.tune_candidates`` (fields in the drill-down's order, each
   from the smallest change out), each varied row validated in memory (``vary_many``).
2. For a row no single field fixes with margin: its fields searched together where the
   generator declares a space (``explore``: a seeded sampler), else pairs of its first
   ``PAIR_FIELDS`` fields, ``PAIR_VALUES`` values of each (smallest, middle, largest).
3. The proposals chosen together on the whole table (``curve``), rows whose own fixes break
   it changed with their level (``joint``), every proposal confirmed on fresh boards
   (``confirm``; both in ``settle``).
4. Per row its class ("one field", "several fields", "joint change", "not confirmed"),
   else "structural" with the rule behind it (``Tune.structural``), the best value each
   line reached and the candidates that hold only by removing a feature.

Each round's rows stream to shards (``.partial-candidates``, ``.partial-pairs`` under the
tune's folder), so an interrupted tune resumes and recomputes only what is missing.
"""

from __future__ import annotations

from pathlib import Path

from ..analysis import cost
from ..options import AuditOptions
from ..store import runs
from .curve import Curve
from .evaluate import round_of, run_batch
from .explore import explore, frozen
from .settle import confirm_words, confirmation, consequences, joint_rows, settle


PAIR_FIELDS = 4  # the pair search: pairs of the row's first 4 candidate fields ...
PAIR_VALUES = 3  # ... 3 values each (the smallest change, the middle, the largest valid)


def search(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, progress) -> dict:
    """Every failing row's candidates, ranked (``analysis.cost``): one field at a time, then,
    for a row no single field fixes acceptably without breaking the table around it, pairs
    of fields within the stated budget. The proposals are then chosen together, on the
    whole proposed table (``curve``): rows that share their values get one change."""
    todo, locked = _failing(gen, catalog, base)
    singles = {key: [value if isinstance(value, dict) else {fld: value}
                     for fld, values in gen.tune_candidates(catalog, key, names)
                     for value in values] for key, names in todo.items()}
    tried, scheduler = round_of(gen, catalog, a, base, folder, "candidates", singles, progress)
    curve = Curve(gen, catalog, base, folder)
    spaces = {key: sp for key in todo if not _keeps_alone(curve, key, tried[key], margin=True)
              and (sp := gen.tune_space(catalog, key, todo[key])) is not None}
    pairs = {key: _pairs(tried[key]) for key in todo
             if key not in spaces and not _keeps_alone(curve, key, tried[key])}
    more, scheduler2 = round_of(gen, catalog, a, base, folder, "pairs",
                                {k: v for k, v in pairs.items() if v}, progress)
    found, scheduler3 = explore(gen, catalog, a, base, folder, spaces, progress)
    every = {key: tried[key] + more.get(key, []) + found.get(key, []) for key in todo}
    picks, broken, groups = _choose(gen, curve, todo, every)
    done = settle(gen, catalog, a, base, folder, curve, todo, every, picks, broken, progress)
    final = {k: (c["change"], c["_raw"]) for k, c in {**done.picks, **done.added}.items()}
    # what the proposals together break with their confirmation boards' figures (an
    # advisory line near its threshold can move between board sets): said on the page
    final_breaks = curve.breaks(final) if final else []

    def on_table(key: tuple, c: dict) -> list[str]:
        """What candidate ``c`` of row ``key`` would break, put in place of the row's own
        proposal among all the others (an alternative is shown with it, never as a fix),
        beyond what the proposals break together."""
        return [b for b in curve.breaks({**final, key: (c["change"], c["_raw"])})
                if b not in final_breaks]

    rows, changes = _rows(gen, catalog, base, todo, every, done, pairs, broken, groups, spaces,
                          found, on_table)
    consequences(gen, base, rows)  # what dropping a feature does to the row's curve
    what_if = _what_ifs(gen, catalog, a, base, folder,
                        [r for r in rows if not r["change"]], progress)
    for cands in every.values():  # the raw frames served the curve: not part of tune.json
        for c in cands:
            c.pop("_raw", None)
    return {"rows": rows, "changes": {gen.label(k): v for k, v in changes.items()},
            "_changes": changes,
            "scheduler": what_if or scheduler3 or scheduler2 or scheduler,
            "joint": joint_rows(gen, done, lambda k, ch: _summary(_edits(gen, catalog, k, ch))),
            "confirm_boards": confirm_words(gen, a.n), "joint_search": done.joint,
            "final_breaks": final_breaks, **_described(gen, catalog, base, todo, locked, curve)}


def _failing(gen, catalog, base: runs.Run) -> tuple[dict, dict]:
    """The rows failing a hard line -> (the rows to tune, {key: failing line names} in key
    order; the rows ``tune_locked`` keeps as they are)."""
    failing: dict[tuple, list[str]] = {}
    for key, results in base.results.items():
        names = [n for n, r in results.items() if r.get("hard") and r.get("passed") is False]
        if names:
            failing[key] = names
    locked = {k: v for k, v in failing.items() if gen.locked(catalog, k)}
    return {k: v for k, v in sorted(failing.items()) if k not in locked}, locked


def _rows(gen, catalog, base, todo, every, done, pairs, broken, groups, spaces, found,
          on_table) -> tuple[list[dict], dict]:
    """Each tuned row's entry (its decision, its confirmation) and the table changes of the
    proposals -> (rows, {key: {field: value}}), the rows a joint change edits included."""
    rows, changes = [], {}
    for key, names in todo.items():
        row = _decide(gen, catalog, key, names, every[key], base.rows.get(key) or {},
                      searched_pairs=key in pairs, pick=done.picks.get(key),
                      broken=None if key in done.picks else broken.get(key),
                      group=groups.get(key, []), on_table=lambda c, key=key: on_table(key, c))
        row.update(confirmation(gen, key, done, spaces.get(key), found.get(key),
                                lambda ch, key=key: _summary(_edits(gen, catalog, key, ch))))
        rows.append(row)
        if row["change"]:
            changes[key] = {f["field"]: f["new"] for f in row["change"]["fields"]}
    for key, c in done.added.items():  # rows a joint change edits that did not fail
        changes[key] = c["change"]
    return rows, changes


def _described(gen, catalog, base, todo: dict, locked: dict, curve: Curve) -> dict:
    """What the tune page needs to word the search: its budget, the lines and their words,
    the rows' names, the cost figures and the locked rows."""
    return {"budget": {"pair_fields": PAIR_FIELDS, "pair_values": PAIR_VALUES},
            "curve": {"lines": [ln.name for ln in gen.lines], "checked": curve.checked,
                      "cost_tie": cost.COST_TIE},
            "line_words": {ln.name: ln.what for ln in gen.lines},
            "row_texts": {gen.label(k): gen.format_key(k) for k in todo},
            "field_names": {m.field: m.shown for ln in gen.lines for m in ln.moves if m.shown},
            "lock_key": gen.lock_key,
            "share_lines": [ln.name for ln in gen.lines if ln.hard and ln.trials],
            "costs": [{"label": c.label, "unit": c.unit, "keep": c.keep,
                       "feature": c.feature, "digits": c.digits}
                      for c in (*gen.tune_costs, *getattr(gen, "tune_shown", ()))],
            "ranked": [c.label for c in gen.tune_costs],
            "locked": [{"key": list(k), "label": gen.label(k), "lines": v, "class": "locked",
                        "why": gen.locked_why(catalog, k),
                        "figures": cost.figures(gen.tune_costs, base.rows.get(k))}
                       for k, v in sorted(locked.items())]}


def _keeps_alone(curve: Curve, key: tuple, cands: list[dict], margin: bool = False) -> bool:
    """True when some acceptable candidate of the row (``margin``: with margin), applied
    alone, keeps every line of the whole table (then no pair is searched for the row)."""
    return any(not curve.breaks({key: (c["change"], c["_raw"])})
               for c in cost.ranked(cands) if c["margin"] or not margin)


def _group_key(names: list[str], cands: list[dict]) -> tuple:
    """Rows with the same failing lines and the same candidates (their table values are
    the same) form a group: they get one change unless none suits every member."""
    return (tuple(names), tuple((frozen(c["change"]), c["status"]) for c in cands))


def _choose(gen, curve: Curve, todo: dict, every: dict):
    """The proposals, chosen together in row order: per group of like rows the best-ranked
    change acceptable on every member that keeps the whole table, with every proposal
    chosen before it; else per row. -> (picks {key: candidate}, broken {key: (the best
    acceptable candidate, what it breaks)} for rows left without a proposal, groups {key:
    the other members' labels})."""
    by_group: dict[tuple, list[tuple]] = {}
    for key, names in todo.items():
        by_group.setdefault(_group_key(names, every[key]), []).append(key)
    accepted: dict[tuple, tuple[dict, object]] = {}
    picks, broken, groups = {}, {}, {}

    def attempt(members: list[tuple], per_member: dict[tuple, dict]) -> list[str]:
        trial = {**accepted, **{m: (per_member[m]["change"], per_member[m]["_raw"])
                                for m in members}}
        return curve.breaks(trial)

    for members in by_group.values():
        if len(members) > 1:
            shared = _shared(members, every)
            for change in shared:
                got = attempt(members, change)
                if not got:
                    for m in members:
                        picks[m] = change[m]
                        accepted[m] = (change[m]["change"], change[m]["_raw"])
                        groups[m] = [gen.label(o) for o in members if o != m]
                    break
                for m in members:
                    broken.setdefault(m, (change[m], got))
            if all(m in picks for m in members):
                continue
        for m in members:  # alone: no change suits every member of the group
            for c in cost.ranked(every[m]):
                got = attempt([m], {m: c})
                if not got:
                    picks[m] = c
                    accepted[m] = (c["change"], c["_raw"])
                    break
                broken.setdefault(m, (c, got))
    return picks, {k: v for k, v in broken.items() if k not in picks}, groups


def _shared(members: list[tuple], every: dict) -> list[dict[tuple, dict]]:
    """The changes acceptable on every member, as {member: its candidate}, ranked by the
    members' pooled figures (margin on all, mean cost; ties to the smallest change)."""
    by_change: dict[str, dict[tuple, dict]] = {}
    for m in members:
        for c in every[m]:
            if cost.acceptable(c):
                by_change.setdefault(frozen(c["change"]), {})[m] = c
    common = [d for d in by_change.values() if len(d) == len(members)]
    pooled = [{"holds": True, "flags": [], "margin": all(c["margin"] for c in d.values()),
               "cost": round(sum(c["cost"] for c in d.values()) / len(d), 6),
               "order": min(c["order"] for c in d.values()), "_members": d} for d in common]
    return [p["_members"] for p in cost.ranked(pooled)]


def _pairs(single: list[dict]) -> list[dict]:
    """Pairs of the first PAIR_FIELDS fields with valid single candidates, PAIR_VALUES of
    each field's valid values spread from the smallest change to the largest."""
    by_field: dict[str, list] = {}
    for c in single:
        if c["status"] == "ok" and len(c["change"]) == 1:  # a change of several keys
            ((fld, value),) = c["change"].items()  # (dropping a feature) is not paired
            by_field.setdefault(fld, []).append(value)
    fields = list(by_field)[:PAIR_FIELDS]
    return [{f1: v1, f2: v2} for i, f1 in enumerate(fields) for f2 in fields[i + 1:]
            for v1 in _spread(by_field[f1]) for v2 in _spread(by_field[f2])]


def _spread(values: list) -> list:
    if len(values) <= PAIR_VALUES:
        return values
    last = len(values) - 1
    return [values[round(i * last / (PAIR_VALUES - 1))] for i in range(PAIR_VALUES)]


def _what_ifs(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, rows: list[dict],
              progress) -> str:
    """Issue 30 item 5: for each row left without a proposal whose failure a rule of the
    generator causes (``Tune.what_ifs``), that rule changed, run with the audit's seeds and
    put in the row as ``what_if`` (the rule in words, its lines and figures): what changing
    the rule would buy, for the design team; never a proposal (no table holds it)."""
    out: dict[tuple, list] = {}
    plans, meta = [], []
    for row in rows:
        key = tuple(row["key"])
        for order, (rule, plan) in enumerate(gen.what_ifs(catalog, key, row["lines"],
                                                          base.rows.get(key) or {})):
            out.setdefault(key, [])
            meta.append((key, {"rule": rule, "change": {}, "order": order}))
            plans.append(plan)
    got, scheduler = run_batch(gen, a, base, folder, "what-if", out, meta, plans, progress)
    for row in rows:
        for c in got.get(tuple(row["key"]), [])[:1]:
            row["what_if"] = {k: c[k] for k in ("rule", "holds", "margin", "noise", "lines",
                                                 "figures", "shown", "errors",
                                                 "records_sha256")}
    return scheduler


def _decide(gen, catalog, key: tuple, names: list[str], tried: list[dict], base_row: dict,
            searched_pairs: bool, pick: dict | None = None,
            broken: tuple[dict, list[str]] | None = None, group: list[str] = (),
            on_table=lambda c: []) -> dict:
    """A failing row's class and proposal: ``pick`` ("one field" or "several fields"),
    else "breaks the curve" when acceptable changes exist but each breaks another line of
    the table (``broken``: the best of them and what it breaks), else "structural" with the
    rule behind it and the best each line reached. The alternatives and the options that
    remove a feature carry what each would break on the whole table (``on_table``)."""
    valid = sorted((c for c in tried if c["status"] == "ok"), key=cost.rank_key)
    good = [c for c in cost.ranked(tried)
            if pick is None or frozen(c["change"]) != frozen(pick["change"])]
    flagged = [c for c in valid if c["holds"] and c["flags"]]
    drop = next((c for c in valid if cost.drops_feature(gen.tune_costs, c["figures"])),
                None)  # the row without its feature (minegen: no fog), measured
    flagged = [c for c in flagged if c is not drop]

    def literal(c: dict) -> str:
        return _summary(_edits(gen, catalog, key, c["change"]))

    row = {"key": list(key), "label": gen.label(key), "lines": names, "tried": tried,
           "figures": cost.figures(gen.tune_costs, base_row),
           "shown": cost.figures(getattr(gen, "tune_shown", ()), base_row),
           "errors": cost.errors((*gen.tune_costs, *getattr(gen, "tune_shown", ())),
                                 base_row),
           "asked": {c.label: c.intent(base_row) for c in gen.tune_costs
                     if c.intent is not None and base_row},
           "pairs_searched": searched_pairs, "group": list(group),
           "best": {n: {**b, "at": literal(b.pop("candidate"))}
                    for n, b in _best(gen, tried, names).items()},
           "alternatives": [{"change": literal(c), "figures": c["figures"],
                             "errors": c["errors"], "margin": c["margin"], "cost": c["cost"],
                             "breaks": on_table(c)} for c in good[:2]],
           "flagged": [{"change": literal(c), "flags": c["flags"], "figures": c["figures"],
                        "breaks": on_table(c)} for c in flagged[:2]],
           "drop": None if drop is None else {
               "change": literal(drop), "holds": drop["holds"], "margin": drop["margin"],
               "figures": drop["figures"], "shown": drop.get("shown", {}),
               "errors": drop["errors"],
               "failing": [n for n, x in drop["lines"].items() if x["passed"] is False],
               "breaks": on_table(drop) if drop["holds"] else []},
           "untried": _untried(gen, catalog, key, names, tried)}
    if pick is None and broken is not None:
        c, what = broken
        return {**row, "class": "breaks the curve", "change": None,
                "breaks": {"change": literal(c), "lines": what, "cost": c["cost"],
                           "figures": c["figures"]},
                "why": f"{literal(c)} fixes it but breaks {', '.join(what)}"}
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
                       "shown": pick.get("shown", {}), "errors": pick["errors"],
                       "evidence": {n: pick["lines"][n] for n in names
                                    if n in pick["lines"]}},
           "why": ""}


def _untried(gen, catalog, key: tuple, names: list[str], tried: list[dict]) -> list[str]:
    """The fields the drill-down recommends for the row's lines that tune did not try, each
    with the reason (a field with no valid value in its direction, or none to try)."""
    seen = {f for c in tried if c["status"] == "ok" for f in c["change"]}
    out = []
    for ln in gen.lines:
        if ln.name not in names:
            continue
        for m in ln.moves:
            if m.field in seen or any(f in (m.shown or "") for f in seen) \
                    or any(o.startswith(f"{m.shown or m.field}:") for o in out):
                continue  # tried (a knob of two keys counts when either was tried)
            bad = [c for c in tried if m.field in c["change"] and c["status"] != "ok"]
            why = (f"every value tried was invalid ({bad[0].get('rule', '')})" if bad else
                   f"no value to try {m.way} from {gen.current_value(catalog, key, m.field)}")
            out.append(f"{m.shown or m.field}: {why}")
    return out


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



"""From ranked candidates to the proposals a designer may apply (issue 40 items 1-2):
rows whose own fixes break the curve get a joint change (``joint``), then every proposal is
confirmed on fresh boards (``confirm``) and only those that hold there stay proposals.

``settle`` returns, per row, the candidate evaluated on the confirmation boards (its
figures are the ones every page shows after the change), the joint groups, the rows a
joint change adds, and for each row whose proposal did not hold there the evidence: the
change, the figures on the fresh boards and the boards that would settle it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..analysis import cost
from ..options import AuditOptions
from ..store import runs
from .confirm import ALTERNATES, confirm, words
from .curve import Curve
from .explore import frozen
from .joint import good, joint_search, starts



@dataclass
class Settled:
    picks: dict = field(default_factory=dict)  # {key: candidate on the fresh boards}
    chosen_on: dict = field(default_factory=dict)  # {key: the candidate as ranked}
    groups: dict = field(default_factory=dict)  # {key: [labels of its joint group]}
    added: dict = field(default_factory=dict)  # {key: fresh candidate}: rows a joint adds
    unconfirmed: dict = field(default_factory=dict)  # {key: {change, lines, boards ...}}
    joint: dict = field(default_factory=dict)  # the joint search's evidence
    attempts: dict = field(default_factory=dict)  # {key: [(change, held on fresh boards)]}


def settle(gen, catalog, a: AuditOptions, base: runs.Run, folder: Path, curve: Curve,
           todo: dict, every: dict, picks: dict, broken: dict, progress) -> Settled:
    out = Settled()
    members: dict[tuple, list[tuple]] = {}
    added: dict = {}
    if broken:  # the rows whose own fixes break the curve, changed with their level
        start = starts(gen, catalog, picks, broken, every)
        js, out.joint = joint_search(gen, catalog, a, base, folder, curve, start, progress)
        out.joint["broke"] = {gen.label(k): what for k, (_, what) in broken.items()}
        if js is not None:
            moved = sorted(k for k, c in js.items()
                           if k in broken or k not in picks or c is not picks[k])
            for k in moved:
                members[k] = moved
            picks = {**picks, **{k: js[k] for k in moved if k in todo}}
            added = {k: js[k] for k in moved if k not in todo}
    every_pick = {**picks, **added}
    sets = _sets(curve, every, picks, members, every_pick)
    fresh = confirm(gen, catalog, a, base, folder, sets, progress)
    for k, results in fresh.items():
        _settled(gen, out, members.get(k, [k]), results, every, every_pick, added)
    return out


def _sets(curve: Curve, every: dict, picks: dict, members: dict, every_pick: dict) -> dict:
    """The change sets to confirm on fresh boards: one per joint group; for any other row
    its proposal, then up to ALTERNATES next-ranked changes that keep the whole table."""
    final = {k: (c["change"], c["_raw"]) for k, c in every_pick.items()}
    sets: dict[tuple, list[dict]] = {}
    for group in {tuple(g) for g in members.values()}:  # one set per joint group
        sets[group[0]] = [{m: every_pick[m]["change"] for m in group}]
    for k, c in picks.items():
        if k in members:
            continue
        alts = []
        for x in cost.ranked(every[k]):  # the next-ranked that keep the table, lazily:
            if len(alts) == ALTERNATES:  # each whole-table check loads a patched table
                break
            if frozen(x["change"]) != frozen(c["change"]) \
                    and not curve.breaks({**final, k: (x["change"], x["_raw"])}):
                alts.append(x)
        sets[k] = [{k: x["change"]} for x in [c, *alts]]
    return sets


def _settled(gen, out: Settled, group: list, results: list, every: dict, every_pick: dict,
             added: dict) -> None:
    """One confirmed set's outcome into ``out``: the attempts of each member up to the first
    set that held everywhere; its changes as the members' picks (or added rows), else the
    proposal as not confirmed, with its fresh boards' figures."""
    held = next((r for r in results if all(good(x) for x in r.values())), None)
    for m in group:
        out.attempts[m] = [(r[m]["change"], all(good(x) for x in r.values()))
                           for r in results[:results.index(held) + 1 if held else None]]
    if held is None:
        first = results[0]
        for m in group:
            x = first[m]
            out.unconfirmed[m] = {
                "change": x["change"], "boards": x["boards"], "lines": x["lines"],
                "noise": x["noise"], "group": [gen.label(g) for g in group if g != m]}
        return
    for m in group:
        was = every_pick[m]
        if len(results) > 1:  # an alternate held where the proposal did not
            was = next((x for x in every[m] if frozen(x["change"]) ==
                        frozen(held[m]["change"])), was)
        out.chosen_on[m] = was
        target = out.added if m in added else out.picks
        target[m] = {**held[m], "order": was.get("order", 0)}
        if len(group) > 1:
            out.groups[m] = [gen.label(g) for g in group if g != m]


def confirm_words(gen, n: int) -> str:
    """Which boards confirm a proposal, as the pages say it."""
    return (f"{words(gen, n, False)}; a change that gives the row new seeds (a new "
            f"revision) on {words(gen, n, True)}")


def confirmation(gen, key: tuple, done: Settled, space, found: list | None, literal) -> dict:
    """What the tune page says of a row beyond its class: the boards its proposal was
    confirmed on and its figures where it was chosen; for a proposal that did not hold
    there, class "not confirmed" with the figures and the boards that would settle it;
    the multi-field search's space and its best point (the evidence for a row left
    without a proposal). ``literal(change)``: a change as the table file's lines."""
    out: dict = {}
    if key in done.groups:
        out.update({"class": "joint change", "joint_group": done.groups[key]})
    if key in done.picks:
        was = done.chosen_on[key]
        out["confirmed"] = {"boards": done.picks[key]["boards"], "chosen_on": was["lines"],
                            "chosen_change": literal(was["change"])}
    if key in done.attempts:  # in rank order: those that did not hold, then the one that did
        out.setdefault("confirmed", {})["attempts"] = [
            {"change": change, "summary": literal(change), "held": held}
            for change, held in done.attempts[key]]
    if key in done.unconfirmed:
        u = done.unconfirmed[key]
        need = max((x["n_needed"] or 0 for x in u["noise"]), default=0)
        failing = [n for n, x in u["lines"].items() if x["passed"] is False]
        out.update({"class": "not confirmed", "change": None, "unconfirmed": {
            **u, "change": literal(u["change"]), "n_needed": need or None,
            "failing": failing},
            "why": f"{literal(u['change'])} held on the audit's boards but not on "
                   f"{u['boards']}: " + (f"{', '.join(failing)} fails there" if failing else
                                          "within noise there")})
    if space is not None:
        from .explore import closest

        near = closest(found or [], {ln.name: ln for ln in gen.lines})
        out["searched"] = {"space": space.words, "points": len(found or []),
                           "best": None if near is None else {
                               "change": literal(near["change"]), "lines": near["lines"],
                               "holds": near["holds"], "margin": near["margin"]}}
    return out


def joint_rows(gen, done: Settled, literal) -> list[dict]:
    """The rows a joint change edits although they did not fail, each with its change
    and figures on the confirmation boards (the page lists them with the group);
    ``literal(key, change)``: a change as the table file's lines."""
    return [{"key": list(k), "label": gen.label(k), "change": literal(k, c["change"]),
             "fields": c["change"], "lines": c["lines"], "figures": c["figures"],
             "boards": c["boards"], "margin": c["margin"], "cost": c["cost"]}
            for k, c in sorted(done.added.items())]



def consequences(gen, base: runs.Run, rows: list[dict]) -> None:
    """Issue 40 item 3: a row whose next step is to drop its feature says what that does to
    its curve (the rows sharing its first key field: minegen's level, tile-match's city)
    if every row left without a proposal dropped it: which rows would still deliver it.
    Sets ``drop["consequence"]``; nothing for a generator that declares no feature."""
    kept = [c for c in gen.tune_costs if c.keep is not None]
    if not kept:
        return
    c = kept[0]
    proposed = {tuple(r["key"]): r["change"]["figures"].get(c.label)
                for r in rows if r.get("change")}
    dropping = {tuple(r["key"]) for r in rows
                if not r.get("change") and (r.get("drop") or {}).get("holds")}

    def delivered(k: tuple) -> float:
        if k in dropping:
            return 0.0
        got = proposed[k] if k in proposed else c.value(base.rows[k])
        return got or 0.0

    feature = c.feature or c.label
    for r in rows:
        key = tuple(r["key"])
        if key not in dropping:
            continue
        group = sorted(k for k in base.rows if k[0] == key[0])
        still = [gen.label(k) for k in group if delivered(k) > 0]
        head = (f"{gen.key_fields[0]} {key[0]} would then ship without {feature}"
                if not still else f"{gen.key_fields[0]} {key[0]} would keep {feature} on "
                f"{', '.join(still)} only")
        r["drop"]["consequence"] = head + ": " + ", ".join(
            f"{gen.label(k)} " + ("drops it" if k in dropping else
                                  f"{c.label} {delivered(k):.{c.digits}f}") for k in group)

"""The tune page's words for what issue 40 added to a tune: each proposal's confirmation on
fresh boards (and its figures where it was chosen), the proposals that did not hold there
("not confirmed"), joint changes along a level, and the multi-field search's evidence for a
row left without a proposal. Nothing here reads from disk.
"""

from __future__ import annotations

from .document import FAIL, WARN, Bullets, Cell, Para, Section, num


def _lines(doc: dict, lines: dict, only: list[str] | None = None) -> str:
    words = doc.get("line_words", {})
    out = []
    for name, x in lines.items():
        if only is not None and name not in only:
            continue
        iv = x.get("interval")
        out.append(f"{name}{' (' + words[name] + ')' if name in words else ''} "
                   f"{num(x['observed'])}"
                   + (f", 95 % interval {iv[0]:.3f}–{iv[1]:.3f}" if iv else ""))
    return "; ".join(out)


def confirmed(doc: dict, r: dict) -> list[Cell]:
    """A proposal: the boards it was confirmed on, what it measured where it was chosen,
    and the better-ranked changes that did not hold on the fresh boards."""
    c = r.get("confirmed") or {}
    if not c.get("boards"):
        return []
    out = [Cell(f"confirmed on {c['boards']}: it holds every hard line there, each share "
                "line's 95 % interval on the passing side; the figures after the change "
                "below are those boards'")]
    if c.get("chosen_on"):
        out.append(Cell(f"where it was chosen (the audit's boards 0–{doc['n'] - 1}): "
                        + _lines(doc, c["chosen_on"], r["lines"])))
    for a in c.get("attempts", [])[:-1]:
        out.append(Cell(f"ranked before it but not confirmed: {a['summary']} held on the "
                        f"audit's boards, not on {c['boards']}", WARN))
    return out


def joint(doc: dict, r: dict) -> list[Cell]:
    """A row of a joint change: the other rows it changes with, and why."""
    if r.get("class") != "joint change":
        return []
    broke = (doc.get("joint_search") or {}).get("broke", {}).get(r["label"])
    return [Cell(f"one joint change with {', '.join(r['joint_group'])}: "
                 + (f"the row's own fix broke {', '.join(broke)}, so " if broke else "")
                 + "the rows of its level change together, the least raise of each field "
                 "the level keeps monotone in depth; apply them together (the apply command "
                 "refuses part of a group), each row confirmed on the fresh boards")]


def unconfirmed(doc: dict, r: dict) -> list[Cell]:
    """A row whose chosen change held on the audit's boards only."""
    u = r.get("unconfirmed")
    if not u:
        return []
    tell = (f"; about N {u['n_needed']:,} boards per row would settle it" if u.get("n_needed")
            else "")
    return [Cell(f"not confirmed: {u['change']} held on the audit's boards, but on "
                 f"{u['boards']}: {_lines(doc, u['lines'])}" + tell
                 + ("; it was part of a joint change with " + ", ".join(u["group"])
                    if u.get("group") else "") + ". Not proposed.", FAIL)]


def searched(doc: dict, r: dict) -> list[Cell]:
    """The multi-field search of a row left without a proposal: its space and best point."""
    s = r.get("searched")
    if not s or r.get("change"):
        return []
    b = s.get("best")
    return [Cell(f"searched together ({s['points']} points, a seeded sampler): {s['space']}"
                 + (f"; the nearest point: {b['change']} — {_lines(doc, b['lines'])}"
                    if b else "; no point the table accepts"))]


def added_rows(doc: dict) -> Section | None:
    """Rows that did not fail but a joint change edits (so the level keeps its order)."""
    rows = doc.get("joint") or []
    if not rows:
        return None
    sec = Section("joint", "Rows a joint change edits although they pass")
    sec.blocks.append(Bullets([
        Cell(f"{j['label']}: {j['change']} — confirmed on {j['boards']}: "
             + _lines(doc, j["lines"])) for j in rows]))
    return sec


def how(doc: dict) -> list[Cell]:
    """How the tune chose, for what issue 40 added."""
    return [
        Cell("Where no single field fixes a row with margin: the row's fields searched "
             "together within its intent (the generator's search space, said in each row's "
             "section; never under the share of the feature it protects) by a seeded "
             "sampler (Optuna's TPE), in batches audited with the audit's seeds; the same "
             "tables give the same points."),
        Cell("Where a row's own fix breaks a line across rows: the rows of its level change "
             "together (the least raise of each monotone field), searched again where a "
             "raised row fails, and kept only when the whole table keeps every line; the "
             "cost of a joint change is the sum of its rows' costs."),
        Cell(f"Confirmation: every proposal is audited again on {doc['confirm_boards']}; "
             "only one that holds every hard line there with margin is proposed, and the "
             "figures after the change are those boards'. A proposal that does not hold "
             "gives way to the next-ranked change that does, or says \"not confirmed\"."),
    ]


def final_breaks(doc: dict) -> list[Para]:
    """What every proposal together breaks, judged with their confirmation boards' figures
    (each was chosen keeping every line on the audit's boards; an advisory line near its
    threshold can tip between board sets): said, never hidden."""
    got = doc.get("final_breaks") or []
    return [Para("With every proposal in place, judged on the confirmation boards' figures: "
                 + ", ".join(got) + " (a line that held on the audit's boards; read its row "
                 "before applying)", strong=True)] if got else []

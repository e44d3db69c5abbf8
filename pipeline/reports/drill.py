"""The drill-down of an audit report, for every generator: each failing row (and, when the
generator asks, the passing rows closest to a hard line's threshold) with why it fails in
words and numbers (``Line.explain``), the table fields that move each line and which way
(``Line.moves``), a ready sweep command, and the row's boards with the commands that draw
them. What a game adds is declared in its ``Drill`` (``Generator.drill``).
"""

from __future__ import annotations

from ..analysis.margin import share_interval, within_noise
from . import tuned
from .document import FAIL, WARN, Bullets, Cell, Figure, Figures, Para, Section, Table, num


def _key(gen, r: dict) -> tuple:
    return tuple(r[k] for k in gen.key_fields)


def failing(gen, results: list[dict]) -> dict[tuple, list[str]]:
    """Row key -> the hard lines it fails, in line order."""
    out: dict[tuple, list[str]] = {}
    for r in results:
        if r["hard"] and r["passed"] is False:
            out.setdefault(_key(gen, r), []).append(r["line"])
    return out


def drilled(gen, rows: list[dict], results: list[dict]) -> list[tuple[dict, list[str], bool]]:
    """(row, lines it fails or nearly fails, failing?): the failing rows in key order, then
    the ``near_misses`` passing rows with the smallest margin to a ``>=`` / ``>`` line."""
    drill = gen.drill
    by_key = {_key(gen, r): r for r in rows}
    fails = failing(gen, results)
    out = [(by_key[k], names, True) for k, names in sorted(fails.items())]
    lines = near_lines(gen)
    margins = sorted((r["observed"] - lines[r["line"]].threshold, _key(gen, r), r["line"])
                     for r in results if r["line"] in lines and r["passed"] is True
                     and _key(gen, r) not in fails)
    near: dict[tuple, str] = {}
    for _, key, name in margins:
        if len(near) == drill.near_misses:
            break
        near.setdefault(key, name)
    out += [(by_key[k], [name], False) for k, name in near.items()]
    return out[:drill.limit]


def near_lines(gen) -> dict:
    """The lines a near miss is measured on: hard ``>=`` / ``>`` lines that count boards
    (a share with its trials). A line that checks a table value against a floor (the
    row's own target) is no near miss: other seeds cannot move it."""
    return {ln.name: ln for ln in gen.lines if ln.hard and ln.op in (">=", ">")
            and ln.trials is not None}


def margin_rank(gen, results: list[dict], line, key: tuple) -> tuple[int, int, list]:
    """(rank of the row's margin on ``line`` among the rows where it holds: 1 + how many
    hold it by strictly less; how many rows hold it; [(row key, margin)] of those rows)."""
    held = sorted((r["observed"] - line.threshold, _key(gen, r)) for r in results
                  if r["line"] == line.name and r["passed"] is True)
    own = next((m for m, k in held if k == key), None)
    smaller = [(k, m) for m, k in held if own is not None and m < own]
    return len(smaller) + 1, len(held), smaller


def wanted(gen, rows: list[dict], results: list[dict]) -> list[tuple[tuple, int]]:
    """(row key, board index) of every board the drill-down draws."""
    drill = gen.drill
    if drill.boards is None:
        return []
    return [(_key(gen, row), i) for row, _, _ in drilled(gen, rows, results)[:drill.drawn_rows]
            for i, _ in drill.boards(row)]


def _sweeps(doc, row: dict, names: list[str], hints) -> list[Para]:
    """One paragraph per distinct sweep command of the row's lines; none over a field the
    latest tune of the run, or a sweep of its tables, tried on the row without making that
    line hold (``tuned.useless``)."""
    gen, drill = doc.gen, doc.gen.drill
    if drill.sweep is None:
        return []
    lines = {ln.name: ln for ln in doc.lines}
    shown = {m.field: m.shown for ln in doc.lines for m in ln.moves}
    words = dict(drill.field_words)
    cmds: dict[str, tuple[str, list[str]]] = {}  # command -> (its field, the lines)
    for name in names:
        got = drill.sweep(row, lines[name])
        if got is None:
            continue
        field, grid = got
        # a sweep may name a knob as the table file does (a move's ``shown``)
        knob = next((k for k, v in shown.items() if v and v == field), field)
        if tuned.useless(doc.tune, doc.key(row), knob, shown.get(knob, ""), name,
                         doc.sweeps):
            continue
        cmd = hints.audit("sweep", "--row", gen.format_key(doc.key(row)), "--vary",
                          f"{field}={grid}", "--n", row["boards"])
        cmds.setdefault(cmd, (field + (f" ({words[field]})" if field in words else ""),
                              []))[1].append(name)
    return [Para(f"Sweep for line{'s' if len(ns) > 1 else ''} {', '.join(ns)} over {field}: "
                 f"`{cmd}`") for cmd, (field, ns) in cmds.items()]


def _boards(doc, row: dict, hints) -> list:
    drill = doc.gen.drill
    if drill.boards is None:
        return []
    key, figs, plain = doc.key(row), [], []
    for i, what in drill.boards(row):
        cmd = f"`{hints.program(*drill.generate(key, i))}`" if drill.generate else ""
        drawing = doc.drawings.get((key, i))
        if drawing is None:
            plain.append(f"{what}: {cmd}" if cmd else what)
        else:
            page = doc.pages.get((key, i))
            play = f" [Play this board]({page})." if page else ""
            figs.append(Figure("board-" + "-".join(str(v) for v in (*key, i)),
                               drill.picture(drawing),
                               (f"{what}: {cmd}" if cmd else what) + play))
    out = [Para("; ".join(plain) + ".")] if plain else []
    return out + ([Figures(f"Boards of {doc.row_label(row)}", figs)] if figs else [])


def _why(line, row: dict, fails: bool, doc=None) -> str:
    """A failing row: the line's own explanation; a near miss: its margin, its rank among
    the rows that hold the line and the rows with smaller margins (computed, not said)."""
    if not fails:
        obs = row.get(line.column)
        sure = ""
        if line.trials is not None:
            lo, hi = share_interval(obs, int(row[line.trials]))
            sure = (f"; 95 % interval {num(lo)}–{num(hi)} at N {row[line.trials]}: "
                    + ("within noise, other seeds could fail it" if within_noise(
                        (lo, hi), line.threshold) else "it holds with margin"))
        rank = ""
        if doc is not None:
            r, n, smaller = margin_rank(doc.gen, doc.results, line, doc.key(row))
            rank = (f"no row of the {n} that hold {line.name} holds it by less" if r == 1
                    else f"{r - 1} of the {n} rows that hold {line.name} hold it by less: "
                    + ", ".join(f"{doc.gen.label(k)} {num(m)}" for k, m in smaller))
            rank = f"; {rank}"
        return (f"holds: {line.what} {num(obs)} ({line.requirement}; margin "
                f"{num(obs - line.threshold)}{rank}{sure}).")
    return line.explain(row, line) if line.explain else f"{line.requirement} does not hold."



def drill_down(doc, hints) -> list[Section]:
    """The drill-down sections of one run (none when no line explains itself)."""
    lines = {ln.name: ln for ln in doc.lines}
    if not any(ln.explain for ln in doc.lines):
        return []
    sec = Section("drill-down", "Drill-down: failing rows"
                  + (" and near misses" if doc.gen.drill.near_misses else ""))
    rows = drilled(doc.gen, doc.rows, doc.results)
    if not rows:
        sec.blocks.append(Para("Every hard line holds on every row."))
        return [sec]
    sec.blocks.append(Para(doc.gen.drill.intro))
    tune_cmd = hints.audit("tune", "--run", doc.manifest.get("run_id", "LATEST"), "--n",
                           doc.manifest.get("n"))
    if hasattr(doc.gen, "tune_candidates") and doc.tune is None:  # the Tune capability
        cmd = tune_cmd
        sec.blocks.append(Para(f"`{cmd}` audits these moves with the audit's seeds, one "
                               "field at a time and then in pairs, and proposes per row the "
                               "change that holds every hard line with margin at the least "
                               "cost to the player, or says that no table change fixes it "
                               "and why (a new table root and a page: nothing is edited in "
                               "place)."))
    out = [sec]
    for row, names, fails in rows:
        key = doc.key(row)
        head = Section("drill-" + "-".join(str(v) for v in key),
                       f"{doc.row_label(row)}: {'fails' if fails else 'closest to failing'} "
                       f"{', '.join(names)}", depth=3)
        head.blocks.append(Para(doc.gen.describe(row) + "."))
        head.blocks.append(Bullets([Cell(f"{n}: {_why(lines[n], row, fails, doc)}",
                                         FAIL if fails else WARN) for n in names]))
        if fails and key not in doc.locked:  # one source of advice: the latest tune's
            head.blocks.append(Para(f"Class: {tuned.klass(doc.tune, key, doc.locked)} — "
                                    + tuned.advice(doc.tune, key, doc.row_label(row),
                                                   tune_cmd, doc.locked) + "."
                                    + (f" (tune {doc.tune.tune_id}, {doc.tune.when})"
                                       if doc.tune else ""), strong=True))
        if key in doc.locked:  # the design fixes the row: no moves, no sweep to try
            head.blocks.append(Para(f"Locked: {doc.locked[key]}; tune never changes it, so "
                                    "no move is offered here."))
            head.blocks += _boards(doc, row, hints)
            out.append(head)
            continue
        moves: dict = {}  # field -> (its first move, the lines it moves): once per field
        dropped: dict = {}  # field -> (who tried it, the values, the lines)
        for n in names:
            for m in lines[n].moves:
                vain = tuned.useless(doc.tune, key, m.field, m.shown, n, doc.sweeps) \
                    if fails else None
                if vain:
                    dropped.setdefault(m.shown or m.field, (*vain, []))[2].append(n)
                    continue
                moves.setdefault(m.field, (m, []))[1].append(n)
        if moves:
            head.blocks.append(Table(["lines", f"table field (in {doc.gen.table_file})",
                                      "move it", "because"],
                                     [[Cell(", ".join(ns)), Cell(m.shown or m.field),
                                       Cell(m.way), Cell(m.why)]
                                      for m, ns in moves.values()]))
        if dropped:
            head.blocks.append(Para(
                "Not offered, because they were tried on this row and no value made the "
                "line hold: " + "; ".join(
                    f"{f} for {', '.join(ns)} ({who} tried "
                    f"{', '.join(str(v) for v in vals)})"
                    for f, (who, vals, ns) in dropped.items()) + "."))
        head.blocks += _sweeps(doc, row, names, hints)
        head.blocks += _boards(doc, row, hints)
        out.append(head)
    return out

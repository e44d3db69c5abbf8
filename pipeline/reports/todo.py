"""The audit report's first screen (issue 31 item 1): the verdict, then "what to do
tonight", one line per failing row: each hard line it fails with the figure against its
threshold and how sure that is, the row's class from the latest tune of the run
(``tuned``), and the tune's proposal (linked) or the next step. A row's line links its
drill-down, which the page opens when the link is followed.
"""

from __future__ import annotations

from ..declarations import NEGATE, fmt_threshold
from ..analysis.margin import wilson
from . import tuned
from .document import Bullets, Cell, Para, mark, num

# Every line of the list is a row failing a hard line: the fail mark, whatever its class
# (a proposal, locked, not tuned yet): the class is said in words, never by a colour.
FAILING = mark(True, hard=True)


def pct(v: float) -> str:
    return f"{100 * v:.0f}\u00a0%" if v in (0.0, 1.0) else f"{100 * v:.1f}\u00a0%"


def sureness(line, r: dict, row: dict) -> str:
    """How sure the failing figure is: a share line's 95 % interval; a count of boards as
    its share of the row's boards with that share's interval; else it is exact (a table
    value, or the one production board)."""
    if r.get("interval"):
        lo, hi = r["interval"]
        return f"95 % interval {lo:.3f}–{hi:.3f}"
    k, n = r.get("observed"), row.get("boards")
    if line.op == "==" and isinstance(k, int) and isinstance(n, int) and 0 <= k <= n and n:
        lo, hi = wilson(k, n)
        return f"{k} of N {n}: 95 % interval {pct(lo)}–{pct(hi)} of the row's N"
    return "exact"


def figures(doc, failed: list[dict], row: dict) -> str:
    """``B failed on (2, 0): boards with every fog region placed 0.000 < 0.95 (…)``; lines
    whose figures are equally sure (Q and G-TF counting the same seeds) share one clause:
    ``Q, G-TF failed on …: seeds not met 8 != 0, boards off the band 8 != 0 (…)``."""
    lines = {ln.name: ln for ln in doc.lines}
    groups: dict[str, list[dict]] = {}
    for r in failed:
        groups.setdefault(sureness(lines[r["line"]], r, row), []).append(r)
    return "; ".join(
        f"{', '.join(r['line'] for r in rs)} failed on {doc.row_label(rs[0])}: "
        + ", ".join(f"{lines[r['line']].what} {num(r['observed'])} "
                    f"{NEGATE.get(r['op'], 'fails ' + r['op'])} "
                    f"{fmt_threshold(r['threshold'])}" for r in rs) + f" ({sure})"
        for sure, rs in groups.items())


def tunable(doc) -> bool:
    """The generator has the Tune capability (``Generator.tune_candidates``): its failing
    rows get a class and a proposal, and its report opens folded on this list."""
    return hasattr(doc.gen, "tune_candidates")


def todo(doc, tune_cmd: str) -> list:
    """The blocks of the to-do list: one line per failing row, in key order (without the
    Tune capability: each failing row's figures only)."""
    rows = {doc.key(r): r for r in doc.rows}
    by_row: dict[tuple, list[dict]] = {}
    for r in doc.hard_failures:
        by_row.setdefault(doc.key(r), []).append(r)
    view = doc.tune
    items = []
    for key in sorted(by_row):
        label = doc.label(key)
        c = tuned.klass(view, key, doc.locked)
        anchor = "drill-" + "-".join(str(v) for v in key)
        figs = figures(doc, by_row[key], rows.get(key, {}))
        hint = getattr(doc.gen, "todo_hint", None)  # what fails, in the game's words
        if hint is not None and rows.get(key) and hint(rows[key]):
            figs += f"; {hint(rows[key])}"
        if not tunable(doc):
            items.append(Cell(f"[{label}](#{anchor}): {figs}.", FAILING))
            continue
        items.append(Cell(f"[{label}](#{anchor}) — {c} — {figs} — "
                          f"{tuned.advice(view, key, label, None, doc.locked)}.",
                          FAILING))
    counts: dict[str, int] = {}
    for key in by_row:
        c = tuned.klass(view, key, doc.locked)
        counts[c] = counts.get(c, 0) + 1
    if not tunable(doc):
        return [Para(f"{len(by_row)} failing row(s); a row's link opens its drill-down.",
                     strong=True), Bullets(items)]
    head = ", ".join(f"{n} {c}" for c, n in sorted(counts.items()))
    out = [Para(f"What to do tonight: {len(by_row)} failing row(s) ({head}); a row's link "
                "opens its drill-down.", strong=True), Bullets(items)]
    if view is None:
        out.append(Para(f"No tune of this run yet: `{tune_cmd}` classes every failing row "
                        "(proposal, breaks the curve, structural, locked) and proposes the "
                        "change; the report is written again when it finishes."))
    else:
        out.append(Para(f"Classes and proposals: tune {view.tune_id}, started {view.when} "
                        f"([tune.html]({view.href})), of this run's tables at N "
                        f"{doc.manifest.get('n')} (the same seeds: the rows it judged are "
                        "this run's); "
                        + ("this report was written again from the run's stored data when "
                           "it finished" if doc.rewritten else "it finished before this "
                           "report was written") + ". proposal = a "
                        "change that holds every hard line and keeps the whole table; breaks "
                        "the curve = a fix that breaks another row's line; structural = no "
                        "table change fixes it; locked = the design fixes the row."))
    return out

"""The figures a tune page shows (``tune_page``): each in its declared digits, now and
proposed with its 95 % interval, a change said in the figure's own terms, and a change
within the noise of the two estimates (``analysis.cost.beyond_noise``) said to be one and
left out of the cost in words (issue 30 item 2, decision 262)."""

from __future__ import annotations

from ..analysis import cost
from .document import Cell, Table, num


def digits(doc: dict) -> dict[str, int]:
    return {c["label"]: c.get("digits", 2) for c in doc.get("costs", [])}


def change_words(f: float | None, t: float | None, digits: int, unit: float) -> str:
    """The change in the figure's own terms: a difference, and for a count (unit >= 1)
    the share of the row's value it is."""
    if f is None or t is None:
        return "—"
    if round(f, digits) == round(t, digits):
        return "unchanged"
    # a share of the row's value only where the value is at least one unit (the cost's
    # own denominator): from 0.1 fog cells, "+20180 %" says nothing a designer can use
    rel = f" ({100 * (t - f) / f:+.0f} %)" if unit >= 1 and abs(f) >= unit else ""
    return f"{t - f:+.{digits}f}{rel}"


def interval(v, se, digits: int) -> str:
    """A figure with its 95 % interval (v +/- 1.96 se), or the figure alone."""
    if v is None or se is None:
        return num(v, digits)
    lo = max(0.0, v - 1.96 * se)  # every figure tune shows is a count, share or ratio
    return f"{num(v, digits)} ({lo:.{digits}f}–{v + 1.96 * se:.{digits}f})"


def cost_table(doc: dict, now: dict, then: dict, asked: dict | None = None,
                shown: tuple[dict, dict] = ({}, {}),
                noise: tuple[dict, dict] = ({}, {})) -> Table:
    """The ranked figures (each with what the table asks, where it says), then the other
    figures the proposal moves beyond noise, each now and proposed with its 95 % interval
    (``noise``: the standard errors either side); a change within noise says so."""
    d = digits(doc)
    units = {c["label"]: c.get("unit", 1.0) for c in doc.get("costs", [])}
    asked = asked or {}
    e_now, e_then = noise

    def row(label, a, b, ranked):
        digits = d.get(label, 2)
        moved = cost.beyond_noise(a, b, e_now.get(label), e_then.get(label))
        return [Cell(label + ("" if ranked else " (not ranked)")),
                Cell(num(asked.get(label), digits) if label in asked else "—"),
                Cell(interval(a, e_now.get(label), digits)),
                Cell(interval(b, e_then.get(label), digits)),
                Cell(change_words(a, b, digits, units.get(label, 1.0))
                     + ("; within noise" if moved is False else ""))]

    rows = [row(label, now.get(label), then.get(label), True) for label in now]
    s_now, s_then = shown
    rows += [row(label, s_now.get(label), s_then.get(label), False) for label in s_now
             if num(s_now.get(label), d.get(label, 2)) != num(s_then.get(label),
                                                                d.get(label, 2))
             and cost.beyond_noise(s_now.get(label), s_then.get(label), e_now.get(label),
                                   e_then.get(label)) is not False]
    return Table(["what the player gets", "the table asks", "now (95 % interval)",
                  "after, on the confirmation boards (95 % interval)" if doc.get(
                      "confirm_boards") else "proposed (95 % interval)", "change"], rows)


def cost_words(doc: dict, now: dict, then: dict, most: int = 3,
               noise: tuple[dict, dict] = ({}, {})) -> str:
    """The cost in the figures' own units, largest first: "fog cells per board -31 %,
    retry rate +0.01"; a figure whose change is within noise (``noise``: the standard
    errors either side) is left out."""
    d = digits(doc)
    units = {c["label"]: c.get("unit", 1.0) for c in doc.get("costs", [])}
    moved = []
    for label in now:
        a, b = now.get(label), then.get(label)
        if a is None or b is None or num(a, d.get(label, 2)) == num(b, d.get(label, 2)):
            continue
        if cost.beyond_noise(a, b, noise[0].get(label), noise[1].get(label)) is False:
            continue
        unit = units.get(label, 1.0)
        size = abs(b - a) / max(abs(a), unit)
        k = d.get(label, 2)
        text = (f"{label} {100 * (b - a) / a:+.0f} %" if unit >= 1 and abs(a) >= unit
                else f"{label} {a:.{k}f} → {b:.{k}f}" if unit >= 1
                else f"{label} {b - a:+.{k}f}")
        moved.append((size, text))
    moved.sort(reverse=True)
    return ", ".join(t for _, t in moved[:most]) or "nothing beyond noise"


def noise(row: dict, other: dict) -> tuple[dict, dict]:
    """The standard errors of a row's figures now and of a candidate's (tune.json keeps
    them as ``errors``; a tune written before them has none: every change is shown)."""
    return row.get("errors") or {}, other.get("errors") or {}

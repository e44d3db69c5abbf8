"""Line charts as inline SVG, written directly (no plotting library on the report path).

Contract: plain sequences in, one ``<svg>…</svg>`` string out that pastes into an HTML
page as is: no prolog, no external reference, ids prefixed by the caller's ``ns`` (several
charts share a page), deterministic bytes for the same inputs (fixed number formatting).
Missing values (None or NaN) are gaps. The legend is drawn below the plot area, so it
never covers data or thresholds. Every data element carries ``data-series`` (its series)
and every point ``data-value="x,y"`` (the data it stands for), so a test or a script reads
a chart back.

Cost: a chart is a few hundred string joins (~0.1 ms), where a matplotlib figure written
to SVG cost ~30 ms; a report with hundreds of rows draws in milliseconds.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

Values = Sequence[float | int | None]

WIDTH, HEIGHT = 560, 300
# the SVG namespace: a name, not a link; a picture shown by <img> or opened alone needs it
SVG_NS = "http://www.w3.org/2000/svg"
ROTATE = 55  # degrees x labels turn when they do not fit side by side
ROTATE_SIN = math.sin(math.radians(ROTATE))
ROTATE_COS = math.cos(math.radians(ROTATE))
LEFT, RIGHT, TOP, BOTTOM = 62, 18, 30, 46
LEGEND_ROW = 18


@dataclass(frozen=True)
class Series:
    label: str
    ys: Values
    color: str
    dash: str = ""  # SVG stroke-dasharray ("" = solid)
    marker: str = "circle"  # circle | triangle | square | none
    width: float = 1.6
    step: bool = False  # draw as steps centred on each x (a per-row threshold)
    joined: bool = True  # False: the points alone (x values that are categories, not a scale)


@dataclass(frozen=True)
class Band:
    label: str
    lo: Values
    hi: Values
    color: str
    opacity: float = 0.15
    step: bool = False  # each x's [lo, hi] held over a step centred on it (per-row bands)


@dataclass(frozen=True)
class Marks:
    """Points drawn as crosses (failures) or rings, at given x positions."""

    label: str
    xs: Sequence[float]
    ys: Values
    color: str
    shape: str = "cross"  # cross | ring


@dataclass(frozen=True)
class Shade:
    """A vertical span of x, shaded (e.g. one level's rows on a long axis)."""

    x0: float
    x1: float
    label: str
    color: str = "#f2f2f2"


def _f(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".") if math.isfinite(v) else "0"


def _num(v) -> float:
    return math.nan if v is None else float(v)


def _e(s: str) -> str:
    return html.escape(str(s), quote=True)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else [0.0]
    raw = (hi - lo) / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, t = [], first
    while t <= hi + 1e-9 * step:
        ticks.append(round(t, 10))
        t += step
    return ticks


def _tick_label(v: float) -> str:
    return f"{v:g}" if abs(v) >= 1e-4 or v == 0 else f"{v:.1e}"


def line_chart(*, ns: str, title: str, xlabel: str, ylabel: str, xs: Sequence[float],
               xticks: Sequence[str] | None = None, series: Sequence[Series] = (),
               bands: Sequence[Band] = (), marks: Sequence[Marks] = (),
               shades: Sequence[Shade] = (), ylim: tuple[float, float] | None = None,
               width: int = WIDTH) -> str:
    """One chart. ``xs`` are the x positions (numbers); ``xticks`` their labels (default:
    the numbers). ``ylim`` fixes the y range; else it spans the data (and 0..1 if empty)."""
    xs = [float(x) for x in xs]
    legend_items = ([(b.label, b.color, "band", "") for b in bands]
                    + [(s.label, s.color, s.marker, s.dash) for s in series]
                    + [(m.label, m.color, m.shape, "") for m in marks])
    places = _legend_places(legend_items, width)
    legend_rows = 1 + max((r for r, _ in places), default=-1)
    plot_w, plot_h = width - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    labels = list(xticks) if xticks is not None else [_tick_label(x) for x in xs]
    widest = max((_text_width(lab) for lab in labels), default=0) + 6
    spacing = plot_w / max(1, len(xs))
    # every x labelled: labels that do not fit side by side are turned (never skipped)
    turned = widest > spacing and xticks is not None
    drop = widest * ROTATE_SIN if turned else 0.0  # the extra height turned labels take
    stride = 1 if xticks is not None else max(1, math.ceil(widest / spacing))
    height = HEIGHT + 10 + legend_rows * LEGEND_ROW + math.ceil(drop)
    finite = [v for s in series for v in map(_num, s.ys) if math.isfinite(v)]
    finite += [v for b in bands for v in map(_num, [*b.lo, *b.hi]) if math.isfinite(v)]
    finite += [v for m in marks for v in map(_num, m.ys) if math.isfinite(v)]
    if ylim is None:
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        if hi - lo < 1e-9:
            lo, hi = lo - 0.5 if lo else 0.0, hi + 0.5 if hi else 1.0
        pad = (hi - lo) * 0.06
        ylim = (lo - pad, hi + pad)
    y0, y1 = ylim
    x_lo, x_hi = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_hi - x_lo < 1e-9:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    xpad = (x_hi - x_lo) * 0.03

    def px(x: float) -> float:  # clamped: a step's half-width never leaves the plot
        return min(max(LEFT + (x - x_lo + xpad) / (x_hi - x_lo + 2 * xpad) * plot_w, LEFT),
                   LEFT + plot_w)

    def py(y: float) -> float:
        y = min(max(y, y0), y1)
        return TOP + (y1 - y) / (y1 - y0) * plot_h

    # a turned label runs down and to the left of its tick: the first ones can pass the
    # chart's left edge, where the page would clip them; the view then starts further left
    spill = max((_text_width(lab) * ROTATE_COS - px(x) - 3 for x, lab in zip(xs, labels)),
                default=0.0) if turned else 0.0
    spill = math.ceil(spill) if spill > 0 else 0
    out = [f'<svg viewBox="{-spill} 0 {width + spill} {height}" width="{width + spill}" '
           f'height="{height}" '
           f'role="img" aria-labelledby="{ns}-title" class="chart" '
           f'font-family="system-ui, sans-serif" font-size="11">'
           if spill else
           f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
           f'role="img" aria-labelledby="{ns}-title" class="chart" '
           f'font-family="system-ui, sans-serif" font-size="11">',
           f'<title id="{ns}-title">{_e(title)}</title>',
           f'<text x="{width / 2:.0f}" y="18" text-anchor="middle" font-size="13" '
           f'font-weight="600">{_e(title)}</text>']
    for sh in shades:
        a, b = px(sh.x0), px(sh.x1)
        out.append(f'<rect x="{_f(a)}" y="{TOP}" width="{_f(b - a)}" height="{plot_h}" '
                   f'fill="{sh.color}" data-shade="{_e(sh.label)}"/>'
                   f'<text x="{_f((a + b) / 2)}" y="{TOP + 11}" text-anchor="middle" '
                   f'fill="#777" font-size="10">{_e(sh.label)}</text>')
    for t in nice_ticks(y0, y1):
        y = py(t)
        out.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{_f(y)}" y2="{_f(y)}" '
                   f'stroke="#e3e3e3"/><text x="{LEFT - 5}" y="{_f(y + 4)}" '
                   f'text-anchor="end">{_tick_label(t)}</text>')
    for i, (x, lab) in enumerate(zip(xs, labels)):
        if i % stride:
            continue
        if turned:
            out.append(f'<text transform="translate({_f(px(x) + 3)} {TOP + plot_h + 8}) '
                       f'rotate(-{ROTATE})" text-anchor="end">{_e(lab)}</text>')
        else:
            out.append(f'<text x="{_f(px(x))}" y="{TOP + plot_h + 14}" '
                       f'text-anchor="middle">{_e(lab)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
               f'stroke="#999"/>')
    out.append(f'<text x="{LEFT + plot_w / 2:.0f}" y="{TOP + plot_h + 32 + drop:.0f}" '
               f'text-anchor="middle">{_e(xlabel)}</text>')
    out.append(f'<text transform="translate(14 {TOP + plot_h / 2:.0f}) rotate(-90)" '
               f'text-anchor="middle">{_e(ylabel)}</text>')
    for b in bands:
        out.append(_band(b, xs, px, py))
    names = dict(zip(xs, labels))
    for s in series:
        out.append(_series(s, xs, px, py, names))
    for m in marks:
        out.append(_marks(m, px, py, names))
    out.append(_legend(legend_items, places, HEIGHT + 8 + drop))
    out.append("</svg>")
    return "".join(out)


def _runs(xs, ys) -> list[list[tuple[float, float]]]:
    """Consecutive finite points (gaps split a line)."""
    runs, cur = [], []
    for x, y in zip(xs, map(_num, ys)):
        if math.isfinite(y):
            cur.append((x, y))
        elif cur:
            runs.append(cur)
            cur = []
    return runs + ([cur] if cur else [])


def _band(b: Band, xs, px, py) -> str:
    out = []
    pts = [(x, _num(lo), _num(hi)) for x, lo, hi in zip(xs, b.lo, b.hi)]
    if b.step:  # the same half-width as a step series
        half = (xs[1] - xs[0]) / 2 if len(xs) > 1 else 0.5
        pts = [(x + d, lo, hi) for x, lo, hi in pts for d in (-half, half)]
    run: list = []
    for p in pts + [(0.0, math.nan, math.nan)]:
        if math.isfinite(p[1]) and math.isfinite(p[2]):
            run.append(p)
            continue
        if run:
            top = " ".join(f"{_f(px(x))},{_f(py(hi))}" for x, _, hi in run)
            bot = " ".join(f"{_f(px(x))},{_f(py(lo))}" for x, lo, _ in reversed(run))
            out.append(f'<polygon points="{top} {bot}" fill="{b.color}" '
                       f'fill-opacity="{b.opacity}" data-series="{_e(b.label)}"/>')
            run = []
    return "".join(out)


def _series(s: Series, xs, px, py, names: dict | None = None) -> str:
    out = []
    dash = f' stroke-dasharray="{s.dash}"' if s.dash else ""
    half = (xs[1] - xs[0]) / 2 if len(xs) > 1 else 0.5
    for run in _runs(xs, s.ys):
        if s.step:
            pts = []
            for x, y in run:
                pts += [(x - half, y), (x + half, y)]
        else:
            pts = run
        d = " ".join(f"{_f(px(x))},{_f(py(y))}" for x, y in pts)
        if s.joined:
            out.append(f'<polyline points="{d}" fill="none" stroke="{s.color}" '
                       f'stroke-width="{s.width}"{dash} data-series="{_e(s.label)}"/>')
        for x, y in run:
            out.append(_marker(s.marker, px(x), py(y), s.color, s.label, (x, y),
                               _tip(names, x, s.label, y)))
    return "".join(out)


def _tip(names: dict | None, x: float, label: str, y: float) -> str:
    """The hover text of one point: its row, its series and its value."""
    where = names.get(x, _tick_label(x)) if names else _tick_label(x)
    return f"{where}: {label} {y:.4g}" if label else ""


def _marker(kind: str, x: float, y: float, color: str, label: str,
            value: tuple[float, float] | None = None, tip: str = "") -> str:
    """A point; with a label it names its series and (``value``) the data it stands for;
    ``tip``: the text a reader sees on hovering it."""
    out = _marker_shape(kind, x, y, color, label, value)
    if not tip or not out.endswith("/>"):
        return out
    tag = out[1:out.index(" ")]
    return f"{out[:-2]}><title>{_e(tip)}</title></{tag}>"


def _marker_shape(kind: str, x: float, y: float, color: str, label: str,
                  value: tuple[float, float] | None = None) -> str:
    attr = ""
    if label:
        attr = f'data-series="{_e(label)}"'
        if value is not None:
            attr += f' data-value="{value[0]:g},{value[1]:g}"'

    if kind == "circle":
        return f'<circle cx="{_f(x)}" cy="{_f(y)}" r="2.8" fill="{color}" {attr}/>'
    if kind == "triangle":
        return (f'<path d="M{_f(x)},{_f(y - 3.5)} l3.5,6.5 h-7 z" fill="{color}" {attr}/>')
    if kind == "square":
        return f'<rect x="{_f(x - 2.6)}" y="{_f(y - 2.6)}" width="5.2" height="5.2" ' \
               f'fill="{color}" {attr}/>'
    if kind == "cross":
        return (f'<path d="M{_f(x - 5)},{_f(y - 5)} l10,10 M{_f(x - 5)},{_f(y + 5)} l10,-10" '
                f'stroke="{color}" stroke-width="2.2" {attr}/>')
    if kind == "ring":
        return (f'<circle cx="{_f(x)}" cy="{_f(y)}" r="5" fill="none" stroke="{color}" '
                f'stroke-width="2" {attr}/>')
    return ""


def _marks(m: Marks, px, py, names: dict | None = None) -> str:
    return "".join(_marker(m.shape, px(float(x)), py(_num(y)), m.color, m.label,
                           (float(x), _num(y)), _tip(names, float(x), m.label, _num(y)))
                   for x, y in zip(m.xs, m.ys) if math.isfinite(_num(y)))


def _text_width(text: str) -> float:
    return 6.2 * len(str(text))  # ~11 px sans-serif: a conservative average advance


def _legend_places(items, width: int) -> list[tuple[int, float]]:
    """(row, x) of each legend item: laid out left to right, wrapped at the chart's width,
    each item as wide as its own label (long labels never run into the next one)."""
    places, row, x = [], 0, float(LEFT)
    for label, *_ in items:
        w = 21 + _text_width(label) + 14
        if x + w > width - RIGHT and x > LEFT:
            row, x = row + 1, float(LEFT)
        places.append((row, x))
        x += w
    return places


def _legend(items, places, top: float) -> str:
    out = []
    for (label, color, kind, dash), (r, x) in zip(items, places):
        y = top + r * LEGEND_ROW
        if kind == "band":
            sym = (f'<rect x="{_f(x)}" y="{_f(y - 9)}" width="16" height="10" fill="{color}" '
                   f'fill-opacity="0.3"/>')
        elif kind in ("cross", "ring"):
            sym = _marker(kind, x + 8, y - 4, color, "")
        else:
            d = f' stroke-dasharray="{dash}"' if dash else ""
            sym = (f'<line x1="{_f(x)}" x2="{_f(x + 16)}" y1="{_f(y - 4)}" y2="{_f(y - 4)}" '
                   f'stroke="{color}" stroke-width="2"{d}/>'
                   + _marker(kind, x + 8, y - 4, color, ""))
        out.append(f'<g class="legend-item">{sym}<text x="{_f(x + 21)}" y="{_f(y)}">'
                   f"{_e(label)}</text></g>")
    return "".join(out)

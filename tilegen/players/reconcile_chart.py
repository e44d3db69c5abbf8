"""The reconcile page's predicted-against-observed chart (issue 32): one point per row, the
calibrated prediction across and the players' pass rate up, each with its 95 % interval as
a bar, and the line where they agree. Inline SVG, no script; every point says its row and
its numbers in a hover title."""

from __future__ import annotations

import html
import math

from pipeline.api.pages import SVG_NS

W, H = 560, 440
L, R, T, B = 58, 16, 14, 48
OK, OFF = "#1f77b4", "#d62728"


def _e(s) -> str:
    return html.escape(str(s), quote=True)


def chart(rows: list[dict]) -> str | None:
    """The SVG of the rows that have both a prediction and an observed rate (None when
    none has)."""
    pts = [r for r in rows if r.get("predicted") is not None and r.get("observed") is not None]
    if not pts:
        return None
    vals = [v for r in pts for v in (r["predicted_lo"], r["predicted_hi"], r["lo"], r["hi"])]
    lo = max(0.0, math.floor(min(vals) * 10) / 10)
    hi = min(1.0, math.ceil(max(vals) * 10) / 10)
    if hi - lo < 0.1:
        lo, hi = max(0.0, hi - 0.1), max(0.1, hi)
    pw, ph = W - L - R, H - T - B

    def px(v: float) -> float:
        return L + (v - lo) / (hi - lo) * pw

    def py(v: float) -> float:
        return T + ph - (v - lo) / (hi - lo) * ph

    out = [f'<svg xmlns="{SVG_NS}" viewBox="0 0 {W} {H}" width="{W}" '
           f'height="{H}" role="img" aria-label="players against prediction per row">',
           f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="#fff" stroke="#999"/>']
    steps = round((hi - lo) / 0.1)
    for i in range(steps + 1):
        v = lo + i * (hi - lo) / steps
        out.append(f'<line x1="{px(v):.1f}" y1="{T + ph}" x2="{px(v):.1f}" y2="{T + ph + 4}" '
                   f'stroke="#666"/><text x="{px(v):.1f}" y="{T + ph + 16}" font-size="11" '
                   f'text-anchor="middle">{100 * v:.0f} %</text>')
        out.append(f'<line x1="{L - 4}" y1="{py(v):.1f}" x2="{L}" y2="{py(v):.1f}" '
                   f'stroke="#666"/><text x="{L - 6}" y="{py(v) + 4:.1f}" font-size="11" '
                   f'text-anchor="end">{100 * v:.0f} %</text>')
    out.append(f'<line x1="{px(lo):.1f}" y1="{py(lo):.1f}" x2="{px(hi):.1f}" y2="{py(hi):.1f}" '
               'stroke="#7f7f7f" stroke-dasharray="4 3"/>')
    out.append(f'<text x="{L + pw / 2}" y="{H - 10}" font-size="12" text-anchor="middle">'
               "predicted (calibration), 95 % interval</text>")
    out.append(f'<text x="14" y="{T + ph / 2}" font-size="12" text-anchor="middle" '
               f'transform="rotate(-90 14 {T + ph / 2})">players, 95 % interval</text>')
    for r in pts:
        c = OFF if r.get("outside") else OK
        x, y = px(r["predicted"]), py(r["observed"])
        tip = (f"{r['city_id']} {r['level_id']} r{r['revision']}: players "
               f"{100 * r['observed']:.1f} % ({100 * r['lo']:.1f}–{100 * r['hi']:.1f}), "
               f"predicted {100 * r['predicted']:.1f} % ({100 * r['predicted_lo']:.1f}–"
               f"{100 * r['predicted_hi']:.1f})")
        out.append(f'<g><title>{_e(tip)}</title>'
                   f'<line x1="{px(r["predicted_lo"]):.1f}" y1="{y:.1f}" '
                   f'x2="{px(r["predicted_hi"]):.1f}" y2="{y:.1f}" stroke="{c}" '
                   'stroke-opacity="0.6"/>'
                   f'<line x1="{x:.1f}" y1="{py(r["lo"]):.1f}" x2="{x:.1f}" '
                   f'y2="{py(r["hi"]):.1f}" stroke="{c}" stroke-opacity="0.6"/>'
                   f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{c}"/></g>')
    out.append("</svg>")
    return "".join(out)

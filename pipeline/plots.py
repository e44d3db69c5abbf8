"""Figures of the human audit report (SPEC §9: per level, inferability p10/p50/p90 against
depth with the target line; fog burden; retry rate), returned as inline-ready SVG strings.

Contract of every public function here: plain sequences in (one value per row of one
level, ordered by depth; ``None`` = missing, drawn as a gap), one ``<svg>...</svg>`` string
out that can be pasted into an HTML page as is:

- no XML prolog, DOCTYPE, metadata block or ``xmlns`` URLs (the page must open offline and
  reference nothing outside itself; HTML5 parses inline SVG without namespaces);
- every ``id`` inside the SVG, and every ``#ref`` to it, carries the caller's ``ns`` prefix,
  so several figures on one page never share an id;
- deterministic bytes for the same inputs: a fixed ``svg.hashsalt``, no date; text stays
  SVG <text> (``svg.fonttype = none``: the browser's sans-serif draws it; no font files,
  and ~5x cheaper to write than glyph paths).

Object-oriented matplotlib only (``matplotlib.figure.Figure``): no pyplot, no backend
switch, no global rcParams change (settings apply in an ``rc_context`` around the save).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence

import matplotlib
from matplotlib.figure import Figure

_SVG_RC = {"svg.hashsalt": "minegen-audit-report", "svg.fonttype": "none"}
# Every key the SVG writer would fill by default, set to None: no <metadata> block at all.
_NO_METADATA = {"Date": None, "Format": None, "Type": None, "Creator": None}
_FIGSIZE = (6.4, 3.6)

Values = Sequence[float | int | None]


def _floats(values: Values) -> list[float]:
    return [math.nan if v is None else float(v) for v in values]


def _new_axes(title: str, ylabel: str, depths: Sequence[int]):
    # Fixed margins, not layout="constrained": the constrained solver measures every text
    # extent several times and made the report the slowest non-generation step of a run.
    fig = Figure(figsize=_FIGSIZE)
    fig.subplots_adjust(left=0.11, right=0.89, top=0.9, bottom=0.15)
    ax = fig.add_subplot()
    ax.set_title(title)
    ax.set_xlabel("node depth D")
    ax.set_ylabel(ylabel)
    ax.set_xticks(list(depths))
    ax.grid(True, color="#dddddd", linewidth=0.6)
    if len(depths) == 1:  # one row: give the lone point some room
        ax.set_xlim(depths[0] - 1, depths[0] + 1)
    return fig, ax


def _floor_zero(ax, *series: Values) -> None:
    """y from 0; a no-fog level (all zeros) still gets a readable 0..1 axis."""
    top = max((v for s in series for v in _floats(s) if not math.isnan(v)), default=0.0)
    ax.set_ylim(0.0, top * 1.08 if top > 0 else 1.0)


def _scope_ids(svg: str, ns: str) -> str:
    """Prefix every id and every local reference to one with ``ns`` (see module doc)."""
    svg = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{ns}-{m.group(1)}"', svg)
    svg = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{ns}-{m.group(1)}"', svg)
    return re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{ns}-{m.group(1)})", svg)


def _to_svg(fig: Figure, ns: str) -> str:
    buf = io.StringIO()
    with matplotlib.rc_context(_SVG_RC):
        fig.savefig(buf, format="svg", metadata=_NO_METADATA)
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]  # drop the prolog and DOCTYPE (it names a DTD URL)
    svg = re.sub(r'\s+xmlns(?::\w+)?="[^"]*"', "", svg)
    return _scope_ids(svg, ns).strip()


def inferability_svg(level: int, depths: Sequence[int], p10: Values, p50: Values,
                     p90: Values, core_p10: Values, target: Values, *,
                     failing_depths: Sequence[int] = (), ns: str) -> str:
    """Inferability p10/p50/p90 and core p10 (dashed) against depth, with the row target
    (SPEC §8 A: no board may fall below it). ``failing_depths`` get a red cross: rows
    where a hard line failed."""
    fig, ax = _new_axes(f"Level {level}: inferability against depth", "inferability",
                        depths)
    lo, hi = _floats(p10), _floats(p90)
    ax.fill_between(depths, lo, hi, color="#1f77b4", alpha=0.12, linewidth=0,
                    label="p10-p90 band")
    ax.plot(depths, lo, marker="v", color="#1f77b4", linewidth=1, label="p10")
    ax.plot(depths, _floats(p50), marker="o", color="#1f3f77", linewidth=1.6, label="p50")
    ax.plot(depths, hi, marker="^", color="#6baed6", linewidth=1, label="p90")
    ax.plot(depths, _floats(core_p10), linestyle="--", marker=".", color="#9467bd",
            linewidth=1.2, label="core p10")
    ax.plot(depths, _floats(target), linestyle="-.", drawstyle="steps-mid", marker="_",
            markersize=16, markeredgewidth=2, color="#d62728", linewidth=1.4, label="target")
    if failing_depths:
        at = dict(zip(depths, lo))
        ax.plot(list(failing_depths), [at[d] for d in failing_depths], linestyle="none",
                marker="x", markersize=10, markeredgewidth=2, color="#d62728",
                label="row fails a hard line")
    finite = [v for v in lo + _floats(core_p10) + _floats(target) if not math.isnan(v)]
    ax.set_ylim(max(0.0, min(finite, default=0.0) - 0.05), 1.02)
    ax.legend(loc="lower left", fontsize="small", ncols=2)
    return _to_svg(fig, ns)


def burden_svg(level: int, depths: Sequence[int], burden_p50: Values, burden_p90: Values,
               delta_p50: Values, *, ns: str) -> str:
    """Fog burden against depth (SPEC §6): fog_burden_ratio p50/p90 on the left axis,
    delta_budget_fog p50 (AP) on the right axis; one legend for both."""
    fig, ax = _new_axes(f"Level {level}: fog burden against depth", "fog_burden_ratio",
                        depths)
    ax.plot(depths, _floats(burden_p50), marker="o", color="#2ca02c", label="burden ratio p50")
    ax.plot(depths, _floats(burden_p90), marker="^", linestyle="--", color="#98df8a",
            label="burden ratio p90")
    _floor_zero(ax, burden_p50, burden_p90)
    right = ax.twinx()
    right.set_ylabel("delta_budget_fog (AP)")
    right.plot(depths, _floats(delta_p50), marker="s", linestyle=":", color="#8c564b",
               label="delta_budget_fog p50")
    _floor_zero(right, delta_p50)
    handles, labels = ax.get_legend_handles_labels()
    more_h, more_l = right.get_legend_handles_labels()
    ax.legend(handles + more_h, labels + more_l, loc="upper left", fontsize="small")
    return _to_svg(fig, ns)


def retry_svg(level: int, depths: Sequence[int], retry_rate: Values, *, ns: str) -> str:
    """Retry rate (share of boards with attempts_used >= 2, SPEC §8 D) against depth."""
    fig, ax = _new_axes(f"Level {level}: retry rate against depth", "share of boards",
                        depths)
    ax.plot(depths, _floats(retry_rate), marker="o", color="#ff7f0e",
            label="retry rate (attempts >= 2)")
    ax.set_ylim(0.0, 1.02)
    ax.legend(loc="upper left", fontsize="small")
    return _to_svg(fig, ns)


def level_figures(level: int, rows: Sequence[Mapping],
                  failing_depths: Sequence[int] = ()) -> list[tuple[str, str, str]]:
    """The three figures of one level (SPEC §9) from its per-row aggregate dicts (columns of
    ``aggregate.aggregate``, ordered by depth) -> [(kind, svg, caption)] for kind in
    inferability, burden, retry; ids inside each svg are scoped by kind and level."""
    depths = [r["node_depth"] for r in rows]

    def col(name: str) -> list:
        return [r[name] for r in rows]

    return [
        ("inferability", inferability_svg(
            level, depths, col("inferability_p10"), col("inferability_p50"),
            col("inferability_p90"), col("inferability_core_p10"),
            col("inferability_target"), failing_depths=failing_depths, ns=f"inf-L{level}"),
         "Inferability p10/p50/p90 and core p10 (dashed) against depth, with the target; "
         "a cross marks a row failing a hard line."),
        ("burden", burden_svg(
            level, depths, col("fog_burden_ratio_p50"), col("fog_burden_ratio_p90"),
            col("delta_budget_fog_p50"), ns=f"bur-L{level}"),
         "Fog burden ratio p50/p90 (left axis) and delta_budget_fog p50 (right axis)."),
        ("retry", retry_svg(level, depths, col("retry_rate"), ns=f"ret-L{level}"),
         "Share of boards needing two or more attempts."),
    ]

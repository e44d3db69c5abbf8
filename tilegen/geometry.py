"""Exact geometry of one row: layer counts, footprint window, grid and lanes (05 §5, §10.1).

Pure functions over ints and decimal strings; no floating point anywhere. A decimal
(a layer share, the occupancy) is written in the tables as a plain string such as
``"0.40"`` and read here as an exact ``Fraction``, so a port that follows these rules
(integers and rationals only) reproduces every count bit for bit.

Board space (A-11): integer board units, origin top-left, y downward; the board
rectangle is the stacking grid plus the lane strip below it.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

from .plan import Geometry, Layout

# A plain non-negative decimal: digits, optionally a point and more digits ("0.40", "1").
# No sign, exponent, underscore or blank: the same text reads the same in every language.
PLAIN_DECIMAL = re.compile(r"[0-9]+(\.[0-9]+)?")


def parse_decimal(text: object) -> Fraction | None:
    """The exact value of a plain decimal string, or ``None`` if ``text`` is not one."""
    if not isinstance(text, str) or PLAIN_DECIMAL.fullmatch(text) is None:
        return None
    return Fraction(Decimal(text))


def _share(value: str | Fraction | Decimal | int) -> Fraction:
    if isinstance(value, str):
        out = parse_decimal(value)
        if out is None:
            raise ValueError(f"not a plain decimal: {value!r}")
        return out
    return Fraction(value)


def layer_counts(total: int, shares: list[str]) -> list[int]:
    """Pieces per layer, bottom first (05 §10.1, A-18).

    Exact largest remainder: quota ``q_l = total·d_l / Σd``; ``n_l = floor(q_l)``; the
    ``total − Σ n_l`` pieces left go one each to the layers with the largest fractional
    part, ties to the LOWER layer. ``shares`` are the shares used (already truncated to
    the layer count), each > 0. Golden: 18 over ("0.40", "0.35") -> [10, 8].
    """
    d = [_share(s) for s in shares]
    if not d or any(x <= 0 for x in d) or total < 0:
        raise ValueError(f"layer_counts needs total >= 0 and shares > 0, got {total}, {shares}")
    whole = sum(d)
    quotas = [total * x / whole for x in d]
    counts = [math.floor(q) for q in quotas]
    left = total - sum(counts)
    order = sorted(range(len(d)), key=lambda i: (-(quotas[i] - counts[i]), i))
    for i in order[:left]:
        counts[i] += 1
    return counts


def footprint_anchors(n_max: int, occupancy: str) -> int:
    """``m_anchors = ceil(n_max / ρ)`` on the exact rational ρ (A-13)."""
    rho = _share(occupancy)
    if rho <= 0:
        raise ValueError(f"occupancy must be > 0, got {occupancy!r}")
    return math.ceil(Fraction(n_max) / rho)


def footprint_window(n_max: int, occupancy: str, cols: int,
                     rows: int) -> tuple[int, int, int, int] | None:
    """The centred footprint sub-rectangle ``(c0, r0, wc, wr)`` of the anchor grid
    (A-13, decision 97), or ``None`` when ``m_anchors > cols·rows`` (load-time fatal,
    category ``footprint``).

    Start ``wc = wr = 1``; while ``wc·wr < m_anchors``: if ``wc ≤ wr`` and ``wc < cols``
    then ``wc += 1``, elif ``wr < rows`` then ``wr += 1``, else ``wc += 1``. Origin
    ``c0 = (cols − wc) // 2``, ``r0 = (rows − wr) // 2``. Defaults (7 × 8, ρ = 0.40):
    n_max 10 -> 5 × 5 at (1, 1); 11 -> 6 × 5; 8 -> 5 × 4.
    """
    need = footprint_anchors(n_max, occupancy)
    if need > cols * rows:
        return None
    wc = wr = 1
    while wc * wr < need:
        if wc <= wr and wc < cols:
            wc += 1
        elif wr < rows:
            wr += 1
        else:  # unreachable once need <= cols·rows; kept as the rule is written
            wc += 1
    return (cols - wc) // 2, (rows - wr) // 2, wc, wr


def grid_size(cols: int, rows: int, pitch: int, jitter: int, piece: int) -> tuple[int, int]:
    """``(W_g, H_g)`` with margin ``m = jitter``: ``W_g = 2m + (cols − 1)·pitch + piece``
    (A-12, A-14). Defaults: 416 × 472."""
    return (2 * jitter + (cols - 1) * pitch + piece, 2 * jitter + (rows - 1) * pitch + piece)


def lane_strip_width(count: int, lane_pitch: int, piece: int) -> int:
    """Width of the lane strip: ``count·piece + (count − 1)·(lane_pitch − piece)``."""
    return (count - 1) * lane_pitch + piece


def lanes(grid_w: int, grid_h: int, piece: int, count: int, lane_pitch: int,
          gap: int) -> tuple[tuple[int, ...], int]:
    """Return-lane boxes (05 §5.2, A-15): ``(x_0 … x_{K−1}, lane_y)``, each box
    ``piece × piece``. ``lane_y = H_g + gap``; the strip is centred under the grid,
    ``x_k = (W_g − strip) // 2 + k·lane_pitch``. Defaults: x = 104, 176, 248; y = 480.
    The loader guarantees ``strip ≤ W_g`` and ``lane_pitch ≥ piece``."""
    x0 = (grid_w - lane_strip_width(count, lane_pitch, piece)) // 2
    return tuple(x0 + k * lane_pitch for k in range(count)), grid_h + gap


def geometry_for(layout: Layout, n_max: int) -> Geometry:
    """``plan.Geometry`` of a row whose largest layer holds ``n_max`` pieces.

    Board rectangle: ``W = W_g``, ``H = lane_y + piece + gap`` (the gap repeated under
    the strip; defaults 416 × 552). Raises ``ValueError`` if the footprint does not fit
    (the loader reports that row as ``footprint`` first).
    """
    window = footprint_window(n_max, layout.occupancy, layout.grid_cols, layout.grid_rows)
    if window is None:
        raise ValueError(f"footprint of {n_max} pieces at occupancy {layout.occupancy} "
                         f"exceeds the {layout.grid_cols} x {layout.grid_rows} grid")
    gw, gh = grid_size(layout.grid_cols, layout.grid_rows, layout.pitch, layout.jitter,
                       layout.piece_size)
    xs, y = lanes(gw, gh, layout.piece_size, layout.lane_count, layout.lane_pitch,
                  layout.lane_gap)
    return Geometry(
        piece_size=layout.piece_size,
        grid_cols=layout.grid_cols,
        grid_rows=layout.grid_rows,
        pitch=layout.pitch,
        jitter=layout.jitter,
        rotation_max=layout.rotation_max,
        occupancy=layout.occupancy,
        lane_count=layout.lane_count,
        lane_pitch=layout.lane_pitch,
        lane_gap=layout.lane_gap,
        window=window,
        grid_w=gw,
        grid_h=gh,
        lane_xs=xs,
        lane_y=y,
        board_w=gw,
        board_h=y + layout.piece_size + layout.lane_gap,
    )

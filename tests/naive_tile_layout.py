"""Slow, obviously correct twins of ``tilegen/_kernels/layout.py`` (STYLE 4), written from
the rules as docs/tilegen.md and docs/tile-draw-protocol.md state them (05 §6.2, §9.2,
§10.2, §11; decisions 99, 100, 123), not from the kernels: a piece is a dict, a piece set
is a Python set, every closure is iterated literally until nothing changes, boxes are
compared as exact rational rectangles.

The only thing borrowed from the project is the stream (``boardcore.streams.Pcg32``), wrapped in
``Stream`` so that a test can count the bounded draws.

Readings this twin takes (each checked against the kernels):
- pass 1 (docs/tile-draw-protocol.md §4) makes at most one pick per category (05 §9.2:
  "first draw at least one element per category"; tile-draw-protocol §7: "one pick per
  category in enum order"), skipping empty categories.
- tile-draw-protocol §5 step 3 draws per layer: the layer's anchor draws, then its pieces'
  offsets, then the next layer.
- V4 fails for an element with no piece at all (no piece of it is near the surface).
"""

from __future__ import annotations

from fractions import Fraction

from boardcore.streams import Pcg32

LAYOUT_SEQ = 1442695040888963407  # decision 101: initseq of the layout stream
CATEGORY_ORDER = ("landmark", "food", "culture", "item", "nature")  # codes.Category order


class Stream:
    """The layout stream with a counter of bounded draws."""

    def __init__(self, seed: int, initseq: int = LAYOUT_SEQ):
        self.rng = Pcg32(seed, initseq)
        self.draws = 0

    def bounded(self, n: int) -> int:
        self.draws += 1
        return self.rng.bounded(n)


# ----------------------------------------------------------------------------- 05 §9.2

def weighted_pick(stream: Stream, candidates: list[int], weights) -> int:
    if len(candidates) == 1:
        return candidates[0]
    r = stream.bounded(sum(weights[c] for c in candidates))
    running = 0
    for c in candidates:
        running += weights[c]
        if running > r:
            return c
    raise AssertionError("unreachable")


def select_elements(stream: Stream, categories, weights, E: int) -> list[int]:
    """categories[i] is the Category code of city element i (elements sorted by id)."""
    chosen: list[int] = []
    for cat in range(len(CATEGORY_ORDER)):
        if len(chosen) >= E:
            break
        cands = [i for i in range(len(categories)) if categories[i] == cat and i not in chosen]
        if cands:
            chosen.append(weighted_pick(stream, cands, weights))
    while len(chosen) < E:
        cands = [i for i in range(len(categories)) if i not in chosen]
        if not cands:
            break
        chosen.append(weighted_pick(stream, cands, weights))
    return chosen


# ----------------------------------------------------------------------------- decision 100

def draw_layout(stream: Stream, ppe, layer_counts, anchors, jitter: int, rot_max: int,
                pitch: int) -> list[dict]:
    """The pieces of one attempt in piece order (layer ascending, deal order)."""
    pool = [i for i, n in enumerate(ppe) for _ in range(n)]
    T = len(pool)
    for j in range(T - 1):
        t = j + stream.bounded(T - j)
        pool[j], pool[t] = pool[t], pool[j]
    pieces = []
    start = 0
    for layer, n in enumerate(layer_counts, start=1):
        dealt = pool[start:start + n]
        start += n
        A = [tuple(a) for a in anchors]  # fresh row-major list for this layer
        for j in range(n):
            t = j + stream.bounded(len(A) - j)
            A[j], A[t] = A[t], A[j]
        for j, elem in enumerate(dealt):
            c, r = A[j]
            dx = stream.bounded(2 * jitter + 1) - jitter
            dy = stream.bounded(2 * jitter + 1) - jitter
            rot = stream.bounded(2 * rot_max + 1) - rot_max
            pieces.append(dict(elem=elem, layer=layer, ac=c, ar=r,
                               x=jitter + c * pitch + dx, y=jitter + r * pitch + dy, rot=rot))
    return pieces


# ----------------------------------------------------------------------------- 05 §6.2

def rect_intersection(a, b):
    """Half-open rectangles (x0, y0, x1, y1); None when the intersection is empty."""
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    if x0 < x1 and y0 < y1:
        return (x0, y0, x1, y1)
    return None


def box_occludes(ax, ay, bx, by, size) -> bool:
    """The geometric part of 05 §6.2 (the layer condition is the caller's)."""
    a = (ax, ay, ax + size, ay + size)
    b = (bx, by, bx + size, by + size)
    inter = rect_intersection(a, b)
    if inter is None:
        return False
    area = (inter[2] - inter[0]) * (inter[3] - inter[1])
    if Fraction(area, size * size) < Fraction(1, 5):
        return False
    q = Fraction(size, 4)
    centre = (bx + q, by + q, bx + 3 * q, by + 3 * q)
    return rect_intersection(inter, centre) is not None


def occluders(pieces, size) -> list[set[int]]:
    """occluders(...)[p] = the pieces that occlude piece p."""
    return [{q for q, a in enumerate(pieces)
             if a["layer"] > b["layer"] and box_occludes(a["x"], a["y"], b["x"], b["y"], size)}
            for b in pieces]


def depths(occ: list[set[int]]) -> list[int]:
    memo: dict[int, int] = {}

    def depth(p):
        if p not in memo:
            memo[p] = 0 if not occ[p] else 1 + max(depth(q) for q in occ[p])
        return memo[p]

    return [depth(p) for p in range(len(occ))]


def clickable(occ: list[set[int]]) -> set[int]:
    return {p for p in range(len(occ)) if not occ[p]}


# ----------------------------------------------------------------------------- 05 §10.2, §11.2

def self_uncovering(occ, mine: set[int]) -> set[int]:
    K: set[int] = set()
    while True:
        add = {p for p in mine if p not in K and occ[p] <= K}
        if not add:
            return K
        K |= add


def anchor_groups(cells: list[tuple[int, int]]) -> list[int]:
    """Sizes of the 8-connected groups of a list of anchors (duplicates count twice)."""
    left = list(range(len(cells)))
    sizes = []
    while left:
        group = [left.pop(0)]
        i = 0
        while i < len(group):
            c, r = cells[group[i]]
            near = [k for k in left if abs(cells[k][0] - c) <= 1 and abs(cells[k][1] - r) <= 1]
            for k in near:
                left.remove(k)
            group += near
            i += 1
        sizes.append(len(group))
    return sizes


def layout_checks(pieces, occ, E, *, click_min_bp, level_id, near_depth, cluster_size) -> dict:
    T = len(pieces)
    dep = depths(occ)
    c0 = clickable(occ)
    elems = [{p for p in range(T) if pieces[p]["elem"] == e} for e in range(E)]
    chains = sum(len(self_uncovering(occ, m)) >= 3 for m in elems)
    direct = sum(len(m & c0) >= 3 for m in elems)
    v = dict(
        clickable=len(c0), chains=chains, direct=direct,
        max_depth=max(dep, default=0), edges=sum(len(o) for o in occ),
        v1=Fraction(len(c0), T) >= Fraction(click_min_bp, 10000),
        v2=chains >= 2,
        v3=level_id != 1 or direct >= 1,
        v4=all(any(dep[p] <= near_depth for p in m) for m in elems),
        v5=not any(max(anchor_groups([(pieces[p]["ac"], pieces[p]["ar"]) for p in m
                                      if pieces[p]["layer"] == layer]), default=0)
                   >= cluster_size
                   for m in elems for layer in {pc["layer"] for pc in pieces}),
    )
    failing = [k for k in ("v1", "v2", "v3", "v4", "v5") if not v[k]]
    v["fails"] = len(failing)
    v["first_fail"] = int(failing[0][1]) if failing else 0  # Reason 1..5 = V1..V5
    return v


# ----------------------------------------------------------------------------- decision 123

def layout_defect(pieces, occ, layer_counts, *, size, grid_w, grid_h, lane_xs, lane_y) -> int:
    """First violated invariant as its codes.Defect value (0 = none)."""
    counts = [sum(p["layer"] == layer for p in pieces) for layer in range(1, len(layer_counts) + 1)]
    if counts != list(layer_counts) or sum(counts) != len(pieces):
        return 1  # LAYER_COUNTS
    spots = [(p["layer"], p["ac"], p["ar"]) for p in pieces]
    if len(set(spots)) != len(spots):
        return 2  # TWO_ON_ONE_ANCHOR
    if not all(0 <= p["x"] and p["x"] + size <= grid_w and 0 <= p["y"] and p["y"] + size <= grid_h
               for p in pieces):
        return 3  # BOX_OUTSIDE_GRID
    for p in pieces:
        for lx in lane_xs:
            if rect_intersection((p["x"], p["y"], p["x"] + size, p["y"] + size),
                                 (lx, lane_y, lx + size, lane_y + size)):
                return 4  # BOX_ON_LANE
    if any(pieces[q]["layer"] <= pieces[p]["layer"] for p in range(len(pieces)) for q in occ[p]):
        return 5  # EDGE_NOT_DOWNWARD
    return 0

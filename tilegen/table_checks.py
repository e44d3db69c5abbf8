"""Cross-field, cross-file and content rules of the tile-match tables (on the
project's toolkit, ``boardcore.tables``).

``table_model`` judges each field on its own; ``table_loader`` reads the files and builds
the rows. This module holds what lies between: the rules that compare fields of one row
(layout.toml's piece size, pitch and lanes; an acceptance row's band; a preset row's
element count, pieces, layers and target against its city, density class, grid and level
band), the rule that every level a preset uses has an acceptance row, and doc 04's content
rules (warnings). Every rule runs only on values that passed their field check, so one bad
value never cascades, and writes its findings to a ``Collector``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from boardcore.tables import Collector, dec, emit, has, show

from . import table_model as tm
from .codes import BP, MAX_PIECES
from .geometry import footprint_window, grid_size, lane_strip_width, layer_counts
from .plan import Gates

CITIES_DIR = "cities"
PRESETS_FILE = "presets.toml"
DENSITY_FILE = "density.toml"
LAYOUT_FILE = "layout.toml"
ACCEPTANCE_FILE = "acceptance.toml"
RULES_FILE = "rules.toml"
DAILY_FILE = "daily.toml"  # which preset each city's daily uses (tilegen.daily)


def bp(x: int | float) -> int:
    """A rate with at most 4 decimals in basis points (exact: the decimal as written)."""
    return int(dec(x) * BP)


@dataclass
class Context:
    """What a preset row is checked against (only the parts that were themselves valid)."""

    # city id -> its number of element entries (None: file or elements unusable)
    cities: dict[str, int | None] = field(default_factory=dict)
    cities_known: bool = True  # False: cities/ unusable, so no unknown_city verdicts
    density: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    grid: tuple[int, int, str] | None = None  # (grid_cols, grid_rows, occupancy)
    bands: dict[int, tuple[int, int] | None] = field(default_factory=dict)  # level -> bp band
    bands_known: bool = True  # False: some acceptance row's level is unknown

    @classmethod
    def of(cls, c: tm.Catalog) -> Context:
        return cls(cities={x.id: len(x.elements) for x in c.cities}, density=dict(c.density),
                   grid=(c.layout.grid_cols, c.layout.grid_rows, c.layout.occupancy),
                   bands={lv: (g.tool_free_min_bp, g.tool_free_max_bp)
                          for lv, g in c.acceptance.items()})


# ------------------------------------------------------------------------- layout.toml

def layout_rules(ok: dict, out: Collector) -> None:
    """layout.toml's cross-field rules on individually valid fields: piece size,
    pitch bound, lane pitch, and the lane strip within the grid width."""
    lanes = ok.get("lanes", {})
    if "piece_size" in ok and ok["piece_size"] % 4:
        out.add("piece_size_divisible_by_4", LAYOUT_FILE, "-", "piece_size",
                show(ok["piece_size"]), "piece_size must be divisible by 4 (decision 119)")
    if has(ok, "pitch", "jitter", "piece_size") \
            and ok["pitch"] > ok["piece_size"] + 2 * ok["jitter"]:
        out.add("domain", LAYOUT_FILE, "-", "pitch", show(ok["pitch"]),
                "pitch must be in (0, piece_size + 2*jitter] (A-12)")
    if "piece_size" in ok and "pitch" in lanes and lanes["pitch"] < ok["piece_size"]:
        out.add("domain", LAYOUT_FILE, "-", "lanes.pitch", show(lanes["pitch"]),
                "lanes.pitch must be >= piece_size (lane boxes never overlap, A-15)")
    if has(ok, "grid_cols", "pitch", "jitter", "piece_size") and has(lanes, "count", "pitch"):
        width = grid_size(ok["grid_cols"], 1, ok["pitch"], ok["jitter"], ok["piece_size"])[0]
        strip = lane_strip_width(lanes["count"], lanes["pitch"], ok["piece_size"])
        if strip > width:
            out.add("domain", LAYOUT_FILE, "-", "lanes.count", show(lanes["count"]),
                    f"the lane strip ({strip}) must fit the grid width ({width}) (A-15)")


# --------------------------------------------------------------------- acceptance.toml

def acceptance_row(raw: dict, pos: int, out: Collector):
    """One [[levels]] row (05 §15.1, A-25): (level, label, band in basis points,
    Gates); level / band / Gates are None when unknown or broken."""
    ok, problems = tm.check_fields(raw, tm.ACCEPTANCE_FIELDS)
    problems = [(f, v, "acceptance" if c == "domain" else c, r) for f, v, c, r in problems]
    level = ok.get("level_id")
    label = str(level) if level is not None else f"#{pos}"
    emit(out, ACCEPTANCE_FILE, label, problems)
    bad = bool(problems)
    for name in ("tool_free_min", "tool_free_max", "tool_assist_min", "clickable_min"):
        if name in ok and dec(ok[name]) * BP != bp(ok[name]):
            out.add("acceptance", ACCEPTANCE_FILE, label, name, show(ok[name]),
                    f"{name} must have at most {tm.SHARE_DECIMALS} decimals (basis points)")
            bad = True
            ok.pop(name)
    if has(ok, "tool_free_min", "tool_free_max") and ok["tool_free_max"] < ok["tool_free_min"]:
        out.add("acceptance", ACCEPTANCE_FILE, label, "tool_free_max", show(ok["tool_free_max"]),
                "0 < tool_free_min <= tool_free_max <= 1 (05 §15.1, A-25)")
        bad = True
    band = None
    if "tool_free_min" in ok and not bad:
        band = (bp(ok["tool_free_min"]), bp(ok.get("tool_free_max", 1)))
    gates = None if bad else Gates(band[0], band[1], bp(ok["tool_assist_min"]),
                                   bp(ok["clickable_min"]))
    return level, label, band, gates


def acceptance_coverage(levels: set[int], ctx: Context, out: Collector) -> None:
    """Every level a preset row uses needs an acceptance row (skipped when the acceptance
    file is unusable or one of its rows has no valid level_id)."""
    if ctx.bands_known:
        for level in sorted(levels - set(ctx.bands)):
            out.add("acceptance", ACCEPTANCE_FILE, str(level), "level_id", "-",
                    f"presets use level {level}: acceptance.toml needs a [[levels]] row for it")


# -------------------------------------------------------------------- presets (04, 05)

def row_rules(ok: dict, label: str, ctx: Context, out: Collector) -> None:
    """Cross-field and cross-file rules of one preset row, on individually valid fields."""
    def add(category, fld, value, rule, severity="error"):
        out.add(category, PRESETS_FILE, label, fld, show(value), rule, severity)

    count, ppe = ok.get("element_count"), ok.get("pieces_per_element")
    city, layers = ok.get("city_id"), ok.get("layers")
    total = None  # T (never a list of element_count entries: that may be 2^31 long)
    if isinstance(ppe, list) and count is not None:
        if len(ppe) != count:
            add("ppe_length", "pieces_per_element", ppe,
                f"a pieces_per_element array needs element_count = {count} entries (03)")
        else:
            total = sum(ppe)
    elif ppe is not None and count is not None:
        total = ppe * count
    if city is not None and ctx.cities_known and city not in ctx.cities:
        add("unknown_city", "city_id", city,
            f"no {CITIES_DIR}/{city}.toml; known: {', '.join(sorted(ctx.cities))}")
    size = ctx.cities.get(city) if city is not None else None
    if count is not None and size is not None and count > size:
        add("element_count_exceeds_city", "element_count", count,
            f"element_count must be <= the city's {size} elements (05 §9.1)")
    if count is not None and count < tm.ELEMENT_COUNT_WARN:
        add("element_count_low", "element_count", count, "element_count < 5 cannot cover "
            "the five categories; categories are taken in enum order (A-34)", "warning")
    if total is not None and total > MAX_PIECES:
        add("total_pieces_cap", "pieces_per_element", ppe,
            f"total pieces {total} must be <= {MAX_PIECES} (uint64 search masks)")
        total = None
    base = ctx.density.get(ok["density"]) if "density" in ok else None
    override = ok.get("layer_distribution")
    if layers is not None and base is not None and layers > len(base):
        add("layers_exceed_distribution", "layers", layers,
            f"layers must be <= the {len(base)} shares of density {ok['density']} (A-17)")
    shares = None
    if layers is not None and override is not None:
        if len(override) != layers:
            add("distribution", "layer_distribution", override,
                f"layer_distribution needs one share per layer ({layers})")
        else:
            shares = override
    elif layers is not None and base is not None and layers <= len(base):
        shares = base[:layers]
    counts = layer_counts(total, list(shares)) if total is not None and shares else None
    if counts is not None and min(counts) == 0:
        add("distribution", "layers", layers, f"every layer must get >= 1 piece; the shares "
            f"{', '.join(shares)} give {counts} of {total} (A-18)")
    if counts is not None and ctx.grid is not None:
        cols, rows, occupancy = ctx.grid
        if footprint_window(max(counts), occupancy, cols, rows) is None:
            add("footprint", "layer_counts", counts, f"ceil(n_max / occupancy) anchors for "
                f"n_max = {max(counts)} exceed the {cols} x {rows} grid (A-13)")
    band = ctx.bands.get(ok["level_id"]) if "level_id" in ok else None
    if band is not None and "target_pass_rate" in ok:
        if not band[0] <= dec(ok["target_pass_rate"]) * BP <= band[1]:
            add("target_outside_band", "target_pass_rate", ok["target_pass_rate"],
                f"target_pass_rate must lie in level {ok['level_id']}'s tool-free band "
                f"[{band[0] / BP}, {band[1] / BP}] (A-25)")


def check_row(raw: dict, pos: int, ctx: Context, out: Collector):
    """One preset row: (PresetRow or None, key or None, valid fields)."""
    n0 = out.errors()
    ok, problems = tm.check_fields(raw, tm.PRESET_FIELDS)
    if "revision" not in raw:
        ok["revision"] = 1  # default 1
    key = (ok["city_id"], ok["level_id"], ok["revision"]) \
        if has(ok, "city_id", "level_id", "revision") else None
    label = ":".join(map(str, key)) if key else f"#{pos}"
    emit(out, PRESETS_FILE, label, problems)
    row_rules(ok, label, ctx, out)
    if out.errors() != n0:
        return None, key, ok
    ppe = ok["pieces_per_element"]
    row = tm.PresetRow(
        *key, ok["difficulty_tier"], ok["element_count"],
        tuple(ppe) if isinstance(ppe, list) else ppe, ok["layers"], ok["density"],
        float(ok["target_pass_rate"]),
        tuple(ok["target_duration_sec"]) if "target_duration_sec" in ok else None,
        tuple(ok["layer_distribution"]) if "layer_distribution" in ok else None)
    return row, key, ok


# ------------------------------------------------------------------------ content (04)

def content_warnings(ctx: Context, cats: dict, keys, out: Collector) -> None:
    """doc 04's content rules (05 §19): reported, not fatal."""
    lo, hi = tm.CITY_ELEMENTS
    for city in sorted(ctx.cities):
        name, size = f"{CITIES_DIR}/{city}.toml", ctx.cities[city]
        if size is not None and not lo <= size <= hi:
            out.add("content_elements", name, "-", "elements", str(size),
                    f"a city should have {lo}..{hi} elements (04)", "warning")
        for cat, need in tm.CATEGORY_MINIMA.items():
            have = cats.get(city, []).count(cat)
            if size is not None and have < need:
                out.add("content_categories", name, "-", "category", cat,
                        f"a city should have >= {need} {cat} elements, has {have} (04)",
                        "warning")
        if keys is not None:
            levels = sorted(lv for c, lv, rev in keys if c == city and rev == 1)
            if levels != list(tm.LEVELS):
                out.add("content_presets", PRESETS_FILE, city, "level_id", show(levels),
                        "a city should have exactly 6 presets of revision 1, levels 1..6 (04)",
                        "warning")

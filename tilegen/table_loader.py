"""Load and validate a tile-match table root: collect every diagnostic, then fail once
(brief §20.5; house style of ``minegen.table_loader``).

A table root (default ``tables/tilematch/``) holds ``cities/<city_id>.toml`` (one file per
city: ``[city]`` and ``[[elements]]``), ``presets.toml`` (``[[rows]]``, key
(city_id, level_id, revision)), ``density.toml``, ``layout.toml``, ``acceptance.toml``
(``[[levels]]``) and ``rules.toml``. Field domains live in ``table_model``; this module
runs the cross-field and cross-file rules and builds the row snapshots (``plans``).

Contract: ``load_tables`` never stops at the first finding and never lets a traceback
escape for malformed input; every finding is a ``Diagnostic`` whose ``file`` is relative
to the root (``cities/seoul.toml``). Any error raises one ``TableError`` carrying all of
them; warnings (doc 04's content rules, brief §17; element_count < 5, A-34) ride along in
``Catalog.warnings``. Row labels: ``"beijing:1:1"`` for a preset row, the element id for
a city element, the level id for an acceptance row, the class name for a density class,
``"#n"`` (1-based position) when the key itself is broken, ``"-"`` for file-level findings.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from minegen.errors import Diagnostic, MinegenError, TableError
from minegen.table_checks import dec

from . import table_model as tm
from .codes import BP, DENSITIES, MAX_PIECES, Category
from .geometry import footprint_window, geometry_for, grid_size, lane_strip_width, layer_counts
from .plan import Gates, Rules, TilePlan

CITIES_DIR = "cities"
PRESETS_FILE = "presets.toml"
DENSITY_FILE = "density.toml"
LAYOUT_FILE = "layout.toml"
ACCEPTANCE_FILE = "acceptance.toml"
RULES_FILE = "rules.toml"
DEFAULT_ROOT = Path(__file__).resolve().parent.parent / "tables" / "tilematch"
# preset fields a sweep / tune may vary one at a time (05 §16 ladder, brief §14)
VARY_FIELDS = ("element_count", "layers", "density", "pieces_per_element",
               "layer_distribution", "target_pass_rate")

_KEY = re.compile(r"([a-z][a-z0-9_]*):([0-9]{1,9})(?::([0-9]{1,9}))?")


class _Collector:
    """The diagnostics of one load, in discovery order."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, category, file, row="-", field="-", value="-", rule="", severity="error"):
        self.items.append(Diagnostic(category, file, row, field, value, rule, severity))

    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.items)


def _read(root: Path, name: str, out: _Collector) -> dict | None:
    """Parse one required TOML file; ``None`` (plus a "parse" diagnostic) if unusable."""
    path = root / name
    if not path.is_file():
        why = "exists but is not a regular file" if path.exists() or path.is_symlink() \
            else "is missing"
        out.add("parse", name, rule=f"required file {name} {why} (root {root})")
        return None
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        out.add("parse", name, rule=f"file is unreadable: {exc}")
    except tomllib.TOMLDecodeError as exc:
        out.add("parse", name, rule=f"file must be valid TOML: {exc}")
    except ValueError as exc:  # tomllib lets int()'s digit limit escape
        out.add("parse", name, rule=f"file must be valid TOML: {str(exc).split(';')[0]}")
    except RecursionError:
        out.add("parse", name, rule="file must be valid TOML: nesting too deep")
    return None


def _tables_of(doc: dict, key: str, name: str, out: _Collector) -> list[tuple[int, dict]]:
    """The array of tables ``[[key]]`` as (1-based position, table); shape errors: parse."""
    for k in doc:
        if k != key:
            out.add("unknown_field", name, field=tm.key_name(k), value=tm.show(doc[k]),
                    rule=f"the only top-level key is {key} (an array of tables [[{key}]])")
    items = doc.get(key)
    if not items:
        out.add("parse", name, rule=f"file must hold at least one [[{key}]] table")
        return []
    if not isinstance(items, list):
        out.add("parse", name, field=key, value=tm.show(items), rule=f"{key} must be [[{key}]]")
        return []
    good = []
    for pos, item in enumerate(items, start=1):
        if isinstance(item, dict):
            good.append((pos, item))
        else:
            out.add("parse", name, f"#{pos}", key, tm.show(item),
                    f"each entry of {key} must be a table ([[{key}]])")
    return good


def _emit(out: _Collector, name: str, label: str, problems) -> None:
    for fld, value, category, rule in problems:
        out.add(category, name, label, fld, value, rule)


def _has(ok: dict, *names: str) -> bool:
    return all(n in ok for n in names)


def _bp(x: int | float) -> int:
    """A rate with at most 4 decimals in basis points (exact: the decimal as written)."""
    return int(dec(x) * BP)


@dataclass
class _Context:
    """What a preset row is checked against (only the parts that were themselves valid)."""

    # city id -> its number of element entries (None: file or elements unusable)
    cities: dict[str, int | None] = field(default_factory=dict)
    cities_known: bool = True  # False: cities/ unusable, so no unknown_city verdicts
    density: dict[str, tuple[str, ...] | None] = field(default_factory=dict)
    grid: tuple[int, int, str] | None = None  # (grid_cols, grid_rows, occupancy)
    bands: dict[int, tuple[int, int] | None] = field(default_factory=dict)  # level -> bp band
    bands_known: bool = True  # False: some acceptance row's level is unknown

    @classmethod
    def of(cls, c: tm.Catalog) -> _Context:
        return cls(cities={x.id: len(x.elements) for x in c.cities}, density=dict(c.density),
                   grid=(c.layout.grid_cols, c.layout.grid_rows, c.layout.occupancy),
                   bands={lv: (g.tool_free_min_bp, g.tool_free_max_bp)
                          for lv, g in c.acceptance.items()})


# ------------------------------------------------------------------------- cities (04)

def _load_city(doc: dict, name: str, stem: str, owner: dict, out: _Collector):
    """One city file: (City or None, element entries or None, valid categories)."""
    n0 = out.errors()
    for k in doc:
        if k not in ("city", "elements"):
            out.add("unknown_field", name, field=tm.key_name(k), value=tm.show(doc[k]),
                    rule="top-level keys: city (a table) and elements ([[elements]])")
    head, city_name = doc.get("city"), ""
    if not isinstance(head, dict):
        out.add("missing_field" if head is None else "type", name, field="city",
                value=tm.show(head) if head is not None else "-",
                rule="required: a [city] table with id (= the file name)")
    else:
        ok, problems = tm.check_fields(head, tm.CITY_FIELDS, "city.")
        _emit(out, name, "-", problems)
        if ok.get("id", stem) != stem:
            out.add("domain", name, "-", "city.id", tm.show(ok["id"]),
                    f"city id must equal the file name {stem!r}")
        city_name = ok.get("name", "")
    items = doc.get("elements")
    if not isinstance(items, list):
        out.add("missing_field" if items is None else "type", name, field="elements",
                value=tm.show(items) if items is not None else "-",
                rule="required: the city's elements as [[elements]] tables")
        return None, None, []
    elements, cats = [], []
    for pos, raw in enumerate(items, start=1):
        if not isinstance(raw, dict):
            out.add("type", name, f"#{pos}", "elements", tm.show(raw),
                    "each entry of elements must be a table ([[elements]])")
            continue
        ok, problems = tm.check_fields(raw, tm.ELEMENT_FIELDS)
        label = ok["id"] if "id" in ok else f"#{pos}"
        _emit(out, name, label, problems)
        if "category" in ok:
            cats.append(ok["category"])
        if "id" in ok:
            if ok["id"] in owner:
                out.add("duplicate_element_id", name, label, "id", tm.show(ok["id"]),
                        f"element ids must be unique across cities; {ok['id']} is already "
                        f"defined in {owner[ok['id']]}")
                continue
            owner[ok["id"]] = name
        if not problems:
            elements.append(tm.Element(ok["id"], ok["category"], ok["rarity"],
                                       ok.get("weight", 1), ok.get("name", "")))
    total = sum(e.weight for e in elements)
    if total > tm.WEIGHT_SUM_CAP:
        out.add("domain", name, "-", "weight", tm.show(total),
                f"the city's weights must sum to <= {tm.WEIGHT_SUM_CAP} (a uint32 draw bound)")
    clean = out.errors() == n0
    city = tm.City(stem, tuple(sorted(elements, key=lambda e: e.id)), city_name)
    return (city if clean else None), len(items), cats


def _load_cities(root: Path, ctx: _Context, out: _Collector):
    """Every ``cities/*.toml``: (clean cities, {city id: valid categories})."""
    folder = root / CITIES_DIR
    try:
        paths = sorted(p for p in folder.iterdir() if p.name.endswith(".toml"))
    except OSError:
        paths = []
    if not paths:
        out.add("parse", CITIES_DIR, rule=f"{CITIES_DIR}/ must hold one <city_id>.toml per city")
        ctx.cities_known = False
    cities, cats, owner = [], {}, {}
    for path in paths:
        name, stem = f"{CITIES_DIR}/{path.name}", path.name[: -len(".toml")]
        doc = _read(root, name, out)
        ctx.cities[stem] = None
        if doc is None:
            continue
        city, ctx.cities[stem], cats[stem] = _load_city(doc, name, stem, owner, out)
        if city is not None:
            cities.append(city)
    return cities, cats


# ------------------------------------------------------------- density, layout, gates

def _load_density(doc: dict | None, ctx: _Context, out: _Collector) -> dict:
    """density.toml: one [class] per ``codes.DENSITIES`` with its distribution (05 §10.1)."""
    result: dict[str, tuple[str, ...]] = {}
    for cls in DENSITIES:
        ctx.density[cls] = None
    if doc is None:
        return result
    for k in doc:
        if k not in DENSITIES:
            out.add("unknown_field", DENSITY_FILE, field=tm.key_name(k), value=tm.show(doc[k]),
                    rule=f"density classes: {', '.join(DENSITIES)}")
    for cls in DENSITIES:
        if not isinstance(doc.get(cls), dict):
            out.add("missing_field" if cls not in doc else "type", DENSITY_FILE, field=cls,
                    value=tm.show(doc[cls]) if cls in doc else "-",
                    rule=f"required: a table [{cls}] with distribution = [\"0.40\", ...]")
            continue
        ok, problems = tm.check_fields(doc[cls], tm.DENSITY_FIELDS)
        _emit(out, DENSITY_FILE, cls, problems)
        if not problems:
            result[cls] = ctx.density[cls] = tuple(ok["distribution"])
    return result


def _load_layout(doc: dict | None, ctx: _Context, out: _Collector) -> tm.Layout | None:
    """layout.toml (brief §4.3, §4.4): field domains, piece size, pitch bound, lanes fit."""
    if doc is None:
        return None
    n0 = out.errors()
    ok, problems = tm.check_fields(doc, tm.LAYOUT_FIELDS)
    _emit(out, LAYOUT_FILE, "-", problems)
    lanes = ok.get("lanes", {})
    if "piece_size" in ok and ok["piece_size"] % 4:
        out.add("piece_size_divisible_by_4", LAYOUT_FILE, "-", "piece_size",
                tm.show(ok["piece_size"]), "piece_size must be divisible by 4 (brief §3.3)")
    if _has(ok, "pitch", "jitter", "piece_size") \
            and ok["pitch"] > ok["piece_size"] + 2 * ok["jitter"]:
        out.add("domain", LAYOUT_FILE, "-", "pitch", tm.show(ok["pitch"]),
                "pitch must be in (0, piece_size + 2*jitter] (brief §4.3)")
    if "piece_size" in ok and "pitch" in lanes and lanes["pitch"] < ok["piece_size"]:
        out.add("domain", LAYOUT_FILE, "-", "lanes.pitch", tm.show(lanes["pitch"]),
                "lanes.pitch must be >= piece_size (lane boxes never overlap, brief §4.4)")
    if _has(ok, "grid_cols", "pitch", "jitter", "piece_size") and _has(lanes, "count", "pitch"):
        width = grid_size(ok["grid_cols"], 1, ok["pitch"], ok["jitter"], ok["piece_size"])[0]
        strip = lane_strip_width(lanes["count"], lanes["pitch"], ok["piece_size"])
        if strip > width:
            out.add("domain", LAYOUT_FILE, "-", "lanes.count", tm.show(lanes["count"]),
                    f"the lane strip ({strip}) must fit the grid width ({width}) (brief §4.4)")
    if _has(ok, "grid_cols", "grid_rows", "occupancy"):
        ctx.grid = (ok["grid_cols"], ok["grid_rows"], ok["occupancy"])
    if out.errors() != n0:
        return None
    return tm.Layout(ok["piece_size"], ok["grid_cols"], ok["grid_rows"], ok["pitch"],
                     ok["jitter"], ok["rotation_max"], ok["occupancy"], lanes["count"],
                     lanes["pitch"], lanes["gap"])


def _acceptance_row(raw: dict, pos: int, out: _Collector):
    """One [[levels]] row (05 §15.1, brief §13.1): (level, label, band in basis points,
    Gates); level / band / Gates are None when unknown or broken."""
    ok, problems = tm.check_fields(raw, tm.ACCEPTANCE_FIELDS)
    problems = [(f, v, "acceptance" if c == "domain" else c, r) for f, v, c, r in problems]
    level = ok.get("level_id")
    label = str(level) if level is not None else f"#{pos}"
    _emit(out, ACCEPTANCE_FILE, label, problems)
    bad = bool(problems)
    for name in ("tool_free_min", "tool_free_max", "tool_assist_min", "clickable_min"):
        if name in ok and dec(ok[name]) * BP != _bp(ok[name]):
            out.add("acceptance", ACCEPTANCE_FILE, label, name, tm.show(ok[name]),
                    f"{name} must have at most {tm.SHARE_DECIMALS} decimals (basis points)")
            bad = True
            ok.pop(name)
    if _has(ok, "tool_free_min", "tool_free_max") and ok["tool_free_max"] < ok["tool_free_min"]:
        out.add("acceptance", ACCEPTANCE_FILE, label, "tool_free_max", tm.show(ok["tool_free_max"]),
                "0 < tool_free_min <= tool_free_max <= 1 (brief §13.1)")
        bad = True
    band = None
    if "tool_free_min" in ok and not bad:
        band = (_bp(ok["tool_free_min"]), _bp(ok.get("tool_free_max", 1)))
    gates = None if bad else Gates(band[0], band[1], _bp(ok["tool_assist_min"]),
                                   _bp(ok["clickable_min"]))
    return level, label, band, gates


def _load_acceptance(doc: dict | None, ctx: _Context, out: _Collector) -> dict[int, Gates]:
    gates: dict[int, Gates] = {}
    if doc is None:
        ctx.bands_known = False
        return gates
    first: dict[int, int] = {}
    entries = _tables_of(doc, "levels", ACCEPTANCE_FILE, out)
    ctx.bands_known = bool(entries)  # an unusable file is one parse finding, not six
    for pos, raw in entries:
        level, label, band, g = _acceptance_row(raw, pos, out)
        if level is None:
            ctx.bands_known = False
        elif level in first:
            out.add("duplicate_key", ACCEPTANCE_FILE, label, "level_id", tm.show(level),
                    f"level_id must be unique; already defined by row #{first[level]}")
        else:
            first[level] = pos
            ctx.bands[level] = band
            if g is not None:
                gates[level] = g
    return gates


def _load_rules(doc: dict | None, out: _Collector) -> Rules | None:
    """rules.toml (brief §20.5): provisional simulation settings."""
    if doc is None:
        return None
    ok, problems = tm.check_fields(doc, tm.RULES_FIELDS)
    _emit(out, RULES_FILE, "-", problems)
    if problems:
        return None
    b = ok["tool_budget"]
    return Rules(ok["runs_per_strategy"], ok["slot_rule"], b["remove"], b["shuffle"],
                 b["undo"], tuple(ok["tool_order"]), ok["dfs_node_cap"], ok["near_depth"],
                 ok["cluster_size"])


# ------------------------------------------------------------------- presets (04, 05)

def _row_rules(ok: dict, label: str, ctx: _Context, out: _Collector) -> None:
    """Cross-field and cross-file rules of one preset row, on individually valid fields."""
    def add(category, fld, value, rule, severity="error"):
        out.add(category, PRESETS_FILE, label, fld, tm.show(value), rule, severity)

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
            f"{', '.join(shares)} give {counts} of {total} (brief §7.2)")
    if counts is not None and ctx.grid is not None:
        cols, rows, occupancy = ctx.grid
        if footprint_window(max(counts), occupancy, cols, rows) is None:
            add("footprint", "layer_counts", counts, f"ceil(n_max / occupancy) anchors for "
                f"n_max = {max(counts)} exceed the {cols} x {rows} grid (brief §4.3)")
    band = ctx.bands.get(ok["level_id"]) if "level_id" in ok else None
    if band is not None and "target_pass_rate" in ok:
        if not band[0] <= dec(ok["target_pass_rate"]) * BP <= band[1]:
            add("target_outside_band", "target_pass_rate", ok["target_pass_rate"],
                f"target_pass_rate must lie in level {ok['level_id']}'s tool-free band "
                f"[{band[0] / BP}, {band[1] / BP}] (A-25)")


def _check_row(raw: dict, pos: int, ctx: _Context, out: _Collector):
    """One preset row: (PresetRow or None, key or None, valid fields)."""
    n0 = out.errors()
    ok, problems = tm.check_fields(raw, tm.PRESET_FIELDS)
    if "revision" not in raw:
        ok["revision"] = 1  # brief §3.1 default
    key = (ok["city_id"], ok["level_id"], ok["revision"]) \
        if _has(ok, "city_id", "level_id", "revision") else None
    label = ":".join(map(str, key)) if key else f"#{pos}"
    _emit(out, PRESETS_FILE, label, problems)
    _row_rules(ok, label, ctx, out)
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


def _load_presets(doc: dict | None, ctx: _Context, out: _Collector):
    """presets.toml: every row, unique keys, and an acceptance row per level used."""
    rows, first, levels = [], {}, set()
    for pos, raw in (_tables_of(doc, "rows", PRESETS_FILE, out) if doc is not None else []):
        row, key, ok = _check_row(raw, pos, ctx, out)
        if "level_id" in ok:
            levels.add(ok["level_id"])
        if key is not None and key in first:
            out.add("duplicate_key", PRESETS_FILE, ":".join(map(str, key)),
                    "(city_id, level_id, revision)", tm.show(key), "key (city_id, level_id, "
                    f"revision) must be unique; already defined by row #{first[key]}")
            continue
        if key is not None:
            first[key] = pos
        if row is not None:
            rows.append(row)
    if ctx.bands_known:
        for level in sorted(levels - set(ctx.bands)):
            out.add("acceptance", ACCEPTANCE_FILE, str(level), "level_id", "-",
                    f"presets use level {level}: acceptance.toml needs a [[levels]] row for it")
    return rows, list(first) if doc is not None else None


def _content_warnings(ctx: _Context, cats: dict, keys, out: _Collector) -> None:
    """doc 04's content rules (brief §17): reported, not fatal."""
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
                out.add("content_presets", PRESETS_FILE, city, "level_id", tm.show(levels),
                        "a city should have exactly 6 presets of revision 1, levels 1..6 (04)",
                        "warning")


# ------------------------------------------------------------------ the public surface

def content_hash(root: str | os.PathLike) -> str:
    """sha256 hex over every ``*.toml`` file under the root, sorted by relative path.

    Each file contributes ``utf8(relative posix path) 0x00 len(bytes) as 8-byte
    big-endian, bytes``: any byte of any table file, or a file added or removed, changes it.
    """
    h = hashlib.sha256()
    root = Path(root)
    files = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*.toml")
                   if p.is_file()) if root.is_dir() else []
    for rel, path in files:
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
        h.update(rel.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def _load(root: Path) -> tuple[tm.Catalog | None, list[Diagnostic]]:
    out, ctx = _Collector(), _Context()
    cities, cats = _load_cities(root, ctx, out)
    density = _load_density(_read(root, DENSITY_FILE, out), ctx, out)
    layout = _load_layout(_read(root, LAYOUT_FILE, out), ctx, out)
    gates = _load_acceptance(_read(root, ACCEPTANCE_FILE, out), ctx, out)
    rules = _load_rules(_read(root, RULES_FILE, out), out)
    rows, keys = _load_presets(_read(root, PRESETS_FILE, out), ctx, out)
    _content_warnings(ctx, cats, keys, out)
    if out.errors():
        return None, out.items
    catalog = tm.Catalog(
        root=str(root), cities=tuple(sorted(cities, key=lambda c: c.id)),
        presets=tuple(sorted(rows, key=lambda r: r.key)), density=density, layout=layout,
        acceptance=gates, rules=rules, content_hash=content_hash(root),
        warnings=tuple(out.items))
    return catalog, out.items


def collect_diagnostics(root: str | os.PathLike | None = None) -> list[Diagnostic]:
    """Every diagnostic of ``root`` (errors and warnings) without raising."""
    return _load(Path(root) if root is not None else DEFAULT_ROOT)[1]


def load_tables(root: str | os.PathLike | None = None) -> tm.Catalog:
    """Load and validate a table root (default ``tables/tilematch/``), brief §20.5.

    Raises ``TableError`` carrying *all* diagnostics (errors and warnings) if any is an
    error; else returns the ``Catalog`` (presets sorted by key, cities by id).
    """
    catalog, diagnostics = _load(Path(root).resolve() if root is not None else DEFAULT_ROOT)
    if catalog is None:
        raise TableError(diagnostics)
    return catalog


def parse_key(text: str) -> tuple[str, int, int]:
    """``"city:level:revision"`` or ``"city:level"`` (revision 1) -> the row key."""
    m = _KEY.fullmatch(text) if isinstance(text, str) else None
    if m is None or int(m.group(2)) < 1 or (m.group(3) is not None and int(m.group(3)) < 1):
        raise MinegenError(f"bad row key {text!r}: expected city:level or city:level:revision "
                           "with level and revision >= 1, e.g. beijing:1:1")
    return m.group(1), int(m.group(2)), int(m.group(3) or 1)


def _as_key(key) -> tuple[str, int, int]:
    if isinstance(key, str):
        return parse_key(key)
    try:
        city, level, revision = key
    except (TypeError, ValueError):
        raise MinegenError(f"bad row key {key!r}: expected (city_id, level_id, revision)")
    if not (isinstance(city, str) and all(isinstance(v, int) and not isinstance(v, bool)
                                          for v in (level, revision))):
        raise MinegenError(f"bad row key {key!r}: expected (str, int, int)")
    return city, level, revision


def _plan(catalog: tm.Catalog, row: tm.PresetRow) -> TilePlan:
    """The frozen row snapshot of one valid preset row (05 §8 inputs, brief §3, §7)."""
    city = catalog.city(row.city_id)
    ppe = row.pieces_per_element
    expanded = (ppe,) * row.element_count if isinstance(ppe, int) else tuple(ppe)
    shares = row.layer_distribution or catalog.density[row.density][: row.layers]
    counts = tuple(layer_counts(sum(expanded), list(shares)))
    return TilePlan(
        city_id=row.city_id, level_id=row.level_id, revision=row.revision,
        difficulty_tier=row.difficulty_tier, density=row.density,
        element_count=row.element_count, pieces_per_element=expanded,
        pieces_per_element_text=str(ppe) if isinstance(ppe, int) else ",".join(map(str, ppe)),
        layers=row.layers, layer_distribution=tuple(shares), layer_counts=counts,
        target_pass_rate=row.target_pass_rate, target_duration_sec=row.target_duration_sec,
        city_elements=tuple(e.id for e in city.elements),
        city_categories=tuple(int(Category[e.category.upper()]) for e in city.elements),
        city_weights=tuple(e.weight for e in city.elements),
        geometry=geometry_for(catalog.layout, max(counts)),
        gates=catalog.acceptance[row.level_id], rules=catalog.rules)


def plans(catalog: tm.Catalog, keys: Iterable = ()) -> list[TilePlan]:
    """Row snapshots of ``keys`` ((city_id, level_id, revision) tuples or "city:level[:rev]"
    strings; empty = every row), sorted by key. An unknown key raises ``MinegenError``."""
    keys = [keys] if isinstance(keys, str) else keys
    wanted = sorted({_as_key(k) for k in keys}) or catalog.keys()
    known = set(catalog.keys())
    missing = [":".join(map(str, k)) for k in wanted if k not in known]
    if missing:
        raise MinegenError(f"unknown row(s) {', '.join(missing)} in {catalog.root}; "
                           f"{len(known)} rows known")
    return [_plan(catalog, catalog.preset(k)) for k in wanted]


def _plain(value):
    """A sweep value as TOML would give it: numpy scalars -> Python, tuples -> lists."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        return value.item()  # a numpy scalar from a sweep grid
    return value


def vary(catalog: tm.Catalog, key, field_name: str, value) -> tuple[TilePlan | None,
                                                                    list[Diagnostic]]:
    """The plan of one row with one preset field replaced (``VARY_FIELDS``; ``None``
    drops the optional layer_distribution), re-running that row's checks in memory (for
    sweep / tune, 05 §16): (plan, diagnostics) when clean, (None, diagnostics) otherwise.
    Warnings of the varied row ride along in the list."""
    if field_name not in VARY_FIELDS:
        raise MinegenError(f"cannot vary {field_name!r}; fields: {', '.join(VARY_FIELDS)}")
    row = catalog.preset(_as_key(key))
    raw = row.raw()
    if value is None:
        raw.pop(field_name, None)
    else:
        raw[field_name] = _plain(value)
    out = _Collector()
    new, _, _ = _check_row(raw, 1, _Context.of(catalog), out)
    return (_plan(catalog, new) if new is not None else None), out.items

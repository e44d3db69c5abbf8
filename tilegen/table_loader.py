"""Load and validate a tile-match table root: collect every diagnostic, then fail once
(decision 119; house style of ``minegen.table_loader``).

A table root (default ``tables/tilematch/``) holds ``cities/<city_id>.toml`` (one file per
city: ``[city]`` and ``[[elements]]``), ``presets.toml`` (``[[rows]]``, key
(city_id, level_id, revision)), ``density.toml``, ``layout.toml``, ``acceptance.toml``
(``[[levels]]``) and ``rules.toml``. Field domains live in ``table_model``, the
cross-field, cross-file and content rules in ``table_checks``; this module reads the files,
builds the rows and the row snapshots (``plans``), and re-exports the file names.

Contract: ``load_tables`` never stops at the first finding and never lets a traceback
escape for malformed input; every finding is a ``Diagnostic`` whose ``file`` is relative
to the root (``cities/seoul.toml``). Any error raises one ``TableError`` carrying all of
them; warnings (doc 04's content rules, 05 §19; element_count < 5, A-34) ride along in
``Catalog.warnings``. Row labels: ``"beijing:1:1"`` for a preset row, the element id for
a city element, the level id for an acceptance row, the class name for a density class,
``"#n"`` (1-based position) when the key itself is broken, ``"-"`` for file-level findings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from boardcore import assets
from boardcore import tables
from boardcore.errors import Diagnostic, InputError, TableError
from boardcore.tables import Collector, emit, has, key_name, parse_toml, show, unknown_files

from . import table_checks as tc
from . import table_model as tm
from .codes import DENSITIES, DIAGNOSE_EVERY, Category
from .geometry import geometry_for, layer_counts
from .plan import Gates, Rules, TilePlan
from .table_checks import (ACCEPTANCE_FILE, CITIES_DIR, DAILY_FILE, DENSITY_FILE, LAYOUT_FILE,
                           PRESETS_FILE, RULES_FILE)

DEFAULT_ROOT = assets.path("tables", "tilematch")  # the shipped presets
# preset fields a sweep / tune may vary one at a time (05 §16 ladder, decision 118)
VARY_FIELDS = ("element_count", "layers", "density", "pieces_per_element",
               "layer_distribution", "target_pass_rate")

_KEY = re.compile(r"([a-z][a-z0-9_]*):([0-9]{1,9})(?::([0-9]{1,9}))?")


def _read(root: Path, name: str, out: Collector) -> dict | None:
    """Parse one required TOML file; ``None`` (plus a "parse" diagnostic) if unusable."""
    path = root / name
    if not path.is_file():
        why = "exists but is not a regular file" if path.exists() or path.is_symlink() \
            else "is missing"
        out.add("parse", name, rule=f"required file {name} {why} (root {root})")
        return None
    doc, rule = parse_toml(path)
    if doc is None:
        out.add("parse", name, rule=rule)
    return doc


def _tables_of(doc: dict, key: str, name: str, out: Collector) -> list[tuple[int, dict]]:
    """The array of tables ``[[key]]`` as (1-based position, table); shape errors: parse."""
    for k in doc:
        if k != key:
            out.add("unknown_field", name, field=key_name(k), value=show(doc[k]),
                    rule=f"the only top-level key is {key} (an array of tables [[{key}]])")
    items = doc.get(key)
    if not items:
        out.add("parse", name, rule=f"file must hold at least one [[{key}]] table")
        return []
    if not isinstance(items, list):
        out.add("parse", name, field=key, value=show(items), rule=f"{key} must be [[{key}]]")
        return []
    good = []
    for pos, item in enumerate(items, start=1):
        if isinstance(item, dict):
            good.append((pos, item))
        else:
            out.add("parse", name, f"#{pos}", key, show(item),
                    f"each entry of {key} must be a table ([[{key}]])")
    return good


# ------------------------------------------------------------------------- cities (04)

def _load_city(doc: dict, name: str, stem: str, owner: dict, out: Collector):
    """One city file: (City or None, element entries or None, valid categories)."""
    n0 = out.errors()
    for k in doc:
        if k not in ("city", "elements"):
            out.add("unknown_field", name, field=key_name(k), value=show(doc[k]),
                    rule="top-level keys: city (a table) and elements ([[elements]])")
    head, city_name = doc.get("city"), ""
    if not isinstance(head, dict):
        out.add("missing_field" if head is None else "type", name, field="city",
                value=show(head) if head is not None else "-",
                rule="required: a [city] table with id (= the file name)")
    else:
        ok, problems = tm.check_fields(head, tm.CITY_FIELDS, "city.")
        emit(out, name, "-", problems)
        if ok.get("id", stem) != stem:
            out.add("domain", name, "-", "city.id", show(ok["id"]),
                    f"city id must equal the file name {stem!r}")
        city_name = ok.get("name", "")
    items = doc.get("elements")
    if not isinstance(items, list):
        out.add("missing_field" if items is None else "type", name, field="elements",
                value=show(items) if items is not None else "-",
                rule="required: the city's elements as [[elements]] tables")
        return None, None, []
    elements, cats = [], []
    for pos, raw in enumerate(items, start=1):
        if not isinstance(raw, dict):
            out.add("type", name, f"#{pos}", "elements", show(raw),
                    "each entry of elements must be a table ([[elements]])")
            continue
        ok, problems = tm.check_fields(raw, tm.ELEMENT_FIELDS)
        label = ok["id"] if "id" in ok else f"#{pos}"
        emit(out, name, label, problems)
        if "category" in ok:
            cats.append(ok["category"])
        if "id" in ok:
            if ok["id"] in owner:
                out.add("duplicate_element_id", name, label, "id", show(ok["id"]),
                        f"element ids must be unique across cities; {ok['id']} is already "
                        f"defined in {owner[ok['id']]}")
                continue
            owner[ok["id"]] = name
        if not problems:
            elements.append(tm.Element(ok["id"], ok["category"], ok["rarity"],
                                       ok.get("weight", 1), ok.get("name", "")))
    total = sum(e.weight for e in elements)
    if total > tm.WEIGHT_SUM_CAP:
        out.add("domain", name, "-", "weight", show(total),
                f"the city's weights must sum to <= {tm.WEIGHT_SUM_CAP} (a uint32 draw bound)")
    clean = out.errors() == n0
    city = tm.City(stem, tuple(sorted(elements, key=lambda e: e.id)), city_name)
    return (city if clean else None), len(items), cats


def _load_cities(root: Path, ctx: tc.Context, out: Collector):
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

def _load_density(doc: dict | None, ctx: tc.Context, out: Collector) -> dict:
    """density.toml: one [class] per ``codes.DENSITIES`` with its distribution (05 §10.1)."""
    result: dict[str, tuple[str, ...]] = {}
    for cls in DENSITIES:
        ctx.density[cls] = None
    if doc is None:
        return result
    for k in doc:
        if k not in DENSITIES:
            out.add("unknown_field", DENSITY_FILE, field=key_name(k), value=show(doc[k]),
                    rule=f"density classes: {', '.join(DENSITIES)}")
    for cls in DENSITIES:
        if not isinstance(doc.get(cls), dict):
            out.add("missing_field" if cls not in doc else "type", DENSITY_FILE, field=cls,
                    value=show(doc[cls]) if cls in doc else "-",
                    rule=f"required: a table [{cls}] with distribution = [\"0.40\", ...]")
            continue
        ok, problems = tm.check_fields(doc[cls], tm.DENSITY_FIELDS)
        emit(out, DENSITY_FILE, cls, problems)
        if not problems:
            result[cls] = ctx.density[cls] = tuple(ok["distribution"])
    return result


def _load_layout(doc: dict | None, ctx: tc.Context, out: Collector) -> tm.Layout | None:
    """layout.toml (A-12 … A-15): field domains, then ``table_checks.layout_rules``."""
    if doc is None:
        return None
    n0 = out.errors()
    ok, problems = tm.check_fields(doc, tm.LAYOUT_FIELDS)
    emit(out, LAYOUT_FILE, "-", problems)
    lanes = ok.get("lanes", {})
    tc.layout_rules(ok, out)
    if has(ok, "grid_cols", "grid_rows", "occupancy"):
        ctx.grid = (ok["grid_cols"], ok["grid_rows"], ok["occupancy"])
    if out.errors() != n0:
        return None
    return tm.Layout(ok["piece_size"], ok["grid_cols"], ok["grid_rows"], ok["pitch"],
                     ok["jitter"], ok["rotation_max"], ok["occupancy"], lanes["count"],
                     lanes["pitch"], lanes["gap"])


def _load_acceptance(doc: dict | None, ctx: tc.Context, out: Collector) -> dict[int, Gates]:
    gates: dict[int, Gates] = {}
    if doc is None:
        ctx.bands_known = False
        return gates
    first: dict[int, int] = {}
    entries = _tables_of(doc, "levels", ACCEPTANCE_FILE, out)
    ctx.bands_known = bool(entries)  # an unusable file is one parse finding, not six
    for pos, raw in entries:
        level, label, band, g = tc.acceptance_row(raw, pos, out)
        if level is None:
            ctx.bands_known = False
        elif level in first:
            out.add("duplicate_key", ACCEPTANCE_FILE, label, "level_id", show(level),
                    f"level_id must be unique; already defined by row #{first[level]}")
        else:
            first[level] = pos
            ctx.bands[level] = band
            if g is not None:
                gates[level] = g
    return gates


def _load_rules(doc: dict | None, out: Collector) -> Rules | None:
    """rules.toml (docs/tilegen.md, Tables): provisional simulation settings."""
    if doc is None:
        return None
    ok, problems = tm.check_fields(doc, tm.RULES_FIELDS)
    emit(out, RULES_FILE, "-", problems)
    if problems:
        return None
    b = ok["tool_budget"]
    return Rules(ok["runs_per_strategy"], ok["slot_rule"], b["remove"], b["shuffle"],
                 b["undo"], tuple(ok["tool_order"]), ok["dfs_node_cap"], ok["near_depth"],
                 ok["cluster_size"], ok.get("diagnose_every", DIAGNOSE_EVERY))


# ------------------------------------------------------------------- presets (04, 05)

def _load_presets(doc: dict | None, ctx: tc.Context, out: Collector):
    """presets.toml: every row, unique keys, and an acceptance row per level used."""
    rows, first, levels = [], {}, set()
    for pos, raw in (_tables_of(doc, "rows", PRESETS_FILE, out) if doc is not None else []):
        row, key, ok = tc.check_row(raw, pos, ctx, out)
        if "level_id" in ok:
            levels.add(ok["level_id"])
        if key is not None and key in first:
            out.add("duplicate_key", PRESETS_FILE, ":".join(map(str, key)),
                    "(city_id, level_id, revision)", show(key), "key (city_id, level_id, "
                    f"revision) must be unique; already defined by row #{first[key]}")
            continue
        if key is not None:
            first[key] = pos
        if row is not None:
            rows.append(row)
    tc.acceptance_coverage(levels, ctx, out)
    return rows, list(first) if doc is not None else None


# ------------------------------------------------------------------ the public surface

def content_hash(root: str | os.PathLike) -> str:
    """sha256 over every ``*.toml`` file under the root, sorted by relative path
    (``boardcore.tables.content_hash``, recursive: ``cities/`` counts)."""
    return tables.content_hash(root, recursive=True)


def _load(root: Path) -> tuple[tm.Catalog | None, list[Diagnostic]]:
    out, ctx = Collector(), tc.Context()
    cities, cats = _load_cities(root, ctx, out)
    density = _load_density(_read(root, DENSITY_FILE, out), ctx, out)
    layout = _load_layout(_read(root, LAYOUT_FILE, out), ctx, out)
    gates = _load_acceptance(_read(root, ACCEPTANCE_FILE, out), ctx, out)
    rules = _load_rules(_read(root, RULES_FILE, out), out)
    rows, keys = _load_presets(_read(root, PRESETS_FILE, out), ctx, out)
    unknown_files(root, (DENSITY_FILE, LAYOUT_FILE, ACCEPTANCE_FILE, RULES_FILE,
                         PRESETS_FILE, DAILY_FILE), out)  # daily.toml: read by tilegen.daily
    tc.content_warnings(ctx, cats, keys, out)
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
    """Load and validate a table root (default ``tables/tilematch/``), decision 119.

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
        raise InputError(f"bad row key {text!r}: expected city:level or city:level:revision "
                           "with level and revision >= 1, e.g. beijing:1:1")
    return m.group(1), int(m.group(2)), int(m.group(3) or 1)


def _as_key(key) -> tuple[str, int, int]:
    if isinstance(key, str):
        return parse_key(key)
    try:
        city, level, revision = key
    except (TypeError, ValueError):
        raise InputError(f"bad row key {key!r}: expected (city_id, level_id, revision)")
    if not (isinstance(city, str) and all(isinstance(v, int) and not isinstance(v, bool)
                                          for v in (level, revision))):
        raise InputError(f"bad row key {key!r}: expected (str, int, int)")
    return city, level, revision


def _plan(catalog: tm.Catalog, row: tm.PresetRow) -> TilePlan:
    """The frozen row snapshot of one valid preset row (05 §8 inputs, §4, §10.1)."""
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
    strings; empty = every row), sorted by key. An unknown key raises ``InputError``."""
    keys = [keys] if isinstance(keys, str) else keys
    wanted = sorted({_as_key(k) for k in keys}) or catalog.keys()
    known = set(catalog.keys())
    missing = [":".join(map(str, k)) for k in wanted if k not in known]
    if missing:
        raise InputError(f"unknown row(s) {', '.join(missing)} in {catalog.root}; "
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
        raise InputError(f"cannot vary {field_name!r}; fields: {', '.join(VARY_FIELDS)}")
    row = catalog.preset(_as_key(key))
    raw = row.raw()
    if value is None:
        raw.pop(field_name, None)
    else:
        raw[field_name] = _plain(value)
    out = Collector()
    new, _, _ = tc.check_row(raw, 1, tc.Context.of(catalog), out)
    return (_plan(catalog, new) if new is not None else None), out.items

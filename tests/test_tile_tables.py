"""tilegen tables: the default root, every fatal category (all at once), warnings, exact
geometry goldens (A-13, A-15, A-18), row snapshots and vary (05 §16; tile-draw-protocol §7)."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from boardcore.errors import Diagnostic, InputError, TableError
from tilegen.codes import CATEGORY_NAMES, MAX_PIECES, N_PRM, Category
from tilegen.geometry import (footprint_anchors, footprint_window, geometry_for, grid_size,
                              lanes, layer_counts, parse_decimal)
from tilegen.plan import Gates, Rules, TilePlan
from tilegen.table_loader import (DEFAULT_ROOT, VARY_FIELDS, collect_diagnostics, content_hash,
                                  load_tables, parse_key, plans, vary)
from tilegen.table_model import Layout

FIXTURES = Path(__file__).parent / "fixtures" / "tilematch"
CITIES = ("bangkok", "beijing", "istanbul", "seoul", "singapore", "tokyo")
FATAL = ("parse", "missing_field", "unknown_field", "type", "domain", "duplicate_key",
         "unknown_city", "duplicate_element_id", "category", "ppe_multiple_of_3", "ppe_length",
         "element_count_exceeds_city", "layers_exceed_distribution", "distribution",
         "footprint", "total_pieces_cap", "target_outside_band", "acceptance",
         "piece_size_divisible_by_4")


# ----------------------------------------------------------------------------- helpers

def row_at(city: str, level: int) -> str:
    """The anchor of a preset row in presets.toml (edits apply after it)."""
    return f'city_id = "{city}"\nlevel_id = {level}\n'


def edited(tmp_path: Path, *edits) -> Path:
    """A copy of the default root with text edits ``(file, old, new[, anchor])``: the first
    ``old`` after ``anchor`` becomes ``new``; ``old = None`` appends ``new``; ``new = None``
    with ``old = None`` deletes the file."""
    root = tmp_path / "root"
    if not root.exists():
        shutil.copytree(DEFAULT_ROOT, root)
    for file, old, new, *anchor in edits:
        path = root / file
        if old is None and new is None:
            path.unlink()
            continue
        text = path.read_text(encoding="utf-8")
        if old is None:
            text += new
        else:
            at = text.index(anchor[0]) if anchor else 0
            i = text.index(old, at)
            text = text[:i] + new + text[i + len(old):]
        path.write_text(text, encoding="utf-8")
    return root


def errors_of(root) -> list[Diagnostic]:
    """Load ``root``, require a TableError, return its error diagnostics."""
    with pytest.raises(TableError) as info:
        load_tables(root)
    assert collect_diagnostics(root) == info.value.diagnostics
    return [d for d in info.value.diagnostics if d.severity == "error"]


def places(diags) -> set[tuple[str, str, str]]:
    return {(d.file, d.row, d.field) for d in diags}


# ------------------------------------------------------------------------ default root

def test_default_root_loads_clean():
    catalog = load_tables()
    assert collect_diagnostics() == [] and catalog.warnings == ()
    assert Path(catalog.root) == DEFAULT_ROOT and DEFAULT_ROOT.parts[-2:] == ("tables",
                                                                             "tilematch")
    assert len(catalog.presets) == 36 and [c.id for c in catalog.cities] == list(CITIES)
    assert catalog.keys() == sorted((c, lv, 1) for c in CITIES for lv in range(1, 7))
    assert len(catalog.content_hash) == 64 and catalog.content_hash == content_hash(DEFAULT_ROOT)
    assert load_tables(DEFAULT_ROOT) == catalog


def test_default_cities_meet_the_content_minima():
    for city in load_tables().cities:
        assert [e.id for e in city.elements] == [f"{city.id}_{i:02d}" for i in range(1, 13)]
        cats = [e.category for e in city.elements]
        minima = dict(landmark=2, food=3, culture=2, item=2, nature=2)
        assert set(minima) == set(CATEGORY_NAMES)
        assert all(cats.count(c) >= n for c, n in minima.items()), (city.id, cats)
        assert {e.rarity for e in city.elements} == {"core", "accent"}
        assert all(e.name for e in city.elements) and all(e.weight >= 1 for e in city.elements)


def test_default_presets_are_the_reference_curve():
    rows = {r.key: r for r in load_tables().presets}
    want = {1: ("intro", 6, 3, 2, "low", 0.95), 2: ("easy", 7, 3, 2, "low", 0.90),
            3: ("normal", 8, 3, 3, "medium", 0.80), 4: ("normal", 9, 3, 3, "medium", 0.70),
            5: ("hard", 10, 3, 4, "medium_high", 0.60),
            6: ("challenge", 10, (3, 3, 3, 3, 3, 6, 3, 3, 3, 3), 4, "high", 0.55)}
    for city in CITIES:
        for level, (tier, e, ppe, layers, density, target) in want.items():
            r = rows[(city, level, 1)]
            assert (r.difficulty_tier, r.element_count, r.pieces_per_element, r.layers,
                    r.density, r.target_pass_rate) == (tier, e, ppe, layers, density, target)
            assert r.target_duration_sec == ((90, 150) if level == 1 else None)
            assert r.layer_distribution is None


def test_default_gates_rules_layout():
    catalog = load_tables()
    assert catalog.acceptance == {
        1: Gates(9500, 10000, 10000, 3800), 2: Gates(9000, 10000, 9800, 3500),
        3: Gates(8000, 10000, 9200, 3300), 4: Gates(7000, 10000, 8800, 3200),
        5: Gates(6000, 10000, 8200, 3000), 6: Gates(5000, 6000, 7500, 3000)}
    assert catalog.rules == Rules(100, "block_at_full", 1, 1, 1, ("remove", "shuffle", "undo"),
                                  200000, 1, 3)
    assert catalog.layout == Layout(64, 7, 8, 56, 8, 5, "0.40", 3, 72, 8)
    assert catalog.density == {"low": ("0.40", "0.35", "0.25"),
                               "medium": ("0.30", "0.30", "0.25", "0.15"),
                               "medium_high": ("0.28", "0.27", "0.25", "0.20"),
                               "high": ("0.25", "0.25", "0.25", "0.25")}


# ------------------------------------------------------------------- geometry goldens

@pytest.mark.parametrize("total, shares, want", [
    (18, ["0.40", "0.35"], [10, 8]), (21, ["0.40", "0.35"], [11, 10]),
    (24, ["0.30", "0.30", "0.25"], [9, 8, 7]), (27, ["0.30", "0.30", "0.25"], [10, 9, 8]),
    (30, ["0.28", "0.27", "0.25", "0.20"], [8, 8, 8, 6]),
    (33, ["0.25", "0.25", "0.25", "0.25"], [9, 8, 8, 8]),
    (3, ["0.5", "0.5"], [2, 1]),  # tie: the lower layer first
    (18, ["1"], [18]), (6, ["0.1", "0.1", "0.1"], [2, 2, 2]),
])
def test_layer_counts_golden(total, shares, want):
    assert layer_counts(total, shares) == want


@pytest.mark.parametrize("n_max, want", [
    (10, (1, 1, 5, 5)),  # levels 1, 4 (25 anchors)
    (11, (0, 1, 6, 5)),  # level 2: 28 anchors
    (9, (1, 1, 5, 5)),  # levels 3, 6: 23 anchors
    (8, (1, 2, 5, 4)),  # level 5: 20 anchors
    (1, (2, 3, 2, 2)), (22, (0, 0, 7, 8)),  # 3 anchors; 55 of 56 anchors
    (23, None),  # 58 > 56: the load-time footprint category
])
def test_footprint_window_golden(n_max, want):
    assert footprint_window(n_max, "0.40", 7, 8) == want


def test_footprint_rule_is_exact_and_grows_as_written():
    assert footprint_anchors(10, "0.40") == 25 and footprint_anchors(11, "0.40") == 28
    assert footprint_anchors(1, "0.3") == 4 and footprint_anchors(3, "0.3") == 10
    assert footprint_window(27, "0.5", 6, 9) == (0, 0, 6, 9)  # wc stops at cols, wr grows
    assert footprint_window(10, "1", 6, 9) == (1, 3, 4, 3)
    assert parse_decimal("0.40") == parse_decimal("0.4") and parse_decimal("1e-2") is None


def test_default_geometry_golden():
    assert grid_size(7, 8, 56, 8, 64) == (416, 472)
    assert lanes(416, 472, 64, 3, 72, 8) == ((104, 176, 248), 480)
    g = geometry_for(load_tables().layout, 10)
    assert (g.grid_w, g.grid_h, g.board_w, g.board_h) == (416, 472, 416, 552)
    assert (g.lane_xs, g.lane_y, g.window) == ((104, 176, 248), 480, (1, 1, 5, 5))
    corners = sorted({56 * c + 8 for c, _ in g.anchors()})
    assert corners == [64, 120, 176, 232, 288] and len(g.anchors()) == 25
    with pytest.raises(ValueError):
        geometry_for(load_tables().layout, 23)


def test_plan_geometry_per_level():
    by_level = {p.level_id: p for p in plans(load_tables()) if p.city_id == "seoul"}
    assert [by_level[lv].layer_counts for lv in range(1, 7)] == [
        (10, 8), (11, 10), (9, 8, 7), (10, 9, 8), (8, 8, 8, 6), (9, 8, 8, 8)]
    assert [by_level[lv].geometry.window[2:] for lv in range(1, 7)] == [
        (5, 5), (6, 5), (5, 5), (5, 5), (5, 4), (5, 5)]
    assert [by_level[lv].total_pieces for lv in range(1, 7)] == [18, 21, 24, 27, 30, 33]


# ----------------------------------------------------------------------- row snapshots

def test_plan_of_beijing_level_1():
    (p,) = plans(load_tables(), [("beijing", 1, 1)])
    assert p.row_key == "beijing:1:1" and p.production_seed == 14323768753098000001
    assert p.board_id(p.production_seed) == "beijing-1-14323768753098000001"
    assert [int(s) for s in p.audit_seeds(0, 2)] == [11821669524437222257,
                                                     14290132254026056550]
    assert p.pieces_per_element == (3,) * 6 and p.pieces_per_element_text == "3"
    assert p.layer_distribution == ("0.40", "0.35") and p.layer_counts == (10, 8)
    assert p.city_elements == tuple(f"beijing_{i:02d}" for i in range(1, 13))
    assert p.city_categories[:3] == (Category.FOOD, Category.LANDMARK, Category.LANDMARK)
    assert p.city_weights[:3] == (1, 2, 1) and p.target_duration_sec == (90, 150)
    assert p.gates.tool_free_max_bp == 10000 and p.rules.tool_order == ("remove", "shuffle",
                                                                         "undo")


def test_plans_sorted_picklable_and_kernel_ready():
    catalog = load_tables()
    every = plans(catalog)
    assert [p.key for p in every] == sorted(p.key for p in every) and len(every) == 36
    assert pickle.loads(pickle.dumps(every)) == every
    six = next(p for p in every if p.key == ("tokyo", 6, 1))
    assert six.pieces_per_element_text == "3,3,3,3,3,6,3,3,3,3" and six.total_pieces == 33
    assert six.gates.tool_free_max_bp == 6000
    for p in every:
        k = p.kernel_inputs()
        assert k.prm.shape == (N_PRM,) and k.anchors.shape == (
            p.geometry.window[2] * p.geometry.window[3], 2)
        assert k.ppe.sum() == p.total_pieces == k.layer_counts.sum()
        assert sorted(k.city_cat) == sorted(int(Category[e.category.upper()])
                                            for e in catalog.city(p.city_id).elements)
    picked = plans(catalog, ["tokyo:2", ("bangkok", 6, 1), "tokyo:2:1"])
    assert [p.row_key for p in picked] == ["bangkok:6:1", "tokyo:2:1"]


def test_unknown_and_bad_keys():
    catalog = load_tables()
    with pytest.raises(InputError, match="paris:1:1"):
        plans(catalog, [("beijing", 1, 1), ("paris", 1, 1)])
    with pytest.raises(InputError, match="beijing:1:2"):
        plans(catalog, ["beijing:1:2"])
    for bad in ("beijing", "beijing:x", "Beijing:1", "beijing:0", "beijing:1:0", "a:1:2:3",
                "", " beijing:1"):
        with pytest.raises(InputError):
            parse_key(bad)
    assert parse_key("beijing:3") == ("beijing", 3, 1)
    assert parse_key("new_york:6:12") == ("new_york", 6, 12)
    with pytest.raises(InputError):
        plans(catalog, [("beijing", "1", 1)])


def test_vary_rebuilds_and_rechecks_one_row():
    catalog = load_tables()
    plan, diags = vary(catalog, ("beijing", 1, 1), "layers", 1)
    assert diags == [] and plan.layer_counts == (18,) and plan.layer_distribution == ("0.40",)
    plan, diags = vary(catalog, "beijing:1", "layer_distribution", ["0.5", "0.5"])
    assert plan.layer_counts == (9, 9) and plan.layer_distribution == ("0.5", "0.5")
    plan, diags = vary(catalog, "beijing:1:1", "element_count", 4)
    assert plan.total_pieces == 12 and [d.category for d in diags] == ["element_count_low"]
    assert diags[0].severity == "warning"
    plan, diags = vary(catalog, "beijing:1:1", "layers", 4)
    assert plan is None and [d.category for d in diags] == ["layers_exceed_distribution"]
    plan, diags = vary(catalog, "beijing:1:1", "target_pass_rate", 0.9)
    assert plan is None and places(diags) == {("presets.toml", "beijing:1:1",
                                               "target_pass_rate")}
    plan, diags = vary(catalog, "beijing:6:1", "pieces_per_element", (3, 6, 3))
    assert plan is None and [d.category for d in diags] == ["ppe_length"]
    plan, _ = vary(catalog, "beijing:6:1", "density", "medium")
    assert plan.layer_counts == (10, 10, 8, 5)  # 9.9 9.9 8.25 4.95: +1 to 3, 0, 1
    plan, _ = vary(catalog, "seoul:5:1", "layer_distribution", None)
    assert plan == plans(catalog, ["seoul:5:1"])[0]
    with pytest.raises(InputError):
        vary(catalog, "beijing:1:1", "revision", 2)
    with pytest.raises(InputError):
        vary(catalog, "paris:1:1", "layers", 2)
    assert set(VARY_FIELDS) == {"element_count", "layers", "density", "pieces_per_element",
                                "layer_distribution", "target_pass_rate"}


def test_vary_accepts_numpy_scalars():
    np = pytest.importorskip("numpy")
    plan, diags = vary(load_tables(), "beijing:2:1", "element_count", np.int64(6))
    assert diags == [] and plan.total_pieces == 18


# -------------------------------------------------------------- one test per category

B11 = row_at("beijing", 1)
CASES = {
    "parse": (("presets.toml", None, "[[rows]\n"),),
    "parse_city": (("cities/seoul.toml", None, "\xff = 1\n[city\n"),),
    "parse_missing_file": (("rules.toml", None, None),),
    "missing_field": (("presets.toml", 'difficulty_tier = "intro"\n', "", B11),
                      ("cities/tokyo.toml", 'rarity = "core"\n', "")),
    "unknown_field": (("layout.toml", "[lanes]", 'colour = "red"\n[lanes]'),
                      ("presets.toml", "layers = 2", "layers = 2\ncolour = 1", B11)),
    "type": (("presets.toml", "layers = 2", 'layers = "2"', B11),
             ("rules.toml", "{ undo = 1, remove = 1, shuffle = 1 }", "[1, 1, 1]"),
             ("acceptance.toml", "tool_assist_min = 1.00", 'tool_assist_min = "1"')),
    "domain": (("layout.toml", "grid_cols = 7", "grid_cols = 9"),
               ("layout.toml", "rotation_max = 5", "rotation_max = 16"),
               ("layout.toml", 'occupancy = "0.40"', 'occupancy = "1.5"'),
               ("layout.toml", "pitch = 72", "pitch = 60"),
               ("rules.toml", "cluster_size = 3", "cluster_size = 1"),
               ("rules.toml", '"block_at_full"', '"block"'),
               ("rules.toml", '["remove", "shuffle", "undo"]', '["remove", "undo", "undo"]'),
               ("rules.toml", "undo = 1", "undo = -1"),
               ("presets.toml", "[90, 150]", "[150, 90]", B11),
               ("presets.toml", "level_id = 2", "level_id = 7", row_at("tokyo", 2)),
               ("cities/tokyo.toml", 'id = "tokyo"', 'id = "tokio"'),
               ("cities/tokyo.toml", 'rarity = "accent"', 'rarity = "rare"')),
    "domain_pitch": (("layout.toml", "pitch = 56", "pitch = 81"),),
    "duplicate_key": (("presets.toml", None, '\n[[rows]]\ncity_id = "seoul"\nlevel_id = 3\n'
                       'difficulty_tier = "x"\nelement_count = 6\npieces_per_element = 3\n'
                       'layers = 2\ndensity = "low"\ntarget_pass_rate = 0.9\n'),),
    "unknown_city": (("presets.toml", '"beijing"', '"paris"', B11),),
    "duplicate_element_id": (("cities/tokyo.toml", '"tokyo_12"', '"beijing_12"'),),
    "category": (("cities/beijing.toml", 'category = "food"', 'category = "snack"'),),
    "ppe_multiple_of_3": (("presets.toml", "pieces_per_element = 3", "pieces_per_element = 4",
                           B11),),
    "ppe_length": (("presets.toml", "pieces_per_element = 3", "pieces_per_element = [3, 3]",
                    B11),),
    "element_count_exceeds_city": (("presets.toml", "element_count = 6", "element_count = 13",
                                    B11),),
    "layers_exceed_distribution": (("presets.toml", "layers = 2", "layers = 4", B11),),
    "distribution": (("presets.toml", "layers = 2", 'layers = 2\nlayer_distribution = ["0.5"]',
                      B11),
                     ("density.toml", '"0.35", "0.25"]', '"0.35", "0.25", "0.1", "0.1"]'),
                     ("density.toml", '"0.30", "0.30"', '"0.30", "-0.30"'),
                     ("presets.toml", "layers = 4", 'layers = 4\nlayer_distribution = '
                      '["1", "1", "1", "0.01"]', row_at("seoul", 5))),
    "footprint": (("presets.toml", "element_count = 6", "element_count = 8", B11),
                  ("presets.toml", "layers = 2", "layers = 1", B11)),
    "total_pieces_cap": (("presets.toml", "pieces_per_element = 3", "pieces_per_element = 12",
                          B11),),
    "target_outside_band": (("presets.toml", "target_pass_rate = 0.95",
                             "target_pass_rate = 0.9", B11),
                            ("presets.toml", "target_pass_rate = 0.55",
                             "target_pass_rate = 0.65", row_at("tokyo", 6))),
    "acceptance": (("acceptance.toml", "clickable_min = 0.38", "clickable_min = 0.20"),
                   ("acceptance.toml", "tool_assist_min = 0.98", "tool_assist_min = 0.98765"),
                   ("acceptance.toml", "tool_free_max = 0.60", "tool_free_max = 0.45"),
                   ("acceptance.toml", "level_id = 5", "level_id = 4"),  # 5 missing, 4 twice
                   ),
    "piece_size_divisible_by_4": (("layout.toml", "piece_size = 64", "piece_size = 66"),),
}
# case -> (category, the (file, row, field) places, exactly)
EXPECT = {
    "parse": ("parse", {("presets.toml", "-", "-")}),
    "parse_city": ("parse", {("cities/seoul.toml", "-", "-")}),
    "parse_missing_file": ("parse", {("rules.toml", "-", "-")}),
    "missing_field": ("missing_field", {("presets.toml", "beijing:1:1", "difficulty_tier"),
                                        ("cities/tokyo.toml", "tokyo_01", "rarity")}),
    "unknown_field": ("unknown_field", {("layout.toml", "-", "colour"),
                                        ("presets.toml", "beijing:1:1", "colour")}),
    "type": ("type", {("presets.toml", "beijing:1:1", "layers"),
                      ("rules.toml", "-", "tool_budget"),
                      ("acceptance.toml", "1", "tool_assist_min")}),
    "domain": ("domain", {("layout.toml", "-", f) for f in
                          ("grid_cols", "rotation_max", "occupancy", "lanes.pitch")}
               | {("rules.toml", "-", f) for f in
                  ("cluster_size", "slot_rule", "tool_order", "tool_budget.undo")}
               | {("presets.toml", "beijing:1:1", "target_duration_sec"),
                  ("presets.toml", "#8", "level_id"),
                  ("cities/tokyo.toml", "-", "city.id"),
                  ("cities/tokyo.toml", "tokyo_03", "rarity")}),
    "domain_pitch": ("domain", {("layout.toml", "-", "pitch")}),
    "duplicate_key": ("duplicate_key", {("presets.toml", "seoul:3:1",
                                         "(city_id, level_id, revision)")}),
    "unknown_city": ("unknown_city", {("presets.toml", "paris:1:1", "city_id")}),
    "duplicate_element_id": ("duplicate_element_id", {("cities/tokyo.toml", "beijing_12",
                                                       "id")}),
    "category": ("category", {("cities/beijing.toml", "beijing_01", "category")}),
    "ppe_multiple_of_3": ("ppe_multiple_of_3", {("presets.toml", "beijing:1:1",
                                                 "pieces_per_element")}),
    "ppe_length": ("ppe_length", {("presets.toml", "beijing:1:1", "pieces_per_element")}),
    "element_count_exceeds_city": ("element_count_exceeds_city",
                                   {("presets.toml", "beijing:1:1", "element_count")}),
    "layers_exceed_distribution": ("layers_exceed_distribution",
                                   {("presets.toml", "beijing:1:1", "layers")}),
    "distribution": ("distribution", {("presets.toml", "beijing:1:1", "layer_distribution"),
                                      ("density.toml", "low", "distribution"),
                                      ("density.toml", "medium", "distribution"),
                                      ("presets.toml", "seoul:5:1", "layers")}),
    "footprint": ("footprint", {("presets.toml", "beijing:1:1", "layer_counts")}),
    "total_pieces_cap": ("total_pieces_cap", {("presets.toml", "beijing:1:1",
                                               "pieces_per_element")}),
    "target_outside_band": ("target_outside_band",
                            {("presets.toml", "beijing:1:1", "target_pass_rate"),
                             ("presets.toml", "tokyo:6:1", "target_pass_rate")}),
    "acceptance": ("acceptance", {("acceptance.toml", "1", "clickable_min"),
                                  ("acceptance.toml", "2", "tool_assist_min"),
                                  ("acceptance.toml", "6", "tool_free_max"),
                                  ("acceptance.toml", "5", "level_id")}),
    "piece_size_divisible_by_4": ("piece_size_divisible_by_4", {("layout.toml", "-",
                                                                 "piece_size")}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_fatal_category(tmp_path, case):
    category, want = EXPECT[case]
    diags = errors_of(edited(tmp_path, *CASES[case]))
    extra = {"acceptance": {"duplicate_key"}}.get(case, set())  # level_id 4 twice
    assert {d.category for d in diags} == {category} | extra, [d.format() for d in diags]
    assert places(d for d in diags if d.category == category) == want
    assert len(diags) == len(want) + len(extra)  # one finding per planted fault, no noise


def test_every_fatal_category_is_covered_by_a_case():
    assert {EXPECT[c][0] for c in CASES} == set(FATAL)


def test_many_errors_fixture_reports_every_category_at_once():
    root = FIXTURES / "many_errors"
    diags = errors_of(root)
    assert {d.category for d in diags} == set(FATAL), sorted({d.category for d in diags})
    files = {d.file for d in diags}
    assert {"presets.toml", "layout.toml", "acceptance.toml", "rules.toml",
            "cities/istanbul.toml", "cities/beijing.toml", "cities/tokyo.toml"} <= files
    message = str(TableError(collect_diagnostics(root)))
    assert all(d.format() in message for d in diags)


def test_malformed_input_never_escapes_as_a_traceback(tmp_path):
    root = edited(tmp_path, ("presets.toml", None, "\n[[rows]]\nlevel_id = 99999999999999999"
                             "9999999999999999999999999999999\n"))
    (root / "cities" / "oddity.toml").mkdir()
    (root / "layout.toml").write_bytes(b"\xff\xfe not utf-8")
    (root / "density.toml").write_text("x = " + "[" * 2000 + "]" * 2000)
    diags = errors_of(root)
    assert places(d for d in diags if d.category == "parse") >= {
        ("layout.toml", "-", "-"), ("density.toml", "-", "-"), ("cities/oddity.toml", "-", "-")}
    assert ("presets.toml", "#37", "level_id") in places(diags)
    assert not any(d.category in ("unknown_city", "footprint") for d in diags)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert {d.file for d in errors_of(empty)} == {"cities", "presets.toml", "density.toml",
                                                   "layout.toml", "acceptance.toml",
                                                   "rules.toml"}


TOML_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True) | st.text(max_size=6) | st.sampled_from(["0.40", "1", "low"]),
    lambda inner: st.lists(inner, max_size=4), max_leaves=6)


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if v != v else ("inf" if v == float("inf") else
                                     "-inf" if v == float("-inf") else repr(v))
    if isinstance(v, str):
        return '"' + "".join(c if c.isalnum() or c in " ._-" else "" for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v if x is not None) + "]"
    return str(v)


@settings(max_examples=60)
@given(field=st.sampled_from(["city_id", "level_id", "revision", "element_count",
                              "pieces_per_element", "layers", "density", "target_pass_rate",
                              "target_duration_sec", "layer_distribution", "difficulty_tier"]),
       value=TOML_VALUES)
def test_any_value_in_any_preset_field_is_a_finding_not_a_crash(tmp_path_factory, field,
                                                                value):
    root = tmp_path_factory.mktemp("fuzz") / "r"
    shutil.copytree(DEFAULT_ROOT, root)
    path = root / "presets.toml"
    head, first, rest = path.read_text().partition("[[rows]]\n")
    row, sep, tail = rest.partition("\n[[rows]]")
    lines = [ln for ln in row.splitlines() if not ln.startswith(f"{field} =")]
    if value is not None:
        lines.append(f"{field} = {_toml(value)}")
    path.write_text(head + first + "\n".join(lines) + "\n" + sep + tail)
    diags = collect_diagnostics(root)  # never raises
    assert all(isinstance(d, Diagnostic) for d in diags)
    errors = [d for d in diags if d.severity == "error"]
    try:  # the loader agrees: it refuses exactly the roots with an error, naming them all
        load_tables(root)
    except TableError as e:
        assert errors and {d.format() for d in errors} <= {d.format() for d in e.diagnostics}
    else:
        assert not errors
    if errors:  # a finding says where: this file, and the field (or its row) that broke
        assert any(d.file.endswith("presets.toml") for d in errors), [d.format() for d in errors]


# -------------------------------------------------------------------- warnings (04, A-34)

def test_content_rules_are_warnings(tmp_path):
    singapore = (DEFAULT_ROOT / "cities" / "singapore.toml").read_text()
    cut = singapore.index("[[elements]]\nid = \"singapore_12\"")
    root = edited(tmp_path,
                  ("cities/singapore.toml", singapore[cut:], ""),  # 11 elements, nature 1
                  ("presets.toml", "element_count = 6", "element_count = 4", B11),
                  ("presets.toml", "revision = 1", "revision = 2", row_at("tokyo", 3)))
    catalog = load_tables(root)
    got = {(d.category, d.file, d.row, d.value) for d in catalog.warnings}
    assert got == {("content_elements", "cities/singapore.toml", "-", "11"),
                   ("content_categories", "cities/singapore.toml", "-", "nature"),
                   ("element_count_low", "presets.toml", "beijing:1:1", "4"),
                   ("content_presets", "presets.toml", "tokyo", "[1, 2, 4, 5, 6]")}
    assert all(d.severity == "warning" for d in catalog.warnings)
    assert ("tokyo", 3, 2) in catalog.keys() and len(catalog.presets) == 36
    assert collect_diagnostics(root) == list(catalog.warnings)


def test_revision_defaults_to_1_and_content_hash_tracks_bytes(tmp_path):
    root = edited(tmp_path, ("presets.toml", "revision = 1\n", "", B11))
    catalog = load_tables(root)
    assert ("beijing", 1, 1) in catalog.keys() and catalog.warnings == ()
    assert catalog.content_hash != content_hash(DEFAULT_ROOT)
    edited(tmp_path, ("presets.toml", None, "\n"))
    assert content_hash(root) != catalog.content_hash
    assert content_hash(tmp_path / "nothing") == content_hash(tmp_path / "nothing2")


def test_table_error_is_a_user_error(tmp_path):
    with pytest.raises(InputError) as info:
        load_tables(edited(tmp_path, ("layout.toml", "piece_size = 64", "piece_size = 66")))
    assert info.value.exit_code == 2 and "piece_size_divisible_by_4" in str(info.value)


def test_total_pieces_cap_is_the_search_mask_width():
    assert MAX_PIECES == 64
    plan, diags = vary(load_tables(), "beijing:2:1", "pieces_per_element", [3] * 6 + [48])
    assert plan is None and [d.category for d in diags] == ["total_pieces_cap"]
    plan, diags = vary(load_tables(), "beijing:6:1", "pieces_per_element",
                       [3] * 5 + [21] + [3] * 4)
    assert diags == [] and plan.total_pieces == 48 and isinstance(plan, TilePlan)

"""Table loading and validation (SPEC §2; A1 AC-1/AC-2/AC-3, A4 AC-1..AC-6)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minegen.errors import Diagnostic, MinegenError, TableError
from minegen.table_loader import DEFAULT_ROOT, collect_diagnostics, content_hash, load_tables
from minegen.table_model import BoardGenRow, Economy, Settlement, VariationRow, planned_mines

FIXTURES = Path(__file__).parent / "fixtures" / "tables"


# ----------------------------------------------------------------------------- helpers

def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string for the strings used here
    if isinstance(v, list):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + "}"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    return str(v)


def _rows_text(rows: list[dict]) -> str:
    return "\n".join(
        "[[rows]]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in r.items()) for r in rows
    )


def bg(level=1, depth=0, **kw) -> dict:
    """A legal board_gen row (the (1,0) reference values), with overrides; None drops a field."""
    row = dict(level_index=level, node_depth=depth, board_width=10, board_height=10,
               mine_density=0.10, inferability_target=0.95, solver_rules="single_subset",
               min_safe_count=50, max_gen_attempts=16, fog_region_count=0,
               fog_target_ratio=0.0, board_biome=["dungeon"])
    row.update(kw)
    return {k: v for k, v in row.items() if v is not None}


def var(**kw) -> dict:
    """A legal variation row (the A4 fog row), with overrides; None drops a field."""
    row = dict(variant_id="fog", display_name="Fog", unlock_level=2, scope="region",
               info_mask="hide_numbers", cell_constraint="safe_nonzero", biome_tag=[],
               counter_item_ids=[])
    row.update(kw)
    return {k: v for k, v in row.items() if v is not None}


def write_root(path: Path, bg_rows=None, var_rows=None, *, bg_text=None, var_text=None,
               economy=None, settlement=None) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "board_gen.toml").write_text(
        bg_text if bg_text is not None else _rows_text(bg_rows or [bg()]), encoding="utf-8")
    (path / "variation.toml").write_text(
        var_text if var_text is not None else _rows_text(var_rows or [var()]), encoding="utf-8")
    if economy is not None:
        (path / "economy.toml").write_text(economy, encoding="utf-8")
    if settlement is not None:
        (path / "settlement.toml").write_text(settlement, encoding="utf-8")
    return path


def errors_of(root) -> list[Diagnostic]:
    """Load ``root``, require a TableError, return its diagnostics."""
    with pytest.raises(TableError) as info:
        load_tables(root)
    diags = info.value.diagnostics
    assert any(d.severity == "error" for d in diags)
    return diags


def categories(diags) -> set[str]:
    return {d.category for d in diags}


# ----------------------------------------------------------- default root (A1 AC-1, A4 AC-1)

def test_default_root_loads_clean():
    tables = load_tables()
    assert tables.warnings == ()
    assert collect_diagnostics() == []
    assert load_tables(DEFAULT_ROOT) == tables
    assert Path(tables.root) == DEFAULT_ROOT
    assert DEFAULT_ROOT.name == "tables" and (DEFAULT_ROOT.parent / "minegen").is_dir()
    assert len(tables.content_hash) == 64


def test_default_root_reference_rows_exact():
    rows = {r.key: r for r in load_tables().board_gen}
    assert rows[(1, 0)] == BoardGenRow(1, 0, 10, 10, 0.10, 0.95, "single_subset", 50, 16, 0, 0.0,
                                       frozenset({"dungeon"}), tune_locked=True)
    assert rows[(2, 0)] == BoardGenRow(2, 0, 12, 12, 0.12, 0.92, "single_subset", 60, 16, 1, 0.10,
                                       frozenset({"dungeon"}), tune_locked=True)
    # the reference rows are fixed by the design: tuning never proposes a change to them
    assert [k for k, r in rows.items() if r.tune_locked] == [(1, 0), (2, 0)]
    assert rows[(1, 0)].planned_mines == 9 and rows[(2, 0)].planned_mines == 16


def test_default_curve_shape():
    rows = load_tables().board_gen
    assert {r.solver_rules for r in rows} == {"single_subset"}
    assert len(rows) >= 10 and len({r.level_index for r in rows}) >= 3
    assert all(r.fog_region_count == 0 for r in rows if r.level_index == 1)
    assert any(r.fog_region_count >= 1 for r in rows)
    assert all(r.max_gen_attempts * r.board_width * r.board_height <= 16384 for r in rows)
    # Fields a row declares monotone_in_depth really are non-decreasing along its level.
    declared = [r for r in rows if r.monotone_in_depth]
    assert declared
    for r in declared:
        level = sorted((x for x in rows if x.level_index == r.level_index), key=lambda x: x.node_depth)
        for name in r.monotone_in_depth:
            values = [getattr(x, name) for x in level]
            assert values == sorted(values), (r.level_index, name, values)


def test_default_variation_and_scalars():
    tables = load_tables()
    assert tables.variations == (
        VariationRow("fog", "迷雾", 2, "region", "hide_numbers", "safe_nonzero", frozenset(), ()),
    )
    assert tables.economy == Economy(dig_ap_cost=1, ap_per_round=8)
    assert tables.settlement == Settlement(d_ref=12.0, m_amb=3.0, unit_count=1)


# ------------------------------------------------------------------- broken fixture roots

# name -> (category, [(file, row, field) that must each appear])
SINGLE_CATEGORY = {
    "bad_parse": ("parse", [("board_gen.toml", "-", "-")]),
    "missing_field": ("missing_field", [("board_gen.toml", "(1, 0)", "min_safe_count")]),
    "unknown_field": ("unknown_field", [("board_gen.toml", "(2, 0)", "fog_ratio")]),
    "wrong_type": ("type", [("board_gen.toml", "(1, 0)", "board_width"),
                            ("board_gen.toml", "(1, 0)", "max_gen_attempts")]),
    "domain": ("domain", [("board_gen.toml", "(1, 0)", f) for f in
                          ("board_width", "mine_density", "inferability_target", "solver_rules")]
               + [("board_gen.toml", "#3", "node_depth")]),
    "duplicate_key": ("duplicate_key", [("board_gen.toml", "(2, 0)", "(level_index, node_depth)")]),
    "no_anchor": ("anchor", [("board_gen.toml", "(3, 2)", "node_depth")]),
    "fog_domain": ("fog_params", [("board_gen.toml", r, "fog_target_ratio")
                                  for r in ("(1, 0)", "(1, 2)", "(1, 4)", "(1, 6)")]),
    "mine_floor": ("mine_floor", [("board_gen.toml", "(1, 0)", "mine_density")]),
    "min_safe": ("min_safe_feasibility", [("board_gen.toml", "(1, 0)", "min_safe_count")]),
    "cost": ("cost", [("board_gen.toml", "(1, 0)", "max_gen_attempts")]),
    "biome_empty": ("biome_empty", [("board_gen.toml", "(2, 0)", "board_biome")]),
    "variation_dup_key": ("duplicate_key", [("variation.toml", "fog", "variant_id")]),
    "variation_unlock_oob": ("domain", [("variation.toml", "fog", "unlock_level")]),
    "variation_mask_constraint": ("mask_constraint", [("variation.toml", "fog", "cell_constraint")]),
}


@pytest.mark.parametrize("name", sorted(SINGLE_CATEGORY))
def test_broken_fixture_single_category(name):
    category, places = SINGLE_CATEGORY[name]
    diags = errors_of(FIXTURES / name)
    assert categories(diags) == {category}
    found = {(d.file, d.row, d.field) for d in diags}
    for place in places:
        assert place in found, (place, [d.format() for d in diags])
    assert len(diags) == len(places)  # one diagnostic per planted violation, no noise
    # The same findings through the non-raising channel.
    assert collect_diagnostics(FIXTURES / name) == diags


def test_bad_parse_names_line():
    (diag,) = errors_of(FIXTURES / "bad_parse")
    assert "line 5" in diag.rule


def test_many_errors_collects_everything_at_once():
    diags = errors_of(FIXTURES / "many_errors")
    cats = categories(diags)
    assert len(cats) >= 6, cats
    assert {"missing_field", "unknown_field", "type", "domain", "duplicate_key", "anchor",
            "fog_params", "mine_floor", "min_safe_feasibility", "cost", "biome_empty",
            "monotone_field", "mask_constraint"} <= cats
    assert {d.file for d in diags} == {"board_gen.toml", "variation.toml", "economy.toml"}
    message = str(TableError(diags))
    assert all(d.format() in message for d in diags)


def test_table_error_is_user_error():
    with pytest.raises(MinegenError) as info:
        load_tables(FIXTURES / "cost")
    assert info.value.exit_code == 2
    assert "cost" in str(info.value) and "18432" in str(info.value)


# -------------------------------------------------------------------- legal fixture roots

def test_edge_values_fixture_loads_clean():
    tables = load_tables(FIXTURES / "edge_values")
    assert tables.warnings == ()
    rows = {r.key: r for r in tables.board_gen}
    assert rows[(1, 0)].min_safe_count == 100 - rows[(1, 0)].planned_mines
    assert rows[(1, 1)].fog_target_ratio == 0.25 and rows[(1, 1)].mine_density == 0.03125
    assert rows[(1, 2)].fog_target_ratio == 0.16 and rows[(1, 2)].mine_density == 0.02
    assert rows[(1, 3)].planned_mines == 41 and rows[(1, 3)].min_safe_count == 144 - 41
    r64 = rows[(1, 4)]
    assert (r64.board_width, r64.board_height, r64.max_gen_attempts) == (64, 64, 4)
    r8 = rows[(1, 5)]
    assert r8.max_gen_attempts * r8.board_width * r8.board_height == 16384
    assert r8.board_width == 8 and r8.board_height == 64
    assert (999, 0) in rows and (1, 255) in rows
    assert tables.economy == Economy(dig_ap_cost=8, ap_per_round=1)
    assert {v.unlock_level for v in tables.variations} == {1, 2, 999}


# --------------------------------------------------------- A1 AC-2, programmatic legs

AC2_VIOLATIONS = {
    "ratio_above_8d": (bg(board_width=16, board_height=16, mine_density=0.02,
                          fog_region_count=1, fog_target_ratio=0.20), "fog_params"),
    "count_ge1_ratio_0": (bg(fog_region_count=1, fog_target_ratio=0.0), "fog_params"),
    "ratio_ge_1": (bg(mine_density=0.5, fog_region_count=1, fog_target_ratio=1.0), "domain"),
    "count_0_ratio_pos": (bg(fog_region_count=0, fog_target_ratio=0.05), "fog_params"),
    "ratio_030_d_015": (bg(board_width=16, board_height=16, mine_density=0.15,
                           fog_region_count=1, fog_target_ratio=0.30), "fog_params"),
    "zero_mines": (bg(mine_density=0.005), "mine_floor"),
    "zero_mines_below_half": (bg(board_width=11, board_height=19, mine_density=0.0024), "mine_floor"),
    "cost": (bg(board_width=32, board_height=32, max_gen_attempts=17), "cost"),
    "f2b_92": (bg(min_safe_count=92), "min_safe_feasibility"),
    "f2b_half_up": (bg(board_width=12, board_height=12, mine_density=0.3, min_safe_count=104),
                    "min_safe_feasibility"),
    "biome_empty": (bg(board_biome=[]), "biome_empty"),
}


@pytest.mark.parametrize("leg", sorted(AC2_VIOLATIONS))
def test_ac2_violation_legs(tmp_path, leg):
    row, category = AC2_VIOLATIONS[leg]
    diags = errors_of(write_root(tmp_path, [row]))
    assert categories(diags) == {category}
    assert all(d.file == "board_gen.toml" and d.row == "(1, 0)" for d in diags)


AC2_LEGAL = {
    "count_0_ratio_0": bg(fog_region_count=0, fog_target_ratio=0.0),
    "ratio_8d_exact_025": bg(mine_density=0.03125, fog_region_count=1, fog_target_ratio=0.25),
    "ratio_8d_exact_016": bg(board_width=16, board_height=16, mine_density=0.02,
                             fog_region_count=1, fog_target_ratio=0.16),
    "min_safe_exact": bg(min_safe_count=91),
    "min_safe_exact_half_up": bg(board_width=12, board_height=12, mine_density=0.3,
                                 min_safe_count=103),
    "mine_floor_exact_half": bg(board_width=11, board_height=19, mine_density=0.0025),
    "cost_exact": bg(board_width=32, board_height=32, max_gen_attempts=16),
    "biome_placeholder": bg(board_biome=["placeholder"]),
    "int_for_float": bg(inferability_target=1, mine_density=0.5),
}


@pytest.mark.parametrize("leg", sorted(AC2_LEGAL))
def test_ac2_legal_legs(tmp_path, leg):
    root = write_root(tmp_path, [AC2_LEGAL[leg]])
    assert collect_diagnostics(root) == []
    tables = load_tables(root)
    assert tables.warnings == () and len(tables.board_gen) == 1


def test_mine_floor_uses_half_up_on_written_decimal():
    # 0.0025 * (11*19 - 9) = 0.5 exactly: half-up gives 1 mine (banker's rounding would give 0).
    assert planned_mines(11, 19, 0.0025) == 1
    assert planned_mines(12, 12, 0.3) == 41


def test_cross_field_predicates_do_not_cascade(tmp_path):
    # board_width is out of domain: no mine_floor / F2b / F2c noise from the same row.
    diags = errors_of(write_root(tmp_path, [bg(board_width=65, min_safe_count=999,
                                               max_gen_attempts=32)]))
    assert [(d.category, d.field) for d in diags] == [("domain", "board_width")]
    # mine_density is NaN: domain only, no fog_params noise.
    diags = errors_of(write_root(tmp_path, [bg(mine_density=math.nan, fog_region_count=1,
                                               fog_target_ratio=0.1)]))
    assert [(d.category, d.field) for d in diags] == [("domain", "mine_density")]


def test_several_categories_in_one_programmatic_root(tmp_path):
    rows = [bg(), bg(1, 1, min_safe_count=92), bg(1, 2, board_biome=[]),
            bg(1, 3, max_gen_attempts=32, board_width=24, board_height=24), bg(2, 4)]
    diags = errors_of(write_root(tmp_path, rows, [var(), var(cell_constraint="any", variant_id="x")]))
    assert categories(diags) == {"min_safe_feasibility", "biome_empty", "cost", "anchor",
                                 "mask_constraint"}


# ------------------------------------------------------------ types, NaN, keys, shapes

@pytest.mark.parametrize("field", ["board_width", "level_index", "max_gen_attempts",
                                   "fog_region_count", "mine_density", "fog_target_ratio"])
def test_bool_is_not_a_number(tmp_path, field):
    diags = errors_of(write_root(tmp_path, [bg(), bg(2, 0, **{field: True})]))
    assert [(d.category, d.field, d.value) for d in diags] == [("type", field, "True")]


@pytest.mark.parametrize("field", ["mine_density", "inferability_target", "fog_target_ratio"])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_non_finite_floats_are_domain_errors(tmp_path, field, value):
    diags = errors_of(write_root(tmp_path, [bg(**{field: value})]))
    assert [(d.category, d.field) for d in diags] == [("domain", field)]


def test_huge_and_wrong_typed_values_never_traceback(tmp_path):
    text = (
        "[[rows]]\nlevel_index = 1\nnode_depth = 0\nboard_width = 100000000000000000000000000000\n"
        "board_height = 1.5\nmine_density = 1979-05-27\ninferability_target = {a = 1}\n"
        'solver_rules = ["single"]\nmin_safe_count = "50"\nmax_gen_attempts = -1\n'
        "fog_region_count = 0\nfog_target_ratio = 0.0\nboard_biome = [1, 2]\n"
        'monotone_in_depth = "board_width"\n'
    )
    diags = errors_of(write_root(tmp_path, bg_text=text))
    by_field = {d.field: d.category for d in diags}
    assert by_field == {"board_width": "domain", "board_height": "type", "mine_density": "type",
                        "inferability_target": "type", "solver_rules": "type",
                        "min_safe_count": "type", "max_gen_attempts": "domain",
                        "board_biome": "type", "monotone_in_depth": "type"}
    diags = errors_of(write_root(tmp_path, bg_text="[[rows]]\nlevel_index = 10000000000000000000000\n"
                                 "node_depth = 0\n"))
    assert ("domain", "#1", "level_index") in {(d.category, d.row, d.field) for d in diags}


_ANY_VALUE = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40), st.floats(), st.booleans(),
    st.text(max_size=6), st.lists(st.one_of(st.text(max_size=4), st.integers()), max_size=3),
    st.sampled_from(["single_subset", "region", "hide_numbers", "safe_nonzero", "board_width"]),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(bg_over=st.dictionaries(st.sampled_from(sorted(bg()) + ["monotone_in_depth", "extra"]),
                               _ANY_VALUE, max_size=4),
       var_over=st.dictionaries(st.sampled_from(sorted(var()) + ["extra"]), _ANY_VALUE,
                                max_size=3))
def test_arbitrary_values_give_diagnostics_not_tracebacks(tmp_path_factory, bg_over, var_over):
    root = write_root(tmp_path_factory.mktemp("fuzz"), [bg(**bg_over), bg(2, 0)],
                      [var(**var_over)])
    diags = collect_diagnostics(root)  # must not raise
    try:
        tables = load_tables(root)
    except TableError as exc:
        assert exc.diagnostics == diags and any(d.severity == "error" for d in diags)
    else:
        assert list(tables.warnings) == diags
        assert all(d.severity == "warning" for d in diags)


def test_broken_key_is_labelled_by_position(tmp_path):
    diags = errors_of(write_root(tmp_path, [bg(), bg(level_index="two")]))
    assert [(d.category, d.row, d.field) for d in diags] == [("type", "#2", "level_index")]
    diags = errors_of(write_root(tmp_path, [bg(), bg(node_depth=None)]))
    assert [(d.category, d.row, d.field) for d in diags] == [("missing_field", "#2", "node_depth")]


def test_string_fields_must_be_non_empty(tmp_path):
    diags = errors_of(write_root(tmp_path, var_rows=[var(display_name=""), var(variant_id="")]))
    assert {(d.category, d.row, d.field) for d in diags} == {("domain", "fog", "display_name"),
                                                             ("domain", "#2", "variant_id")}
    diags = errors_of(write_root(tmp_path, [bg(board_biome=["dungeon", ""])]))
    assert [(d.category, d.field) for d in diags] == [("domain", "board_biome")]


def test_monotone_field_names_are_checked(tmp_path):
    ok = write_root(tmp_path / "ok", [bg(monotone_in_depth=["board_width", "fog_target_ratio"])])
    assert load_tables(ok).board_gen[0].monotone_in_depth == ("board_width", "fog_target_ratio")
    for bad in ("solver_rules", "node_depth", "board_biome", "width"):
        diags = errors_of(write_root(tmp_path / bad, [bg(monotone_in_depth=["mine_density", bad])]))
        assert [(d.category, d.value) for d in diags] == [("monotone_field", repr(bad))]


@pytest.mark.parametrize("text, expect_row", [
    ("", "-"),                                  # empty file
    ("# only a comment\n", "-"),
    ("rows = 3\n", "-"),                        # rows is not an array
    ("rows = []\n", "-"),                       # no rows
    ("[rows]\nlevel_index = 1\n", "-"),         # a table, not an array of tables
    ("rows = [1, 2]\n", "#1"),                  # entries are not tables
])
def test_top_level_shape_errors_are_parse(tmp_path, text, expect_row):
    diags = errors_of(write_root(tmp_path, bg_text=text))
    assert {d.category for d in diags} == {"parse"}
    assert all(d.file == "board_gen.toml" for d in diags)
    assert diags[0].row == expect_row


def test_missing_and_unreadable_files_are_parse(tmp_path):
    diags = errors_of(tmp_path / "nowhere")
    assert {(d.category, d.file) for d in diags} == {("parse", "board_gen.toml"),
                                                     ("parse", "variation.toml")}
    root = write_root(tmp_path / "r")
    (root / "variation.toml").unlink()
    assert [(d.category, d.file) for d in errors_of(root)] == [("parse", "variation.toml")]
    (root / "variation.toml").write_bytes(b'[[rows]]\nvariant_id = "\xff\xfe"\n')
    assert [(d.category, d.file) for d in errors_of(root)] == [("parse", "variation.toml")]
    (root / "variation.toml").unlink()
    (root / "variation.toml").mkdir()  # a directory where the file should be
    assert [(d.category, d.file) for d in errors_of(root)] == [("parse", "variation.toml")]


def test_unknown_top_level_key(tmp_path):
    text = "version = 3\n" + _rows_text([bg()])
    diags = errors_of(write_root(tmp_path, bg_text=text))
    assert [(d.category, d.row, d.field) for d in diags] == [("unknown_field", "-", "version")]


# --------------------------------------------------------------- economy, settlement

def test_economy_and_settlement_defaults_and_checks(tmp_path):
    tables = load_tables(write_root(tmp_path / "a"))
    assert tables.economy == Economy() and tables.settlement == Settlement()
    tables = load_tables(write_root(tmp_path / "b", settlement="d_ref = 12\nunit_count = 3\n"))
    assert tables.settlement == Settlement(d_ref=12.0, m_amb=3.0, unit_count=3)
    assert isinstance(tables.settlement.d_ref, float)
    diags = errors_of(write_root(tmp_path / "c", economy="dig_ap_cost = 0\nap_per_round = 8.0\n"
                                 "gold = 1\n",
                                 settlement="d_ref = 0.0\nm_amb = nan\nunit_count = 1000\n"))
    assert {(d.file, d.row, d.field, d.category) for d in diags} == {
        ("economy.toml", "-", "dig_ap_cost", "domain"),
        ("economy.toml", "-", "ap_per_round", "type"),
        ("economy.toml", "-", "gold", "unknown_field"),
        ("settlement.toml", "-", "d_ref", "domain"),
        ("settlement.toml", "-", "m_amb", "domain"),
        ("settlement.toml", "-", "unit_count", "domain"),
    }
    diags = errors_of(write_root(tmp_path / "d", economy="dig_ap_cost = 9\n"))
    assert [(d.field, d.category) for d in diags] == [("dig_ap_cost", "domain")]
    diags = errors_of(write_root(tmp_path / "e", economy="dig_ap_cost = \n"))
    assert [(d.file, d.category) for d in diags] == [("economy.toml", "parse")]


# ----------------------------------------------------------------------- A4 schema

@pytest.mark.parametrize("unlock, legal", [(0, False), (1000, False), (1, True), (999, True),
                                           (10**30, False), (-1, False)])
def test_a4_ac5_unlock_level_domain(tmp_path, unlock, legal):
    root = write_root(tmp_path, var_rows=[var(unlock_level=unlock)])
    if legal:
        assert load_tables(root).variations[0].unlock_level == unlock
        assert collect_diagnostics(root) == []
    else:
        diags = errors_of(root)
        assert [(d.category, d.row, d.field) for d in diags] == [("domain", "fog", "unlock_level")]


@pytest.mark.parametrize("field, value", [("scope", "local"), ("info_mask", "blur"),
                                          ("cell_constraint", "mine")])
def test_a4_enum_domains(tmp_path, field, value):
    diags = errors_of(write_root(tmp_path, var_rows=[var(**{"info_mask": "none", field: value})]))
    assert [(d.category, d.field) for d in diags] == [("domain", field)]


def test_a4_missing_and_unknown_fields(tmp_path):
    diags = errors_of(write_root(tmp_path, var_rows=[var(scope=None, colour="grey")]))
    assert {(d.category, d.field) for d in diags} == {("missing_field", "scope"),
                                                      ("unknown_field", "colour")}
    # biome_tag and counter_item_ids are optional (A4: empty by default).
    tables = load_tables(write_root(tmp_path, var_rows=[var(biome_tag=None, counter_item_ids=None)]))
    assert tables.variations[0].biome_tag == frozenset()
    assert tables.variations[0].counter_item_ids == ()


def test_a4_mask_constraint_only_for_hide_numbers(tmp_path):
    root = write_root(tmp_path, var_rows=[var(info_mask="none", cell_constraint="any")])
    assert collect_diagnostics(root) == []


def test_a4_ac6_global_scope_is_a_warning_only():
    tables = load_tables(FIXTURES / "global_scope")
    (warning,) = tables.warnings
    assert (warning.category, warning.severity, warning.file, warning.row, warning.field) == (
        "scope_global", "warning", "variation.toml", "omen", "scope")
    assert collect_diagnostics(FIXTURES / "global_scope") == [warning]
    omen = next(v for v in tables.variations if v.variant_id == "omen")
    assert omen.scope == "global"
    for level in (1, omen.unlock_level, 999):
        assert omen not in tables.pool(level, frozenset({"dungeon"}))


def test_warning_rides_along_with_errors(tmp_path):
    root = write_root(tmp_path, var_rows=[var(), var(variant_id="g", scope="global",
                                                     info_mask="none", unlock_level=0)])
    diags = errors_of(root)
    assert {(d.category, d.severity) for d in diags} == {("scope_global", "warning"),
                                                         ("domain", "error")}


def test_a4_ac2_pool_gate_default_root():
    tables = load_tables()
    (fog,) = tables.variations
    u = fog.unlock_level  # a knob: read, not hard-coded (A4 AC-2)
    for biome in ({"dungeon"}, {"dungeon", "ice"}, {"cave"}):
        assert tables.pool(u, frozenset(biome)) == (fog,)
        assert tables.pool(999, frozenset(biome)) == (fog,)
        if u > 1:
            assert tables.pool(u - 1, frozenset(biome)) == ()


def test_a4_ac3_pool_gate_biome_tag_fixture():
    tables = load_tables(FIXTURES / "biome_tag")
    assert collect_diagnostics(FIXTURES / "biome_tag") == []
    ice = next(v for v in tables.variations if v.biome_tag)
    assert ice.biome_tag == frozenset({"ice"}) and ice.unlock_level == 1
    assert ice not in tables.pool(1, frozenset({"dungeon"}))
    assert ice in tables.pool(1, frozenset({"dungeon", "ice"}))
    assert ice in tables.pool(1, frozenset({"ice"}))
    # The pool is sorted by variant_id (the order a variant draw indexes into).
    pool = tables.pool(2, frozenset({"dungeon", "ice"}))
    assert [v.variant_id for v in pool] == sorted(v.variant_id for v in pool) and len(pool) == 2


# ----------------------------------------------------------------------- R1 floor

def test_r1_floor_resolution(tmp_path):
    rows = [bg(1, 0), bg(1, 5, board_width=12), bg(1, 9, board_width=14), bg(3, 0)]
    tables = load_tables(write_root(tmp_path, rows))
    assert [tables.resolve(1, d).node_depth for d in (0, 4, 5, 8, 9, 10, 255)] == [0, 0, 5, 5, 9, 9, 9]
    assert tables.resolve(1, 7).board_width == 12
    assert tables.resolve(3, 200).key == (3, 0)
    for level in (0, 2, 4):
        with pytest.raises(MinegenError, match=r"known levels: \[1, 3\]"):
            tables.resolve(level, 0)


def test_r1_floor_on_default_root():
    tables = load_tables()
    for level in tables.levels():
        depths = sorted(r.node_depth for r in tables.board_gen if r.level_index == level)
        assert depths[0] == 0
        for d in range(0, depths[-1] + 3):
            assert tables.resolve(level, d).node_depth == max(x for x in depths if x <= d)
    with pytest.raises(MinegenError, match="known levels"):
        tables.resolve(max(tables.levels()) + 1, 0)


# ----------------------------------------------------------------------- content hash

def test_content_hash_stable_and_sensitive(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(DEFAULT_ROOT, copy)
    original = load_tables().content_hash
    assert load_tables(copy).content_hash == original  # path-independent, deterministic
    assert content_hash(copy) == original == content_hash(DEFAULT_ROOT)
    (copy / "README.txt").write_text("not a table")
    assert content_hash(copy) == original  # only .toml files count
    board = copy / "board_gen.toml"
    board.write_bytes(board.read_bytes() + b"\n# tweak\n")
    changed = load_tables(copy).content_hash
    assert changed != original
    economy = copy / "economy.toml"
    saved = economy.read_bytes()
    economy.write_bytes(saved.replace(b"ap_per_round = 8", b"ap_per_round = 8 "))
    assert load_tables(copy).economy == Economy()  # same values, different bytes
    assert load_tables(copy).content_hash not in (original, changed)
    economy.write_bytes(saved)
    assert load_tables(copy).content_hash == changed
    economy.unlink()  # removing a file changes the hash too
    assert load_tables(copy).content_hash not in (original, changed)

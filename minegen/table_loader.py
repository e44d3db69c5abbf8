"""Load and validate a table root (SPEC §2): collect every diagnostic, then fail once.

A table root is a directory holding:

- ``board_gen.toml`` (required): ``[[rows]]`` of the A1 BoardGenTable, key (level_index, node_depth);
- ``variation.toml`` (required): ``[[rows]]`` of the A4 VariationTable, key variant_id;
- ``economy.toml`` (optional): top-level ``dig_ap_cost``, ``ap_per_round`` (A3, read only);
- ``settlement.toml`` (optional): top-level ``d_ref``, ``m_amb``, ``unit_count`` (B1 clause ③).

Contract: ``load_tables`` never stops at the first finding and never lets a traceback
escape for malformed input; every finding is a ``Diagnostic`` (category, file, row, field,
value, rule). Any error-severity finding raises one ``TableError`` carrying all of them;
warnings (A4 ``scope_global``) ride along in ``Tables.warnings``.

Row labels: ``"(L, D)"`` for a board_gen row, the variant_id for a variation row,
``"#n"`` (1-based position) when the row's key fields are themselves broken, ``"-"`` for
file-level findings.
"""

from __future__ import annotations

import os
from pathlib import Path

from boardcore import assets
from boardcore.tables import (Collector, check_fields, content_hash, emit, has, key_name,
                              parse_toml, show, unknown_files)

from . import table_checks as tc
from .errors import Diagnostic, TableError
from .table_model import BoardGenRow, Economy, Settlement, Tables, VariationRow

BOARD_GEN_FILE = "board_gen.toml"
VARIATION_FILE = "variation.toml"
ECONOMY_FILE = "economy.toml"
SETTLEMENT_FILE = "settlement.toml"

DEFAULT_ROOT = assets.path("tables")  # the shipped default tables (tables/ in a checkout)


def _read(root: Path, name: str, required: bool, out: Collector) -> dict | None:
    """Parse one TOML file; ``None`` (plus a "parse" diagnostic when required) if unusable."""
    path = root / name
    if not path.is_file():
        if path.exists() or path.is_symlink():  # a folder, a FIFO, a device, a dead link
            out.add("parse", name, rule=f"{path} exists but is not a regular file")
        elif required:
            out.add("parse", name, rule=f"required file {name} is missing from {root}")
        return None
    doc, rule = parse_toml(path)
    if doc is None:
        out.add("parse", name, rule=rule)
    return doc


def _rows_of(doc: dict, name: str, out: Collector) -> list[tuple[int, dict]]:
    """The ``[[rows]]`` array as (1-based position, row table); shape errors are "parse"."""
    for key in doc:
        if key != "rows":
            out.add("unknown_field", name, field=key_name(key), value=show(doc[key]),
                    rule="the only top-level key is rows (an array of tables [[rows]])")
    rows = doc.get("rows")
    if rows is None or rows == []:
        out.add("parse", name, rule="file must hold at least one [[rows]] table (empty file)")
        return []
    if not isinstance(rows, list):
        out.add("parse", name, field="rows", value=show(rows),
                rule="rows must be an array of tables ([[rows]])")
        return []
    good = []
    for pos, row in enumerate(rows, start=1):
        if isinstance(row, dict):
            good.append((pos, row))
        else:
            out.add("parse", name, row=f"#{pos}", value=show(row),
                    rule="each entry of rows must be a table ([[rows]])")
    return good


def _board_gen_cross(ok: dict, name: str, label: str, out: Collector) -> bool:
    """A1 F2 / F2b / F2c and monotone names, on individually valid fields. True if clean."""
    n0 = len(out.items)
    W, H, d = "board_width", "board_height", "mine_density"
    if has(ok, "fog_region_count", "fog_target_ratio", d):
        for rule in tc.fog_param_violations(ok["fog_region_count"], ok["fog_target_ratio"], ok[d]):
            out.add("fog_params", name, label, "fog_target_ratio",
                    show(ok["fog_target_ratio"]), rule)
    if has(ok, W, H, d):
        rule = tc.mine_floor_violation(ok[W], ok[H], ok[d])
        if rule:
            out.add("mine_floor", name, label, d, show(ok[d]), rule)
    if has(ok, W, H, d, "min_safe_count"):
        rule = tc.min_safe_violation(ok[W], ok[H], ok[d], ok["min_safe_count"])
        if rule:
            out.add("min_safe_feasibility", name, label, "min_safe_count",
                    show(ok["min_safe_count"]), rule)
    if has(ok, W, H, "max_gen_attempts"):
        rule = tc.cost_violation(ok["max_gen_attempts"], ok[W], ok[H])
        if rule:
            out.add("cost", name, label, "max_gen_attempts", show(ok["max_gen_attempts"]), rule)
    for field in ok.get("monotone_in_depth", ()):
        if field not in tc.MONOTONE_FIELDS:
            out.add("monotone_field", name, label, "monotone_in_depth", show(field),
                    "monotone_in_depth may only name numeric BoardGenTable knobs: "
                    + ", ".join(tc.MONOTONE_FIELDS))
    return len(out.items) == n0


def _load_board_gen(doc: dict, out: Collector) -> list[BoardGenRow]:
    """A1 BoardGenTable: fields, unique keys, depth-0 anchor per level, F2/F2b/F2c."""
    name = BOARD_GEN_FILE
    rows: list[BoardGenRow] = []
    first_pos: dict[tuple[int, int], int] = {}
    for pos, raw in _rows_of(doc, name, out):
        ok, problems = check_fields(raw, tc.BOARD_GEN_FIELDS)
        key = (ok["level_index"], ok["node_depth"]) if has(ok, "level_index", "node_depth") else None
        label = f"({key[0]}, {key[1]})" if key else f"#{pos}"
        emit(out, name, label, problems)
        clean = _board_gen_cross(ok, name, label, out) and not problems
        if key is not None:
            if key in first_pos:
                out.add("duplicate_key", name, label, "(level_index, node_depth)", show(key),
                        f"key (level_index, node_depth) must be unique; {label} is already "
                        f"defined by row #{first_pos[key]}")
                clean = False
            else:
                first_pos[key] = pos
        if clean:
            rows.append(_board_gen_row(ok))
    for level in sorted({lv for lv, _ in first_pos}):
        depths = sorted(dp for lv, dp in first_pos if lv == level)
        if depths[0] != 0:
            out.add("anchor", name, f"({level}, {depths[0]})", "node_depth", show(depths[0]),
                    f"level {level} must have a depth-0 anchor row (level_index = {level}, "
                    "node_depth = 0) for R1 floor resolution")
    return rows


def _board_gen_row(ok: dict) -> BoardGenRow:
    return BoardGenRow(
        level_index=ok["level_index"],
        node_depth=ok["node_depth"],
        board_width=ok["board_width"],
        board_height=ok["board_height"],
        mine_density=float(ok["mine_density"]),
        inferability_target=float(ok["inferability_target"]),
        solver_rules=ok["solver_rules"],
        min_safe_count=ok["min_safe_count"],
        max_gen_attempts=ok["max_gen_attempts"],
        fog_region_count=ok["fog_region_count"],
        fog_target_ratio=float(ok["fog_target_ratio"]),
        board_biome=frozenset(ok["board_biome"]),
        monotone_in_depth=tuple(ok.get("monotone_in_depth", ())),
        tune_locked=bool(ok.get("tune_locked", False)),
    )


def _load_variations(doc: dict, out: Collector) -> list[VariationRow]:
    """A4 VariationTable: fields, unique variant_id, hide_numbers ⇒ safe_nonzero, global warning."""
    name = VARIATION_FILE
    rows: list[VariationRow] = []
    first_pos: dict[str, int] = {}
    for pos, raw in _rows_of(doc, name, out):
        ok, problems = check_fields(raw, tc.VARIATION_FIELDS)
        vid = ok.get("variant_id")
        label = key_name(vid) if vid is not None else f"#{pos}"
        emit(out, name, label, problems)
        clean = not problems
        if has(ok, "info_mask", "cell_constraint"):
            rule = tc.mask_constraint_violation(ok["info_mask"], ok["cell_constraint"])
            if rule:
                out.add("mask_constraint", name, label, "cell_constraint",
                        show(ok["cell_constraint"]), rule)
                clean = False
        if ok.get("scope") == "global":
            out.add("scope_global", name, label, "scope", show("global"),
                    "scope = global is a reserved enum slot whose semantics belong to C3 "
                    "(A4 Rule 9); the row never enters a board's pool", severity="warning")
        if vid is not None:
            if vid in first_pos:
                out.add("duplicate_key", name, label, "variant_id", show(vid),
                        f"variant_id must be unique; already defined by row #{first_pos[vid]}")
                clean = False
            else:
                first_pos[vid] = pos
        if clean:
            rows.append(VariationRow(
                variant_id=vid,
                display_name=ok["display_name"],
                unlock_level=ok["unlock_level"],
                scope=ok["scope"],
                info_mask=ok["info_mask"],
                cell_constraint=ok["cell_constraint"],
                biome_tag=frozenset(ok.get("biome_tag", ())),
                counter_item_ids=tuple(ok.get("counter_item_ids", ())),
            ))
    return rows


def _load_scalars(doc: dict | None, name: str, specs, out: Collector) -> dict:
    """A flat key = value file (economy, settlement): valid keys only; missing = default."""
    if doc is None:
        return {}
    ok, problems = check_fields(doc, specs)
    emit(out, name, "-", problems)
    floats = {s.name for s in specs if s.kind == "float"}
    return {k: float(v) if k in floats else v for k, v in ok.items()}


def _load(root: Path) -> tuple[Tables | None, list[Diagnostic]]:
    out = Collector()
    bg_doc = _read(root, BOARD_GEN_FILE, True, out)
    var_doc = _read(root, VARIATION_FILE, True, out)
    eco_doc = _read(root, ECONOMY_FILE, False, out)
    set_doc = _read(root, SETTLEMENT_FILE, False, out)
    unknown_files(root, (BOARD_GEN_FILE, VARIATION_FILE, ECONOMY_FILE, SETTLEMENT_FILE), out,
                  optional=(ECONOMY_FILE, SETTLEMENT_FILE))
    board_gen = _load_board_gen(bg_doc, out) if bg_doc is not None else []
    variations = _load_variations(var_doc, out) if var_doc is not None else []
    economy = _load_scalars(eco_doc, ECONOMY_FILE, tc.ECONOMY_FIELDS, out)
    settlement = _load_scalars(set_doc, SETTLEMENT_FILE, tc.SETTLEMENT_FIELDS, out)
    if out.has_errors:
        return None, out.items
    tables = Tables(
        root=str(root),
        board_gen=tuple(sorted(board_gen, key=lambda r: r.key)),
        variations=tuple(sorted(variations, key=lambda v: v.variant_id)),
        economy=Economy(**economy),
        settlement=Settlement(**settlement),
        content_hash=content_hash(root),
        warnings=tuple(out.items),
    )
    return tables, out.items


def collect_diagnostics(root: str | os.PathLike | None = None) -> list[Diagnostic]:
    """Every diagnostic of ``root`` (errors and warnings) without raising (test/validate channel)."""
    return _load(Path(root) if root is not None else DEFAULT_ROOT)[1]


def load_tables(root: str | os.PathLike | None = None) -> Tables:
    """Load and validate a table root (default: the repo's ``tables/``), SPEC §2.

    Returns a ``Tables`` built only from rows that passed every predicate (board_gen rows
    sorted by key, variations by variant_id). Raises ``TableError`` carrying *all*
    diagnostics (errors and warnings) if any has severity "error".
    """
    tables, diagnostics = _load(Path(root).resolve() if root is not None else DEFAULT_ROOT)
    if tables is None:
        raise TableError(diagnostics)
    return tables


def row_fields(row: BoardGenRow) -> dict:
    """A BoardGenRow back in its TOML shape (sets as sorted lists)."""
    raw = {f: getattr(row, f) for f in row.__dataclass_fields__}
    raw["board_biome"] = sorted(row.board_biome)
    raw["monotone_in_depth"] = list(row.monotone_in_depth)
    return raw


def check_board_gen_row(raw: dict) -> tuple[BoardGenRow | None, list[Diagnostic]]:
    """Validate one BoardGenTable row given as a dict (field domains, F2, F2b, F2c), in
    memory: (the row, []) when clean, else (None, every diagnostic). For tools that vary a
    row (``minegen sweep``) without writing a table root anywhere."""
    out = Collector()
    ok, problems = check_fields(raw, tc.BOARD_GEN_FIELDS)
    label = (f"({ok['level_index']}, {ok['node_depth']})"
             if has(ok, "level_index", "node_depth") else "#1")
    emit(out, BOARD_GEN_FILE, label, problems)
    clean = _board_gen_cross(ok, BOARD_GEN_FILE, label, out) and not problems
    return (_board_gen_row(ok) if clean else None), out.items

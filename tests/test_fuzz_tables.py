"""Hardening fuzz: every malformed table root gives the categorised listing and exit 2.

Issue "Hardening" (SPEC §2): a table root with any kind of defect -- bad TOML syntax,
invalid UTF-8, wrong types, missing / unknown fields, out-of-range and huge values,
duplicate keys, empty or missing files, a ``rows`` key of the wrong shape, cross-field
violations (A1 F2 / F2b / F2c, mine floor), an empty board_biome, VariationTable
violations, bad economy / settlement values -- must make ``minegen validate`` print
"table validation failed: N error(s)" plus one categorised line per finding and exit 2.
A traceback, another exit code or an uncategorised line is a bug.

How the roots are built: every example starts from the valid default tables
(``tables/*.toml``, parsed with tomllib) and applies one or more *breaking mutations*,
each constructed so that the root is GUARANTEED malformed on its own (legality is
judged by an independent reading of SPEC §2 in this file, not by the loader), and so
that several mutations never cancel out: one mutation kind per file, and row-local
mutations of one file touch distinct rows. Structured files are written back with the
small TOML serializer below (tomllib reads only); syntax mutations edit the bytes.

Each mutation also states which categories it must produce (any one of a set); the test
checks that for every example, so the listing is not only well-formed but right.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as dt
import io
import math
import os
import re
import subprocess
import sys
import tempfile
import tomllib
import traceback
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minegen.cli
from minegen.errors import TableError
from minegen.table_loader import DEFAULT_ROOT, collect_diagnostics

REPO = Path(__file__).resolve().parent.parent
BG, VAR, ECO, SET = "board_gen.toml", "variation.toml", "economy.toml", "settlement.toml"
FILES = (BG, VAR, ECO, SET)
ROW_FILES = (BG, VAR)
SCALAR_FILES = (ECO, SET)

CATEGORIES = frozenset({
    "parse", "missing_field", "unknown_field", "type", "domain", "duplicate_key", "anchor",
    "fog_params", "mine_floor", "min_safe_feasibility", "cost", "biome_empty",
    "monotone_field", "mask_constraint",
})
WARNING_CATEGORIES = frozenset({"scope_global"})

# ``make test-fast`` runs the fuzzer at a fifth of its examples (the same first examples:
# derandomized); ``make test`` at all of them.
SCALE = float(os.environ.get("MINEGEN_FUZZ_SCALE", "1"))


def fuzz(max_examples: int) -> settings:
    return settings(derandomize=True, deadline=None, database=None,
                    max_examples=max(1, round(max_examples * SCALE)),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                           HealthCheck.data_too_large])


PER_KIND_EXAMPLES = 25   # x 20 kinds = 500
MIXED_EXAMPLES = 150     # + 150 multi-file roots = 650 malformed roots in total


# ------------------------------------------------------ SPEC §2 domains, read independently

@dataclass(frozen=True)
class Dom:
    kind: str  # "int" (bool is not an int), "float" (int accepted), "str", "enum", "strlist"
    lo: object = None
    hi: object = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple = ()
    required: bool = True
    nonempty: bool = False  # a strlist whose emptiness is its own category (biome_empty)


BG_DOMS = {
    "level_index": Dom("int", 1, 999),  # SPEC: int >= 1; the loader caps it at 999
    "node_depth": Dom("int", 0, 255),
    "board_width": Dom("int", 8, 64),
    "board_height": Dom("int", 8, 64),
    "mine_density": Dom("float", 0, 0.5, lo_open=True),
    "inferability_target": Dom("float", 0.85, 1),
    "solver_rules": Dom("enum", choices=("single", "single_subset")),
    "min_safe_count": Dom("int", 1, 999),
    "max_gen_attempts": Dom("int", 1, 32),
    "fog_region_count": Dom("int", 0, 32),
    "fog_target_ratio": Dom("float", 0, 1, hi_open=True),
    "board_biome": Dom("strlist", nonempty=True),
    "monotone_in_depth": Dom("strlist", required=False),
}
VAR_DOMS = {
    "variant_id": Dom("str"),
    "display_name": Dom("str"),
    "unlock_level": Dom("int", 1, 999),
    "scope": Dom("enum", choices=("region", "global")),
    "info_mask": Dom("enum", choices=("none", "hide_numbers")),
    "cell_constraint": Dom("enum", choices=("any", "safe_nonzero")),
    "biome_tag": Dom("strlist", required=False),
    "counter_item_ids": Dom("strlist", required=False),
}
ECO_DOMS = {"dig_ap_cost": Dom("int", 1, 8, required=False),
            "ap_per_round": Dom("int", 1, None, required=False)}
SET_DOMS = {"d_ref": Dom("float", 0, None, lo_open=True, required=False),
            "m_amb": Dom("float", 0, None, lo_open=True, required=False),
            "unit_count": Dom("int", 1, 999, required=False)}
DOMS = {BG: BG_DOMS, VAR: VAR_DOMS, ECO: ECO_DOMS, SET: SET_DOMS}
# Numeric BoardGenTable knobs: the only names monotone_in_depth may hold (assertion E).
NUMERIC_KNOBS = ("board_width", "board_height", "mine_density", "inferability_target",
                 "min_safe_count", "max_gen_attempts", "fog_region_count", "fog_target_ratio")
FLOAT_MAX = sys.float_info.max


def type_ok(dom: Dom, v) -> bool:
    if dom.kind == "int":
        return type(v) is int
    if dom.kind == "float":
        return type(v) in (int, float)
    if dom.kind in ("str", "enum"):
        return isinstance(v, str)
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def legal(dom: Dom, v) -> bool:
    if not type_ok(dom, v):
        return False
    if dom.kind in ("int", "float"):
        if isinstance(v, float) and not math.isfinite(v):
            return False
        if dom.kind == "float" and abs(v) > FLOAT_MAX:
            return False
        if dom.lo is not None and (v <= dom.lo if dom.lo_open else v < dom.lo):
            return False
        if dom.hi is not None and (v >= dom.hi if dom.hi_open else v > dom.hi):
            return False
        return True
    if dom.kind == "str":
        return v != ""
    if dom.kind == "enum":
        return v in dom.choices
    return all(x != "" for x in v) and (bool(v) or not dom.nonempty)


def category_of(dom: Dom, v) -> str:
    """The category an illegal value of ``dom`` must produce."""
    if not type_ok(dom, v):
        return "type"
    if dom.nonempty and v == []:
        return "biome_empty"
    return "domain"


def dec(x) -> Decimal:
    return Decimal(repr(float(x))) if isinstance(x, float) else Decimal(x)


def mines(w: int, h: int, d) -> int:
    """A1 stage 2, independently: round_half_up(d * (W*H - 9)) on the written decimal."""
    return int((dec(d) * (w * h - 9)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


# ----------------------------------------------------------------------- TOML serializer

@dataclass(frozen=True, repr=False)
class Raw:
    """A value written verbatim. ``value``: what tomllib yields for it (for the legality
    oracle); ``parse``: "never" (tomllib always rejects it), "maybe" (too deep to be sure)."""

    text: str
    value: object = None
    parse: str = "ok"

    def __repr__(self) -> str:  # keep failure reports readable
        shown = self.text if len(self.text) <= 40 else f"{self.text[:20]}...<{len(self.text)} chars>"
        return f"Raw({shown!r}, parse={self.parse!r})"


_BARE = re.compile(r"[A-Za-z0-9_-]+")


def toml_str(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_key(k: str) -> str:
    return k if _BARE.fullmatch(k) else toml_str(k)


def toml_value(v) -> str:
    if isinstance(v, Raw):
        return v.text
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return toml_str(v)
    if isinstance(v, (dt.datetime, dt.date, dt.time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def _is_aot(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def dump(doc: dict) -> str:
    """A document: top-level keys first, then ``rows`` as [[rows]] if it is an array of tables."""
    lines = [f"{toml_key(k)} = {toml_value(v)}" for k, v in doc.items()
             if not (k == "rows" and _is_aot(v))]
    if _is_aot(doc.get("rows")):
        for row in doc["rows"]:
            lines += ["", "[[rows]]"] + [f"{toml_key(k)} = {toml_value(v)}" for k, v in row.items()]
    return "\n".join(lines) + "\n"


def _load_base() -> dict[str, dict]:
    base = {}
    for name in FILES:
        path = DEFAULT_ROOT / name
        base[name] = tomllib.loads(path.read_text("utf-8")) if path.is_file() else {}
    base[ECO] = base[ECO] or {"dig_ap_cost": 1, "ap_per_round": 8}
    base[SET] = base[SET] or {"d_ref": 12.0, "m_amb": 3.0, "unit_count": 1}
    return base


BASE = _load_base()


# ----------------------------------------------------------------------- value strategies

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
PLAIN_TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)
HUGE_INTS = [10**30, -(10**30), -(2**63), 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**4000,
             -(10**4000)]
SCALARS = st.one_of(
    st.integers(), st.sampled_from(HUGE_INTS), st.floats(), st.booleans(), TEXT,
    st.datetimes(min_value=dt.datetime(1, 1, 1)), st.dates(), st.times(),
)
ANY_VALUE = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


def _nested(depth: int) -> list:
    v: list = []
    for _ in range(depth - 1):
        v = [v]
    return v


@st.composite
def huge_raw(draw):
    """Values at or past the limits of tomllib / Python's int-str conversion."""
    which = draw(st.sampled_from(["hex", "dec", "deep"]))
    if which == "hex":  # parses (power-of-two base) to an int of up to ~6000 decimal digits
        n = draw(st.integers(3000, 5000))
        return Raw("0x" + "f" * n, int("f" * n, 16))
    if which == "dec":  # > 4300 digits: tomllib cannot convert it (ValueError)
        n = draw(st.integers(4300, 6000))
        return Raw("1" + "0" * n, parse="never")
    depth = draw(st.integers(2, 3000))  # nesting; deep enough exhausts tomllib's recursion
    return Raw("[" * depth + "]" * depth, _nested(min(depth, 2)), parse="maybe")


HUGE = st.one_of(
    st.sampled_from(HUGE_INTS + [1e308, -1e308, FLOAT_MAX, -FLOAT_MAX, math.nan, math.inf,
                                 -math.inf, 5e-324]),
    huge_raw(),
)


def wrong_type_values(dom: Dom):
    return ANY_VALUE.filter(lambda v: not type_ok(dom, v))


def out_of_domain_values(dom: Dom):
    """Values of the right TOML type outside the field's domain (biome_empty excluded)."""
    if dom.kind == "int":
        parts = [st.integers(max_value=dom.lo - 1), st.sampled_from(HUGE_INTS)]
        if dom.hi is not None:
            parts.append(st.integers(min_value=dom.hi + 1))
    elif dom.kind == "float":
        parts = [st.floats(max_value=dom.lo), st.integers(max_value=math.floor(dom.lo)),
                 st.sampled_from([math.nan, math.inf, -math.inf, 10**400, -(10**400), -1e308])]
        if dom.hi is not None:
            parts += [st.floats(min_value=dom.hi), st.integers(min_value=math.ceil(dom.hi)),
                      st.just(1e308)]
    elif dom.kind == "str":
        parts = [st.just("")]
    elif dom.kind == "enum":
        parts = [TEXT, st.sampled_from([c.upper() for c in dom.choices] + [" " + dom.choices[0]])]
    else:
        parts = [st.tuples(st.lists(TEXT.filter(bool), max_size=3), st.integers(0, 3))
                 .map(lambda t: t[0][: t[1]] + [""] + t[0][t[1]:])]
    return st.one_of(parts).filter(lambda v: type_ok(dom, v) and not legal(dom, v))


def huge_values(dom: Dom):
    def bad(v) -> bool:
        if isinstance(v, Raw):
            return v.parse != "ok" or not legal(dom, v.value)
        return not legal(dom, v)
    return HUGE.filter(bad)


def expect_for(dom: Dom | None, v) -> set[str]:
    """Categories a bad value must produce (dom None: an unknown field)."""
    base = "unknown_field" if dom is None else None
    if isinstance(v, Raw):
        if v.parse == "never":
            return {"parse"}
        cat = base or category_of(dom, v.value)
        return {cat, "parse"} if v.parse == "maybe" else {cat}
    return {base or category_of(dom, v)}


UNKNOWN_KEYS = st.one_of(
    st.sampled_from(["colour", "fog_ratio", "Board_Width", "levelIndex", "version", "rows_",
                     "mine-density", "board_width ", " scope", "", "a\nb", "tab\tkey", "迷雾",
                     "key.with.dots", "line\u2028sep", "x" * 200, "BOARD_BIOME", "seed"]),
    TEXT,
)


def unknown_key(data, known, top_level=False) -> str:
    return data.draw(UNKNOWN_KEYS.filter(
        lambda k: k not in known and not (top_level and k == "rows")), label="unknown key")


# ------------------------------------------------------------------------- the root model

MISSING = object()


class Root:
    """The files of one root: a dict (structured TOML doc), bytes, MISSING or a special."""

    def __init__(self) -> None:
        self.files: dict[str, object] = {n: copy.deepcopy(BASE[n]) for n in FILES}
        self.expect: list[tuple[str, str, set[str]]] = []  # (file, mutation, categories)

    def text(self, name: str) -> bytes:
        f = self.files[name]
        assert isinstance(f, dict), name
        return dump(f).encode("utf-8")

    def write(self, path: Path) -> None:
        for name, f in self.files.items():
            target = path / name
            if f is MISSING:
                continue
            if f == "dir":
                target.mkdir()
            elif f == "dangling":
                os.symlink(path / "nowhere" / name, target)
            elif f == "loop":
                os.symlink(target, target)
            elif isinstance(f, dict):
                target.write_bytes(dump(f).encode("utf-8"))
            else:
                target.write_bytes(f)


def rows_of(root: Root, name: str) -> list[dict]:
    return root.files[name]["rows"]


def pick_rows(data, rows: list, at_most: int = 3) -> list[int]:
    return data.draw(st.lists(st.integers(0, len(rows) - 1), min_size=1,
                              max_size=min(at_most, len(rows)), unique=True), label="rows")


def add_variation_rows(data, root: Root) -> None:
    """Give row-local variation mutations more than one row: valid clones with fresh ids
    (one may be scope = global, a warning only -- it must not disturb the error listing)."""
    rows = rows_of(root, VAR)
    for i in range(data.draw(st.integers(0, 2), label="extra variation rows")):
        clone = copy.deepcopy(rows[0])
        clone["variant_id"] = f"zz_extra_{i}"
        if data.draw(st.booleans(), label="global"):
            clone.update(scope="global", info_mask="none", cell_constraint="any")
        rows.append(clone)


# ---------------------------------------------------------------- mutations (value level)

def _bad_value(data, name: str, table: dict, how: str) -> set[str]:
    """Set one known field of ``table`` (a row or a scalar file) to a bad value."""
    doms = DOMS[name]
    fields = sorted(doms)
    if how == "domain":  # counter_item_ids is "reserved, not checked" beyond its type
        fields = [f for f in fields if f != "counter_item_ids"]
    field = data.draw(st.sampled_from(fields), label="field")
    dom = doms[field]
    strategy = {"type": wrong_type_values, "domain": out_of_domain_values,
                "huge": huge_values}[how](dom)
    value = data.draw(strategy, label=f"{how} value")
    table[field] = value
    return expect_for(dom, value)


def _each_target(data, root: Root, name: str, fn) -> None:
    """Apply ``fn(table) -> categories`` to 1-3 distinct rows of a rows file, or 1-3 times
    to a scalar file (whose final keys are then judged one by one: a later edit of the
    same key replaces an earlier one)."""
    if name in ROW_FILES:
        if name == VAR:
            add_variation_rows(data, root)
        rows = rows_of(root, name)
        for i in pick_rows(data, rows):
            root.expect.append((name, fn.__name__, fn(rows[i])))
    else:
        table = root.files[name]
        for _ in range(data.draw(st.integers(1, 3), label="edits")):
            fn(table)
        root.expect += [(name, f"{fn.__name__} {key!r}", cats)
                        for key, cats in scalar_expect(name, table).items()]


def scalar_expect(name: str, table: dict) -> dict[str, set[str]]:
    """Per bad key of a flat file, the categories it must produce (independent oracle)."""
    out = {}
    for key, v in table.items():
        dom = DOMS[name].get(key)
        if dom is None:
            out[key] = {"unknown_field"}
        elif isinstance(v, Raw):
            if v.parse != "ok" or not legal(dom, v.value):
                out[key] = expect_for(dom, v)
        elif not legal(dom, v):
            out[key] = {category_of(dom, v)}
    assert out, table  # every edit was a breaking one
    return out


def m_wrong_type(data, root, name):
    def wrong_type(table):
        return _bad_value(data, name, table, "type")
    _each_target(data, root, name, wrong_type)


def m_out_of_range(data, root, name):
    def out_of_range(table):
        return _bad_value(data, name, table, "domain")
    _each_target(data, root, name, out_of_range)


def m_huge(data, root, name):
    def huge(table):
        return _bad_value(data, name, table, "huge")
    _each_target(data, root, name, huge)


def m_missing_field(data, root, name):
    required = sorted(f for f, d in DOMS[name].items() if d.required)

    def missing_field(row):
        for f in data.draw(st.lists(st.sampled_from(required), min_size=1, max_size=2,
                                    unique=True), label="drop"):
            row.pop(f, None)
        return {"missing_field"}
    _each_target(data, root, name, missing_field)


def m_unknown_field(data, root, name):
    def unknown_field(table):
        table[unknown_key(data, DOMS[name], top_level=name in SCALAR_FILES)] = \
            data.draw(ANY_VALUE, label="value")
        return {"unknown_field"}
    _each_target(data, root, name, unknown_field)
    if name in ROW_FILES and data.draw(st.booleans(), label="top-level key too"):
        doc = root.files[name]
        doc[unknown_key(data, {"rows"}, top_level=True)] = data.draw(ANY_VALUE, label="value")


def m_cross_field(data, root, name):
    """A1 F2 / mine floor / F2b / F2c / monotone names on board_gen rows; A4 mask rule."""
    if name == VAR:
        def mask_constraint(row):
            row.update(info_mask="hide_numbers", cell_constraint="any")
            return {"mask_constraint"}
        _each_target(data, root, name, mask_constraint)
        return

    def cross_field(row):
        style = data.draw(st.sampled_from(["fog_count0", "fog_ratio0", "fog_cap", "fog_8d",
                                           "mine_floor", "min_safe", "cost", "monotone"]),
                          label="style")
        w, h = row["board_width"], row["board_height"]
        if style == "fog_count0":  # count = 0 => ratio = 0
            row["fog_region_count"] = 0
            row["fog_target_ratio"] = data.draw(st.floats(0, 1, exclude_min=True, exclude_max=True))
            return {"fog_params"}
        if style == "fog_ratio0":  # count >= 1 => ratio > 0 (also -0.0 and the int 0)
            row["fog_region_count"] = data.draw(st.integers(1, 32))
            row["fog_target_ratio"] = data.draw(st.sampled_from([0.0, -0.0, 0]))
            return {"fog_params"}
        if style == "fog_cap":  # ratio <= 0.25
            row["fog_region_count"] = data.draw(st.integers(1, 32))
            row["fog_target_ratio"] = data.draw(
                st.floats(0.25, 1, exclude_min=True, exclude_max=True))
            return {"fog_params"}
        if style == "fog_8d":  # ratio <= 8 d
            d = data.draw(st.floats(0, 0.03, exclude_min=True), label="d")
            r = data.draw(st.floats(8 * d, 0.25).filter(lambda r: dec(r) > 8 * dec(d)), label="r")
            row.update(fog_region_count=data.draw(st.integers(1, 32)), mine_density=d,
                       fog_target_ratio=r)
            return {"fog_params"}
        if style == "mine_floor":  # round_half_up(d (W H - 9)) >= 1
            d = data.draw(st.floats(0, 0.5 / (w * h - 9), exclude_min=True)
                          .filter(lambda d: mines(w, h, d) == 0), label="d")
            row["mine_density"] = d
            return {"mine_floor"}
        if style == "min_safe":  # W H - N >= min_safe_count
            if w * h - mines(w, h, row["mine_density"]) + 1 > 999:
                row.update(board_width=8, board_height=8)
                w = h = 8
            safe = w * h - mines(w, h, row["mine_density"])
            row["min_safe_count"] = data.draw(st.integers(safe + 1, 999), label="min_safe")
            return {"min_safe_feasibility"}
        if style == "cost":  # max_gen_attempts W H <= 16384
            a = data.draw(st.integers(5, 32), label="attempts")
            w = data.draw(st.integers(max(8, 16384 // (64 * a) + 1), 64), label="W")
            h = data.draw(st.integers(max(8, 16384 // (a * w) + 1), 64), label="H")
            assert a * w * h > 16384
            row.update(max_gen_attempts=a, board_width=w, board_height=h)
            return {"cost"}
        bad = data.draw(st.one_of(
            st.sampled_from(["solver_rules", "board_biome", "level_index", "node_depth",
                             "monotone_in_depth", "width", "Board_Width"]),
            TEXT.filter(lambda s: s and s not in NUMERIC_KNOBS)), label="bad name")
        good = data.draw(st.lists(st.sampled_from(NUMERIC_KNOBS), max_size=3), label="good")
        row["monotone_in_depth"] = good + [bad]
        return {"monotone_field"}
    _each_target(data, root, name, cross_field)


def m_biome_empty(data, root, name):
    def biome_empty(row):
        row["board_biome"] = []
        return {"biome_empty"}
    _each_target(data, root, name, biome_empty)


def m_variation_rules(data, root, name):
    def variation_rule(row):
        if data.draw(st.booleans(), label="mask or unlock"):
            row.update(info_mask="hide_numbers", cell_constraint="any")
            return {"mask_constraint"}
        row["unlock_level"] = data.draw(st.one_of(
            st.sampled_from([0, 1000, -1, 10**30, -(2**63), 2**63, 10**4000]),
            st.integers(max_value=0), st.integers(min_value=1000)), label="unlock")
        return {"domain"}
    _each_target(data, root, name, variation_rule)


def m_scalar_values(data, root, name):
    """economy / settlement: bad types, domains, huge values and unknown keys together."""
    def scalar_value(table):
        how = data.draw(st.sampled_from(["type", "domain", "huge", "unknown"]), label="how")
        if how == "unknown":
            table[unknown_key(data, DOMS[name], top_level=True)] = data.draw(ANY_VALUE)
            return {"unknown_field"}
        return _bad_value(data, name, table, how)
    _each_target(data, root, name, scalar_value)


# ------------------------------------------------------------- mutations (row / key level)

def m_duplicate_rows(data, root, name):
    rows = rows_of(root, name)
    for _ in range(data.draw(st.integers(1, 2), label="copies")):
        src = data.draw(st.integers(0, len(rows) - 1), label="source")
        at = data.draw(st.integers(0, len(rows)), label="at")
        rows.insert(at, copy.deepcopy(rows[src]))
    root.expect.append((name, "duplicate_rows", {"duplicate_key"}))


def m_anchor(data, root, name):
    rows = rows_of(root, name)
    depths: dict[int, set[int]] = {}
    for r in rows:
        depths.setdefault(r["level_index"], set()).add(r["node_depth"])
    multi = sorted(lv for lv, ds in depths.items() if len(ds) > 1 and 0 in ds)
    style = data.draw(st.sampled_from(["delete", "shift", "new_level"] if multi
                                      else ["shift", "new_level"]), label="style")
    if style == "delete":
        level = data.draw(st.sampled_from(multi), label="level")
        rows[:] = [r for r in rows if (r["level_index"], r["node_depth"]) != (level, 0)]
    elif style == "shift":
        level = data.draw(st.sampled_from(sorted(lv for lv, ds in depths.items() if 0 in ds)))
        depth = data.draw(st.integers(1, 255).filter(lambda d: d not in depths[level]))
        next(r for r in rows if (r["level_index"], r["node_depth"]) == (level, 0))["node_depth"] = depth
    else:
        clone = copy.deepcopy(rows[data.draw(st.integers(0, len(rows) - 1))])
        clone["level_index"] = data.draw(st.integers(1, 999).filter(lambda lv: lv not in depths))
        clone["node_depth"] = data.draw(st.integers(1, 255))
        rows.insert(data.draw(st.integers(0, len(rows))), clone)
    root.expect.append((name, f"anchor_{style}", {"anchor"}))


def m_rows_shape(data, root, name):
    doc = root.files[name]
    if name in SCALAR_FILES:  # a rows key in a flat file is just an unknown key
        doc["rows"] = data.draw(st.one_of(ANY_VALUE, st.lists(
            st.dictionaries(TEXT, SCALARS, max_size=2), min_size=1, max_size=2)))
        root.expect.append((name, "rows_in_scalars", {"unknown_field"}))
        return
    style = data.draw(st.sampled_from(["scalar", "empty_array", "table", "mixed"]), label="shape")
    if style == "scalar":
        doc["rows"] = data.draw(ANY_VALUE.filter(lambda v: not isinstance(v, list)), label="rows")
    elif style == "empty_array":
        doc["rows"] = []
    elif style == "table":  # [rows] instead of [[rows]]
        row = rows_of(root, name)[data.draw(st.integers(0, len(doc["rows"]) - 1))]
        root.files[name] = ("[rows]\n" + "".join(
            f"{toml_key(k)} = {toml_value(v)}\n" for k, v in row.items())).encode("utf-8")
    else:  # an array whose entries are not all tables (written inline)
        rows = list(doc["rows"])
        for _ in range(data.draw(st.integers(1, 3), label="non-tables")):
            rows.insert(data.draw(st.integers(0, len(rows))),
                        data.draw(ANY_VALUE.filter(lambda v: not isinstance(v, dict))))
        doc["rows"] = rows
    root.expect.append((name, f"rows_{style}", {"parse"}))


def m_empty_file(data, root, name):
    root.files[name] = data.draw(st.one_of(
        st.sampled_from([b"", b"\n", b"\r\n\r\n", b" \t\n", b"# only a comment\n", b"\xef\xbb\xbf"]),
        PLAIN_TEXT.map(lambda s: ("# " + s.replace("\u2028", " ") + "\n").encode("utf-8"))
        .filter(lambda b: b"\n" not in b[:-1] and b"\r" not in b),
    ), label="empty")
    root.expect.append((name, "empty_file", {"parse"}))


def m_missing_file(data, root, name):
    root.files[name] = data.draw(st.sampled_from([MISSING, "dir", "dangling", "loop"]))
    root.expect.append((name, "missing_file", {"parse"}))


# ------------------------------------------------------------------ mutations (bytes level)

_KEY_LINE = re.compile(rb"(?m)^([A-Za-z0-9_-]+)[ \t]*=")
_STRING = re.compile(rb'= "((?:[^"\\\n]|\\.)*)"')
_HEADER = re.compile(rb"(?m)^\[\[rows\]\]$")
_ARRAY_LINE = re.compile(rb"(?m)^([A-Za-z0-9_-]+ = )(\[.*\])$")
_LINE_STARTS = re.compile(rb"(?m)^")
# Byte sequences that are invalid wherever a line starts (bad UTF-8 or no TOML statement).
SELF_INVALID = [b"\xff", b"\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xf8\x88\x80\x80\x80",
                b"\xc3\x28", b"\x00", b"\x01", b"\x7f", b"=", b"]", b"}", b"!", b"= = ="]
BAD_UTF8 = [b"\xff", b"\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80", b"\xbf\xbf",
            b"\xf8\x88\x80\x80\x80", b"\xc3\x28", b"\xe8\xbf", b"\xf4\x90\x80\x80"]


def _line_start(data, text: bytes) -> int:
    starts = [m.start() for m in _LINE_STARTS.finditer(text)]
    return data.draw(st.sampled_from(starts), label="line start")


def m_truncate(data, root, name):
    text = root.text(name)
    spans = [(m.start(1) + 1, m.end(0) - 1) for m in _KEY_LINE.finditer(text)]  # inside a key
    spans += [(m.start(1), m.end(1)) for m in _STRING.finditer(text)]          # inside a string
    spans += [(m.start() + 1, m.end() - 1) for m in _HEADER.finditer(text)]     # inside [[rows]]
    lo, hi = data.draw(st.sampled_from(spans), label="span")
    root.files[name] = text[: data.draw(st.integers(lo, hi), label="cut")]
    root.expect.append((name, "truncate", {"parse"}))


def m_garbage(data, root, name):
    text = root.text(name)
    for _ in range(data.draw(st.integers(1, 3), label="insertions")):
        at = _line_start(data, text)
        junk = data.draw(st.sampled_from(SELF_INVALID)) + data.draw(st.binary(max_size=40))
        if data.draw(st.booleans(), label="newline"):
            junk += b"\n"
        text = text[:at] + junk + text[at:]
    root.files[name] = text
    root.expect.append((name, "garbage", {"parse"}))


def m_invalid_utf8(data, root, name):
    text = root.text(name)
    style = data.draw(st.sampled_from(["line", "string", "multibyte", "utf16", "latin1"]))
    if style == "multibyte" and not re.search(rb"[\xc2-\xf4][\x80-\xbf]+", text):
        style = "line"
    if style == "string" and not _STRING.search(text):
        style = "line"
    if style == "line":
        at = _line_start(data, text)
        text = text[:at] + data.draw(st.sampled_from(BAD_UTF8)) + text[at:]
    elif style == "string":  # right after an opening quote
        at = data.draw(st.sampled_from([m.start(1) for m in _STRING.finditer(text)]))
        text = text[:at] + data.draw(st.sampled_from(BAD_UTF8)) + text[at:]
    elif style == "multibyte":  # break the last continuation byte of a multi-byte char
        ends = [m.end() - 1 for m in re.finditer(rb"[\xc2-\xf4][\x80-\xbf]+", text)]
        at = data.draw(st.sampled_from(ends))
        text = text[:at] + b"A" + text[at + 1:]
    elif style == "utf16":
        text = text.decode("utf-8").encode("utf-16")  # starts with the BOM ff fe
    else:  # a Latin-1 byte where UTF-8 is required (0xe9 then ASCII)
        at = _line_start(data, text)
        text = text[:at] + "é".encode("latin-1") + text[at:]
    root.files[name] = text
    root.expect.append((name, f"invalid_utf8_{style}", {"parse"}))


def m_brackets(data, root, name):
    text = root.text(name)
    options = ["line"]
    if _HEADER.search(text):
        options.append("header")
    if _ARRAY_LINE.search(text):
        options.append("array")
    style = data.draw(st.sampled_from(options), label="style")
    if style == "header":
        m = data.draw(st.sampled_from(list(_HEADER.finditer(text))))
        bad = data.draw(st.sampled_from([b"[[rows]", b"[rows]]", b"[[rows", b"[[ rows ]",
                                         b"[[rows]]]", b"[[[rows]]", b"[rows", b"rows]]"]))
        text = text[: m.start()] + bad + text[m.end():]
    elif style == "array":
        m = data.draw(st.sampled_from(list(_ARRAY_LINE.finditer(text))))
        value = m.group(2)
        value = data.draw(st.sampled_from([value[:-1], value + b"]", b"[" + value,
                                           value[1:] if len(value) > 2 else value + b"]"]))
        text = text[: m.start(2)] + value + text[m.end(2):]
    else:
        at = _line_start(data, text)
        bad = data.draw(st.sampled_from([b"[[rows]\n", b"[rows]]\n", b"x = [1, 2\n",
                                         b"x = {a = 1\n", b"]]\n", b"[\n", b"x = [[1]\n",
                                         b"{}\n", b"x = {a = [1}\n", b"x = ]\n"]))
        text = text[:at] + bad + text[at:]
    root.files[name] = text
    root.expect.append((name, f"brackets_{style}", {"parse"}))


def m_duplicate_toml_key(data, root, name):
    text = root.text(name)
    style = data.draw(st.sampled_from(["same", "other_value", "dotted", "table"]), label="style")
    if style == "table":  # the same [table] declared twice
        text += b"[t]\na = 1\n[t]\nb = 2\n"
    else:
        m = data.draw(st.sampled_from(list(_KEY_LINE.finditer(text))), label="line")
        end = text.index(b"\n", m.start())
        line, key = text[m.start():end], m.group(1)
        if style == "same":
            extra = line
        elif style == "other_value":
            extra = key + b" = " + toml_value(data.draw(ANY_VALUE)).encode("utf-8")
        else:
            extra = key + b".sub = 1"
        text = text[: end + 1] + extra + b"\n" + text[end + 1:]
    root.files[name] = text
    root.expect.append((name, f"duplicate_toml_key_{style}", {"parse"}))


def m_deep_nesting(data, root, name):
    depth = data.draw(st.integers(2, 3000), label="depth")
    raw = Raw("[" * depth + "]" * depth, _nested(2), parse="maybe")
    doc = root.files[name]
    table = rows_of(root, name)[0] if name in ROW_FILES else doc
    if data.draw(st.booleans(), label="known field"):
        field = data.draw(st.sampled_from(sorted(DOMS[name])))
        table[field] = raw
        root.expect.append((name, "deep_nesting", {"type", "parse"}))
    else:
        table[unknown_key(data, DOMS[name], top_level=name in SCALAR_FILES)] = raw
        root.expect.append((name, "deep_nesting", {"unknown_field", "parse"}))


# kind -> (mutation, files it applies to)
KINDS = {
    "wrong_type": (m_wrong_type, FILES),
    "out_of_range": (m_out_of_range, FILES),
    "huge": (m_huge, FILES),
    "missing_field": (m_missing_field, ROW_FILES),
    "unknown_field": (m_unknown_field, FILES),
    "cross_field": (m_cross_field, ROW_FILES),
    "biome_empty": (m_biome_empty, (BG,)),
    "variation_rules": (m_variation_rules, (VAR,)),
    "scalar_values": (m_scalar_values, SCALAR_FILES),
    "duplicate_rows": (m_duplicate_rows, ROW_FILES),
    "anchor": (m_anchor, (BG,)),
    "rows_shape": (m_rows_shape, FILES),
    "empty_file": (m_empty_file, ROW_FILES),
    "missing_file": (m_missing_file, ROW_FILES),
    "truncate": (m_truncate, FILES),
    "garbage": (m_garbage, FILES),
    "invalid_utf8": (m_invalid_utf8, FILES),
    "brackets": (m_brackets, FILES),
    "duplicate_toml_key": (m_duplicate_toml_key, FILES),
    "deep_nesting": (m_deep_nesting, FILES),
}


# ------------------------------------------------------------------------------ checking

LISTING_LINE = re.compile(  # "row R" and "field F = V" are left out when they are "-"
    r"\[(error|warning)\] ([a-z_]+): (board_gen|variation|economy|settlement)\.toml"
    r"(?: row (.+?))?(?: field (.+?) = (.*?))?: (.*)")
ROW_LABEL = re.compile(r"-|#\d+|\(\d+, \d+\)")


def run_validate(root: Path) -> tuple[int, str, str]:
    """``minegen validate --tables root`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    escaped = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = minegen.cli.main(["validate", "--tables", str(root)])
        except BaseException:  # noqa: BLE001 -- SystemExit included: nothing may escape
            escaped = traceback.format_exc()
    if escaped is not None:
        pytest.fail(f"an exception escaped minegen validate:\n{escaped}")
    return rc, out.getvalue(), err.getvalue()


def check_listing(root: Path, expect: list[tuple[str, str, set[str]]]) -> None:
    rc, out, err = run_validate(root)
    assert rc == 2, (rc, out, err)
    assert out == ""
    assert "Traceback" not in err
    lines = err.splitlines()
    head = re.fullmatch(r"table validation failed: (\d+) error\(s\)", lines[0] if lines else "")
    assert head, err[:500]
    n_errors = 0
    for line in lines[1:]:
        m = LISTING_LINE.fullmatch(line)
        assert m, f"uncategorised listing line: {line!r}"
        severity, category, file, row, field = m.groups()[:5]
        row, field = row or "-", field or "-"
        if severity == "error":
            n_errors += 1
            assert category in CATEGORIES, line
        else:
            assert category in WARNING_CATEGORIES, line
        if file != "variation":
            assert ROW_LABEL.fullmatch(row), line
    assert n_errors == int(head.group(1)) >= 1

    # The same findings through the non-raising channel, field by field.
    diags = collect_diagnostics(root)
    assert err.rstrip("\n") == str(TableError(diags))
    errors = [d for d in diags if d.severity == "error"]
    for d in errors:
        assert d.category in CATEGORIES and d.file in FILES, d
        for cell in (d.row, d.field, d.value, d.rule):
            assert isinstance(cell, str) and cell and len(cell.splitlines()) == 1, d
        assert max(len(d.row), len(d.field), len(d.value)) <= 80, d  # cells, not dumps
    found = {d.category for d in errors}
    for file, mutation, cats in expect:
        got = {d.category for d in errors if d.file == file}
        if got == {"parse"} and any("parse" in c for f, _, c in expect if f == file):
            continue  # a mutation that may stop the file parsing hides the file's other ones
        assert got & cats, (f"{mutation} on {file}: expected one of {sorted(cats)}, "
                            f"got {sorted(got)}", [d.format() for d in diags])
    assert found


def build_and_check(root: Root) -> None:
    assert root.expect, "no breaking mutation was applied"
    with tempfile.TemporaryDirectory(prefix="minegen-fuzz-") as tmp:
        path = Path(tmp) / "root"
        path.mkdir()
        root.write(path)
        check_listing(path, root.expect)


# ---------------------------------------------------------------------------------- tests

def test_base_is_valid_and_serializer_round_trips(tmp_path):
    """The starting point: the default tables are clean, and dump() writes what it read."""
    for name in FILES:
        assert tomllib.loads(dump(BASE[name])) == BASE[name], name
    root = Root()
    root.write(tmp_path)
    assert [d for d in collect_diagnostics(tmp_path) if d.severity == "error"] == []
    rc, out, err = run_validate(tmp_path)
    assert rc == 0 and out.startswith("tables OK") and err == ""


@pytest.mark.parametrize("kind", sorted(KINDS))
@fuzz(PER_KIND_EXAMPLES)
@given(data=st.data())
def test_malformed_root_of_each_kind(kind, data):
    mutate, applicable = KINDS[kind]
    root = Root()
    files = data.draw(st.lists(st.sampled_from(applicable), min_size=1,
                               max_size=min(2, len(applicable)), unique=True), label="files")
    for name in files:
        mutate(data, root, name)
    build_and_check(root)


@pytest.mark.slow
@fuzz(MIXED_EXAMPLES)
@given(data=st.data())
def test_malformed_root_mixed_kinds(data):
    """Several files broken at once, each in its own way (files never interact)."""
    root = Root()
    files = data.draw(st.lists(st.sampled_from(FILES), min_size=1, max_size=4, unique=True),
                      label="files")
    for name in files:
        kind = data.draw(st.sampled_from(sorted(k for k, (_, fs) in KINDS.items() if name in fs)),
                         label=f"kind for {name}")
        KINDS[kind][0](data, root, name)
    build_and_check(root)


# --------------------------------------------------------- regressions found by the fuzzer

@pytest.mark.parametrize("case", ["hex_beyond_str_limit", "decimal_beyond_str_limit",
                                  "deep_nesting", "newline_in_key", "newline_in_variant_id",
                                  "empty_key", "long_variant_id"])
def test_regressions(tmp_path, case):
    """Roots the fuzzer broke before the loader was hardened: a ValueError (int -> str
    digit limit) or RecursionError escaping, or a key / variant_id that split, blanked or
    flooded a listing line."""
    def edit(root: Root):
        bg_row, var_row = rows_of(root, BG)[0], rows_of(root, VAR)[0]
        if case == "hex_beyond_str_limit":  # int -> str conversion limit in the listing
            bg_row["board_width"] = Raw("0x" + "f" * 4000, int("f" * 4000, 16))
            root.expect.append((BG, case, {"domain"}))
        elif case == "decimal_beyond_str_limit":  # tomllib raises ValueError, not TOMLDecodeError
            root.files[ECO]["dig_ap_cost"] = Raw("1" + "0" * 5000, parse="never")
            root.expect.append((ECO, case, {"parse"}))
        elif case == "deep_nesting":  # tomllib raises RecursionError
            var_row["biome_tag"] = Raw("[" * 5000 + "]" * 5000, parse="never")
            root.expect.append((VAR, case, {"parse"}))
        elif case == "newline_in_key":  # a key must not split a listing line
            bg_row["a\nb"] = 1
            root.files[SET]["x\u2028y"] = 1
            root.expect += [(BG, case, {"unknown_field"}), (SET, case, {"unknown_field"})]
        elif case == "newline_in_variant_id":
            var_row["variant_id"] = "fog\nrow"
            var_row["unlock_level"] = 0
            root.expect.append((VAR, case, {"domain"}))
        elif case == "empty_key":
            rows_of(root, BG)[1][""] = 1
            root.expect.append((BG, case, {"unknown_field"}))
        else:
            var_row["variant_id"] = "v" * 5000
            var_row["cell_constraint"] = "any"
            root.expect.append((VAR, case, {"mask_constraint"}))

    root = Root()
    edit(root)
    root.write(tmp_path)
    check_listing(tmp_path, root.expect)


# ------------------------------------------------------------------ the real command line

SUBPROCESS_ROOTS = {
    # huge hex int (listing must not call str() past the limit) + invalid UTF-8
    "huge_and_utf8": lambda r: (
        rows_of(r, BG)[0].__setitem__("min_safe_count", Raw("0x" + "f" * 4500, int("f" * 4500, 16))),
        r.files.__setitem__(VAR, r.text(VAR).replace(b"scope", b"\xffscope", 1)),
    ),
    # tomllib RecursionError + a >4300-digit decimal + an unknown key with a newline
    "deep_and_long": lambda r: (
        rows_of(r, VAR)[0].__setitem__("biome_tag", Raw("[" * 20000 + "]" * 20000)),
        r.files[ECO].__setitem__("dig_ap_cost", Raw("9" * 6000)),
        r.files[SET].__setitem__("bad\nkey", 1),
    ),
    # board_gen is a directory, rows is not an array, settlement has garbage
    "shapes": lambda r: (
        r.files.__setitem__(BG, "dir"),
        r.files[VAR].__setitem__("rows", 3),
        r.files.__setitem__(SET, b"\x00\xff garbage [[rows]\n"),
    ),
}


@pytest.mark.parametrize("case", sorted(SUBPROCESS_ROOTS))
def test_cli_subprocess_exit_2_without_traceback(tmp_path, case):
    root = Root()
    SUBPROCESS_ROOTS[case](root)
    root.write(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "minegen.cli", "validate", "--tables",
                           str(tmp_path)], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("table validation failed: ")
    assert proc.stdout == ""
    for line in proc.stderr.splitlines()[1:]:
        m = LISTING_LINE.fullmatch(line)
        assert m and (m.group(2) in CATEGORIES or m.group(2) in WARNING_CATEGORIES), line

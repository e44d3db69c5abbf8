"""How tilegen rows are tuned: the 05 §16 ladder (decision 118), the candidate values of each
rung, and writing a proposed table root (the change plus ``revision += 1``).

Ladder, in this order: 1. density one class down; 2. layers - 1; 3. element_count - 1
(>= 3); 4. layer_distribution: 0.05 of share moved from the bottom to the top layer. A row
that is too easy (tool-free above its band, level 6) goes the other way on the same rungs.
A failing line does not say which way a row misses when it reads the tool-free gate (G-TF,
and P on the production board): there each rung offers both directions, the smallest change
first, the easier direction first on a tie; for every other hard line only the easier one.
Within a rung values go from the smallest change outwards; ``minegen tune`` keeps the first
rung with a passing value, and its smallest passing change. Never touched (05 §16): slot 7,
bypass 3, the overlap thresholds, 50 retries, the tool budget. Step 5 (dispersion
``near_depth``) is a rules.toml setting shared by every row, so it is no per-row candidate.
"""

from __future__ import annotations

import re
import shutil
from decimal import Decimal
from pathlib import Path

from boardcore.errors import Diagnostic
from pipeline.store import atomic

from ..codes import DENSITIES


DENSITY_CLASS = "density_class"  # sweep/tune knob: the index of the density in DENSITIES
BOTH_WAYS = {"G-TF", "P"}  # lines that fail for a row too easy as well as too hard
STEPS = 3  # values per direction and rung at the most
SHARE_STEP = Decimal("0.05")
MIN_ELEMENTS = 3
PRESETS = "presets.toml"


def Diag(category: str, field: str, value, rule: str) -> Diagnostic:  # noqa: N802
    return Diagnostic(category, PRESETS, "", field, str(value), rule)


def preset_changes(catalog, key: tuple, field: str, value) -> dict:
    """The preset fields one candidate writes: ``field`` (density_class as its density),
    and with element_count on a row whose pieces_per_element is a list, that list cut or
    lengthened by 3s to match (as tilegen's own ladder does)."""
    if field == DENSITY_CLASS:
        return {"density": DENSITIES[value]}
    out = {field: value}
    ppe = catalog.preset(tuple(key)).pieces_per_element
    if field == "element_count" and isinstance(ppe, tuple) and isinstance(value, int) \
            and value >= 1:
        out["pieces_per_element"] = list(ppe[:value]) + [3] * max(0, value - len(ppe))
    return out


def vary(catalog, key: tuple, field: str, value):
    """``table_loader.vary`` of one candidate (several preset fields when it takes them):
    the plan keeps the key, so its seeds are the audit's."""
    from dataclasses import replace

    from ..table_loader import vary as vary_one

    if field == DENSITY_CLASS and not (isinstance(value, int) and 0 <= value < len(DENSITIES)):
        return None, [Diag("domain", field, value, f"a class 0..{len(DENSITIES) - 1}")]
    changes = preset_changes(catalog, key, field, value)
    *rest, (name, new) = changes.items()
    if rest:  # the companion fields go into the row the loader varies
        row = replace(catalog.preset(tuple(key)), **{f: (tuple(v) if isinstance(v, list)
                                                         else v) for f, v in rest})
        catalog = replace(catalog, presets=tuple(row if r.key == row.key else r
                                                 for r in catalog.presets))
    return vary_one(catalog, tuple(key), name, new)


def current(plan, field: str):
    """The row's own value of a sweep/tune field (None: not one value)."""
    if field == DENSITY_CLASS:
        return DENSITIES.index(plan.density)
    if field == "pieces_per_element":
        ppe = set(plan.pieces_per_element)
        return ppe.pop() if len(ppe) == 1 else None
    if field == "layer_distribution":
        return list(plan.layer_distribution)
    return getattr(plan, field, None)


def _ints(now: int, lo: int, hi: int, both: bool) -> list[int]:
    out = []
    for k in range(1, STEPS + 1):
        out += [v for v in ((now - k, now + k) if both else (now - k,)) if lo <= v <= hi]
    return out


def _shares(dist: tuple[str, ...], both: bool) -> list[list[str]]:
    """Move k * 0.05 of share from the bottom layer to the top (harder: the other way)."""
    if len(dist) < 2:
        return []
    out = []
    for k in range(1, STEPS + 1):
        for sign in ((1, -1) if both else (1,)):
            d = [Decimal(x) for x in dist]
            d[0] -= sign * k * SHARE_STEP
            d[-1] += sign * k * SHARE_STEP
            if min(d) > 0:
                out.append([f"{x:.2f}" for x in d])
    return out


def candidates(plan, lines: list[str]) -> list[tuple[str, list]]:
    """[(field, values from the smallest change outwards)] along the ladder for a row
    failing ``lines`` (values may still be invalid as a whole row: the caller validates
    each with ``vary``)."""
    if not lines:
        return []
    both = bool(BOTH_WAYS & set(lines))
    out = [
        (DENSITY_CLASS, _ints(DENSITIES.index(plan.density), 0, len(DENSITIES) - 1, both)),
        ("layers", _ints(plan.layers, 1, 4, both)),
        ("element_count", _ints(plan.element_count, MIN_ELEMENTS, len(plan.city_elements),
                                both)),
        ("layer_distribution", _shares(tuple(plan.layer_distribution)[:plan.layers], both)),
    ]
    return [(f, v) for f, v in out if v]


# ----------------------------------------------------------------------- the proposal

def patch_tables(catalog, dst: Path, changes: dict[tuple, dict]) -> None:
    """Copy the table root of ``catalog`` to ``dst`` with ``changes`` ({(city, level,
    revision): {field: value}}) written into presets.toml in place (comments and layout
    stay): the changed fields (``preset_changes``), and the row's revision set to one above
    the highest revision of its (city, level) (a new revision: a new production seed and new
    audit seeds, 05 §12.3)."""
    dst = Path(dst)
    shutil.copytree(catalog.root, dst)
    changes = {key: {f: v for field, value in fields.items()
                     for f, v in preset_changes(catalog, key, field, value).items()}
               for key, fields in changes.items()}
    path = dst / PRESETS
    text = path.read_text(encoding="utf-8")
    blocks = re.split(r"(?m)^(?=\[\[rows\]\])", text)
    keys = [_key(b) for b in blocks]
    for i, block in enumerate(blocks):
        key = keys[i]
        if key is None or key not in changes:
            continue
        for field, value in changes[key].items():
            block = _set(block, field, value)
        top = max(k[2] for k in keys if k is not None and k[:2] == key[:2])
        blocks[i] = _set(block, "revision", top + 1)
    missing = set(changes) - set(keys)
    if missing:
        raise ValueError(f"{path}: no [[rows]] block for {sorted(missing)}")
    atomic.write_text(path, "".join(blocks))


def _set(block: str, name: str, value) -> str:
    """``name = value`` in a [[rows]] block: the line replaced (its comment kept), or added
    after the block's last field line."""
    line = re.compile(rf"(?m)^(\s*{name}\s*=\s*)[^#\n]*?(\s*(#.*)?)$")
    new, n = line.subn(lambda m: f"{m.group(1)}{_toml(value)}{m.group(2)}", block, count=1)
    if n == 1:
        return new
    fields = list(re.finditer(r"(?m)^\s*[A-Za-z_]+\s*=.*$", block))
    at = fields[-1].end() if fields else len(block)
    return f"{block[:at]}\n{name} = {_toml(value)}{block[at:]}"


def _key(block: str) -> tuple[str, int, int] | None:
    city = re.search(r'(?m)^\s*city_id\s*=\s*"([^"]+)"', block)
    level = re.search(r"(?m)^\s*level_id\s*=\s*(\d+)", block)
    rev = re.search(r"(?m)^\s*revision\s*=\s*(\d+)", block)
    if not (city and level):
        return None
    return city.group(1), int(level.group(1)), int(rev.group(1)) if rev else 1


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value) if isinstance(value, float) else str(value)

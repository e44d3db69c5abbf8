"""What changed between two table roots, in the tables' own words (decision 221): file,
row, key, the value before and after as TOML writes it.

``diff(a, b, rows)`` reads every ``*.toml`` under both roots. In a file, an array of tables
(``[[rows]]``, ``[[levels]]``) is matched row by row on the identity fields ``rows`` gives
for that file, tried in order (e.g. ``("city_id", "level_id", "revision")`` and then
``("city_id", "level_id")``: a row whose revision moved is still the same row); an
unmatched row is added or removed. Tables and plain keys are compared key by key, nested
tables by their dotted names. Nothing here knows a game: the generator names the
identities (``Tune.table_rows``).
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import files
from .toml_patch import toml_value

ABSENT = "(none)"


@dataclass(frozen=True)
class Edit:
    file: str  # relative path, e.g. "presets.toml" or "cities/beijing.toml"
    row: str  # the row as its identity reads ("city_id = "beijing", level_id = 5"), or ""
    key: str  # the key (dotted for nested tables), or "(row)" for a row added or removed
    before: str  # TOML text, or "(none)"
    after: str
    ids: dict = field(default_factory=dict, compare=False)  # the row's identity values (after)


def _text(v) -> str:
    """A value as TOML writes it; ``ABSENT`` (a key one side lacks) as itself."""
    if v is ABSENT:
        return ABSENT
    try:
        return toml_value(v)
    except TypeError:  # an inline table: its keys in order
        return "{" + ", ".join(f"{k} = {_text(x)}" for k, x in v.items()) + "}"


def _load(root: Path) -> dict[str, dict]:
    out = {}
    if root.is_dir():
        for p in sorted(root.rglob("*.toml")):
            try:
                out[p.relative_to(root).as_posix()] = tomllib.loads(
                    files.read_text(p, follow=True))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, files.Refused):
                out[p.relative_to(root).as_posix()] = {}
    return out


def _row_name(row: dict, ids: tuple[str, ...]) -> str:
    return ", ".join(f"{k} = {_text(row[k])}" for k in ids if k in row)


def _keys(a: dict, b: dict, prefix: str = "") -> list[tuple[str, object, object]]:
    """(dotted key, before, after) of every key whose value differs (ABSENT: missing)."""
    out = []
    for k in list(a) + [k for k in b if k not in a]:
        x, y = a.get(k, ABSENT), b.get(k, ABSENT)
        if isinstance(x, dict) and isinstance(y, dict) and not _is_rows(x) and not _is_rows(y):
            out += _keys(x, y, f"{prefix}{k}.")
        elif x != y or type(x) is not type(y):
            out.append((f"{prefix}{k}", x, y))
    return out


def _is_rows(v) -> bool:
    return isinstance(v, list) and bool(v) and all(isinstance(x, dict) for x in v)


def _match(a: list[dict], b: list[dict], identities: tuple[tuple[str, ...], ...]
           ) -> tuple[list[tuple[dict, dict, tuple[str, ...]]], list[dict], list[dict]]:
    """Pairs (row before, row after, the identity that matched them), unmatched before,
    unmatched after. Each identity is tried on what is still unmatched; a value it gives
    twice on one side matches nothing."""
    left, right, pairs = list(a), list(b), []
    for ids in identities:
        def ident(r: dict) -> tuple | None:
            return tuple(_text(r[k]) for k in ids) if all(k in r for k in ids) else None

        la, rb = {}, {}
        for r in left:
            la.setdefault(ident(r), []).append(r)
        for r in right:
            rb.setdefault(ident(r), []).append(r)
        for key, rows in la.items():
            if key is not None and len(rows) == 1 and len(rb.get(key, [])) == 1:
                pairs.append((rows[0], rb[key][0], ids))
        matched_a = {id(x) for x, _, _ in pairs}
        matched_b = {id(y) for _, y, _ in pairs}
        left = [r for r in left if id(r) not in matched_a]
        right = [r for r in right if id(r) not in matched_b]
    if not identities:  # by position
        n = min(len(left), len(right))
        pairs = [(left[i], right[i], ()) for i in range(n)]
        left, right = left[n:], right[n:]
    return pairs, left, right


def diff(a: str | os.PathLike, b: str | os.PathLike,
         rows: dict[str, tuple[tuple[str, ...], ...]] | None = None) -> list[Edit]:
    """Every edit from the table root ``a`` to ``b``, file by file, rows in the order of
    ``b`` (removed rows last)."""
    rows = rows or {}
    da, db = _load(Path(a)), _load(Path(b))
    out: list[Edit] = []
    for name in sorted(set(da) | set(db)):
        if name not in da or name not in db:
            out.append(Edit(name, "", "(file)", "(none)" if name not in da else "present",
                            "(none)" if name not in db else "present"))
            continue
        fa, fb = da[name], db[name]
        for key, x, y in _keys({k: v for k, v in fa.items() if not _is_rows(v)},
                               {k: v for k, v in fb.items() if not _is_rows(v)}):
            out.append(Edit(name, "", key, _text(x), _text(y)))
        for arr in [k for k in fa if _is_rows(fa[k])] + [k for k in fb if _is_rows(fb[k])
                                                           and not _is_rows(fa.get(k))]:
            ids_list = next((v for pat, v in rows.items() if fnmatch.fnmatch(name, pat)), ())
            pairs, gone, new = _match(fa.get(arr) or [], fb.get(arr) or [], ids_list)
            first = ids_list[0] if ids_list else ()
            for x, y, _ in pairs:
                for key, vx, vy in _keys(x, y):
                    out.append(Edit(name, _row_name(y, first), key, _text(vx), _text(vy),
                                    ids={k: y[k] for k in first if k in y}))
            for y in new:
                out.append(Edit(name, _row_name(y, first), "(row)", ABSENT, "added",
                                ids={k: y[k] for k in first if k in y}))
            for x in gone:
                out.append(Edit(name, _row_name(x, first), "(row)", "present", "removed",
                                ids={k: x[k] for k in first if k in x}))
    return out

"""A TOML row patcher that keeps comments and layout: the proposals ``tune`` writes are the
designer's own file with only the changed field lines differing.

A table file holds rows as ``[[rows]]`` blocks. ``patch_rows`` finds each block's key by
reading the block alone as TOML (so a key field is read exactly as the loader reads it),
then rewrites ``name = value`` lines of the changed fields in place: the value replaced,
the line's indentation, spacing and trailing comment kept. Every other byte stays.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence

_BLOCKS = re.compile(r"(?m)^(?=\[\[rows\]\])")
_FIELD_LINE = re.compile(r"(?m)^\s*[A-Za-z_][A-Za-z0-9_]*\s*=.*$")


def toml_value(value: object) -> str:
    """A value as TOML writes it (floats by ``repr``: the shortest text that reads back)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, (int, float)):
        return repr(value)
    raise TypeError(f"no TOML form for {value!r}")


def set_field(block: str, name: str, value: object, add: bool = False) -> str:
    """``name = value`` in one ``[[rows]]`` block: its line rewritten (comment kept), or with
    ``add`` appended after the block's last field line; ValueError when absent otherwise."""
    line = re.compile(rf"(?m)^(\s*{re.escape(name)}\s*=\s*)[^#\n]*?(\s*(#.*)?)$")
    new, n = line.subn(lambda m: f"{m.group(1)}{toml_value(value)}{m.group(2)}", block,
                       count=1)
    if n == 1:
        return new
    if not add:
        raise ValueError(f"no `{name} = ...` line to change in the block:\n{block.strip()}")
    fields = list(_FIELD_LINE.finditer(block))
    at = fields[-1].end() if fields else len(block)
    return f"{block[:at]}\n{name} = {toml_value(value)}{block[at:]}"


def block_key(block: str, key_fields: Sequence[str], defaults: Mapping) -> tuple | None:
    """The key of a ``[[rows]]`` block (None: not a row block)."""
    if not block.startswith("[[rows]]"):
        return None
    row = tomllib.loads(block)["rows"][0]
    return tuple(row.get(f, defaults.get(f)) for f in key_fields)


def patch_rows(text: str, key_fields: Sequence[str], changes: Mapping[tuple, Mapping], *,
               defaults: Mapping = {}, add: bool = False) -> str:
    """``text`` with ``changes`` ({row key: {field: value}}) written into its ``[[rows]]``
    blocks. ``key_fields`` make a block's key (``defaults``: values of key fields a block
    may omit); ``add``: a field a block lacks is added (else ValueError). ValueError when a
    changed key has no block, or has two."""
    blocks = _BLOCKS.split(text)
    keys = [block_key(b, key_fields, defaults) for b in blocks]
    for key in changes:
        if keys.count(tuple(key)) != 1:
            raise ValueError(f"{keys.count(tuple(key))} [[rows]] blocks have the key {key}")
    for i, key in enumerate(keys):
        for name, value in (changes.get(key) or {}).items() if key is not None else ():
            blocks[i] = set_field(blocks[i], name, value, add)
    return "".join(blocks)

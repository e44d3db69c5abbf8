"""Table edits that keep comments and layout, through tomlkit: the proposals ``tune`` writes
are the designer's own file with only the changed keys' lines differing (decision 277).

tomlkit reads the file (every form TOML allows: ``[[rows]]``, ``[[ rows ]]``, indented,
quoted, with a comment after), finds the rows and writes each changed value in the old
value's literal style (a literal string stays literal, a float stays a float, an integer
keeps its base, a multi-line array stays multi-line), the line's indentation and trailing
comment kept; a key the row lacks is added after its last key. tomlkit re-spells what it
does not track (every ``[[rows]]`` header as the first one), so the result is spliced: the
lines tomlkit changed go into the file's own text, every other byte stays; only the changed
rows' own text goes through tomlkit when the file cuts cleanly into rows. The result is
read back with ``tomllib`` (the loader's reader) and must be the file's rows with exactly
the changes (``DefectError`` if not).
"""

from __future__ import annotations

import difflib
import functools
import re
import tomllib
from collections.abc import Mapping, Sequence

import tomlkit
from tomlkit import items

from .errors import DefectError


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


_BASES = {"0x": "x", "0o": "o", "0b": "b"}


def styled(old: object, value: object) -> items.Item:
    """``value`` as a tomlkit item in the literal style of ``old`` (the value it replaces;
    None: a new key, TOML's plain style)."""
    if isinstance(value, bool) or value is None:
        return tomlkit.item(value)
    if isinstance(value, str):
        literal = (isinstance(old, items.String) and old.type == items.StringType.SLL
                   and value.isprintable() and "'" not in value)
        return tomlkit.string(value, literal=literal)
    if isinstance(value, int) and isinstance(old, items.Float):
        return tomlkit.item(float(value))  # a float key stays a float (2 -> 2.0)
    if isinstance(value, int) and isinstance(old, items.Integer) and value >= 0:
        raw = old.as_string()
        base = _BASES.get(raw[:2].lower())
        if base:
            digits = format(value, base)
            return items.Integer(value, items.Trivia(),
                                 raw[:2] + (digits.upper() if raw[2:].isupper() else digits))
    if isinstance(value, (list, tuple)):
        first = old[0] if isinstance(old, items.Array) and len(old) else None
        array = tomlkit.array()
        for v in value:
            array.append(styled(first, v))
        if isinstance(old, items.Array) and "\n" in old.as_string():
            array.multiline(True)
        return array
    return tomlkit.item(value)


def _splice(text: str, before: str, after: str) -> str:
    """``text`` with the lines that differ between tomlkit's renderings ``before`` (the
    file read) and ``after`` (the file edited): the rest is the file's own bytes. A line
    tomlkit re-spelt and did not change keeps the file's spelling; new lines take the
    file's line ending."""
    src, was, now = (s.splitlines(keepends=True) for s in (text, before, after))
    if len(src) != len(was):  # tomlkit re-spells within a line only; else its own text
        return after
    crlf = bool(src) and src[0].endswith("\r\n")
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, was, now,
                                                       autojunk=False).get_opcodes():
        if tag == "equal":
            out += src[i1:i2]
            continue
        own = dict(zip(was[i1:i2], src[i1:i2]))
        for line in now[j1:j2]:
            line = own.get(line, line)
            if crlf and line.endswith("\n") and not line.endswith("\r\n"):
                line = line[:-1] + "\r\n"
            out.append(line)
    return "".join(out)


def _plain(value: object) -> object:
    return [_plain(v) for v in value] if isinstance(value, (list, tuple)) else value


# a [[rows]] header line in any form TOML allows (spaced, quoted, indented, commented)
_HEADER = re.compile(r"""[ \t]*\[\[[ \t]*(?:rows|"rows"|'rows')[ \t]*\]\][ \t]*(?:#.*)?""")


@functools.lru_cache(maxsize=8)
def _read(text: str) -> tuple[dict, tuple[dict, ...], tuple[str, ...] | None]:
    """The file as the loader reads it, its rows, and the file cut before each ``[[rows]]``
    header line: (the text before the first row, each row's own text), or None when the
    cuts do not read back as the rows (each part alone through tomllib: the first holds no
    row, every other exactly its row), e.g. a header-like line inside a multi-line string
    or a table after the rows. A tune patches the same file once per judged set: read once."""
    doc = tomllib.loads(text)
    rows = tuple(doc["rows"]) if isinstance(doc.get("rows"), list) else ()
    lines = text.splitlines(keepends=True)
    cuts = [i for i, line in enumerate(lines) if _HEADER.fullmatch(line.rstrip("\r\n"))]
    parts = tuple("".join(lines[a:b]) for a, b in zip([0, *cuts], [*cuts, len(lines)]))
    try:
        fits = (len(parts) == len(rows) + 1 and "rows" not in tomllib.loads(parts[0])
                and all(tomllib.loads(p) == {"rows": [r]} for p, r in zip(parts[1:], rows)))
    except tomllib.TOMLDecodeError:
        fits = False
    return doc, rows, parts if fits and rows else None


def patch_rows(text: str, key_fields: Sequence[str], changes: Mapping[tuple, Mapping], *,
               defaults: Mapping = {}) -> str:
    """``text`` with ``changes`` ({row key: {field: value}}) written into its rows (the
    tables of its ``rows`` array). ``key_fields`` make a row's key (``defaults``: values of
    key fields a row may omit); a changed field the row lacks is added. ValueError when a
    changed key has no row, or has two. Only the changed rows' own text goes through
    tomlkit (the whole file when it cannot be cut into rows: ``_read``)."""
    doc, rows, parts = _read(text)
    keys = [tuple(r.get(f, defaults.get(f)) for f in key_fields) for r in rows]
    for key in changes:
        if keys.count(tuple(key)) != 1:
            raise ValueError(f"{keys.count(tuple(key))} [[rows]] tables have the key {key}")
    if parts is None:
        out = _patched(text, keys, changes)
    else:
        out = parts[0] + "".join(_patched(part, [key], changes) if changes.get(key) else part
                                 for part, key in zip(parts[1:], keys))
    want = {**doc, "rows": [{**r, **{n: _plain(v) for n, v in (changes.get(key) or {}).items()}}
                            for r, key in zip(rows, keys)]} if rows else doc
    if tomllib.loads(out) != want:
        raise DefectError(f"the patched table does not read back as the rows with the "
                          f"changes {dict(changes)}")
    return out


def _patched(text: str, keys: list[tuple], changes: Mapping[tuple, Mapping]) -> str:
    """``text`` (a file, or one row's part of it) with the changes of its rows (``keys``,
    in order) written by tomlkit and spliced into the text's own bytes."""
    doc = tomlkit.parse(text)
    before = tomlkit.dumps(doc)
    for row, key in zip(doc["rows"] if keys else (), keys):
        for name, value in (changes.get(key) or {}).items():
            if name in row:
                row[name] = styled(row[name], value)
                continue
            pads = [v.trivia.indent for k, v in row.value.body
                    if k is not None and not isinstance(v, (items.Table, items.AoT))]
            row[name] = new = styled(None, value)  # after the row's last key, as indented
            if pads:
                new.trivia.indent = pads[-1].rsplit("\n", 1)[-1]
    return _splice(text, before, tomlkit.dumps(doc))

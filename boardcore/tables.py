"""The table toolkit every generator's loader uses: read TOML without a traceback, check one
field against its declared domain, and collect every violation of a load at once.

Two layers, kept apart so one bad value never cascades: ``check_value(spec, value)``
judges one field on its own (TOML type, then domain); a generator's cross-field rules run
only on the values that passed. ``check_fields`` does the per-field pass of one row or
table, unknown keys included. Findings become ``Diagnostic`` records in a ``Collector``;
values shown in a finding go through ``show`` / ``key_name`` so a listing is always one
short line per finding, whatever the file holds.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import os
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from . import files
from .errors import Diagnostic

MAX_SHOWN = 80  # a Diagnostic value longer than this is cut (a table cell, not a dump)
_FLOAT_MAX = 1.7976931348623157e308


# ------------------------------------------------------------------------ reading

BOM = b"\xef\xbb\xbf"
BOM_RULE = ("file starts with a UTF-8 byte-order mark (BOM), which TOML does not allow: save "
            "it as UTF-8 without BOM")


def parse_toml(path: Path) -> tuple[dict | None, str]:
    """(document, "") for a readable TOML file, else (None, the rule it breaks): every way a
    file can be unusable is a finding, never a traceback."""
    try:
        raw = files.read_bytes(path, follow=True)  # a regular file, bounded (decision 277)
        if raw.startswith(BOM):
            return None, BOM_RULE
        return tomllib.loads(raw.decode("utf-8")), ""
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"file is unreadable: {exc}"
    except files.Refused as exc:
        return None, f"file is not usable: {exc}"
    except tomllib.TOMLDecodeError as exc:
        return None, f"file must be valid TOML: {exc}"
    except ValueError as exc:  # tomllib lets int()'s digit limit escape (> 4300 digits)
        return None, f"file must be valid TOML: unreadable value ({str(exc).split(';')[0]})"
    except RecursionError:  # tomllib recurses once per nesting level of arrays / tables
        return None, "file must be valid TOML: arrays or inline tables nested too deeply"


def content_hash(root: str | os.PathLike, recursive: bool = False) -> str:
    """sha256 hex over the root's ``*.toml`` files (``recursive``: every one under it),
    sorted by relative path.

    Each file contributes ``utf8(relative posix path) 0x00 len(bytes) as 8-byte
    big-endian, bytes``: any byte of any table file, or a file added or removed, changes it.
    """
    h = hashlib.sha256()
    root = Path(root)
    found = (root.rglob if recursive else root.glob)("*.toml") if root.is_dir() else []
    named = sorted((p.relative_to(root).as_posix(), p) for p in found if p.is_file())
    for rel, path in named:
        try:
            data = files.read_bytes(path, follow=True)
        except (OSError, files.Refused):
            data = b""
        h.update(rel.encode("utf-8") + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def hashed_files(root: str | os.PathLike, digest: str) -> list[Path] | None:
    """The table files ``digest`` covers (``content_hash`` of ``root``, flat or recursive,
    whichever gives it); None when neither does: the root changed since it was read."""
    root = Path(root)
    for recursive in (False, True):
        if content_hash(root, recursive) == digest:
            found = (root.rglob if recursive else root.glob)("*.toml")
            return sorted(x for x in found if x.is_file())
    return None


def copy_root(root: str | os.PathLike, dst: str | os.PathLike, digest: str) -> bool:
    """Copy the table files ``digest`` covers to the new folder ``dst``; False (nothing
    copied) when the root no longer hashes so."""
    hashed = hashed_files(root, digest)
    for p in hashed or ():
        target = Path(dst) / p.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        files.create(target, files.read_bytes(p, follow=True))
    return hashed is not None


# ----------------------------------------------------------------------- findings

def show(value: object) -> str:
    """A value as one short listing cell. Never raises: an int past Python's int -> str
    limit (a TOML hex literal can hold one) is shown by its size, not converted."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 256:
        text = f"<{'-' if value < 0 else ''}integer of {value.bit_length()} bits>"
    else:
        try:
            text = repr(value)
        except (ValueError, RecursionError):  # a huge int inside a list, absurd nesting
            text = f"<unprintable {type(value).__name__}>"
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 3] + "..."


def key_name(text: str) -> str:
    """A TOML key or an id as a listing cell (field / row): itself when it is a short,
    printable, non-empty, unpadded name, else its quoted form, so a key holding a newline
    (or nothing at all) can never break or blank the one-line-per-finding listing."""
    if text and text.isprintable() and text == text.strip() and len(text) <= MAX_SHOWN:
        return text
    return show(text)


class Collector:
    """The diagnostics of one load, in discovery order."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def add(self, category, file, row="-", field="-", value="-", rule="", severity="error"):
        self.items.append(Diagnostic(category, file, row, field, value, rule, severity))

    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.items)

    @property
    def has_errors(self) -> bool:
        return self.errors() > 0


def emit(out: Collector, file: str, label: str, problems) -> None:
    """Add ``check_fields``' problems of row ``label`` of ``file``."""
    for fld, value, category, rule in problems:
        out.add(category, file, label, fld, value, rule)


def unknown_files(root: Path, known: Sequence[str], out: Collector,
                  optional: Sequence[str] = ()) -> None:
    """A warning for each ``*.toml`` file directly in ``root`` that is none of ``known``
    (it would be silently ignored), naming the closest known name, and saying so when that
    one is an ``optional`` file that is missing (its defaults are used instead)."""
    try:
        names = sorted(p.name for p in root.iterdir() if p.suffix == ".toml" and p.is_file())
    except OSError:
        return
    for name in names:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        rule = "not a file of this table root: it is ignored"
        if close:
            rule += f"; did you mean {close[0]}?"
            if close[0] in optional and not (root / close[0]).exists():
                rule += f" ({close[0]} is missing, so its defaults are used)"
        out.add("unknown_file", name, "-", "-", "-", rule, severity="warning")


def has(ok: dict, *names: str) -> bool:
    return all(n in ok for n in names)


def dec(x: int | float) -> Decimal:
    """The decimal a designer wrote: floats via ``repr`` (0.1 -> Decimal('0.1')). Cross-field
    comparisons read floats this way, so ``0.16 <= 8 * 0.02`` holds exactly."""
    return Decimal(repr(float(x))) if isinstance(x, float) else Decimal(x)


# ------------------------------------------------------------------- field domains

@dataclass(frozen=True)
class FieldSpec:
    """Type and domain of one table field.

    kind: "int" (bool rejected), "float" (int accepted; NaN/inf are domain errors),
    "str" (non-empty), "enum" (one of ``choices``), "strlist" (array of non-empty str),
    "bool" (true / false). A generator may add kinds (its own spec subclass and check).
    ``lo``/``hi`` bound int and float fields; ``None`` = unbounded on that side.
    ``empty_category``: for a strlist whose emptiness is its own fatal category.
    """

    name: str
    kind: str
    lo: float | int | None = None
    hi: float | int | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[str, ...] = ()
    required: bool = True
    empty_category: str | None = None

    @property
    def rule(self) -> str:
        """The human sentence stating this field's rule (the Diagnostic ``rule``)."""
        if self.kind == "int":
            return f"{self.name} must be an int {self._range()}"
        if self.kind == "float":
            return f"{self.name} must be a finite number {self._range()}"
        if self.kind == "str":
            return f"{self.name} must be a non-empty string"
        if self.kind == "enum":
            return f"{self.name} must be one of: {', '.join(self.choices)}"
        if self.kind == "bool":
            return f"{self.name} must be true or false"
        tail = " (non-empty)" if self.empty_category else " (may be empty)"
        return f"{self.name} must be an array of non-empty strings{tail}"

    def _range(self) -> str:
        if self.hi is None:
            return f"{'>' if self.lo_open else '>='} {self.lo}"
        left = "(" if self.lo_open else "["
        right = ")" if self.hi_open else "]"
        return f"in {left}{self.lo}, {self.hi}{right}"

    def in_range(self, v: int | float) -> bool:
        """Exact comparison (Python compares int and float exactly, huge ints included)."""
        if self.lo is not None and (v <= self.lo if self.lo_open else v < self.lo):
            return False
        if self.hi is not None and (v >= self.hi if self.hi_open else v > self.hi):
            return False
        return True


def is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def check_value(spec: FieldSpec, value: object) -> tuple[str, str] | None:
    """One field on its own: ``None`` if legal, else ``(category, rule)``.

    category is "type" (wrong TOML type), "domain" (right type, out of range / bad enum /
    empty string / non-finite float) or ``spec.empty_category``.
    """
    if spec.kind == "int":
        if not is_int(value):
            return ("type", spec.rule)
        return None if spec.in_range(value) else ("domain", spec.rule)
    if spec.kind == "float":
        if not (is_int(value) or isinstance(value, float)):
            return ("type", spec.rule)
        if isinstance(value, float) and not math.isfinite(value):
            return ("domain", spec.rule)
        if is_int(value) and abs(value) > _FLOAT_MAX:  # would overflow float()
            return ("domain", spec.rule)
        return None if spec.in_range(value) else ("domain", spec.rule)
    if spec.kind in ("str", "enum"):
        if not isinstance(value, str):
            return ("type", spec.rule)
        if spec.kind == "str":
            return None if value else ("domain", spec.rule)
        return None if value in spec.choices else ("domain", spec.rule)
    if spec.kind == "bool":
        return None if isinstance(value, bool) else ("type", spec.rule)
    if spec.kind == "strlist":
        if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
            return ("type", spec.rule)
        if not value and spec.empty_category:
            return (spec.empty_category, f"{spec.name} must be a non-empty set of strings")
        return None if all(value) else ("domain", spec.rule)
    raise ValueError(f"unknown field kind {spec.kind!r}")  # programming error, not data


Check = Callable[[FieldSpec, object], "tuple[str, str] | None"]


def check_fields(raw: dict, specs, check: Check = check_value, prefix: str = "",
                 subtables: dict | None = None):
    """Per-field checks of one row or table: (values that passed, [(field, value, category,
    rule)]). A field of kind "table" (a sub-table named in ``subtables``) passes as the
    dict of its own valid fields, its findings named ``prefix.field``."""
    ok: dict = {}
    problems: list[tuple[str, str, str, str]] = []
    for spec in specs:
        key = prefix + spec.name
        if spec.name not in raw:
            if spec.required:
                problems.append((key, "-", "missing_field", f"required: {spec.rule}"))
            continue
        value = raw[spec.name]
        bad = check(spec, value)
        if bad is not None:
            problems.append((key, show(value), *bad))
        elif spec.kind == "table":
            ok[spec.name], sub = check_fields(value, subtables[spec.name], check, key + ".",
                                              subtables)
            problems += sub
        else:
            ok[spec.name] = value
    known = {s.name for s in specs}
    for k in raw:
        if k not in known:
            problems.append((prefix + key_name(k), show(raw[k]), "unknown_field",
                             f"unknown field; allowed: {', '.join(sorted(known))}"))
    return ok, problems

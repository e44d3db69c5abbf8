"""One classic script from the runtime's ES modules (``runtime/``), for pages that must
work from a file with nothing fetched (decision 193): a browser will not import a module
from a file:// page, so each module becomes a function scope in dependency order.

Contract of the modules (the style of runtime/): imports are ``import { a, b as c } from
'./path.js';`` (relative, may span lines), exports are ``export function|class|const|let
NAME`` or re-exports ``export { A, B as C } from './path.js';``. Anything else (a default
export, ``export *``, a bare specifier) is refused with the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

from . import assets, files

RUNTIME = assets.path("runtime")

_IMPORT = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*'([^']+)';[ \t]*$", re.M)
_REEXPORT = re.compile(r"^export\s*\{([^}]*)\}\s*from\s*'([^']+)';[ \t]*$", re.M)
_EXPORT = re.compile(r"^export\s+(?:async\s+)?(function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)",
                     re.M)


class BundleError(ValueError):
    pass


def _names(spec: str) -> list[tuple[str, str]]:
    """``a, b as c`` -> [(a, a), (b, c)] (imported name, local name)."""
    out = []
    for part in spec.replace("\n", " ").split(","):
        part = part.strip()
        if part:
            name, _, local = part.partition(" as ")
            out.append((name.strip(), (local or name).strip()))
    return out


def _resolve(base: Path, spec: str) -> Path:
    if not spec.startswith("."):
        raise BundleError(f"{base}: import of {spec!r}: only relative imports are bundled")
    return (base.parent / spec).resolve()


def bundle(entry: Path) -> str:
    """The entry module and its imports as one script; ``window.__bundle`` is not set: the
    entry runs for its effects (a page's script)."""
    order: list[Path] = []
    seen: set[Path] = set()

    def visit(path: Path, stack: tuple[Path, ...]) -> None:
        if path in stack:
            raise BundleError(f"import cycle: {' -> '.join(p.name for p in (*stack, path))}")
        if path in seen:
            return
        text = files.read_text(path, follow=True)
        for m in (*_IMPORT.finditer(text), *_REEXPORT.finditer(text)):
            visit(_resolve(path, m.group(2)), (*stack, path))
        seen.add(path)
        order.append(path)

    visit(entry.resolve(), ())
    ids = {p: f"__m{i}" for i, p in enumerate(order)}
    parts = ['"use strict";']
    for path in order:
        text = files.read_text(path, follow=True)
        head = []
        exports: list[str] = []
        for m in _IMPORT.finditer(text):
            src = ids[_resolve(path, m.group(2))]
            head.append("const { " + ", ".join(n if n == loc else f"{n}: {loc}"
                                                for n, loc in _names(m.group(1)))
                        + f" }} = {src};")
        for m in _REEXPORT.finditer(text):
            src = ids[_resolve(path, m.group(2))]
            exports += [f"{loc}: {src}.{n}" for n, loc in _names(m.group(1))]
        body = _REEXPORT.sub("", _IMPORT.sub("", text))
        exports += [m.group(2) for m in _EXPORT.finditer(body)]
        body = _EXPORT.sub(lambda m: m.group(0).removeprefix("export").lstrip(), body)
        for n, line in enumerate(body.splitlines(), 1):
            if re.match(r"^\s*(export|import)\b", line):
                raise BundleError(f"{path}:{n}: not bundled: {line.strip()}")
        parts.append(f"const {ids[path]} = (() => {{ // {path.relative_to(RUNTIME)}\n"
                     + "\n".join(head) + "\n" + body
                     + f"\nreturn {{ {', '.join(exports)} }};\n}})();")
    return "\n".join(parts)

"""Where the compiled kernels live, computed without importing numba.

numba's on-disk cache checks only the source file of the function it compiles, not the
jitted functions it calls, so an edit to a callee would leave a stale caller in the cache.
The cache therefore lives in a folder named by a digest of every kernel source: this
package's ``_kernels`` and, for each generator package registered under the entry-point
group ``boardcore.kernels`` (``pyproject.toml``; the value is the package name), its
``_kernels/*.py`` and ``codes.py``. Any edit selects a fresh folder. The base folder is
$NUMBA_CACHE_DIR when set, else ``.numba_cache`` beside the packages.

One folder for every registered package: numba reads ``config.CACHE_DIR`` when a kernel is
decorated, and a process may import several packages' kernels in any order (they share the
PCG32 kernels here), so a single setting is the only one right whatever the order. An edit
to any package's kernels therefore recompiles all of them (a few seconds, once).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from importlib import metadata
from pathlib import Path

GROUP = "boardcore.kernels"
CORE = Path(__file__).resolve().parent
PROJECT = CORE.parent


def registered() -> list[tuple[str, Path]]:
    """(package name, folder) of every registered kernel package, sorted by name; found
    without importing them (``find_spec`` of a top-level package only locates it)."""
    out = []
    for name in sorted({ep.value for ep in metadata.entry_points(group=GROUP)}):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            out.append((name, Path(next(iter(spec.submodule_search_locations)))))
    return out


@functools.cache
def sources_digest() -> str:
    h = hashlib.sha256()
    for pkg, root in [(CORE.name, CORE), *registered()]:
        for path in sorted((root / "_kernels").glob("*.py")) + [root / "codes.py"]:
            if path.is_file():
                h.update(f"{pkg}/{path.name}".encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("NUMBA_CACHE_DIR") or str(PROJECT / ".numba_cache")
    return Path(base) / f"kernels-{sources_digest()}"


def is_warm(entry: str) -> bool:
    """True when this machine already holds the compiled entry kernel ``entry`` (a glob of
    its index file, e.g. ``attempt.generate_boards-*.nbi``): a cache load, not a compile,
    is what the next first call costs."""
    d = cache_dir()
    return d.is_dir() and any(d.rglob(entry))

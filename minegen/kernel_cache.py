"""Where the compiled kernels live, computed without importing numba.

numba's on-disk cache checks only the source file of the function it compiles, not the
jitted functions it calls, so an edit to ``solver.py`` would leave a stale
``attempt.generate_boards`` in the cache. The cache therefore lives in a folder named by
a digest of every kernel source (and codes.py): any edit selects a fresh folder. The base
folder is $NUMBA_CACHE_DIR when set, else ``.numba_cache`` beside the package.

One folder for every generator package of the project (``minegen``, ``tilegen``): numba
reads ``config.CACHE_DIR`` when a kernel is decorated, and a process may import both
packages' kernels in any order (tilegen's kernels call minegen's PCG32), so a single
shared setting is the only one that is right whatever the order. An edit to either
package's kernels therefore recompiles both (a few seconds, once).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

KERNELS = Path(__file__).resolve().parent / "_kernels"
PROJECT = KERNELS.parent.parent
KERNEL_PACKAGES = ("minegen", "tilegen")  # sibling packages sharing this cache folder
ENTRY = "attempt.generate_boards-*.nbi"  # the batch and per-board entry kernel's index


def sources_digest() -> str:
    h = hashlib.sha256()
    for pkg in KERNEL_PACKAGES:
        root = PROJECT / pkg
        for path in sorted((root / "_kernels").glob("*.py")) + [root / "codes.py"]:
            if path.is_file():
                h.update(f"{pkg}/{path.name}".encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("NUMBA_CACHE_DIR") or str(PROJECT / ".numba_cache")
    return Path(base) / f"kernels-{sources_digest()}"


def is_warm(entry: str = ENTRY) -> bool:
    """True when this machine already holds the compiled entry kernel ``entry`` (a glob of
    its index file): a cache load, not a compile, is what the next first call costs."""
    d = cache_dir()
    return d.is_dir() and any(d.rglob(entry))

"""Private numba kernels (STYLE 1): plain arrays and ints in, no Python objects, no exceptions
for flow. The typed front door is ``minegen.generate`` / ``minegen.batch``.

Cache keying: numba's on-disk cache checks only the source file of the function it
compiles, not the jitted functions it calls, so an edit to ``solver.py`` would leave a stale
``attempt.generate_boards`` in the cache. We therefore put the cache in a folder named by a
digest of every kernel source (and codes.py): any edit selects a fresh folder. The base
folder is $NUMBA_CACHE_DIR when set, else ``.numba_cache`` beside the package.
"""

import hashlib
import os
from pathlib import Path

import numba

_HERE = Path(__file__).resolve().parent


def _sources_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(_HERE.glob("*.py")) + [_HERE.parent / "codes.py"]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


_base = os.environ.get("NUMBA_CACHE_DIR") or str(_HERE.parent.parent / ".numba_cache")
numba.config.CACHE_DIR = os.path.join(_base, f"minegen-{_sources_digest()}")

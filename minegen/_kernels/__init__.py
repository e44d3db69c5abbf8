"""Private numba kernels (STYLE 1): plain arrays and ints in, no Python objects, no exceptions
for flow. The typed front door is ``minegen.generate`` / ``minegen.batch``.

Cache keying: numba's on-disk cache checks only the source file of the function it
compiles, not the jitted functions it calls, so an edit to ``solver.py`` would leave a stale
``attempt.generate_boards`` in the cache. We therefore put the cache in a folder named by a
digest of every kernel source (and codes.py): any edit selects a fresh folder. The base
folder is $NUMBA_CACHE_DIR when set, else ``.numba_cache`` beside the package.

Compile settings: ``compiling()`` wraps the first call of an entry kernel (cold compile
budget of issue 2, <= 5 s). Inside it LLVM runs at -O1 and Python's cyclic GC is paused
(numba allocates millions of short-lived objects while compiling; the collector's passes
cost ~0.4 s); both are restored on exit, so other numba users in the process keep their
settings (a compile in another thread during that one scope would also run at -O1: same
code, another optimisation level). Measured on ``minegen bench`` (medians of 15 repeats of
4000 boards): -O1 gives the speed of numba's default -O3 (40.3 vs 41.0 us per attempt at
30x16, 8.5 vs 8.3 at 12x12) for ~0.7 s less compile. The loop vectoriser stays on: without
it the kernels run ~12 % slower for no compile gain.
"""

import contextlib
import gc
import hashlib
import os
import threading
from pathlib import Path

import numba
from numba.core import config as _numba_config

_HERE = Path(__file__).resolve().parent


def _sources_digest() -> str:
    h = hashlib.sha256()
    for path in sorted(_HERE.glob("*.py")) + [_HERE.parent / "codes.py"]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


_base = os.environ.get("NUMBA_CACHE_DIR") or str(_HERE.parent.parent / ".numba_cache")
numba.config.CACHE_DIR = os.path.join(_base, f"minegen-{_sources_digest()}")


COMPILE_OPT = 1
_compile_lock = threading.Lock()


@contextlib.contextmanager
def compiling():
    """Scope of a first kernel call: LLVM at -O1 and no cyclic GC; both restored on exit."""
    with _compile_lock:
        saved_opt = _numba_config.OPT
        gc_was_enabled = gc.isenabled()
        _numba_config.OPT = _numba_config._OptLevel(COMPILE_OPT)
        gc.disable()
        try:
            yield
        finally:
            _numba_config.OPT = saved_opt
            if gc_was_enabled:
                gc.enable()

"""Kernels every generator shares (``pcg``), the kernel cache and the compile scope.

Importing this package installs the project's cache locator (``boardcore.kernel_cache``: one
per-user folder per digest of every registered package's kernel sources, shared by every
checkout on the machine). A generator's own ``_kernels`` package imports it first, so no
kernel is decorated before the locator is in place.

Compile settings: ``compiling()`` wraps the first call of an entry kernel. Inside it LLVM
runs at -O1 and Python's cyclic GC is paused (numba allocates millions of short-lived
objects while compiling; the collector's passes cost ~0.4 s); both are restored on exit, so
other numba users in the process keep their settings (a compile in another thread during
that one scope would also run at -O1: same code, another optimisation level). Measured on
``minegen bench`` (medians of 15 repeats of 4000 boards): -O1 gives the speed of numba's
default -O3 (40.3 vs 41.0 us per attempt at 30x16, 8.5 vs 8.3 at 12x12) for ~0.7 s less
compile. The loop vectoriser stays on: without it the kernels run ~12 % slower for no
compile gain.
"""

import contextlib
import gc
import threading

from numba.core import config as _numba_config

from .. import kernel_cache

kernel_cache.install_locator()  # before any kernel is decorated: a folder per source digest

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

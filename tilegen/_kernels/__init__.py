"""Private numba kernels of tilegen (as ``minegen._kernels``): plain arrays and ints in,
no Python objects, no exceptions for flow. The typed front door is ``tilegen.generate`` /
``tilegen.batch``.

The compiled kernels share minegen's cache folder (``minegen.kernel_cache``: one folder per
digest of both packages' kernel sources), so the import order of the two packages never
decides where a kernel is cached. The PCG32 stream is minegen's own code
(``minegen._kernels.pcg``), imported, not copied.
"""

import numba

from minegen import kernel_cache
from minegen._kernels import compiling  # noqa: F401  (the same compile scope as minegen)

numba.config.CACHE_DIR = str(kernel_cache.cache_dir())

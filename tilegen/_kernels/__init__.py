"""Private numba kernels of tilegen (as ``minegen._kernels``): plain arrays and ints in,
no Python objects, no exceptions for flow. The typed front door is ``tilegen.generate`` /
``tilegen.batch``.

The cache folder and the compile scope are the project's (``boardcore._kernels``, imported
first so numba's cache folder is fixed before any kernel here is decorated). The PCG32
stream is ``boardcore._kernels.pcg``, imported, not copied.
"""

from boardcore._kernels import compiling  # noqa: F401

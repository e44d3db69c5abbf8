"""Private numba kernels (STYLE 1): plain arrays and ints in, no Python objects, no exceptions
for flow. The typed front door is ``minegen.generate`` / ``minegen.batch``.

The cache folder and the compile scope are the project's (``boardcore._kernels``, imported
first so numba's cache folder is fixed before any kernel here is decorated); the PCG32
stream is ``boardcore._kernels.pcg``, imported, not copied.
"""

from boardcore._kernels import compiling  # noqa: F401

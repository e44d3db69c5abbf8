"""The platform every board generator of this project and the audit stand on.

What lives here is game-free by contract: the error types (``errors``), the declared record
column (``fields``), the portable seeded streams (``streams``; the PCG32 kernels in
``_kernels.pcg``), the kernel cache and compile scope (``kernel_cache``, ``_kernels``), the
table toolkit (``tables``) and the command-line error wrapper (``cli``).
minegen, tilegen and pipeline import it; it imports none of them (a house test checks).
"""

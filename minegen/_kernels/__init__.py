"""Private numba kernels (STYLE 1): plain arrays and ints in, no Python objects, no exceptions
for flow. The typed front door is ``minegen.generate`` / ``minegen.batch``."""

"""tilegen: the tile-match ("three of a kind vanish") board generator and evaluator.

A sibling of ``minegen``: it imports nothing of the audit (``pipeline``). It shares
minegen's portable streams (FNV-1a-64, splitmix64, PCG32) by import.
"""

__version__ = "0.1.0"

"""tilegen: the tile-match ("three of a kind vanish") board generator and evaluator.

A sibling of ``minegen`` on the shared core (``boardcore``: portable streams FNV-1a-64,
splitmix64, PCG32; tables, files, errors). The generator itself imports nothing of the
audit; ``tilegen.audit`` is its plug-in to the audit platform (``pipeline``), and
``tilegen.telemetry`` reads the players' sessions.
"""

__version__ = "0.1.0"

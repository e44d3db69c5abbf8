"""minegen: reference implementation of the A1 board generator with A4 fog.

Pure and deterministic; no Dask here (the audit lives in ``pipeline``).
"""

from boardcore.streams import derive_at

from .errors import (
    DefectError, DegradedBoardWarning, Diagnostic, IllegalBoardWarning, MinegenError, TableError,
)
from .generate import Board, generate
from .record import FIELDS, GENERATOR_VERSION, METRIC_VERSION
from .rng import sigma

__version__ = GENERATOR_VERSION

__all__ = [
    "Board", "DefectError", "DegradedBoardWarning", "Diagnostic", "IllegalBoardWarning", "FIELDS", "GENERATOR_VERSION", "METRIC_VERSION",
    "MinegenError", "TableError", "derive_at", "generate", "sigma",
]

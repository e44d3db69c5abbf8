"""What a generator is: the contract, its capabilities (``generator``, ``capabilities``), its
lines, drill-down and costs."""

from ..analysis.records import model as records_model
from ..audit_options import AuditOption
from ..capabilities import (Calibration, Categories, Drawings, Kernels, OwnVerdict,
                            Progression, Revisions, RunTables)
from ..declarations import Cost, Drill, Intent, Line, Move
from ..errors import Interrupted, RunInterrupted
from ..generator import Daily, Generator, SweepField, Tune
from ..space import Dim, Space

__all__ = ["AuditOption", "Calibration", "Categories", "Cost", "Daily", "Dim", "Drawings", "Drill",
           "Generator", "Intent", "Interrupted", "Kernels", "Line", "Move", "OwnVerdict",
           "Progression", "Revisions", "RunInterrupted", "RunTables", "Space", "SweepField",
           "Tune", "records_model"]

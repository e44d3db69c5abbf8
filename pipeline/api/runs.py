"""Run folders and the file layer, options, the cluster session and its interrupts, and the
commands pages print."""

from .. import hints
from ..engine import interrupts
from ..engine.interrupts import interruptible
from ..engine.session import session
from ..hints import audit_command
from ..jobs.history import refresh
from ..options import AuditOptions, check, usable_out
from ..store import atomic, fits, runs
from ..store.runs import resolve_run

__all__ = ["AuditOptions", "atomic", "audit_command", "check", "fits", "hints", "interrupts",
           "interruptible", "refresh", "resolve_run", "runs", "session", "usable_out"]

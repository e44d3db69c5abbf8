"""Every command the tools print for a person to run next (resume, sweep, tune, generate),
written in one place so each names the run's generator, its table root and its ``--out``,
and runs exactly as printed (a test runs each one).

``generator`` is how the run loaded its generator (``generator_ref`` of the manifest: a
registered name or ``module:attribute``); the default generator is left out, as a person
would type it. ``out`` and ``tables`` are left out when they are the defaults.
"""

from __future__ import annotations

import os
import shlex

from .defaults import DEFAULT_GENERATOR, DEFAULT_OUT

PROG = "minegen"  # the command line the audit's commands belong to


def audit_command(verb: str, *args: object, generator: str | None = None,
                  out: str | None = None, tables: str | None = None) -> str:
    """``minegen VERB ARGS [--generator G] [--tables T] [--out O]``, shell-quoted."""
    parts = [PROG, verb, *map(str, args)]
    if generator and generator != DEFAULT_GENERATOR:
        parts += ["--generator", generator]
    if tables:
        parts += ["--tables", str(tables)]
    if out is not None and str(out) != DEFAULT_OUT:
        parts += ["--out", str(out)]
    return shlex.join(parts)


def program_command(prog: str, *args: object, tables: str | None = None) -> str:
    """A generator's own command (e.g. its ``generate``), with ``--tables`` when not the
    default root."""
    parts = [prog, *map(str, args)]
    if tables:
        parts += ["--tables", str(tables)]
    return shlex.join(parts)


def tables_flag(root: object, default_root: object) -> str | None:
    """``root`` as ``--tables`` takes it, or None when it is the generator's default root
    (however the path is written: a link, a relative path)."""
    if root is None or (default_root is not None
                        and os.path.realpath(str(root)) == os.path.realpath(str(default_root))):
        return None
    return str(root)


def resume_audit(run_id: str, generator: str | None, out: str) -> str:
    return audit_command("audit", "--resume", run_id, generator=generator, out=out)


class RunHints:
    """The commands a report of one run prints: its generator, its table root (left out when
    it is the generator's default ``default_root``) and its ``--out``, from the manifest."""

    def __init__(self, manifest: dict, default_root: object = None):
        root = manifest.get("table_root")
        self.tables = tables_flag(root, default_root)
        self.generator = manifest.get("generator_ref") or manifest.get("generator")
        self.out = manifest.get("out")

    def audit(self, verb: str, *args: object) -> str:
        """A command of the audit's command line (sweep, tune, diff ...) for this run."""
        return audit_command(verb, *args, generator=self.generator, out=self.out,
                             tables=self.tables)

    def program(self, prog: str, *args: object) -> str:
        """A generator's own command (e.g. ``generate``) on this run's tables."""
        return program_command(prog, *args, tables=self.tables)

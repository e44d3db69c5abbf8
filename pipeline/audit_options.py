"""Audit options a capability brings: ``audit --NAME VALUE`` (or ``NAME = "VALUE"`` in a
profile's ``[audit]``), registered under the entry-point group ``minegen.audit_options``,
so that the generic audit job and its options name none of them (issue 42 item 1). The
project's own: ``--daily FROM:DAYS`` (capability ``Daily``) and ``--calibration FILE``
(``Calibration``), both in ``capability_options.py``.

An option is asked, in this order: ``check`` when the options are merged (exit 2 before
anything starts), ``generator`` before the tables load (it may swap the generator: the
daily boards are a generator of their own), ``rows`` once they are loaded (it may set the
rows and N). An option ``kept`` is written into the run's ``run.json`` and given back to a
``--resume``; every option is refused beside ``--resume``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

GROUP = "minegen.audit_options"


@dataclass(frozen=True)
class AuditOption:
    name: str  # --NAME on the command line; NAME (dashes as underscores) in a profile
    metavar: str
    help: str
    sets_n: bool = False  # it fixes N: --n beside it is refused
    kept: bool = False  # run.json records it and --resume gives it back

    @property
    def key(self) -> str:  # the profile's key and run.json's
        return self.name.replace("-", "_")

    def check(self, value: str) -> None:
        """InputError (one line) when ``value`` is not one this option takes."""

    def generator(self, gen: Any, value: str) -> Any:
        """The generator the run uses (before its tables load); default ``gen``."""
        return gen

    def rows(self, gen: Any, value: str, catalog: Any, rows: tuple, n: int
             ) -> tuple[tuple, int]:
        """(rows, N) the run audits, once its tables are loaded; default unchanged."""
        return rows, n


@cache
def registered() -> tuple[AuditOption, ...]:
    """Every registered option, by name (a registered option whose import fails raises:
    a broken plug-in never silently loses its option)."""
    found = [ep.load() for ep in metadata.entry_points(group=GROUP)]
    return tuple(sorted(found, key=lambda o: o.name))


def add_arguments(parser) -> None:
    for opt in registered():
        parser.add_argument(f"--{opt.name}", dest=opt.key, default=None, metavar=opt.metavar,
                            help=opt.help)


def chosen(extras) -> list[tuple[AuditOption, str]]:
    """(option, value) of each registered option in ``extras`` ((key, value) pairs, as
    ``AuditOptions.extras`` holds them), in the options' order."""
    values = dict(extras)
    return [(o, values[o.key]) for o in registered() if values.get(o.key) is not None]


def given(args) -> dict[str, str]:
    """{key: value} of the registered options given on the command line."""
    return {o.key: getattr(args, o.key) for o in registered()
            if getattr(args, o.key, None) is not None}

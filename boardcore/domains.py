"""The declared domain of every value a command line takes (decision 214), and the parser
every command of the project uses.

A numeric option's ``type`` is a ``Number``: the parser refuses a value outside it (out of
range, not finite, empty, not a number, huge) in one line, exit 2, before anything runs,
and the option's ``--help`` states the domain (``Parser.add_argument`` appends it; a
hand-written type declares its ``domain`` for the help the same way). Every
other value option takes ``TEXT`` unless it lists its choices: an empty string is refused
the same way (``--resume ''`` once started a whole new audit). A command's later checks
(the tables' own rows, a generator's narrower bound on N) come after, in its own words.
A bound on several options together -- a command's total work -- is a ``Product``
(``Parser.add_bound``): refused in one line after parsing, stated in the command's help.

``tests/test_option_domains.py`` walks every option of every command with values from
each domain's ``bad_values`` and expects exit 2 in one line.
"""

from __future__ import annotations

import argparse
import math
import textwrap
from dataclasses import dataclass

from .cli import EXIT_BAD_INPUT

INT64_MAX = (1 << 63) - 1
UINT64_END = 1 << 64


@dataclass(frozen=True)
class Number:
    """An int (``integer=True``; decimal, or 0x hex when ``hex``) or a finite float in
    [lo, hi], each end open when said; ``what`` names the unit in messages and help."""

    lo: float
    hi: float
    integer: bool = True
    lo_open: bool = False
    hi_open: bool = False
    what: str = ""
    hex: bool = False

    def __str__(self) -> str:
        kind = ("a whole number" if self.what else "an integer") if self.integer \
            else "a number"
        unit = f" of {self.what}" if self.what else ""
        return (f"{kind}{unit} in {'(' if self.lo_open else '['}{self._fmt(self.lo)}, "
                f"{self._fmt(self.hi)}{')' if self.hi_open else ']'}")

    @staticmethod
    def _fmt(v) -> str:
        if isinstance(v, int) and v >= 1 << 32 and (v & (v - 1)) == 0:
            return f"2^{v.bit_length() - 1}"
        return str(v)

    def holds(self, v) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        if self.integer and not isinstance(v, int):
            return False
        if isinstance(v, float) and not math.isfinite(v):
            return False
        return ((self.lo < v) if self.lo_open else (self.lo <= v)) and \
            ((v < self.hi) if self.hi_open else (v <= self.hi))

    def __call__(self, text: str):
        s = str(text).strip()
        try:
            v = int(s, 0 if self.hex else 10) if self.integer else float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {self}; got {text!r}") from None
        if not self.holds(v):
            raise argparse.ArgumentTypeError(f"must be {self}; got {text!r}")
        return v

    def bad_values(self) -> list[str]:
        """Values the parser must refuse: just outside each end, not finite, empty, huge,
        not a number."""
        step = 1 if self.integer else 1e-9 * max(1.0, abs(self.hi))
        below = self.lo if self.lo_open else self.lo - step
        above = self.hi if self.hi_open else self.hi + step
        return [repr(below) if not self.integer else str(int(below)),
                repr(above) if not self.integer else str(int(above)),
                "nan", "inf", "-inf", "", "1" + "0" * 20, "1e400", "ten"]


class _Text:
    """A non-empty string (an empty path, run id or row list is never meant)."""

    __name__ = "text"

    def __call__(self, text: str) -> str:
        if not str(text).strip():
            raise argparse.ArgumentTypeError("must not be empty")
        return text

    def __repr__(self) -> str:
        return "TEXT"


TEXT = _Text()

# the domains shared by several commands (one declaration each)
SEED64 = Number(0, UINT64_END, hi_open=True, hex=True)  # a raw uint64 seed
N_BOARDS = Number(1, 1 << 16, what="boards")  # the largest N any generator takes per row
WORKERS = Number(1, 4096, what="processes")  # the machine's own bound is checked after
SEEDS_PER_TASK = Number(1, 1 << 16, what="boards")
# a wait longer than a day is a hang by another name
WORKER_TIMEOUT = Number(0, 86400, integer=False, lo_open=True, what="seconds")
FDR = Number(0, 1, integer=False, lo_open=True, hi_open=True)
SESSIONS = Number(1, 10**9, what="sessions")
# a gap in pass rate (a share): reconcile's practical margin and minimum curve step
MARGIN = Number(0, 1, integer=False, hi_open=True)


@dataclass(frozen=True)
class Product:
    """A bound on the product of several options' values: the total work a command may be
    asked for (each option's own domain bounds it alone, not the product). ``options``:
    the option strings; at most ``hi`` ``what``; ``why`` says why this bound."""

    options: tuple[str, ...]
    hi: int
    what: str
    why: str = ""

    def __str__(self) -> str:
        why = f" ({self.why})" if self.why else ""
        return f"{' x '.join(self.options)} at most {self.hi:,} {self.what}{why}"

    def problem(self, values: dict[str, int]) -> str:
        """"" when the product of ``values`` (option string -> value) is within the bound;
        else the one-line refusal."""
        if any(values[o] is None for o in self.options):
            return ""  # an option left out: its command's default is checked where it is set
        total = math.prod(int(values[o]) for o in self.options)
        if total <= self.hi:
            return ""
        asked = " x ".join(f"{o} {values[o]}" for o in self.options)
        return f"{asked} = {total:,} {self.what}, more than {self.hi:,}: give fewer"


class Parser(argparse.ArgumentParser):
    """argparse with a one-line error (``prog sub: <what> (see prog sub --help)``, exit 2)
    and declared domains: a value option without ``type`` or ``choices`` takes ``TEXT``;
    a ``Number`` type's domain is appended to the option's help; ``add_bound`` declares a
    ``Product`` over options already added."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.bounds: list[Product] = []
        # subcommands are built by the same class (their errors are one line too)
        self.register("action", "parsers", _SubParsers)

    def add_argument(self, *args, **kwargs):
        return _declare(super().add_argument, *args, **kwargs)

    def add_argument_group(self, *args, **kwargs):
        group = super().add_argument_group(*args, **kwargs)
        _wrap_adder(group)
        return group

    def add_mutually_exclusive_group(self, **kwargs):
        group = super().add_mutually_exclusive_group(**kwargs)
        _wrap_adder(group)
        return group

    def add_bound(self, bound: Product) -> None:
        """Refuse, after parsing, values whose product exceeds ``bound``; the help's
        epilog states it first."""
        if unknown := [o for o in bound.options if o not in self._option_string_actions]:
            raise ValueError(f"{self.prog}: no option {', '.join(unknown)} to bound")
        self.bounds.append(bound)
        said = textwrap.fill(f"Total work: {bound}.", 79)
        self.epilog = f"{said}\n\n{self.epilog}" if self.epilog else said

    def parse_known_args(self, args=None, namespace=None):
        namespace, rest = super().parse_known_args(args, namespace)
        for b in self.bounds:
            values = {o: getattr(namespace, self._option_string_actions[o].dest)
                      for o in b.options}
            if why := b.problem(values):
                self.error(why)
        return namespace, rest

    def error(self, message: str):
        top = self.prog.split()[0]
        where = self.prog.removeprefix(top).strip() or "error"
        self.exit(EXIT_BAD_INPUT, f"{top}: {where}: {message} (see {self.prog} --help)\n")


class _SubParsers(argparse._SubParsersAction):
    def __init__(self, *args, **kwargs):
        kwargs["parser_class"] = Parser
        super().__init__(*args, **kwargs)


_VALUE_ACTIONS = (None, "store", "append", "extend")


def _declare(add, *args, **kwargs):
    if kwargs.get("action") in _VALUE_ACTIONS and kwargs.get("nargs") != 0:
        if "type" not in kwargs and "choices" not in kwargs:
            kwargs["type"] = TEXT
        domain = declared(kwargs.get("type"))
        if domain is not None and kwargs.get("help") not in (None, argparse.SUPPRESS):
            each = "each " if getattr(kwargs["type"], "each", False) else ""
            kwargs["help"] = f"{kwargs['help']}; {each}{domain}"
    return add(*args, **kwargs)


def declared(kind) -> Number | None:
    """The domain an option's ``type`` declares: a ``Number`` itself, or a hand-written
    type's ``domain`` attribute (its messages are its own; its bounds are these)."""
    return kind if isinstance(kind, Number) else getattr(kind, "domain", None)


def _wrap_adder(group) -> None:
    add = group.add_argument
    group.add_argument = lambda *a, **k: _declare(add, *a, **k)


def checked(name: str, value, domain: Number) -> list[str]:
    """``[]`` when ``value`` (from a profile or a library call) lies in ``domain``, else
    the one problem, worded as the parser words it."""
    if value is None or domain.holds(value):
        return []
    return [f"{name} must be {domain}; got {value!r}"]


"""Every option of every command has a declared domain, and the command line refuses a
value outside it in one line, exit 2 (decision 214; issue 29 items 3 and 8).

The walk is generated from the parsers themselves: a command or option added later is
walked too, and one without a declared domain fails ``test_every_value_option_declares``.
"""

from __future__ import annotations

import argparse

import pytest
from cli_harness import run_cli

from boardcore.domains import TEXT, Number
from minegen.cli import build_parser as minegen_parser
from tilegen.cli import build_parser as tilegen_parser

# a valid value for each positional that comes before the one walked
VALID_POSITIONAL = {"level": "1", "depth": "0", "city": "beijing", "run_a": "LATEST",
                    "run_b": "LATEST"}


def _options(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _options(sub, (*path, name))
        elif a.nargs != 0 and not isinstance(a, (argparse._HelpAction,
                                                 argparse._VersionAction)):
            positionals = [b.dest for b in parser._actions if not b.option_strings
                           and not isinstance(b, argparse._SubParsersAction)]
            yield path, a, positionals


def every_option():
    for prog, build in (("minegen", minegen_parser), ("tilegen", tilegen_parser)):
        yield from _options(build(), (prog,))


def bad_values(action) -> list[str]:
    if action.choices is not None:
        return ["", "no-such-choice"]
    if action.type is TEXT:
        return ["", "   "]
    return list(action.type.bad_values())


def argv_for(path, action, positionals, value) -> list[str]:
    """The command line with ``value`` for ``action`` (``--opt=VALUE``, and ``--`` before a
    positional: a value such as ``-inf`` is a value there, not an option)."""
    if action.option_strings:
        return [*path[1:], f"{action.option_strings[0]}={value}"]
    before = positionals[:positionals.index(action.dest)]
    return [*path[1:], *(VALID_POSITIONAL[d] for d in before), "--", value]


CASES = [(path, a, pos, v) for path, a, pos in every_option() for v in
         (bad_values(a) if a.type is TEXT or a.choices is not None or hasattr(a.type, "bad_values")
          else [])]


def test_every_value_option_declares_its_domain():
    undeclared, unstated = [], []
    for path, a, _ in every_option():
        if a.choices is None and a.type is not TEXT and not hasattr(a.type, "bad_values"):
            undeclared.append((" ".join(path), a.dest, a.type))
        if isinstance(a.type, Number) and str(a.type) not in (a.help or ""):
            unstated.append((" ".join(path), a.dest))
    assert undeclared == [] and unstated == []
    # the walk saw them all (100 value options on 2026-12-02)
    assert len({(p, a.dest) for p, a, _ in every_option()}) >= 100


@pytest.mark.parametrize("path, action, positionals, value", CASES, ids=[
    f"{' '.join(p)}-{a.option_strings[0] if a.option_strings else a.dest}-{v!r}"
    for p, a, _, v in CASES])
def test_a_value_outside_its_domain_is_exit_2_in_one_line(path, action, positionals, value,
                                                          tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written, here or anywhere
    p = run_cli(path[0], *argv_for(path, action, positionals, value))
    name = action.option_strings[0] if action.option_strings else action.dest
    assert p.returncode == 2, (p.stdout, p.stderr)
    line = p.stderr.strip()
    assert "\n" not in line and "Traceback" not in line and name in line, line
    assert f"see {' '.join(path)} --help" in line, line
    assert p.stdout == "" and list(tmp_path.iterdir()) == []


def test_the_walk_includes_the_defects_once_found():
    """The values issue 29 found running (or overflowing) are in the walk."""
    walked = {(" ".join(p), a.option_strings[0] if a.option_strings else a.dest, v)
              for p, a, _, v in CASES}
    for case in [("minegen audit", "--resume", ""), ("minegen reconcile", "--fdr", "nan"),
                 ("minegen reconcile", "--fdr", "1"),
                 ("minegen reconcile", "--min-sessions", "0"),
                 ("tilegen bench", "--repeats", "1" + "0" * 20),
                 ("tilegen telemetry synth", "--sessions", "1" + "0" * 20)]:
        assert case in walked, case


@pytest.mark.parametrize("value, ok", [("0", True), ("0x10", True), (str(2**64 - 1), True),
                                       (str(2**64), False), ("-1", False), ("1e3", False)])
def test_a_seed_domain_takes_hex_and_stops_at_2_64(value, ok):
    from boardcore.domains import SEED64

    if ok:
        assert SEED64(value) == int(value, 0)
    else:
        with pytest.raises(argparse.ArgumentTypeError, match=r"in \[0, 2\^64\)"):
            SEED64(value)

"""Every option's --help states the bounds its domain enforces, and no hand-written text in
it states others (Operations IV, defect 11): generated from the parsers themselves, so an
option or command added later is walked too. Bounds on several options together (a
command's total work, ``boardcore.domains.Product``) are stated and enforced the same way.
"""

from __future__ import annotations

import argparse
import re

import pytest
from cli_harness import run_cli

from boardcore.domains import Number, Parser, Product, declared
from minegen.cli import build_parser as minegen_parser
from tilegen.cli import build_parser as tilegen_parser


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    yield path, parser
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _commands(sub, (*path, name))


def every_command():
    for prog, build in (("minegen", minegen_parser), ("tilegen", tilegen_parser)):
        yield from _commands(build(), (prog,))


def flat(text: str) -> str:
    return " ".join(text.split())


def rendered(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The option's entry as ``--help`` prints it (argparse's own formatter, wrapped lines
    joined)."""
    f = parser._get_formatter()
    f.add_argument(action)
    return flat(f.format_help())


DOMAINED = [(path, parser, a) for path, parser in every_command() for a in parser._actions
            if declared(a.type) is not None]
# a bound written by hand: an interval, a range "a..b", or "at most / at least / up to N"
# (not a rate "per" something: "at most 4 per CPU" is the machine's own bound, said apart)
HAND_BOUND = re.compile(r"[\[(]\s*-?[\d.^]+\s*,\s*-?[\d.^]+\s*[\])]|-?\b\d+\s*\.\.\s*-?\d+\b"
                        r"|\b(?:at most|at least|up to|no more than)\s+[\d,.]+(?!\s+per\b)")


def _id(path, a) -> str:
    return f"{' '.join(path)} {a.option_strings[0] if a.option_strings else a.dest}"


@pytest.mark.parametrize("path, parser, action", DOMAINED,
                         ids=[_id(p, a) for p, _, a in DOMAINED])
def test_the_help_states_the_domain_and_no_other_bound(path, parser, action):
    domain = declared(action.type)
    entry = rendered(parser, action)
    assert flat(str(domain)) in entry, (entry, str(domain))
    rest = entry.replace(flat(str(domain)), "")
    assert not HAND_BOUND.findall(rest), (entry, HAND_BOUND.findall(rest))
    if isinstance(domain, Number) and action.default is not None and not (
            getattr(action.type, "each", False)):
        assert domain.holds(action.default), (action.default, str(domain))


def test_the_walk_sees_every_domain_including_the_hand_written_types():
    ids = {_id(p, a) for p, _, a in DOMAINED}
    assert {"tilegen generate --seed", "tilegen generate --index", "tilegen bench --levels",
            "minegen bench --boards", "minegen audit --n"} <= ids
    assert len(ids) >= 43  # on 2026-12-04
    # every option with a numeric type is walked (none without a declared domain)
    numeric = {_id(p, a) for p, parser in every_command() for a in parser._actions
               if callable(a.type) and a.type is not None and hasattr(a.type, "bad_values")}
    assert numeric <= ids


@pytest.mark.parametrize("option", ["--boards", "--repeats", "--plain-boards"])
def test_tilegen_bench_takes_in_its_library_what_its_help_says(option):
    """The bench's library checks the same domains (its --boards once took 65,536 on the
    command line and refused more than 4,096 after the tables were read): the top of each
    domain passes them and the bench goes on to the next check (here, a level no table
    has)."""
    from tilegen import bench
    from tilegen.errors import InputError

    (parser,) = [p for path, p in every_command() if path == ("tilegen", "bench")]
    domain = declared(parser._option_string_actions[option].type)
    kwargs = {option.lstrip("-").replace("-", "_"): domain.hi}
    with pytest.raises(InputError, match="no preset row beijing:99:1"):
        bench.run([99], **kwargs)
    kwargs = {option.lstrip("-").replace("-", "_"): domain.hi + 1}
    with pytest.raises(InputError, match=re.escape(str(domain))):
        bench.run([99], **kwargs)


BOUNDED = [(path, parser, b) for path, parser in every_command()
           for b in getattr(parser, "bounds", [])]


def test_minegen_bench_declares_its_total_work():
    assert [(p, str(b)) for p, _, b in BOUNDED if p == ("minegen", "bench")], BOUNDED


@pytest.mark.parametrize("path, parser, bound", BOUNDED,
                         ids=[" ".join(p) for p, _, _ in BOUNDED])
def test_a_bound_on_several_options_is_stated_and_refused_in_one_line(path, parser, bound,
                                                                      tmp_path, monkeypatch):
    assert flat(str(bound)) in flat(parser.format_help())
    # each option at the top of its own domain: every value alone is taken, the product not
    actions = {o: parser._option_string_actions[o] for o in bound.options}
    argv = []
    for o, a in actions.items():
        top = a.type.hi if not a.type.hi_open else a.type.hi - 1
        argv += [o, str(top)]
    required = [a for a in parser._actions if a.required and a.option_strings
                and a.option_strings[0] not in actions]
    for a in required:  # e.g. minegen bench --density
        argv += [a.option_strings[0], str(declared(a.type).hi)]
    monkeypatch.chdir(tmp_path)
    p = run_cli(path[0], *path[1:], *argv)
    line = p.stderr.strip()
    assert p.returncode == 2 and "\n" not in line and "Traceback" not in line, p.stderr
    assert line.startswith(f"{path[0]}: {' '.join(path[1:])}: ") and f"more than {bound.hi:,}" in line, line
    assert p.stdout == "" and list(tmp_path.iterdir()) == []


def test_minegen_bench_refuses_4m_boards_of_64x64_and_takes_the_documented_runs():
    """The issue's case, on the command line and in the library; the runs the docs name
    (decision 28: 15 repeats of 4000 boards at 30 x 16; the defaults at 64 x 64) fit."""
    from minegen import bench
    from minegen.errors import MinegenError

    p = run_cli("minegen", "bench", "--width", "64", "--height", "64", "--density", "0.2",
                "--boards", "4096", "--repeats", "1000")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "--boards 4096 x --repeats 1000 x --width 64 x --height 64 = 16,777,216,000 " \
           "cells of timed boards, more than 67,108,864: give fewer" in p.stderr
    with pytest.raises(MinegenError, match="more than 67,108,864"):
        bench.run(64, 64, 0.2, boards=4096, repeats=1000)
    for boards, repeats, w, h in ((4000, 15, 30, 16), (2000, 5, 64, 64), (4096, 4, 64, 64)):
        assert bench.WORK.problem({"--boards": boards, "--repeats": repeats, "--width": w,
                                   "--height": h}) == ""


def test_a_product_bound_names_only_options_of_its_parser():
    p = Parser(prog="x")
    p.add_argument("--a", type=Number(1, 10))
    with pytest.raises(ValueError, match="no option --b"):
        p.add_bound(Product(("--a", "--b"), 5, "things"))

"""The ``minegen`` command line: assembles commands, nothing else (STYLE 9).

Each command is a small function over the library. ``command`` (the project's
``boardcore.cli.command_for``) turns bad input (bad tables, bad options) into a message on
stderr and exit code 2: users never see a traceback for bad input. A DefectError is *not*
caught: a broken generator invariant must fail loudly (A1 EC10).
"""

from __future__ import annotations

import argparse
import json
import sys

from boardcore.cli import (BOARD_EXIT_HELP, VALIDATE_EXIT_HELP, command_for, interruptible,
                           version_line)
from boardcore.domains import INT64_MAX, Number, Parser
from boardcore.output import file_target, write_file

command = command_for("minegen")
RAW = argparse.RawDescriptionHelpFormatter  # the epilogs keep their line breaks


@command
def cmd_validate(args) -> int:
    from .table_loader import load_tables

    t = load_tables(args.tables)
    for w in t.warnings:
        print(w.format())
    print(
        f"tables OK: {t.root}: {len(t.board_gen)} board_gen rows over levels {t.levels()}, "
        f"{len(t.variations)} variation row(s), {len(t.warnings)} warning(s), "
        f"hash {t.content_hash[:12]}"
    )
    return 0


@command
@interruptible("minegen")
def cmd_generate(args) -> int:
    from .generate import generate
    from .render import draw, draw_record, fog_summary
    from .table_loader import load_tables

    if args.play:  # the target is checked before the board is made (boardcore.output)
        file_target(args.play, "--play", "board.html")
    tables = load_tables(args.tables)
    index = args.index
    if index is None and args.sigma is None:
        index = 0
    board = generate(args.level, args.depth, tables=tables, index=index, sigma=args.sigma,
                     tiers=bool(args.play))
    if args.play:  # the page's hint shows the board's tiers: they are computed for it
        from .play_page import page_html

        write_file(args.play, page_html(board), "--play", "board.html")
    if args.format == "json":
        doc = {
            "board": {
                "width": board.width,
                "height": board.height,
                "spawn": list(board.spawn),
                "mines": board.cells(board.mines),
                "fog": board.cells(board.fog),
            },
            "metrics": board.record,
        }
        print(json.dumps(doc))
    else:
        r = board.record
        print(f"board ({args.level}, {args.depth}) -> row ({r['row_level']}, {r['row_depth']}), "
              f"{board.width}x{board.height}, stream seed {r['stream_seed']}")
        print(draw(board))
        print(fog_summary(r))
        print()
        print(draw_record(r))
    return 0


@command
@interruptible("minegen")
def cmd_bench(args) -> int:
    from .bench import run

    print(json.dumps(run(args.width, args.height, args.density, args.target, args.attempts,
                         args.boards, args.seed, args.repeats)))
    return 0


COMMANDS_GROUP = "minegen.commands"


def _add_discovered_commands(sub) -> None:
    """Commands other packages register under the ``minegen.commands`` entry-point group
    (the audit's ``audit``, ``diff``, ``sweep``): each entry point is ``add(sub, command)``.
    This library imports none of them by name; a registered command whose import fails
    raises here, loudly, instead of vanishing from the command line."""
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=COMMANDS_GROUP), key=lambda e: e.name):
        ep.load()(sub, command)


def version_text() -> str:
    from .record import GENERATOR_VERSION, METRIC_VERSION

    return version_line("minegen", GENERATOR_VERSION, METRIC_VERSION)


def build_parser() -> argparse.ArgumentParser:
    from . import bench  # its options' domains (no kernel is imported)

    p = Parser(
        prog="minegen",
        description="Minesweeper-dungeon board generator (A1/A4) and its F4 batch audit.",
        epilog="Rules: docs/design.md; every term and code: docs/glossary.md (in the "
               "repository).",
    )
    p.add_argument("--version", action="version", version=version_text(),
                   help="code, generator and metric versions")
    sub = p.add_subparsers(dest="cmd", required=True)

    v = sub.add_parser("validate", epilog=VALIDATE_EXIT_HELP,
                       formatter_class=RAW,
                       help="validate a table root (exit 0, or 2 with every violation)")
    v.add_argument("--tables", default=None, help="table root (default: tables/)")
    v.set_defaults(func=cmd_validate)

    g = sub.add_parser("generate", epilog=BOARD_EXIT_HELP,
                       formatter_class=RAW, help="generate one board for (level, depth)")
    g.add_argument("level", type=Number(1, INT64_MAX), help="level L (level_index)")
    g.add_argument("depth", type=Number(0, 255), help="node depth D (the level's row with the "
                   "greatest depth <= D is read)")
    seed = g.add_mutually_exclusive_group()
    seed.add_argument("--index", type=Number(0, INT64_MAX), help="the batch's board I: derive_at('board_gen', sigma(L,D)+I) (default 0)")
    seed.add_argument("--sigma", type=Number(0, INT64_MAX), help="seed the stream with derive_at('board_gen', S)")
    g.add_argument("--tables", default=None, help="table root (default: tables/)")
    g.add_argument("--play", default=None, metavar="FILE",
                   help="also write FILE: a self-contained page where you play the board, "
                        "with the solver's hints (open it in a browser; nothing is fetched)")
    g.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: the board drawn with a legend and the solver's view; json: "
                        "board and record")
    g.set_defaults(func=cmd_generate)

    b = sub.add_parser("bench", epilog=BOARD_EXIT_HELP,
                       formatter_class=RAW, help="kernel speed on an ad-hoc no-fog row (JSON)")
    b.add_argument("--width", type=bench.SIDE, required=True, help="board width W")
    b.add_argument("--height", type=bench.SIDE, required=True, help="board height H")
    b.add_argument("--density", type=bench.DENSITY, required=True, help="mine density")
    b.add_argument("--target", type=bench.TARGET, default=0.85,
                   help="inferability target (default 0.85)")
    b.add_argument("--attempts", type=bench.ATTEMPTS, default=1,
                   help="max_gen_attempts of the ad-hoc row (default 1)")
    b.add_argument("--boards", type=bench.BOARDS, default=2000,
                   help="boards per timed repeat (default 2000)")
    b.add_argument("--seed", type=Number(0, INT64_MAX), default=0,
                   help="shifts which board indices are timed (default 0)")
    b.add_argument("--repeats", type=bench.REPEATS, default=5,
                   help="timed repeats; the median is reported (default 5)")
    b.add_bound(bench.WORK)
    b.set_defaults(func=cmd_bench)

    _add_discovered_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # `minegen ... | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""The ``tilegen`` command line: assembles commands, nothing else (STYLE 9).

Each command is a small function over the library. ``command`` turns InputError (bad
tables, bad options) into a message on stderr and exit code 2; argument errors are one
line too (``Parser.error``): users never see a traceback for bad input. A DefectError is
*not* caught: a broken generator invariant must fail loudly (decision 123).
"""

from __future__ import annotations

import argparse
import json
import sys

from boardcore import domains as dom
from boardcore.cli import (BOARD_EXIT_HELP, VALIDATE_EXIT_HELP, command_for, interruptible,
                           version_line)
from boardcore.domains import Number, Parser
from boardcore.output import file_target, write_file

from . import bench
from .codes import STRATEGY_NAMES
from .errors import InputError
from .generate import MAX_INDEX, index_problem, seed_problem
PROG = "tilegen"
LEVEL = Number(1, 2**31 - 1)  # the tables say which levels exist (then: exit 2, naming them)
REVISION = Number(1, 2**31 - 1)


command = command_for(PROG)
RAW = argparse.RawDescriptionHelpFormatter  # the epilogs keep their line breaks


def seed_value(text: str) -> int:
    """A uint64 seed: decimal, or hex with 0x."""
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if why := seed_problem(value):
        raise argparse.ArgumentTypeError(why)
    return value


def index_value(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if why := index_problem(value):
        raise argparse.ArgumentTypeError(why)
    return value


# the two hand-written types' domains (the help states them) and the walker's values
# (tests/test_option_domains.py); their messages are their own (runtime/tilegen.js says
# the same, tests/test_tilegen_js.py)
seed_value.domain = dom.SEED64
index_value.domain = Number(-1, MAX_INDEX, hi_open=True)
seed_value.bad_values = seed_value.domain.bad_values
index_value.bad_values = index_value.domain.bad_values


def level_list(text: str) -> tuple[int, ...]:
    """Comma-separated level ids, each in ``LEVEL``."""
    levels = tuple(LEVEL(x) for x in text.split(",") if x.strip())
    if not levels:
        raise argparse.ArgumentTypeError("no level given")
    return levels


level_list.bad_values = lambda: ["", ",", "1,x", "0", "1,2," + "9" * 30, "nan"]
level_list.domain, level_list.each = LEVEL, True


@command
def cmd_validate(args) -> int:
    from .table_loader import load_tables

    from .daily import optional_setting

    t = load_tables(args.tables)
    d = optional_setting(t)  # daily.toml's findings: TableError, exit 2
    daily = "no daily.toml" if d is None else f"dailies from level {d.level_id}" + "".join(
        f", {city} level {lv}" for city, lv in d.cities)
    for w in t.warnings:
        print(w.format())
    cities = [c.id for c in t.cities]
    print(f"tables OK: {t.root}: {len(t.keys())} preset row(s) over {len(cities)} city(ies) "
          f"({', '.join(cities)}), levels {sorted({k[1] for k in t.keys()})}, {daily}, "
          f"{len(t.warnings)} warning(s), hash {t.content_hash[:12]}")
    return 0


def _catalog_with(root, city: str, level: int, revision: int):
    """The loaded tables, or InputError naming what exists when (city, level, revision)
    has no preset row."""
    from .table_loader import load_tables

    catalog = load_tables(root)
    keys = catalog.keys()
    if (city, level, revision) in keys:
        return catalog
    catalog.city(city)  # InputError naming the known cities (the daily's words too)
    have: dict[int, list[int]] = {}
    for c, lv, rev in keys:
        if c == city:
            have.setdefault(rev, []).append(lv)
    known = "; ".join(f"revision {rev}: levels {', '.join(map(str, sorted(lv)))}"
                      for rev, lv in sorted(have.items()))
    raise InputError(f"no preset for {city} level {level} revision {revision}; {city} has "
                       f"{known}")


@command
@interruptible(PROG)
def cmd_generate(args) -> int:
    from .export import board_doc
    from .generate import generate_planned, plan_for
    from .render import draw_board, draw_trace, trace_run

    if args.tools and args.replay is None:
        raise InputError("--tools needs --replay STRATEGY")
    if args.play:  # the target is checked before the board is made (boardcore.output)
        file_target(args.play, "--play", "board.html")
    if args.daily is not None:
        from .daily import board_of
        from .table_loader import load_tables

        if args.level is not None or args.revision is not None:
            raise InputError("--daily DATE takes the level and revision from daily.toml; "
                             "drop LEVEL and --revision")
        plan, seed = board_of(load_tables(args.tables), args.city, args.daily)
    elif args.level is None:
        raise InputError("give the LEVEL (or --daily DATE for the city's daily board)")
    else:
        revision = 1 if args.revision is None else args.revision
        plan = plan_for(args.city, args.level, revision=revision,
                        content=_catalog_with(args.tables, args.city, args.level, revision))
        seed = args.seed
    result = generate_planned(plan, seed=seed, index=args.index)
    b = result.board
    if args.play:
        from .play_page import page

        which = (f"daily of {args.daily}" if args.daily is not None else f"seed {args.seed}"
                 if args.seed is not None else "production board"
                 if args.index in (None, -1) else f"audit board {args.index}")
        write_file(args.play, page(result, f"Play {plan.city_id} level {plan.level_id} "
                                                f"r{plan.revision}, {which}"),
                        "--play", "board.html")
    trace = None if args.replay is None else trace_run(result, args.replay, tools=args.tools)
    if args.format == "json":
        doc = {**b.as_json(), "metrics": result.metrics, "record": result.record,
               "exit": result.exit, "ok": result.ok, "failureReason": result.failure_reason,
               "attemptsUsed": result.attempts_used, "pieceDigest": b.digest(),
               "graphDigest": b.graph_digest(), "witness": board_doc(result)["witness"]}
        if trace is not None:
            doc["replay"] = trace.as_json(b)
        print(json.dumps(doc, ensure_ascii=False))
        return 0
    print(draw_board(result, None if args.daily is None else
                     f"the {plan.city_id} daily of {args.daily} (FNV-1a-64 of "
                     f"'{args.daily}:daily:{plan.city_id}')"))
    if trace is not None:
        print()
        print(draw_trace(b, trace))
    return 0


def _write_json(path: str, doc: dict, example: str) -> None:
    write_file(path, json.dumps(doc, ensure_ascii=False), "--out", example)


@command
def cmd_export_tables(args) -> int:
    from .export import rows_document
    from .table_loader import load_tables

    file_target(args.out, "--out", "rows.json")  # before the work (boardcore.output)
    doc = rows_document(load_tables(args.tables))
    _write_json(args.out, doc, "rows.json")
    print(f"wrote {len(doc['rows'])} row(s) of {args.tables or 'tables/tilematch'} "
          f"(hash {doc['tableHash'][:12]}) to {args.out}")
    return 0


@command
@interruptible(PROG)
def cmd_export(args) -> int:
    from .export import board_pack
    from .table_loader import load_tables

    file_target(args.out, "--out", "pack.json")  # before the work (boardcore.output)
    doc = board_pack(load_tables(args.tables))
    _write_json(args.out, doc, "pack.json")
    won = sum(b["witness"] is not None for b in doc["boards"])
    print(f"wrote {len(doc['boards'])} production board(s) ({won} with a witness) to {args.out}")
    return 0


@command
@interruptible(PROG)
def cmd_telemetry_synth(args) -> int:
    from boardcore.output import usable_folder

    from .table_loader import load_tables
    from .telemetry import players, synth

    out = usable_folder(args.out, "--out")  # before the boards: nothing made when refused
    if args.sessions * args.seeds > players.MAX_PLAYERS:
        raise InputError(f"--sessions {args.sessions} x --seeds {args.seeds} players per "
                         f"city is more than {players.MAX_PLAYERS:,}: give fewer")
    boards = synth.boards(load_tables(args.tables), args.seeds)
    # players walk each city's levels (decision 257): SESSIONS x SEEDS players per city
    frame, info = players.sessions(boards, args.sessions * args.seeds, args.days,
                                   players.Players(anomalies=args.anomalies), args.seed)
    data, meta = synth.write(out, frame, info)
    print(f"wrote {frame.height} SYNTHETIC sessions of {info['players_per_city']} players "
          f"per city on {boards.height} boards to {data} (model and the "
          f"{len(info['abnormal_boards'])} planted abnormal boards: {meta})")
    return 0


@command
@interruptible(PROG)
def cmd_bench(args) -> int:
    from .bench import format_table, run

    rows = run(args.levels, city=args.city, revision=args.revision, repeats=args.repeats,
               boards=args.boards, plain_boards=args.plain_boards, tables=args.tables,
               plain=args.plain)
    if args.format == "json":
        print(json.dumps(rows))
    else:
        print(format_table(rows))
    return 0


def version_text() -> str:
    from .record import GENERATOR_VERSION, METRIC_VERSION

    return version_line("tilegen", GENERATOR_VERSION, METRIC_VERSION)


def build_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description="Tile-match board generator (05 Difficulty Generator): one board per "
                    "(city, level, revision, seed), its layout checks and simulated players.",
        epilog="Rules: docs/tilegen.md; draws: docs/tile-draw-protocol.md; every term: "
               "docs/glossary.md (in the repository). The audit: `minegen audit --generator "
               "tilegen`. Exit codes: 0 ok, 2 bad input (one message, no traceback).",
    )
    p.add_argument("--version", action="version", version=version_text(),
                   help="code, generator and metric versions")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)

    v = sub.add_parser("validate", epilog=VALIDATE_EXIT_HELP,
                       formatter_class=RAW,
                       help="validate a table root (exit 0, or 2 with every violation)",
                       description="Load the tile-match tables; print every diagnostic "
                                   "(errors and warnings). Exit 0 when no error, else 2.")
    v.add_argument("--tables", default=None, help="table root (default: tables/tilematch/)")
    v.set_defaults(func=cmd_validate)

    g = sub.add_parser("generate", epilog=BOARD_EXIT_HELP,
                       formatter_class=RAW, help="generate one board of (city, level) and draw it",
                       description="Generate one board (default: the production board, "
                                   "seed FNV-1a-64 of 'city:level:revision').")
    g.add_argument("city", help="city id, e.g. beijing")
    g.add_argument("level", type=LEVEL, nargs="?", default=None,
                   help="level id, as the tables name it (left out with --daily)")
    g.add_argument("--revision", type=REVISION, default=None, help="generation revision (default 1)")
    seed = g.add_mutually_exclusive_group()
    seed.add_argument("--seed", type=seed_value, default=None,
                      help="a raw uint64 seed (decimal or 0x hex): a debug replay board")
    seed.add_argument("--index", type=index_value, default=None,
                      help="audit board I of the row (-1: the production board, the default)")
    seed.add_argument("--daily", default=None, metavar="DATE",
                      help="the city's daily board of DATE (YYYY-MM-DD, UTC): seed "
                           "FNV-1a-64('DATE:daily:city'), the preset daily.toml names")
    g.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: header, layers, legend, lanes (and the replay); json: the "
                        "BoardState, metrics and record")
    g.add_argument("--tables", default=None, help="table root (default: tables/tilematch/)")
    g.add_argument("--replay", choices=STRATEGY_NAMES, default=None, metavar="STRATEGY",
                   help="replay the first simulated run of STRATEGY (" + ", ".join(STRATEGY_NAMES)
                        + ") on the returned attempt, step by step")
    g.add_argument("--play", default=None, metavar="FILE",
                   help="also write FILE: a self-contained page where you play the board "
                        "(open it in a browser; nothing is fetched)")
    g.add_argument("--tools", action="store_true",
                   help="with --replay: the tool-assisted run (Remove/Shuffle/Undo at a "
                        "hard deadlock) instead of the tool-free one")
    g.set_defaults(func=cmd_generate)

    for name, func, short, long in (
            ("export-tables", cmd_export_tables,
             "write the table rows as runtime/tilegen.js reads them (JSON)",
             "Write every preset row of a table root, resolved as the kernels read it, to "
             "one JSON file for runtime/tilegen.js (docs/tilegen-js.md)."),
            ("export", cmd_export,
             "write the production boards of a table root as one board pack",
             "Generate the production board of every preset row and write them, with "
             "witness, metrics, record and digests, as one JSON board pack "
             "(docs/tilegen-js.md).")):
        x = sub.add_parser(name, formatter_class=RAW, epilog=BOARD_EXIT_HELP, help=short,
                           description=long)
        x.add_argument("--out", required=True, help="the JSON file to write")
        x.add_argument("--tables", default=None, help="table root (default: tables/tilematch/)")
        x.set_defaults(func=func)

    t = sub.add_parser("telemetry", help="synthetic player telemetry (tests and demos)",
                       formatter_class=RAW, epilog=BOARD_EXIT_HELP,
                       description="Telemetry tools (docs/telemetry.md). Reconciling real "
                                   "telemetry is `minegen reconcile`.")
    tsub = t.add_subparsers(dest="telemetry_cmd", required=True, parser_class=Parser)
    s = tsub.add_parser("synth", formatter_class=RAW, epilog=BOARD_EXIT_HELP,
                        help="write synthetic sessions with planted abnormal boards",
                        description="Sessions of a documented synthetic player model: "
                                    "players of varied skill walk each city's levels in "
                                    "order on a board of each row (the production board "
                                    "or audit boards 0 .. SEEDS-2), retrying or quitting, "
                                    "with planted abnormal boards; every file says it is "
                                    "synthetic.")
    s.add_argument("--out", required=True, help="folder to write into")
    s.add_argument("--seeds", type=Number(1, 4096, what="boards"), default=6, help="boards per row (default 6)")
    s.add_argument("--sessions", type=Number(1, 10**6, what="sessions"), default=400, help="SESSIONS x SEEDS players per city: about SESSIONS "
                   "sessions on each level-1 board, fewer players at later levels (default "
                   "400)")
    s.add_argument("--days", type=Number(1, 3660, what="days"), default=30, help="days the sessions span (default 30)")
    s.add_argument("--anomalies", type=Number(0, 4096, what="boards"), default=4, help="planted abnormal boards (default 4)")
    s.add_argument("--seed", type=dom.SEED64, default=7, help="seed of the model's draws (default 7)")
    s.add_argument("--tables", default=None, help="table root (default: tables/tilematch/)")
    s.set_defaults(func=cmd_telemetry_synth)

    b = sub.add_parser("bench", epilog=BOARD_EXIT_HELP,
                       formatter_class=RAW,
                       help="kernel speed per attempt, and against the plain-Python reading",
                       description="Per reference level: microseconds per attempt of the "
                                   "kernel (layout + 6R runs + search; kernel time / sum of "
                                   "attempts_used, median over repeats after a warm-up), and "
                                   "of the plain-Python reading on the same boards.")
    b.add_argument("--levels", type=level_list, default=(1, 2, 3, 4, 5, 6),
                   help="comma-separated level ids (default 1,2,3,4,5,6)")
    b.add_argument("--city", default="beijing", help="city id (default beijing)")
    b.add_argument("--revision", type=REVISION, default=1, help="revision (default 1)")
    b.add_argument("--repeats", type=bench.REPEATS, default=7,
                   help="timed kernel repeats; the median is reported (default 7)")
    b.add_argument("--boards", type=bench.BOARDS, default=32,
                   help="audit boards 0..N-1 per kernel repeat (default 32)")
    b.add_argument("--plain-boards", type=bench.PLAIN_BOARDS, default=2,
                   help="boards the plain reading plays (the first of them; the ratio "
                        "compares the kernel on these same boards; default 2)")
    b.add_argument("--plain", metavar="FILE", default=None,
                   help="the plain-Python reading to compare with (a checkout's "
                        "benchmarks/tilegen_plain.py: a Python file defining run_seeds(plan, "
                        "seeds)); without it the kernel alone is timed")
    b.add_argument("--format", choices=("text", "json"), default="text",
                   help="text: a table; json: one object per level")
    b.add_argument("--tables", default=None, help="table root (default: tables/tilematch/)")
    b.set_defaults(func=cmd_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as e:  # --help, --version, argument errors: argparse's own exit code
        return int(e.code or 0)
    try:
        return args.func(args)
    except BrokenPipeError:  # `tilegen ... | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

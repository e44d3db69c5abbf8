"""Audit commands for the ``minegen`` CLI (thin: parse, call, print)."""

from __future__ import annotations

import sys

from .errors import EXIT_ASSERTION_FAILED, EXIT_BAD_INPUT, EXIT_OK, EXIT_RUN_FAILED

EXIT_HELP = f"""exit codes:
  {EXIT_OK}  every hard line (A, A'', A', B, B') holds
  {EXIT_ASSERTION_FAILED}  some hard line failed (the report is still written)
  {EXIT_BAD_INPUT}  bad input (tables, options)
  {EXIT_RUN_FAILED}  the run could not complete (cluster unreachable, work lost)"""


def cmd_audit(args) -> int:
    from .audit import run_audit, summary
    from .cluster import slurm_job_script
    from .options import merge

    opts = merge(args)
    if args.dry_run:
        if not opts.slurm:
            print("minegen: --dry-run prints the SLURM job script; give --slurm PROFILE",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
        print(slurm_job_script(opts.slurm))
        return EXIT_OK
    result = run_audit(opts)
    print(summary(result))
    return result.exit_code


def add_commands(sub, command) -> None:
    import argparse

    a = sub.add_parser(
        "audit", help="the F4 batch audit of a table root on Dask",
        description="Generate N boards per table row on a Dask cluster, aggregate, assert the "
                    "F4 lines and write a versioned report.",
        epilog=EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--tables", default=None, help="table root (default: tables/)")
    a.add_argument("--n", type=int, default=None, help="boards per row (default 256, max 4096)")
    a.add_argument("--rows", default=None, help="only these rows, e.g. 1:0,2:4 (R1 floor)")
    a.add_argument("--profile", default=None, help="configs/NAME.toml ([audit] options)")
    where = a.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, help="tcp://HOST:PORT of an existing cluster")
    where.add_argument("--workers", type=int, default=None,
                       help="embedded LocalCluster worker processes (default: CPU count)")
    a.add_argument("--slurm", default=None, help="configs/NAME.toml with a [slurm] table")
    a.add_argument("--dry-run", action="store_true", help="with --slurm: print the job script")
    a.add_argument("--seeds-per-task", type=int, default=None,
                   help="split each row into tasks of K boards (default: one task per row)")
    a.add_argument("--out", default=None, help="output root (default: reports)")
    a.add_argument("--resume", default=None, metavar="RUN",
                   help="complete an interrupted run (its run id or .partial-* folder), "
                        "reusing the rows it already finished")
    a.set_defaults(func=command(cmd_audit))

    d = sub.add_parser(
        "diff", help="row-by-row comparison of two audit runs (Markdown + HTML page)",
        description="Compare two audit runs row by row: inferability percentiles, retry "
                    "rate, exits and every assertion that flipped. Runs of different "
                    "metric_version are refused unless --allow-cross-version.")
    d.add_argument("run_a", help="run folder or run id (looked up under --out)")
    d.add_argument("run_b", help="run folder or run id (looked up under --out)")
    d.add_argument("--out", default="reports", help="output root to look runs up in and to "
                   "write the HTML page under (default: reports)")
    d.add_argument("--allow-cross-version", action="store_true",
                   help="compare runs of different metric_version (every output says so)")
    d.set_defaults(func=command(_lazy("pipeline.diff", "cmd_diff")))

    w = sub.add_parser(
        "sweep", help="audit one row across values of one table field",
        description="Run the audit for one row across values of one BoardGenTable field and "
                    "report, per value, p10/p50 inferability, each hard line and the retry "
                    "rate, plus the boundary value for which all hard lines hold.",
        epilog=EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--row", required=True, help="L:D of the row to vary (R1 floor)")
    w.add_argument("--vary", required=True, metavar="FIELD=START:STOP:STEP",
                   help="e.g. mine_density=0.10:0.20:0.02 (STOP included when on the grid)")
    w.add_argument("--tables", default=None)
    w.add_argument("--n", type=int, default=256)
    where = w.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None)
    where.add_argument("--workers", type=int, default=None)
    w.add_argument("--slurm", default=None)
    w.add_argument("--seeds-per-task", type=int, default=None)
    w.add_argument("--out", default="reports")
    w.set_defaults(func=command(_lazy("pipeline.sweep", "cmd_sweep")))


def _lazy(module: str, name: str):
    """The command function ``name`` of ``module``, imported only when the command runs."""
    import functools
    import importlib

    def run(args):
        return getattr(importlib.import_module(module), name)(args)

    return functools.wraps(run)(run)

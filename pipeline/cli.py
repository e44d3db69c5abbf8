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
    a.set_defaults(func=command(cmd_audit))

"""The audit's commands for the ``minegen`` command line, registered through the
``minegen.commands`` entry-point group (``pyproject.toml``): the generator library's CLI
discovers them and imports nothing of the audit itself.

Each ``add_*`` only declares arguments; the job module (and Dask) is imported when the
command runs. Thin: parse, call the job, print.
"""

from __future__ import annotations

import argparse
import sys

from boardcore import domains as dom

from . import audit_options
from .errors import EXIT_ASSERTION_FAILED, EXIT_BAD_INPUT, EXIT_OK, EXIT_RUN_FAILED
from .options import DEFAULT_N, DEFAULT_OUT, SPOT_BOARDS, VERIFY_MODES

_COMMON_CODES = f"""  {EXIT_BAD_INPUT}  bad input (tables, options, an unusable --out)
  {EXIT_RUN_FAILED}  the run could not complete (no cluster, no worker, work lost); finished
     rows are kept for --resume
  130 / 143  interrupted by SIGINT (Ctrl-C) / SIGTERM; finished rows are kept"""
EXIT_HELP = f"""exit codes:
  {EXIT_OK}  every hard line holds
  {EXIT_ASSERTION_FAILED}  some hard line failed (the report is still written)
{_COMMON_CODES}"""
SWEEP_EXIT_HELP = f"""exit codes:
  {EXIT_OK}  at least one valid value holds every hard line (the boundary exists)
  {EXIT_ASSERTION_FAILED}  no valid value holds every hard line (the sweep is still written)
  {EXIT_BAD_INPUT}  bad input (tables, options, an unusable --out)
  {EXIT_RUN_FAILED}  the run could not complete (no cluster, no worker, work lost); a
     sweep writes nothing then: run it again
  130 / 143  interrupted by SIGINT (Ctrl-C) / SIGTERM; nothing is written"""
DIFF_EXIT_HELP = f"""exit codes:
  {EXIT_OK}  compared (with --fail-on-regression: and no hard line flipped pass -> fail)
  {EXIT_ASSERTION_FAILED}  with --fail-on-regression: some hard line flipped pass -> fail
  {EXIT_BAD_INPUT}  bad input (an unknown run, runs of different generators or, without
     --allow-cross-version, of different metric_version)"""
RUNS_EXIT_HELP = f"""exit codes:
  {EXIT_OK}  listed (or removed)
  {EXIT_BAD_INPUT}  bad input (a partial run named that is unknown or running, an empty --out)"""
GENERATOR_HELP = ("generator to audit: a registered name (default minegen) or "
                  "module:attribute")


def cmd_audit(args) -> int:
    from .engine.session import quiet_distributed, require_sbatch, slurm_job_script
    from .jobs.audit import run_audit, summary
    from .options import merge

    quiet_distributed()  # for the rest of this process: the audit reports losses itself
    opts = merge(args)
    if args.junit_xml:  # a target that cannot take the file is refused before the run
        from boardcore.output import file_target

        file_target(args.junit_xml, "--junit-xml", "audit.xml")
    if args.dry_run:
        if not opts.slurm:
            print("minegen: --dry-run prints the SLURM job script; give --slurm PROFILE",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
        script, address = slurm_job_script(opts.slurm)
        print(script)
        print(f"minegen: note: the scheduler address in this script ({address}) belongs to "
              "the scheduler this dry run started and stopped; a real run starts its own and "
              "submits scripts naming that one", file=sys.stderr)
        return EXIT_OK
    if opts.slurm:  # at once: nothing loaded, written or started without it
        require_sbatch()
    result = run_audit(opts)
    print(summary(result))
    if args.junit_xml:
        from .reports import junit

        print(f"JUnit: {junit.write(args.junit_xml, junit.audit_document(result))}")
    return result.exit_code


def cmd_diff(args) -> int:
    from .jobs.diff import cmd_diff as run

    return run(args)


def cmd_sweep(args) -> int:
    from .engine.session import quiet_distributed
    from .jobs.sweep import cmd_sweep as run

    quiet_distributed()  # for the rest of this process: the sweep reports losses itself
    return run(args)


def cmd_tune(args) -> int:
    from .engine.session import quiet_distributed
    from .jobs.tune import cmd_tune as run

    quiet_distributed()
    return run(args)


def cmd_runs(args) -> int:
    from .jobs.runs import cmd_runs as run

    return run(args)


def _cluster_options(p) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="an existing Dask scheduler: HOST:PORT or tcp://HOST:PORT")
    where.add_argument("--workers", type=dom.WORKERS, default=None, metavar="K",
                       help="embedded LocalCluster worker processes (default: CPU count; at "
                            "most 4 per CPU)")
    p.add_argument("--slurm", default=None, metavar="PROFILE",
                   help="run on SLURM: a profile with a [slurm] table (path or NAME for "
                        "configs/NAME.toml); every value is checked when it is read (exit "
                        "2; configs/slurm.toml says what each key takes), and sbatch must "
                        "be on PATH (exit 3)")
    p.add_argument("--seeds-per-task", type=dom.SEEDS_PER_TASK, default=None, metavar="K",
                   help="split each row into tasks of K boards (default: rows split by "
                        "expected cost, heaviest first)")
    p.add_argument("--worker-timeout", type=dom.WORKER_TIMEOUT, default=None, metavar="SECONDS",
                   help="give up (exit 3) when no worker joins, or none is left, for this "
                        "long (default 60; 600 with --slurm)")


def add_audit(sub, command) -> None:
    a = sub.add_parser(
        "audit", help="the batch audit of a table root on Dask",
        description="Generate N boards per table row on a Dask cluster, aggregate, judge "
                    "every line and write a versioned report.",
        epilog=EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--generator", default=None, help=GENERATOR_HELP)
    a.add_argument("--tables", default=None, help="table root (default: the generator's)")
    a.add_argument("--n", type=dom.N_BOARDS, default=None, help=f"boards per row (default {DEFAULT_N})")
    a.add_argument("--rows", default=None, help="only these rows, e.g. 1:0,2:4 (a subset "
                   "run never becomes LATEST)")
    audit_options.add_arguments(a)  # the options capabilities bring (registered)
    a.add_argument("--profile", default=None, metavar="PROFILE",
                   help="[audit] options from a profile: a path, or NAME for "
                        "configs/NAME.toml (smoke, nightly, slurm)")
    _cluster_options(a)
    a.add_argument("--dry-run", action="store_true",
                   help="with --slurm: print the job script a run would submit, and submit "
                        "nothing (the profile is checked as for a run; sbatch is not needed)")
    a.add_argument("--out", default=None, help=f"output root (default: {DEFAULT_OUT})")
    a.add_argument("--junit-xml", default=None, metavar="PATH",
                   help="also write the run as JUnit XML: a test case per (row, hard line), "
                        "a failure carrying the line's sentence and the report's link (for "
                        "a CI server's test dashboard; the exit code is unchanged)")
    a.add_argument("--resume", default=None, metavar="RUN",
                   help="complete an interrupted run (its run id or .partial-* folder), "
                        "reusing the rows it already finished")
    a.add_argument("--verify", default=None, choices=VERIFY_MODES,
                   help="with --resume, how each reused shard is proven: spot (default) "
                        "checks its bytes against the run's journal and makes "
                        f"{SPOT_BOARDS} of its boards again, picked afresh for this resume "
                        "(an accident is caught); full makes every board of every reused "
                        "shard again (as long as computing them: the one check that holds "
                        "against whoever could write the run folder)")
    a.set_defaults(func=command(cmd_audit))


def add_diff(sub, command) -> None:
    d = sub.add_parser(
        "diff", help="row-by-row comparison of two audit runs (Markdown + HTML page)",
        description="Compare two audit runs row by row: the row's table values, the "
                    "generator's compared figures and every line that flipped. Runs of "
                    "different metric_version are refused unless --allow-cross-version.",
        epilog=DIFF_EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("run_a", help="run folder, run id (or a unique prefix) or LATEST, looked "
                   "up under --out")
    d.add_argument("run_b", help="the run to compare with run_a (same forms)")
    d.add_argument("--generator", default=None, help="whose LATEST a run name reads "
                   "(default minegen); the runs' own manifests name their generator")
    d.add_argument("--out", default=DEFAULT_OUT, help="output root to look runs up in and "
                   f"to write the HTML page under (default: {DEFAULT_OUT})")
    d.add_argument("--allow-cross-version", action="store_true",
                   help="compare runs of different metric_version (every output says so)")
    d.add_argument("--fail-on-regression", action="store_true",
                   help="exit 1 when any hard line flips pass -> fail from run_a to run_b")
    d.set_defaults(func=command(cmd_diff))


def add_sweep(sub, command) -> None:
    w = sub.add_parser(
        "sweep", help="audit one row across values of one table field",
        description="Run the audit for one row across values of one table field and "
                    "report, per value, each hard line and the generator's figures, plus "
                    "the boundary value for which all hard lines hold.",
        epilog=SWEEP_EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--generator", default=None, help=GENERATOR_HELP)
    w.add_argument("--row", required=True, help="the row to vary, e.g. 2:4")
    w.add_argument("--vary", required=True, metavar="FIELD=START:STOP:STEP",
                   help="e.g. mine_density=0.10:0.20:0.02 (STOP included when on the grid)")
    w.add_argument("--tables", default=None, help="table root (default: the generator's)")
    w.add_argument("--n", type=dom.N_BOARDS, default=DEFAULT_N,
                   help=f"boards per value (default {DEFAULT_N})")
    _cluster_options(w)
    w.add_argument("--out", default=DEFAULT_OUT, help=f"output root (default: {DEFAULT_OUT})")
    w.set_defaults(func=command(cmd_sweep))


def add_runs(sub, command) -> None:
    r = sub.add_parser(
        "runs", help="list the runs under an output folder; remove partial ones",
        description="List finished and partial (interrupted) runs under --out, newest "
                    "last, with what each holds; --remove-partial removes partial runs no "
                    "process holds. It only reads, unless it removes: a read-only archive "
                    "is listed.",
        epilog=RUNS_EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--out", default=DEFAULT_OUT, help=f"output root (default: {DEFAULT_OUT})")
    r.add_argument("--remove-partial", nargs="+", default=None, metavar="RUN",
                   help="remove these partial runs (run ids), or 'all'")
    r.set_defaults(func=command(cmd_runs))


TUNE_EXIT_HELP = f"""exit codes:
  {EXIT_OK}  the proposed tables pass their own audit (--apply: applied)
  {EXIT_ASSERTION_FAILED}  some hard line still fails on the proposed tables (patch.md names the rows
     no table change fixes, with the evidence)
{_COMMON_CODES}"""


def add_tune(sub, command) -> None:
    t = sub.add_parser(
        "tune", help="propose, per failing row, the table change that fixes it at the "
                     "least cost to the player",
        description="For each row failing a hard line (rows the table marks tune_locked "
                    "excepted), audit the fields that move that line, one at a time and then "
                    "in pairs, with the audit's seeds; propose the candidate that holds every "
                    "hard line, keeps the row's features, clears its thresholds with margin "
                    "and costs the player least. Writes <out>/tune/<id>/: a proposed table "
                    "root, tune.html, patch.md, the audit of the proposed tables and its "
                    "diff against the baseline; --apply ID writes the proposal into the "
                    "tables.",
        epilog=TUNE_EXIT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--generator", default=None, help=GENERATOR_HELP)
    t.add_argument("--tables", default=None, help="table root (default: the one --run "
                   "audited, else the generator's)")
    t.add_argument("--n", type=dom.N_BOARDS, default=None,
                   help=f"boards per row and per candidate (default {DEFAULT_N})")
    t.add_argument("--run", default=None, metavar="RUN",
                   help="start from this finished audit instead of auditing the tables "
                        "first, and tune the tables it audited (run id, prefix, LATEST or "
                        "folder)")
    t.add_argument("--resume", dest="resume_tune", default=None, metavar="ID",
                   help="complete an interrupted tune (its id under <out>/tune/)")
    t.add_argument("--apply", default=None, metavar="ID",
                   help="write a finished tune's proposed tables over the root it tuned "
                        "(or --tables, a root with the same files); refused when those "
                        "files changed since")
    t.add_argument("--only", default=None, metavar="ROWS",
                   help="with --apply: only these rows' proposals, e.g. 3:4,4:2 (as --rows)")
    _cluster_options(t)
    t.add_argument("--out", default=None, help=f"output root (default: {DEFAULT_OUT})")
    t.set_defaults(func=command(cmd_tune), rows=None, profile=None, resume=None)

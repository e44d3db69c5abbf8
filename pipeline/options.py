"""Audit options: defaults < profile (configs/NAME.toml, section [audit]) < command-line flags.

Every bad value is a MinegenError (exit 2) naming the option and the fix.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from minegen.errors import MinegenError

from .engine.session import ClusterSpec

DEFAULT_N = 256
DEFAULT_OUT = "reports"
KNOWN_KEYS = {"generator", "tables", "n", "rows", "scheduler", "workers", "seeds_per_task",
              "out", "slurm"}


@dataclass(frozen=True)
class AuditOptions:
    generator: str | None = None  # registered name or module:attribute (default minegen)
    tables: str | None = None
    n: int = DEFAULT_N
    rows: tuple = ()  # row keys, or their typed form ("2:4"); empty = every row
    scheduler: str | None = None
    workers: int | None = None
    seeds_per_task: int | None = None
    out: str = DEFAULT_OUT
    slurm: dict = field(default_factory=dict)
    profile: str | None = None
    resume: str | None = None  # run id or .partial-* folder of an interrupted run

    def cluster(self, scratch: str | None = None) -> ClusterSpec:
        return ClusterSpec(scheduler=self.scheduler, workers=self.workers, slurm=self.slurm,
                           scratch=scratch)


def parse_rows(text: str | list | None) -> tuple[str, ...]:
    """``--rows 1:0,2:4`` (or a profile's list) -> the typed rows; the generator parses
    each one (``Generator.parse_key``) when the job starts, before anything is written."""
    if not text:
        return ()
    items = text if isinstance(text, list) else str(text).split(",")
    return tuple(str(item).strip() for item in items)


def read_toml(path: str, what: str) -> dict:
    p = Path(path)
    try:
        return tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MinegenError(f"{what} {path} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise MinegenError(f"{what} {path} is not a readable TOML file: {e}") from None


def slurm_options(path: str) -> dict:
    doc = read_toml(path, "--slurm profile")
    section = doc.get("slurm")
    if not isinstance(section, dict) or not section:
        raise MinegenError(f"--slurm profile {path} needs a [slurm] table of SLURMCluster "
                           "options (queue, cores, memory, walltime, jobs ...)")
    return section


def from_profile(path: str) -> AuditOptions:
    doc = read_toml(path, "--profile")
    audit = doc.get("audit", {})
    if not isinstance(audit, dict):
        raise MinegenError(f"--profile {path}: [audit] must be a table")
    unknown = set(audit) - KNOWN_KEYS
    if unknown:
        raise MinegenError(f"--profile {path}: unknown [audit] key(s) {sorted(unknown)}; "
                           f"known: {sorted(KNOWN_KEYS)}")
    opts = AuditOptions(profile=path)
    for key, value in audit.items():
        if key == "rows":
            value = parse_rows(value)
        elif key == "slurm":
            value = slurm_options(str(value))
        opts = replace(opts, **{key: value})
    if isinstance(doc.get("slurm"), dict) and not opts.slurm and not opts.scheduler:
        opts = replace(opts, slurm=doc["slurm"])
    return opts


def merge(args) -> AuditOptions:
    """Profile (if any), then every flag the user gave on the command line.

    With --resume the run's own options (tables, n, rows, seeds per task) come from the
    interrupted run; only where it runs (cluster flags) and --out may be given.
    """
    if getattr(args, "resume", None):
        clash = [f"--{k}" for k in ("tables", "n", "rows", "profile", "seeds_per_task")
                 if getattr(args, k) is not None]
        if clash:
            raise MinegenError(f"--resume takes the run's own options; drop {', '.join(clash)}")
    opts = from_profile(args.profile) if args.profile else AuditOptions()
    if getattr(args, "resume", None):
        opts = replace(opts, resume=args.resume)
    flags = {
        "generator": getattr(args, "generator", None), "tables": args.tables, "n": args.n, "scheduler": args.scheduler,
        "workers": args.workers, "seeds_per_task": args.seeds_per_task, "out": args.out,
    }
    opts = replace(opts, **{k: v for k, v in flags.items() if v is not None})
    if args.rows:
        opts = replace(opts, rows=parse_rows(args.rows))
    if args.slurm:
        opts = replace(opts, slurm=slurm_options(args.slurm))
    check(opts)
    return opts


def check(opts: AuditOptions) -> None:
    problems = []
    if not isinstance(opts.n, int) or opts.n < 1:  # the generator's own bound: at start
        problems.append(f"n must be an int >= 1; got {opts.n!r}")
    if opts.workers is not None and (not isinstance(opts.workers, int) or opts.workers < 1):
        problems.append(f"workers must be an int >= 1; got {opts.workers!r}")
    if opts.seeds_per_task is not None and (
            not isinstance(opts.seeds_per_task, int) or opts.seeds_per_task < 1):
        problems.append(f"seeds-per-task must be an int >= 1; got {opts.seeds_per_task!r}")
    chosen = [x for x in (opts.scheduler, opts.slurm) if x]
    if len(chosen) > 1:
        problems.append("give at most one of --scheduler and --slurm")
    if opts.scheduler and opts.workers:
        problems.append("--workers sizes the embedded cluster; it cannot go with --scheduler")
    if opts.scheduler and not str(opts.scheduler).startswith(("tcp://", "tls://", "inproc://")):
        problems.append(f"--scheduler must look like tcp://HOST:PORT; got {opts.scheduler!r}")
    if problems:
        raise MinegenError("bad audit options: " + "; ".join(problems))

"""Run options: defaults < profile (configs/NAME.toml, section [audit]) < command-line flags.

Every bad value is an InputError (exit 2) naming the option and the fix: a profile value
of the wrong type, an empty ``--rows``, a scheduler address Dask would not take, an output
folder that cannot hold a run (a file, read-only, under /proc or /dev, no space left).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

from boardcore import assets, files
from boardcore import domains as dom
from boardcore.errors import InputError
from boardcore.output import usable_folder
from boardcore.tables import BOM, BOM_RULE

from . import audit_options
from .defaults import DEFAULT_OUT
from .engine.session import ClusterSpec
from .slurm import PATH_WORD, check_slurm

DEFAULT_N = 256
# --verify (with --resume): how the boards of each reused shard are checked (engine.spot)
VERIFY_MODES = ("spot", "full")
SPOT_BOARDS = 3  # boards of each reused shard that the default check makes again
CONFIGS = assets.path("configs")  # the project's own profiles (shipped)
# [audit] keys of a profile and the type each must have
KNOWN_KEYS: dict[str, type | tuple[type, ...]] = {
    "generator": str, "tables": str, "n": int, "rows": (str, list), "scheduler": str,
    "workers": int, "seeds_per_task": int, "out": str, "slurm": str,
    "worker_timeout": (int, float)}  # + a registered option's key (audit_options): str
_SCHEDULER = re.compile(r"^(?:(tcp|tls|inproc|ucx|ws|wss)://)?([^/\s:]+|\[[0-9a-fA-F:]+\]):(\d+)$")


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
    worker_timeout: float | None = None  # None: the session's default for the cluster kind
    extras: tuple[tuple[str, str], ...] = ()  # (key, value) of registered options given
    verify: str = "spot"  # with resume: how reused shards are checked (VERIFY_MODES)

    def extra(self, key: str) -> str | None:
        """The value of the registered option ``key`` (``audit_options``), None: not given."""
        return dict(self.extras).get(key)

    def cluster(self, scratch: str | None = None) -> ClusterSpec:
        timeout = self.worker_timeout
        if timeout is None and self.slurm:
            timeout = self.slurm.get("worker_timeout")
        return ClusterSpec(scheduler=scheduler_address(self.scheduler) if self.scheduler
                           else None, workers=self.workers, slurm=self.slurm,
                           scratch=scratch, logs=str(Path(self.out) / "slurm-logs"),
                           worker_timeout=timeout, out=str(self.out))


def parse_rows(text: str | list | None) -> tuple[str, ...]:
    """``--rows 1:0,2:4`` (or a profile's list) -> the typed rows; the generator parses
    each one (``Generator.parse_key``) when the job starts, before anything is written."""
    if text is None:
        return ()
    items = text if isinstance(text, list) else str(text).split(",")
    rows = tuple(str(item).strip() for item in items)
    if not rows or any(not r for r in rows):
        raise InputError(f"--rows {text!r}: an empty row; give rows like 1:0,2:4 (or leave "
                           "--rows out for every row)")
    return rows


def scheduler_address(text: str) -> str:
    """``host:port`` or ``tcp://host:port`` (as Dask takes them) -> a full address."""
    m = _SCHEDULER.match(str(text).strip())
    if not m:
        raise InputError(f"--scheduler must look like HOST:PORT or tcp://HOST:PORT; "
                           f"got {text!r}")
    port = int(str(text).strip().rsplit(":", 1)[1])
    if not 1 <= port <= 65535:
        raise InputError(f"--scheduler {text.strip()}: the port must be in 1..65535; got {port}")
    return text.strip() if m.group(1) else f"tcp://{text.strip()}"


def find_profile(name: str, what: str = "--profile") -> Path:
    """A profile path, or a bare name looked up as configs/NAME.toml (here, then the
    project's own configs/)."""
    p = Path(name)
    if p.suffix == ".toml" or os.sep in name or p.exists():
        return p
    for base in (Path("configs"), CONFIGS):
        if (base / f"{name}.toml").is_file():
            return base / f"{name}.toml"
    known = sorted(q.stem for q in CONFIGS.glob("*.toml"))
    raise InputError(f"{what} {name}: no such profile; give a path or one of "
                       f"{', '.join(known)}")


def read_toml(path: str | Path, what: str) -> dict:
    p = Path(path)
    try:  # a regular file of bounded size (a link is followed to one): a FIFO never blocks
        raw = files.read_bytes(p, follow=True)
        if raw.startswith(BOM):
            raise InputError(f"{what} {path}: {BOM_RULE}")
        return tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except files.Refused as e:
        raise InputError(f"{what} {e}") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"{what} {path} is not a readable TOML file: {e}") from None


def slurm_options(path: str) -> dict:
    path = find_profile(path, "--slurm")
    doc = read_toml(path, "--slurm profile")
    section = doc.get("slurm")
    if not isinstance(section, dict) or not section:
        raise InputError(f"--slurm profile {path} needs a [slurm] table of SLURMCluster "
                           "options (queue, cores, memory, walltime, jobs ...)")
    check_slurm(section, f"--slurm profile {path} [slurm]")
    return section


PROFILE_SECTIONS = ("audit", "slurm")  # the tables a profile may hold


def from_profile(name: str) -> AuditOptions:
    path = find_profile(name)
    doc = read_toml(path, "--profile")
    unknown = sorted(set(doc) - set(PROFILE_SECTIONS))
    if unknown:  # a misspelled section would run on defaults: refused, with the near name
        near = {k: difflib.get_close_matches(k, PROFILE_SECTIONS, n=1) for k in unknown}
        raise InputError(f"--profile {path}: unknown section(s) " + ", ".join(
            f"[{k}]" + (f" (did you mean [{near[k][0]}]?)" if near[k] else "") for k in unknown)
            + f"; a profile has [{'], ['.join(PROFILE_SECTIONS)}]")
    audit = doc.get("audit", {})
    if not isinstance(audit, dict):
        raise InputError(f"--profile {path}: [audit] must be a table")
    known = {**KNOWN_KEYS, **{o.key: str for o in audit_options.registered()}}
    problems = [f"unknown key {k!r} (known: {', '.join(sorted(known))})"
                for k in sorted(set(audit) - set(known))]
    for key, value in audit.items():
        want = known.get(key)
        if want is not None and (not isinstance(value, want) or isinstance(value, bool)):
            names = " or ".join(t.__name__ for t in (want if isinstance(want, tuple)
                                                     else (want,)))
            problems.append(f"{key} must be {names}, got {value!r}")
    if problems:
        raise InputError(f"--profile {path} [audit]: " + "; ".join(problems))
    opts = AuditOptions(profile=str(path))
    for key, value in audit.items():
        if key == "rows":
            value = parse_rows(value)
        elif key == "slurm":
            value = slurm_options(value)
        elif key not in KNOWN_KEYS:  # a registered option's
            opts = replace(opts, extras=(*opts.extras, (key, value)))
            continue
        opts = replace(opts, **{key: value})
    if isinstance(doc.get("slurm"), dict) and not opts.slurm and not opts.scheduler:
        check_slurm(doc["slurm"], f"--profile {path} [slurm]")
        opts = replace(opts, slurm=doc["slurm"])
    return opts


def merge(args) -> AuditOptions:
    """Profile (if any), then every flag the user gave on the command line.

    With --resume the run's own options (tables, n, rows, seeds per task) come from the
    interrupted run; only where it runs (cluster flags), --generator and --out may be given.
    """
    if getattr(args, "resume", None):
        clash = [f"--{k.replace('_', '-')}" for k in (
            "tables", "n", "rows", "profile", "seeds_per_task",
            *(o.key for o in audit_options.registered())) if getattr(args, k, None) is not None]
        if clash:
            raise InputError(f"--resume takes the run's own options; drop {', '.join(clash)}")
    opts = from_profile(args.profile) if args.profile else AuditOptions()
    if getattr(args, "resume", None):
        opts = replace(opts, resume=args.resume)
    flags = {
        "generator": getattr(args, "generator", None), "tables": args.tables, "n": args.n,
        "scheduler": args.scheduler, "workers": args.workers,
        "seeds_per_task": args.seeds_per_task, "out": args.out,
        "worker_timeout": getattr(args, "worker_timeout", None),
        "verify": getattr(args, "verify", None),
    }
    given = audit_options.given(args)
    for o in audit_options.registered():
        if o.sets_n and o.key in given and args.n is not None:
            raise InputError(f"--{o.name} {o.metavar} sets the boards per row; drop --n")
    opts = replace(opts, **{k: v for k, v in flags.items() if v is not None})
    if given:  # the command line's win over the profile's
        opts = replace(opts, extras=(*((k, v) for k, v in opts.extras if k not in given),
                                     *given.items()))
    if args.rows is not None:
        opts = replace(opts, rows=parse_rows(args.rows))
    if args.slurm:
        opts = replace(opts, slurm=slurm_options(args.slurm))
    check(opts)
    return opts




def max_workers() -> int:
    """The most embedded worker processes a machine is asked for: 4 per CPU (beyond it the
    workers starve each other's heartbeats and the run fails instead of slowing down)."""
    return 4 * (os.cpu_count() or 1)


def check(opts: AuditOptions) -> None:
    """Every option, whichever way it came (flag or profile), in its declared domain
    (``boardcore.domains``: the flags' own types) and the rules between options."""
    problems = []
    for name, value, domain in (
            ("n", opts.n, dom.N_BOARDS), ("workers", opts.workers, dom.WORKERS),
            ("seeds-per-task", opts.seeds_per_task, dom.SEEDS_PER_TASK),
            ("worker-timeout", opts.worker_timeout, dom.WORKER_TIMEOUT)):
        problems += dom.checked(name, value, domain)
    if isinstance(opts.workers, int) and opts.workers > max_workers():
        problems.append(f"workers must be at most {max_workers()} on this machine (4 per "
                        f"CPU); got {opts.workers}")
    chosen = [x for x in (opts.scheduler, opts.slurm) if x]
    if len(chosen) > 1:
        problems.append("give at most one of --scheduler and --slurm")
    for o, value in audit_options.chosen(opts.extras):
        try:
            o.check(value)
        except InputError as e:
            problems.append(str(e))
    logs = str(Path(opts.out) / "slurm-logs")
    if opts.slurm and "log_directory" not in opts.slurm and not re.fullmatch(PATH_WORD, logs):
        problems.append(f"--out {opts.out!r} with --slurm: the job logs' folder {logs} is "
                        "written into #SBATCH -o/-e lines, so it must be a path of letters, "
                        "digits and _./@%+=:,-; give another --out or the profile's "
                        "log_directory")
    if opts.scheduler and opts.workers:
        problems.append("--workers sizes the embedded cluster; it cannot go with --scheduler")
    if opts.scheduler:
        try:
            scheduler_address(opts.scheduler)
        except InputError as e:
            problems.append(str(e))
    if opts.verify not in VERIFY_MODES:
        problems.append(f"--verify must be one of {', '.join(VERIFY_MODES)}; got {opts.verify!r}")
    elif opts.verify != "spot" and not opts.resume:
        problems.append("--verify checks the shards a --resume reuses; give it with --resume")
    if problems:
        raise InputError("bad audit options: " + "; ".join(problems))


def usable_out(out: str | os.PathLike) -> Path:
    """``--out`` of the audit and its tools: ``boardcore.output.usable_folder``."""
    return usable_folder(out, "--out", DEFAULT_OUT)

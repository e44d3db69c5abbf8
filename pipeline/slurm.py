"""The ``[slurm]`` table of a cluster profile, declared once: every key this project reads
or hands to dask-jobqueue's SLURMCluster, with its domain, checked where the profile is
read (``check_slurm``: InputError, exit 2, one line naming each bad key and the profile),
``--dry-run`` included, before any cluster object exists (decision 284).

A value reaches the job script in one of three places. A ``#SBATCH`` line is read by
sbatch, never by the shell, and sbatch splits it at blanks: its values (``job_name``,
``queue``, ``account``, ``log_directory``, ``walltime``, ``job_mem``) are single words of
the characters ``shlex.quote`` leaves as they are, so quoting is neither needed nor done
there. The worker's command line is read by bash: every argument the profile gives it
(``worker_extra_args``, ``interface``, ``local_directory``, ``python``,
``worker_command``) is quoted with ``shlex.quote`` (``engine.session``). The lines of
``job_script_prologue`` are shell by design (``module load ...``), one line each. No
string anywhere in the table, nested ones and key names included, may hold a control or
format character (a newline once put ``#SBATCH --uid=0`` and ``rm -rf /`` into the script).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from boardcore import domains as dom
from boardcore.errors import InputError

OWN_KEYS = ("jobs", "worker_timeout")  # keys this project reads; SLURMCluster gets the rest
# categories refused in every string: controls (\n \r \t \x00 \x1b \x7f \x85 ...), format
# characters (bidi overrides, zero-width), line and paragraph separators
CONTROL_CATEGORIES = ("Cc", "Cf", "Zl", "Zp")
MOST_DAYS = 365  # the longest walltime taken
SIZE = r"(?i)[0-9]{1,16}(?:\.[0-9]{1,6})? ?(?:[kmgtp]i?b?|b)?"  # as dask's parse_bytes reads it


@dataclass(frozen=True)
class Domain:
    """What a key's value must be: ``holds`` decides, ``want`` says it in the message,
    ``bad`` lists values outside it and ``good`` one inside (the tests walk both)."""

    holds: Callable[[Any], bool]
    want: str
    bad: tuple = ()
    good: Any = None


def control_free(text: str) -> bool:
    return not any(unicodedata.category(c) in CONTROL_CATEGORIES for c in text)


def _text(v) -> bool:
    return isinstance(v, str) and v.strip() != "" and control_free(v)


def _pattern(regex: str) -> Callable[[Any], bool]:
    rx = re.compile(regex)
    return lambda v: isinstance(v, str) and rx.fullmatch(v) is not None


def _number(domain: dom.Number, good) -> Domain:
    return Domain(domain.holds, str(domain), (True, "1", 0.5 if domain.integer else "x",
                                              domain.lo - 1, 10 ** 20), good)


def _size(v) -> bool:
    from dask.utils import parse_bytes

    if not isinstance(v, str) or not re.fullmatch(SIZE, v):
        return False
    try:
        return 0 < parse_bytes(v) <= 2 ** 50
    except (ValueError, TypeError, OverflowError):
        return False


def walltime_seconds(text: str) -> int | None:
    """A SLURM time limit in seconds, or None when ``text`` is none of SLURM's forms: MM,
    MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS (ASCII digits). The first field counts its
    own unit without bound ("90" is 90 minutes, "36:00:00" 36 hours); every later field is
    below 60 (minutes, seconds) or, after a day part, 24 (hours). Zero (SLURM's "no
    limit") and more than 365 days are refused."""
    if not isinstance(text, str):
        return None
    m = re.fullmatch(r"([0-9]{1,3})-([0-9]{1,2})(?::([0-9]{1,2}))?(?::([0-9]{1,2}))?", text)
    if m:
        d, h, mi, s = (int(x or 0) for x in m.groups())
        if h >= 24 or mi >= 60 or s >= 60:
            return None
        total = ((d * 24 + h) * 60 + mi) * 60 + s
    else:
        parts = text.split(":")
        if not 1 <= len(parts) <= 3 or not all(re.fullmatch(r"[0-9]{1,7}", p) for p in parts):
            return None
        if any(len(p) > 2 for p in parts[1:]):
            return None
        head, *rest = (int(p) for p in parts)
        if any(x >= 60 for x in rest):
            return None
        if len(parts) == 3:  # HH:MM:SS
            total = head * 3600 + rest[0] * 60 + rest[1]
        else:  # MM or MM:SS
            total = head * 60 + sum(rest)
    return total if 0 < total <= MOST_DAYS * 86400 else None


def _strings(v) -> bool:
    return isinstance(v, list) and len(v) <= 200 and all(isinstance(x, str) for x in v)


# a word sbatch and the shell both read as one argument (shlex.quote leaves it alone)
NAME = r"[A-Za-z0-9_][A-Za-z0-9_.@%+=:,-]{0,127}"  # job, partition, account names
PATH_WORD = r"[A-Za-z0-9_./][A-Za-z0-9_.@%+=:,/-]{0,4095}"  # a path in a #SBATCH line
IFACE = r"[A-Za-z0-9_.@+:-]{1,15}"  # a Linux interface name (IFNAMSIZ - 1)
HOST = r"[A-Za-z0-9_.:-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]"
ADDRESS = r"(?:[A-Za-z0-9_.-]{0,253}|\[[0-9A-Fa-f:.]{2,45}\]):[0-9]{1,5}"
DIRECTIVE = r"--?[A-Za-z].*"
MODULE = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
WORD_BAD = ("", "a b", "-x", "x;y", "x'y", "$(id)", 7)

TIMEOUT = dom.WORKER_TIMEOUT
KEYS: dict[str, Domain] = {
    "jobs": _number(dom.Number(1, 10_000), 2),
    "worker_timeout": Domain(TIMEOUT.holds, str(TIMEOUT), (0, -1, float("inf"), "600", True),
                             600),
    "cores": _number(dom.Number(1, 4096), 1),
    "processes": _number(dom.Number(1, 4096), 1),
    "memory": Domain(_size, 'a size such as "2GB" or "1500MiB" (memory per job, at most '
                     '1 PiB)', ("lots", "", " ", "GB", "0GB", 2, "-1GB", "2PB"), "2GB"),
    "walltime": Domain(lambda v: walltime_seconds(v) is not None,
                       "a SLURM time: MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS "
                       "(minutes and seconds below 60, hours below 24 after a day; more "
                       f"than 0 and at most {MOST_DAYS} days)",
                       ("99:99:99", "soon", "1-24:00", "0", "00:00:00", "1:60", "366-00",
                        "", "1-", "-1", "１", 60), "01:00:00"),
    "job_name": Domain(_pattern(NAME), "a name of letters, digits and _.@%+=:,- that "
                       "starts with a letter, digit or _ (at most 128)", WORD_BAD,
                       "minegen-audit"),
    "queue": Domain(_pattern(NAME), "a partition name of letters, digits and _.@%+=:,-",
                    WORD_BAD, "normal"),
    "account": Domain(_pattern(NAME), "an account name of letters, digits and _.@%+=:,-",
                      WORD_BAD, "minegen"),
    "interface": Domain(_pattern(IFACE), "a network interface name (at most 15 of letters, "
                        "digits and _.@+:-) this machine has, with an IPv4 address",
                        ("", "eth 0", "x" * 16, "lo;id", 1), "lo"),
    "scheduler_options": Domain(lambda v: isinstance(v, dict), "a table of host, port, "
                                "interface, dashboard_address", ("x", 1, ["a"]),
                                {"dashboard_address": "127.0.0.1:0"}),
    "worker_extra_args": Domain(_strings, "a list of strings (each one argument of the "
                                "worker's command, shell-quoted)", ("--no-dashboard", [1],
                                                                   {"a": "b"}),
                                ["--dashboard-address", "127.0.0.1:0"]),
    "job_extra_directives": Domain(
        lambda v: _strings(v) and all(re.fullmatch(DIRECTIVE, x) for x in v),
        'a list of sbatch options, one #SBATCH line each (e.g. ["--nodes=1"])',
        ("--nodes=1", ["nodes=1"], [""], [2]), ["--nodes=1"]),
    "job_directives_skip": Domain(lambda v: _strings(v) and all(x.strip() for x in v),
                                  "a list of non-empty strings (#SBATCH lines holding one "
                                  "are left out)", ("-t", [""], [1]), ["--mem"]),
    "job_script_prologue": Domain(_strings, "a list of shell lines run before the worker "
                                  "(one line each)", ("module load x", [1]),
                                  ["module load python"]),
    "log_directory": Domain(_pattern(PATH_WORD), "a path of letters, digits and "
                            "_./@%+=:,- (it is written into #SBATCH -o/-e lines)",
                            ("", "my logs", "-x", "a;b", 1), "slurm-logs"),
    "local_directory": Domain(_text, "a path (the workers' scratch)", ("", "  ", 1), "/tmp"),
    "python": Domain(_text, "the path of the workers' Python", ("", " ", 1), "python3"),
    "shebang": Domain(lambda v: _text(v) and v.startswith("#!"), 'a line such as '
                      '"#!/usr/bin/env bash"', ("/bin/sh", "", 1), "#!/usr/bin/env bash"),
    "worker_command": Domain(_pattern(MODULE), "a Python module name (run as python -m)",
                             ("", "a b", "x;y", 1), "distributed.cli.dask_worker"),
    "death_timeout": _number(dom.Number(0, 86400, integer=False, lo_open=True,
                                        what="seconds"), 60),
    "job_cpu": _number(dom.Number(1, 4096), 1),
    "job_mem": Domain(_pattern(r"[1-9][0-9]{0,11}[KMGT]?"), 'a SLURM memory such as "4G" '
                      'or "4000" (MB)', ("4 G", "lots", "0", 4, "-1G"), "4G"),
    "nanny": Domain(lambda v: isinstance(v, bool), "true or false", ("yes", 1), True),
}
REQUIRED = ("cores", "memory")
SCHEDULER_KEYS: dict[str, Domain] = {
    "host": Domain(_pattern(HOST), "a host name or address", ("", "a b", "x;y", 1),
                   "127.0.0.1"),
    "port": _number(dom.Number(0, 65535), 0),
    "interface": KEYS["interface"],
    "dashboard_address": Domain(_pattern(ADDRESS), 'HOST:PORT or ":PORT" (e.g. '
                                '"127.0.0.1:0")', ("", "8787", "a b:1", 1), "127.0.0.1:0"),
}
RENAMED = {"project": "account", "extra": "worker_extra_args",
           "job_extra": "job_extra_directives", "env_extra": "job_script_prologue",
           "header_skip": "job_directives_skip", "n_workers": "jobs",
           "host": "scheduler_options.host", "dashboard_address": "scheduler_options."
           "dashboard_address"}


def _shown(v) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _controls(value, where: str) -> list[str]:
    """Every string in ``value`` (keys, list items and nested tables included) with a
    control or format character, named by its place."""
    if isinstance(value, str):
        return [] if control_free(value) else [
            f"{where} must hold no control character (newline, tab, NUL, escape ...); got "
            f"{_shown(value)}"]
    if isinstance(value, list):
        return [p for i, x in enumerate(value) for p in _controls(x, f"{where}[{i}]")]
    if isinstance(value, dict):
        out = []
        for k, x in value.items():
            if not control_free(k):
                out.append(f"a key of {where or 'the table'} must hold no control "
                           f"character; got {_shown(k)}")
            else:
                out += _controls(x, f"{where}.{k}" if where else k)
        return out
    return []


def _unknown(key: str, known, place: str) -> str:
    name = key if key.isidentifier() else repr(key)
    if key in RENAMED and place == "":
        return f"{name} is not taken here: write {RENAMED[key]}"
    near = difflib.get_close_matches(key, list(known), n=1)
    return (f"unknown key {place}{name}" + (f" (did you mean {near[0]}?)" if near else "")
            + "; configs/slurm.toml names every key")


def interface_problem(name: str, key: str) -> str | None:
    """Why ``name`` cannot be bound on this machine (not one of its interfaces, or one
    without an IPv4 address, which Dask needs), or None."""
    import socket

    import psutil

    addrs = psutil.net_if_addrs()
    if name not in addrs:
        return (f"{key} {name!r} is not a network interface of this machine (it has "
                f"{', '.join(sorted(addrs))})")
    if not any(a.family == socket.AF_INET for a in addrs[name]):
        return f"{key} {name!r} has no IPv4 address on this machine"
    return None


def problems_of(section: dict) -> list[str]:
    """Every way ``section`` (a profile's [slurm] table) leaves its declared domain."""
    problems = _controls(section, "")
    if problems:  # a control character: named alone, nothing else read from the value
        return problems
    for key, value in section.items():
        domain = KEYS.get(key)
        if domain is None:
            problems.append(_unknown(key, KEYS, ""))
        elif not domain.holds(value):
            problems.append(f"{key} must be {domain.want}; got {_shown(value)}")
    problems += [f"{k} is missing (must be {KEYS[k].want})" for k in REQUIRED
                 if k not in section]
    sched = section.get("scheduler_options")
    if isinstance(sched, dict):
        for key, value in sched.items():
            domain = SCHEDULER_KEYS.get(key)
            if domain is None:
                problems.append(_unknown(key, SCHEDULER_KEYS, "scheduler_options."))
            elif not domain.holds(value):
                problems.append(f"scheduler_options.{key} must be {domain.want}; got "
                                f"{_shown(value)}")
    procs, cores = section.get("processes"), section.get("cores")
    if KEYS["cores"].holds(cores) and KEYS["processes"].holds(procs) and procs > cores:
        problems.append(f"processes must be at most cores ({cores}), one thread each at "
                        f"least; got {procs}")
    # the interface the scheduler binds here: scheduler_options' own, else `interface`
    # (which then names the nodes' interface only when scheduler_options sets host)
    if isinstance(sched, dict) and "interface" in sched:
        bound = [("scheduler_options.interface", sched["interface"])]
    elif isinstance(sched, dict) and "host" in sched:
        bound = []
    else:
        bound = [("interface", section["interface"])] if "interface" in section else []
    return problems + [p for key, name in bound if KEYS["interface"].holds(name)
                       and (p := interface_problem(name, key))]


def check_slurm(section: dict, where: str) -> None:
    """The profile's [slurm] table in its declared domain, before any cluster starts:
    InputError (exit 2, one line) naming every bad key and ``where`` (the profile)."""
    problems = problems_of(section)
    if problems:
        raise InputError(f"{where}: " + "; ".join(problems))

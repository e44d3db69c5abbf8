"""The command line run inside the test process (no interpreter start-up per call)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess


def run_cli(prog: str, *args, env: dict | None = None, cwd=None):
    """``minegen ARGS`` or ``tilegen ARGS`` through its ``main`` in this process: the exit
    code, stdout and stderr as a ``subprocess.CompletedProcess``, like a run of the command
    (argparse's own exits become the return code). No interpreter start-up: for the tests
    that check a message, an exit code or a job's output; the end-to-end tests of a real
    process (signals, the environment a process starts with) keep ``subprocess``.
    ``env`` is set for the call and restored; ``cwd`` is entered and left."""
    if prog == "minegen":
        from minegen.cli import main
    elif prog == "tilegen":
        from tilegen.cli import main
    else:
        raise ValueError(prog)
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in (env or {})}
    here = os.getcwd()
    try:
        os.environ.update({k: str(v) for k, v in (env or {}).items()})
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:  # argparse: --help, --version, usage errors
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(here)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return subprocess.CompletedProcess([prog, *argv], rc, out.getvalue(), err.getvalue())


def audit_exit(p: subprocess.CompletedProcess, out, generator: str = "minegen",
               run_id: str | None = None):
    """An audit's exit code is the verdict its run wrote: 0 where every hard line holds
    (``assertions.json``), 1 where one fails, never a crash; the run folder (``run_id``, else
    the one its summary names, ``report: <run>/report.html``: LATEST may stay on another
    root's run, and two runs may start in the same second) is returned."""
    import json
    from pathlib import Path

    assert p.returncode in (0, 1), p.stderr
    vdir = Path(out) / "metric_v1" if generator == "minegen" else \
        Path(out) / generator.split(":")[0] / "metric_v1"
    if run_id:
        run = vdir / run_id
    else:
        (said,) = [ln for ln in p.stdout.splitlines() if ln.startswith("report: ")]
        run = Path(said.removeprefix("report: ")).parent
        assert run.resolve().parent == vdir.resolve(), (run, vdir)
    holds = json.loads((run / "assertions.json").read_text())["hard_lines_hold"]
    assert p.returncode == (0 if holds else 1), (p.returncode, holds, p.stderr)
    return run


def tune_exit(p: subprocess.CompletedProcess):
    """A tune's exit code is the verdict of its proposed tables' own audit: 0 where every
    hard line holds there (that audit's ``assertions.json``), 1 where one fails; the tune
    folder (the summary's last line, ``tune: <folder>``) is returned."""
    import json
    from pathlib import Path

    assert p.returncode in (0, 1), p.stderr
    folder = Path(p.stdout.strip().splitlines()[-1].removeprefix("tune: "))
    (audited,) = (folder / "audit").rglob("assertions.json")
    holds = json.loads(audited.read_text())["hard_lines_hold"]
    assert p.returncode == (0 if holds else 1), (p.returncode, holds, p.stderr)
    assert json.loads((folder / "tune.json").read_text())["exit_code"] == p.returncode
    return folder


def reconcile_exit(p: subprocess.CompletedProcess):
    """A reconcile's exit code says whether its report flags anything: 1 where it names an
    abnormal seed or a row outside (or off) its prediction, else 0; its folder (the
    summary's ``report: <folder>/report.html`` line, holding reconcile.json) is returned."""
    import json
    from pathlib import Path

    assert p.returncode in (0, 1), p.stderr
    (said,) = [ln for ln in p.stdout.splitlines() if ln.startswith("report: ")]
    folder = Path(said.removeprefix("report: ")).parent
    doc = json.loads((folder / "reconcile.json").read_text())
    flags = bool(doc["abnormal_seeds"]) or any(r.get("outside") or r.get("off_target")
                                               for r in doc["rows"])
    assert p.returncode == (1 if flags else 0), (p.returncode, flags, p.stderr)
    return folder


def sweep_exit(p: subprocess.CompletedProcess) -> dict:
    """A sweep's exit code: 0 where some valid value holds every hard line while keeping
    what the row asks for (no flag), 1 where none does (its sweep.json, in the folder of
    the summary's last line ``sweep: <folder>``, is returned)."""
    import json
    from pathlib import Path

    assert p.returncode in (0, 1), p.stderr
    folder = Path(p.stdout.strip().splitlines()[-1].removeprefix("sweep: "))
    doc = json.loads((folder / "sweep.json").read_text())
    holds = some_value_holds(doc)
    assert p.returncode == (0 if holds else 1), (p.returncode, holds, p.stderr)
    return doc


def some_value_holds(sweep: dict) -> bool:
    """Whether a sweep (its sweep.json) has a valid value that holds every hard line while
    keeping what the row asks for (no flag): what its exit code 0 says."""
    return any(v["status"] == "ok" and v["holds"] and not v.get("flags")
               for v in sweep["values"])


def job_exit(p: subprocess.CompletedProcess, out, args) -> None:
    """The exit code of ``minegen ARGS`` held to what its job wrote, for an audit, a sweep,
    a tune or a reconcile (``audit_exit``, ``sweep_exit``, ``tune_exit``,
    ``reconcile_exit``); ``args``: the command line, its generator from --generator."""
    args = [str(a) for a in args]
    gen = args[args.index("--generator") + 1] if "--generator" in args else "minegen"
    {"audit": lambda: audit_exit(p, out, gen), "sweep": lambda: sweep_exit(p),
     "tune": lambda: tune_exit(p), "reconcile": lambda: reconcile_exit(p)}[args[0]]()

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

"""Shared fixtures. Hypothesis is derandomized everywhere: tests see fixed examples."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

settings.register_profile("minegen", derandomize=True, deadline=None, print_blob=True)
settings.load_profile("minegen")

FIXTURES = Path(__file__).parent / "fixtures" / "tables"
REPO = Path(__file__).resolve().parent.parent
_REPO_OUTPUTS = ("reports", "tables")  # a test writes inside its own tmp_path, never here


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(REPO)) for d in _REPO_OUTPUTS for p in (REPO / d).rglob("*")}


# pytest-xdist (``make test``: ``-n 2 --dist loadgroup``). A test module that defines a
# module- or session-scoped fixture (other than the ones each worker may build for itself:
# PER_WORKER) runs whole on one worker, so that fixture is built once; every other test is
# scheduled on its own. The modules are found by reading their source (the controller
# collects nothing), and tests/test_house.py holds the reading to what pytest collects.
# Tests of several modules that share a session fixture of this file (SHARED_GROUPS: the
# fixture's name) carry ``pytest.mark.xdist_group(<name>)``; a group runs on one worker.
PER_WORKER = {"cluster", "browser", "node", "default_tables", "fixture_tables", "tile_run"}
SHARED_GROUPS = {"clean_scaling"}


def shared_fixture_modules(folder: Path = Path(__file__).parent) -> set[str]:
    """Names of the test modules (``test_x.py``) that define a shared fixture."""
    import ast

    found = set()
    for path in sorted(folder.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or node.name in PER_WORKER:
                continue
            for dec in node.decorator_list:
                scope = next((k.value.value for k in getattr(dec, "keywords", ())
                              if k.arg == "scope" and isinstance(k.value, ast.Constant)), None)
                if scope in ("module", "session"):
                    found.add(path.name)
    return found


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist (absent with -p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """--dist loadgroup, by module where a module shares a fixture (see above)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    grouped = shared_fixture_modules()

    class SharedFixturesTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if "@" in nodeid:  # xdist appends "@<group>" to a test marked xdist_group
                return nodeid.rsplit("@", 1)[1]
            module = nodeid.split("::", 1)[0]
            return module if module.rsplit("/", 1)[-1] in grouped else nodeid

    return SharedFixturesTogether(config, log)


def pytest_configure(config) -> None:
    """The xdist_group mark is pytest-xdist's; known without it too (``make coverage`` runs
    with ``-p no:xdist``, and --strict-markers refuses an unknown mark)."""
    config.addinivalue_line("markers", "xdist_group(name): the tests of one group run on "
                            "one xdist worker (conftest.SHARED_GROUPS)")


def pytest_sessionstart(session) -> None:
    session.config._repo_tree = _tree(REPO)
    if not hasattr(session.config, "workerinput"):  # once, in the controller
        _compile_kernels_once(session.config)


def _compile_kernels_once(config) -> None:
    """A machine without the compiled kernels compiles them here, both games at the same
    time (each split into its parts, as an audit does), instead of inside whichever test
    first calls a kernel while the other worker compiles the same ones."""
    import time

    from pipeline import capabilities
    from pipeline.engine.run import CompileOnce
    from pipeline.generator import load_generator

    cold = [g for g in (load_generator("minegen"), load_generator("tilegen")) if capabilities.cold(g)]
    if not cold:
        return
    say = config.pluginmanager.get_plugin("terminalreporter")
    t0 = time.monotonic()
    jobs = [CompileOnce(g, lambda line, g=g: say.write_line(f"{g.name}: {line}"))
            for g in cold]
    for job in jobs:
        job.wait()
    say.write_line(f"kernels compiled in {time.monotonic() - t0:.1f} s")


def pytest_sessionfinish(session, exitstatus) -> None:
    """A test that wrote into the repository's reports/ or tables/ fails the session."""
    new = sorted(_tree(REPO) - getattr(session.config, "_repo_tree", set()))
    if new:
        print(f"\nthe tests wrote into the repository: {new[:5]}"
              + (f" and {len(new) - 5} more" if len(new) > 5 else ""))
        session.exitstatus = 1


@pytest.fixture(scope="session")
def default_tables():
    from minegen.table_loader import load_tables

    return load_tables()


@pytest.fixture(scope="session")
def tile_run(tmp_path_factory) -> Path:
    """A tilegen audit run folder as reconcile reads it (``test_reconcile_input.make_run``:
    every row's production board and audit boards 0 and 1, no cluster), made once per
    worker for every reconcile test. Read it; never write into it."""
    from test_reconcile_input import make_run

    return make_run(tmp_path_factory.mktemp("tile-run") / "run")


@pytest.fixture(scope="session")
def fixture_tables():
    """fixture_tables("name") -> Tables of tests/fixtures/tables/name."""
    from minegen.table_loader import load_tables

    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = load_tables(FIXTURES / name)
        return cache[name]

    return get


CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]  # this machine's network is closed: Chromium stays quiet


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by the pinned Playwright (installed from the
    package registry when missing; the tests skip only when it cannot be reached)."""
    from slurm_local import PackagesUnavailable, ensure_packages

    try:
        ensure_packages(packages=("chromium",), needed=("chromium",))
    except PackagesUnavailable as e:
        pytest.skip(f"Debian's chromium is missing and cannot be installed here: {e}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="session")
def node() -> str:
    """Node.js for node's own test runner (Debian's nodejs when missing, as ``browser``)."""
    import shutil

    from slurm_local import PackagesUnavailable, ensure_packages

    try:
        ensure_packages(packages=("nodejs",), needed=("node",))
    except PackagesUnavailable as e:
        pytest.skip(f"node is missing and cannot be installed here: {e}")
    return shutil.which("node") or "/usr/bin/node"


# ------------------------------------------------------------- one cluster for the session

SCALING = REPO / "benchmarks" / "tables" / "scaling"


@pytest.fixture(scope="session")
def clean_scaling(tmp_path_factory, cluster):
    """The uninterrupted audit of benchmarks/tables/scaling (N = 256, blocks of 64) on the
    shared cluster, made once: the run that a killed, or interrupted, then resumed audit
    must equal (tests/test_faults.py, tests/test_interrupts.py, in the xdist group of this
    name). Read it; never write into it."""
    from pipeline.jobs.audit import run_audit
    from pipeline.options import AuditOptions

    return run_audit(AuditOptions(tables=str(SCALING), n=256, seeds_per_task=64,
                                  scheduler=cluster,
                                  out=str(tmp_path_factory.mktemp("clean-scaling"))),
                     progress=False)



@pytest.fixture(scope="session")
def cluster(tmp_path_factory) -> str:
    """The address of one Dask cluster shared by every test that only needs *a* cluster:
    ``dask scheduler`` and ``dask worker`` (two processes, one thread each) on 127.0.0.1,
    their scratch in the session's temp folder, stopped by PID at the end. Records do not
    depend on the scheduler (decision 17), so a job run here writes what a job on its own
    LocalCluster writes; the tests of a cluster's life (start, loss, signals, SLURM) start
    their own. The workers see ``tests/`` on their path (the toy generator lives there)."""
    import os
    import socket
    import subprocess
    import sys
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    addr = f"tcp://127.0.0.1:{port}"
    scratch = tmp_path_factory.mktemp("shared-cluster")
    bindir = Path(sys.executable).parent
    from pipeline.engine.housekeeping import environ

    env = {**os.environ, **environ(), "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env,
             "cwd": scratch}
    procs = [subprocess.Popen([bindir / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                               str(port), "--dashboard-address", "127.0.0.1:0"], **quiet)]
    procs.append(subprocess.Popen([bindir / "dask", "worker", addr, "--nworkers", "2",
                                   "--nthreads", "1", "--host", "127.0.0.1",
                                   "--dashboard-address", "127.0.0.1:0", "--local-directory",
                                   str(scratch / "workers")], **quiet))
    try:
        from dask.distributed import Client

        deadline = time.monotonic() + 120
        while True:
            try:
                with Client(addr, timeout=5) as c:
                    c.wait_for_workers(2, timeout=60)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
        yield addr
    finally:
        for p in reversed(procs):  # the workers first: without a scheduler they wait for it
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

"""Runs a nightly job and a cluster can trust: no hang, clean interrupts, exact exit codes,
unusable output folders refused, resume and concurrency integrity. Real processes and real
clusters on loopback, stopped by PID."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import polars as pl
import pytest
from cli_harness import audit_exit, run_cli

from boardcore.errors import InputError
from pipeline.store.shards import ShardStore

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures" / "tables"
SCALING = REPO / "benchmarks" / "tables" / "scaling"


def cli(*args, timeout=300, env=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "minegen.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})}, **kw)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_gone(pgid: int, within: float = 20.0) -> bool:
    """True once no process of the group is left (the audit, its cluster, its workers)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


# ------------------------------------------------------------------------------ no hang

@pytest.mark.cluster
def test_a_scheduler_without_workers_ends_with_exit_3(tmp_path):
    port = free_port()
    sched = subprocess.Popen([Path(sys.executable).parent / "dask", "scheduler", "--host",
                              "127.0.0.1", "--port", str(port), "--dashboard-address",
                              "127.0.0.1:0"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        t0 = time.monotonic()
        p = cli("audit", "--scheduler", f"127.0.0.1:{port}", "--worker-timeout", "3",
                "--rows", "1:0", "--n", "4", "--out", tmp_path / "out", timeout=120)
        took = time.monotonic() - t0
    finally:
        sched.terminate()
        sched.wait(timeout=20)
    assert p.returncode == 3, p.stdout + p.stderr
    assert f"no worker joined tcp://127.0.0.1:{port} within 3 s" in p.stderr
    assert "Traceback" not in p.stderr and took < 60
    assert not list((tmp_path / "out").rglob(".partial-*"))  # nothing finished: nothing kept


@pytest.mark.cluster
@pytest.mark.parametrize("lose, says", [("worker", "all workers lost"),
                                        ("scheduler", "lost the Dask scheduler")])
def test_losing_the_cluster_mid_run_ends_with_exit_3(tmp_path, lose, says):
    """An external cluster whose only worker, or whose scheduler, dies mid-run: exit 3
    promptly (within the worker timeout), one line, the finished rows kept for --resume."""
    port = free_port()
    addr = f"tcp://127.0.0.1:{port}"
    bindir = Path(sys.executable).parent
    sched = subprocess.Popen([bindir / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                              str(port), "--dashboard-address", "127.0.0.1:0"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([bindir / "dask", "worker", addr, "--nworkers", "1",
                               "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1",
                               "--dashboard-address", "127.0.0.1:0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = tmp_path / "out"
    try:
        proc = subprocess.Popen([sys.executable, "-m", "minegen.cli", "audit", "--tables",
                                 SCALING, "--n", "1024", "--seeds-per-task", "128",
                                 "--scheduler", addr, "--worker-timeout", "4", "--out", out],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not list(out.glob("metric_v1/.partial-*/shards/*.json")):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        (worker if lose == "worker" else sched).kill()
        t0 = time.monotonic()
        stdout, stderr = proc.communicate(timeout=120)
        took = time.monotonic() - t0
    finally:
        for p in (worker, sched):
            p.kill()
            p.wait(timeout=20)
    assert proc.returncode == 3, stdout + stderr
    assert says in stderr and "--resume" in stderr and "Traceback" not in stderr
    assert took < 40
    assert list(out.glob("metric_v1/.partial-*/shards/*.json"))


# ------------------------------------------------------------------------- bad input: 2

def _mount_tmpfs(path: Path, options: str) -> None:
    path.mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)


@pytest.fixture
def mounts(tmp_path):
    """A full and a read-only file system (root mounts tmpfs; unmounted afterwards)."""
    full, ro = tmp_path / "full", tmp_path / "ro"
    _mount_tmpfs(full, "size=16k")
    _mount_tmpfs(ro, "ro,size=16k")
    try:
        yield {"full": full, "ro": ro}
    finally:
        for m in (full, ro):
            subprocess.run(["umount", str(m)], check=False)


def test_every_unusable_out_exits_2_without_traceback(tmp_path, mounts):
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    cases = {
        "a file": (a_file, "it is a file"),
        "under a file": (a_file / "x", "is a file"),
        "/proc": ("/proc/minegen-out", "system tree"),
        "/dev/null/x": ("/dev/null/x", "system tree"),
        "read-only": (mounts["ro"] / "out", "read-only file system"),
        "no space left": (mounts["full"] / "out", "no space left"),
    }
    for name, (out, why) in cases.items():
        p = run_cli("minegen", "audit", "--rows", "1:0", "--n", "4", "--out", out)
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        assert why in p.stderr and "Traceback" not in p.stderr, (name, p.stderr)
    assert not list(mounts["full"].iterdir()) and a_file.read_text() == "x"


@pytest.mark.parametrize("body, why", [
    ("[audit]\ntables = 5\n", "tables must be str"),
    ("[audit]\nn = \"many\"\n", "n must be int"),
    ("[audit]\nworkers = true\n", "workers must be int"),
    ("[audit]\nbogus = 1\n", "unknown key 'bogus'"),
    ("[audit]\nrows = 3\n", "rows must be str or list"),
])
def test_profile_values_of_the_wrong_type_exit_2(tmp_path, body, why):
    profile = tmp_path / "p.toml"
    profile.write_text(body)
    p = run_cli("minegen", "audit", "--profile", profile, "--out", tmp_path / "out")
    assert p.returncode == 2 and why in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def test_a_profile_is_found_by_name():
    from pipeline.options import find_profile, from_profile

    assert find_profile("nightly").resolve() == REPO / "configs" / "nightly.toml"
    assert from_profile("smoke").n == 16
    with pytest.raises(InputError, match="smoke"):  # the known names are listed
        find_profile("no_such_profile")


def test_optional_table_file_that_is_not_a_file_is_an_error(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    for name in ("board_gen.toml", "variation.toml"):
        (root / name).write_bytes((REPO / "tables" / name).read_bytes())
    (root / "economy.toml").mkdir()
    p = run_cli("minegen", "validate", "--tables", root)
    assert p.returncode == 2 and "economy.toml" in p.stderr and "not a regular file" in \
        p.stderr and "Traceback" not in p.stderr


# ------------------------------------------------------------ resume and concurrency

def test_run_ids_are_unique_even_in_the_same_second(tmp_path):
    got, errors = [], []

    def claim():
        try:
            got.append(ShardStore.claim(tmp_path, "20260101T000000Z-abcd-n4", {}))
        except Exception as e:  # noqa: BLE001 -- reported below
            errors.append(e)

    threads = [threading.Thread(target=claim) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len({s.run_id for s in got}) == 8


def test_a_locked_run_is_refused_and_a_tampered_shard_recomputed(tmp_path):
    store = ShardStore.claim(tmp_path, "run", {})
    other = ShardStore(store.folder)
    with pytest.raises(InputError, match="in use by another process"):
        other.lock()
    frame = pl.DataFrame({"seed_index": [0, 1], "x": [1.0, 2.0]})
    expect = {"key": [1, 0], "snapshot": "abc", "n": 2}
    store.save(0, expect, frame)
    assert store.inspect(0, expect)[0].equals(frame)
    assert store.inspect(0, {**expect, "snapshot": "other"})[0] is None  # another row's shard
    data = store.shards / "r00000.parquet"
    pl.DataFrame({"seed_index": [0, 1], "x": [9.0, 9.0]}).write_parquet(data)  # not its bytes
    assert store.inspect(0, expect)[0] is None
    store.remove()


@pytest.mark.cluster
def test_resume_refuses_a_changed_table_naming_the_rows(tmp_path):
    tables = tmp_path / "t"
    tables.mkdir()
    for p in (REPO / "tables").glob("*.toml"):
        (tables / p.name).write_bytes(p.read_bytes())
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "minegen.cli", "audit", "--tables", tables,
                             "--n", "1024", "--seeds-per-task", "64", "--workers", "1",
                             "--out", out], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(out.glob("metric_v1/.partial-*/shards/*.json")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    from minegen.table_loader import load_tables

    before = {r.key: r for r in load_tables(tables).board_gen}
    text = (tables / "board_gen.toml").read_text()
    (tables / "board_gen.toml").write_text(text.replace("mine_density = 0.12", "mine_density = 0.13", 1))
    changed = [k for k, r in ((r.key, r) for r in load_tables(tables).board_gen)
               if r != before[k]]
    assert len(changed) == 1
    run_id = next(out.glob("metric_v1/.partial-*")).name.removeprefix(".partial-")
    p = cli("audit", "--resume", run_id, "--out", out)
    assert p.returncode == 2 and "tables changed since the run started" in p.stderr
    assert f"row(s) {changed[0][0], changed[0][1]}" in p.stderr and "Traceback" not in p.stderr


# --------------------------------------------------------------------------- CLI habits

def test_version_and_help_on_every_option():
    import argparse

    from minegen.cli import build_parser

    p = run_cli("minegen", "--version")
    assert p.returncode == 0 and "generator_version" in p.stdout and "metric_version" in p.stdout
    missing = []

    def walk(parser, path):
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sub in a.choices.items():
                    walk(sub, [*path, name])
            elif not a.help:
                missing.append((path, a.dest))

    walk(build_parser(), [])
    assert missing == []


@pytest.mark.cluster
def test_first_run_compiles_once_and_says_so(tmp_path):
    """An empty kernel cache (its folder named by the environment, which the compile
    process and the workers inherit): the audit compiles once and says so; the next run
    loads."""
    env = {"MINEGEN_KERNEL_CACHE": str(tmp_path / "cache")}
    p = run_cli("minegen", "audit", "--rows", "1:0", "--n", "8", "--workers", "2", "--out",
                tmp_path / "o", env=env)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("compiling kernels once for this machine") == 1
    assert "dashboard: http://127.0.0.1:" in p.stderr
    again = run_cli("minegen", "audit", "--rows", "1:0", "--n", "8", "--workers", "2",
                    "--out", tmp_path / "o", env=env)
    assert again.returncode == 0 and "compiling" not in again.stderr


def test_a_relative_tables_path_is_stored_resolved(tmp_path, cluster):
    p = run_cli("minegen", "audit", "--tables", "tables", "--rows", "1:0", "--n", "4",
                "--scheduler", cluster, "--out", tmp_path / "out", cwd=REPO)
    assert p.returncode == 0, p.stderr
    (manifest,) = (tmp_path / "out").rglob("manifest.json")
    assert json.loads(manifest.read_text())["table_root"] == str(REPO / "tables")


class Client:  # stands in for distributed's: its tasks' coroutines carry this qualname
    def _gather(self):
        async def wait():
            pass
        return wait()


def test_abandoned_gather_tasks_are_silenced_and_nothing_else(caplog):
    """distributed's Client._gather leaves sibling wait tasks unretrieved when it stops early
    (every worker lost): their "never retrieved" report is dropped; any other loop error
    still reaches asyncio's default handler."""
    import asyncio
    import types

    from pipeline.engine.session import _drop_abandoned_gathers

    async def other():
        pass

    loop = asyncio.new_event_loop()
    try:
        _drop_abandoned_gathers(types.SimpleNamespace(loop=types.SimpleNamespace(
            asyncio_loop=loop)))
        coros = [Client()._gather(), other()]
        for coro in coros:
            fut = types.SimpleNamespace(get_coro=lambda c=coro: c)
            loop.call_exception_handler({"message": "Task exception was never retrieved",
                                         "future": fut})
        for coro in coros:
            coro.close()
    finally:
        loop.close()
    reported = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert len(reported) == 1 and "never retrieved" in reported[0]


def test_a_shard_that_lies_about_its_row_is_recomputed(tmp_path):
    """A shard replaced by another row's records, with a key file whose sha256 matches
    those bytes, is refused: the records prove their row and board range themselves."""
    from types import SimpleNamespace

    from pipeline.store.shards import disproves

    gen = SimpleNamespace(key_fields=("level_index", "node_depth"), index_field="seed_index")
    store = ShardStore.claim(tmp_path, "run", {})

    def rows(level, depth, first=0, count=3):
        return pl.DataFrame({"level_index": [level] * count, "node_depth": [depth] * count,
                             "seed_index": list(range(first, first + count)),
                             "x": [0.5] * count})

    expect = {"key": [1, 0], "snapshot": "abc", "n": 3, "first": 0, "count": 3}
    store.save(0, expect, rows(1, 0))
    assert store.inspect(0, expect, gen)[0].equals(rows(1, 0))
    for liar in (rows(2, 4), rows(1, 0, first=1), rows(1, 0).reverse(),
                 pl.concat([rows(1, 0, count=2), rows(2, 4, count=1)])):
        store.save(0, expect, liar)  # a key file that matches the lying bytes
        assert disproves(liar, gen, expect)
        assert store.inspect(0, expect, gen)[0] is None
    store.remove()


# ------------------------------------------------------------- bounded network waits

def _http_server():
    """An HTTP server on loopback (accepts, answers HTTP, never Dask)."""
    import http.server

    srv = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv.server_address[1], srv.shutdown


def _silent_listener():
    """A loopback port that accepts connections and never says a word."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s.getsockname()[1], s.close


@pytest.mark.slow  # a few seconds each: the timeouts are real
@pytest.mark.parametrize("job, peer", [
    (["audit", "--n", "4"], _http_server),
    (["sweep", "--row", "1:0", "--vary", "mine_density=0.10:0.12:0.01", "--n", "4"],
     _silent_listener),
])
def test_a_peer_that_is_not_a_dask_scheduler_ends_in_exit_3(tmp_path, job, peer):
    port, stop = peer()
    try:
        t0 = time.monotonic()
        p = cli(*job, "--scheduler", f"127.0.0.1:{port}", "--worker-timeout", "3",
                "--out", tmp_path / "out", timeout=60)
        took = time.monotonic() - t0
    finally:
        stop()
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert "no Dask scheduler answered" in p.stderr or "not as a Dask scheduler" in p.stderr \
        or "cannot reach the Dask scheduler" in p.stderr, p.stderr
    # within the worker timeout (3 s) plus start-up, never the 15 s connect timeout or the
    # default 60 s: every job honours --worker-timeout
    assert "Traceback" not in p.stderr and took < 12, took
    assert not list((tmp_path / "out").rglob(".partial-*"))


@pytest.mark.cluster
def test_a_read_only_archive_is_read_and_never_written(tmp_path, cluster):
    """An existing --out on a read-only file system: every command that writes exits 2 in
    one line; runs and diff, which only read, answer (diff says its page is not kept)."""
    out = tmp_path / "archive"
    _mount_tmpfs(out, "size=64m")
    try:
        assert run_cli("minegen", "audit", "--n", "4", "--scheduler", cluster, "--out",
                       out).returncode == 1
        subprocess.run(["mount", "-o", "remount,ro", str(out)], check=True)
        for job in (["audit", "--n", "4"], ["audit", "--generator", "tilegen", "--n", "2"],
                    ["sweep", "--row", "1:0", "--vary", "mine_density=0.10:0.12:0.01"],
                    ["tune", "--run", "LATEST"]):
            p = run_cli("minegen", *job, "--out", out)
            assert p.returncode == 2, (job, p.stderr)
            assert "read-only file system" in p.stderr and "Traceback" not in p.stderr, p.stderr
            assert p.stderr.strip().count("\n") == 0, p.stderr
        p = run_cli("minegen", "runs", "--out", out)
        assert p.returncode == 0 and "(LATEST)" in p.stdout, p.stderr
        p = run_cli("minegen", "diff", "LATEST", "LATEST", "--out", out)
        assert p.returncode == 0 and "HTML page: not written (read-only file system" in p.stdout
    finally:
        subprocess.run(["umount", str(out)], check=False)


@pytest.mark.parametrize("args, why", [
    (["--worker-timeout", "inf"], "worker-timeout: must be a number of seconds in (0, 86400]"),
    (["--worker-timeout", "nan"], "worker-timeout: must be a number of seconds in (0, 86400]"),
    (["--workers", "4096"], "workers must be at most"),
    (["--rows", "1:256"], "--rows 1:256: node_depth must be an integer in [0, 255]"),
    (["--rows", f"{1 << 64}:0"], "level_index must be an integer in [1, 9223372036854775807]"),
    (["--generator", "tilegen", "--n", str(10 ** 20)],
     "--n: must be a whole number of boards in [1, 65536]"),
    (["--generator", "minegen", "--n", "5000"],
     "boards per row must be an int in [1, 4096] for minegen"),
    (["--out", ""], "argument --out: must not be empty"),
])
def test_out_of_range_options_exit_2_in_one_line(tmp_path, monkeypatch, args, why):
    monkeypatch.chdir(tmp_path)
    p = run_cli("minegen", "audit", "--n", "4", "--out", tmp_path / "out", *args)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert why in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().count("\n") == 0 and not list(tmp_path.iterdir()), p.stderr


def test_a_damaged_latest_is_no_run_and_says_why(tmp_path):
    """Never followed outside its folder, and never reported as missing: the message
    says what is wrong with the file (issue 29 item 9)."""
    from pipeline.store.runs import latest, resolve_run

    vdir = tmp_path / "metric_v1"
    vdir.mkdir()
    for body, why in ((b"\xff\xfe\x00binary", "is not UTF-8 text"),
                      (b"../../etc\n", "holds '../../etc', not a run id"),
                      (b"", "is empty"), (b"  \n", "is empty"),
                      (b"\xef\xbb\xbf20261202T000000Z-abcd-n4\n", "byte-order mark"),
                      (b"20261202T000000Z-abcd-n4\n", "which is not a finished run folder")):
        (vdir / "LATEST").write_bytes(body)
        assert latest(vdir) is None or "finished" in why  # a run id, of no finished run
        with pytest.raises(InputError, match="LATEST") as e:
            resolve_run("LATEST", tmp_path, "")
        assert why in str(e.value) and "\n" not in str(e.value), (body, str(e.value))


@pytest.mark.parametrize("cmd", [["reconcile", "--telemetry", "x.csv", "--run", "RUN"],
                                 ["diff", "RUN", "LATEST"], ["tune", "--run", "RUN"]])
def test_a_missing_run_path_is_named_as_given(tmp_path, cmd):
    """An absolute --run (or run argument) that does not exist is named as the user gave
    it, not glued onto --out."""
    argv = [a.replace("RUN", "/nonexistent/run-folder") for a in cmd]
    p = run_cli("minegen", *argv, "--out", tmp_path / "out")
    assert p.returncode == 2, p.stderr
    line = p.stderr.strip()
    assert "/nonexistent/run-folder does not exist" in line and "metric_v*" not in line, line
    assert "\n" not in line and "Traceback" not in line


def test_a_table_warning_is_said_on_the_audits_console(tmp_path):
    """`validate` warns about a misspelled table file; the audit says the same on stderr
    (issue 29 item 9: a nightly log must show it)."""
    import shutil

    root = tmp_path / "t"
    shutil.copytree(REPO / "tables", root, ignore=shutil.ignore_patterns("tilematch"))
    (root / "economy.toml").rename(root / "econmy.toml")
    p = run_cli("minegen", "audit", "--tables", root, "--rows", "9:0", "--n", "4",
                "--out", tmp_path / "out")
    assert p.returncode == 2  # no row 9: refused after the tables were read
    assert "[warning] unknown_file: econmy.toml: not a file of this table root" in p.stderr
    assert "did you mean economy.toml?" in p.stderr


def test_a_misspelled_table_file_is_named_not_ignored(tmp_path):
    import shutil

    from minegen.table_loader import collect_diagnostics
    from tilegen.table_loader import collect_diagnostics as tile_diagnostics

    root = tmp_path / "t"
    shutil.copytree(REPO / "tables", root)
    (root / "economy.toml").rename(root / "econmy.toml")
    shutil.copy(root / "tilematch" / "rules.toml", root / "tilematch" / "rule.toml")
    (got,) = [d for d in collect_diagnostics(root) if d.category == "unknown_file"]
    assert got.severity == "warning" and got.file == "econmy.toml"
    assert "did you mean economy.toml?" in got.rule and "economy.toml is missing" in got.rule
    (got,) = [d for d in tile_diagnostics(root / "tilematch") if d.category == "unknown_file"]
    assert got.file == "rule.toml" and "did you mean rules.toml?" in got.rule
    assert "missing" not in got.rule  # rules.toml is there: rule.toml is just extra
    p = run_cli("minegen", "validate", "--tables", root)
    assert p.returncode == 0 and "[warning] unknown_file: econmy.toml" in p.stdout + p.stderr


def test_a_misspelled_profile_section_is_refused(tmp_path):
    profile = tmp_path / "p.toml"
    profile.write_text("[audits]\nn = 16\n")
    p = run_cli("minegen", "audit", "--profile", profile, "--out", tmp_path / "out")
    assert p.returncode == 2 and "unknown section(s) [audits] (did you mean [audit]?)" in \
        p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


TILE_BENCH = ["tilegen", "bench", "--repeats", "100"]
MINE_BENCH = ["minegen", "bench", "--width", "64", "--height", "64", "--density", "0.2",
              "--boards", "4096", "--repeats", "4"]  # 2^26 cells: minegen bench.WORK


@pytest.mark.parametrize("cmd, sig", [
    (TILE_BENCH, signal.SIGINT),
    pytest.param(MINE_BENCH, signal.SIGTERM, marks=pytest.mark.slow),
    pytest.param(TILE_BENCH, signal.SIGTERM, marks=pytest.mark.slow),
    pytest.param(MINE_BENCH, signal.SIGINT, marks=pytest.mark.slow),
])
def test_a_long_command_ends_on_a_signal_within_a_second(cmd, sig):
    """A per-board computation (here a bench, minutes long) ends within a second of SIGINT
    or SIGTERM, with 128 + the signal and one line, even while a kernel runs."""
    prog, *args = cmd
    p = subprocess.Popen([sys.executable, "-m", f"{prog}.cli", *args], cwd=REPO,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(2.0)
    assert p.poll() is None, "ended before the signal"
    t0 = time.monotonic()
    p.send_signal(sig)
    err = p.communicate(timeout=30)[1]
    assert p.returncode == 128 + sig and time.monotonic() - t0 < 1.0, (p.returncode, err)
    assert err.strip().splitlines()[-1] == f"{prog}: interrupted ({signal.Signals(sig).name})"
    assert "Traceback" not in err


def test_simulation_and_search_settings_are_bounded(tmp_path):
    import shutil

    root = tmp_path / "t"
    shutil.copytree(REPO / "tables" / "tilematch", root)
    text = (root / "rules.toml").read_text()
    text = text.replace("runs_per_strategy = 100", "runs_per_strategy = 100000000")
    (root / "rules.toml").write_text(text.replace("dfs_node_cap = 200000",
                                                  "dfs_node_cap = 999999999"))
    p = subprocess.run([sys.executable, "-m", "tilegen.cli", "validate", "--tables", root],
                       capture_output=True, text=True, timeout=60, cwd=REPO)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert "runs_per_strategy" in p.stderr and "dfs_node_cap" in p.stderr, p.stderr


def test_every_commands_help_ends_with_its_exit_codes():
    import argparse

    from minegen.cli import build_parser as mine
    from tilegen.cli import build_parser as tile

    for build in (mine, tile):
        (subs,) = [a for a in build()._actions if isinstance(a, argparse._SubParsersAction)]
        for name, parser in subs.choices.items():
            text = parser.format_help()
            assert "exit codes:" in text and "\n  0  " in text, (parser.prog, text[-300:])


def test_a_byte_order_mark_is_named(tmp_path):
    import shutil

    root = tmp_path / "t"
    shutil.copytree(REPO / "tables", root, ignore=shutil.ignore_patterns("tilematch"))
    body = (root / "board_gen.toml").read_bytes()
    (root / "board_gen.toml").write_bytes(b"\xef\xbb\xbf" + body)
    p = run_cli("minegen", "validate", "--tables", root)
    assert p.returncode == 2 and "byte-order mark (BOM)" in p.stderr, p.stderr
    profile = tmp_path / "p.toml"
    profile.write_bytes(b"\xef\xbb\xbf[audit]\nn = 4\n")
    p = run_cli("minegen", "audit", "--profile", profile, "--out", tmp_path / "out")
    assert p.returncode == 2 and "byte-order mark (BOM)" in p.stderr, p.stderr
    assert p.stderr.strip().count("\n") == 0


@pytest.mark.parametrize("port", ["0", "65536", "99999"])
def test_a_port_out_of_range_is_bad_input_at_once(tmp_path, port):
    t0 = time.monotonic()
    p = run_cli("minegen", "audit", "--scheduler", f"127.0.0.1:{port}", "--n", "4", "--out",
                   tmp_path / "o")
    assert p.returncode == 2 and "the port must be in 1..65535" in p.stderr, p.stderr
    assert time.monotonic() - t0 < 10 and not (tmp_path / "o").exists()


def test_remove_partial_says_what_it_kept_and_kill_9_leftovers_go(tmp_path):
    import os as _os

    out = tmp_path / "out"
    vdir = out / "metric_v1"
    held = ShardStore.claim(vdir, "20260101T000000Z-aaaa-n4", {"generator": "minegen"})
    idle = ShardStore.claim(vdir, "20260101T000001Z-bbbb-n4", {"generator": "minegen"})
    idle.unlock()
    dead = subprocess.Popen(["true"])
    dead.wait()  # a pid that is gone: the leftover of a killed writer
    leftover = vdir / f".{idle.run_id}.{dead.pid}-0123abcd.tmp"
    leftover.mkdir()
    live = vdir / f".{idle.run_id}.{_os.getpid()}-4567cdef.tmp"  # a live writer's: kept
    live.mkdir()
    try:
        p = cli("runs", "--out", out, "--remove-partial", "all")
        assert p.returncode == 0, p.stderr
        assert f"removed partial run {idle.run_id}" in p.stdout
        assert f"kept partial run {held.run_id}: a process holds it" in p.stdout
        assert not leftover.exists() and live.exists() and held.folder.exists()
    finally:
        held.remove()
    p = cli("runs", "--out", out, "--remove-partial", "all")
    assert p.returncode == 0 and "no partial run to remove" in p.stdout, p.stdout


@pytest.mark.cluster
@pytest.mark.parametrize("size", ["300k", "1m"])
def test_a_disk_that_fills_during_the_run_is_exit_2(tmp_path, size, cluster):
    """The probe at the start passes; the disk fills under the shards or the run folder
    (Polars and Arrow say so in words of their own): exit 2, "no space left", the rows
    already finished kept for --resume. The client writes all of these, so the job runs
    on the session's cluster (a process of its own: its whole stderr is read)."""
    out = tmp_path / "small"
    _mount_tmpfs(out, f"size={size}")
    try:
        p = cli("audit", "--n", "256", "--scheduler", cluster, "--out", out, timeout=120)
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert "no space left on the device" in p.stderr and "Traceback" not in p.stderr
        assert "--resume" in p.stderr
    finally:
        subprocess.run(["umount", str(out)], check=False)


@pytest.mark.parametrize("flag, body, why", [
    ("--slurm", 'memory = "lots"\ncores = 1\n', 'memory must be a size such as "2GB"'),
    ("--slurm", 'memory = "2GB"\n', "cores is missing"),
    ("--slurm", 'memory = "2GB"\ncores = -3\njobs = "x"\n', "cores must be an integer in [1, 4096]"),
    ("--profile", 'memory = "2GB"\ncores = 1\nwalltime = "soon"\n',
     "walltime must be a SLURM time"),
    ("--profile", 'memory = "2GB"\ncores = 1\nworker_timeout = inf\n',
     "worker_timeout must be a number of seconds in (0, 86400]"),
    ("--slurm", f'memory = "2GB"\ncores = 1\njobs = {10 ** 20}\n', "jobs must be an integer in [1, 10000]"),
    # Operations IV, defect 5: values that reached the job script unchecked
    ("--slurm", 'memory = "2GB"\ncores = 1\njob_name = "x\\n#SBATCH --uid=0\\nrm -rf /"\n',
     "job_name must hold no control character"),
    ("--slurm", 'memory = "2GB"\ncores = 1\njob_name = "x --uid=0"\n', "job_name must be a name"),
    ("--slurm", 'memory = "2GB"\ncores = 1\nwalltime = "99:99:99"\n', "walltime must be a SLURM time"),
    ("--slurm", 'memory = "2GB"\ncores = 1\nwalltime = "1-24:00"\n', "walltime must be a SLURM time"),
    ("--slurm", 'memory = "2GB"\ncores = 1\ninterface = "nope0"\n',
     "interface 'nope0' is not a network interface of this machine"),
    ("--profile", 'memory = "2GB"\ncores = 1\nscheduler_options = { interface = "nope0" }\n',
     "scheduler_options.interface 'nope0' is not a network interface"),
    ("--slurm", 'memory = "2GB"\ncores = 1\nworker_extra_args = "--no-dashboard"\n',
     "worker_extra_args must be a list of strings"),
    ("--slurm", 'memory = "2GB"\ncores = 1\njob_extra = ["--nodes=1"]\n',
     "job_extra is not taken here: write job_extra_directives"),
])
def test_bad_slurm_values_exit_2_before_any_cluster(tmp_path, flag, body, why):
    profile = tmp_path / "s.toml"
    profile.write_text("[slurm]\n" + body)
    p = run_cli("minegen", "audit", flag, profile, "--dry-run", "--out", tmp_path / "out")
    assert p.returncode == 2 and why in p.stderr, (flag, p.stderr)
    assert "Traceback" not in p.stderr and p.stderr.strip().count("\n") == 0
    assert str(profile) in p.stderr and p.stdout == ""  # no job script printed
    assert not (tmp_path / "out").exists()


HOSTILE_ARGS = ["--dashboard-address", "127.0.0.1:0; rm -rf /", "$(touch pwned)", "`id`",
                "it's", 'a "b" c', "x > /etc/passwd", "*", "~root", "&&", "|", "#x"]


def test_every_worker_argument_is_shell_quoted_in_the_job_script(tmp_path):
    """Operations IV, defect 5: the profile's worker arguments and paths reach the job
    script's worker line quoted (shlex.quote): bash reads back exactly the values given."""
    import shlex
    import tomllib

    profile = tmp_path / "s.toml"
    profile.write_text('[slurm]\nmemory = "2GB"\ncores = 1\ninterface = "lo"\n'
                       'local_directory = "/tmp/my scratch; id"\n'
                       'python = "/opt/my python/bin/python3"\n'
                       f"worker_extra_args = {json.dumps(HOSTILE_ARGS)}\n")
    assert tomllib.loads(profile.read_text())["slurm"]["worker_extra_args"] == HOSTILE_ARGS
    p = run_cli("minegen", "audit", "--slurm", profile, "--dry-run")
    assert p.returncode == 0, p.stderr
    command = [line for line in p.stdout.splitlines() if "distributed.cli.dask_worker" in line]
    assert len(command) == 1, p.stdout
    words = shlex.split(command[0])
    assert words[0] == "/opt/my python/bin/python3"
    assert words[words.index("--local-directory") + 1] == "/tmp/my scratch; id"
    at = words.index(HOSTILE_ARGS[0])
    assert words[at:at + len(HOSTILE_ARGS)] == HOSTILE_ARGS
    assert words[-2:] == ["--interface", "lo"]


def test_a_missing_sbatch_is_exit_3_at_once(tmp_path):
    """Operations IV, defect 9: no sbatch on PATH is one line and exit 3 before anything
    is loaded, written or started (it was a tornado traceback, then the profile's worker
    timeout)."""
    out = tmp_path / "out"
    env = {**os.environ, "PATH": str(tmp_path / "no-bin")}
    t0 = time.monotonic()
    p = cli("audit", "--slurm", REPO / "configs" / "slurm.toml", "--rows", "1:0", "--n", "4",
            "--out", out, timeout=60, env=env)
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert p.stderr.startswith("minegen: sbatch not found on PATH: "), p.stderr
    assert p.stderr.strip().count("\n") == 0 and "Traceback" not in p.stderr
    assert time.monotonic() - t0 < 30 and not out.exists()


def test_slurm_logs_under_an_out_with_blanks_are_refused(tmp_path):
    """The job logs' folder (under --out unless the profile names one) is written into
    #SBATCH -o/-e lines, which sbatch splits at blanks."""
    p = run_cli("minegen", "audit", "--slurm", REPO / "configs" / "slurm.toml", "--dry-run",
                "--out", tmp_path / "my reports")
    assert p.returncode == 2 and "#SBATCH -o/-e" in p.stderr and p.stdout == "", p.stderr


@pytest.mark.parametrize("args, why", [
    (["1", "256"], "depth: must be an integer in [0, 255]; got '256'"),
    (["1", "0", "--index", str(10 ** 20)], "--index: must be an integer in [0, 9223372036854775807]"),
    (["1", "0", "--sigma", str(10 ** 20)], "--sigma: must be an integer in [0, 9223372036854775807]"),
    (["1", "0", "--index", str((1 << 63) - 1)], "past the last board of the row's stream"),
])
def test_board_arguments_past_the_records_range_exit_2(args, why):
    p = run_cli("minegen", "generate", *args)
    assert p.returncode == 2 and why in p.stderr and "Traceback" not in p.stderr, p.stderr


@pytest.mark.cluster
def test_the_most_workers_a_machine_takes_print_no_traceback(tmp_path):
    """4 worker processes per CPU (the bound): the run completes and the workers' own
    loggers (a heartbeat cut by the shutdown of a busy machine) print nothing."""
    from pipeline.options import max_workers

    p = cli("audit", "--rows", "1:0,2:4", "--n", "64", "--workers", str(max_workers()),
            "--out", tmp_path / "out", timeout=300)
    audit_exit(p, tmp_path / "out")
    assert "Traceback" not in p.stderr and "ERROR" not in p.stderr, p.stderr

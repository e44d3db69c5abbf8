"""An embedded cluster's workers forked from a template (decision 267,
``pipeline.engine.template``): real LocalClusters on 127.0.0.1, real fork servers, each
stopped by the session that started it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.engine.housekeeping import SETTINGS
from pipeline.engine.session import ClusterSpec, session

pytestmark = pytest.mark.cluster


def _facts():  # runs on a worker
    import os
    import sys

    import dask

    from pipeline.engine.housekeeping import SETTINGS

    return {"housekeeping": {k: dask.config.get(k) for k in SETTINGS},
            "ppid": os.getppid(), "seed": os.environ.get("PYTHONHASHSEED"),
            "probe": os.environ.get("MINEGEN_TEMPLATE_PROBE"), "hash": hash("minegen"),
            "configured": os.environ.get("minegen_configured"),
            "preloaded": "minegen.batch" in sys.modules}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split()[0] != "Z"


def _spawned_hash() -> int:
    """hash("minegen") in an interpreter started the way distributed's nanny starts one."""
    env = {**os.environ, "PYTHONHASHSEED": "6640"}
    return int(subprocess.run([sys.executable, "-c", "print(hash('minegen'))"], env=env,
                              capture_output=True, text=True, check=True).stdout)


def test_workers_fork_from_a_template_that_lives_as_long_as_its_session(tmp_path,
                                                                       monkeypatch):
    """The workers are children of one template (not of the client), which imported the
    preloaded modules before they were forked and started with the nanny's pre-spawn
    variables (hashing equal to a spawned worker's); each session starts its own in the
    environment of that moment; when it closes, the template is gone and so is its
    socket's folder inside --out."""
    out = tmp_path / "out"
    out.mkdir()  # a template's folder goes into --out as it is (a job has made it)
    seen = []
    for probe in ("first", "second"):
        monkeypatch.setenv("MINEGEN_TEMPLATE_PROBE", probe)
        with session(ClusterSpec(workers=2, out=str(out)), preload=("minegen.batch",)) as s:
            facts = list(s.client.run(_facts).values())
            assert (out / ".workers").is_dir()
        seen.append(facts)
        parents = {f["ppid"] for f in facts}
        assert len(facts) == 2 and len(parents) == 1 and os.getpid() not in parents
        (template,) = parents
        assert not _alive(template), "the template outlived its session"
        assert not (out / ".workers").exists()
        assert {(f["seed"], f["probe"], f["preloaded"]) for f in facts} == {
            ("6640", probe, True)}
        assert {f["hash"] for f in facts} == {_spawned_hash()}
        assert all(f["housekeeping"] == SETTINGS for f in facts)  # decision 312
    assert seen[0][0]["ppid"] != seen[1][0]["ppid"]
    assert sorted(p.name for p in out.iterdir()) == []


def _loaded():  # runs on a worker, before any task
    import sys

    from minegen._kernels import attempt

    return {"warmed": "minegen.audit.warmed" in sys.modules,
            "kernels": len(attempt.generate_boards_tiers.signatures)
            + len(attempt.generate_boards.signatures)}


def test_a_warm_kernel_cache_is_loaded_once_in_the_template(tmp_path, monkeypatch):
    """With the kernel cache warm the template imports the generator's ``warm_module``
    last, so the forked workers hold the kernels before their first task (decision 272);
    with it cold the template never does (``CompileOnce`` compiles, once, elsewhere)."""
    from pipeline.engine.run import worker_modules
    from pipeline.generator import load_generator

    gen = load_generator("minegen")
    monkeypatch.setattr(type(gen), "cold", lambda self: True)
    assert "minegen.audit.warmed" not in worker_modules(gen)
    monkeypatch.setattr(type(gen), "cold", lambda self: False)
    modules = worker_modules(gen)
    assert modules[-1] == "minegen.audit.warmed" and "minegen.batch" in modules
    out = tmp_path / "out"
    out.mkdir()
    with session(ClusterSpec(workers=2, out=str(out)), preload=modules) as s:
        facts = list(s.client.run(_loaded).values())
    assert len(facts) == 2 and all(f["warmed"] and f["kernels"] >= 1 for f in facts), facts


def test_without_a_short_socket_path_the_workers_are_spawned(tmp_path):
    """A socket path is at most 107 bytes: with an output folder deeper than that allows,
    the workers are spawned by the nanny (children of the client), as before."""
    out = tmp_path / ("d" * 60) / ("e" * 60)
    with session(ClusterSpec(workers=1, out=str(out))) as s:
        facts = list(s.client.run(_facts).values())
    assert [f["ppid"] for f in facts] == [os.getpid()]
    assert facts[0]["seed"] == "6640" and facts[0]["hash"] == _spawned_hash()
    assert facts[0]["housekeeping"] == SETTINGS  # spawned workers read it too
    assert not out.exists()


SESSION = """
import json, os, sys
sys.path.insert(0, sys.argv[2])
from test_template import _facts
from pipeline.engine.session import ClusterSpec, session
if __name__ == "__main__":
    with session(ClusterSpec(workers=1, out=sys.argv[1])) as s:
        facts = list(s.client.run(_facts).values())
    print(json.dumps({"client": os.getpid(), "facts": facts}))
"""


def test_a_template_started_with_other_variables_than_the_dask_configs_is_not_used(
        tmp_path):
    """A template starts before the client imports distributed, with distributed's default
    pre-spawn variables; a user's Dask config that sets others (here one more, by Dask's
    environment variable) is read once distributed is imported, and the workers
    are then spawned with it, never forked from a template with other values. A process
    that imported distributed already starts its template with the config's values."""
    import json

    # (Dask reads the variable's key in lower case)
    env = {**os.environ, "DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON__MINEGEN_CONFIGURED": "17"}
    (tmp_path / "out").mkdir()
    p = subprocess.run([sys.executable, "-c", SESSION, str(tmp_path / "out"),
                        str(Path(__file__).parent)], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    run = json.loads(p.stdout.strip().splitlines()[-1])
    assert [(f["ppid"], f["configured"]) for f in run["facts"]] == [(run["client"], "17")]
    assert list((tmp_path / "out").iterdir()) == []  # the template's folder is removed

    import dask

    (tmp_path / "here").mkdir()
    with dask.config.set({"distributed.nanny.pre-spawn-environ.PYTHONHASHSEED": "17"}):
        with session(ClusterSpec(workers=1, out=str(tmp_path / "here"))) as s:
            facts = list(s.client.run(_facts).values())
    assert facts[0]["ppid"] != os.getpid() and facts[0]["seed"] == "17"


def test_a_template_that_dies_leaves_the_workers_spawned(tmp_path, monkeypatch):
    """A template that cannot import what it preloads (here a module that raises) dies
    before it serves: the nannies cannot fork from it, and the session spawns its workers
    instead; nothing of the template is left in --out."""
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "minegen_template_breaks.py").write_text(
        "raise RuntimeError('this module cannot be imported')\n")
    # on the template's own path (a fork server imports from the path it starts with)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(tmp_path / "mods"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    out = tmp_path / "out"
    out.mkdir()
    with session(ClusterSpec(workers=1, out=str(out)),
                 preload=("minegen_template_breaks",)) as s:
        facts = list(s.client.run(_facts).values())
    assert [f["ppid"] for f in facts] == [os.getpid()]
    assert list(out.iterdir()) == []


def test_a_template_started_ahead_is_taken_by_its_session_or_stopped(tmp_path):
    """A job starts its template before its set-up (``template.early``): the session with
    the same modules and --out takes it (its workers are its children, it ends with the
    session); one no session took is stopped when the block ends; an --out that does not
    exist yet is not made for it (the workers of such a job are forked later or spawned)."""
    from multiprocessing import forkserver

    from pipeline.engine import template
    from pipeline.engine.session import sigint_held

    out = tmp_path / "out"
    out.mkdir()
    with template.early(("minegen.batch",), str(out), sigint_held):
        ahead, pid = template._running, forkserver._forkserver._forkserver_pid
        assert ahead is not None and ahead.spare
        with session(ClusterSpec(workers=2, out=str(out)), preload=("minegen.batch",)) as s:
            facts = list(s.client.run(_facts).values())
        assert {f["ppid"] for f in facts} == {pid} and ahead.stopped
    assert not _alive(pid)
    with template.early(("minegen.batch",), str(out), sigint_held):
        unused, pid = template._running, forkserver._forkserver._forkserver_pid
        assert unused is not None and _alive(pid)
    assert unused.stopped and not _alive(pid) and list(out.iterdir()) == []
    with template.early((), str(tmp_path / "later"), sigint_held):
        assert template._running is None
    assert not (tmp_path / "later").exists()


_KILLED_SESSION = """
import sys, time
from pipeline.engine.session import ClusterSpec, session
with session(ClusterSpec(workers=1, out=sys.argv[1]), preload=("minegen.batch",)) as s:
    s.client.run(lambda: 0)
    print("ready", flush=True)
    time.sleep(600)
"""


def test_a_session_killed_leaves_no_socket_behind(tmp_path):
    """SIGKILL of the session process (Operations IV defect 11): once its worker is gone the
    template ends and removes its own socket and folder; nothing is left in --out."""
    import signal
    import time

    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_SESSION, str(out)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        assert [p.name[:9] for p in (out / ".workers").iterdir()] == ["listener-"]
        proc.send_signal(signal.SIGKILL)  # the session only: its template and worker live on
        proc.wait(timeout=30)
        deadline = time.monotonic() + 60
        while (out / ".workers").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not (out / ".workers").exists(), list((out / ".workers").iterdir())
    finally:
        proc.kill()
        proc.wait()
    assert list(out.iterdir()) == []


def test_a_session_removes_sockets_nobody_listens_on(tmp_path):
    """What a SIGKILL of a whole process group leaves (the template killed too): a socket
    file nobody listens on. The next session's start removes it; a socket some process still
    listens on (another run's template) and any other file stay (``template.sweep``)."""
    import socket

    from pipeline.engine import template

    folder = tmp_path / ".workers"
    folder.mkdir()
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(folder / "listener-deadbeef"))
    dead.close()  # the file stays: its process is gone
    with socket.socket(socket.AF_UNIX) as live:
        live.bind(str(folder / "listener-alive123"))
        live.listen()
        (folder / "listener-notasock").write_text("x")
        assert template.sweep(folder) == 1
        assert sorted(p.name for p in folder.iterdir()) == [
            "listener-alive123", "listener-notasock"]
    link = tmp_path / "elsewhere"
    link.symlink_to(folder)
    assert template.sweep(link) == 0  # never through a link put in the folder's place


def test_a_cluster_started_from_the_command_line_reads_the_housekeeping_variables(cluster):
    """``housekeeping.environ`` names each setting as Dask reads it from the environment:
    the suite's shared cluster (``dask scheduler`` / ``dask worker`` started with them)
    holds every one, scheduler and workers (decision 312)."""
    from dask.distributed import Client

    def held():
        import dask

        return {k: dask.config.get(k) for k in SETTINGS}

    with Client(cluster, timeout=30) as c:
        seen = [*c.run(held).values(), c.run_on_scheduler(held)]
    assert len(seen) == 3 and all(s == SETTINGS for s in seen), seen

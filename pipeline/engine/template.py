"""Embedded workers forked from a template process (decision 267).

A LocalCluster's nannies start each worker as a fresh interpreter (multiprocessing's
'spawn'): it imports Dask's distributed and the generator's modules (about 1 s of one core
each on the 2-core reference machine), and at the end of the run each interpreter is torn
down again (0.3 s more once the kernels are loaded). Here a session starts one template the
moment it begins, beside the client's own import of distributed: multiprocessing's fork
server, which imports those modules once (with a warm kernel cache, the generator's
``warm_module`` last: the kernels loaded, decision 272); every worker is forked from it
with them already imported, and ends as a forked child does (``os._exit``, no interpreter
teardown).

The template lives only as long as its session: it is started in the session's environment
with the variables the nanny sets before it spawns a worker (``distributed.nanny.
pre-spawn-environ``, whose PYTHONHASHSEED keeps hashing equal on every worker), and it is
stopped when the session closes, so each run's workers see what spawned ones would see.
Whenever that cannot be had -- not Linux, another fork server in this process, no socket
path short enough inside the output folder, a distributed whose pre-spawn variables differ
from the template's -- the workers are spawned as before: slower, never different.

A socket left behind is removed twice over (Operations IV, defect 11; decision 300): the
template removes its own socket when it ends, also when its session was killed (it ends once
the last worker forked from it has gone, module ``atexit`` below: a SIGKILL of the session
process leaves nothing); and a session that starts removes, from its ``.workers`` folder,
every socket that no process listens on (Linux's ``/proc/net/unix``): what a SIGKILL of the
whole process group left.

Three names of ``multiprocessing`` are private: the fork server object's ``_stop`` and
``_forkserver_pid`` (its own tests use them) and the process's ``_config['tempdir']``
(where the listening socket is made; here inside ``--out``, not the system temp folder).
Each is looked up with a fallback to 'spawn'.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import signal
import stat
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

# A socket's path is at most 107 bytes on Linux; multiprocessing names the socket
# "listener-" and 8 characters inside the folder it is given.
SOCKET_PATH_MAX = 107
SOCKET_NAME = len("/listener-12345678")
FOLDER = ".workers"  # inside --out, while a session runs; removed when it closes

PREFIX = "listener-"  # multiprocessing's name for a fork server's socket

_lock = threading.Lock()
_running: Template | None = None  # one template a process (the fork server is one)
_PID = os.getpid()  # the process that imported this module (forks of it are not it)


def _own_socket_at_exit() -> None:
    """In a template (a fork server started here, which imports this module first): its
    socket and, once empty, its folder are removed as it exits -- after its last worker,
    also when its session was killed. In any other process: nothing (a session's own
    template is stopped by ``Template.stop``, which removes them)."""
    server = getattr(sys.modules.get("multiprocessing.forkserver"), "_forkserver", None)
    address = getattr(server, "_forkserver_address", None)
    if (os.getpid() != _PID or getattr(server, "_forkserver_pid", 0) is not None
            or not isinstance(address, str)):
        return  # a fork of it, or not a fork server (a client's pid is set, a server's None)
    path = Path(address)
    if path.parent.name != FOLDER or not path.name.startswith(PREFIX):
        return  # a fork server that is not a template of ours
    with contextlib.suppress(OSError):
        path.unlink()
    with contextlib.suppress(OSError):
        path.parent.rmdir()


atexit.register(_own_socket_at_exit)


def listening() -> set[str] | None:
    """The paths of the Unix sockets that some process listens on (``/proc/net/unix``,
    this network namespace), or None where that cannot be read."""
    from boardcore import files

    try:  # /proc/net is a link (to self/net); its files say size 0 and are read to the end
        text = files.read_bytes("/proc/net/unix", follow=True).decode(errors="replace")
    except (OSError, files.Refused):
        return None
    paths = set()
    for line in text.splitlines()[1:]:
        parts = line.split(maxsplit=7)
        # Num RefCount Protocol Flags Type St Inode Path; flag 00010000 = listening
        if len(parts) >= 8 and int(parts[3], 16) & 0x10000:
            paths.add(parts[7])
    return paths


def sweep(folder: Path) -> int:
    """Removes from a ``.workers`` folder the sockets nobody listens on (left by a run
    killed with its template); a socket another run's template serves stays. Returns how
    many were removed; where the listeners cannot be read, none is."""
    live = listening()
    if live is None:
        return 0
    removed = 0
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return 0  # a link planted in its place: nothing through it
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        try:
            if (entry.name.startswith(PREFIX)
                    and stat.S_ISSOCK(entry.stat(follow_symlinks=False).st_mode)
                    and os.fsdecode(entry.path) not in live):
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    return removed


def pre_spawn_environ() -> dict[str, str]:
    """The variables a nanny sets before it starts a worker process: the Dask config's
    ``distributed.nanny.pre-spawn-environ``, with PYTHONHASHSEED 6640 where it is unset or
    0, as ``distributed.Nanny`` does. Before distributed is imported (a session starts its
    template first, so that the two imports overlap), distributed's own defaults, read
    from its ``distributed.yaml`` without importing Dask: a user's Dask config that sets
    other values is seen once distributed is imported, and then the template is not used
    (``Template.method``)."""
    if "distributed" in sys.modules:
        import dask.config

        value = dask.config.get("distributed.nanny.pre-spawn-environ", default=None)
    else:
        import yaml

        from boardcore import files

        spec = importlib.util.find_spec("distributed")
        path = Path(spec.origin).parent / "distributed.yaml"
        value = yaml.safe_load(files.read_text(path, follow=True))["distributed"]["nanny"][
            "pre-spawn-environ"]
    env = {str(k): str(v) for k, v in (value or {}).items()}
    if env.get("PYTHONHASHSEED") in (None, "0"):
        env["PYTHONHASHSEED"] = "6640"
    return env


class Template:
    """A fork server this session started; ``method()`` is what the cluster's nannies
    start workers with, ``stop()`` ends it (once; the session's exit calls it)."""

    def __init__(self, folder: Path, environ: dict[str, str], modules: tuple[str, ...]):
        self.folder = folder
        self.environ = environ
        self.modules = modules
        self.stopped = False
        self.spare = False  # started ahead of its session (``early``), not taken yet

    def method(self) -> str:
        """'forkserver' while the template runs with the pre-spawn variables distributed
        (now imported) would set; else the template is stopped and it is 'spawn'."""
        if not self.stopped and pre_spawn_environ() == self.environ:
            return "forkserver"
        self.stop()
        return "spawn"

    def stop(self) -> None:
        global _running
        with _lock:
            if self.stopped:
                return
            self.stopped = True
            from multiprocessing import forkserver

            server = forkserver._forkserver
            # stopped by its PID: it would wait for every worker forked from it (they
            # hold its "alive" pipe too), and a worker that outlived its nanny must not
            # hold the session open; the workers are not its to stop
            with contextlib.suppress(OSError):
                os.kill(server._forkserver_pid, signal.SIGTERM)
            with contextlib.suppress(OSError):
                server._stop()  # reaps it, closes its pipe, removes its socket
            _running = None
        try:
            self.folder.rmdir()  # empty now (its socket is unlinked); another run's stays
        except OSError:
            pass


def start(modules: Sequence[str], out: str | None) -> Template | None:
    """A template that has begun importing ``modules`` (its socket in ``<out>/.workers``),
    or None: the workers are spawned. The caller holds SIGINT blocked (the template and
    the workers forked from it inherit the mask; ``session.sigint_held``)."""
    global _running
    if sys.platform != "linux" or out is None:
        return None
    from multiprocessing import connection, forkserver, get_context, process

    server = getattr(forkserver, "_forkserver", None)
    if not (hasattr(server, "_stop") and hasattr(server, "_forkserver_pid")
            and isinstance(getattr(process.current_process(), "_config", None), dict)
            and hasattr(connection, "arbitrary_address")):
        return None
    folder = Path(out).resolve() / FOLDER
    if len(os.fsencode(folder)) + SOCKET_NAME > SOCKET_PATH_MAX:
        return None
    with _lock:
        if (_running is not None and _running.spare and not _running.stopped
                and (_running.folder, _running.modules) == (folder, tuple(modules))):
            _running.spare = False  # started for this session by ``early``
            return _running
        if _running is not None or server._forkserver_pid is not None:
            return None  # another session's template, or a fork server not ours
        try:
            environ = pre_spawn_environ()
            folder.mkdir(exist_ok=True)  # in --out as it is: never makes --out itself
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None  # a link in its place: no socket made through it
            sweep(folder)
        except (OSError, KeyError, TypeError, ValueError, ImportError):
            return None
        # the nanny sets these in this process too, before it starts a worker: the same
        # values, set a moment earlier, so the template starts with them
        os.environ.update(environ)
        config = process.current_process()._config
        before = config.get("tempdir")
        config["tempdir"] = str(folder)
        try:
            ctx = get_context("forkserver")
            # this module first: the template removes its own socket when it ends
            ctx.set_forkserver_preload([__name__, "distributed", *modules])
            forkserver.ensure_running()
        except OSError:  # a file system without sockets, say: spawn, and leave nothing
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None
        finally:
            if before is None:
                config.pop("tempdir", None)
            else:
                config["tempdir"] = before
        _running = Template(folder, environ, tuple(modules))
        return _running


@contextlib.contextmanager
def early(modules: Sequence[str], out: str | None, held) -> Iterator[None]:
    """A template started now, inside ``held()`` (``session.sigint_held``), for a session
    that begins later in the block: the job's own set-up (its tables, its plans) then
    overlaps the template's imports. ``start`` with the same modules and output folder
    takes it; one that no session took is stopped when the block ends."""
    with held():
        spare = start(modules, out)
    if spare is not None:
        spare.spare = True
    try:
        yield
    finally:
        if spare is not None and spare.spare:
            spare.stop()

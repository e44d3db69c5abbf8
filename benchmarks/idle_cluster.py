"""What a Dask cluster costs while it waits (decision 312): a scheduler and two one-thread
workers (``dask scheduler`` / ``dask worker --nworkers 2``, as the test suite's shared
cluster and a warm engine run them) started on loopback with distributed's defaults and
with ``pipeline.engine.housekeeping``'s settings, each left idle for ``--seconds`` after it
is up; the CPU its processes used meanwhile (user + system, from /proc, every process of
the cluster) as a share of one core. Median of ``--repeats`` clusters a setting, started
one after another.

    .venv/bin/python benchmarks/idle_cluster.py [--seconds 20] [--repeats 3] [--doc]
"""

from __future__ import annotations

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import perfdoc  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def tree(pids: list[int]) -> set[int]:
    """The processes started from ``pids`` (their children, theirs, ...), ``pids`` too."""
    found, todo = set(), list(pids)
    while todo:
        pid = todo.pop()
        found.add(pid)
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            continue
        todo += [int(c) for c in children if int(c) not in found]
    return found


def cpu_seconds(pids: set[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICK


def idle_share(env: dict[str, str], seconds: float) -> float:
    """One cluster's CPU over ``seconds`` of doing nothing, in cores."""
    from dask.distributed import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    addr = f"tcp://127.0.0.1:{port}"
    bindir = Path(sys.executable).parent
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    with tempfile.TemporaryDirectory() as scratch:
        procs = [subprocess.Popen([bindir / "dask", "scheduler", "--host", "127.0.0.1",
                                   "--port", str(port), "--dashboard-address",
                                   "127.0.0.1:0"], cwd=scratch, **quiet),
                 subprocess.Popen([bindir / "dask", "worker", addr, "--nworkers", "2",
                                   "--nthreads", "1", "--host", "127.0.0.1",
                                   "--dashboard-address", "127.0.0.1:0", "--local-directory",
                                   scratch], cwd=scratch, **quiet)]
        try:
            with Client(addr, timeout=60) as c:  # connecting retries until the scheduler is up
                c.wait_for_workers(2, timeout=60)
            time.sleep(2)  # past the start's own work
            pids = tree([p.pid for p in procs])
            before, t0 = cpu_seconds(pids), time.monotonic()
            time.sleep(seconds)
            return (cpu_seconds(pids) - before) / (time.monotonic() - t0)
        finally:
            for p in reversed(procs):
                p.terminate()
            for p in procs:
                p.wait(timeout=30)


def main() -> int:
    from pipeline.engine.housekeeping import environ

    ap = perfdoc.arguments(__doc__)
    ap.add_argument("--seconds", type=float, default=20.0)
    a = ap.parse_args()
    plain = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    settings = {"distributed's defaults": plain, "housekeeping's settings": {**plain,
                                                                           **environ()}}
    shares = {label: [idle_share(env, a.seconds) for _ in range(a.repeats)]
              for label, env in settings.items()}
    rows = [[label, f"{100 * statistics.median(v):.1f} %", ", ".join(f"{100 * x:.1f}" for x in v)]
            for label, v in shares.items()]
    ratio = statistics.median(shares["distributed's defaults"]) / max(
        statistics.median(shares["housekeeping's settings"]), 1e-9)
    body = perfdoc.table(["idle cluster (scheduler + 2 workers)", "share of one core, median",
                          "each cluster"], rows)
    body += (f"\n\nEach cluster idle for {a.seconds:.0f} s once its workers joined; CPU of all "
             f"its processes (user + system). The settings cut the idle cost "
             f"{ratio:.1f}-fold. A run's own work is unchanged (records never depend on "
             f"them); what is given up is in `pipeline/engine/housekeeping.py`.")
    perfdoc.publish(a.doc, "idle-cluster", "A cluster at rest", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())

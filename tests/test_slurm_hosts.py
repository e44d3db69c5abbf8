"""`minegen audit --slurm` on a SLURM cluster of two hosts (tests/slurm_local.py
``start_hosts``): the controller and the audit's client, with its Dask scheduler, in a
"hub" network namespace, one slurmd in each of two node namespaces, all joined by veth
pairs on a private subnet that exists only inside those namespaces. The profile names the
interface (``interface = "mg0"``) instead of loopback: the workers on the two nodes reach
the scheduler over that network, both compute rows, and the records are the very bytes a
LocalCluster run of the same rows gives.

Skipped only when the packages are missing and the package registry cannot be reached, or
when network namespaces cannot be made here (not root).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from slurm_local import (IFACE, SUBNET, HarnessError, NamespacesUnavailable,
                         PackagesUnavailable, _die_with_parent, listeners, marked_pids,
                         netns_names, start_hosts)
from test_slurm import finish, manifest, same_as_local  # the single-node tests' own

pytestmark = pytest.mark.cluster
ROWS = "1:0,2:4,3:4"
N = 64  # the default split (by cost, for the profile's 2 workers): 10 blocks of 12-32 boards
BOARDS = len(ROWS.split(",")) * N
SHARE = 0.4  # the least share of the boards each node computes under the default split
AUDIT_TIMEOUT_S = 240  # a hang is a failure, not a stuck CI run
JOB_NAME = "minegen-hosts-test"

# Each node has 1 CPU and each job asks for 1 core: the two jobs can only run on two
# different nodes. No `host` anywhere: the scheduler and the workers bind the interface.
PROFILE = """\
[slurm]
jobs = 2
queue = "{partition}"
cores = 1
processes = 1
memory = "{memory}MiB"
walltime = "00:10:00"
worker_timeout = 120
job_name = "{job_name}"
job_extra_directives = ["--nodes=1"]
log_directory = "{logs}"
local_directory = "{scratch}"
interface = "{iface}"
scheduler_options = {{ dashboard_address = "127.0.0.1:0" }}
worker_extra_args = ["--no-dashboard", "--dashboard-address", "127.0.0.1:0",
                     "--preload", "{probe}"]
"""

# Loaded by every Dask worker of the run (dask worker --preload). It writes one line per
# block the worker finished: the block's key, the worker's address, its SLURM node and job.
# And it holds a worker's first block until a worker on each node has started one: the
# first worker to join would otherwise compute the few small blocks alone while the other
# still loads the kernels. Then every block takes BOARD_S a board more before it runs: a
# block of these small rows is a millisecond, a real one seconds; with boards of a real
# weight (alike in every row, where the split's estimate says the rows differ), which node
# computes what is the split's and the scheduler's doing, not a race to take
# sub-millisecond tasks. It only orders and paces blocks; what a block computes is
# untouched (the records are compared with a LocalCluster run's below).
PROBE = """\
import os
import time
from pathlib import Path

from distributed import WorkerPlugin

FOLDER = Path({folder!r})
NODES = {nodes}
GATE_S = 120
BOARD_S = 0.01


class BlockLog(WorkerPlugin):
    name = "minegen-test-block-log"

    def setup(self, worker):
        self.worker = worker
        self.node = os.environ.get("SLURMD_NODENAME", "?")
        self.job = os.environ.get("SLURM_JOB_ID", "?")
        self.gated = False

    def transition(self, key, start, finish, **kwargs):
        if not str(key).startswith("minegen-block-"):
            return
        if finish == "executing" and not self.gated:
            self.gated = True
            (FOLDER / f"started-{{self.node}}").write_text(self.worker.address)
            deadline = time.monotonic() + GATE_S
            while len(list(FOLDER.glob("started-*"))) < NODES and time.monotonic() < deadline:
                time.sleep(0.05)
        if finish == "executing":
            time.sleep(BOARD_S * int(str(key).rsplit("-", 1)[1]))  # the key ends on its boards
        elif finish == "memory":
            with open(FOLDER / f"blocks-{{self.node}}-{{self.job}}.tsv", "a") as f:
                f.write(f"{{key}}\\t{{self.worker.address}}\\t{{self.node}}\\t{{self.job}}\\n")


async def dask_setup(worker):
    await worker.plugin_add(BlockLog(), name=BlockLog.name)
"""


@pytest.fixture
def hosts():
    try:
        cluster = start_hosts(2)  # its own /tmp/minegen-slurm-hosts-* folder
    except (PackagesUnavailable, NamespacesUnavailable) as e:
        pytest.skip(f"a SLURM cluster of two hosts cannot be made here: {e}")
    try:
        yield cluster
    finally:
        names = list(cluster.namespaces.values())
        cluster.stop()  # jobs cancelled, processes stopped by PID, namespaces deleted
        assert not set(names) & set(netns_names()), "a namespace of the test is left"
        assert not marked_pids(cluster.folder), "a process of the test is left"
        assert not cluster.folder.exists()


def minegen(cmd: list[str], env: dict, cwd: Path) -> subprocess.Popen:
    """A command as a process of its own, ended (SIGTERM: the audit cancels its jobs) if
    this test process dies."""
    return subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=_die_with_parent)


def watch(hosts, proc: subprocess.Popen, deadline: float) -> tuple[dict, set, set]:
    """Poll while the audit runs: (job id -> name, states and the nodes it ran on; every
    listener of ours reachable beyond loopback and the test subnet; the client's own
    listeners on the subnet: its Dask scheduler)."""
    seen: dict[str, dict] = {}
    listening: set[str] = set()
    scheduler_on: set[str] = set()
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            for job, name, state, nodes in hosts.job_nodes():
                j = seen.setdefault(job, {"name": name, "states": set(), "nodes": set()})
                j["states"].add(state)
                if state == "RUNNING":
                    j["nodes"].add(nodes)
        except (HarnessError, subprocess.TimeoutExpired):
            pass  # one missed poll; the next one counts
        listening.update(hosts.exposed())
        scheduler_on.update(f"{addr}:{port}" for pid, _, addr, port, _ in
                            listeners(hosts.folder)
                            if pid == proc.pid and addr.startswith(SUBNET + "."))
        time.sleep(0.2)
    return seen, listening, scheduler_on


def blocks_by_node(probe_dir: Path, hosts, node_of_job: dict) -> dict[str, set[str]]:
    """node -> keys of the blocks its worker finished (the probe's lines), each line held
    to the node's address and to the job SLURM ran there; no block counted twice."""
    blocks: dict[str, set[str]] = {}
    for path in sorted(probe_dir.glob("blocks-*.tsv")):
        for line in path.read_text().splitlines():
            key, address, node, job = line.split("\t")
            assert address.startswith(f"tcp://{hosts.addresses[node]}:"), line
            assert node_of_job.get(job) == node, (line, node_of_job)
            assert not any(key in b for b in blocks.values()), f"{key} twice"
            blocks.setdefault(node, set()).add(key)
    return blocks


def test_audit_on_two_hosts_computes_rows_on_both_and_matches_localcluster(hosts, tmp_path):
    out_slurm, out_local, cwd, cwd_local, probe_dir = (
        tmp_path / d for d in ("slurm", "local", "cwd", "cwd-local", "probe"))
    for d in (out_slurm, out_local, cwd, cwd_local, probe_dir):
        d.mkdir()
    probe = tmp_path / "block_log.py"
    probe.write_text(PROBE.format(folder=str(probe_dir), nodes=len(hosts.nodes)))
    profile = tmp_path / "profile.toml"
    profile.write_text(PROFILE.format(
        partition=hosts.partition, memory=min(1024, hosts.memory_mb // 2), job_name=JOB_NAME,
        logs=out_slurm / "slurm-logs", scratch=out_slurm / "scratch", iface=IFACE,
        probe=probe))
    env = {**os.environ, **hosts.env}  # SLURM_CONF, PATH with the SLURM clients, marker
    args = ["-m", "minegen.cli", "audit", "--rows", ROWS, "--n", str(N)]  # the default split

    started: list[subprocess.Popen] = []
    try:
        t0 = time.monotonic()
        # the client, and so its Dask scheduler, runs in the hub namespace beside slurmctld
        proc = minegen(hosts.in_hub(sys.executable, *args, "--slurm", str(profile),
                                    "--out", str(out_slurm)), env, cwd)
        started.append(proc)
        # the reference, the same rows on a LocalCluster, runs at the same time: it needs
        # no SLURM, and the SLURM run mostly waits for its jobs
        local = minegen([sys.executable, *args, "--workers", "1", "--out", str(out_local)],
                        {**os.environ}, cwd_local)
        started.append(local)
        deadline = t0 + AUDIT_TIMEOUT_S
        seen, listening, scheduler_on = watch(hosts, proc, deadline)
        out, err = finish(proc, "minegen audit --slurm (two hosts)",
                          max(1, deadline - time.monotonic()))
        wall_slurm = time.monotonic() - t0
        logs = sorted((out_slurm / "slurm-logs").glob("*.err"))
        report = (f"--- stdout\n{out}\n--- stderr\n{err}\n--- jobs seen {seen}\n--- job logs\n"
                  + "\n".join(f"{p.name}:\n{p.read_text()[-1500:]}" for p in logs)
                  + f"\n{hosts.logs()}")

        # two jobs of the profile, each RUNNING on one node, not the same one
        assert {j["name"] for j in seen.values()} == {JOB_NAME}, report
        assert len(seen) == 2, report
        assert all(len(j["nodes"]) == 1 for j in seen.values()), report
        node_of_job = {job: next(iter(j["nodes"])) for job, j in seen.items()}
        assert sorted(node_of_job.values()) == sorted(hosts.nodes), report

        # the scheduler listened on the hub's address on the test subnet, not on loopback
        assert any(a.startswith(f"{hosts.addresses['hub']}:") for a in scheduler_on), \
            f"{scheduler_on}\n{report}"

        # the worker of each node computed blocks; together every board, once; each node
        # a balanced share of the boards under the default split (scale-out, issue 43)
        blocks = blocks_by_node(probe_dir, hosts, node_of_job)
        assert sorted(blocks) == sorted(hosts.nodes), f"blocks per node {blocks}\n{report}"
        boards = {node: sum(int(k.rsplit("-", 1)[1]) for k in keys)
                  for node, keys in blocks.items()}
        assert sum(boards.values()) == BOARDS, blocks
        assert min(boards.values()) >= SHARE * BOARDS, f"boards per node {boards}, {blocks}"

        # cluster.close() cancelled the jobs: nothing left once the audit is over
        end = time.monotonic() + 15
        while hosts.jobs() and time.monotonic() < end:
            time.sleep(0.2)
        assert hosts.jobs() == [], report

        assert not listening, f"reachable beyond loopback and the subnet: {sorted(listening)}"
        held = {a for addrs in hosts.addresses_held().values() for a in addrs}
        assert held <= {"127.0.0.1", "::1", *hosts.addresses.values()}, held
        assert list(cwd.iterdir()) == [], "the audit wrote into its working folder"

        m = manifest(out_slurm)
        assert "SLURMCluster" in m["scheduler"], m["scheduler"]
        assert m["workers"] == 2, m  # the audit's own count of workers that returned blocks
        assert m["split"] == "by cost (estimate)", m["split"]  # no earlier run: the estimate
        assert m["exit_code"] == proc.returncode

        same_as_local(m, local, out_local, BOARDS)
        print(f"\nSLURM audit on two hosts {wall_slurm:.1f} s (both audits "
              f"{time.monotonic() - t0:.1f} s), jobs {node_of_job}, blocks per node "
              f"{ {n: len(b) for n, b in blocks.items()} }, boards per node {boards}, timings {m['timings_s']}; "
              f"harness {hosts.timings}")
    finally:  # no audit outlives a failure (then the fixture stops SLURM)
        for p in started:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()

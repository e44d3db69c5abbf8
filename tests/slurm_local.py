"""A real single-node SLURM on 127.0.0.1, for tests: munged, slurmctld and slurmd run from a
temporary folder with their own config, key, sockets, state, spool, logs and pid files.

    from slurm_local import start, PackagesUnavailable
    cluster = start()                # installs the Debian packages on first use; its own
                                     # /tmp/minegen-slurm-* folder (or start(folder))
    subprocess.run(["sbatch", ...], env=cluster.env)   # SLURM_CONF points at our conf
    cluster.stop()                   # jobs cancelled, daemons stopped by PID, checked gone

From a shell:  python tests/slurm_local.py up DIR   (prints `export SLURM_CONF=...`)
               python tests/slurm_local.py down DIR

Nothing is written outside the folder except what `apt-get install` itself writes. Every
daemon binds to 127.0.0.1 only. Every process of ours (daemons, job steps) carries
MARKER=<folder> in its environment: ``stop`` finds the ones still alive by that marker and
their PID, nothing else is ever signalled. (slurmstepd makes an environment of its own,
without the marker: it ends with its job, which ``stop`` cancels first.)

Several hosts: ``start_hosts(2)`` runs the controller in one network namespace and a slurmd
in each of two others, joined by a private subnet that exists only inside them (see
"several hosts" below); its ``stop`` also stops by PID whatever still runs inside those
namespaces (slurmstepd included), deletes them and checks them gone. Besides its folder it
writes only the namespaces' own entries under /run/netns, removed with them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
NEEDED = ("munged", "slurmctld", "slurmd", "sinfo", "squeue", "sbatch", "scancel")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
MARKER = "MINEGEN_SLURM_HARNESS"
PARTITION = "minegen"
CLUSTER_NAME = "minegen-test"
STATE_FILE = "harness.json"
# apt output that means "the package registry cannot be reached" (skip), not "apt is broken"
UNREACHABLE = re.compile(
    r"Temporary failure resolving|Could not resolve|Failed to fetch|Unable to connect|"
    r"Network is unreachable|Connection (failed|refused|timed out)|Unable to locate package|"
    r"has no installation candidate|Could not connect", re.I)


class HarnessError(RuntimeError):
    """SLURM could not be brought up (or down) here: a real failure, with the logs."""


class PackagesUnavailable(HarnessError):
    """The Debian packages are missing and the package registry cannot be reached."""


# ------------------------------------------------------------------------------ packages
def _which(name: str) -> str | None:
    return shutil.which(name, path=os.environ.get("PATH", "") + ":" + SYSTEM_PATH)


def ensure_packages(timeout: float = 600, packages: tuple[str, ...] = PACKAGES,
                    needed: tuple[str, ...] = NEEDED) -> float:
    """Install the Debian ``packages`` (default: SLURM and munge) if a command of
    ``needed`` is missing (the browser tests use it for Debian's chromium too).

    Returns the seconds spent installing (0 when already there). Raises
    PackagesUnavailable when apt cannot reach the registry, HarnessError on other failures.
    """
    if all(_which(n) for n in needed):
        return 0.0
    if os.geteuid() != 0:
        raise PackagesUnavailable(f"{' '.join(packages)} are not installed and installing "
                                  "them needs root")
    if not _which("apt-get"):
        raise PackagesUnavailable(f"{' '.join(packages)}: not installed, and there is no "
                                  "apt-get here")
    t0 = time.monotonic()
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "PATH": SYSTEM_PATH}
    lock = ["-o", "DPkg::Lock::Timeout=120"]
    steps = [["apt-get", *lock, "update", "-q"],
             ["apt-get", *lock, "install", "-y", "-q", "--no-install-recommends", *packages]]
    notes = []  # what `apt-get update` could not fetch: it exits 0 even then
    for cmd in steps:
        try:
            r = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise PackagesUnavailable(f"`{' '.join(cmd)}` took over {timeout:g} s") from e
        out = (r.stdout + r.stderr).strip()
        notes += [ln for ln in out.splitlines() if ln.startswith(("W:", "E:", "Err:"))][:6]
        if r.returncode != 0:
            tail = "\n".join(out.splitlines()[-15:])
            msg = f"`{' '.join(cmd)}` failed (exit {r.returncode}):\n{tail}"
            if cmd is steps[-1] and notes:
                msg += "\napt-get update said:\n" + "\n".join(dict.fromkeys(notes))
            if UNREACHABLE.search(out + "\n".join(notes)):
                raise PackagesUnavailable(msg)
            raise HarnessError(msg)
    missing = [n for n in needed if not _which(n)]
    if missing:
        raise HarnessError(f"installed {' '.join(packages)} but {missing} are still not on PATH")
    return time.monotonic() - t0


# ------------------------------------------------------------------------------ processes
def _environ(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return f.read()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    """Running (a zombie counts as gone: its parent just has not reaped it yet)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] != b"Z"


def marked_pids(folder: Path) -> list[int]:
    """PIDs of live processes that carry our marker (this process excluded)."""
    tag = f"{MARKER}={folder}".encode() + b"\0"
    mine = {os.getpid()}
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) not in mine:
            pid = int(entry)
            if tag in _environ(pid) and _alive(pid):
                found.append(pid)
    return sorted(found)


def _terminate(pids: list[int], grace: float) -> list[int]:
    """TERM each PID, wait up to ``grace`` s, KILL the rest; returns those still alive."""
    for pid in pids:
        with _quiet():
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        _reap(pids)
        time.sleep(0.1)
    for pid in [p for p in pids if _alive(p)]:
        with _quiet():
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        _reap(pids)
        time.sleep(0.1)
    _reap(pids)
    return [p for p in pids if _alive(p)]


def _reap(pids: list[int]) -> None:
    """Collect those of ``pids`` that are exited children of this process (our daemons);
    never another child of the caller's."""
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, et, e, tb):
        return et is not None and issubclass(et, ProcessLookupError)


def _die_with_parent() -> None:
    """In the forked daemon: get SIGTERM when the process that started it dies."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _listening_inodes() -> dict[int, str]:
    """socket inode -> local address of every listening TCP socket not on loopback."""
    found = {}
    for table, loopback in (("/proc/net/tcp", ("0100007F",)),
                            ("/proc/net/tcp6", ("00000000000000000000000001000000",
                                                "0000000000000000FFFF00000100007F"))):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            addr, port = f[1].split(":")
            if f[3] == "0A" and addr not in loopback:  # 0A: LISTEN
                found[int(f[9])] = f"{addr}:{int(port, 16)}"
    return found


def exposed(folder: Path) -> list[str]:
    """Processes of ours (marked) listening on anything but 127.0.0.1 / ::1."""
    inodes = _listening_inodes()
    hits = []
    if not inodes:
        return hits
    for pid in marked_pids(folder):
        for inode in socket_inodes(pid):
            if inode in inodes:
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                except OSError:
                    cmd = b"?"
                hits.append(f"pid {pid} listens on {inodes[inode]}: "
                            f"{cmd.decode(errors='replace')[:160]}")
    return hits


def socket_inodes(pid: int) -> list[int]:
    """The inodes of the sockets process ``pid`` holds open ([] when it is gone)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    out = []
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            out.append(int(target[8:-1]))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------ cluster
@dataclass
class LocalSlurm:
    folder: Path
    env: dict  # for clients and jobs: SLURM_CONF, PATH, the marker
    partition: str
    node: str
    cpus: int
    memory_mb: int  # RealMemory of the node
    pids: dict = field(default_factory=dict)  # daemon name -> pid
    owned: bool = False  # the folder is ours: ``stop`` removes it
    timings: dict = field(default_factory=dict)

    where = "127.0.0.1"  # for messages

    @property
    def conf(self) -> Path:
        return self.folder / "etc" / "slurm.conf"

    def run(self, *cmd: str, timeout: float = 15, check: bool = True) -> str:
        r = subprocess.run(list(cmd), env=self.env, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise HarnessError(f"`{' '.join(cmd)}` failed ({r.returncode}): "
                               f"{(r.stderr or r.stdout).strip()}")
        return r.stdout

    def jobs(self) -> list[tuple[str, str, str]]:
        """(id, name, state) of every job slurmctld still knows as not finished."""
        out = self.run("squeue", "-h", "-o", "%i %j %T", timeout=10)
        return [tuple(line.split(None, 2)) for line in out.splitlines() if line.strip()]

    def node_state(self) -> str:
        return self.run("sinfo", "-h", "-N", "-n", self.node, "-o", "%T", timeout=10).strip()

    def logs(self, lines: int = 25) -> str:
        parts = []
        for p in sorted((self.folder / "log").glob("*.log")):
            text = p.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- {p.name}\n" + "\n".join(text))
        return "\n".join(parts)

    def save(self) -> None:
        (self.folder / STATE_FILE).write_text(json.dumps({
            "folder": str(self.folder), "env": self.env, "partition": self.partition,
            "node": self.node, "cpus": self.cpus, "memory_mb": self.memory_mb,
            "pids": self.pids, "owned": self.owned}, indent=1))

    @classmethod
    def load(cls, folder: Path) -> LocalSlurm:
        d = json.loads((Path(folder) / STATE_FILE).read_text())
        return cls(Path(d["folder"]), d["env"], d["partition"], d["node"], d["cpus"],
                   d["memory_mb"], d["pids"], d.get("owned", False))

    def stop(self, grace: float = 10) -> None:
        """Cancel every job left, stop the daemons (TERM, wait, KILL), then make sure no
        process of ours is still running. Raises HarnessError if one survives."""
        t0 = time.monotonic()
        self._stop_processes(grace)
        self.timings["stop"] = round(time.monotonic() - t0, 2)
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _stop_processes(self, grace: float) -> None:
        ours = set(marked_pids(self.folder))  # a recorded PID counts only while it is ours
        if self.pids.get("slurmctld") in ours:
            try:
                left = [j[0] for j in self.jobs()]
                if left:
                    self.run("scancel", *left, timeout=10, check=False)
                    deadline = time.monotonic() + grace
                    while self.jobs() and time.monotonic() < deadline:
                        time.sleep(0.2)
            except (HarnessError, subprocess.TimeoutExpired) as e:
                self.timings["cancel_failed"] = str(e)  # what is left is killed below
        # job steps first, then the slurmd (slurmstepd talks to it), slurmctld, munged last
        slurmds = sorted(n for n in self.pids if n.startswith("slurmd"))
        daemons = [self.pids[n] for n in (*slurmds, "slurmctld", "munged")
                   if self.pids.get(n) in ours]
        steps = [p for p in marked_pids(self.folder) if p not in daemons]
        _terminate(steps, grace)
        for pid in daemons:
            _terminate([pid], grace)
        survivors = _terminate(marked_pids(self.folder), grace)
        _reap(list(self.pids.values()))  # daemons that had exited on their own
        if survivors:
            raise HarnessError(f"processes still running after KILL: {survivors} (files kept "
                               f"in {self.folder})")


def _node_line(slurmd: str, env: dict) -> tuple[str, int, int, str]:
    """`slurmd -C` -> (node name, CPUs, RealMemory MB, the NodeName=... words to use)."""
    out = subprocess.run([slurmd, "-C"], env=env, capture_output=True, text=True, timeout=30,
                         stdin=subprocess.DEVNULL)
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("NodeName=")), None)
    if line is None:
        raise HarnessError(f"`slurmd -C` printed no NodeName line: {out.stdout} {out.stderr}")
    words = dict(w.split("=", 1) for w in line.split() if "=" in w)
    keep = ("NodeName", "CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket",
            "ThreadsPerCore", "RealMemory")
    text = " ".join(f"{k}={words[k]}" for k in keep if k in words)
    return words["NodeName"], int(words["CPUs"]), int(words["RealMemory"]), text


def write_conf(folder: Path, node_words: str, node: str, munge_socket: Path) -> Path:
    ctld_port, slurmd_port = free_port(), free_port()
    while slurmd_port == ctld_port:
        slurmd_port = free_port()
    f = folder
    conf = f"""\
# A single-node SLURM for tests (tests/slurm_local.py): everything under {f}
ClusterName={CLUSTER_NAME}
SlurmctldHost={node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
# bind to the addresses above (127.0.0.1), not to every interface
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
{_conf_common(f, munge_socket, "")}\
{node_words} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP
"""
    path = folder / "etc" / "slurm.conf"
    path.write_text(conf)
    (folder / "etc" / "plugstack.conf").write_text("")
    return path


def _conf_common(f: Path, munge_socket: Path, per_node: str) -> str:
    """The settings every harness shares; ``per_node`` "-%n" gives each slurmd of a
    several-node cluster its own spool, pid and log file (%n: its node name)."""
    spool = f"{f}/spool/%n" if per_node else f"{f}/spool"
    return f"""\
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={f}/state
SlurmdSpoolDir={spool}
SlurmctldPidFile={f}/run/slurmctld.pid
SlurmdPidFile={f}/run/slurmd{per_node}.pid
SlurmctldLogFile={f}/log/slurmctld.log
SlurmdLogFile={f}/log/slurmd{per_node}.log
SlurmctldDebug=info
SlurmdDebug=info
TmpFS={f}/tmp
PlugStackConfig={f}/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
# start a submitted batch job at once (default: up to 3 s later)
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# an oversized job fails at submission instead of pending for ever
EnforcePartLimits=ALL
ReturnToService=2
InactiveLimit=0
KillWait=2
MinJobAge=2
MessageTimeout=10
SlurmctldTimeout=30
SlurmdTimeout=30
"""


def _spawn(name: str, cmd: list[str], env: dict, folder: Path, tie: bool) -> subprocess.Popen:
    out = open(folder / "log" / f"{name}.stdout.log", "ab")
    try:
        return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, cwd=folder, start_new_session=True,
                                preexec_fn=_die_with_parent if tie else None)
    finally:
        out.close()


def _wait(what: str, ok, timeout: float, cluster: LocalSlurm, procs: dict) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if ok():
                return
        except (HarnessError, subprocess.TimeoutExpired):
            pass
        dead = [n for n, p in procs.items() if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            why = f"{dead} exited" if dead else f"not within {timeout:g} s"
            raise HarnessError(f"SLURM on {cluster.where}: {what}: {why}\n{cluster.logs()}")
        time.sleep(0.1)


def _prepare(folder: Path) -> tuple[Path, Path, Path]:
    """The folder's subfolders and munge key -> (key folder, key, munge socket path)."""
    for sub in ("etc", "state", "spool", "run", "log", "tmp", "munge-run"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    closed = [str(p) for p in folder.parents if not p.stat().st_mode & 0o001]
    if closed:
        raise HarnessError(f"munged needs o+x on every folder above its socket; not on "
                           f"{closed}: give a folder elsewhere (or none: /tmp/minegen-slurm-*)")
    # munged refuses a socket folder that others cannot enter (0700): 0755 there, 0700 for
    # the key and its seed
    (folder / "munge-run").chmod(0o755)
    keydir = folder / "munge-key"
    keydir.mkdir(mode=0o700, exist_ok=True)
    keydir.chmod(0o700)
    key = keydir / "munge.key"
    if not key.exists():
        key.write_bytes(secrets.token_bytes(1024))
    key.chmod(0o400)
    return keydir, key, folder / "munge-run" / "munge.socket"


def _env_base(folder: Path) -> dict:
    return {"PATH": f"{Path(sys.executable).parent}:{SYSTEM_PATH}",
            "LANG": "C.UTF-8", "HOME": os.environ.get("HOME", "/root"),
            MARKER: str(folder)}


def _stop_quietly(cluster) -> None:
    """Stop a cluster that failed to start; the start's own error is the one reported."""
    try:
        cluster.stop(grace=5)
    except HarnessError:
        pass


def _munged(cmd_prefix: list[str], folder: Path, keydir: Path, key: Path,
            sock: Path) -> list[str]:
    return [*cmd_prefix, _which("munged"), "--foreground", f"--socket={sock}",
            f"--key-file={key}", f"--pid-file={folder / 'run' / 'munged.pid'}",
            f"--log-file={folder / 'log' / 'munged.log'}",
            f"--seed-file={keydir / 'munge.seed'}"]


def start(folder: str | os.PathLike | None = None, timeout: float = 60,
          tie: bool = True) -> LocalSlurm:
    """Install the packages if needed, then start munged, slurmctld and slurmd under
    ``folder`` and wait until the node is idle.

    ``folder`` None: a new /tmp/minegen-slurm-* folder, removed by ``stop``. munged wants
    every folder above its socket open to all (o+x), which pytest's tmp folders are not.
    ``tie``: the daemons get SIGTERM if this process dies (off for the command line's ``up``).
    """
    t0 = time.monotonic()
    installed = ensure_packages()
    owned = folder is None
    folder = Path(tempfile.mkdtemp(prefix="minegen-slurm-") if owned else folder).resolve()
    keydir, key, sock = _prepare(folder)
    env_base = _env_base(folder)
    node, cpus, mem, node_words = _node_line(_which("slurmd"), env_base)
    conf = write_conf(folder, node_words, node, sock)
    env = {**env_base, "SLURM_CONF": str(conf)}
    cluster = LocalSlurm(folder, env, PARTITION, node, cpus, mem, owned=owned,
                         timings={"install": round(installed, 2)})
    procs: dict[str, subprocess.Popen] = {}
    try:
        procs["munged"] = _spawn("munged", _munged([], folder, keydir, key, sock), env,
                                 folder, tie)
        cluster.pids["munged"] = procs["munged"].pid
        _wait("munged socket", sock.exists, 10, cluster, procs)
        for attempt in (1, 2):  # a port picked free may be taken before the daemon binds
            procs["slurmctld"] = _spawn("slurmctld", [_which("slurmctld"), "-D", "-i", "-f",
                                                      str(conf)], env, folder, tie)
            cluster.pids["slurmctld"] = procs["slurmctld"].pid
            procs["slurmd"] = _spawn("slurmd", [_which("slurmd"), "-D", "-f", str(conf)],
                                     env, folder, tie)
            cluster.pids["slurmd"] = procs["slurmd"].pid
            cluster.save()
            try:
                _wait("node idle in sinfo", lambda: cluster.node_state() == "idle", timeout,
                      cluster, procs)
                break
            except HarnessError as e:
                if attempt == 2 or "Address already in use" not in str(e):
                    raise
                _terminate([procs.pop("slurmd").pid, procs.pop("slurmctld").pid], 5)
                write_conf(folder, node_words, node, sock)  # new ports
    except BaseException:
        _stop_quietly(cluster)  # a half-started cluster leaves nothing behind
        raise
    cluster.timings["up"] = round(time.monotonic() - t0, 2)
    cluster.save()
    return cluster


# ------------------------------------------------------------------------------ several hosts
# A SLURM cluster of several hosts on this one machine: each compute node is a network
# namespace of its own with its own slurmd, and munged and slurmctld run in a "hub"
# namespace (so does anything given to ``HostsSlurm.in_hub``: the audit's client and its
# Dask scheduler). Every namespace has an interface named IFACE on the private subnet
# SUBNET.0/24: a bridge in the hub, one end of a veth pair in each node (the other end is a
# port of the hub's bridge). The veth pairs are made inside the namespaces, never in the
# machine's own: nothing there changes (no interface, address or route), and the subnet
# exists only inside the namespaces, which ``stop`` deletes (and checks gone).
NETNS_TAG = "mgslurm"     # namespaces: mgslurm-<creator's pid>-<4 hex>-hub / -n1, -n2, ...
SUBNET = "10.213.7"       # hub .1, node i .(10 + i)
IFACE = "mg0"             # the same name in every namespace: the profile names one interface
NODE_NAME = "mgnode{}"
_OURS = re.compile(rf"^{NETNS_TAG}-(\d+)-[0-9a-f]{{4}}-(hub|n\d+)$")


class NamespacesUnavailable(HarnessError):
    """Network namespaces cannot be made here (not root, or no CAP_SYS_ADMIN)."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([_which("ip") or "ip", *args], capture_output=True, text=True,
                       timeout=15, stdin=subprocess.DEVNULL,
                       env={"PATH": SYSTEM_PATH, "LANG": "C"})
    if check and r.returncode != 0:
        raise HarnessError(f"`ip {' '.join(args)}` failed ({r.returncode}): "
                           f"{(r.stderr or r.stdout).strip()}")
    return r


def in_netns(name: str) -> list[str]:
    """The command prefix that runs a program in the named network namespace, and only
    there: ``nsenter --net``, not ``ip netns exec``, which also gives the program a /sys of
    its own without the cgroup file system slurmd needs."""
    return [_which("nsenter") or "nsenter", f"--net=/run/netns/{name}", "--"]


def netns_names() -> list[str]:
    """Every named network namespace (``ip netns list``)."""
    return [ln.split()[0] for ln in _ip("netns", "list").stdout.splitlines() if ln.strip()]


def netns_pids(name: str) -> list[int]:
    """PIDs of the processes inside the named namespace."""
    r = _ip("netns", "pids", name, check=False)
    return [int(w) for w in r.stdout.split() if w.isdigit()]


def _netns_inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def remove_stale_namespaces(grace: float = 5) -> list[str]:
    """Delete the namespaces of a harness whose process died without its clean-up
    (SIGKILL): names of our pattern whose creator is gone. Whatever still runs inside one
    was started there by that harness (nothing else enters it; slurmstepd carries no
    marker): stopped by PID, then the namespace and that harness's folder are removed."""
    removed, tags = [], set()
    for name in netns_names():
        m = _OURS.match(name)
        if not m or _alive(int(m[1])):
            continue
        inside = netns_pids(name)
        if inside:
            _terminate(inside, grace)
        if not netns_pids(name) and _ip("netns", "del", name, check=False).returncode == 0:
            removed.append(name)
            tags.add(name.rsplit("-", 1)[0])
    for tag in tags:
        for folder in Path(tempfile.gettempdir()).glob(f"minegen-slurm-hosts-{tag}-*"):
            shutil.rmtree(folder, ignore_errors=True)
    return removed


def _decode(hex_addr: str) -> str:
    """An address of /proc/net/tcp{,6} (host-order 32-bit words) as text."""
    raw = bytes.fromhex(hex_addr)
    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


def listeners(folder: Path) -> list[tuple[int, int | None, str, int, str]]:
    """(pid, netns inode, address, port, command) of every listening TCP socket of our
    processes (marked), read in each process's own network namespace."""
    found = []
    for pid in marked_pids(folder):
        table = {}
        for name in ("tcp", "tcp6"):
            try:
                lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                f = line.split()
                if f[3] == "0A":  # LISTEN
                    addr, port = f[1].split(":")
                    table[int(f[9])] = (_decode(addr), int(port, 16))
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        for inode in socket_inodes(pid):
            if inode in table:
                addr, port = table[inode]
                found.append((pid, _netns_inode(f"/proc/{pid}/ns/net"), addr, port,
                              cmd.decode(errors="replace")[:160]))
    return found


@dataclass
class HostsSlurm(LocalSlurm):
    """``start_hosts``: the controller in the hub namespace, one slurmd per node namespace.
    ``node`` names every node (comma-separated); ``cpus`` and ``memory_mb`` are one node's."""
    namespaces: dict = field(default_factory=dict)  # "hub" / node name -> namespace name
    addresses: dict = field(default_factory=dict)  # "hub" / node name -> its address

    @property
    def where(self) -> str:
        return f"{SUBNET}.0/24 in namespaces {', '.join(self.namespaces.values())}"

    @property
    def nodes(self) -> list[str]:
        return [n for n in self.namespaces if n != "hub"]

    def in_hub(self, *cmd: str) -> list[str]:
        """``cmd`` run inside the hub namespace (where slurmctld listens)."""
        return [*in_netns(self.namespaces["hub"]), *cmd]

    def run(self, *cmd: str, timeout: float = 15, check: bool = True) -> str:
        return super().run(*self.in_hub(*cmd), timeout=timeout, check=check)

    def node_states(self) -> dict[str, str]:
        out = self.run("sinfo", "-h", "-N", "-o", "%N %T", timeout=10)
        return dict(line.split(None, 1) for line in out.splitlines() if line.strip())

    def node_state(self) -> str:
        return ",".join(sorted(set(self.node_states().values())))

    def job_nodes(self) -> list[tuple[str, str, str, str]]:
        """(id, name, state, node list) of every job slurmctld still knows as not finished."""
        out = self.run("squeue", "-h", "-o", "%i|%j|%T|%N", timeout=10)
        return [tuple(line.split("|", 3)) for line in out.splitlines() if line.strip()]

    def namespace_inodes(self) -> dict[int, str]:
        found = {}
        for name in self.namespaces.values():
            ino = _netns_inode(f"/run/netns/{name}")
            if ino is not None:
                found[ino] = name
        return found

    def addresses_held(self) -> dict[str, list[str]]:
        """namespace -> every address on its interfaces (``ip -o addr``)."""
        found = {}
        for name in self.namespaces.values():
            out = _ip("-n", name, "-o", "addr", "show").stdout
            found[name] = [line.split()[3].split("/")[0] for line in out.splitlines()
                           if len(line.split()) > 3]
        return found

    def exposed(self) -> list[str]:
        """Listening sockets of ours that could be reached from anywhere but loopback or
        the test subnet inside our namespaces: a socket outside our namespaces must be on
        loopback; inside them it may be on the subnet or on the wildcard address (which
        there means loopback and the subnet: ``addresses_held``)."""
        ours = self.namespace_inodes()
        hits = []
        for pid, ns, addr, port, cmd in listeners(self.folder):
            if addr in ("127.0.0.1", "::1") or (ns in ours and (
                    addr.startswith(SUBNET + ".") or addr in ("0.0.0.0", "::"))):
                continue
            hits.append(f"pid {pid} (netns {ours.get(ns, ns)}) listens on {addr}:{port}: "
                        f"{cmd}")
        return hits

    def stop(self, grace: float = 10) -> None:
        """``LocalSlurm.stop``, then every namespace deleted and checked gone (even when a
        process outlived its KILL: then HarnessError, after the namespaces)."""
        t0 = time.monotonic()
        try:
            self._stop_processes(grace)
        finally:
            self._remove_namespaces(grace)
            self.timings["stop"] = round(time.monotonic() - t0, 2)
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _remove_namespaces(self, grace: float) -> None:
        left = []
        for name in reversed(list(self.namespaces.values())):  # nodes, then the hub
            if name not in netns_names():
                continue
            # only processes we started live there (the namespace is this harness's own);
            # one that outlived the marker's sweep is stopped here by its PID
            inside = netns_pids(name)
            if inside:
                _terminate(inside, grace)
            r = _ip("netns", "del", name, check=False)
            if r.returncode != 0:
                left.append(f"{name}: {r.stderr.strip()}")
        still = [n for n in self.namespaces.values()
                 if n in netns_names() or Path(f"/run/netns/{n}").exists()]
        if left or still:
            raise HarnessError(f"network namespaces not removed: {left or still}")


def write_hosts_conf(folder: Path, controller: str, nodes: dict, memory_mb: int,
                     munge_socket: Path) -> Path:
    """slurm.conf of a controller at SUBNET.1 and one node of 1 CPU per entry of
    ``nodes`` (name -> address). Every daemon is alone in its namespace: fixed ports."""
    f = folder
    node_lines = "\n".join(
        f"NodeName={name} NodeAddr={addr} CPUs=1 Sockets=1 CoresPerSocket=1 "
        f"ThreadsPerCore=1 RealMemory={memory_mb} State=UNKNOWN"
        for name, addr in nodes.items())
    conf = f"""\
# A SLURM of {len(nodes)} hosts for tests (tests/slurm_local.py start_hosts): the controller
# and every node in network namespaces of their own, on {SUBNET}.0/24; files under {f}
ClusterName={CLUSTER_NAME}
SlurmctldHost={controller}({SUBNET}.1)
SlurmctldPort=6817
SlurmdPort=6818
# no NoInAddrAny: that binds the address this machine's name resolves to (127.0.0.1, the
# same in every namespace); the daemons bind every address of their own namespace instead,
# which are loopback and their one address on {SUBNET}.0/24
{_conf_common(f, munge_socket, "-%n")}\
{node_lines}
PartitionName={PARTITION} Nodes={",".join(nodes)} Default=YES MaxTime=INFINITE State=UP
"""
    path = folder / "etc" / "slurm.conf"
    path.write_text(conf)
    (folder / "etc" / "plugstack.conf").write_text("")
    return path


def _make_namespaces(namespaces: dict, addresses: dict) -> None:
    """The hub's bridge and each node's veth pair, made inside the namespaces."""
    hub = namespaces["hub"]
    r = _ip("netns", "add", hub, check=False)
    if r.returncode != 0:
        if re.search(r"Operation not permitted|Permission denied", r.stderr):
            raise NamespacesUnavailable(f"`ip netns add` is not permitted here: "
                                        f"{r.stderr.strip()}")
        raise HarnessError(f"`ip netns add {hub}` failed: {r.stderr.strip()}")
    _ip("-n", hub, "link", "set", "lo", "up")
    _ip("-n", hub, "link", "add", "name", IFACE, "type", "bridge")
    # no IPv6 link-local address either: the namespaces hold loopback and SUBNET only
    _ip("-n", hub, "link", "set", IFACE, "addrgenmode", "none")
    _ip("-n", hub, "addr", "add", f"{addresses['hub']}/24", "dev", IFACE)
    _ip("-n", hub, "link", "set", IFACE, "up")
    for i, (node, ns) in enumerate((k, v) for k, v in namespaces.items() if k != "hub"):
        port = f"p{i + 1}"  # the node's end in the hub, a port of the bridge
        _ip("netns", "add", ns)
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "link", "add", "name", IFACE, "type", "veth", "peer", "name", port,
            "netns", hub)
        for end, where in ((IFACE, ns), (port, hub)):
            _ip("-n", where, "link", "set", end, "addrgenmode", "none")
        _ip("-n", ns, "addr", "add", f"{addresses[node]}/24", "dev", IFACE)
        _ip("-n", ns, "link", "set", IFACE, "up")
        _ip("-n", hub, "link", "set", port, "master", IFACE)
        _ip("-n", hub, "link", "set", port, "up")


def start_hosts(hosts: int = 2, timeout: float = 60, tie: bool = True) -> HostsSlurm:
    """Install the packages if needed (SLURM, munge, iproute2), make the namespaces, start
    munged and slurmctld in the hub and ``-N mgnode<i>`` slurmd in node i's namespace, and
    wait until every node is idle. Its own /tmp/minegen-slurm-hosts-* folder, removed by
    ``stop`` with the namespaces. Raises NamespacesUnavailable where namespaces cannot be
    made, PackagesUnavailable as ``start``."""
    t0 = time.monotonic()
    installed = ensure_packages()
    installed += ensure_packages(packages=("iproute2", "util-linux"), needed=("ip", "nsenter"))
    if os.geteuid() != 0:
        raise NamespacesUnavailable("network namespaces need root")
    stale = remove_stale_namespaces()
    tag = f"{NETNS_TAG}-{os.getpid()}-{secrets.token_hex(2)}"
    folder = Path(tempfile.mkdtemp(prefix=f"minegen-slurm-hosts-{tag}-")).resolve()
    keydir, key, sock = _prepare(folder)
    env_base = _env_base(folder)
    # slurmctld wants to run on the host its SlurmctldHost names: this machine's name
    controller, _, mem, _ = _node_line(_which("slurmd"), env_base)
    nodes = {NODE_NAME.format(i): f"{SUBNET}.{10 + i}" for i in range(1, hosts + 1)}
    namespaces = {"hub": f"{tag}-hub", **{n: f"{tag}-n{i}" for i, n in
                                          enumerate(nodes, 1)}}
    memory_mb = mem // hosts
    for node in nodes:
        (folder / "spool" / node).mkdir()
    conf = write_hosts_conf(folder, controller, nodes, memory_mb, sock)
    env = {**env_base, "SLURM_CONF": str(conf)}
    cluster = HostsSlurm(folder, env, PARTITION, ",".join(nodes), 1, memory_mb, owned=True,
                         timings={"install": round(installed, 2)}, namespaces=namespaces,
                         addresses={"hub": f"{SUBNET}.1", **nodes})
    if stale:
        cluster.timings["stale_namespaces_removed"] = stale
    procs: dict[str, subprocess.Popen] = {}
    try:
        _make_namespaces(namespaces, cluster.addresses)
        hub = in_netns(namespaces["hub"])
        procs["munged"] = _spawn("munged", _munged(hub, folder, keydir, key, sock), env,
                                 folder, tie)
        cluster.pids["munged"] = procs["munged"].pid
        _wait("munged socket", sock.exists, 10, cluster, procs)
        procs["slurmctld"] = _spawn("slurmctld", [*hub, _which("slurmctld"), "-D", "-i",
                                                  "-f", str(conf)], env, folder, tie)
        cluster.pids["slurmctld"] = procs["slurmctld"].pid
        for node in nodes:
            name = f"slurmd-{node}"
            procs[name] = _spawn(name, [*in_netns(namespaces[node]), _which("slurmd"), "-D",
                                        "-N", node, "-f", str(conf)],
                                 env, folder, tie)
            cluster.pids[name] = procs[name].pid
        _wait(f"{hosts} nodes idle in sinfo",
              lambda: cluster.node_states() == {n: "idle" for n in nodes}, timeout,
              cluster, procs)
    except BaseException:
        _stop_quietly(cluster)  # a half-started cluster leaves nothing behind
        raise
    cluster.timings["up"] = round(time.monotonic() - t0, 2)
    return cluster


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("up", "down"):
        print("usage: python tests/slurm_local.py up|down DIR", file=sys.stderr)
        return 2
    verb, folder = argv[0], Path(argv[1]).resolve()
    try:
        if verb == "up":
            c = start(folder, tie=False)
            print(f"# SLURM up ({c.timings}); partition {c.partition}, node {c.node}, "
                  f"{c.cpus} CPUs, {c.memory_mb} MB; daemons {c.pids}")
            print(f"export SLURM_CONF={c.env['SLURM_CONF']} PATH={c.env['PATH']} "
                  f"{MARKER}={c.env[MARKER]}")
        else:
            c = LocalSlurm.load(folder)
            c.stop()
            print(f"# SLURM down ({c.timings['stop']} s)")
    except HarnessError as e:
        print(f"slurm_local {verb}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

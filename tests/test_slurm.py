"""`minegen audit --slurm` on a real single-node SLURM (tests/slurm_local.py, 127.0.0.1):
the Dask workers run as SLURM jobs, and the records are the very bytes a LocalCluster
run of the same rows gives.

Skipped only when the SLURM Debian packages are missing and the package registry cannot be
reached (the reason is apt's own error).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from slurm_local import HarnessError, PackagesUnavailable, exposed, start

pytestmark = pytest.mark.cluster
PROFILE = Path(__file__).parent / "fixtures" / "slurm" / "profile.toml"
ROWS = "1:0,2:4,3:4"
N = 64
AUDIT_TIMEOUT_S = 240  # a hang is a failure, not a stuck CI run
DONE = (0, 1)  # a completed audit: 1 = some hard line failed (expected on row 2:4)


@pytest.fixture(scope="module")
def slurm():
    try:
        cluster = start()  # its own /tmp/minegen-slurm-* folder (munged: o+x above it)
    except PackagesUnavailable as e:
        pytest.skip(f"SLURM packages cannot be installed here: {e}")
    try:
        yield cluster
    finally:
        cluster.stop()


def write_profile(cluster, out: Path) -> tuple[Path, dict]:
    """The fixture profile with this node's partition, a memory that fits it and folders
    inside the test's output."""
    jobs = tomllib.loads(PROFILE.read_text())["slurm"]["jobs"]
    memory_mb = min(2048, cluster.memory_mb // (2 * jobs))
    text = (PROFILE.read_text().replace("@PARTITION@", cluster.partition)
            .replace("@MEMORY@", f"{memory_mb}MiB")
            .replace("@LOGS@", str(out / "slurm-logs"))
            .replace("@SCRATCH@", str(out / "scratch")))
    path = out / "profile.toml"
    path.write_text(text)
    return path, tomllib.loads(text)["slurm"]


def minegen(*args: str, env: dict, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "minegen.cli", *args], env=env, cwd=cwd,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def finish(proc: subprocess.Popen, what: str, timeout: float) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{what} did not finish within {timeout:g} s\n{out}\n{err}")
    if proc.returncode not in DONE:
        pytest.fail(f"{what} exited {proc.returncode}\n--- stdout\n{out}\n--- stderr\n{err}")
    return out, err


def manifest(out: Path) -> dict:
    found = sorted(out.rglob("manifest.json"))
    assert len(found) == 1, f"expected one run folder under {out}: {found}"
    return json.loads(found[0].read_text())


def same_as_local(m: dict, local: subprocess.Popen, out_local: Path, boards: int) -> None:
    """The SLURM run's manifest ``m`` against the LocalCluster run ``local`` writes to
    ``out_local``: the same records, every board."""
    finish(local, "minegen audit (LocalCluster)", AUDIT_TIMEOUT_S)
    ref = manifest(out_local)
    assert "LocalCluster" in ref["scheduler"]
    assert m["records_sha256"] == ref["records_sha256"]
    assert m["boards"] == ref["boards"] == boards


def test_audit_workers_are_slurm_jobs_and_records_match_localcluster(slurm, tmp_path):
    out_slurm, out_local, cwd = tmp_path / "slurm", tmp_path / "local", tmp_path / "cwd"
    for d in (out_slurm, out_local, cwd):
        d.mkdir()
    profile, options = write_profile(slurm, out_slurm)
    before = set(Path.cwd().glob("slurm-*.out"))
    env = {**os.environ, **slurm.env}  # SLURM_CONF, PATH with the SLURM clients, marker

    t0 = time.monotonic()
    proc = minegen("audit", "--slurm", str(profile), "--rows", ROWS, "--n", str(N),
                   "--out", str(out_slurm), env=env, cwd=cwd)
    seen: dict[str, tuple[str, set]] = {}  # job id -> (name, states seen)
    listening: set[str] = set()  # any process of ours listening beyond 127.0.0.1
    deadline = t0 + AUDIT_TIMEOUT_S
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                for job, name, state in slurm.jobs():
                    seen.setdefault(job, (name, set()))[1].add(state)
            except (HarnessError, subprocess.TimeoutExpired):
                pass  # one missed poll; the next one counts
            listening.update(exposed(slurm.folder))
            time.sleep(0.2)
        out, err = finish(proc, "minegen audit --slurm", max(1, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wall_slurm = time.monotonic() - t0
    report = f"--- stdout\n{out}\n--- stderr\n{err}\n--- jobs seen {seen}\n{slurm.logs()}"

    # the workers really were SLURM jobs of the profile's name, and they ran
    ours = {j: states for j, (name, states) in seen.items() if name == options["job_name"]}
    assert ours, f"no SLURM job named {options['job_name']} seen\n{report}"
    assert any("RUNNING" in s for s in ours.values()), f"no job reached RUNNING\n{report}"
    assert set(seen) == set(ours), f"jobs of other names appeared\n{report}"
    assert len(ours) == options["jobs"], report

    # cluster.close() cancelled them: nothing left once the audit is over (a job may be
    # COMPLETING for a moment)
    end = time.monotonic() + 15
    while slurm.jobs() and time.monotonic() < end:
        time.sleep(0.2)
    assert slurm.jobs() == [], report

    assert not listening, f"bound beyond loopback: {sorted(listening)}"

    # job logs went to the profile's log_directory, none to a working folder
    assert sorted((out_slurm / "slurm-logs").glob(f"{options['job_name']}-*.err")), report
    assert list(cwd.glob("slurm-*.out")) == []
    assert list(cwd.iterdir()) == [], "the audit wrote into its working folder"
    assert set(Path.cwd().glob("slurm-*.out")) == before

    m = manifest(out_slurm)
    assert "SLURMCluster" in m["scheduler"], m["scheduler"]
    assert m["exit_code"] == proc.returncode

    local = minegen("audit", "--rows", ROWS, "--n", str(N), "--workers", "1",
                    "--out", str(out_local), env={**os.environ}, cwd=cwd)
    same_as_local(m, local, out_local, N * len(ROWS.split(",")))
    print(f"\nSLURM audit {wall_slurm:.1f} s, jobs {sorted(ours.items())}, "
          f"timings {m['timings_s']}; harness {slurm.timings}")


def test_sigterm_cancels_the_jobs_and_keeps_finished_rows(slurm, tmp_path):
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    out.mkdir()
    cwd.mkdir()
    profile, options = write_profile(slurm, out)
    env = {**os.environ, **slurm.env}
    proc = minegen("audit", "--slurm", str(profile), "--n", "1024", "--seeds-per-task", "256",
                   "--out", str(out), env=env, cwd=cwd)
    try:
        deadline = time.monotonic() + AUDIT_TIMEOUT_S
        while not list(out.glob("metric_v1/.partial-*/shards/*.json")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "no row finished"
            time.sleep(0.1)
        assert slurm.jobs(), "the workers' jobs should be in the queue mid-run"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 143, err
    assert "resume with: minegen audit --resume" in err and "Traceback" not in err
    end = time.monotonic() + 15
    while slurm.jobs() and time.monotonic() < end:
        time.sleep(0.2)
    assert slurm.jobs() == [], "a SLURM job outlived the interrupted audit"
    assert list(out.glob("metric_v1/.partial-*/shards/*.json"))


def test_a_job_slurm_refuses_ends_with_exit_3_at_once(slurm, tmp_path):
    out, cwd = tmp_path / "out", tmp_path / "cwd"
    out.mkdir()
    cwd.mkdir()
    profile, _ = write_profile(slurm, out)
    text = profile.read_text()
    too_big = f"{slurm.memory_mb * 8}MiB"  # more than the node has: refused at submission
    profile.write_text(text.replace(f'memory = "{tomllib.loads(text)["slurm"]["memory"]}"',
                                    f'memory = "{too_big}"'))
    t0 = time.monotonic()
    proc = minegen("audit", "--slurm", str(profile), "--rows", "1:0", "--n", "4",
                   "--out", str(out), env={**os.environ, **slurm.env}, cwd=cwd)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    assert "SLURM refuses the profile's job" in err and "Traceback" not in err
    assert time.monotonic() - t0 < 30 and slurm.jobs() == []

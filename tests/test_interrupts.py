"""Interrupting an audit (SIGINT, SIGTERM) as a terminal or a scheduler does: exit 128 +
the signal with our own lines only, no process of the audit left, the finished rows kept,
and a resume equal to a clean run (conftest's clean_scaling, shared with test_faults.py);
and the handler that records a signal for the run's wait points to raise."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from cli_harness import audit_exit, run_cli

from test_operations import SCALING, group_gone


# ------------------------------------------------ the handler records, wait points raise

def test_a_signal_inside_a_callback_that_swallows_exceptions_still_stops_the_run():
    """The race once seen in a tilegen resume test: the signal lands while a garbage
    collector callback runs (distributed installs one). An exception raised there is
    swallowed, so a handler that raised lost the signal and the run completed. Recorded,
    it stops the block; the callback itself runs to its end."""
    import gc

    from pipeline.engine.interrupts import interruptible
    from pipeline.errors import Interrupted

    ran = []

    def callback(phase, info):
        if phase == "start" and not ran:
            ran.append("start")
            os.kill(os.getpid(), signal.SIGTERM)  # Python runs the handler at the next
            ran.append("end")  # call in this frame: inside the callback

    gc.callbacks.append(callback)
    try:
        with pytest.raises(Interrupted) as e:
            with interruptible():
                gc.collect()
    finally:
        gc.callbacks.remove(callback)
    assert e.value.signum == signal.SIGTERM and ran == ["start", "end"]


def test_a_wait_point_raises_the_first_signal_once():
    """The first signal is raised by the next wait point (here ``aside``'s joins, while
    the work it waits for still runs), a second one is ignored, and the clean-up's wait
    points after it go on; an error that follows a signal reports the signal."""
    import threading

    from boardcore.cli import aside
    from pipeline.engine.interrupts import check, interruptible
    from pipeline.errors import Interrupted, RunError

    release, reached = threading.Event(), []
    with pytest.raises(Interrupted) as e:
        with interruptible():
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            try:
                aside(release.wait, 60)
                reached.append("after the wait")
            finally:
                release.set()
    assert e.value.signum == signal.SIGINT and reached == []
    with interruptible():
        os.kill(os.getpid(), signal.SIGTERM)
        with pytest.raises(Interrupted):
            check()
        check()
        assert aside(sum, [1, 2]) == 3  # the clean-up waits without a second Interrupted
    with pytest.raises(Interrupted) as e:
        with interruptible():
            os.kill(os.getpid(), signal.SIGTERM)
            raise RunError("the graph did not complete")
    assert e.value.signum == signal.SIGTERM


def test_a_signal_while_blocked_in_a_wait_that_no_wait_point_slices_raises_there():
    """A wait of distributed's own (a synchronous call, ``as_completed``) blocks the main
    thread in ``threading``'s waits, where no wait point checks: a signal that arrives
    while the thread is blocked there is raised there, before the wait ends."""
    import sys
    import threading

    from pipeline.engine.interrupts import interruptible
    from pipeline.errors import Interrupted

    main, never, reached = threading.get_ident(), threading.Event(), []

    def signal_once_blocked() -> None:
        while "threading.py" not in sys._current_frames()[main].f_code.co_filename:
            time.sleep(0.01)  # until the main thread is inside Event.wait
        os.kill(os.getpid(), signal.SIGINT)

    sender = threading.Thread(target=signal_once_blocked)
    with pytest.raises(Interrupted) as e:
        with interruptible():
            sender.start()
            never.wait(60)
            reached.append("the wait ended")
    sender.join()
    assert e.value.signum == signal.SIGINT and reached == []


def test_a_signal_while_the_resume_checks_a_board_kills_its_child():
    """The spot check's child process is a wait point: the signal stops the run there
    and the child is killed, not left to finish."""
    from minegen.audit.generator import GENERATOR
    from pipeline.engine import spot
    from pipeline.engine.interrupts import interruptible
    from pipeline.errors import Interrupted

    (plan,) = GENERATOR.plans(GENERATOR.load(None), [(1, 0)])
    children = []
    real = subprocess.Popen

    def popen(*a, **kw):
        children.append(real(*a, **kw))
        return children[-1]

    with pytest.MonkeyPatch.context() as m:
        m.setattr(spot.subprocess, "Popen", popen)
        with pytest.raises(Interrupted):
            with interruptible():
                os.kill(os.getpid(), signal.SIGTERM)
                spot.regenerate(GENERATOR, [(plan, 0)])
    (child,) = children
    assert child.returncode == -signal.SIGKILL


@pytest.mark.cluster
@pytest.mark.xdist_group("clean_scaling")  # the clean run, made once (conftest.py)
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_keeps_rows_and_resume_equals_a_clean_run(tmp_path, sig, cluster,
                                                            clean_scaling):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "minegen.cli", "audit", "--tables", SCALING,
                             "--n", "256", "--seeds-per-task", "64", "--workers", "2",
                             "--out", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not list(out.glob("metric_v1/.partial-*/shards/*.json")):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    if sig == signal.SIGINT:  # as a terminal sends Ctrl-C: to the whole process group,
        os.killpg(proc.pid, sig)  # the embedded workers included (they must stay quiet)
    else:  # as a scheduler or `kill` sends it: to the audit's own process
        proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, stdout + stderr
    assert "interrupted" in stderr and "resume with: minegen audit --resume" in stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    # only our own lines: the dashboard (and a first compile), then the interruption
    assert "CancelledError" not in stderr, stderr
    assert all(ln.startswith(("audit: ", "minegen: ")) for ln in stderr.strip().splitlines())
    assert group_gone(proc.pid), "a process of the audit outlived it"
    partial = next(out.glob("metric_v1/.partial-*"))
    assert not (out / "metric_v1" / partial.name.removeprefix(".partial-")).exists()
    run_id = partial.name.removeprefix(".partial-")
    resumed = run_cli("minegen", "audit", "--resume", run_id, "--scheduler", cluster, "--out",
                      out)
    audit_exit(resumed, out, run_id=run_id)
    m = json.loads((out / "metric_v1" / run_id / "manifest.json").read_text())
    assert m["records_sha256"] == clean_scaling.manifest["records_sha256"]
    assert m["reused_rows"] and not partial.exists()



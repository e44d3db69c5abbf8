"""The history index (``<out>/index.html``) over a year of nightly runs: 365 finished run
folders, copies of one real small run (the default minegen table at N 16, as
``configs/smoke.toml``) with distinct ids and dates, in a temporary output folder. Times
the index step (``jobs.history.write_index``: gather every run, render, write) three ways:

- read whole: every run's manifest and assertions read again (the path before decision
  285, kept as ``gather(cached=False)``, which the cached entries are held equal to);
- first index: no run has its ``index_entry.json`` yet, so each is built and written;
- cached: one small file a run (every index after the first);
- with ``--before REV``: also ``write_index`` as the module stood at git revision REV (the
  code before the cache, run on the same folder).

Each figure is the median of ``--repeats`` calls in one process, after one untimed call
that imports the generator whose labels the page uses (an audit's own refresh runs in a
process that has it). Writes docs/performance.md's section with ``--doc``; exits 1 when the
cached index takes longer than the bound (0.3 s) or differs from the page read whole.

    .venv/bin/python benchmarks/history_index.py [--runs 365] [--repeats 5] [--before REV] [--doc]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import types
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import perfdoc  # noqa: E402

BOUND_S = 0.3


def source_run(tmp: Path) -> Path:
    """One real small run: every row of the default minegen table at N 16, one worker."""
    from pipeline.jobs.audit import run_audit
    from pipeline.options import AuditOptions

    res = run_audit(AuditOptions(out=str(tmp / "source"), n=16, workers=1), progress=False,
                    index=False)
    return res.run_dir


def year_of_runs(src: Path, out: Path, runs: int) -> Path:
    """``runs`` copies of ``src`` under ``out/metric_v1/``, one a night, newest today: every
    file hard-linked but the manifest, written with the copy's id and date."""
    manifest = json.loads((src / "manifest.json").read_text(encoding="utf-8"))
    vdir = out / "metric_v1"
    vdir.mkdir(parents=True)
    last = dt.datetime.now(dt.timezone.utc).replace(hour=2, minute=0, second=0, microsecond=0)
    tail = src.name.split("-", 1)[1]  # <table hash>-n<N>
    for i in range(runs):
        when = last - dt.timedelta(days=runs - 1 - i)
        run_id = f"{when:%Y%m%dT%H%M%SZ}-{tail}"
        shutil.copytree(src, vdir / run_id, copy_function=os.link,
                        ignore=shutil.ignore_patterns("manifest.json", "index_entry.json"))
        doc = {**manifest, "run_id": run_id, "created_utc": when.isoformat(timespec="seconds")}
        (vdir / run_id / "manifest.json").write_text(json.dumps(doc, indent=2),
                                                      encoding="utf-8")
    (vdir / "LATEST").write_text(run_id + "\n", encoding="utf-8")
    return out


def module_at(rev: str) -> types.ModuleType:
    """``pipeline.jobs.history`` as it stood at git revision ``rev`` (its imports resolve
    in the checkout's packages)."""
    src = subprocess.run(["git", "-C", str(perfdoc.REPO), "show",
                          f"{rev}:pipeline/jobs/history.py"], capture_output=True, text=True,
                         check=True).stdout
    mod = types.ModuleType("pipeline.jobs._history_before")
    mod.__package__, mod.__file__ = "pipeline.jobs", f"<history.py at {rev}>"
    sys.modules[mod.__name__] = mod
    exec(compile(src, mod.__file__, "exec"), mod.__dict__)
    return mod


def timed(call, repeats: int, before=None) -> list[float]:
    got = []
    for _ in range(repeats):
        if before is not None:
            before()
        t0 = time.perf_counter()
        call()
        got.append(time.perf_counter() - t0)
    return got


def main() -> int:
    ap = perfdoc.arguments(__doc__, repeats=5)
    ap.add_argument("--runs", type=int, default=365)
    ap.add_argument("--before", default=None, metavar="REV",
                    help="also time write_index as it stood at this git revision")
    a = ap.parse_args()
    from pipeline.jobs import history
    from pipeline.reports import index_page
    from pipeline.store import atomic

    with tempfile.TemporaryDirectory(prefix="history-bench-") as t:
        tmp = Path(t)
        src = source_run(tmp)
        out = year_of_runs(src, tmp / "out", a.runs)
        entries = sorted((out / "metric_v1").glob(f"*/{history.ENTRY}"))
        assert not entries, "the copies start without a cached entry"

        def whole():
            atomic.write_text(out / history.INDEX,
                              index_page.html(history.gather(out, cached=False)))

        def drop():
            for f in (out / "metric_v1").glob(f"*/{history.ENTRY}"):
                f.unlink()

        whole()  # untimed: imports the generator the labels use
        t_whole = timed(whole, a.repeats)
        page_whole = (out / history.INDEX).read_text(encoding="utf-8")
        t_first = timed(lambda: history.write_index(out), a.repeats, before=drop)
        t_cached = timed(lambda: history.write_index(out), a.repeats)
        same = (out / history.INDEX).read_text(encoding="utf-8") == page_whole
        t_before = []
        if a.before:
            old = module_at(a.before)
            old.write_index(out)  # untimed, as above
            t_before = timed(lambda: old.write_index(out), a.repeats)
        per_run = sum(f.stat().st_size for f in (out / "metric_v1").glob(
            f"*/{history.ENTRY}")) / a.runs
        read_whole = sum((src / n).stat().st_size for n in history.SOURCES)
        rows = [[label, f"{statistics.median(ts):.3f} s",
                 ", ".join(f"{x:.3f}" for x in ts)]
                for label, ts in ((f"the code at {a.before} (before the cache)", t_before),
                                  ("read whole (every manifest and assertions)", t_whole),
                                  ("first index (each run's entry built and written)",
                                   t_first),
                                  ("cached (one entry a run)", t_cached)) if ts]
    median = statistics.median(t_cached)
    body = perfdoc.table(["index step", f"median of {a.repeats}", "each call"], rows)
    body += (f"\n\n{a.runs} finished runs (copies of one run of the default minegen table at "
             f"N 16, one a night) in one output folder. A run read whole is "
             f"{read_whole / 1024:.0f} KiB of manifest and assertions; its cached entry "
             f"{per_run / 1024:.1f} KiB. The cached page equals the page read whole: "
             f"{'yes' if same else 'NO'}. The bound (Operations IV item 6): the cached index "
             f"step within {BOUND_S} s on this machine: "
             f"{'holds' if median <= BOUND_S else 'FAILS'} ({median:.3f} s).")
    perfdoc.publish(a.doc, "history", "History index", body)
    return 0 if same and median <= BOUND_S else 1


if __name__ == "__main__":
    sys.exit(main())

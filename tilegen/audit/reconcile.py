"""``minegen reconcile``: players' telemetry against a finished tilegen audit run (05 §17;
decisions 196-198). Per (city, level, revision) and per seed: sessions, the observed pass
rate with its Wilson interval, tool use, peak slot, the fail-step distribution and time
against the level's target duration, beside the audit's simulated figures for the same
board. Flags: abnormal seeds (observed far from what the calibrated bot figures predict,
Benjamini-Hochberg across seeds), rows whose calibrated prediction lies outside the
observed interval, and target-rate proposals where the players' interval excludes the
table's target. Exit 0: consistent; 1: something flagged; 2: bad input; 130 / 143:
interrupted by SIGINT / SIGTERM (one line; no report folder, or a whole one).

A pass is a ``win``; a ``quit`` session is counted apart and left out of the pass rate
(the player neither passed nor failed the board). Bad rows and exact duplicates are
reported with their counts; duplicates count once. A session of a row or a seed the run
does not hold is a bad row (there is nothing to compare it with); telemetry without one
usable session is bad input, exit 2.
"""

from __future__ import annotations

import errno
import json
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

from boardcore.errors import InputError
from pipeline.analysis.margin import wilson

from ..telemetry import read, schema, stats, tally

FDR = 0.05
MIN_SESSIONS = 30  # per seed, played (not quit) sessions before a seed is tested


def board_figures(run_dir: Path) -> pl.DataFrame:
    """Per board of the run: key, seed and the simulated figures reconcile compares."""
    path = run_dir / "records.parquet"
    if not path.is_file():
        raise InputError(f"{path} is missing: reconcile needs a finished tilegen audit run")
    rec = pl.read_parquet(path)
    if "pass_rate_match_first" not in rec.columns:
        raise InputError(f"{run_dir} is not a tilegen audit run (no tile-match record)")
    return rec.select(
        *schema.KEY, pl.col("stream_seed").alias("seed"), "seed_index", "target_pass_rate",
        "tool_free_pass_rate", "tool_assist_pass_rate", "avg_peak_slot_usage",
        "mean_fail_step", pl.max_horizontal("pass_rate_match_first", "pass_rate_slot_build",
                                            "pass_rate_risk_averse").alias("q_best"))


def per_seed(t: dict[str, pl.DataFrame]) -> pl.DataFrame:
    """One row per (city, level, revision, seed) of the distinct sessions, from the
    tallies (``telemetry.tally``)."""
    s = t["sums"].with_columns(
        *((pl.col(c) / pl.col("sessions")).alias(f"{c}_per_session")
          for c in ("undo", "remove", "shuffle")),
        (pl.col("peak") / pl.col("sessions")).alias("peak_slot_mean"))
    fails = tally.quantiles(t["fails"], (0.1, 0.5, 0.9)).rename(
        {"q0.1": "fail_step_p10", "q0.5": "fail_step_p50", "q0.9": "fail_step_p90"})
    times = tally.quantiles(t["times"], (0.5,)).rename({"q0.5": "time_median_s"})
    return (s.drop("undo", "remove", "shuffle", "peak")
            .join(fails, on=tally.SEED, how="left").join(times, on=tally.SEED, how="left")
            .sort(tally.SEED))


def reconcile(run_dir: Path, telemetry: Path, fdr: float = FDR,
              min_sessions: int = MIN_SESSIONS, mapper=None) -> dict:
    """The reconciliation of ``telemetry`` against the run; ``mapper``: where the files
    are tallied (``tally.tally``; None: here, one after another)."""
    from pipeline.analysis.records import model

    figures = board_figures(run_dir)
    clean, _ = read.sessions(telemetry)
    model(schema.SESSION).validate(clean)  # Pandera: the clean block's declared columns
    # a session on a row or seed the run does not hold is a bad row (tally._match)
    t = tally.tally(telemetry, mapper, boards=figures.select(tally.SEED))
    dups = t["dups"]
    bad_rows = t["bad"]
    if not t["sums"].height:
        raise read.TelemetryError(_nothing_usable(telemetry, bad_rows, dups))
    seeds = per_seed(t).join(figures, on=[*schema.KEY, "seed"], how="left")
    bands = _bands(run_dir)
    tested = seeds.filter(pl.col("q_best").is_not_null() & (pl.col("played") >= min_sessions))
    x = tested["q_best"].to_numpy()
    wins, n = tested["wins"].to_numpy().astype(float), tested["played"].to_numpy().astype(float)
    ab = stats.fit(x, wins, n) if tested.height >= 3 else None
    calib = None if ab is None else {
        "a": ab[0], "b": ab[1], "monotone": ab[1] > 0, "boards": tested.height,
        "held_out_mae": stats.held_out_error(x, wins, n),
        "figure": "the best strategy's tool-free pass rate (q_best)"}
    if ab is not None:  # flag, then fit again without the flagged boards, and flag again
        abnormal = stats.bh(stats.two_sided_p(wins, n, stats.predict(ab, x)), fdr)
        keep = ~abnormal if (~abnormal).sum() >= 3 else np.ones(len(x), dtype=bool)
        if not keep.all():
            ab = stats.fit(x[keep], wins[keep], n[keep])
            calib.update(a=ab[0], b=ab[1], monotone=ab[1] > 0, boards=int(keep.sum()),
                         held_out_mae=stats.held_out_error(x[keep], wins[keep], n[keep]))
        calib.update(stats.uncertainty(x[keep], wins[keep], n[keep], ab))
        exp = stats.predict(ab, x)
        p = stats.two_sided_p(wins, n, exp)
        tested = tested.with_columns(pl.Series("predicted", exp), pl.Series("p_value", p),
                                     pl.Series("abnormal", stats.bh(p, fdr)))
    rows = _rows(seeds, calib, bands)
    return {"run": str(run_dir), "telemetry": str(telemetry), "fdr": fdr,
            "synthetic": read.synthetic(telemetry),
            "min_sessions": min_sessions, "calibration": calib,
            "sessions": int(seeds["sessions"].sum()) if seeds.height else 0,
            "bad_rows": bad_rows.to_dicts(), "duplicates": dups,
            "unmatched_seeds": seeds.filter(pl.col("q_best").is_null()).height,
            "rows": rows,
            "seeds": tested.to_dicts(),
            "abnormal_seeds": tested.filter(pl.col("abnormal")).to_dicts()
            if "abnormal" in tested.columns else []}


def _nothing_usable(telemetry: Path, bad: pl.DataFrame, dups: dict) -> str:
    """The one line for telemetry without a session reconcile can use: how many rows it
    had, and why they are not sessions (the commonest reason first)."""
    n_bad = int(bad["rows"].sum()) if bad.height else 0
    if not n_bad:
        return f"telemetry {telemetry}: no session in it (0 rows)"
    why = "; ".join(f"{r} x {w}" for w, r in bad.select("reason", "rows").rows()[:2])
    more = f"; {bad.height - 2} more reason(s)" if bad.height > 2 else ""
    return (f"telemetry {telemetry}: no session to reconcile: all {n_bad} row(s) are bad "
            f"rows ({why}{more})")


def _bands(run_dir: Path) -> dict[tuple, list[float]]:
    """Each row's tool-free band [min, max] from the run's aggregates (acceptance.toml)."""
    path = run_dir / "aggregates.parquet"
    if not path.is_file():
        return {}
    agg = pl.read_parquet(path)
    if "tool_free_min" not in agg.columns:
        return {}
    return {tuple(r[:3]): [r[3], r[4]] for r in agg.select(
        *schema.KEY, "tool_free_min", "tool_free_max").rows() if r[3] is not None}


def _rows(seeds: pl.DataFrame, cal: dict | None, bands: dict) -> list[dict]:
    out = []
    for key, g in seeds.group_by(list(schema.KEY), maintain_order=True):
        played, wins = int(g["played"].sum()), int(g["wins"].sum())
        lo, hi = wilson(wins, played) if played else (0.0, 1.0)
        prod = g.filter(pl.col("seed_index") == -1)
        target = g["target_pass_rate"].drop_nulls()
        row = dict(zip(schema.KEY, key), sessions=int(g["sessions"].sum()), played=played,
                   wins=wins, observed=wins / played if played else None, lo=lo, hi=hi,
                   target=float(target[0]) if target.len() else None)
        if prod.height:
            row.update(production_tool_free=prod["tool_free_pass_rate"][0],
                       production_tool_assist=prod["tool_assist_pass_rate"][0],
                       production_q_best=prod["q_best"][0])
        known = g.filter(pl.col("q_best").is_not_null() & (pl.col("played") > 0))
        if cal is not None and known.height and int(known["played"].sum()) == played:
            # the row's players played these boards: the prediction weighs each by its
            # played sessions, as the observed rate does; flagged when its interval and the
            # players' do not meet (the calibration's uncertainty counts, decision 202)
            pred, p_lo, p_hi = stats.mean_interval(cal, known["q_best"].to_numpy(),
                                                   known["played"].to_numpy())
            row.update(predicted=pred, predicted_lo=p_lo, predicted_hi=p_hi,
                       outside=p_hi < lo or p_lo > hi)
        if row["target"] is not None and played and not lo <= row["target"] <= hi:
            row["proposal"] = round(wins / played, 2)
            if tuple(key) in bands:  # a target must lie in the band (presets.toml's rule)
                row["band"] = bands[tuple(key)]
        out.append(row)
    return out


def write(doc: dict, out: Path) -> Path:
    """reconcile.json and report.html in a new ``<out>/tilegen/reconcile/<stamp>/``, whole
    or not at all (``pipeline.store.atomic.folder``); two reconciliations in one second
    keep a folder each (``-2``, ``-3`` ...)."""
    from boardcore.output import writing_under
    from pipeline.store import atomic

    from .reconcile_page import html

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    parent = out / "tilegen" / "reconcile"
    with writing_under(out):
        parent.mkdir(parents=True, exist_ok=True)

        def take(name: str) -> Path:
            final = parent / name
            if final.exists():
                raise FileExistsError(final)
            try:
                with atomic.folder(final) as tmp:
                    (tmp / "reconcile.json").write_text(
                        json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
                    (tmp / "report.html").write_text(html(doc), encoding="utf-8")
            except OSError as e:  # another reconcile renamed its folder there first
                if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise FileExistsError(final) from e
                raise
            return final

        return atomic.claim_name(stamp, take, "reconcile folder", parent)


def flagged(doc: dict) -> bool:
    return bool(doc["abnormal_seeds"] or any(r.get("outside") or "proposal" in r
                                             for r in doc["rows"]))


def summary(doc: dict, folder: Path) -> str:
    c = doc["calibration"]
    lines = [f"reconcile: {doc['sessions']} distinct sessions on {len(doc['rows'])} row(s); "
             f"{sum(r['rows'] for r in doc['bad_rows'])} bad row(s), "
             f"{doc['duplicates']['extra_copies'] or 0} duplicate copies left out",
             f"report: {folder / 'report.html'}"]
    if c:
        lines.append(f"  calibration: player pass = logistic({c['a']:.3f} + {c['b']:.3f} "
                     f"logit(q_best)) over {c['boards']} boards; held-out error "
                     f"{c['held_out_mae']:.3f}")
    for s in doc["abnormal_seeds"]:
        lines.append(f"  abnormal seed {s['city_id']} {s['level_id']} r{s['revision']} seed "
                     f"{s['seed']}: players {s['wins'] / s['played']:.2f} of {s['played']}, "
                     f"predicted {s['predicted']:.2f} (p = {s['p_value']:.1e})")
    for r in doc["rows"]:
        if "proposal" in r:
            lines.append(f"  proposal {r['city_id']} {r['level_id']} r{r['revision']}: "
                         f"target_pass_rate {r['target']} -> {r['proposal']} (players "
                         f"{r['lo']:.2f}-{r['hi']:.2f})" + _outside(r))
    for b in doc["bad_rows"]:
        lines.append(f"  bad rows: {b['rows']} x {b['reason']} (first rows {b['first_rows']})")
    return "\n".join(lines)


def _outside(r: dict) -> str:
    band = r.get("band")
    if not band or band[0] <= r["proposal"] <= band[1]:
        return ""
    return f"; outside the level's band [{band[0]}, {band[1]}] (acceptance.toml)"


def cmd_reconcile(args) -> int:
    from pipeline.store.runs import resolve_run

    from pipeline.options import usable_out

    if args.junit_xml:  # a target that cannot take the file: refused before the work
        from boardcore.output import file_target

        file_target(args.junit_xml, "--junit-xml", "reconcile.xml")
    usable_out(args.out)  # the report's folder, checked before anything is read
    run_dir = resolve_run(args.run, args.out, subdir="tilegen")
    if args.engine == "local" and (args.workers is not None or args.scheduler is not None):
        raise InputError("--workers and --scheduler choose the Dask cluster: give "
                         "--engine dask with them")
    from boardcore.cli import aside
    from pipeline.engine.interrupts import interruptible
    from pipeline.errors import Interrupted, RunInterrupted
    from pipeline.jobs.history import refresh

    folder = None
    # SIGINT / SIGTERM: one line and 130 / 143 (the audit's Interrupted, raised in this
    # thread); the cluster is closed on the way out (session's finally), and the report
    # folder appears whole (atomic.folder) or not at all
    try:
        with interruptible():
            if args.engine == "local":
                doc = aside(reconcile, run_dir, Path(args.telemetry), fdr=args.fdr,
                            min_sessions=args.min_sessions)
            else:
                doc = _on_dask(args, run_dir)
            folder = write(doc, Path(args.out))
            refresh(args.out, announce=lambda m: print(f"minegen: {m}", file=sys.stderr))
            print(summary(doc, folder))
            if args.junit_xml:
                from pipeline.reports import junit

                print("JUnit: " + str(junit.write(args.junit_xml, junit.reconcile_document(
                    doc, folder), "reconcile.xml")))
    except Interrupted as e:
        done = (f"; the report was written: {folder / 'report.html'}" if folder is not None
                else "; no report was written")
        raise RunInterrupted(e.signum, f"interrupted ({e}){done}") from None
    return 1 if flagged(doc) else 0


def _on_dask(args, run_dir: Path) -> dict:
    """The reconciliation with the files tallied on a Dask cluster (the audit's session:
    an embedded LocalCluster on loopback, or --scheduler); the same result as locally.
    Each file's tally is added to the totals as it finishes (``as_completed``) and then
    released, so neither this process nor the workers hold every file's tallies."""
    from pipeline.engine.session import session
    from pipeline.options import AuditOptions, check

    opts = AuditOptions(scheduler=args.scheduler, workers=args.workers, out=args.out)
    check(opts)  # the audit's rules for --workers and --scheduler, before a cluster starts
    read.files(Path(args.telemetry))  # bad input before a cluster starts
    with session(opts.cluster(), announce=lambda m: print(f"reconcile: {m}",
                                                          file=sys.stderr)) as s:
        def mapper(func, files):
            from distributed import as_completed

            futures = s.client.map(func, files, pure=False)
            index = {f.key: i for i, f in enumerate(futures)}
            arriving = as_completed(futures, with_results=True)
            del futures  # as_completed holds each until it is yielded: then it is ours
            for future, part in arriving:
                i = index[future.key]
                future.release()  # its result leaves the worker's memory
                del future
                yield i, part

        return reconcile(run_dir, Path(args.telemetry), fdr=args.fdr,
                         min_sessions=args.min_sessions, mapper=mapper)


def add_reconcile(sub, command) -> None:
    from boardcore import domains as dom

    r = sub.add_parser(
        "reconcile", help="players' telemetry against a finished tilegen audit run",
        description="Compare telemetry sessions (Parquet, CSV or NDJSON; docs/telemetry.md) "
                    "with a tilegen audit run: observed pass rates with intervals beside the "
                    "simulated ones, abnormal seeds, target-rate proposals.",
        epilog="exit codes:\n  0  consistent\n  1  something flagged (abnormal seeds, rows "
               "off their prediction, proposals)\n  2  bad input (run, telemetry, options)\n  3  "
               "the Dask cluster could not complete (--engine dask)\n  130 / 143  "
               "interrupted by SIGINT (Ctrl-C) / SIGTERM: no report written",
        formatter_class=__import__("argparse").RawDescriptionHelpFormatter)
    r.add_argument("--run", default="LATEST", help="tilegen audit run: folder, id or LATEST")
    r.add_argument("--telemetry", required=True, help="a telemetry file or folder")
    r.add_argument("--out", default="reports", help="output root (default: reports)")
    r.add_argument("--fdr", type=dom.FDR, default=FDR, help=f"false-discovery rate of the "
                   f"abnormal-seed flags (default {FDR})")
    r.add_argument("--min-sessions", type=dom.SESSIONS, default=MIN_SESSIONS,
                   help=f"played sessions before a seed is tested (default {MIN_SESSIONS})")
    r.add_argument("--junit-xml", default=None, metavar="PATH",
                   help="also write the reconciliation as JUnit XML: per row, the players "
                        "against the prediction and the target; per tested seed, abnormal "
                        "or not (a CI server's test dashboard; the exit code is unchanged)")
    r.add_argument("--engine", choices=("local", "dask"), default="local",
                   help="where the files are tallied: here, one after another (default), "
                        "or on the audit's Dask cluster, a file per task (the same result)")
    r.add_argument("--workers", type=dom.WORKERS, default=None,
                   help="with --engine dask: embedded LocalCluster worker processes")
    r.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="with --engine dask: an existing Dask scheduler (host:port)")
    r.set_defaults(func=command(cmd_reconcile))

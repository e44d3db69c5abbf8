"""``minegen reconcile``: players' telemetry against a finished tilegen audit run (05 §17;
decisions 196-198, 250-253). Per (city, level, revision) and per seed: sessions, the
players' pass rate (tool-free first attempts: the figure target_pass_rate means) with its
interval and the win rate as its own figure, tool use, peak slot, the fail-step
distribution and time against the level's target duration, beside the audit's simulated
figures for the same board. Flags: abnormal seeds (an exact beta-binomial test around the
calibrated bot figure, Benjamini-Hochberg across seeds), rows whose calibrated prediction
lies outside the observed interval (when the calibration is informative), and rows off
their target, proposed or withheld to keep the city's curve; each flag needs its gap
beyond the practical margin as well as significance (decision 279). The calibration is
fitted robustly (decision 280); a row's interval counts its boards' scatter (decision
281). Exit 0: consistent; 1: something flagged; 2: bad input; 130 / 143: interrupted by
SIGINT / SIGTERM (one line; no report folder, or a whole one).

A win is a ``win``; a ``quit`` session is counted apart and left out of every rate (the
player neither passed nor failed the board). Bad rows and exact duplicates are reported
with their counts; duplicates count once. A session of a row or a seed the run does not
hold is a bad row (there is nothing to compare it with); telemetry without one usable
session is bad input, exit 2.
"""

from __future__ import annotations

import errno
import json
import sys
import time
from pathlib import Path

import polars as pl

from boardcore.errors import InputError
from pipeline.api.stats import wilson

from ..telemetry import candidates, overdispersion, read, schema, stats, tally
from . import proposals, reconcile_tables

FDR = 0.05
MIN_SESSIONS = 30  # per seed, played (not quit) sessions before a seed is tested


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
            .join(t["firsts"], on=tally.SEED, how="left")
            .join(fails, on=tally.SEED, how="left").join(times, on=tally.SEED, how="left")
            .sort(tally.SEED))


def reconcile(run_dir: Path, telemetry: Path, fdr: float = FDR,
              min_sessions: int = MIN_SESSIONS, mapper=None, margin: float = proposals.MARGIN,
              min_step: float = proposals.MIN_STEP) -> dict:
    """The reconciliation of ``telemetry`` against the run; ``mapper``: where the files
    are tallied (``tally.tally``; None: here, one after another)."""
    from pipeline.api.contract import records_model as model

    figures = candidates.board_figures(run_dir)
    clean, _ = read.sessions(telemetry)
    model(schema.SESSION).validate(clean)  # Pandera: the clean block's declared columns
    # a session on a row or seed the run does not hold is a bad row (tally._match)
    t = tally.tally(telemetry, mapper, boards=figures.select(tally.SEED))
    dups = t["dups"]
    bad_rows = t["bad"]
    if not t["sums"].height:
        raise read.TelemetryError(_nothing_usable(telemetry, bad_rows, dups))
    # the players' figure comparable with target_pass_rate (decision 250): tool-free wins
    # of each identified player's first attempt; without player ids, of every session
    first = bool(t["sums"]["identified"].sum())
    n_col, w_col = ("first_played", "first_free_wins") if first else ("played", "free_wins")
    seeds = (per_seed(t).join(figures, on=[*schema.KEY, "seed"], how="left")
             .with_columns(pl.col(n_col).alias("pass_n"), pl.col(w_col).alias("pass_wins")))
    tested = seeds.filter(pl.col("q_best").is_not_null()
                          & (pl.col("pass_n") >= min_sessions))
    wins = tested["pass_wins"].to_numpy().astype(float)
    n = tested["pass_n"].to_numpy().astype(float)
    calib = None
    if tested.height >= 3:
        judged = candidates.judge(tested, wins, n, list(schema.KEY))
        pick = candidates.choose(judged)
        res = overdispersion.test_boards(tested[pick["key"]].to_numpy(), wins, n, fdr, margin)
        keep, weight = res["keep"], res["weights"]
        calib = {"a": res["ab"][0], "b": res["ab"][1], "monotone": res["ab"][1] > 0,
                 "boards": int(keep.sum()), "downweighted": int((keep & (weight < 0.5)).sum()),
                 "check": overdispersion.check(wins, n, res, tested["level_id"].to_numpy(),
                                               margin),
                 "column": pick["key"], "figure": pick["figure"],
                 "informative": pick["informative"], "rows": pick["rows"],
                 "rows_at_ceiling": pick["rows_at_ceiling"],
                 "held_out_mae": stats.held_out_error(tested[pick["key"]].to_numpy()[keep],
                                                      wins[keep], n[keep]),
                 "predicts": "the players' tool-free pass rate, first attempts"
                             if first else "the players' tool-free pass rate, all sessions",
                 "candidates": [{k: v for k, v in c.items() if k != "errors"}
                                for c in judged], **res["uncertainty"]}
        tested = tested.with_columns(pl.Series("predicted", res["predicted"]),
                                     pl.Series("p_value", res["p"]),
                                     pl.Series("fit_weight", weight),
                                     pl.Series("significant", res["significant"]),
                                     pl.Series("abnormal", res["abnormal"]))
    abnormal = tested.filter(pl.col("abnormal")) if "abnormal" in tested.columns else \
        tested.clear()
    rows = _rows(seeds, calib, abnormal.select(tally.SEED), margin, min_sessions)
    proposals.keep_curves(rows, min_step)
    proposals.band_edits(rows, *reconcile_tables.bands(run_dir))  # decision 282
    return {"run": str(run_dir), "telemetry": str(telemetry), "fdr": fdr,
            "synthetic": read.synthetic(telemetry), "first_attempts": first,
            "margin": margin, "min_step": min_step,
            "min_sessions": min_sessions, "calibration": calib,
            "sessions": int(seeds["sessions"].sum()) if seeds.height else 0,
            "bad_rows": bad_rows.to_dicts(), "duplicates": dups,
            "unmatched_seeds": seeds.filter(pl.col("q_best").is_null()).height,
            "rows": rows,
            "seeds": tested.to_dicts(),
            "abnormal_seeds": abnormal.to_dicts(),
            "fail_steps": fail_steps(t["fails"])}  # the page's chart (decision 261)


def fail_steps(fails: pl.DataFrame) -> list[dict]:
    """Per level: the distinct ``fail`` sessions that first failed at each click, all
    cities together (the tallies' fail-step histograms, ``tally``)."""
    return (fails.group_by("level_id", pl.col("v").alias("first_fail_step"))
            .agg(pl.col("n").sum().alias("sessions")).filter(pl.col("sessions") > 0)
            .sort("level_id", "first_fail_step").to_dicts())


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


def _rows(seeds: pl.DataFrame, cal: dict | None, abnormal: pl.DataFrame, margin: float,
          min_sessions: int) -> list[dict]:
    """Per row: the players' pass rate comparable with the target (``pass_n``,
    ``pass_wins``: decision 250) over the row's boards less its abnormal seeds, with its
    interval (Wilson at the sessions' effective number: the boards' scatter counted,
    decision 281); the players' win rate (every played session, tools and revives
    included) on its own; the calibrated prediction where the calibration is informative;
    the target judged (``proposals.judge``)."""
    tau2 = cal["tau2"] if cal else 0.0
    out = []
    flagged = seeds.join(abnormal.with_columns(pl.lit(True).alias("_ab")), on=tally.SEED,
                         how="left").with_columns(pl.col("_ab").fill_null(False))
    for key, g in flagged.group_by(list(schema.KEY), maintain_order=True):
        kept = g.filter(~pl.col("_ab"))
        played, wins = int(g["played"].sum()), int(g["wins"].sum())
        n, k = int(kept["pass_n"].sum()), int(kept["pass_wins"].sum())
        per = kept.filter(pl.col("pass_n") > 0)
        eff, lo, hi = (stats.scattered_interval(per["pass_wins"].to_numpy(),
                                                per["pass_n"].to_numpy(), tau2)
                       if n else (0, 0.0, 1.0))
        w_lo, w_hi = wilson(wins, played) if played else (0.0, 1.0)
        prod = g.filter(pl.col("seed_index") == -1)
        target = g["target_pass_rate"].drop_nulls()
        row = dict(zip(schema.KEY, key), sessions=int(g["sessions"].sum()), played=played,
                   wins=wins, win_rate=wins / played if played else None, win_lo=w_lo,
                   win_hi=w_hi, pass_n=n, pass_wins=k, observed=k / n if n else None,
                   lo=lo, hi=hi, n_effective=eff, abnormal_left_out=g.height - kept.height,
                   target=float(target[0]) if target.len() else None)
        if prod.height:
            row.update(production_tool_free=prod["tool_free_pass_rate"][0],
                       production_tool_assist=prod["tool_assist_pass_rate"][0],
                       production_q_best=prod["q_best"][0])
            if cal is not None:
                row["production_figure"] = prod[cal["column"]][0]
        known = kept.filter(pl.col("q_best").is_not_null() & (pl.col("pass_n") > 0))
        if cal is not None and known.height and int(known["pass_n"].sum()) == n:
            # the row's players played these boards: the prediction weighs each by its
            # sessions, as the observed rate does; flagged when its interval and the
            # players' do not meet (the calibration's uncertainty counts, decision 202)
            # and the gap is beyond the margin (decision 279), and only when the
            # calibration can tell rows apart (decision 251)
            pred, p_lo, p_hi = stats.mean_interval(cal, known[cal["column"]].to_numpy(),
                                                   known["pass_n"].to_numpy())
            row.update(predicted=pred, predicted_lo=p_lo, predicted_hi=p_hi,
                       outside=bool(cal["informative"] and (p_hi < lo or p_lo > hi)
                                    and abs(k / n - pred) > margin + 1e-12))
        proposals.judge(row, margin, min_sessions)
        out.append(row)
    return out


def write(doc: dict, out: Path) -> Path:
    """reconcile.json and report.html in a new ``<out>/tilegen/reconcile/<stamp>/``, whole
    or not at all (``pipeline.store.atomic.folder``); two reconciliations in one second
    keep a folder each (``-2``, ``-3`` ...)."""
    from boardcore import files
    from boardcore.output import writing_under
    from pipeline.api.runs import atomic

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
                    files.create(tmp / "reconcile.json",
                                 json.dumps(doc, indent=1, default=str) + "\n")
                    files.create(tmp / "report.html", html(doc, final))
            except OSError as e:  # another reconcile renamed its folder there first
                if e.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise FileExistsError(final) from e
                raise
            return final

        return atomic.claim_name(stamp, take, "reconcile folder", parent)


def flagged(doc: dict) -> bool:
    return bool(doc["abnormal_seeds"] or any(r.get("outside") or r.get("off_target")
                                             for r in doc["rows"]))


def summary(doc: dict, folder: Path) -> str:
    c = doc["calibration"]
    lines = [f"reconcile: {doc['sessions']} distinct sessions on {len(doc['rows'])} row(s); "
             f"{sum(r['rows'] for r in doc['bad_rows'])} bad row(s), "
             f"{doc['duplicates']['extra_copies'] or 0} duplicate copies left out",
             f"report: {folder / 'report.html'}"]
    if c:
        lines.append(f"  calibration: {c['predicts']} = logistic({c['a']:.3f} + "
                     f"{c['b']:.3f} logit({c['column']})) over {c['boards']} boards; "
                     f"held-out error {c['held_out_mae']:.3f}"
                     + ("" if c["informative"] else
                        f"; UNINFORMATIVE: {c['column']} is at its ceiling on "
                        f"{c['rows_at_ceiling']} of {c['rows']} rows"))
        k = c["check"]
        if not (k["map_holds"] and k["scatter_holds"]):  # decision 283
            from .reconcile_page import _check_words

            lines.append("  MODEL CHECK: " + _check_words(k))
    for s in doc["abnormal_seeds"]:
        lines.append(f"  abnormal seed {s['city_id']} {s['level_id']} r{s['revision']} seed "
                     f"{s['seed']}: players' pass rate {s['pass_wins'] / s['pass_n']:.2f} of "
                     f"{s['pass_n']}, "
                     f"predicted {s['predicted']:.2f} (p {_p(s['p_value'])})")
    for r in doc["rows"]:
        if "next_step" in r:  # outside the band: the band's edit first (decision 282)
            lines.append(f"  band first {r['city_id']} {r['level_id']} r{r['revision']}: "
                         + proposals.next_step_text(r))
        elif "proposal" in r:
            lines.append(f"  proposal {r['city_id']} {r['level_id']} r{r['revision']}: "
                         f"target_pass_rate {r['target']} -> {r['proposal']} (players "
                         f"{r['lo']:.2f}-{r['hi']:.2f}, {r['pass_n']} sessions)")
        elif "proposal_withheld" in r:
            w = r["proposal_withheld"]
            lines.append(f"  withheld {r['city_id']} {r['level_id']} r{r['revision']}: "
                         f"target_pass_rate {r['target']} -> {w['value']}: {w['why']}")
    for b in doc["bad_rows"]:
        lines.append(f"  bad rows: {b['rows']} x {b['reason']} (first rows {b['first_rows']})")
    return "\n".join(lines)


def _p(p: float) -> str:
    text = overdispersion.p_text(p)
    return text if text.startswith("<") else f"= {text}"


def cmd_reconcile(args) -> int:
    from pipeline.api.runs import resolve_run

    from pipeline.api.runs import usable_out

    if args.junit_xml:  # a target that cannot take the file: refused before the work
        from boardcore.output import file_target

        file_target(args.junit_xml, "--junit-xml", "reconcile.xml")
    usable_out(args.out)  # the report's folder, checked before anything is read
    run_dir = resolve_run(args.run, args.out, subdir="tilegen")
    if args.engine == "local" and (args.workers is not None or args.scheduler is not None):
        raise InputError("--workers and --scheduler choose the Dask cluster: give "
                         "--engine dask with them")
    differs = reconcile_tables.differ(run_dir, args)  # another table's run (decision 275)
    from boardcore.cli import aside

    from ..funnel import progress
    from pipeline.api.contract import Interrupted, RunInterrupted
    from pipeline.api.runs import interruptible, refresh

    folder = None
    # SIGINT / SIGTERM: one line and 130 / 143 (the audit's Interrupted, raised in this
    # thread); the cluster is closed on the way out (session's finally), and the report
    # folder appears whole (atomic.folder) or not at all
    try:
        with interruptible():
            if args.engine == "local":
                doc = aside(reconcile, run_dir, Path(args.telemetry), fdr=args.fdr,
                            min_sessions=args.min_sessions, margin=args.margin,
                            min_step=args.min_step)
            else:
                doc = _on_dask(args, run_dir)
            if differs:
                print(reconcile_tables.line(differs, doc), file=sys.stderr)
            # players through the levels (decision 259)
            doc["funnel"] = aside(progress.part, Path(args.telemetry), run_dir,
                                  doc["sessions"])
            folder = write(doc, Path(args.out))
            refresh(args.out, announce=lambda m: print(f"minegen: {m}", file=sys.stderr))
            print(summary(doc, folder))
            if args.junit_xml:
                from pipeline.api.pages import junit

                from .reconcile_junit import reconcile_document

                print("JUnit: " + str(junit.write(args.junit_xml, reconcile_document(
                    doc, folder), "reconcile.xml")))
    except read.TelemetryError as e:  # no usable session: the run's tables may be why
        if differs:
            raise read.TelemetryError(f"{e}; {differs[0]}; {differs[1]}") from None
        raise
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
    from pipeline.api.runs import AuditOptions, check, interrupts, session

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
                # a wait point: a signal that came while the totals were being added (not
                # in as_completed's own wait, where it raises at once) stops the run here
                interrupts.check()
                i = index[future.key]
                future.release()  # its result leaves the worker's memory
                del future
                yield i, part

        return reconcile(run_dir, Path(args.telemetry), fdr=args.fdr,
                         min_sessions=args.min_sessions, mapper=mapper, margin=args.margin,
                         min_step=args.min_step)


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
    r.add_argument("--margin", type=dom.MARGIN, default=proposals.MARGIN,
                   help="practical margin: a row's target is off, a seed abnormal and a row "
                        "off its prediction only when significant and the gap is larger "
                        f"than this (default {proposals.MARGIN}: 3 points)")
    r.add_argument("--min-step", type=dom.MARGIN, default=proposals.MIN_STEP,
                   help="proposed targets must fall by at least this from each level to "
                        f"the next (default {proposals.MIN_STEP})")
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

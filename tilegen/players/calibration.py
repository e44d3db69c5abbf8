"""The players' calibration on the audit report (``minegen audit --generator tilegen
--calibration reconcile.json``; decision 202): what real players are predicted to pass on
each row's production board, with a 95 % prediction interval, from the mapping
``minegen reconcile`` fitted between the bot's figures and observed pass rates.

The mapping is logistic(a + b logit(q)), q the bot figure reconcile chose (``column``:
q_best, a strategy's tool-free pass rate ...; decision 251), predicting the players' pass
rate comparable with target_pass_rate (decision 250). A calibration whose figure is at its
ceiling on most rows is uninformative: the section says so first and judges no target. The interval carries the fit's own
uncertainty (the covariance of a and b) and the boards' scatter around the mapping
(``tau2``), both on the logit scale (``telemetry.stats.interval``); the calibration's
held-out error says how far a board outside the fit typically lands.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import polars as pl

from boardcore import files
from boardcore.errors import InputError
from pipeline.api.pages import Col, Para, Section, WARN, row_table

from ..telemetry import candidates, stats

KEYS = ("a", "b", "cov", "tau2", "held_out_mae", "boards")
PROD = pl.col("seed_index") == -1
AUDIT = pl.col("seed_index") >= 0


def read(path: str) -> dict:
    """The calibration of a reconcile.json (``minegen reconcile`` writes it), with where
    it came from; InputError (one line) when the file cannot give one."""
    p = Path(path)
    try:  # a regular file of bounded size (a link followed to one): never a FIFO's wait
        raw = files.read_bytes(p, follow=True)
        doc = json.loads(raw)
    except FileNotFoundError:
        raise InputError(f"--calibration {path} does not exist") from None
    except files.Refused as e:
        raise InputError(f"--calibration {e}") from None
    except (OSError, ValueError) as e:
        raise InputError(f"--calibration {path}: not a readable JSON file ({e})") from None
    cal = doc.get("calibration") if isinstance(doc, dict) else None
    if not isinstance(cal, dict):
        raise InputError(f"--calibration {path}: no calibration in it (give the "
                         "reconcile.json of a `minegen reconcile` with at least 3 tested "
                         "boards)")
    missing = [k for k in KEYS if k not in cal]
    if missing:
        raise InputError(f"--calibration {path}: the calibration lacks {', '.join(missing)} "
                         "(written by an older minegen: run `minegen reconcile` again)")
    if not cal.get("monotone", cal["b"] > 0):
        raise InputError(f"--calibration {path}: the fitted mapping falls as the bot's rate "
                         "rises (b <= 0): it predicts nothing; see its reconcile report")
    column = cal.get("column", "q_best")  # an older reconcile.json read q_best
    if column not in candidates.NAMES:
        raise InputError(f"--calibration {path}: unknown bot figure {column!r}")
    return {**{k: cal[k] for k in (*KEYS, "figure")}, "column": column,
            "informative": bool(cal.get("informative", True)),
            "predicts": cal.get("predicts", "the players' pass rate"),
            "file": str(p.resolve()),
            "sha256": hashlib.sha256(raw).hexdigest(),  # of the bytes read
            "synthetic": bool(doc.get("synthetic")), "telemetry": doc.get("telemetry"),
            "run": doc.get("run")}


def _eta_sd(cal: dict, q: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    qc = q.clip(0.01, 0.99)
    lg = (qc / (1 - qc)).log()
    (c00, c01), (_, c11) = cal["cov"]
    return (cal["a"] + cal["b"] * lg,
            (c00 + 2 * c01 * lg + c11 * lg * lg + cal["tau2"]).sqrt())


def _sig(v: pl.Expr) -> pl.Expr:
    return 1 / (1 + (-v).exp())


def aggregations(cal: dict) -> list[pl.Expr]:
    """Per row: the production board's predicted player pass rate and its interval, and
    the median prediction over the audit boards (what another board of the preset gives)."""
    q = candidates.expr(cal["column"])
    eta, sd = _eta_sd(cal, q)
    return [q.filter(PROD).first().alias("players_q_best"),
            _sig(eta).filter(PROD).first().alias("players_predicted"),
            _sig(eta - 1.96 * sd).filter(PROD).first().alias("players_lo"),
            _sig(eta + 1.96 * sd).filter(PROD).first().alias("players_hi"),
            _sig(eta).filter(AUDIT).median().alias("players_predicted_p50")]


def _pct(v) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.1f} %"


def _verdict(r: dict, informative: bool = True) -> str:
    if not informative:
        return "not judged"
    t, lo, hi = r.get("target_pass_rate"), r.get("players_lo"), r.get("players_hi")
    if t is None or lo is None:
        return "—"
    if t < lo:
        return "players above the target"
    if t > hi:
        return "players below the target"
    return "target inside"


def section(doc, cal: dict) -> Section:
    sec = Section("tilegen-players", "Players: predicted pass rate per row")
    if cal.get("synthetic"):
        sec.blocks.append(Para("SYNTHETIC calibration: it was fitted on synthetic "
                               "telemetry (tilegen telemetry synth), not on players. The "
                               "numbers below show what the report will say; they predict "
                               "no real player.", strong=True))
    if not cal["informative"]:
        sec.blocks.append(Para(
            f"UNINFORMATIVE calibration: the bot figure it reads, {cal['figure']}, is at its "
            "ceiling on most rows, so it predicts (nearly) one rate for rows of every level. "
            "No target is judged by it below; the players' own rates are on the reconcile "
            "page.", strong=True))
    scatter = (f"tau2 = {cal['tau2']:.3f} on the logit scale" if cal["tau2"] > 0 else
               "tau2 = 0 here: the fitted boards scattered no more than chance")
    fitted = ("boards with synthetic sessions, made by `tilegen telemetry synth`, not by "
              "players" if cal.get("synthetic") else "boards with players")
    sec.blocks.append(Para(
        f"What real players are predicted to pass on each row's production board (the board "
        f"they get), from the calibration in {cal['file']} (`minegen reconcile`, fitted on "
        f"{cal['boards']} {fitted}): {cal['predicts']} = "
        f"logistic({cal['a']:.3f} + {cal['b']:.3f} × logit(q)), q being {cal['figure']} on "
        f"the board (shown; clipped to 0.01–0.99). The players' pass rate is the figure "
        f"target_pass_rate means: a first attempt won with no tool and no revive. The "
        f"95 % interval is for that board's players: it carries the fit's uncertainty and "
        f"how far boards scatter around the mapping ({scatter}). On boards left out of the "
        f"fit the prediction missed the players by {100 * cal['held_out_mae']:.1f} "
        f"percentage points on average (held-out error). The target is the row's "
        f"target_pass_rate in presets.toml; a target outside the interval is marked: players "
        f"are predicted to pass more, or less, than it. 'Audit boards p50' is the median "
        f"prediction over the row's N audit boards: what another board of the preset would "
        f"give."))
    top = sum((r.get("players_q_best") or 0) >= 0.99 for r in doc.rows)
    if top and cal["informative"]:
        sec.blocks.append(Para(
            f"On {top} of {len(doc.rows)} rows the bot figure is 0.99 or more on the "
            f"production board: the mapping's ceiling, "
            f"{_pct(float(stats.predict((cal['a'], cal['b']), 0.99)))}. Those "
            "rows get the same prediction whatever their level; the bot's figure cannot "
            "tell them apart, so their predictions say little about how hard each is."))

    def off(r: dict, v) -> str | None:
        return WARN if v not in ("—", "target inside", "not judged") else None

    judge = lambda r: _verdict(r, cal["informative"])  # noqa: E731
    cols = (Col(f"bot figure ({cal['column']})", "players_q_best", lambda v: "—" if v is None else f"{v:.2f}"),
            Col("target pass rate", "target_pass_rate", _pct),
            Col("players, production board", "players_predicted", _pct),
            Col("95 % interval", lambda r: "—" if r.get("players_lo") is None else
                f"{100 * r['players_lo']:.1f}–{100 * r['players_hi']:.1f} %", str),
            Col("audit boards p50", "players_predicted_p50", _pct),
            Col("against the target", judge, str, off))
    sec.blocks.append(row_table(doc.rows, cols, doc.row_label))
    if not cal["informative"]:
        return sec
    n_off = sum(_verdict(r) not in ("—", "target inside") for r in doc.rows)
    sec.blocks.append(Para(f"{n_off} of {len(doc.rows)} rows have a target outside their "
                           "players' interval (advisory: no line reads it).",
                           strong=bool(n_off)))
    return sec

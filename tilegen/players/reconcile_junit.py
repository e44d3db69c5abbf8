"""A reconciliation (``minegen reconcile``) as a JUnit XML file (``--junit-xml PATH``,
decision 217): the platform's ``pipeline.reports.junit`` document, with the tile-match
players' cases -- per row, the players against the calibrated prediction and against the
table's target; per tested seed, whether its players are abnormal."""

from __future__ import annotations

import os
from pathlib import Path

from pipeline.api.pages import Case, document


def _fmt(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def reconcile_cases(doc: dict) -> list[Case]:
    """The reconciliation's test cases, with stable names, as for the audit."""
    cases = []
    abnormal = {(s["city_id"], s["level_id"], s["revision"], str(s["seed"])): s
                for s in doc.get("abnormal_seeds", [])}
    for r in doc.get("rows", []):
        key = f"{r['city_id']}:{r['level_id']}:{r['revision']}"
        cls = f"tilegen-reconcile.{key}"
        seen = f"players' pass rate {_fmt(r.get('observed'))} (95 %: {_fmt(r.get('lo'))}–" \
               f"{_fmt(r.get('hi'))}, {r.get('pass_n')} sessions)"
        if "predicted" not in r:
            cases.append(Case(cls, "players match the calibrated prediction",
                              skipped="no calibration covers this row's boards"))
        elif r.get("outside"):
            cases.append(Case(cls, "players match the calibrated prediction",
                              failure=f"{key}: {seen}; predicted {_fmt(r['predicted'])} "
                                      f"({_fmt(r['predicted_lo'])}–{_fmt(r['predicted_hi'])})"))
        else:
            cases.append(Case(cls, "players match the calibrated prediction"))
        if r.get("target") is None:
            cases.append(Case(cls, "players meet the row's target pass rate",
                              skipped="the row has no target"))
        elif r.get("off_target"):
            said = (f"proposed {r['proposal']}" if "proposal" in r else
                    f"proposal {r['proposal_withheld']['value']} withheld: "
                    f"{r['proposal_withheld']['why']}")
            cases.append(Case(cls, "players meet the row's target pass rate",
                              failure=f"{key}: {seen}; target_pass_rate {r['target']} lies "
                                      f"outside by more than the margin; {said}"))
        else:
            cases.append(Case(cls, "players meet the row's target pass rate"))
    for s in doc.get("seeds", []):
        k = (s["city_id"], s["level_id"], s["revision"], str(s["seed"]))
        cls = f"tilegen-reconcile.{k[0]}:{k[1]}:{k[2]}"
        name = f"seed {k[3]} plays as predicted"
        if k in abnormal and s.get("pass_n"):
            a = abnormal[k]
            cases.append(Case(cls, name, failure=(
                f"abnormal seed {k[3]}: players' pass rate "
                f"{a['pass_wins'] / a['pass_n']:.3f} of {a['pass_n']}, predicted "
                f"{_fmt(a.get('predicted'))} (p {_p(a.get('p_value', float('nan')))})")))
        else:
            cases.append(Case(cls, name))
    return cases


def _p(p: float) -> str:
    """A p-value: below the smallest double the exact sum underflows to 0; say so."""
    return "< 1e-300" if p < 1e-300 else f"= {p:.1e}"


def reconcile_document(doc: dict, folder: str | os.PathLike) -> str:
    return document("tilegen reconcile", reconcile_cases(doc), {
        "report": str(Path(folder) / "report.html"), "run": doc.get("run", ""),
        "telemetry": doc.get("telemetry", ""), "synthetic": doc.get("synthetic", "")})

"""What one board says about each hard line of its row (the play page's outcome line).

A hard line (``audit.lines.LINES``; this module is library code and never imports the
audit side) is judged per row over its N boards; a single board either counts against it
or not, by the same per-board test the audit aggregates
(``audit.generator.aggregations``): A counts a board below the target (inferability or
inferability_core), A' an illegal board (exit accept_least_bad), B a board missing fog
regions (on rows that ask for fog and have a variant pool), B' a fogged board on a row
that asks for none, A'' the row's own target against the floor. The generator's F5 exit
(``met``) is about the inferability target only: a board may meet it and still miss its
fog regions, so the page says both, never "met its targets" alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from .table_checks import TARGET_FLOOR


@dataclass(frozen=True)
class BoardLine:
    name: str  # the line's name, as the report prints it
    holds: bool  # False: this board counts against the line
    says: str  # the board's own figure, in words


def board_lines(record: dict) -> list[BoardLine]:
    """The hard lines that apply to the board's row, each judged on this board alone."""
    floor = TARGET_FLOOR  # the threshold of line A'', declared once (table_checks)
    r = record
    target = r["inferability_target"]
    out = [
        BoardLine("A", r["inferability"] >= target and r["inferability_core"] >= target,
                  f"inferability {r['inferability']:.1%}, without fog "
                  f"{r['inferability_core']:.1%}, target {100 * target:g} %"),
        BoardLine("A''", target >= floor,
                  f"the row's target {100 * target:g} % against the floor {100 * floor:g} %"),
        BoardLine("A'", r["exit"] != "accept_least_bad",
                  "a legal board" if r["exit"] != "accept_least_bad"
                  else "no legal attempt (accept_least_bad)"),
    ]
    asked, placed = r["fog_regions_requested"], r["fog_regions_achieved"]
    if asked >= 1 and not r["pool_empty"]:
        out.append(BoardLine("B", placed == asked,
                             f"{placed} of {asked} asked-for fog regions placed"))
    elif asked == 0:
        out.append(BoardLine("B'", r["fog_cells"] == 0,
                             f"{r['fog_cells']} fog cells on a row that asks for none"))
    return out


EXIT_WORDS = {"met": "met the inferability target",
              "accept_best": "no attempt met the inferability target: the best of them "
                             "(degraded)",
              "accept_least_bad": "no legal attempt: the least bad of them (illegal)"}


def outcome(record: dict) -> str:
    """One sentence: the F5 exit in words, then every hard line this board counts against
    (or that it counts against none, naming them)."""
    lines = board_lines(record)
    exit_words = EXIT_WORDS.get(record["exit"], record["exit"])
    failing = [ln for ln in lines if not ln.holds]
    if not failing:
        return (f"{exit_words}; counts against no hard line "
                f"({', '.join(ln.name for ln in lines)} hold on this board)")
    return (f"{exit_words}; counts against line "
            + "; line ".join(f"{ln.name} ({ln.says})" for ln in failing))


__all__ = ["BoardLine", "EXIT_WORDS", "board_lines", "outcome"]

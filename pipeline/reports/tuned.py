"""What the latest tune of a run says about its failing rows, as the audit report reads it
(issue 30 item 6: one source of advice). The tune's document (tune.json) is read by
``jobs.latest_tune``; this module only words it: each failing row's class and proposal or
next step, and which of the drill-down's moves the tune already showed useless for a row.
Nothing here reads from disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .tune_page import _slug

PROPOSED = ("one field", "several fields", "joint change")  # tune's classes that carry a proposal


@dataclass(frozen=True)
class TuneView:
    """One finished tune, seen from the run it tuned."""

    tune_id: str
    created_utc: str  # when the tune started (tune.json ``created_utc``)
    href: str  # its tune.html, relative to the run folder
    rows: dict = field(default_factory=dict)  # row key -> tune.json row
    locked: dict = field(default_factory=dict)  # row key -> tune.json locked entry
    lock_key: str = ""  # the table key that locks a row (tune.json ``lock_key``)
    table_file: str = "the table"  # the file a proposal edits
    field_names: dict = field(default_factory=dict)  # knob -> as the table file names it

    @classmethod
    def of(cls, doc: dict, href: str) -> TuneView:
        return cls(doc["tune_id"], doc.get("created_utc", ""), href,
                   {tuple(r["key"]): r for r in doc.get("rows", [])},
                   {tuple(r["key"]): r for r in doc.get("locked", [])},
                   doc.get("lock_key") or "", doc.get("table_file") or "the table",
                   doc.get("field_names") or {})

    def link(self, label: str) -> str:
        """The row's section of tune.html."""
        return f"{self.href}#row-{_slug(label)}"

    @property
    def when(self) -> str:
        return self.created_utc.replace("T", " ").replace("+00:00", "") + " UTC"


def klass(view: TuneView | None, key: tuple, locked: dict | None = None) -> str:
    """The row's class in the report's words: proposal, breaks the curve, structural,
    locked (the tune's, or the run's tables' ``locked``: row key -> why); "not tuned"
    without a tune (or a row the tune did not see)."""
    if key in (locked or {}) or (view is not None and key in view.locked):
        return "locked"
    if view is None:
        return "not tuned"
    r = view.rows.get(key)
    if r is None:
        return "not tuned"
    return "proposal" if r.get("class") in PROPOSED else r.get("class", "not tuned")


def advice(view: TuneView | None, key: tuple, label: str, tune_cmd: str,
           locked: dict | None = None) -> str:
    """The row's proposal (linked to its section of tune.html) or its next step;
    ``tune_cmd`` None: the command is said once elsewhere on the page."""
    c = klass(view, key, locked)
    if c == "not tuned":
        return ("next step: tune the run (the command is under this list)" if tune_cmd is None
                else f"next step: `{tune_cmd}` classes the row and proposes a change")
    if c == "locked":
        why = (locked or {}).get(key) or view.locked[key].get("why", "")
        return f"the design fixes the row ({why}): nothing to do"
    r, link = view.rows[key], view.link(label)
    if c == "proposal":
        ch = r["change"]
        sure = "with margin" if ch.get("margin") else "within noise"
        if r.get("confirmed"):
            sure = "confirmed on fresh boards, " + sure
        joint = (f"; one joint change with {', '.join(r['joint_group'])}, applied together"
                 if r.get("joint_group") else "")
        return (f"tune proposes `{ch['summary']}` in {view.table_file} ({sure}{joint}): "
                f"[tune.html]({link})")
    if c == "not confirmed":
        u = r.get("unconfirmed") or {}
        more = (f"an audit at N {u['n_needed']:,} would settle it, " if u.get("n_needed")
                else "")
        return (f"`{u.get('change', '?')}` held on the audit's boards but not on "
                f"{u.get('boards', 'fresh boards')}; next step: {more}or "
                f"{next_step(view, r)} ([tune.html]({link}))")
    if c == "breaks the curve":
        b = r.get("breaks") or {}
        return (f"`{b.get('change', '?')}` fixes it but breaks {', '.join(b.get('lines', []))}; "
                f"next step: change the rows it breaks with it, or lock the row "
                f"([tune.html]({link}))")
    return f"{r.get('why') or 'no table change fixes it'}; next step: {next_step(view, r)} " \
           f"([tune.html]({link}))"


def next_step(view: TuneView, r: dict) -> str:
    """One next step per class and cause (issue 40 item 3): the row without its feature
    where that was measured to hold and keep the table, else locking it. Never a change
    the tune refuses to propose (a flagged one: it removes most of a feature, and the tune
    page lists it only as an option at a cost)."""
    d = r.get("drop") or {}
    if d.get("holds") and not d.get("breaks"):
        return (f"measured: without the row's feature it holds (`{d['change']}`)"
                + (f"; {d['consequence']}" if d.get("consequence") else ""))
    if view.lock_key:
        return f"accept the failure: `{view.lock_key} = true` on its row of {view.table_file}"
    return "accept the failure"


@dataclass(frozen=True)
class SweepView:
    """One finished sweep of the run's tables: a row, the field it varied, the valid
    values it ran and, per value, the hard lines that held."""

    sweep_id: str
    key: tuple
    field: str
    # ((value, the lines that held there, the lines judged there), ...)
    values: tuple

    @classmethod
    def of(cls, doc: dict) -> SweepView:
        inputs = doc["inputs"]
        return cls(str(doc.get("sweep_id")),
                   tuple(inputs.get("resolved_row") or inputs["row"]),
                   inputs["field"],
                   tuple((v["value"], frozenset(n for n, x in v.get("lines", {}).items()
                                                if x.get("passed")),
                          frozenset(v.get("lines", {})))
                         for v in doc.get("values", []) if v.get("status") == "ok"))


def useless(view: TuneView | None, key: tuple, knob: str, shown: str, line: str,
            sweeps: tuple = ()) -> tuple[str, list] | None:
    """(who showed it, the values tried) when the latest tune tried ``knob`` alone on the
    row, or a sweep of the run's tables varied it there, and no value made ``line`` hold
    (the move is useless for the row); None when neither tried it or some value held."""
    knobs = (knob, *shown.replace(" and ", " ").split())
    r = view.rows.get(key) if view else None
    if r is not None:
        # the candidates that judged the line (a line they do not report is no evidence)
        tried = [c for c in r.get("tried", []) if c.get("status") == "ok"
                 and len(c.get("change", {})) == 1 and next(iter(c["change"])) in knobs
                 and line in c.get("lines", {})]
        if tried and not any(c["lines"][line].get("passed") for c in tried):
            return "tune", [c["value"] for c in tried]
    for sw in sweeps:
        judged = [(v, held) for v, held, seen in sw.values if line in seen]
        if sw.key == key and sw.field in knobs and judged \
                and not any(line in held for _, held in judged):
            return f"sweep {sw.sweep_id}", [v for v, _ in judged]
    return None

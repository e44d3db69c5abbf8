"""The human side of a sweep (``pipeline.sweep``): sweep.csv, sweep.md and a self-contained
sweep.html with one plot, all from the sweep document (the content of sweep.json).

As in ``pipeline.render``, both human renderings come from one document model (sections
of paragraphs, bullets and tables whose cells carry a fail / warn / n/a mark), so the
Markdown and the page say the same thing; that module's escaping (``_md``, ``_h``), cell
rendering and CSS are reused, never copied, and the figure goes through
``pipeline.plots``' SVG writer (offline, deterministic bytes, ids scoped by ``ns``).
Nothing here reads from disk or writes.
"""

from __future__ import annotations

import math

import polars as pl
from matplotlib.figure import Figure

from . import plots
from .render import (
    FAIL,
    NA,
    WARN,
    Bullets,
    Cell,
    Para,
    Section,
    Table,
    _h,
    _md,
    _num,
    html_head,
    html_sections,
    md_sections,
    md_table,
)

_LINES_ORDER = ("A", "A''", "A'", "B", "B'")


def _hard_lines(doc: dict) -> list[str]:
    return list(doc.get("hard_lines") or _LINES_ORDER)


def _status(v: dict) -> str:
    if v["status"] != "ok":
        return "invalid"
    return "holds" if v["holds"] else "fails " + ", ".join(v["failed_lines"])


# ----------------------------------------------------------------------------------- CSV

def csv_frame(doc: dict) -> pl.DataFrame:
    """One row per grid value: verdict, each hard line (pass / fail / n/a / empty when not
    run), the figures and, for invalid values, the diagnostics' categories and rules."""
    kind = pl.Int64 if doc["inputs"]["kind"] == "int" else pl.Float64
    lines = _hard_lines(doc)
    num_cols = ("inferability_p10", "inferability_p50", "inferability_core_p10",
                "inferability_core_p50", "retry_rate", "mean_attempts", "mine_drift_p50")
    cols: dict[str, list] = {"value": [], "label": [], "table_value": [], "status": [],
                             "holds": [], **{f"line_{ln}": [] for ln in lines},
                             **{c: [] for c in num_cols}, "records_sha256": [],
                             "invalid_categories": [], "invalid_rules": []}
    for v in doc["values"]:
        ok = v["status"] == "ok"
        cols["value"].append(v["value"])
        cols["label"].append(v["label"])
        cols["table_value"].append(v["current"])
        cols["status"].append(v["status"])
        cols["holds"].append(v["holds"])
        for ln in lines:
            r = v["lines"][ln] if ok else None
            cols[f"line_{ln}"].append(None if r is None else "n/a" if not r["applies"]
                                      else "pass" if r["passed"] else "fail")
        for c in num_cols:
            cols[c].append(v[c] if ok else None)
        cols["records_sha256"].append(v["records_sha256"] if ok else None)
        cols["invalid_categories"].append(None if ok else ";".join(v["categories"]))
        cols["invalid_rules"].append(None if ok else " | ".join(d["rule"]
                                                                 for d in v["diagnostics"]))
    schema = {c: pl.String for c in cols} | {"value": kind, "table_value": pl.Boolean,
                                             "holds": pl.Boolean} | {c: pl.Float64
                                                                     for c in num_cols}
    return pl.DataFrame(cols, schema=schema)


# -------------------------------------------------------------------------- document model

def _value_table(doc: dict) -> Table:
    lines = _hard_lines(doc)
    b = doc["boundary"]["value"]
    rows = []
    for v in doc["values"]:
        notes = (["table value"] if v["current"] else []) + (
            ["boundary"] if v["status"] == "ok" and v["value"] == b else [])
        cells = [Cell(v["label"])]
        if v["status"] != "ok":
            cells.append(Cell("invalid: " + ", ".join(v["categories"]), NA))
            cells += [Cell("not run", NA) for _ in lines] + [Cell("—", NA) for _ in range(6)]
        else:
            cells.append(Cell(_status(v), None if v["holds"] else FAIL))
            for ln in lines:
                r = v["lines"][ln]
                cells.append(Cell("n/a", NA) if not r["applies"] else
                             Cell(f"pass {_num(r['observed'])}") if r["passed"] else
                             Cell(f"FAIL {_num(r['observed'])}", FAIL))
            target = _target(doc, v)
            for c in ("inferability_p10", "inferability_p50", "inferability_core_p10"):
                below = v[c] is not None and v[c] < target
                cells.append(Cell(_num(v[c]), FAIL if below else None))
            cells.append(Cell(_num(v["retry_rate"])))
            cells.append(Cell(_num(v["mine_drift_p50"]), WARN if v["mine_drift_warning"]
                              else None))
            cells.append(Cell(_num(v["records_sha256"][:12])))
        cells.append(Cell(", ".join(notes)))
        rows.append(cells)
    return Table([doc["inputs"]["field"], "verdict", *lines, "infer p10", "infer p50",
                  "core p10", "retry rate", "mine drift p50", "records sha256", "note"], rows)


def _target(doc: dict, v: dict) -> float:
    if doc["inputs"]["field"] == "inferability_target":
        return float(v["value"])
    return float(doc["inputs"]["base_row"]["inferability_target"])


def _title(doc: dict) -> str:
    level, depth = doc["inputs"]["row"]
    return f"minegen sweep {doc['sweep_id'] or ''}: ({level}, {depth}) {doc['inputs']['field']}"


def _verdict(doc: dict) -> str:
    return "BOUNDARY" if doc["boundary"]["value"] is not None else "NONE HOLDS"


def _document(doc: dict) -> list[Section]:
    inp = doc["inputs"]
    head = Section("summary", "Summary")
    head.blocks.append(Para(f"Boundary: {doc['boundary']['text']}.", strong=True))
    rl, rd = inp["resolved_row"]
    head.blocks.append(Bullets([
        Cell(f"row ({inp['row'][0]}, {inp['row'][1]}) resolves to table row ({rl}, {rd}) "
             "(R1 floor); seeds as in the audit: board i uses derive_at('board_gen', "
             "sigma(L, D) + i)"),
        Cell(f"vary {inp['vary']}: {len(doc['values'])} value(s), "
             f"{sum(v['status'] == 'ok' for v in doc['values'])} valid and run"),
        Cell(f"N = {inp['n']} boards per value; hard lines: {', '.join(_hard_lines(doc))}"),
    ]))
    table = Section("values", "Per value")
    table.blocks.append(Para("Inferability cells below the row's target are marked (line A "
                             "breaks on at least that share of boards); invalid values fail "
                             "load-time validation and are not run."))
    table.blocks.append(_value_table(doc))
    out = [head, table, Section("plot", "Plot", blocks=[_PLOT])]
    invalid = [v for v in doc["values"] if v["status"] != "ok"]
    if invalid:
        sec = Section("invalid", "Invalid values (load-time validation, SPEC §2)")
        sec.blocks.append(Bullets([Cell(f"{v['label']}: {d['category']}: {d['field']} = "
                                        f"{d['value']}: {d['rule']}", NA)
                                   for v in invalid for d in v["diagnostics"]]))
        out.append(sec)
    facts = Section("facts", "Run facts")
    keys = ["sweep_id", "created_utc", "code_version", "git_commit", "table_root",
            "table_hash", "n", "sigma_formula", "metric_version", "generator_version",
            "scheduler", "workers", "seeds_per_task", "wall_s", "exit_code"]
    facts.blocks.append(Table(["fact", "value"], [[Cell(k), Cell(_num(doc.get(k)))]
                                                  for k in keys]))
    pk = Section("packages", "Package versions", 3)
    pk.blocks.append(Table(["package", "version"], [[Cell(k), Cell(str(v))] for k, v in
                                                   sorted((doc.get("packages") or {}).items())]))
    return out + [facts, pk]


_PLOT = object()  # where the HTML page draws the figure (Markdown points to the page)


# ----------------------------------------------------------------------------- Markdown

def markdown_table(doc: dict) -> str:
    """The per-value table alone (what ``minegen sweep`` prints)."""
    return "\n".join(md_table(_value_table(doc)))


def markdown(doc: dict) -> str:
    """sweep.md: the same content as the page, the plot excepted."""
    out = [f"# {_md(_title(doc))}: {_verdict(doc)}", ""]
    out += md_sections(_document(doc), lambda b: [
        "The plot (inferability against the value) is in sweep.html.", ""]
        if b is _PLOT else [])
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------- plot

def sweep_svg(doc: dict) -> str:
    """Inferability p10 / p50 and core p10 (dashed) against the value, with the target
    line; a green dot marks a value where every hard line holds, a red cross one that
    fails, a grey triangle on the axis an invalid (not run) value; a dotted vertical line
    marks the boundary."""
    inp = doc["inputs"]
    values = doc["values"]
    xs = [float(v["value"]) for v in values]
    ok = [v["status"] == "ok" for v in values]

    def col(name: str) -> list[float]:
        return plots._floats([v[name] if good else None for v, good in zip(values, ok)])

    fig = Figure(figsize=plots._FIGSIZE)
    fig.subplots_adjust(left=0.11, right=0.97, top=0.9, bottom=0.15)
    ax = fig.add_subplot()
    ax.set_title(f"Row ({inp['row'][0]}, {inp['row'][1]}): inferability against "
                 f"{inp['field']}")
    ax.set_xlabel(inp["field"])
    ax.set_ylabel("inferability")
    ax.grid(True, color="#dddddd", linewidth=0.6)
    p10 = col("inferability_p10")
    ax.plot(xs, p10, marker="v", color="#1f77b4", linewidth=1, label="p10")
    ax.plot(xs, col("inferability_p50"), marker="o", color="#1f3f77", linewidth=1.6,
            label="p50")
    ax.plot(xs, col("inferability_core_p10"), linestyle="--", marker=".", color="#9467bd",
            linewidth=1.2, label="core p10")
    target = [_target(doc, v) for v in values]
    ax.plot(xs, target, linestyle="-.", drawstyle="steps-mid", color="#d62728",
            linewidth=1.4, label="target")
    finite = [y for y in p10 + col("inferability_core_p10") + target if not math.isnan(y)]
    bottom = max(0.0, min(finite, default=0.0) - 0.05)
    ax.set_ylim(bottom, 1.02)
    marks = [("holds", "o", "#2e7d32", [v.get("holds") is True for v in values]),
             ("fails a hard line", "x", "#d62728", [v.get("holds") is False for v in values])]
    for name, marker, color, sel in marks:
        pts = [(x, y) for x, y, s in zip(xs, p10, sel) if s]
        if pts:
            ax.plot([x for x, _ in pts], [y for _, y in pts], linestyle="none", marker=marker,
                    markersize=9, markeredgewidth=2, color=color, fillstyle="none",
                    label=name)
    bad = [x for x, good in zip(xs, ok) if not good]
    if bad:
        ax.plot(bad, [bottom + 0.005] * len(bad), linestyle="none", marker="^", markersize=8,
                color="#888888", label="invalid (not run)")
    if doc["boundary"]["value"] is not None:
        ax.axvline(float(doc["boundary"]["value"]), linestyle=":", color="#2e7d32",
                   linewidth=1.4, label="boundary")
    if len(xs) <= 16:
        ax.set_xticks(xs, [v["label"] for v in values])
    if len(xs) == 1:
        ax.set_xlim(xs[0] - 1, xs[0] + 1)
    ax.legend(loc="lower left", fontsize="small", ncols=2)
    return plots._to_svg(fig, "sweep")


# --------------------------------------------------------------------------------- HTML

def html(doc: dict) -> str:
    """sweep.html: one self-contained page (inline CSS and SVG, nothing external)."""
    verdict = _verdict(doc)
    badge = "pass" if doc["boundary"]["value"] is not None else "fail"
    title = _title(doc)
    out = html_head(f"{title}: {verdict}")
    out += [f'<h1>{_h(title)} <span class="badge {badge}">{verdict}</span></h1>',
            '<p class="legend">Legend: <span class="fail">fails a hard line</span>'
            '<span class="warn">advisory warning</span><span class="na">invalid / n/a'
            "</span></p>"]
    out += html_sections(_document(doc), lambda b: [
        f'<figure id="plot-sweep">{sweep_svg(doc)}<figcaption>'
        "Inferability p10 / p50 and core p10 (dashed) against the value, "
        "with the target; green = every hard line holds, red cross = "
        "fails, grey triangle = invalid (not run), dotted line = boundary."
        "</figcaption></figure>"] if b is _PLOT else [])
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"

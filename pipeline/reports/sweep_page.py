"""The human side of a sweep (``jobs.sweep``): sweep.csv, sweep.md and a self-contained
sweep.html, all from the sweep document (the content of sweep.json).

The page shows, per value, the verdict, every hard line (status and observed value) and
the generator's figures; and one chart per hard line that applies: its observed value
against the varied value, with the line's threshold, so the line that breaks is the one
on screen. Nothing here reads from disk or writes.
"""

from __future__ import annotations

import polars as pl

from . import render
from .document import (FAIL, NA, WARN, Bullets, Cell, Figure, Figures, Para, Section,
                       Table, fact, num)
from .svg import Marks, Series, line_chart

SITE = "../.."  # the output folder, seen from <out>/sweeps/<id>/ (its index, its docs)


def _status(v: dict) -> str:
    if v["status"] != "ok":
        return "invalid"
    return "holds" if v["holds"] else "fails " + ", ".join(v["failed_lines"])


def _figures(doc: dict) -> list[tuple[str, str]]:
    return [tuple(f) for f in doc["inputs"].get("figures", [])]


# ----------------------------------------------------------------------------------- CSV

def csv_frame(doc: dict) -> pl.DataFrame:
    """One row per grid value: verdict, each hard line (pass / fail / n/a / empty when not
    run), the figures and, for invalid values, the diagnostics' categories and rules."""
    kind = pl.Int64 if doc["inputs"]["kind"] == "int" else pl.Float64
    lines = doc["hard_lines"]
    figures = [c for c, _ in _figures(doc)]
    cols: dict[str, list] = {"value": [], "label": [], "table_value": [], "status": [],
                             "holds": [], **{f"line_{ln}": [] for ln in lines},
                             **{c: [] for c in figures}, "records_sha256": [],
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
        for c in figures:
            cols[c].append(float(v[c]) if ok and v[c] is not None else None)
        cols["records_sha256"].append(v["records_sha256"] if ok else None)
        cols["invalid_categories"].append(None if ok else ";".join(v["categories"]))
        cols["invalid_rules"].append(None if ok else " | ".join(d["rule"]
                                                                 for d in v["diagnostics"]))
    schema = {c: pl.String for c in cols} | {"value": kind, "table_value": pl.Boolean,
                                             "holds": pl.Boolean} | {c: pl.Float64
                                                                     for c in figures}
    return pl.DataFrame(cols, schema=schema)


# -------------------------------------------------------------------------- document model

def _value_table(doc: dict) -> Table:
    lines = doc["hard_lines"]
    figures = _figures(doc)
    b = doc["boundary"]["value"]
    rows = []
    for v in doc["values"]:
        notes = (["table value"] if v["current"] else []) + (
            ["boundary"] if v["status"] == "ok" and v["value"] == b else []) + (
            ["removes most of what the row asks (below)"] if v.get("flags") else [])
        cells = [Cell(v["label"])]
        if v["status"] != "ok":
            cells.append(Cell("invalid: " + ", ".join(v["categories"]), NA))
            cells += [Cell("not run", NA) for _ in lines]
            cells += [Cell("—", NA) for _ in range(len(figures) + 1)]
        else:
            cells.append(Cell(_status(v), None if v["holds"] else FAIL))
            for ln in lines:
                r = v["lines"][ln]
                iv = r.get("interval")
                sure = (f" (95 %: {iv[0]:.3f}–{iv[1]:.3f}"
                        + ("; within noise" if r.get("within_noise") else "") + ")") \
                    if iv else ""
                cells.append(Cell("n/a", NA) if not r["applies"] else
                             Cell(f"pass {num(r['observed'])}{sure}",
                                  WARN if r.get("within_noise") else None) if r["passed"]
                             else Cell(f"FAIL {num(r['observed'])}{sure}", FAIL))
            cells += [Cell(num(v[c])) for c, _ in figures]
            cells.append(Cell(num(v["records_sha256"][:12])))
        cells.append(Cell(", ".join(notes)))
        rows.append(cells)
    return Table([doc["inputs"]["field"], "verdict", *lines, *(lab for _, lab in figures),
                  "records sha256", "note"], rows)


def _title(doc: dict) -> str:
    return (f"{doc.get('generator', 'minegen')} sweep {doc['sweep_id'] or ''}: "
            f"{doc['inputs']['row_label']} {doc['inputs']['field']}")


def _verdict(doc: dict) -> str:
    return "BOUNDARY" if doc["boundary"]["value"] is not None else "NONE HOLDS"


def flat_lines(doc: dict) -> list[str]:
    """A sentence per hard line whose observed value is the same at every valid value (a
    flat chart says nothing a sentence cannot)."""
    values = [v for v in doc["values"] if v["status"] == "ok"]
    out = []
    for ln in doc["hard_lines"]:
        obs = {num(v["lines"][ln]["observed"]) for v in values if v["lines"][ln]["applies"]}
        if len(obs) == 1 and len(values) > 1:
            out.append(f"Line {ln} stays at {obs.pop()} for every value of "
                       f"{doc['inputs']['field']} (no chart).")
    return out


def line_charts(doc: dict) -> list[Figure]:
    """Per hard line that applies to some value and moves: observed value against the
    varied value, the threshold dashed; a red cross where the line fails, a ring on the
    boundary. A line that does not move gets a sentence instead (``flat_lines``)."""
    values = [v for v in doc["values"] if v["status"] == "ok"]
    xs = [float(v["value"]) for v in values]
    field = doc["inputs"]["field"]
    out = []
    for ln in doc["hard_lines"]:
        obs = [v["lines"][ln]["observed"] if v["lines"][ln]["applies"] else None
               for v in values]
        if all(o is None for o in obs) or (
                len({num(o) for o in obs if o is not None}) == 1 and len(values) > 1):
            continue
        thr = next(v["lines"][ln]["threshold"] for v in values)
        op = next(v["lines"][ln]["op"] for v in values)
        fails = [(x, o) for x, o, v in zip(xs, obs, values) if v["lines"][ln]["passed"] is False]
        marks = [Marks(f"fails {ln}", [x for x, _ in fails], [o for _, o in fails], "#d62728")]
        b = doc["boundary"]["value"]
        if b is not None and float(b) in xs:
            i = xs.index(float(b))
            marks.append(Marks("boundary", [xs[i]], [obs[i]], "#2e7d32", "ring"))
        top = max([thr, *(o for o in obs if o is not None)])
        svg = line_chart(
            ns=f"sweep-{len(out)}", title=f"Line {ln} against {field}",
            xlabel=field, ylabel=f"line {ln} observed", xs=xs,
            xticks=[v["label"] for v in values], ylim=(0.0, top * 1.08 if top > 0 else 1.0),
            series=[Series(f"{ln} observed", obs, "#1f3f77"),
                    Series(f"threshold ({op} {thr:g})", [thr] * len(xs), "#d62728",
                           dash="6 3", marker="none")],
            marks=[m for m in marks if m.xs])
        out.append(Figure(f"plot-sweep-{ln}", svg,
                          f"Line {ln}: observed value per {field} value; the line requires "
                          f"{op} {thr:g} (dashed). Crosses fail, the ring is the boundary."))
    return out


def _document(doc: dict) -> list[Section]:
    inp = doc["inputs"]
    head = Section("summary", "Summary")
    head.blocks.append(Para(f"Boundary: {doc['boundary']['text']}.", strong=True))
    head.blocks.append(Para("Every run, tune and sweep of this output folder: "
                            f"[index.html]({SITE}/index.html)."))
    head.blocks.append(Bullets([
        Cell(f"row {inp['row_label']} reads table row {tuple(inp['resolved_row'])}; seeds "
             f"as in the audit ({doc.get('sigma_formula', '')})"),
        Cell(f"vary {inp['vary']}: {len(doc['values'])} value(s), "
             f"{sum(v['status'] == 'ok' for v in doc['values'])} valid and run"),
        Cell(f"N = {inp['n']} boards per value; hard lines: {', '.join(doc['hard_lines'])}"),
    ]))
    table = Section("values", "Per value")
    table.blocks.append(Para("Each hard line's status and observed value per value; invalid "
                             "values fail load-time validation and are not run."))
    table.blocks.append(_value_table(doc))
    removing = [v for v in doc["values"] if v.get("flags")]
    if removing:
        table.blocks.append(Para("Values that keep under the share of a feature the row asks "
                                 "for (the rule tune proposes by); none of them is the "
                                 "boundary:"))
        table.blocks.append(Bullets([Cell(f"{v['label']} ({_status(v)}): "
                                          + "; ".join(v["flags"]), WARN) for v in removing]))
    plot = Section("plot", "Lines against the value",
                   blocks=[Para(t) for t in flat_lines(doc)])
    charts = line_charts(doc)
    if charts:
        plot.blocks.append(Figures("", charts))
    out = [head, table, plot]
    invalid = [v for v in doc["values"] if v["status"] != "ok"]
    if invalid:
        sec = Section("invalid", "Invalid values (load-time validation)")
        sec.blocks.append(Bullets([Cell(f"{v['label']}: {d['category']}: {d['field']} = "
                                        f"{d['value']}: {d['rule']}", NA)
                                   for v in invalid for d in v["diagnostics"]]))
        out.append(sec)
    facts = Section("facts", "Run facts")
    keys = ["sweep_id", "created_utc", "generator", "code_version", "git_commit",
            "table_root", "table_hash", "n", "sigma_formula", "metric_version",
            "generator_version", "scheduler", "workers", "seeds_per_task", "wall_s",
            "exit_code"]
    facts.blocks.append(Table(["fact", "value"], [[Cell(k), Cell(fact(doc, k))]
                                                  for k in keys]))
    pk = Section("packages", "Package versions", 3)
    pk.blocks.append(Table(["package", "version"], [[Cell(k), Cell(str(v))] for k, v in
                                                   sorted((doc.get("packages") or {}).items())]))
    return out + [facts, pk]


def markdown_table(doc: dict) -> str:
    """The per-value table alone (what ``minegen sweep`` prints)."""
    return "\n".join(render.md_table(_value_table(doc)))


def markdown(doc: dict) -> str:
    """sweep.md: the same content as the page (charts are named, drawn in sweep.html)."""
    return render.markdown(f"{_title(doc)}: {_verdict(doc)}", _document(doc),
                           page="sweep.html")


def html(doc: dict) -> str:
    """sweep.html: one self-contained page (inline CSS and SVG, nothing external)."""
    verdict = _verdict(doc)
    badge = "pass" if doc["boundary"]["value"] is not None else "fail"
    return render.html(_title(doc), _document(doc), badge=(verdict, badge),
                       legend=render.legend(doc.get("rules_doc", "docs/design.md"), SITE),
                       jargon=tuple(tuple(j) for j in doc.get("jargon", ())))

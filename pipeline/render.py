"""The human report of an audit run (SPEC §9): ``report.md`` and a self-contained
``report.html``.

Both renderings come from one document model built once (``_document``): sections of
paragraphs, bullet lists and tables whose cells carry a mark (fail / warn / n/a), so the
Markdown and the HTML page always say the same thing. The HTML page adds the per-level
plots (``pipeline.plots``, inline SVG) and colours the marks.

Inputs (built by ``pipeline.report``): ``manifest`` (SPEC §9 manifest.json keys),
``aggregates`` (``assertions.assertion_frame``: one row per (L, D), aggregate columns plus
``e_monotone_ok`` / ``e_detail``), ``results`` (``assertions.evaluate``: one dict per
(line, row)), ``shortfall`` (``aggregate.shortfall_distribution``) and ``b1`` (the B1
clause-③ frame, or None to leave its section out). Nothing is read from disk or written.

The verdict is recomputed from ``results`` (any hard line with ``passed is False`` = FAIL);
a manifest ``exit_code`` that disagrees is reported loudly, never hidden. Every string that
comes from data is escaped by the renderer that prints it (HTML entities; Markdown
backslash escapes of ``\\``, a ``<`` that could open a tag, ``|`` in tables), so a table value
cannot inject markup.
"""

from __future__ import annotations

import html as _html
import re
from dataclasses import dataclass, field

import polars as pl

from . import plots
from .aggregate import MINE_DRIFT_WARN, ROW_KEY
from .assertions import LINES

FAIL, WARN, NA = "fail", "warn", "na"  # cell marks
_NEGATE = {"==": "!=", ">=": "<", "<=": ">", ">": "<=", "<": ">="}
# The observed quantity of each line, by the name the aggregate frame gives it unmasked.
_QUANTITY = {ln.name: ln.column.removeprefix("b_prime_").removeprefix("b_") for ln in LINES}
_MISSING = "—"


@dataclass(frozen=True)
class Cell:
    text: str
    mark: str | None = None


@dataclass(frozen=True)
class Para:
    text: str
    strong: bool = False


@dataclass(frozen=True)
class Bullets:
    items: list[Cell]


@dataclass(frozen=True)
class Table:
    headers: list[str]
    rows: list[list[Cell]]


@dataclass(frozen=True)
class Plots:
    """Where the HTML page draws the per-level figures (Markdown points to the page)."""

    levels: list[tuple[int, list[dict], list[int]]]  # (level, its rows, failing depths)


@dataclass
class Section:
    anchor: str
    title: str
    depth: int = 2  # heading level
    blocks: list = field(default_factory=list)


# ----------------------------------------------------------------------------- formatting

def _num(v) -> str:
    """3 decimals for floats, integers as they are, yes/no, the missing mark for None."""
    if v is None or isinstance(v, bool):
        return _MISSING if v is None else "yes" if v else "no"
    if isinstance(v, float):
        return "nan" if v != v else f"{v:.3f}"
    return str(v)


def _thr(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _key(level, depth) -> str:
    return f"({level}, {depth})"


def _fact(manifest: dict, key: str) -> str:
    return _num(manifest[key]) if manifest.get(key) is not None else "(not recorded)"


# ----------------------------------------------------------------------- document model

def _verdict(manifest: dict, rows: list[dict], results: list[dict]) -> tuple[bool, Section]:
    failing = [r for r in results if r["hard"] and r["passed"] is False]
    failed_rows = {(r["level_index"], r["node_depth"]) for r in failing}
    ok = not failing
    sec = Section("verdict", "Verdict")
    if ok:
        sec.blocks.append(Para(f"PASS: every hard line (A, A'', A', B, B') holds on all "
                               f"{len(rows)} rows.", strong=True))
    else:
        sec.blocks.append(Para(f"FAIL: {len(failing)} hard-line failure(s) on "
                               f"{len(failed_rows)} of {len(rows)} rows.", strong=True))
        sec.blocks.append(Bullets([Cell(
            f"{r['line']} failed on {_key(r['level_index'], r['node_depth'])}: "
            f"{_QUANTITY.get(r['line'], r['line'])} {_num(r['observed'])} "
            f"{_NEGATE.get(r['op'], 'fails ' + r['op'])} {_thr(r['threshold'])}", FAIL)
            for r in failing]))
    expected = 0 if ok else 1
    if manifest.get("exit_code") != expected:
        sec.blocks.append(Para(f"WARNING: the manifest says exit_code "
                               f"{manifest.get('exit_code')!r} but the assertion results "
                               f"call for {expected}.", strong=True))
    if any(r["line"] == "B" for r in failing):
        sec.blocks.append(Para(
            "B failures on small or sparse boards are an expected finding (SPEC §8): fog "
            "regions need a 4-connected eligible component; the generator is never bent "
            "to make a row pass."))
    e_warn = ", ".join(_key(r["level_index"], r["node_depth"]) for r in results
                       if not r["hard"] and r["passed"] is False)
    drift = ", ".join(_key(r["level_index"], r["node_depth"])
                      for r in rows if r["mine_drift_warning"])
    advisory = ([f"E (monotone in depth) warns on {e_warn}"] if e_warn else []) + (
        [f"mine drift p50 above {MINE_DRIFT_WARN} on {drift}"] if drift else [])
    sec.blocks.append(Para("Advisory (never changes the exit code): "
                           + ("; ".join(advisory) if advisory else "none") + "."))
    sec.blocks.append(Para("Marks in the tables: FAIL / bold = a hard line fails; warn / "
                           "italic = advisory warning; n/a = the line does not apply."))
    return ok, sec


def _assertions(results: list[dict], rows: list[dict]) -> Section:
    sec = Section("assertions", "Assertions (SPEC §8)")
    summary = []
    for ln in LINES:
        mine = [r for r in results if r["line"] == ln.name]
        n_pass = sum(r["passed"] is True for r in mine)
        n_fail = sum(r["passed"] is False for r in mine)
        n_na = sum(not r["applies"] for r in mine)
        summary.append([Cell(ln.name), Cell("hard" if ln.hard else "advisory"),
                        Cell(f"{_QUANTITY[ln.name]} {ln.op} {_thr(ln.threshold)}"),
                        Cell(str(n_pass)),
                        Cell(str(n_fail), (FAIL if ln.hard else WARN) if n_fail else None),
                        Cell(str(n_na)), Cell(ln.meaning)])
    sec.blocks.append(Table(["line", "kind", "requirement", "rows passed",
                             "rows failed", "rows n/a", "meaning"], summary))
    by_key = {(r["line"], r["level_index"], r["node_depth"]): r for r in results}
    matrix = []
    for row in rows:
        lv, dp = row["level_index"], row["node_depth"]
        cells = [Cell(str(lv)), Cell(str(dp))]
        for ln in LINES:  # status + observed value, the same reading as the verdict
            r = by_key.get((ln.name, lv, dp))
            if r is None or not r["applies"]:
                cells.append(Cell("n/a", NA))
            elif r["passed"]:
                cells.append(Cell("pass" if ln.name == "E" else f"pass {_num(r['observed'])}"))
            elif ln.hard:
                cells.append(Cell(f"FAIL {_num(r['observed'])}", FAIL))
            else:
                cells.append(Cell("warn", WARN))
        matrix.append(cells)
    sec.blocks.append(Para("Per row: status and observed value of each line."))
    sec.blocks.append(Table(["L", "D"] + [ln.name for ln in LINES], matrix))
    return sec


_C_COLUMNS = ["inferability_p10", "inferability_p50", "inferability_p90",
              "inferability_core_p10", "inferability_core_p50", "inferability_core_p90",
              "delta_budget_fog_p50", "delta_budget_fog_p90",
              "fog_burden_ratio_p50", "fog_burden_ratio_p90"]


def _report_c(rows: list[dict]) -> Section:
    sec = Section("report-c", "Report C: inferability and fog burden per row")
    out = []
    for row in rows:
        target = row["inferability_target"]
        cells = [Cell(str(row["level_index"])), Cell(str(row["node_depth"])),
                 Cell(f"{row['width']}x{row['height']}"), Cell(_num(row["mine_density"])),
                 Cell(_num(target))]
        for col in _C_COLUMNS:
            v = row[col]
            below = col.startswith("inferability") and v is not None and v < target
            cells.append(Cell(_num(v), FAIL if below else None))
        out.append(cells)
    sec.blocks.append(Para("Inferability cells below the row's target are marked: at least "
                           "that share of boards breaks line A."))
    sec.blocks.append(Table(["L", "D", "W x H", "density", "target",
                             "infer p10", "infer p50", "infer p90",
                             "core p10", "core p50", "core p90",
                             "delta_budget_fog p50", "delta_budget_fog p90",
                             "burden ratio p50", "burden ratio p90"], out))
    return sec


def _plots(rows: list[dict], results: list[dict]) -> Section:
    failed = {(r["level_index"], r["node_depth"]) for r in results
              if r["hard"] and r["passed"] is False}
    levels = []
    for level in sorted({r["level_index"] for r in rows}):
        mine = [r for r in rows if r["level_index"] == level]
        levels.append((level, mine, [r["node_depth"] for r in mine
                                     if (level, r["node_depth"]) in failed]))
    return Section("plots", "Plots per level", blocks=[Plots(levels)])


def _diagnostics(rows: list[dict], shortfall: pl.DataFrame) -> list[Section]:
    sec = Section("diagnostics-d", "Diagnostics D")
    cols = ["level_index", "node_depth", "boards", "retry_rate", "mean_attempts", "exit_met",
            "exit_accept_best", "exit_accept_least_bad", "shortfall_mean", "shortfall_max",
            "shortfall_share", "mine_drift_p50"]
    out = []
    for row in rows:
        marks = {"exit_accept_least_bad": FAIL if row["exit_accept_least_bad"] else None,
                 "mine_drift_p50": WARN if row["mine_drift_warning"] else None}
        out.append([Cell(_num(row[c]), marks.get(c)) for c in cols]
                   + [Cell(f"{_num(row['mines_mean'])} / {_num(row['planned_mines'])}")])
    sec.blocks.append(Table(["L", "D", "boards", "retry rate", "mean attempts", "exit met",
                             "exit accept_best", "exit accept_least_bad", "shortfall mean",
                             "shortfall max", "shortfall share", "mine drift p50",
                             "mines mean / planned"], out))
    hist = Section("shortfall", "Shortfall distribution (boards per fog_shortfall)", 3)
    values = sorted(set(shortfall.get_column("fog_shortfall").to_list()))
    counts = {(lv, dp, s): n for lv, dp, s, n in
              shortfall.select(ROW_KEY + ["fog_shortfall", "boards"]).iter_rows()}
    keys = sorted({(lv, dp) for lv, dp, _ in counts})
    hist.blocks.append(Table(["L", "D"] + [f"shortfall {s}" for s in values],
                             [[Cell(str(lv)), Cell(str(dp))]
                              + [Cell(_num(counts.get((lv, dp, s), 0))) for s in values]
                              for lv, dp in keys]))
    drift = Section("mine-drift", f"Mine drift (advisory above {MINE_DRIFT_WARN})", 3)
    warned = [r for r in rows if r["mine_drift_warning"]]
    if warned:
        drift.blocks.append(Bullets([Cell(
            f"{_key(r['level_index'], r['node_depth'])}: mine drift p50 "
            f"{_num(r['mine_drift_p50'])} > {MINE_DRIFT_WARN}: the remove-only rule is "
            f"eating the row's density (planned {_num(r['planned_mines'])} mines, "
            f"{_num(r['mines_mean'])} placed on average).", WARN) for r in warned]))
    else:
        drift.blocks.append(Para(f"No row has mine drift p50 above {MINE_DRIFT_WARN}."))
    return [sec, hist, drift]


def _e_section(rows: list[dict]) -> Section:
    sec = Section("advisory-e", "E: monotone in depth (advisory)")
    warned = [r for r in rows if r.get("e_monotone_ok") == 0]
    if warned:
        sec.blocks.append(Bullets([Cell(
            f"{_key(r['level_index'], r['node_depth'])}: a monotone_in_depth field drops "
            f"from the previous depth: {r.get('e_detail') or '(no detail)'}", WARN)
            for r in warned]))
    else:
        sec.blocks.append(Para("E holds on every row where it applies."))
    n_na = sum(r.get("e_monotone_ok") is None for r in rows)
    if n_na:
        sec.blocks.append(Para(f"E does not apply on {n_na} row(s): their level marks no "
                               "field monotone_in_depth."))
    return sec


def _b1_section(b1: pl.DataFrame) -> Section:
    sec = Section("b1", "B1 clause ③ reconciliation (checkpoint B1-CP, advisory)")
    sec.blocks.append(Para("P(mine) = |M| / (|M| + (1 - p10 inferability) * |S|); margin = "
                           "left / right, passes iff > 1; not evaluated when "
                           "(1 - p10) * |S| < 1 (the information leg takes over)."))

    def mark(row: dict, col: str):  # advisory: a failed margin warns, never fails
        if col != "passed":
            return None
        return NA if row.get("evaluated") is False else WARN if row[col] is False else None

    sec.blocks.append(Table(list(b1.columns), [[Cell(_num(v), mark(row, c)) for c, v in row.items()]
                                               for row in b1.iter_rows(named=True)]))
    return sec


def _facts(manifest: dict) -> list[Section]:
    sec = Section("run-facts", "Run facts")
    keys = [("run id", "run_id"), ("created (UTC)", "created_utc"),
            ("code version", "code_version"), ("git commit", "git_commit"),
            ("table root", "table_root"), ("table hash", "table_hash"),
            ("N (boards per row)", "n"), ("sigma formula", "sigma_formula"),
            ("metric_version", "metric_version"), ("generator_version", "generator_version"),
            ("scheduler", "scheduler"), ("workers", "workers"),
            ("seeds per task", "seeds_per_task"), ("wall time (s)", "wall_s"),
            ("exit code", "exit_code"), ("records sha256", "records_sha256")]
    sec.blocks.append(Table(["fact", "value"],
                            [[Cell(label), Cell(_fact(manifest, k))] for label, k in keys]))
    pk = Section("packages", "Package versions", 3)
    packages = manifest.get("packages") or {}
    pk.blocks.append(Table(["package", "version"], [[Cell(str(k)), Cell(str(v))]
                                                   for k, v in sorted(packages.items())]))
    return [sec, pk]


def _document(manifest, aggregates, results, shortfall, b1):
    """-> (heading without verdict, passed, sections): the one model both renderings print."""
    rows = aggregates.sort(ROW_KEY).to_dicts()
    ok, verdict = _verdict(manifest, rows, results)
    title = f"minegen audit {manifest.get('run_id', '(no run id)')}"
    sections = [verdict, _assertions(results, rows), _report_c(rows), _plots(rows, results),
                *_diagnostics(rows, shortfall), _e_section(rows)]
    if b1 is not None:
        sections.append(_b1_section(b1))
    return title, ok, sections + _facts(manifest)


# ----------------------------------------------------------------------------- Markdown

_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")  # CommonMark raw HTML starts like this


def _md(s: str, in_table: bool = False) -> str:
    s = s.replace("\\", "\\\\").replace("\r", " ").replace("\n", " ")
    if in_table:
        s = s.replace("|", "\\|")
    return _MD_TAG.sub(r"\\<", s)  # only a '<' that could open raw HTML; '0.0 < 0.95' stays


def _md_cell(c: Cell) -> str:
    t = _md(c.text, in_table=True)
    if not t or c.mark not in (FAIL, WARN):
        return t
    return f"**{t}**" if c.mark == FAIL else f"*{t}*"


def md_table(t: Table) -> list[str]:
    """A GitHub-style Markdown table."""
    out = ["| " + " | ".join(_md(h, True) for h in t.headers) + " |",
           "|" + "|".join("---" for _ in t.headers) + "|"]
    return out + ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in t.rows]


def md_sections(sections, extra=None) -> list[str]:
    """Markdown of sections of Para / Bullets / Table blocks; ``extra(block)`` returns the
    lines of any other block kind. Shared by the audit, diff and sweep reports."""
    out = []
    for sec in sections:
        out += ["#" * sec.depth + " " + _md(sec.title), ""]
        for b in sec.blocks:
            if isinstance(b, Para):
                out += [f"**{_md(b.text)}**" if b.strong else _md(b.text), ""]
            elif isinstance(b, Bullets):
                out += [f"- {_md_cell(c)}" for c in b.items] + [""]
            elif isinstance(b, Table):
                out += md_table(b) + [""]
            elif extra is not None:
                out += extra(b)
    return out


def markdown(manifest: dict, aggregates: pl.DataFrame, results: list[dict],
             shortfall: pl.DataFrame, b1: pl.DataFrame | None = None) -> str:
    """report.md: GitHub-style Markdown, numbers with 3 decimals (see module doc)."""
    title, ok, sections = _document(manifest, aggregates, results, shortfall, b1)
    out = [f"# {_md(title)}: {'PASS' if ok else 'FAIL'}", ""]
    out += md_sections(sections, lambda b: [
        "Per-level plots (inferability, fog burden, retry rate) are in report.html.", ""]
        if isinstance(b, Plots) else [])
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------- HTML

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5rem auto;
max-width:78rem;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.5rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
.badge{padding:.1rem .6rem;border-radius:.3rem;color:#fff}.badge.pass{background:#2e7d32}
.badge.fail{background:#c62828}
table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.2rem .45rem;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.fail{background:#ffcdd2;font-weight:600}.warn{background:#ffe9b3}.na{color:#888}
li.fail,li.warn{padding:.1rem .3rem;list-style-position:inside}
.legend span{display:inline-block;padding:.1rem .5rem;margin-right:.5rem;border:1px solid #ccc}
.wide{overflow-x:auto}.plots{display:flex;flex-wrap:wrap;gap:1rem}figure{margin:0}
figure svg{max-width:100%;height:auto}figcaption{font-size:.8rem;color:#555}
"""
_NUMERIC = re.compile(r"^(?:pass |FAIL )?-?[\d.]+(?: / [\d.]+)?$")


def _h(s) -> str:
    return _html.escape(str(s), quote=True)


def _html_cell(c: Cell, tag: str = "td") -> str:
    """Marks are our constants (fail / warn / na), never data: safe as class names."""
    classes = [k for k in (c.mark, "num" if _NUMERIC.match(c.text) else None) if k]
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<{tag}{cls}>{_h(c.text)}</{tag}>"


def _figures(level: int, rows: list[dict], failing: list[int]) -> str:
    parts = [f"<h3>Level {_h(level)}</h3>", '<div class="plots">']
    for kind, svg, caption in plots.level_figures(level, rows, failing):
        parts.append(f'<figure id="plot-{kind}-L{_h(level)}">{svg}'
                     f"<figcaption>{_h(caption)}</figcaption></figure>")
    return "\n".join(parts + ["</div>"])


def html_head(title: str, css: str = _CSS) -> list[str]:
    """The shared page head (self-contained: inline CSS only) up to and including <body>."""
    return ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_h(title)}</title>", f"<style>{css}</style>", "</head>", "<body>"]


def html_sections(sections, extra=None) -> list[str]:
    """HTML of sections of Para / Bullets / Table blocks; ``extra(block)`` returns the HTML
    lines of any other block kind (plots). Shared by the audit, diff and sweep pages."""
    out = []
    for sec in sections:
        out.append(f'<h{sec.depth} id="{sec.anchor}">{_h(sec.title)}</h{sec.depth}>')
        for b in sec.blocks:
            if isinstance(b, Para):
                out.append(f"<p><strong>{_h(b.text)}</strong></p>" if b.strong
                           else f"<p>{_h(b.text)}</p>")
            elif isinstance(b, Bullets):
                out.append("<ul>" + "".join(_html_cell(c, "li") for c in b.items) + "</ul>")
            elif isinstance(b, Table):
                head = "".join(f"<th>{_h(x)}</th>" for x in b.headers)
                body = "".join("<tr>" + "".join(_html_cell(c) for c in r) + "</tr>"
                               for r in b.rows)
                out.append(f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
                           f"<tbody>{body}</tbody></table></div>")
            elif extra is not None:
                out += extra(b)
    return out


def html(manifest: dict, aggregates: pl.DataFrame, results: list[dict],
         shortfall: pl.DataFrame, b1: pl.DataFrame | None = None) -> str:
    """report.html: one self-contained page (inline CSS and SVG, no external reference),
    the Markdown's content plus per-level plots with ids ``plot-{inferability,burden,
    retry}-L<level>``; failing cells red, advisory cells amber."""
    title, ok, sections = _document(manifest, aggregates, results, shortfall, b1)
    verdict = "PASS" if ok else "FAIL"
    out = html_head(f"{title}: {verdict}")
    out += [f'<h1>{_h(title)} <span class="badge {verdict.lower()}">'
            f"{verdict}</span></h1>",
            '<p class="legend">Legend: <span class="fail">fails a hard line</span>'
            '<span class="warn">advisory warning</span><span class="na">n/a: does not '
            "apply</span></p>",
            "<nav><p>" + " · ".join(f'<a href="#{s.anchor}">{_h(s.title)}</a>'
                                     for s in sections if s.depth == 2) + "</p></nav>"]
    out += html_sections(sections, lambda b: [_figures(*level) for level in b.levels]
                         if isinstance(b, Plots) else [])
    out += ["</body>", "</html>"]
    return "\n".join(out) + "\n"

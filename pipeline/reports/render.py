"""Print a document (``reports.document``) as GitHub-style Markdown or as one
self-contained HTML page (inline CSS and SVG, nothing external).

Every string that comes from data is escaped by the renderer that prints it (HTML
entities; Markdown backslash escapes of ``\\``, a ``<`` that could open a tag, ``|`` in
tables), so a table value cannot inject markup.
"""

from __future__ import annotations

import html as _html
import os
import re

from . import docsite, glossary
from .document import BETTER, FAIL, WARN, Bullets, Cell, Figure, Figures, Para, Section, Table

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5rem auto;
max-width:78rem;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.5rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
.badge{padding:.1rem .6rem;border-radius:.3rem;color:#fff}.badge.pass{background:#2e7d32}
.badge.fail{background:#c62828}
table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.2rem .45rem;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.fail{background:#ffcdd2;font-weight:600}.warn{background:#ffe9b3}.na{color:#888}
.better{background:#c8e6c9}.changed{background:#e3f0fb}
code{font-size:.85em;background:#f3f3f3;padding:0 .2rem;overflow-wrap:anywhere}
li.fail,li.warn,li.better,li.changed{padding:.1rem .3rem;list-style-position:inside}
.legend span{display:inline-block;padding:.1rem .5rem;margin-right:.5rem;border:1px solid #ccc}
.wide{overflow-x:auto}.plots{display:flex;flex-wrap:wrap;gap:1rem}
figure{margin:0;min-width:0;max-width:100%}pre{overflow-x:auto;max-width:100%}
figure svg{max-width:100%;height:auto}figcaption{font-size:.8rem;color:#555;max-width:35rem}
.banner{background:#c62828;color:#fff;font-weight:700;font-size:1.1rem;padding:.8rem 1rem;
border-radius:.3rem}
abbr[title]{text-decoration:underline dotted #888;cursor:help}details>summary{cursor:pointer}summary>h2{display:inline-block;width:calc(100% - 1.5rem);
margin-bottom:.4rem}th.sortable{cursor:pointer}th.sortable:hover{background:#e6e6e6}
summary>h3{display:inline-block;margin:.5rem 0 .3rem}details details{margin-left:.6rem}
.filter{margin:.4rem 0}.filter input{font:inherit;width:18rem;max-width:100%}
"""
def h(s) -> str:
    return _html.escape(str(s), quote=True)


def doc_link(rel: str, site: str | None = None, section: str | None = None) -> str:
    """A repository doc (``docs/glossary.md``) as a link to its page in the output folder
    (``docsite``: ``<out>/docs/glossary.html``), relative to the page, whose folder reaches
    the output folder by ``site``; with no ``site`` (a page outside an output folder), its
    name in the repository."""
    if site is None:
        return f"{h(rel)} (in the repository)"
    return f'<a href="{h(docsite.href(rel, section, site))}">{h(rel)}</a>'


def legend(rules_doc: str = "docs/design.md", site: str | None = None) -> str:
    """The audit page's legend line; ``rules_doc`` is the generator's rules document,
    ``site`` the output folder seen from the page (``doc_link``)."""
    return ('<p class="legend">Legend: <span class="fail">fails a hard line</span>'
            '<span class="warn">advisory warning</span><span class="na">n/a: does not '
            f"apply</span> · every term and code: {doc_link('docs/glossary.md', site)}; the "
            f"rules: {doc_link(rules_doc, site)}</p>")


LEGEND = legend()

# ----------------------------------------------------------------------------- Markdown

_MD_TAG = re.compile(r"<(?=[A-Za-z/!?])")  # CommonMark raw HTML starts like this


_PAGE_LINK = re.compile(r"\[([^\[\]]+)\]\(#[^()\s]*\)")  # a link to the HTML page's anchor


def md_escape(s: str, in_table: bool = False) -> str:
    """Markdown-safe text; a link to an anchor of the HTML page keeps only its text (the
    Markdown has no such anchors)."""
    s = str(s)
    if "](#" in s:  # (each pattern needs its first characters: most cells have none)
        s = _PAGE_LINK.sub(r"\1", s)
    s = s.replace("\\", "\\\\").replace("\r", " ").replace("\n", " ")
    if in_table:
        s = s.replace("|", "\\|")
    # only a '<' that could open raw HTML; '0.0 < 0.95' stays
    return _MD_TAG.sub(r"\\<", s) if "<" in s else s


def _md_cell(c: Cell) -> str:
    t = md_escape(c.text, in_table=True)
    if not t or c.mark not in (FAIL, WARN):
        return t
    return f"**{t}**" if c.mark == FAIL else f"*{t}*"


def md_table(t: Table) -> list[str]:
    out = ["| " + " | ".join(md_escape(h, True) for h in t.headers) + " |",
           "|" + "|".join("---" for _ in t.headers) + "|"]
    return out + ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in t.rows]


def md_sections(sections: list[Section], page: str = "the HTML page") -> list[str]:
    out = []
    for sec in sections:
        out += ["#" * sec.depth + " " + md_escape(sec.title), ""]
        for b in sec.blocks:
            if isinstance(b, Para):
                out += [f"**{md_escape(b.text)}**" if b.strong else md_escape(b.text), ""]
            elif isinstance(b, Bullets):
                out += [f"- {_md_cell(c)}" for c in b.items] + [""]
            elif isinstance(b, Table):
                out += md_table(b) + [""]
            elif isinstance(b, Figure):
                out += [f"Chart in {page}: {md_escape(b.caption)}", ""]
            elif isinstance(b, Figures):
                out += [f"Charts in {page}"
                        + (f" ({md_escape(b.heading)})" if b.heading else "") + ": "
                        + "; ".join(md_escape(f.caption) for f in b.figures), ""]
    return out


def markdown(title: str, sections: list[Section], banner: str | None = None,
             page: str = "the HTML page") -> str:
    out = [f"> **WARNING: {md_escape(banner)}**", ""] if banner else []
    out += [f"# {md_escape(title)}", ""] + md_sections(sections, page)
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------------- HTML

_NUMERIC = re.compile(r"^(?:pass |FAIL )?-?[\d.]+(?: / [\d.]+|\u00a0±\u00a0[\d.]+)?$")


_CODE = re.compile(r"`([^`<>]+)`")
# relative or absolute paths only: no scheme (no javascript:, no network)
_LINK = re.compile(r"\[([^\[\]]+)\]\(((?![A-Za-z][\w+.-]*:)[^()\s]+)\)")


def path_link(text: str, path: str, here: str | None) -> str:
    """``text`` linked to the file ``path`` relative to ``here`` (the folder the page is
    written to), as ``inline`` renders links; with no ``here`` (Markdown on stdout), the
    text and the path."""
    return f"[{text}]({os.path.relpath(path, here)})" if here else f"{text} ({path})"


def inline(s) -> str:
    """Escaped text with Markdown's inline code (a command in backticks) as ``<code>`` and
    Markdown links ``[text](path)`` to files as links (a path, never a URL scheme)."""
    s = h(s)
    if "`" in s:  # (each pattern needs its first characters: most texts have none)
        s = _CODE.sub(r"<code>\1</code>", s)
    return _LINK.sub(r'<a href="\2">\1</a>', s) if "](" in s else s


def _html_cell(c: Cell, tag: str = "td") -> str:
    """Marks are our constants (``document``: fail / warn / na / better / changed), never
    data: safe as classes."""
    classes = [k for k in (c.mark, "num" if _NUMERIC.match(c.text) else None) if k]
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<{tag}{cls}>{inline(c.text)}</{tag}>"


def _figure(f: Figure) -> str:
    return (f'<figure id="{h(f.anchor)}">{f.svg}<figcaption>{inline(f.caption)}</figcaption>'
            "</figure>")


def html_sections(sections: list[Section], words: dict[str, str] | None = None,
                  opened: frozenset[str] | None = None) -> list[str]:
    """The sections; each top-level one is a ``<details>`` a reader may fold (open);
    ``words`` (term -> definition): hover text on each block's first use of a term.
    ``opened`` (a set of top-level anchors): fold mode, every top-level section not in
    it is folded, and every depth-3 section is a ``<details>`` of its own, folded."""
    out = []
    folded = False  # a top-level <details> is open in ``out``
    inner = False  # a depth-3 <details> is open in ``out`` (fold mode)

    def add(text: str) -> None:
        out.append(glossary.hover(text, words, h) if words and sec.anchor != "words"
                   else text)

    for sec in sections:
        heading = f'<h{sec.depth} id="{h(sec.anchor)}">{h(sec.title)}</h{sec.depth}>'
        if sec.depth == 2:
            is_open = opened is None or sec.anchor in opened
            out.append(("</details>" if inner else "") + ("</details>" if folded else "")
                       + f"<details{' open' if is_open else ''}><summary>{heading}"
                       "</summary>")
            folded, inner = True, False
        elif opened is not None and sec.depth == 3:
            out.append(("</details>" if inner else "")
                       + f"<details><summary>{heading}</summary>")
            inner = True
        else:
            out.append(heading)
        for b in sec.blocks:
            if isinstance(b, Para):
                add(f"<p><strong>{inline(b.text)}</strong></p>" if b.strong
                    else f"<p>{inline(b.text)}</p>")
            elif isinstance(b, Bullets):
                add("<ul>" + "".join(_html_cell(c, "li") for c in b.items) + "</ul>")
            elif isinstance(b, Table):
                head = "".join(f"<th>{h(x)}</th>" for x in b.headers)
                body = "".join("<tr>" + "".join(_html_cell(c) for c in r) + "</tr>"
                               for r in b.rows)
                add(f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
                    f"<tbody>{body}</tbody></table></div>")
            elif isinstance(b, Figure):
                out.append(_figure(b))
            elif isinstance(b, Figures):
                out.append((f"<h{sec.depth + 1}>{h(b.heading)}</h{sec.depth + 1}>"
                            if b.heading else "") + '<div class="plots">'
                           + "".join(_figure(f) for f in b.figures) + "</div>")
    return out + (["</details>"] if inner else []) + (["</details>"] if folded else [])


# Click a column heading to sort a table by it (numbers as numbers; again: reversed).
# Inline and self-contained: nothing is fetched.
SORT_SCRIPT = """<script>
document.querySelectorAll("table").forEach(function (t) {
  var body = t.tBodies[0];
  if (!t.tHead || !body || body.rows.length < 3) return;
  Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, i) {
    th.title = "sort by this column";
    th.className += " sortable";
    th.addEventListener("click", function () {
      var dir = th.getAttribute("data-dir") === "asc" ? -1 : 1;
      th.setAttribute("data-dir", dir > 0 ? "asc" : "desc");
      var key = function (r) {
        var s = r.cells[i] ? r.cells[i].textContent : "";
        var n = parseFloat(s.replace(/^[^-0-9.]+/, ""));
        return isNaN(n) ? s : n;
      };
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (typeof x !== typeof y) return (typeof x === "number" ? -1 : 1) * dir;
        return (x < y ? -1 : x > y ? 1 : 0) * dir;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
</script>"""


# Fold mode (a page that opens on its first screen, the rest folded): a link to an anchor
# opens every <details> around its target (and the target's own section) before the
# browser scrolls there; the filter box hides the table rows whose text lacks what is typed
# (every table of the page) and opens the sections holding a row that matches. Inline and
# self-contained, as SORT_SCRIPT.
FOLD_SCRIPT = """<script>
(function () {
  function reveal(id) {
    var el = id && document.getElementById(id);
    if (!el) return false;
    for (var d = el.parentElement; d; d = d.parentElement)
      if (d.tagName === "DETAILS") d.open = true;
    return true;
  }
  function target(href) {
    try { return decodeURIComponent(href.slice(1)); } catch (e) { return ""; }
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest('a[href^="#"]') : null;
    if (a) reveal(target(a.getAttribute("href")));
  });
  window.addEventListener("hashchange", function () {
    if (reveal(target(location.hash))) document.getElementById(target(location.hash))
      .scrollIntoView();
  });
  if (location.hash && reveal(target(location.hash)))
    document.getElementById(target(location.hash)).scrollIntoView();
  function all(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  var openAll = document.getElementById("open-all"), foldAll = document.getElementById("fold-all");
  if (openAll) openAll.addEventListener("click", function () { all(true); });
  if (foldAll) foldAll.addEventListener("click", function () { all(false); });
  var box = document.getElementById("filter"), said = document.getElementById("filter-count");
  if (!box) return;
  box.addEventListener("input", function () {
    var q = box.value.trim().toLowerCase(), shown = 0, rows = 0;
    document.querySelectorAll("table").forEach(function (t) {
      if (!t.tBodies[0]) return;
      var hit = false;
      Array.prototype.forEach.call(t.tBodies[0].rows, function (r) {
        var keep = !q || r.textContent.toLowerCase().indexOf(q) >= 0;
        r.style.display = keep ? "" : "none";
        rows += 1;
        if (keep) { shown += 1; hit = true; }
      });
      if (q && hit) for (var d = t.parentElement; d; d = d.parentElement)
        if (d.tagName === "DETAILS") d.open = true;
    });
    said.textContent = q ? shown + " of " + rows + " table rows match" : "";
  });
})();
</script>"""

FILTER_BOX = ('<p class="filter"><label>Filter every table: <input id="filter" type="search" '
              'placeholder="a row, a word of it, a line"></label> '
              '<span id="filter-count" class="na"></span> · <button type="button" '
              'id="open-all">open every section</button> <button type="button" '
              'id="fold-all">fold every section</button></p>')


def html(title: str, sections: list[Section], *, badge: tuple[str, str] | None = None,
         legend: str = LEGEND, banner: str | None = None, css: str = CSS,
         jargon: tuple[tuple[str, str], ...] = (),
         opened: frozenset[str] | None = None) -> str:
    """One self-contained page: title (with a pass/fail badge), legend, navigation of the
    top-level sections, then the sections, and the page's words defined (``glossary``).
    ``opened`` (fold mode, ``html_sections``): only those top-level sections are open,
    with a filter box over every table and links that open what they point to."""
    words = glossary.used(sections, jargon)
    if words:
        sections = [*sections, glossary.section(words)]
    badge_html = f' <span class="badge {h(badge[1])}">{h(badge[0])}</span>' if badge else ""
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{h(title)}{': ' + h(badge[0]) if badge else ''}</title>",
           f"<style>{css}</style>", "</head>", "<body>"]
    if banner:
        out.append(f'<p class="banner" id="cross-version">WARNING: {h(banner)}</p>')
    out += [f"<h1>{h(title)}{badge_html}</h1>", legend,
            "<nav><p>" + " · ".join(f'<a href="#{h(s.anchor)}">{h(s.title)}</a>'
                                     for s in sections if s.depth == 2) + "</p>"
            + (FILTER_BOX if opened is not None else "")
            + '<p class="na">Click a section\'s heading to '
            + ("open or fold it (a link opens what it points to)" if opened is not None
               else "fold it") + ", a column's heading to sort its table.</p></nav>"]
    out += html_sections(sections, words, opened)
    out += [SORT_SCRIPT, *([FOLD_SCRIPT] if opened is not None else []), "</body>", "</html>"]
    return "\n".join(out) + "\n"


__all__ = ["BETTER", "CSS", "LEGEND", "h", "html", "legend", "html_sections", "markdown", "md_escape",
           "md_sections", "md_table"]

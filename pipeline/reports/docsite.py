"""The repository's docs as pages of an output folder, so a published copy keeps its links.

Every page a command writes under ``<out>`` cites the repository's own docs through ``href``
(or ``link`` inside a document's text, ``render.doc_link`` in HTML): a path relative to the
page, ``<site>/docs/<name>.html#<anchor>``, where ``site`` is the output folder relative to
the page's folder ("." for ``<out>/index.html``, "../.." for a tune page). ``write(out)``
renders the shipped ``docs/*.md`` once per output folder into ``<out>/docs/<name>.html``
(``jobs.history.refresh`` calls it after every job), so the folder can be copied to a static
web server or another machine and every link still opens.

Contracts:
- Anchors are GitHub's heading slugs (``slug``): a section linked from a page is the one the
  repository's Markdown links already use (``design.md#the-audit-lines``).
- A link between two docs becomes a link between their pages; a link to any other file of
  the repository (README.md, tables/) becomes its text and the path, "in the repository"
  (nothing outside ``<out>`` is linked). A design section code in a doc's text ("05 §16")
  links the doc's table (a section "Codes used in comments") that names the repository's
  section for it.
- A page is rewritten only when its source or the set of docs changed (a digest in the
  page); each write is the atomic one (``boardcore.files``), inside ``<out>/docs/`` only.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import html as _html
import os
import posixpath
import re
import threading
from collections.abc import Iterator
from pathlib import Path

from boardcore import assets, files

FOLDER = "docs"  # <out>/docs/: the rendered pages
RENDERING = "2"  # bump when the page template changes: every folder's pages are redone
# the design's section codes the docs cite ("05 §15.2"), each linked to the table that maps
# them to the repository's own sections (whichever doc has the section CODES)
CODE = re.compile(r"\b05 §\d+(?:\.\d+)?(?:(?:, | – |–)§\d+(?:\.\d+)?)*")
CODES = "codes-used-in-comments"
_CODES_HEADING = re.compile(r"^#{2,6} +Codes used in comments *$", re.M)
_DIGEST = re.compile(r'<meta name="minegen-docs" content="([0-9a-f]{64})">')

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5rem auto;
max-width:52rem;padding:0 1rem;color:#222;line-height:1.5}
h1{font-size:1.6rem}h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.88rem;display:block;overflow-x:auto}
th,td{border:1px solid #ccc;padding:.2rem .45rem;vertical-align:top}th{background:#f3f3f3}
code{font-size:.88em;background:#f3f3f3;padding:0 .2rem;overflow-wrap:anywhere}
pre{background:#f6f6f6;padding:.6rem;overflow-x:auto;max-width:100%}pre code{background:none}
nav{font-size:.85rem;color:#555;border-bottom:1px solid #ddd;padding-bottom:.4rem}
:target{background:#fff3c4}
"""


def stem(doc: str) -> str:
    """``docs/glossary.md``, ``glossary.md`` or ``glossary`` -> ``glossary``."""
    name = posixpath.basename(str(doc))
    return name[:-3] if name.endswith(".md") else name


def slug(text: str) -> str:
    """GitHub's anchor of a heading: lower case, every character that is not a letter, a
    digit, a space, '-' or '_' dropped, spaces as '-'. A slug is its own slug."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def href(doc: str, section: str | None = None, site: str = ".") -> str:
    """The page of ``doc`` (at ``section``: a heading or its slug), relative to a page whose
    folder reaches the output folder by ``site``."""
    path = posixpath.normpath(posixpath.join(site or ".", FOLDER, f"{stem(doc)}.html"))
    return path + (f"#{slug(section)}" if section else "")


def link(text: str, doc: str, section: str | None = None, site: str | None = None) -> str:
    """``text`` linked to ``doc`` (and ``section``) as a document's text writes a link
    (``render.inline``: ``[text](path)``); with no ``site`` (a page outside an output
    folder, Markdown on stdout) the text and where it is in the repository."""
    if site is None:
        where = f"docs/{stem(doc)}.md" + (f", “{section}”" if section else "")
        return where if text in (f"docs/{stem(doc)}.md", where) else f"{text} ({where})"
    return f"[{text}]({href(doc, section, site)})"


# ------------------------------------------------------------------------------- rendering

def _sources() -> dict[str, Path]:
    """name -> the shipped Markdown file (none when the install carries no docs)."""
    folder = assets.path("docs")
    return {p.stem: p for p in sorted(folder.glob("*.md"))} if folder.is_dir() else {}


@functools.cache
def _parser():
    from markdown_it import MarkdownIt  # only when a page is (re)rendered

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _text(inline) -> str:
    return "".join(c.content for c in inline.children or ()
                   if c.type in ("text", "code_inline"))


def _relink(tok, names: set[str]) -> None:
    """A link of a doc: to another doc's page, kept inside the page, or (any other file of
    the repository) its text and path."""
    target = tok.attrGet("href") or ""
    if target.startswith("#") or re.match(r"[A-Za-z][\w+.-]*:", target):
        return
    path, _, frag = target.partition("#")
    repo = posixpath.normpath(posixpath.join("docs", path))
    if repo.startswith("docs/") and repo.endswith(".md") and stem(repo) in names:
        tok.attrSet("href", f"{stem(repo)}.html" + (f"#{frag}" if frag else ""))
        return
    tok.meta["unlinked"] = repo


def _coded(kids: list, href: str) -> list:
    """The inline tokens with each design code of their plain text (outside links) as a
    link to ``href``."""
    from markdown_it.token import Token

    out, depth = [], 0
    for c in kids:
        depth += (c.type == "link_open") - (c.type == "link_close")
        if c.type != "text" or depth or not CODE.search(c.content):
            out.append(c)
            continue
        at = 0
        for m in CODE.finditer(c.content):
            out += [Token("text", "", 0, content=c.content[at:m.start()]),
                    Token("link_open", "a", 1, attrs={"href": href}),
                    Token("text", "", 0, content=m.group(0)),
                    Token("link_close", "a", -1)]
            at = m.end()
        out.append(Token("text", "", 0, content=c.content[at:]))
    return out


def codes_doc(texts: dict[str, str]) -> str | None:
    """The doc whose section CODES maps the design's codes: the first, by name, whose
    section of that heading (up to the next heading of its level or above) cites one."""
    for n in sorted(texts):
        m = _CODES_HEADING.search(texts[n])
        if m:
            level = len(m.group(0)) - len(m.group(0).lstrip("#"))
            end = re.compile(rf"^#{{1,{level}}} ", re.M).search(texts[n], m.end())
            if CODE.search(texts[n][m.end():end.start() if end else None]):
                return n
    return None


def page(name: str, text: str, names: set[str], digest: str,
         codes_in: str | None = None) -> str:
    """One doc as a page: heading anchors (``slug``, numbered from -1 on repeats as GitHub
    does), links between docs relative, the other docs listed at the top."""
    md = _parser()
    tokens = md.parse(text)
    seen: dict[str, int] = {}
    title, section = name, ""
    codes = (f"#{CODES}" if name == codes_in else f"{codes_in}.html#{CODES}") \
        if codes_in in names else None
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            words = _text(tokens[i + 1])
            base = slug(words)
            n = seen.get(base, 0)
            seen[base] = n + 1
            section = base if n == 0 else f"{base}-{n}"
            tok.attrSet("id", section)
            if tok.tag == "h1" and title == name:
                title = words
        elif tok.type == "inline":
            kids = tok.children or []
            for j, c in enumerate(kids):
                if c.type == "link_open":
                    _relink(c, names)
                    if "unlinked" in c.meta:  # the text stays, the path follows it
                        close = next(k for k in kids[j:] if k.type == "link_close")
                        c.type, c.tag, c.attrs = "text", "", {}
                        close.type, close.tag, close.nesting = "text", "", 0
                        close.content = f" ({c.meta['unlinked']}, in the repository)"
                        c.nesting = 0
            if codes and not (name == codes_in and section == CODES):
                tok.children = _coded(kids, codes)
    body = md.renderer.render(tokens, md.options, {})
    nav = " · ".join(f'<a href="{_html.escape(n)}.html">{_html.escape(n)}</a>'
                     for n in sorted(names))
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="minegen-docs" content="{digest}">',
        f"<title>{_html.escape(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
        f"<nav><p>The repository's <code>docs/{_html.escape(name)}.md</code>, as this output "
        f"folder's pages cite it. Every doc: {nav}</p></nav>",
        body, "</body>", "</html>"]) + "\n"


@functools.lru_cache(maxsize=64)
def _rendered(name: str, text: str, names: frozenset[str], digest: str,
              codes_in: str | None) -> bytes:
    """``page`` as bytes, kept for the process: a process that writes several output
    folders (a tune's, a test session's) renders each doc once, not once per folder."""
    return page(name, text, set(names), digest, codes_in).encode("utf-8")


def write(out: str | os.PathLike) -> list[Path]:
    """Render every shipped doc into ``<out>/docs/<name>.html`` where the page is missing
    or was made from other sources; returns the pages written (an OSError is the
    caller's: ``jobs.history.refresh`` says it and goes on)."""
    sources = _sources()
    names = set(sources)
    folder = Path(out) / FOLDER
    written = []
    texts = {name: files.read_text(src, follow=True)  # shipped docs (links in a checkout)
             for name, src in sources.items()}
    codes_in = codes_doc(texts)
    for name, text in texts.items():
        digest = hashlib.sha256("\0".join([RENDERING, *sorted(names), text]).encode()
                                ).hexdigest()
        target = folder / f"{name}.html"
        try:  # a page of ours: a regular file, never through a link, never a FIFO
            with files.opened(target) as f:
                m = _DIGEST.search(f.read(800).decode("utf-8", errors="replace"))
        except (OSError, files.Refused):
            m = None
        if m and m.group(1) == digest:
            continue
        folder.mkdir(parents=True, exist_ok=True)
        data = _rendered(name, text, frozenset(names), digest, codes_in)
        written.append(files.write(target, data))
    return written


@contextlib.contextmanager
def beside(out: str | os.PathLike) -> Iterator[None]:
    """``write(out)`` in a thread while the block runs: an audit into a new folder renders
    the docs while its client waits on the workers' imports (decision 271). Joined when
    the block ends; an OSError is left to the caller's later ``write`` (``jobs.history.
    refresh`` says it), any other error is raised then."""
    failed: list[BaseException] = []

    def render() -> None:
        try:
            write(out)
        except (OSError, files.Refused):
            pass
        except BaseException as e:  # noqa: BLE001 -- raised in the caller's thread
            failed.append(e)

    thread = threading.Thread(target=render, name="docs")
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]

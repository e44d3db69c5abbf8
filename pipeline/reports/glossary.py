"""The words of a page, defined on the page: the codes and terms a page uses, read from the
repository's glossary (docs/glossary.md: ``**term** — definition``), shown as hover text
where they occur and as a "Words on this page" section at its end.

Only codes and jargon are picked: a term with a digit, a capital, an underscore or a symbol,
a term of several words ("within noise", "hard line"), or one of the generator's own words
(``Generator.jargon``: "core", "tier" ..., and its aliases of glossary terms); plain words
(row, board, target) need no definition. A checkout without docs/glossary.md (an installed
copy) gets pages without it.
"""

from __future__ import annotations

import functools
import re

from boardcore import assets, files

from .document import Bullets, Cell, Figure, Figures, Para, Section, Table

GLOSSARY = assets.path("docs", "glossary.md")
_ENTRY = re.compile(r"^\*\*(.+?)\*\*(?: \([^)]*\))? — (.*)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")


def _plain(text: str) -> str:
    text = _LINK.sub(r"\1", text).replace("`", "").replace("*", "")
    return re.sub(r"\s*See [^.]*\.?\s*$", "", text).strip()


@functools.cache
def entries() -> dict[str, str]:
    """term -> its definition in plain text (entries naming several terms, "G1, G2" or
    "p10 / p50 / p90", define each)."""
    if not GLOSSARY.is_file():
        return {}
    out: dict[str, str] = {}
    term, body = None, []
    for line in files.read_text(GLOSSARY, follow=True).splitlines() + [""]:
        m = _ENTRY.match(line)
        if m or not line.strip():
            if term:
                for t in _names(term):
                    out.setdefault(t, _plain(" ".join(body)))
            term, body = (m.group(1), [m.group(2)]) if m else (None, [])
        elif term:
            body.append(line.strip())
    for t, d in out.items():  # "core — see inferability_core": the entry it points to
        m = re.fullmatch(r"see (\S+?)\.?", d)
        if m and m.group(1) in out:
            out[t] = out[m.group(1)]
    return out


def _names(term: str) -> list[str]:
    """The terms one entry defines: "G1, G2", "p10 / p50 / p90", "V1 … V5" (a range); a
    comma inside parentheses separates no terms, and a name's short form in parentheses is
    a term of its own ("level / depth (L, D)": "level", "depth" and "(L, D)")."""
    r = re.fullmatch(r"([A-Z]-?)(\d+) … \1(\d+)", term)
    if r:
        return [f"{r.group(1)}{k}" for k in range(int(r.group(2)), int(r.group(3)) + 1)]
    out = []
    for t in re.split(r"(?:,\s*|\s+/\s+)(?![^()]*\))", term):
        short = re.fullmatch(r"(.+?)\s+(\([^()]*\))", t.strip())
        out += list(short.groups()) if short else [t.strip()]
    return [t for t in out if t and "…" not in t]


def _wanted(term: str) -> bool:
    return len(term) >= 2 and term != "N" and bool(re.search(r"[\d_A-Z\-③§ ]", term))


@functools.lru_cache(maxsize=4096)
def _pattern(term: str, tail: str = "") -> re.Pattern:
    """A term as a whole word; a number ("05", the design's part) only as cited: "05 §16";
    ``tail``: a further condition after it. Compiled once per term (a page asks for each
    term once per block)."""
    return re.compile(r"(?<![\w-])" + re.escape(term) + r"(?![\w-])"
                      + (r"(?= §)" if term.isdigit() else "") + tail)


def _first(term: str, pattern: re.Pattern, text: str) -> re.Match | None:
    """``pattern.search(text)`` for a pattern that opens with a lookbehind and ``term``
    (``_pattern``): tried only where ``term`` occurs (str.find), since a match can start
    nowhere else. The regex engine finds no literal prefix behind a lookbehind and would
    try every position of a long page otherwise; the lookbehind still sees the text
    before the position tried."""
    at = text.find(term)
    while at >= 0:
        m = pattern.match(text, at)
        if m:
            return m
        at = text.find(term, at + 1)
    return None


def _texts(sections: list[Section]) -> str:
    out = []
    for sec in sections:
        out.append(sec.title)
        for b in sec.blocks:
            if isinstance(b, Para):
                out.append(b.text)
            elif isinstance(b, Bullets):
                out += [c.text for c in b.items]
            elif isinstance(b, Table):
                out += b.headers + [c.text for r in b.rows for c in r]
            elif isinstance(b, Figure):
                out.append(b.caption)
            elif isinstance(b, Figures):
                out += [f.caption for f in b.figures]
    return "\n".join(out)


def used(sections: list[Section], jargon: tuple[tuple[str, str], ...] = ()
         ) -> dict[str, str]:
    """The glossary's codes and jargon that occur on the page: {as written: definition};
    ``jargon``: (word as pages write it, glossary term) of the page's generator."""
    text = _texts(sections)
    known = entries()
    found = {}
    for term, definition in sorted(known.items()):
        if _wanted(term) and _first(term, _pattern(term), text):
            found[term] = definition
    for word, term in jargon:
        if term in known and _first(word, _pattern(word), text):
            found[word] = known[term]
    return found


def section(words: dict[str, str]) -> Section:
    sec = Section("words", "Words on this page")
    sec.blocks.append(Para("The codes and terms this page uses, from the project's glossary "
                           "(hover one on the page to read it there)."))
    by_meaning: dict[str, list[str]] = {}  # "p10 / p50 / p90: ..." once, not three times
    for t, d in sorted(words.items(), key=lambda kv: kv[0].lower()):
        by_meaning.setdefault(d, []).append(t)
    sec.blocks.append(Bullets([Cell(f"{' / '.join(ts)}: {d}") for d, ts in
                               by_meaning.items()]))
    return sec


_TAG_AHEAD = r"(?![^<]*>)"  # not inside a tag (an attribute, a tag name)


def hover(html_text: str, words: dict[str, str], escape) -> str:
    """``html_text`` (escaped, with its tags) with the first occurrence of each word outside
    a tag wrapped as ``<abbr title="definition">``."""
    for term in sorted(words, key=len, reverse=True):  # longer terms first: "Q risk" > "Q"
        written = escape(term)
        m = _first(written, _pattern(written, _TAG_AHEAD), html_text)
        if m:  # what ``sub(..., count=1)`` writes
            html_text = (f'{html_text[:m.start()]}<abbr title="{escape(words[term])}">'
                         f"{m.group(0)}</abbr>{html_text[m.end():]}")
    return html_text

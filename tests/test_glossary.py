"""The words of a page defined on the page (``pipeline.reports.glossary``): the entries are
the repository glossary's, a page lists exactly the codes it uses, hover text never lands
inside a tag, and a number is defined only where the design is cited."""

from __future__ import annotations

import html
import re

from pipeline.reports import glossary, render
from pipeline.reports.document import Bullets, Cell, Para, Section, Table


def test_entries_are_the_glossary_s():
    e = glossary.entries()
    text = glossary.GLOSSARY.read_text(encoding="utf-8")
    assert "**Q risk** —" in text and e["Q risk"].startswith("1 − (1 − (1 − p̂)^50)^N")
    assert e["p10"] == e["p50"] == e["p90"]  # one entry names three terms
    assert e["V1"] == e["V5"] and "layout checks" in e["V3"]  # "V1 … V5": a range
    assert e["core"] == e["inferability_core"]  # "see inferability_core" followed
    # "level / depth (L, D)": a comma in parentheses splits no term (no "D)" entry)
    assert "D)" not in e and "depth (L" not in e
    assert e["(L, D)"].startswith("level_index and node_depth")
    sec = Section("s", "Some", blocks=[Para("one row per (L, D) of the table")])
    assert "D)" not in glossary.used([sec]) and "(L, D)" in glossary.used([sec])


def test_a_page_lists_the_codes_it_uses_and_hovers_them():
    sec = Section("s", "Some", blocks=[
        Para("the tool-free p10 is low; Q risk 12 %; 143 of 256 boards; see 05 §16"),
        Bullets([Cell("G-TF fails on a row")])])
    words = glossary.used([sec])
    assert {"p10", "Q risk", "G-TF", "05"} <= set(words)
    assert "143" not in words  # a count, not the exit code
    assert "N" not in words and "row" not in words  # plain words need no definition
    page = render.html("t", [sec])
    assert "Words on this page" in page
    assert f'<abbr title="{html.escape(words["Q risk"])}">Q risk</abbr>' in page
    # never inside a tag: every abbr opens in text, and the page's tags stay whole
    for tag in re.findall(r"<[^<>]*<abbr", page):
        raise AssertionError(f"abbr inside a tag: {tag}")


def _plain_used(sections, jargon=()) -> dict[str, str]:
    """``glossary.used`` read plainly: every term's pattern searched over the whole text."""
    text = glossary._texts(sections)
    known = glossary.entries()
    found = {t: d for t, d in sorted(known.items())
             if glossary._wanted(t) and re.compile(glossary._pattern(t).pattern).search(text)}
    found.update({w: known[t] for w, t in jargon
                  if t in known and re.compile(glossary._pattern(w).pattern).search(text)})
    return found


def _plain_hover(text: str, words: dict[str, str]) -> str:
    """``glossary.hover`` read plainly: one ``re.sub(count=1)`` per term, longest first."""
    for term in sorted(words, key=len, reverse=True):
        title = html.escape(words[term])
        pattern = re.compile(glossary._pattern(html.escape(term), glossary._TAG_AHEAD).pattern)
        text = pattern.sub(lambda m: f'<abbr title="{title}">{m.group(0)}</abbr>', text,
                           count=1)
    return text


def test_the_fast_word_search_finds_what_the_plain_regex_finds():
    """``used`` and ``hover`` try a term's pattern only where the term occurs (the report
    of a 256-row table spent seconds in full-text regex scans): the same words found and
    the same page written as the plain reading, on a real report and on text built to trip
    the shortcut (a term inside a tag and a word, one overlapping itself, at both ends of
    the text, escaped, a number cited and not)."""
    from test_render import ROWS, SHORTFALL, _manifest, evaluate, pl, render as page

    from pipeline.reports.audit_page import document

    frame = pl.DataFrame(ROWS).with_columns(
        pl.col("below_target", "illegal_boards", "b_prime_fogged_boards", "e_monotone_ok")
        .cast(pl.Int64), pl.col("b_regions_full_share").cast(pl.Float64))
    results, _ = evaluate(frame)
    doc, extra = page._doc(_manifest(), frame, results, SHORTFALL)
    _, sections = document(doc, extra)
    tricky = Section("t", "Q risk", blocks=[
        Para("G-TFx p10p10 Q-risk <p10> p10-p10 05 §16 and 05 alone, G-TF, G-TF; "
             "p50&p90 < Q risk > tier 3-4 core"),
        Bullets([Cell("p10"), Cell("within noise within noise")]),
        Table(["G-TF", "p90"], [[Cell("a<b>p10</b>"), Cell("Q risk")]])])
    jargon = (("core", "inferability_core"), ("tier", "tier"))
    for secs in (sections, [tricky], [*sections, tricky]):
        words = glossary.used(secs, jargon)
        assert words == _plain_used(secs, jargon) and words
        for text in render.html_sections(secs) + [glossary._texts(secs),
                                                  'x<a title="p10">p10</a> p10']:
            assert glossary.hover(text, words, html.escape) == _plain_hover(text, words)

"""The words of a page defined on the page (``pipeline.reports.glossary``): the entries are
the repository glossary's, a page lists exactly the codes it uses, hover text never lands
inside a tag, and a number is defined only where the design is cited."""

from __future__ import annotations

import html
import re

from pipeline.reports import glossary, render
from pipeline.reports.document import Bullets, Cell, Para, Section


def test_entries_are_the_glossary_s():
    e = glossary.entries()
    text = glossary.GLOSSARY.read_text(encoding="utf-8")
    assert "**Q risk** —" in text and e["Q risk"].startswith("1 − (1 − (1 − p̂)^50)^N")
    assert e["p10"] == e["p50"] == e["p90"]  # one entry names three terms
    assert e["V1"] == e["V5"] and "layout checks" in e["V3"]  # "V1 … V5": a range
    assert e["core"] == e["inferability_core"]  # "see inferability_core" followed


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

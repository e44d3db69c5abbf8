"""The repository's docs as pages of an output folder (``pipeline.reports.docsite``): every
doc rendered once into ``<out>/docs/``, heading anchors as GitHub makes them (so the docs'
own links land), links between docs kept and links to other files of the repository made
text, and a page's link to a doc relative to the page."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from pipeline.reports import docsite, render

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted((REPO / "docs").glob("*.md"))


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])


def _parse(path: Path) -> _Page:
    p = _Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_every_doc_is_written_once_and_only_inside_the_folder(tmp_path):
    out = tmp_path / "out"
    written = docsite.write(out)
    want = {f"{p.stem}.html" for p in DOCS}
    assert {p.name for p in written} == want
    assert {str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")} == \
        {"out", "out/docs"} | {f"out/docs/{n}" for n in want}
    assert docsite.write(out) == []  # the same sources: nothing is rendered again
    page = out / "docs" / "glossary.html"
    stamp = 'name="minegen-docs" content="'  # a page made from other sources: made again
    page.write_text(page.read_text(encoding="utf-8").replace(stamp, stamp + "0"),
                    encoding="utf-8")
    assert [p.name for p in docsite.write(out)] == ["glossary.html"]


def test_docs_made_beside_a_block_are_there_when_it_ends_and_only_a_bug_is_raised(
        tmp_path, monkeypatch):
    """``beside``: the docs are rendered in a thread while the block runs and are complete
    when it ends; a folder that cannot take them is left to ``write``'s later caller
    (history.refresh says it), a bug in the rendering fails the block's caller."""
    import pytest

    with docsite.beside(tmp_path / "out"):
        pass
    assert {p.name for p in (tmp_path / "out" / "docs").iterdir()} == \
        {f"{p.stem}.html" for p in DOCS}
    (tmp_path / "file").write_text("not a folder")
    with docsite.beside(tmp_path / "file"):  # NotADirectoryError: an OSError, said later
        pass
    monkeypatch.setattr(docsite, "_sources", lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        with docsite.beside(tmp_path / "other"):
            pass


def test_every_link_between_the_docs_lands_on_a_heading(tmp_path):
    """The docs link each other by GitHub's heading anchors; the rendered pages carry the
    same anchors, so each of those links opens the section it names."""
    docsite.write(tmp_path)
    folder = tmp_path / "docs"
    pages = {p.name: _parse(p) for p in folder.glob("*.html")}
    checked, broken = 0, []
    for name, page in pages.items():
        for href in page.hrefs:
            path, _, frag = href.partition("#")
            target = path or name
            if target not in pages:
                broken.append(f"{name}: {href} (no such page)")
            elif frag and unquote(frag) not in pages[target].ids:
                broken.append(f"{name}: {href} (no such heading)")
            checked += bool(frag) and frag != "codes-used-in-comments"  # test below
    # every anchored link of the sources between docs (one to README.md becomes text; the
    # codes table's links are counted apart, the rendering adds some)
    source_links = sum(1 for p in DOCS for path, frag in re.findall(
        r"\]\(([^)\s#]*)#([^)\s]+)\)", p.read_text("utf-8"))
        if "/" not in path and frag != "codes-used-in-comments")
    assert broken == [] and checked == source_links > 100


def test_a_link_to_another_file_of_the_repository_is_its_text():
    text = "# T\n\nSee [the README](../README.md#set-up) and [design](design.md#exits).\n"
    page = docsite.page("x", text, {"x", "design"}, "0" * 64)
    assert 'href="design.html#exits"' in page
    assert "README" not in "".join(re.findall(r'href="([^"]*)"', page))
    assert "the README (README.md, in the repository)" in page


def test_headings_get_githubs_anchors_numbered_on_repeats():
    text = "# Doc\n\n## Layout checks V1–V5\n\n## `minegen reconcile`\n\n## Scale\n\n## Scale\n"
    ids = re.findall(r'<h\d id="([^"]+)"', docsite.page("x", text, {"x"}, "0" * 64))
    assert ids == ["doc", "layout-checks-v1v5", "minegen-reconcile", "scale", "scale-1"]


def test_a_pages_link_to_a_doc_is_relative_to_the_page(tmp_path):
    """From a page two folders down (a tune page: ``<out>/tune/<id>/``) the link climbs
    to ``<out>/docs/``; no page names a path of this machine."""
    docsite.write(tmp_path)
    here = tmp_path / "tune" / "t1"
    here.mkdir(parents=True)
    legend = render.legend("docs/tilegen.md", "../..")
    hrefs = re.findall(r'href="([^"]+)"', legend)
    assert hrefs == ["../../docs/glossary.html", "../../docs/tilegen.html"]
    assert all((here / h).resolve().is_file() for h in hrefs)
    assert "file:" not in legend and str(tmp_path) not in legend
    link = docsite.link("the deadlocks", "docs/tilegen.md", "Deadlocks", "../..")
    target, frag = link[link.index("(") + 1:-1].split("#")
    assert (here / target).resolve().is_file()
    assert frag in _parse((here / target).resolve()).ids
    # a page outside an output folder (no site) names the doc instead of linking it
    assert "href" not in render.legend("docs/design.md")
    assert docsite.link("docs/telemetry.md", "docs/telemetry.md") == "docs/telemetry.md"


def test_a_design_code_in_a_doc_links_the_table_that_maps_it():
    """"05 §15.2" in a doc's text opens docs/tilegen.md's table of codes (which names the
    repository's section); not inside code, not inside a link, not in that table itself."""
    text = "# X\n\nAs 05 §15.2 says (and 05 §10.2, §11.2); `05 §3`; [05 §16](tilegen.md#gates).\n"
    html = docsite.page("design", text, {"design", "tilegen"}, "0" * 64, "tilegen")
    to_table = re.findall(r'<a href="tilegen.html#codes-used-in-comments">([^<]*)</a>', html)
    assert to_table == ["05 §15.2", "05 §10.2, §11.2"]
    assert "<code>05 §3</code>" in html and '<a href="tilegen.html#gates">05 §16</a>' in html
    table = ("# T\n\n## Codes used in comments\n\n05 §16 is the ladder.\n\n## Next\n\n"
             "05 §16.\n")
    own = docsite.page("tilegen", table, {"tilegen"}, "0" * 64, "tilegen")
    assert re.findall(r'<a href="([^"]*)">05', own) == ["#codes-used-in-comments"]
    # the doc with that section is found by its heading, not by its name
    other = "# D\n\n## Codes used in comments\n\nA1 stage 1.\n\n## Next\n\n05 §3.\n"
    assert docsite.codes_doc({"a": other, "tilegen": table, "z": table}) == "tilegen"
    assert docsite.codes_doc({"design": text}) is None

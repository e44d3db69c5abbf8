"""The tile-match play page in a real browser (Debian's Chromium, headless, driven by
Playwright, as tests/test_pages_browser.py): a production board won by clicking its
witness, lost by a bad sequence, a scripted player's run watched frame by frame and held
equal to the Python trace of the same run, and no console error on the way."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_pages_browser import open_page

pytestmark = pytest.mark.cluster
REPO = Path(__file__).resolve().parent.parent




def play_page(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "board.html"
    p = subprocess.run([sys.executable, "-m", "tilegen.cli", "generate", *args, "--play",
                        str(out)], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert p.returncode == 0, p.stderr
    return out


def ready(page):
    page.wait_for_selector("body[data-ready='1']", timeout=10000)
    return page


def board_data(page) -> dict:
    return json.loads(page.locator("#board-data").text_content())


def status(page) -> str:
    return page.locator("#status").text_content()


def test_a_production_board_is_won_by_its_witness(browser, tmp_path):
    with open_page(browser, play_page(tmp_path, "beijing", "6")) as (page, errors):
        ready(page)
        data = board_data(page)
        assert data["witness"] and len(data["witness"]) == len(data["board"]["pieces"])
        for piece in data["witness"]:
            page.click(f"#board [data-piece='{piece}']")
        n = len(data["board"]["pieces"])
        assert status(page).startswith(f"Won in {n} clicks"), status(page)
        assert page.locator("#board .piece").count() == 0
        log = page.locator("#log").text_content()  # the history says that it is cut
        head, *lines = log.splitlines()
        assert re.fullmatch(r"Your game so far, the last 8 of \d+ lines:", head), log
        assert len(lines) == 8 and int(head.split(" of ")[1].split()[0]) > n, log
        assert not errors, errors


def test_a_bad_sequence_loses(browser, tmp_path):
    # always open a new element while one is clickable, and use each tool when stuck
    with open_page(browser, play_page(tmp_path, "tokyo", "6")) as (page, errors):
        ready(page)
        for _ in range(120):
            text = status(page)
            if text.startswith(("Won", "Lost")):
                break
            in_slot = set(page.locator("#slot .cell").all_text_contents())
            free = page.locator("#board .piece.legal")
            letters = free.all_text_contents()
            fresh = [i for i, x in enumerate(letters) if x not in in_slot]
            # the class shown after every move partitions the states (decision 245):
            # hard exactly when no piece is legal
            cls = page.locator("#deadlock").get_attribute("data-class")
            assert cls in ("none", "soft", "deep", "hard"), cls
            assert (cls == "hard") == (not letters), (cls, letters)
            tools = [b for b in ("remove", "undo", "shuffle")
                     if page.locator(f"#tool-{b}").is_enabled()]
            if text.startswith("Stuck") and tools:
                page.click(f"#tool-{tools[0]}")
            else:
                free.nth(fresh[0] if fresh else 0).click()
        assert status(page).startswith("Lost"), status(page)
        assert "Deadlock class: hard" in page.locator("#deadlock").text_content()
        assert not errors, errors


def test_slot_pieces_sit_level_with_the_empty_cells(browser, tmp_path):
    """A filled slot cell is drawn where an empty one is (a lettered inline block sat on
    its text's baseline, about 10 px below the empty cells beside it)."""
    with open_page(browser, play_page(tmp_path, "beijing", "6")) as (page, errors):
        ready(page)
        for _ in range(3):
            page.locator("#board .piece.legal").first.click()
        assert page.locator("#slot .cell[data-piece]").count() == 3
        for row in ("#slot", "#bypass"):
            tops = {round(c.bounding_box()["y"]) for c in page.locator(f"{row} .cell").all()}
            assert len(tops) == 1, (row, tops)
        assert not errors, errors


def test_a_watched_run_equals_the_python_trace(browser, tmp_path):
    from tilegen.generate import generate_board
    from tilegen.render import trace_run

    with open_page(browser, play_page(tmp_path, "istanbul", "5")) as (page, errors):
        ready(page)
        trace = trace_run(generate_board("istanbul", 5), "risk-averse", tools=True)
        want = [s for i, s in enumerate(trace.steps)  # a click and its returns: one frame
                if not (i + 1 < len(trace.steps) and trace.steps[i + 1].action == "return")]
        page.select_option("#strategy", "2")
        page.check("#assisted")
        page.click("#watch")
        pieces = [p["id"] for p in board_data(page)["board"]["pieces"]]
        for n, step in enumerate(want, start=1):
            page.click("#next")
            note = page.locator("#frame-note").text_content()
            assert note.startswith(f"Step {n} of {len(want)}"), note
            slot = [c.get_attribute("data-piece") for c in page.locator("#slot .cell").all()]
            assert [s for s in slot if s] == [pieces[p] for p in step.slot], n
        note = page.locator("#frame-note").text_content()
        assert re.search(r"won: every piece matched" if trace.won else r"lost:", note), note
        assert page.locator("#next").is_disabled()
        page.click("#back")
        assert status(page).startswith("Playing")
        assert not errors, errors

"""The Minesweeper rules of ``runtime/minesweeper.js`` held equal to the Python side, and the
play page played in a real browser.

Node: a fresh fixture (``minegen.play_data.fixture``) of boards of the default tables at
fixed board indices, fog and every difficulty tier among them, goes to node's own test
runner (``runtime/test/minesweeper.test.mjs``): every dig's cascade and every state's hint
must equal Python's. Node is installed from Debian when missing; the tests skip only when
it cannot be. Browser: Debian's Chromium driven by Playwright, as ``test_pages_browser``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from minegen import play_data
from minegen.play_page import write_page

REPO = Path(__file__).resolve().parent.parent
NODE_TEST = "runtime/test/minesweeper.test.mjs"
# (level, depth, board index): the two reference rows, then fog rows whose plays reach the
# global mine count (3, 0 #59), exact enumeration (3, 4 #0) and every tier (4, 4 #49)
SPECS = ((1, 0, 0), (2, 0, 2), (3, 0, 59), (3, 4, 0), (4, 4, 49))
NODE_TESTS_PER_BOARD = 3  # numbers + opening; the play; win / flag / loss
PAGE_BOARD = (3, 0, 59)  # fog, a forced guess along the scripted play, 16 x 16




@pytest.fixture(scope="module")
def fixture_doc(default_tables) -> dict:
    return play_data.fixture(SPECS, default_tables)


def run_node(node: str, fixture: Path | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MINEGEN_MS_FIXTURE"}
    if fixture is not None:
        env["MINEGEN_MS_FIXTURE"] = str(fixture)
    return subprocess.run([node, "--test", NODE_TEST], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)


def counts(out: str) -> dict[str, int]:
    """node's TAP summary: {"pass": n, "fail": n, ...}."""
    return {k: int(v) for k, v in re.findall(r"^# (pass|fail|skipped|todo|cancelled) (\d+)$",
                                              out, re.M)}


def test_the_fixture_holds_fog_every_tier_and_a_forced_guess(fixture_doc, default_tables):
    boards = fixture_doc["boards"]
    assert [b["data"]["record"]["seed_index"] for b in boards] == [s[2] for s in SPECS]
    assert any(b["data"]["fog"] for b in boards)
    states = [s for b in boards for s in b["steps"]]
    assert {t for s in states for *_, t in s["hint"]["safe"]} == {0, 1, 2, 3, 4}
    assert any(s["hint"]["guess_forced"] for s in states)
    assert all(b["cleared"] for b in boards)  # every play reaches a cleared board
    again = play_data.fixture(SPECS[:2], default_tables)  # deterministic: same seeds, same JSON
    assert json.dumps(again) == json.dumps({**fixture_doc, "boards": boards[:2]})
    # the solver run from R0 is the generator's own: the first hint is Board.open_tier
    for spec, b in zip(SPECS, boards):
        board = play_data.make_board(*spec, tables=default_tables)
        r0 = board.r0.reshape(-1)
        tier = board.open_tier.reshape(-1)
        want = [[int(c % board.width), int(c // board.width), int(tier[c])]
                for c in np.flatnonzero((tier >= 0) & ~r0)]
        assert b["steps"][0]["hint"]["safe"] == want


def test_js_digs_and_hints_equal_python(node, fixture_doc, tmp_path):
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(fixture_doc))
    p = run_node(node, path)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    n = counts(out)
    assert n.get("fail") == 0 and n.get("skipped") == 0, out
    assert n.get("pass") == 2 + NODE_TESTS_PER_BOARD * len(SPECS), out


def test_the_node_test_fails_on_a_wrong_tier_and_without_a_fixture(node, fixture_doc,
                                                                   tmp_path):
    bad = json.loads(json.dumps(fixture_doc))
    step = next(s for s in bad["boards"][-1]["steps"] if s["hint"]["safe"])
    step["hint"]["safe"][0][2] = (step["hint"]["safe"][0][2] + 1) % 5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    p = run_node(node, path)
    assert p.returncode != 0 and counts(p.stdout).get("fail") == 1, p.stdout + p.stderr
    assert "safe cells and tiers" in p.stdout
    p = run_node(node, None)
    assert p.returncode != 0 and "MINEGEN_MS_FIXTURE" in p.stdout, p.stdout + p.stderr


# ----------------------------------------------------------------------------- the page



@pytest.fixture(scope="module")
def page_board(default_tables):
    return play_data.make_board(*PAGE_BOARD, tables=default_tables)


@contextlib.contextmanager
def play(browser, board, tmp_path):
    """(page, console errors) of ``board``'s play page at 1024 px."""
    from test_pages_browser import WIDTH, open_page

    with open_page(browser, write_page(board, tmp_path / "play.html")) as (page, errors):
        assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
        yield page, errors


def cell(page, x: int, y: int):
    return page.locator(f"#board .cell[data-x='{x}'][data-y='{y}']")


def n_open(page) -> int:
    return page.locator("#board .cell[data-state='open'], "
                        "#board .cell[data-state='fog-open']").count()


def hinted(page) -> list[list[int]]:
    """[[x, y, tier], ...] of the cells the page marks, row-major."""
    return page.evaluate("[...document.querySelectorAll('#board .cell[data-hint]')].map("
                         "b => [+b.dataset.x, +b.dataset.y, +b.dataset.hint])")


@pytest.mark.cluster
def test_digging_every_safe_cell_wins(browser, page_board, tmp_path):
    board = page_board
    with play(browser, board, tmp_path) as (page, errors):
        assert page.locator("#status").get_attribute("data-status") == "playing"
        assert n_open(page) == int(board.r0.sum())
        assert page.locator("#board .cell[data-state='fog']").count() == int(board.fog.sum())
        for x, y in board.cells(~board.mines & ~board.r0):
            if cell(page, x, y).get_attribute("data-state") in ("closed", "fog"):
                cell(page, x, y).click()
        assert page.locator("#status").get_attribute("data-status") == "won"
        assert "You win" in page.locator("#status").inner_text()
        assert n_open(page) == board.record["safe"]
        assert errors == []


@pytest.mark.cluster
def test_a_flag_guards_a_mine_and_digging_it_loses_until_restart(browser, page_board,
                                                                  tmp_path):
    board = page_board
    x, y = board.cells(board.mines)[0]
    with play(browser, board, tmp_path) as (page, errors):
        cell(page, x, y).click(button="right")
        assert cell(page, x, y).get_attribute("data-state") == "flag"
        cell(page, x, y).click()  # a flagged cell is not dug
        assert page.locator("#status").get_attribute("data-status") == "playing"
        page.locator("#flag-mode").click()  # flag mode: a click unflags
        cell(page, x, y).click()
        assert cell(page, x, y).get_attribute("data-state") == "closed"
        page.locator("#flag-mode").click()
        cell(page, x, y).click()
        assert page.locator("#status").get_attribute("data-status") == "lost"
        assert "You dug a mine" in page.locator("#status").inner_text()
        assert cell(page, x, y).get_attribute("data-state") == "exploded"
        shown = page.locator("#board .cell[data-state='mine']").count()
        assert shown == board.record["mines"] - 1
        page.locator("#restart").click()
        assert page.locator("#status").get_attribute("data-status") == "playing"
        assert n_open(page) == int(board.r0.sum())
        assert errors == []


@pytest.mark.cluster
def test_the_hint_marks_python_s_tiers_and_a_forced_guess(browser, page_board, tmp_path):
    ref = play_data.reference(page_board)
    forced = next(i for i, s in enumerate(ref["steps"]) if s["hint"]["guess_forced"])
    with play(browser, page_board, tmp_path) as (page, errors):
        assert not page.locator("#guess").is_visible()
        page.locator("#hint-toggle").click()
        assert page.locator("#hint-toggle").get_attribute("aria-pressed") == "true"
        for i, step in enumerate(ref["steps"][: forced + 1]):
            for x, y in step["clicks"]:
                cell(page, x, y).click()
            assert hinted(page) == step["hint"]["safe"], f"step {i}"
            assert page.locator("#guess").is_visible() == (i == forced), f"step {i}"
        legend = page.locator("#hint-legend").inner_text()
        for words, _ in play_data.TIER_WORDS.values():
            assert words in legend
        assert errors == []

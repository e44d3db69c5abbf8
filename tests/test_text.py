"""The text drawing tells a person what happened to the row's fog (SPEC §4, A4 EC2)."""

from __future__ import annotations

import warnings

from minegen.generate import generate
from minegen.render import draw, fog_summary


def _board(tables, level, depth, index):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degraded-board alarms are not the subject here
        return generate(level, depth, tables=tables, index=index)


def test_shortfall_is_explained_with_the_region_size(default_tables):
    # the level-2 reference row: 12x12, ratio 0.10, one region -> t = round(14.4) = 14
    r = _board(default_tables, 2, 0, 0).record
    assert r["fog_regions_achieved"] == 0
    text = fog_summary(r)
    assert text.startswith("fog: 0 of 1 region(s) of 14 cells placed, 0 fog cells")
    assert "shortfall 1" in " ".join(text.split())
    assert all(len(line) <= 88 for line in text.splitlines())


def test_full_placement_has_no_shortfall_note(fixture_tables):
    tables = fixture_tables("two_regions")
    boards = [_board(tables, 2, 0, i) for i in range(12)]
    full = [b for b in boards if b.record["fog_regions_achieved"] == 2]
    assert full, "two_regions should place both regions on some of its first 12 boards"
    r = full[0].record
    assert fog_summary(r) == f"fog: 2 of 2 region(s) of 14 cells placed, {r['fog_cells']} fog cells"
    assert r["fog_cells"] == 28 and draw(full[0]).split("legend:")[0].count("~") == 2 * 28


def test_no_fog_rows_and_empty_pools_say_so(default_tables, fixture_tables):
    assert "none requested" in fog_summary(_board(default_tables, 1, 0, 0).record)
    assert "empty pool" in fog_summary(_board(fixture_tables("pool_empty"), 1, 0, 0).record)


def test_report_thumbnail_shows_the_cells_of_the_text_view(default_tables):
    """The drill-down's board picture and the CLI's text view of the same board agree
    cell by cell: mines, numbers and zeros, fog, spawn, cells the solver leaves closed."""
    import re

    from minegen.audit.boards import board_svg

    board = generate(3, 4, tables=default_tables, index=0)
    assert board.fog.any()  # a board that shows every kind of cell
    svg = board_svg(board, "row (3, 4), board 0")
    drawn = {tuple(map(int, c.split(","))): set(k.split()) for c, k in
             re.findall(r'data-cell="([^"]+)" data-kind="([^"]+)"', svg)}
    assert len(drawn) == board.width * board.height
    text = draw(board).splitlines()[2:2 + board.height]
    for y, line in enumerate(text):
        left, right = line[3:3 + 3 * board.width], line[3 + 3 * board.width + 3:]
        for x in range(board.width):
            cell, view = left[3 * x:3 * x + 3], right[3 * x:3 * x + 3]
            kind = drawn[(x, y)]
            assert (cell[1] == "*") == ("mine" in kind), (x, y)
            assert (cell[1] == ".") == ("zero" in kind), (x, y)
            assert cell[1].isdigit() == ("number" in kind), (x, y)
            assert (cell[0] == "~") == ("fog" in kind), (x, y)
            assert (cell[0] == "[") == ("spawn" in kind and "fog" not in kind), (x, y)
            assert (view.strip() == "#" and cell[1] != "*") == ("closed" in kind), (x, y)

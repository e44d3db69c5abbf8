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
    cell by cell: mines, fog, cells the solver leaves closed, and every number."""
    import re

    from minegen.audit.boards import CELL, board_svg

    board = generate(3, 4, tables=default_tables, index=0)
    assert board.fog.any()  # a board that shows every kind of cell
    svg = board_svg(board, "row (3, 4), board 0")
    drawn = {kind: {tuple(map(int, c.split(","))) for c in cells.split()} for kind, cells in
             re.findall(r'data-kind="([^"]+)" data-cells="([^"]*)"', svg)}
    numbers = set()  # (x, y, digit) of every number drawn: one text per row and style
    for xs, y, digits in re.findall(r'<text x="([\d. ]+)" y="(\d+)" text-anchor="middle"'
                                    r'[^>]*>(\d+)<', svg):
        for px, d in zip(xs.split(), digits, strict=True):
            numbers.add((int(float(px)) // CELL, int(y) // CELL, d))
    assert len(svg) < 16_000  # light: a page of boards stays well under a megabyte
    text = draw(board).splitlines()[2:2 + board.height]
    seen = {"mine": set(), "fog": set(), "closed": set()}
    for y, line in enumerate(text):
        left, right = line[3:3 + 3 * board.width], line[3 + 3 * board.width + 3:]
        for x in range(board.width):
            cell, view = left[3 * x:3 * x + 3], right[3 * x:3 * x + 3]
            if cell[1] == "*":
                seen["mine"].add((x, y))
            if cell[0] == "~":
                seen["fog"].add((x, y))
            if view.strip() == "#" and cell[1] != "*":
                seen["closed"].add((x, y))
    for kind, cells in seen.items():
        assert drawn.get(kind, set()) == cells, kind
    assert numbers == {(x, y, line[3 + 3 * x + 1]) for y, line in enumerate(text)
                       for x in range(board.width) if line[3 + 3 * x + 1].isdigit()}


def test_a_board_missing_fog_shows_where_fog_could_go(default_tables):
    """On a board missing fog regions the picture draws the cells eligible for fog (safe,
    numbered, outside the spawn's reach) and says the largest patch against the size a
    region needs; those cells are exactly the design's eligible cells."""
    import re

    from minegen.audit.boards import board_svg, eligible, largest_patch

    board = next(b for b in (generate(2, 2, tables=default_tables, index=i) for i in range(20))
                 if b.record["fog_shortfall"] > 0)
    svg = board_svg(board, "row (2, 2)", region=20)
    elig = eligible(board)
    for y in range(board.height):
        for x in range(board.width):
            assert elig[y, x] == (not board.mines[y, x] and board.numbers[y, x] >= 1
                                  and not board.reach[y, x]
                                  and not board.spawn_cells()[y, x])
    patch = largest_patch(elig)
    assert f"largest 4-connected patch {int(patch.sum())} cells; a region needs 20" in svg
    assert f"eligible for fog: {int(elig.sum())} cells" in svg
    assert int(patch.sum()) < 20  # why the region did not fit
    cells = re.search(r'data-kind="eligible" data-cells="([^"]*)"', svg)
    drawn = {tuple(map(int, c.split(","))) for c in cells.group(1).split()} if cells else set()
    assert drawn == {(x, y) for y, x in zip(*elig.nonzero()) if not board.fog[y, x]}
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

def _picture_kinds(svg: str) -> dict[str, set[tuple[int, int]]]:
    import re

    return {kind: {tuple(map(int, c.split(","))) for c in cells.split()} for kind, cells in
            re.findall(r'data-kind="([^"]+)" data-cells="([^"]*)"', svg)}


def test_guess_cells_are_coloured_by_the_tier_that_first_opens_them(default_tables):
    """Issue 31: board (3, 4)#106 showed its F1-closed cells as "needs a guess" though tier 4
    proves every one. The picture's marks are read back and held to the slow twin of the
    tiers (tests/naive_tiers.py), run on the board's layout: a cell F1 leaves closed is
    drawn in the colour of the tier that first opens it, and only a cell no tier opens is
    "a guess even for tier 4"; each legend line counts its cells."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import naive_tiers as NT

    from minegen.audit.boards import board_svg

    seen_kinds = set()
    for index in (106, 1):  # 106: every closed cell tier 4's; 1: some no tier opens
        board = generate(3, 4, tables=default_tables, index=index, tiers=True)
        grid = lambda g: [(int(x), int(y)) for y, x in zip(*g.nonzero())]  # noqa: E731
        f1 = 2 if board.record["solver_rules"] == "single_subset" else 1
        twin = NT.tiers(board.width, board.height, grid(board.mines), grid(board.fog),
                        grid(board.r0), f1)
        safe = {c for c in (tuple(c) for c in grid(~board.mines))}
        by_tier = {t: {c for c, tt in twin["R"].items() if tt == t} for t in range(5)}
        never = safe - set(twin["R"])
        drawn = _picture_kinds(board_svg(board, f"row (3, 4), board {index}"))
        svg = board_svg(board, "")
        assert drawn["closed"] == never | set().union(*(by_tier[t] for t in range(f1 + 1, 5)))
        for t in range(f1 + 1, 5):
            assert drawn.get(f"tier-{t}", set()) == by_tier[t], (index, t)
            if by_tier[t]:
                assert f"tier {t} proves it: {len(by_tier[t])}<" in svg
                seen_kinds.add(t)
        assert drawn["closed"] - set().union(*(drawn.get(f"tier-{t}", set())
                                               for t in range(5))) == never
        if never:
            assert f"guess even for tier 4 (no tier proves it): {len(never)}<" in svg
            seen_kinds.add("never")
        else:
            assert "guess even for tier 4" not in svg
        assert "needs a guess" not in svg
    assert seen_kinds >= {4, "never"}  # both marks were exercised


def test_a_drawing_and_its_play_page_share_one_board_and_equal_separate_ones(default_tables):
    """A report's drawing and play page of one board are made from one generated board (the
    worker makes it once, ``boards.made``): both equal what each makes alone."""
    from minegen.audit import boards
    from pipeline.generator import load_generator

    gen = load_generator("minegen")
    (plan,) = gen.plans(default_tables, [(3, 4)])
    for index in (106, 1):
        boards._made.cache_clear()
        shared = (gen.exhibit(plan, index), gen.play_page(plan, index))
        assert boards._made.cache_info().hits == 1
        alone = []
        for make in (gen.exhibit, gen.play_page):
            boards._made.cache_clear()
            alone.append(make(plan, index))
        assert shared == tuple(alone) and shared[1] is not None


def test_play_page_outcome_agrees_with_every_hard_line_of_its_board(default_tables,
                                                                     fixture_tables):
    """Issue 31: the page of (3, 4)#106 said "met its targets" beside "0 of 2 asked-for fog
    regions placed". The outcome line names exactly the hard lines the board counts against,
    each judged here from the record by the audit's per-board tests (A: below the target,
    A': illegal, B: a region missing where the row asks for fog and has a pool, B': fog on
    a row that asks for none), and says "met" of the inferability target only."""
    import html
    import re

    from minegen.play_page import page_html

    boards = [generate(3, 4, tables=default_tables, index=106, tiers=True),
              generate(1, 0, tables=default_tables, index=0, tiers=True),
              *(generate(2, 0, tables=fixture_tables("two_regions"), index=i, tiers=True)
                for i in range(6))]
    seen = set()
    for board in boards:
        r = board.record
        t = r["inferability_target"]
        fails = set()
        if r["inferability"] < t or r["inferability_core"] < t:
            fails.add("A")
        if r["exit"] == "accept_least_bad":
            fails.add("A'")
        if r["fog_regions_requested"] and not r["pool_empty"] and \
                r["fog_regions_achieved"] < r["fog_regions_requested"]:
            fails.add("B")
        if r["fog_regions_requested"] == 0 and r["fog_cells"]:
            fails.add("B'")
        page = page_html(board)
        said = html.unescape(re.search(r"<dt>Generator outcome</dt><dd>(.*?)</dd>",
                                       page).group(1))
        named = set(re.findall(r"line (A''|A'|A|B'|B) \(", said))
        assert named == fails, (r["seed_index"], said)
        assert "met its targets" not in said
        if r["exit"] == "met":
            assert said.startswith("met the inferability target")
        if not fails:
            assert "counts against no hard line" in said
        if "B" in fails:
            assert (f"{r['fog_regions_achieved']} of {r['fog_regions_requested']} asked-for "
                    "fog regions placed") in said
        seen |= fails or {"none"}
    assert seen >= {"B", "none"}  # both kinds of board were exercised

"""regenerate_with_tweaks walks the 05 §16 ladder one rung at a time, never touching the base
rules, and every proposal is a valid table row (checked by the loader's own row checks)."""

from __future__ import annotations

import pytest

from tilegen.errors import InputError
from boardcore.tables import Collector
from tilegen import table_checks as tc
from tilegen.table_loader import load_tables
from tilegen.tweaks import direction_of, regenerate_with_tweaks


@pytest.fixture(scope="module")
def catalog():
    return load_tables()


def ladder(catalog, key, reason, steps=40):
    row = catalog.preset(key)
    dist = {name: tuple(d) for name, d in catalog.density.items()}
    n_city = len(catalog.city(key[0]).elements)
    out = []
    for _ in range(steps):
        t = regenerate_with_tweaks(row, reason, distributions=dist, city_elements=n_city)
        out.append(t)
        if t.preset is None:
            break
        assert t.preset.revision == row.revision + 1
        row = t.preset
    return out


def test_too_hard_ladder_order(catalog):
    steps = [t.step.split(" ")[0] for t in ladder(catalog, ("beijing", 6, 1), "tool_free_low")]
    # density high -> medium_high -> medium (low has 3 shares < 4 layers), then layers ...
    assert steps[:2] == ["density", "density"]
    assert steps.index("layers") < steps.index("element_count")
    assert steps[-1] == "no"  # ends naming the dispersion rule, not a table edit


def test_too_easy_mirrors(catalog):
    first = ladder(catalog, ("beijing", 1, 1), "tool_free_high", steps=1)[0]
    assert first.preset.density == "medium" and first.direction == "too_easy"


# Known defect, found when this test stopped being vacuous: deep in a too-hard ladder the
# "layers -> 1" rung puts every piece on one layer, which no longer fits the 7 x 8 grid
# (A-13 footprint); regenerate_with_tweaks has no grid check. Strict: the day it is fixed,
# these two cases pass and the marks must go.
GRID_DEFECT = pytest.mark.xfail(strict=True, reason="ladder rung layers -> 1 exceeds the grid "
                                "(A-13); regenerate_with_tweaks has no grid check")


@pytest.mark.parametrize("key, reason", [
    pytest.param(("tokyo", 5, 1), "too_hard", marks=GRID_DEFECT),
    (("seoul", 2, 1), "too_easy"),
    pytest.param(("istanbul", 6, 1), "tool_assist_low", marks=GRID_DEFECT)])
def test_every_proposal_is_a_valid_row(catalog, key, reason):
    """Each rung's whole proposed row passes the loader's own row checks (every field, every
    cross-field rule against its city, density class, grid and level band)."""
    ctx = tc.Context.of(catalog)
    checked = 0
    for t in ladder(catalog, key, reason):
        if t.preset is None:
            continue
        out = Collector()
        row, got, _ = tc.check_row(t.preset.raw(), 1, ctx, out)
        assert row == t.preset and got == t.preset.key, [d.format() for d in out.items]
        checked += 1
    assert checked >= 2


def test_reasons_map_to_directions():
    assert direction_of("tool_free_low") == direction_of("near_surface") == "too_hard"
    assert direction_of("tool_free_high") == "too_easy"
    assert direction_of("same_layer_cluster") == "layout"
    with pytest.raises(InputError):
        direction_of("none")

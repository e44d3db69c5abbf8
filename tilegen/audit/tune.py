"""How tilegen rows are tuned: every candidate value of each rung of the 05 §16 ladder
(``tilegen.ladder``: the rungs, their order and steps), and writing a proposed table root
(the change plus ``revision += 1``).

A failing line does not say which way a row misses when it reads the tool-free gate (G-TF,
and P on the production board): there each rung offers both directions, the smallest change
first, the easier direction first on a tie; for every other hard line only the easier one.
Within a rung values go from the smallest change outwards; ``minegen tune`` keeps the first
rung with a passing value, and its smallest passing change.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from boardcore import files
from boardcore.errors import Diagnostic
from boardcore.toml_patch import patch_rows, toml_value
from pipeline.api.contract import Cost
from pipeline.api.runs import atomic
from pipeline.api.stats import se_quantile, se_share

from ..codes import DENSITIES
from ..ladder import DENSITY_CLASS, LADDER, MIN_ELEMENTS, SHARE_STEP


BOTH_WAYS = {"G-TF", "P"}  # lines that fail for a row too easy as well as too hard
STEPS = 3  # values per direction and rung at the most
PRESETS = "presets.toml"
KEY = ("city_id", "level_id", "revision")

# What a change costs the player (docs/tile-match.md, "tune"): how the returned boards play
# for the scripted players, how much of the board opens at once, and its make-up.
COSTS = (
    Cost("tool-free pass rate p50", lambda r: r["tool_free_pass_rate_p50"], unit=0.05,
         se=se_quantile("tool_free_pass_rate_p50")),
    Cost("tool-assisted pass rate p50", lambda r: r["tool_assist_pass_rate_p50"], unit=0.05,
         se=se_quantile("tool_assist_pass_rate_p50")),
    Cost("clickable ratio p50", lambda r: r["initial_clickable_ratio_p50"], unit=0.05,
         se=se_quantile("initial_clickable_ratio_p50")),
    Cost("element types", lambda r: r["element_count"], unit=1.0, digits=0),
    Cost("layers", lambda r: r["layers"], unit=1.0, digits=0),
)

SHOWN = (  # what else a proposal shows before -> after (not ranked; issue 30 item 2)
    Cost("raw tool-free pass rate p50 (per attempt)", lambda r: r["raw_tool_free_pass_rate_p50"],
         unit=0.05, se=se_quantile("raw_tool_free_pass_rate_p50")),
    Cost("acceptance per attempt", lambda r: r["p_hat"], unit=0.05),
    Cost("Q risk (some seed fails 50 attempts)", lambda r: r["q_risk"], unit=0.05),
    Cost("retry rate", lambda r: r["retry_rate"], unit=0.05, se=se_share("retry_rate")),
    Cost("pass rate p50, match-first player", lambda r: r["pass_rate_match_first_p50"],
         unit=0.05),
    Cost("pass rate p50, slot-building player", lambda r: r["pass_rate_slot_build_p50"],
         unit=0.05),
    Cost("pass rate p50, risk-averse player", lambda r: r["pass_rate_risk_averse_p50"],
         unit=0.05),
    Cost("pieces", lambda r: r["total_pieces"], unit=1.0, digits=0),
)


def Diag(category: str, field: str, value, rule: str) -> Diagnostic:  # noqa: N802
    return Diagnostic(category, PRESETS, "", field, str(value), rule)


def preset_changes(catalog, key: tuple, field: str, value) -> dict:
    """The preset fields one candidate writes: ``field`` (density_class as its density),
    and with element_count on a row whose pieces_per_element is a list, that list cut or
    lengthened by 3s to match (as tilegen's own ladder does)."""
    if field == DENSITY_CLASS:
        return {"density": DENSITIES[value]}
    out = {field: value}
    ppe = catalog.preset(tuple(key)).pieces_per_element
    if field == "element_count" and isinstance(ppe, tuple) and isinstance(value, int) \
            and value >= 1:
        out["pieces_per_element"] = list(ppe[:value]) + [3] * max(0, value - len(ppe))
    return out


def vary(catalog, key: tuple, candidate: dict):
    """``table_loader.vary`` of one candidate ({field: value}: one field, or a pair; several
    preset fields when a field takes them): the plan keeps the key, so its seeds are the
    audit's."""
    from dataclasses import replace

    from ..table_loader import vary as vary_one

    changes: dict = {}
    for field, value in candidate.items():
        if field == DENSITY_CLASS and not (isinstance(value, int)
                                           and 0 <= value < len(DENSITIES)):
            return None, [Diag("domain", field, value, f"a class 0..{len(DENSITIES) - 1}")]
        changes.update(preset_changes(catalog, key, field, value))
    *rest, (name, new) = changes.items()
    if rest:  # the companion fields go into the row the loader varies
        row = replace(catalog.preset(tuple(key)), **{f: (tuple(v) if isinstance(v, list)
                                                         else v) for f, v in rest})
        catalog = replace(catalog, presets=tuple(row if r.key == row.key else r
                                                 for r in catalog.presets))
    return vary_one(catalog, tuple(key), name, new)


def current(plan, field: str):
    """The row's own value of a sweep/tune field (None: not one value)."""
    if field == DENSITY_CLASS:
        return DENSITIES.index(plan.density)
    if field == "pieces_per_element":
        ppe = set(plan.pieces_per_element)
        return ppe.pop() if len(ppe) == 1 else None
    if field == "layer_distribution":
        return list(plan.layer_distribution)
    return getattr(plan, field, None)


def _ints(now: int, lo: int, hi: int, both: bool) -> list[int]:
    out = []
    for k in range(1, STEPS + 1):
        out += [v for v in ((now - k, now + k) if both else (now - k,)) if lo <= v <= hi]
    return out


def _shares(dist: tuple[str, ...], both: bool) -> list[list[str]]:
    """Move k * 0.05 of share from the bottom layer to the top (harder: the other way)."""
    if len(dist) < 2:
        return []
    out = []
    for k in range(1, STEPS + 1):
        for sign in ((1, -1) if both else (1,)):
            d = [Decimal(x) for x in dist]
            d[0] -= sign * k * SHARE_STEP
            d[-1] += sign * k * SHARE_STEP
            if min(d) > 0:
                out.append([f"{x:.2f}" for x in d])
    return out


def candidates(plan, lines: list[str]) -> list[tuple[str, list]]:
    """[(field, values from the smallest change outwards)] along the ladder for a row
    failing ``lines`` (values may still be invalid as a whole row: the caller validates
    each with ``vary``)."""
    if not lines:
        return []
    both = bool(BOTH_WAYS & set(lines))
    values = {
        DENSITY_CLASS: lambda: _ints(DENSITIES.index(plan.density), 0, len(DENSITIES) - 1,
                                     both),
        "layers": lambda: _ints(plan.layers, 1, 4, both),
        "element_count": lambda: _ints(plan.element_count, MIN_ELEMENTS,
                                       len(plan.city_elements), both),
        "layer_distribution": lambda: _shares(tuple(plan.layer_distribution)[:plan.layers],
                                              both),
    }
    out = [(rung.field, values[rung.field]()) for rung in LADDER]
    return [(f, v) for f, v in out if v]


# ----------------------------------------------------------------------- the proposal

def next_revision(catalog, key: tuple) -> int:
    """One above the highest revision of the row's (city, level): the revision a proposal
    for ``key`` gets (a new production seed and new audit seeds, 05 §12.3)."""
    return 1 + max(r.revision for r in catalog.presets if r.key[:2] == tuple(key)[:2])


def table_edits(catalog, key: tuple, field: str, value) -> list[tuple[str, str, str]]:
    """One candidate as presets.toml's own lines: [(key, old, new)] of every field it
    writes (``preset_changes``) and the revision the proposal bumps."""
    row = catalog.preset(tuple(key))

    def old(name: str) -> str:
        now = getattr(row, name, None)
        return "(none)" if now is None else toml_value(now)

    return [(name, old(name), toml_value(new))
            for name, new in preset_changes(catalog, key, field, value).items()] + [
        ("revision", str(row.revision), str(next_revision(catalog, key)))]


def patch_tables(catalog, dst: Path, changes: dict[tuple, dict]) -> None:
    """Copy the table root of ``catalog`` to ``dst`` with ``changes`` ({(city, level,
    revision): {field: value}}) written into presets.toml in place (comments and layout
    stay): the changed fields (``preset_changes``) and the row's ``next_revision``."""
    dst = Path(dst)
    files.copy_tree(catalog.root, dst)  # regular files only: no FIFO or device is copied
    path = dst / PRESETS
    fields = {tuple(key): {**{f: v for field, value in row.items()
                              for f, v in preset_changes(catalog, key, field, value).items()},
                           "revision": next_revision(catalog, key)}
              for key, row in changes.items()}
    atomic.write_text(path, patch_rows(files.read_text(path), KEY, fields,
                                       defaults={"revision": 1}))

"""regenerateWithTweaks (05 §16, §18): the next preset along the design's tuning ladder.

A pure, designer-facing proposal: the generator never applies it inside a call (a row
that cannot reach its band in 50 attempts is a design fault, 05 §15.2, and must stay
visible). Adopting a proposal is a table edit with ``revision + 1`` (05 §12.3), which is
what the returned preset carries.

The rungs, their order and step sizes are ``ladder.LADDER``; here is where each rung stops:
layers >= 1 and <= the density's distribution length, element_count >= 3 and <= the city's
elements, every share > 0; a rung that would break a table rule is skipped, and when none
is left the proposal names step 5 (dispersion, a rules.toml setting).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from .codes import DENSITIES
from .errors import InputError
from .ladder import LADDER, MIN_ELEMENTS, SHARE_STEP, STEP_5
from .table_model import PresetRow

TOO_HARD = ("tool_free_low", "tool_assist_low", "clickable_ratio", "triple_chains",
            "near_surface")
TOO_EASY = ("tool_free_high",)
LAYOUT = ("direct_triple", "same_layer_cluster")


@dataclass(frozen=True)
class Tweak:
    preset: PresetRow | None  # the proposed row (revision + 1); None: no table rung left
    step: str  # what changed, in a designer's words
    direction: str  # too_hard | too_easy | layout


def direction_of(failure_reason: str) -> str:
    """too_hard / too_easy / layout (05 §16) of a record's failure_reason."""
    if failure_reason in TOO_HARD or failure_reason == "too_hard":
        return "too_hard"
    if failure_reason in TOO_EASY or failure_reason == "too_easy":
        return "too_easy"
    if failure_reason in LAYOUT or failure_reason == "layout":
        return "layout"
    raise InputError(f"no tuning direction for failure reason {failure_reason!r}")


def _shares(preset: PresetRow, distributions: dict[str, tuple[str, ...]]) -> list[Decimal]:
    used = preset.layer_distribution or distributions[preset.density][:preset.layers]
    return [Decimal(s) for s in used]


def regenerate_with_tweaks(preset: PresetRow, failure_reason: str, *,
                           distributions: dict[str, tuple[str, ...]],
                           city_elements: int) -> Tweak:
    """The next preset along the ladder for ``failure_reason`` (a record's reason, or
    ``too_hard`` / ``too_easy``). ``distributions``: density -> shares (density.toml);
    ``city_elements``: elements the city has (the too-easy bound of element_count)."""
    way = direction_of(failure_reason)
    if way == "layout":
        return Tweak(None, "a layout rule failed (direct triple or same-layer cluster): the "
                     "ladder has no rung for it; review the dispersion rules", way)
    hard = way == "too_hard"
    for rung in LADDER:
        got = _RUNGS[rung.field](preset, hard, distributions, city_elements)
        if got is not None:
            changes, words = got
            return Tweak(replace(preset, revision=preset.revision + 1, **changes), words, way)
    return Tweak(None, "no preset rung left: " + STEP_5[0 if hard else 1], way)


def _density(preset: PresetRow, hard: bool, distributions, city_elements):
    d = DENSITIES.index(preset.density)
    d2 = d - 1 if hard else d + 1
    if 0 <= d2 < len(DENSITIES) and preset.layer_distribution is None \
            and len(distributions[DENSITIES[d2]]) >= preset.layers:
        return {"density": DENSITIES[d2]}, f"density {preset.density} -> {DENSITIES[d2]}"
    return None


def _layers(preset: PresetRow, hard: bool, distributions, city_elements):
    n = preset.layers - 1 if hard else preset.layers + 1
    if 1 <= n <= len(distributions[preset.density]) and preset.layer_distribution is None:
        return {"layers": n}, f"layers {preset.layers} -> {n}"
    return None


def _elements(preset: PresetRow, hard: bool, distributions, city_elements):
    n = preset.element_count - 1 if hard else preset.element_count + 1
    if not MIN_ELEMENTS <= n <= city_elements:
        return None
    ppe = preset.pieces_per_element
    if isinstance(ppe, tuple):
        ppe = ppe[:n] if hard else ppe + (3,)
    return ({"element_count": n, "pieces_per_element": ppe},
            f"element_count {preset.element_count} -> {n}")


def _distribution(preset: PresetRow, hard: bool, distributions, city_elements):
    shares = _shares(preset, distributions)
    if len(shares) < 2:
        return None
    src, dst = (0, -1) if hard else (-1, 0)
    if shares[src] - SHARE_STEP <= 0:
        return None
    shares[src] -= SHARE_STEP
    shares[dst] += SHARE_STEP
    text = tuple(f"{s:.2f}" for s in shares)
    return ({"layer_distribution": text}, f"layer_distribution -> {', '.join(text)} "
            f"({'bottom to top' if hard else 'top to bottom'})")


_RUNGS = {"density_class": _density, "layers": _layers, "element_count": _elements,
          "layer_distribution": _distribution}

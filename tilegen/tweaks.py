"""regenerateWithTweaks (05 §16, §18): the next preset along the design's tuning ladder.

A pure, designer-facing proposal: the generator never applies it inside a call (a row
that cannot reach its band in 50 attempts is a design fault, 05 §15.2, and must stay
visible). Adopting a proposal is a table edit with ``revision + 1`` (05 §12.3), which is
what the returned preset carries.

Ladder, too hard: 1. density one class down; 2. layers - 1 (>= 1); 3. element_count - 1
(>= 3); 4. move 0.05 of share from the bottom layer to the top; 5. loosen dispersion
(``near_depth`` 1 -> 2, a rules.toml setting shared by every row, so it is named, not
applied). Too easy: the mirror image (element_count <= the city's elements, layers <= the
density's distribution length). A rung that would break a table rule (layers above the
distribution's length, a share <= 0) is skipped. Never touched: slot 7, bypass 3, the
occlusion thresholds, 50 attempts, the tool budget (05 §16: "do not touch the base rules").
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal

from .codes import DENSITIES
from .errors import InputError
from .table_model import PresetRow

SHARE_STEP = Decimal("0.05")
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
    nxt = lambda **kw: replace(preset, revision=preset.revision + 1, **kw)  # noqa: E731
    d = DENSITIES.index(preset.density)
    d2 = d - 1 if hard else d + 1
    if 0 <= d2 < len(DENSITIES) and preset.layer_distribution is None \
            and len(distributions[DENSITIES[d2]]) >= preset.layers:
        return Tweak(nxt(density=DENSITIES[d2]),
                     f"density {preset.density} -> {DENSITIES[d2]}", way)
    L2 = preset.layers - 1 if hard else preset.layers + 1
    longest = len(distributions[preset.density])
    if 1 <= L2 <= longest and preset.layer_distribution is None:
        return Tweak(nxt(layers=L2), f"layers {preset.layers} -> {L2}", way)
    E2 = preset.element_count - 1 if hard else preset.element_count + 1
    if 3 <= E2 <= city_elements:
        ppe = preset.pieces_per_element
        if isinstance(ppe, tuple):
            ppe = ppe[:E2] if hard else ppe + (3,)
        return Tweak(nxt(element_count=E2, pieces_per_element=ppe),
                     f"element_count {preset.element_count} -> {E2}", way)
    shares = _shares(preset, distributions)
    if len(shares) >= 2:
        src, dst = (0, -1) if hard else (-1, 0)
        if shares[src] - SHARE_STEP > 0:
            shares[src] -= SHARE_STEP
            shares[dst] += SHARE_STEP
            text = tuple(f"{s:.2f}" for s in shares)
            return Tweak(nxt(layer_distribution=text),
                         f"layer_distribution -> {', '.join(text)} "
                         f"({'bottom to top' if hard else 'top to bottom'})", way)
    return Tweak(None, "no preset rung left: "
                 + ("loosen dispersion (rules.toml near_depth 1 -> 2)" if hard
                    else "tighten dispersion (rules.toml near_depth)"), way)

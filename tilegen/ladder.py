"""The 05 §16 tuning ladder, declared once (decision 118). ``tweaks`` (regenerateWithTweaks:
the next preset), the audit's ``tune`` (every candidate value of each rung) and the
report's drill-down (the moves of each line and the sweep to try first) all read it.

A row too hard climbs down the rungs in this order; a row too easy (tool-free above its
band) goes the other way on the same rungs. Step 5 (loosen dispersion, ``near_depth``) is
a rules.toml setting shared by every row, so it is named, never a per-row change. Never
touched (05 §16 "do not touch the base rules"): slot 7, bypass 3, the occlusion
thresholds, 50 attempts, the tool budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

DENSITY_CLASS = "density_class"  # the sweep/tune knob: the index of the density in DENSITIES
SHARE_STEP = Decimal("0.05")  # rung 4: the share moved between the bottom and top layers
MIN_ELEMENTS = 3  # rung 3 never goes below three element types


@dataclass(frozen=True)
class Rung:
    field: str  # the table field (sweep/tune knob) the rung moves
    easier: str  # the step for a row too hard, in a designer's words
    harder: str  # the mirror step for a row too easy
    why: str  # why the easier step helps
    shown: str = ""  # the field as presets.toml names it, when the knob is no key of its own


LADDER = (
    # density picks the layer shares (density.toml), never the piece count: that is
    # element_count x pieces_per_element, whatever the class
    Rung(DENSITY_CLASS, "density one class lower", "density one class higher",
         "the same pieces spread by the lower class's layer shares (density.toml): fewer "
         "on the upper layers, so fewer lie covered", shown="density"),
    Rung("layers", "one layer fewer", "one layer more", "fewer pieces buried under others"),
    Rung("element_count", "one element type fewer", "one element type more",
         "fewer kinds to hold in the slot at once"),
    Rung("layer_distribution", f"{SHARE_STEP} of share moved from the bottom to the top layer",
         f"{SHARE_STEP} of share moved from the top to the bottom layer",
         "more pieces on top, where they are clickable"),
)
# A sweep names a rung as presets.toml does (``shown``; its values are the knob's own):
# sweep field -> tune's knob. ``--vary density=0:2:1`` varies density_class.
SWEPT = {r.shown: r.field for r in LADDER if r.shown}
STEP_5 = ("loosen dispersion (rules.toml near_depth 1 -> 2)",
          "tighten dispersion (rules.toml near_depth)")  # (too hard, too easy): no table rung

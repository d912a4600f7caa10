"""GTSRB "darkening" (CURE-TSR challenge 04) as PIL `ImageEnhance.Brightness(f)`, f ≤ 1.

CURE-TSR publishes no generation code or parameters (perturbations.md §C). The same lab's
CURE-OR documents its under/over-exposure as PIL `ImageEnhance.Brightness` with factors
linearly spaced between a minimum and a maximum; we follow that recipe. Enhance.Brightness is
`Image.blend(black, img, f)` = f·x (Pillow truncates to uint8; this family keeps float
precision, within 1/255 of Pillow). Default GTSRB table (conf/families/gtsrb_cure.yaml):
CURE-OR's underexposure range linspace(0.4, 0.08, 5). See docs/families.md.
"""

from __future__ import annotations

from ..errors import UserError
from . import Family


class Darken(Family):
    name = "darken"
    param_format = "×{}"
    low, high = 0.0, 1.0

    def __init__(self, params, name: str | None = None):
        super().__init__(params, name)
        bad = [p for p in self.params if not self.low <= float(p) <= self.high]
        if bad:
            raise UserError(f"{self.name}: factors must lie in [{self.low}, {self.high}], got {bad}")

    def apply(self, x, factor, generator):
        return (x * float(factor)).clamp(0.0, 1.0)

"""GTSRB "exposure" (CURE-TSR challenge 06, over-exposure) as PIL `ImageEnhance.Brightness(f)`,
f ≥ 1: x·f saturated at white.

Same recipe as `Darken` (CURE-OR's documented PIL enhancement with linearly spaced factors);
Pillow's extrapolating blend clips to [0, 255] and truncates, this family clips in float.
Default GTSRB table: CURE-OR's overexposure range linspace(1.4, 6.0, 5) = 1.4, 2.55, 3.7,
4.85, 6.0. See docs/families.md.
"""

from __future__ import annotations

from .darken import Darken


class Exposure(Darken):
    name = "exposure"
    param_format = "×{}"
    low, high = 1.0, float("inf")

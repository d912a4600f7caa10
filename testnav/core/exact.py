"""Rounding onto binary grids, so that float decisions come out the same on every machine.

A surrogate's splits and a search's rankings are discrete decisions on float sums. When two
candidates tie in exact arithmetic (two features that cut a forest node into the same halves,
two points with the same gaps), the float values still differ in the last bits, by amounts
that depend on the summation order, the BLAS kernel and the input's own last digits; the
winner then changes from machine to machine. Values rounded to a multiple of a power of two
well above that noise are exact binary fractions: their sums are exact whatever the order,
ties stay ties, and the tie-break (a seeded feature order, an index) is the same everywhere.
"""

from __future__ import annotations

import numpy as np

# 2⁻²⁴ ≈ 6e-8: eight orders of magnitude above the float noise of a solve or a sum (1e-16), and
# below the 1e-6 to which a ground truth's normalised ρ (and raw KID, relative to its scale)
# reproduces across machines (docs/reproducibility.md): the rounding changes no digit that
# means anything, and a value that the ground truth's own noise moves across a grid line
# moves by less than that tolerance.
GRID = 2.0**-24


def on_grid(x, step: float = GRID) -> np.ndarray:
    """x rounded to the nearest multiple of `step` (a power of two, so the division is exact)."""
    return np.round(np.asarray(x, dtype=float) / step) * step


def relative_grid(x, step: float = GRID) -> np.ndarray:
    """x on a grid `step` × 2^e, 2^e the power of two at or above max |x|: the same relative
    precision for values of any scale (raw KID runs into the thousands)."""
    x = np.asarray(x, dtype=float)
    top = float(np.max(np.abs(x))) if x.size else 0.0
    if not np.isfinite(top) or top == 0:
        return x
    return on_grid(x, step * 2.0 ** int(np.frexp(top)[1]))

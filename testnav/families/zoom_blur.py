"""ImageNet-C / CIFAR-10-C `zoom_blur`: average of the image and centre zooms of itself.

Parameters per level: (start, stop, step) of the reference's `np.arange` of zoom factors,
kept as the arange triple (not the expanded list) so the float-rounding quirk of arange is
reproduced: `np.arange(1, 1.11, .01)` has 12 factors 1.00 … 1.11, and z = 1.00 is included,
so the original counts twice. Follows imagecorruptions 1.1.5 `zoom_blur` / `clipped_zoom`:
for each z, crop ceil(H/z) × ceil(W/z) at ((H − ch)//2, (W − cw)//2), `scipy.ndimage.zoom`
by z with order 1 (corner-aligned linear interpolation), keep the top-left H × W; out =
(x + Σ_z zoom_z(x)) / (len(zs) + 1), clip. Hendrycks crops with H for both axes; identical
on square images. One pair of 2-tap linear gathers per factor, each for the whole batch.
"""

from __future__ import annotations

import numpy as np
import torch

from . import Family
from .resample import scipy_clipped_zoom_taps, take


def zoom_factors(param) -> np.ndarray:
    start, stop, step = (float(v) for v in param)
    return np.arange(start, stop, step)


def _interp(x: torch.Tensor, dim: int, taps) -> torch.Tensor:
    lo, hi, w = taps  # CPU tensors: take() moves (and caches) the indices
    shape = [1] * x.dim()
    shape[dim] = -1
    w = w.to(device=x.device, dtype=x.dtype).reshape(shape)
    a = take(x, dim, lo)
    return a + (take(x, dim, hi) - a) * w


class ZoomBlur(Family):
    reference = "zoom_blur"  # imagecorruptions' function this reproduces (tests, bench)
    name = "zoom_blur"
    param_format = "zoom {}–{}"

    def apply(self, x, param, generator):
        h, w = x.shape[-2:]
        zs = zoom_factors(param)
        out = x.clone()
        for z in zs:  # ≤ 26 factors in the published tables
            out += _interp(_interp(x, 2, scipy_clipped_zoom_taps(h, float(z))), 3, scipy_clipped_zoom_taps(w, float(z)))
        return (out / (len(zs) + 1)).clamp(0.0, 1.0)

"""ImageNet-C / CIFAR-10-C `contrast`: pull every pixel towards its channel mean.

Follows imagecorruptions / Hendrycks `contrast`: m = mean of each channel over H and W (per
image), out = (x − m)·c + m, clip to [0, 1]. c < 1 lowers contrast (c = 0.05 is nearly flat).
The mean is accumulated in float64 like numpy's.
"""

from __future__ import annotations

import torch

from . import Family


class Contrast(Family):
    reference = "contrast"  # imagecorruptions' function this reproduces (tests, bench)
    name = "contrast"
    param_format = "×{}"

    def apply(self, x, c, generator):
        m = x.mean(dim=(2, 3), keepdim=True, dtype=torch.float64).to(x.dtype)
        return ((x - m).mul_(float(c)).add_(m)).clamp_(0.0, 1.0)

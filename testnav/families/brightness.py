"""Brightness (ImageNet-C / MNIST-C): add c to the HSV value channel, clip to [0, 1]."""

from __future__ import annotations

import torch

from . import Family


class Brightness(Family):
    """HSV round trip in closed form: with hue and saturation fixed every RGB channel is
    proportional to V, so the result is x · V'/V (and V' itself where V ≤ 0, where HSV
    saturation is 0). On one gray channel this is clip(x + c, 0, 1), exactly MNIST-C.

    One pass over the batch: both cases are offset + x · ratio with per-pixel (B, 1, H, W)
    offset and ratio (0 and V'/V, or V' and 0), which rounds exactly as x · (V'/V) alone."""

    name = "brightness"

    def apply(self, x, c, generator):
        v = x.amax(dim=1, keepdim=True)
        v_new = (v + float(c)).clamp_(0.0, 1.0)
        lit = v > 0
        ratio = (v_new / v.clamp_min(1e-12)).mul_(lit)  # finite, so × 0 is exactly 0 and × 1 exact
        offset = v_new.masked_fill(lit, 0.0)
        return torch.addcmul(offset, x, ratio).clamp_(0.0, 1.0)

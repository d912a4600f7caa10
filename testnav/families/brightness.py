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
    writes_out = True

    def apply(self, x, c, generator, out=None):
        v = x.amax(dim=1, keepdim=True)
        v_new = (v + float(c)).clamp_(0.0, 1.0)
        dark = v == 0
        ratio = v_new.div(v).masked_fill_(dark, 0.0)  # V'/V where lit (the inf at V = 0 is masked)
        offset = v_new.mul_(dark)  # V' where dark, else 0 (V' is finite)
        return torch.addcmul(offset, x, ratio, out=out).clamp_(0.0, 1.0)

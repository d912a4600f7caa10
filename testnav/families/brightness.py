"""Brightness (ImageNet-C / MNIST-C): add c to the HSV value channel, clip to [0, 1]."""

from __future__ import annotations

import torch

from . import Family

FLT_MIN = float(torch.finfo(torch.float32).tiny)


class Brightness(Family):
    """HSV round trip in closed form: with hue and saturation fixed every RGB channel is
    proportional to V, so the result is x · V'/V (and V' itself where V ≤ 0, where HSV
    saturation is 0). On one gray channel this is clip(x + c, 0, 1), exactly MNIST-C.

    One pass over the batch: both cases are offset + x · ratio with per-pixel (B, 1, H, W)
    offset and ratio (0 and V'/V, or V' and 0), which rounds exactly as x · (V'/V) alone.
    The per-pixel work avoids boolean masks (a comparison and a bool × float product cost 3–4×
    an arithmetic pass here): where V = 0, x = 0 in every channel, so dividing by
    max(V, FLT_MIN) instead of V leaves x · ratio = 0 there, and offset = V' − V'·sign(V)."""

    reference = "brightness"  # imagecorruptions' function this reproduces (tests, bench)

    name = "brightness"
    param_format = "+{}"
    writes_out = True

    def apply(self, x, c, generator, out=None):
        v = x.amax(dim=1, keepdim=True)
        v_new = (v + float(c)).clamp_(0.0, 1.0)
        lit = torch.sign(v)  # 1 where V > 0, 0 where V = 0
        ratio = v_new / v.clamp_min_(FLT_MIN)  # V'/V where lit; finite (≤ 1/FLT_MIN) and times x = 0 where dark
        offset = torch.addcmul(v_new, v_new, lit, value=-1.0)  # V' where dark, else exactly 0
        return torch.addcmul(offset, x, ratio, out=out).clamp_(0.0, 1.0)

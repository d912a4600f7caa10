"""Brightness (ImageNet-C / MNIST-C): add c to the HSV value channel, clip to [0, 1]."""

from __future__ import annotations

import torch

from . import Family


class Brightness(Family):
    """HSV round trip in closed form: with hue and saturation fixed every RGB channel is
    proportional to V, so the result is x · V'/V (and V' itself where V = 0, where HSV
    saturation is 0). On one gray channel this is clip(x + c, 0, 1), exactly MNIST-C."""

    name = "brightness"

    def apply(self, x, c, generator):
        v = x.amax(dim=1, keepdim=True)
        v_new = (v + float(c)).clamp(0.0, 1.0)
        scaled = x * (v_new / v.clamp_min(1e-12))
        return torch.where(v > 0, scaled, v_new.expand_as(x)).clamp(0.0, 1.0)

"""MNIST-C `scale` (the TestifAI paper's "zoom"): shrink the digit about the centre by f."""

from __future__ import annotations

import torch

from . import Family
from .affine import recentre, warp_inverse


class Scale(Family):
    """AffineTransform(scale=(1/f, 1/f)) used as the inverse map: output pixel p samples
    the input at centre + (p − centre)/f, so f < 1 shrinks the content."""

    moves_content = True  # objects move: detection boxes must be mapped with them

    name = "zoom"
    param_format = "×{}"

    def apply(self, x, f, generator):
        b, _, h, w = x.shape
        a = torch.eye(2, dtype=torch.float64, device=x.device).expand(b, 2, 2) / float(f)
        return warp_inverse(x, recentre(a, h, w))

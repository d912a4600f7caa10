"""ImageNet-C / CIFAR-10-C `speckle_noise`: multiplicative Gaussian noise x + x·N(0, c²).

Follows Hendrycks' `make_imagenet_c.py` / imagecorruptions `speckle_noise`: one normal draw
per element (every channel of every pixel independently), then clip to [0, 1]. The noise comes
from the caller's CPU generator (one (B, C, H, W) draw, image i gets slice i), so CPU and GPU
give the same output; it matches numpy's stream only in distribution.
"""

from __future__ import annotations

import torch

from . import Family, blockwise


class SpeckleNoise(Family):
    name = "speckle_noise"
    random = True

    def apply(self, x, c, generator):
        noise = torch.randn(x.shape, generator=generator, dtype=torch.float32).to(device=x.device, dtype=x.dtype)
        c = float(c)
        return blockwise(lambda xb, nb: torch.addcmul(xb, xb, nb, value=c).clamp_(0.0, 1.0), x, noise)

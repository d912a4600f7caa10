"""ImageNet-C / CIFAR-10-C `speckle_noise`: multiplicative Gaussian noise x + x·N(0, c²).

Follows Hendrycks' `make_imagenet_c.py` / imagecorruptions `speckle_noise`: one normal draw
per element (every channel of every pixel independently), then clip to [0, 1]. The noise comes
from the caller's CPU generator (one (B, C, H, W) draw, image i gets slice i), so CPU and GPU
give the same output; it matches numpy's stream only in distribution.

On the CPU the draw is made block by block (`blockwise`), each block's noise used while in
cache. That is the same stream as one (B, C, H, W) draw: torch's CPU normal fills uniforms in
order and transforms them in groups of 16, redrawing the last 16 when the size is not a multiple
of 16, so draws split at multiples of 16 concatenate to the whole draw (tested). Images whose size is not a multiple of 16 are drawn whole.
"""

from __future__ import annotations

import torch

from . import Family, blockwise


def normal_noise(shape, generator: torch.Generator, like: torch.Tensor) -> torch.Tensor:
    return torch.randn(shape, generator=generator, dtype=torch.float32).to(device=like.device, dtype=like.dtype)


class SpeckleNoise(Family):
    name = "speckle_noise"
    random = True

    def apply(self, x, c, generator):
        c = float(c)
        if x.device.type == "cpu" and x[0].numel() % 16 == 0:
            return blockwise(lambda xb: torch.addcmul(xb, xb, normal_noise(xb.shape, generator, xb), value=c)
                             .clamp_(0.0, 1.0), x)
        noise = normal_noise(x.shape, generator, x)
        return blockwise(lambda xb, nb: torch.addcmul(xb, xb, nb, value=c).clamp_(0.0, 1.0), x, noise)

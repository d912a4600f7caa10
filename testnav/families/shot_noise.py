"""ImageNet-C / CIFAR-10-C `shot_noise`: Poisson photon noise Poisson(x·c)/c.

Follows imagecorruptions / Hendrycks `shot_noise` (c is the photon count at full intensity:
smaller c is noisier), one Poisson draw per element, then clip to [0, 1]. Sampled by
`torch.poisson` on the caller's CPU generator so CPU and GPU outputs are identical (the rates
are moved to the CPU for the draw); matches numpy's stream only in distribution.
"""

from __future__ import annotations

import torch

from . import Family


class ShotNoise(Family):
    reference = "shot_noise"  # imagecorruptions' function this reproduces (tests, bench)
    name = "shot_noise"
    param_format = "c {}"
    random = True

    def apply(self, x, c, generator):
        c = float(c)
        rate = (x.detach().to("cpu", torch.float32) * c).clamp_min(0.0)
        counts = torch.poisson(rate, generator=generator)
        return (counts / c).clamp(0.0, 1.0).to(device=x.device, dtype=x.dtype)

"""MNIST-C `shear` with the pre-0.20 scikit-image matrix.

MNIST-C (2019) called `AffineTransform(shear=c)`, which before scikit-image PR #6717
built [[1, −sin c], [0, cos c]]; scikit-image ≥ 0.20 builds [[1, −tan c], [0, 1]]. We build
the old matrix ourselves so the published corruption is reproduced on any scikit-image.
The sign of c is drawn per image (MNIST-C: np.random.choice([−c, c])).
"""

from __future__ import annotations

import torch

from . import Family, random_signs
from .affine import recentre, warp_inverse


class Shear(Family):
    moves_content = True  # objects move: detection boxes must be mapped with them
    name = "shear"
    param_format = "{} rad"
    random = True

    def apply(self, x, c, generator):
        b, _, h, w = x.shape
        angle = float(c) * random_signs(generator, b, x.device)
        a = torch.zeros(b, 2, 2, dtype=torch.float64, device=x.device)
        a[:, 0, 0] = 1.0
        a[:, 0, 1] = -torch.sin(angle)
        a[:, 1, 1] = torch.cos(angle)
        return warp_inverse(x, recentre(a, h, w))

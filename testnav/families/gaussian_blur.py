"""ImageNet-C / CIFAR-10-C `gaussian_blur` (also the GTSRB/CURE "Gaussian blur" family).

Follows `skimage.filters.gaussian(x, sigma=c, channel_axis=-1)` as imagecorruptions and
Hendrycks call it: every channel filtered separately by scipy's separable Gaussian, kernel
radius int(truncate·σ + 0.5) with truncate = 4.0, mode 'nearest' (edge replication), then
clip. Each axis is one (n, n) matrix with the border rule folded in (`resample.gaussian_matrix`),
so the whole batch is two matrix products; agrees with skimage to float32 rounding.
"""

from __future__ import annotations

from . import Family
from .resample import gaussian_matrix, separable


class GaussianBlur(Family):
    name = "gaussian_blur"

    def __init__(self, params, name: str | None = None, truncate: float = 4.0):
        super().__init__(params, name)
        self.truncate = float(truncate)

    def apply(self, x, sigma, generator):
        return gaussian_blur(x, float(sigma), self.truncate).clamp(0.0, 1.0)

    def describe(self) -> dict:
        return {**super().describe(), "truncate": self.truncate}


def gaussian_blur(x, sigma: float, truncate: float = 4.0):
    h, w = x.shape[-2:]
    return separable(x, gaussian_matrix(h, sigma, truncate), gaussian_matrix(w, sigma, truncate))

"""ImageNet-C / CIFAR-10-C `gaussian_blur` (also the GTSRB/CURE "Gaussian blur" family).

Follows `skimage.filters.gaussian(x, sigma=c, channel_axis=-1)` as imagecorruptions and
Hendrycks call it: every channel filtered separately by scipy's separable Gaussian, kernel
radius int(truncate·σ + 0.5) with truncate = 4.0, mode 'nearest' (edge replication), then
clip. The batch is edge-padded by the radius on both axes once, then each axis is a weighted
sum of 2·radius + 1 shifted views (the padding columns of the row pass are the row-filtered edge
columns, so one pad serves both passes). A dense (n, n) matrix product per axis gives the same
values but does n multiply-adds per pixel instead of 2·radius + 1: at 64 px and σ = 0.6, five
times slower on one core. Agrees with skimage to float32 rounding.

On the CPU, for float32 or uint8 images, the two passes run as one compiled loop per image plane
(`_blur`), each row's taps in cache, instead of 2·(2·radius + 1) tensor passes over the block:
the same bits (each tap a fused multiply-add, as torch's `add(alpha=)` rounds it: `fma.fma32`;
tested against the tensor passes).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from numba import njit

from . import Family
from .fma import fma32


class GaussianBlur(Family):
    reference = "gaussian_blur"  # imagecorruptions' function this reproduces (tests, bench)
    name = "gaussian_blur"
    param_format = "σ {}"
    writes_out = True

    def __init__(self, params, name: str | None = None, truncate: float = 4.0):
        super().__init__(params, name)
        self.truncate = float(truncate)

    def apply(self, x, sigma, generator, out=None):
        return gaussian_blur(x, float(sigma), self.truncate, out=out).clamp_(0.0, 1.0)

    def describe(self) -> dict:
        return {**super().describe(), "truncate": self.truncate}


def gaussian_taps(sigma: float, truncate: float = 4.0) -> list[float]:
    """scipy.ndimage.gaussian_filter1d's weights: exp(−k²/2σ²) for |k| ≤ int(truncate·σ + ½), sum 1."""
    radius = int(truncate * float(sigma) + 0.5)
    k = np.arange(-radius, radius + 1, dtype=np.float64)
    w = np.exp(-0.5 / float(sigma) ** 2 * k**2)
    return (w / w.sum()).tolist()


@njit(nogil=True, cache=True, error_model="numpy")
def _blur(x, taps, second, out):
    """x (P, H, W) float32 or uint8 planes, edge-replicated by r = len(taps) // 2 on both axes;
    the column pass (taps, over padded rows), then the row pass (`second`: taps × scale) into out
    (P, H, W) float32. Each output is t₀·v₀, then fma(vₖ, tₖ, ·) for k = 1 … 2r, as the tensor
    passes round it."""
    planes, h, w = x.shape
    n = len(taps)
    r = n // 2
    padded = np.empty((h + 2 * r, w + 2 * r), np.float32)
    rows = np.empty(w + 2 * r, np.float32)
    for p in range(planes):
        for i in range(h + 2 * r):
            src, dst = x[p, min(max(i - r, 0), h - 1)], padded[i]
            for j in range(r):
                dst[j] = np.float32(src[0])
                dst[r + w + j] = np.float32(src[w - 1])
            for j in range(w):
                dst[r + j] = np.float32(src[j])
        for i in range(h):
            a, t = padded[i], taps[0]
            for j in range(w + 2 * r):
                rows[j] = a[j] * t
            for k in range(1, n):
                a, t = padded[i + k], taps[k]
                for j in range(w + 2 * r):
                    rows[j] = fma32(a[j], t, rows[j])
            o, t = out[p, i], second[0]
            for j in range(w):
                o[j] = rows[j] * t
            for k in range(1, n):
                t = second[k]
                for j in range(w):
                    o[j] = fma32(rows[j + k], t, o[j])
    return out


def gaussian_blur(x, sigma: float, truncate: float = 4.0, scale: float = 1.0, out=None):
    """Mode 'nearest' (edge replication) on H and W of x (B, C, H, W; integer x gives float32),
    times `scale` (folded into the second pass's taps: glass blur's ×255 and ÷255 cost no pass
    of their own), written into `out` when given (a float tensor of x's shape)."""
    taps = gaussian_taps(sigma, truncate)
    r = len(taps) // 2
    h, w = x.shape[-2:]
    if r == 0:
        return torch.mul(x, taps[0] * scale, out=out)
    compiled = x.device.type == "cpu" and x.dtype in (torch.float32, torch.uint8) and x.dim() == 4 and x.numel() > 0
    if compiled and x.is_contiguous() and (out is None or (out.dtype == torch.float32 and out.is_contiguous())):
        out = torch.empty(x.shape, dtype=torch.float32) if out is None else out
        first = np.array(taps, np.float32)  # the tensor passes' scalars, as torch rounds them
        second = np.array([t * scale for t in taps], np.float32)
        _blur(x.reshape(-1, h, w).numpy(), first, second, out.view(-1, h, w).numpy())
        return out
    return tensor_blur(x, taps, scale, out)


def tensor_blur(x, taps: list[float], scale: float = 1.0, out=None):
    """`gaussian_blur`'s two passes as tensor operations: every device and dtype."""
    r = len(taps) // 2
    h, w = x.shape[-2:]
    if not x.is_floating_point():  # once here, not in every tap's mixed-dtype add (and pad float only)
        x = x.float()
    xp = F.pad(x, (r, r, r, r), mode="replicate")
    rows = xp[:, :, 0:h] * taps[0]
    for k, t in enumerate(taps[1:], 1):
        rows.add_(xp[:, :, k : k + h], alpha=t)
    out = torch.mul(rows[..., 0:w], taps[0] * scale, out=out)
    for k, t in enumerate(taps[1:], 1):
        out.add_(rows[..., k : k + w], alpha=t * scale)
    return out

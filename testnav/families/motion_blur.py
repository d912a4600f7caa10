"""Motion blur as imagecorruptions reimplements ImageMagick's MotionBlurImage.

Kernel width 2r+1, one-sided weights ∝ exp(−i²/2s²) normalised to 1, angle θ ~ U(−45°, 45°)
per image; tap i shifts the image by (dx, dy) = (−⌈i cosθ − ½⌉, −⌈i sinθ − ½⌉) with edge
replication, and taps stop once a shift reaches the image size. Batched: one gather per
tap for the whole batch (each image with its own angle), no loop over images or pixels; the
angles are drawn for the whole batch, then the taps run per CPU block (`blockwise`).
"""

from __future__ import annotations

import torch

from . import Family, blockwise, uniform


class MotionBlur(Family):
    reference = "motion_blur"  # imagecorruptions' function this reproduces (tests, bench)
    name = "motion_blur"
    param_format = "r {}, σ {}"
    random = True

    def apply(self, x, param, generator):
        radius, sigma = param
        width = int(radius) * 2 + 1
        taps = torch.arange(width, dtype=torch.float64)
        kernel = torch.exp(-(taps**2) / (2 * float(sigma) ** 2))
        kernel = (kernel / kernel.sum()).to(x.device)
        theta = torch.deg2rad(uniform(generator, x.shape[0], -45.0, 45.0, x.device))  # whole batch first
        return blockwise(lambda xb, tb: _motion_blur(xb, kernel, tb), x, theta)


def _motion_blur(x, kernel, theta):
    b, c, h, w = x.shape
    rows = torch.arange(h, device=x.device)
    cols = torch.arange(w, device=x.device)
    flat = x.reshape(b, c, h * w)
    out = torch.zeros(b, c, h * w, dtype=torch.float64, device=x.device)
    alive = torch.ones(b, dtype=torch.bool, device=x.device)
    for i in range(len(kernel)):
        dy = -torch.ceil(i * torch.sin(theta) - 0.5).long()
        dx = -torch.ceil(i * torch.cos(theta) - 0.5).long()
        alive &= (dy.abs() < h) & (dx.abs() < w)  # imagecorruptions breaks here; monotone in i
        if not alive.any():
            break
        r = (rows[None, :] - dy[:, None]).clamp(0, h - 1)  # (B, H)
        q = (cols[None, :] - dx[:, None]).clamp(0, w - 1)  # (B, W)
        index = (r[:, :, None] * w + q[:, None, :]).reshape(b, 1, h * w).expand(b, c, h * w)
        out += (kernel[i] * alive.to(out.dtype))[:, None, None] * torch.gather(flat, 2, index)
    return out.clamp(0.0, 1.0).to(x.dtype).reshape(b, c, h, w)

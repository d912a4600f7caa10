"""Synthetic colour scenes for checking and timing image families without a data set.

A smooth low-frequency colour field (bicubic from 5×5) with three sharp-edged discs: smooth
regions exercise blurs and noise, edges exercise resampling (pixelate, JPEG, zoom). The test
suite compares families against the reference on them, and `make bench` times both on them.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def scenes(n: int, size: int, generator: torch.Generator) -> torch.Tensor:
    """(n, 3, size, size) in [0, 1], not yet rounded; draws from `generator` in a fixed order."""
    x = F.interpolate(torch.rand(n, 3, 5, 5, generator=generator), size=size, mode="bicubic", align_corners=False)
    yy, xx = torch.meshgrid(torch.arange(size) / size, torch.arange(size) / size, indexing="ij")
    for _ in range(3):
        cy, cx, r = torch.rand(3, n, 1, 1, generator=generator)
        disc = (((yy - cy) ** 2 + (xx - cx) ** 2) < (0.1 + 0.25 * r) ** 2).float()[:, None]
        x = x * (1 - disc) + torch.rand(n, 3, 1, 1, generator=generator) * disc
    return x

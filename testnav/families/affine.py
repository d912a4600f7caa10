"""Batched affine warp with skimage `warp` semantics (bilinear, constant 0 outside).

MNIST-C's scale and shear build an `AffineTransform` re-centred on the image centre
((W−1)/2, (H−1)/2) and pass it as `inverse_map`: the matrix maps *output* pixel
coordinates (x = column, y = row) to the input coordinates that are sampled.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def recentre(a: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """(B, 2, 2) linear parts → (B, 2, 3) affine maps that keep the image centre fixed."""
    centre = torch.tensor([(width - 1) / 2, (height - 1) / 2], dtype=a.dtype, device=a.device)
    t = centre - a @ centre
    return torch.cat([a, t[..., None]], dim=-1)


def warp_inverse(x: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """Sample x at m · (col, row, 1) for every output pixel; m is (B, 2, 3) in pixel units."""
    b, _, h, w = x.shape
    rows, cols = torch.meshgrid(
        torch.arange(h, dtype=m.dtype, device=x.device), torch.arange(w, dtype=m.dtype, device=x.device), indexing="ij"
    )
    pts = torch.stack([cols, rows, torch.ones_like(cols)], dim=-1).reshape(-1, 3)  # (HW, 3)
    src = torch.einsum("bij,pj->bpi", m, pts).reshape(b, h, w, 2)
    grid = torch.stack([2 * src[..., 0] / (w - 1) - 1, 2 * src[..., 1] / (h - 1) - 1], dim=-1)
    out = F.grid_sample(x, grid.to(x.dtype), mode="bilinear", padding_mode="zeros", align_corners=True)
    return out.clamp(0.0, 1.0)

"""Image data sets from local files (never downloaded at run time). One reader per module.

A reader's `load()` returns (images, labels): a float tensor (N, C, H, W) in [0, 1] at the
data set's native size (or `image_size` when given) and an int64 tensor (N,). `describe()`
identifies the files for cache keys. A missing file raises a UserError that says what to
put where.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from ..errors import UserError


def require(path, what: str) -> Path:
    p = Path(str(path)).expanduser()
    if not p.exists():
        raise UserError(f"{p} does not exist: {what}")
    return p


def to_tensor(images: list, image_size) -> torch.Tensor:
    """PIL images → (N, C, H, W) float in [0, 1], resized (bilinear, antialiased) if asked."""
    from PIL import Image

    arrays = []
    for im in images:
        im = im.convert("RGB") if im.mode not in ("RGB", "L") else im
        if image_size is not None:
            size = (image_size, image_size) if isinstance(image_size, int) else tuple(image_size)[::-1]
            im = im.resize(size, Image.BILINEAR)
        a = np.asarray(im, dtype=np.uint8)
        arrays.append(a[..., None] if a.ndim == 2 else a)
    x = torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).contiguous()
    return x.float() / 255.0


def subset(n_total: int, n: int | None, seed: int) -> np.ndarray:
    """A fixed random subset of n of n_total indices (all of them, in order, when n is None)."""
    if n is None or n >= n_total:
        return np.arange(n_total)
    return np.sort(np.random.default_rng(seed).choice(n_total, size=n, replace=False))

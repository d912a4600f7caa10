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


def open_image(path, mode: str = "RGB"):
    """One image file as a PIL image in `mode`. Real data sets mix modes (Tiny-ImageNet and
    ImageNet hold grayscale and CMYK JPEGs among the RGB ones); converting to RGB replicates a
    gray channel, which is what torchvision's read_image followed by OpenCV's GRAY2RGB gives
    (the Tiny-ImageNet publishers' pipeline), and PIL decodes JPEGs bit-identically to
    torchvision's decoder."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            return im.convert(mode) if im.mode != mode else im.copy()
    except (UnidentifiedImageError, OSError) as e:
        raise UserError(f"{path} is not a readable image ({type(e).__name__}: {e})") from None
    except Exception as e:  # noqa: BLE001  (a plug-in's own failure, e.g. ultralytics' patched Image.open)
        raise UserError(f"{path} is not a readable image ({type(e).__name__})") from None


def to_tensor(images: list, image_size=None) -> torch.Tensor:
    """PIL images (all of one mode) → (N, C, H, W) float in [0, 1], resized with PIL's bilinear
    filter to `image_size` (an int: square; or [H, W]) if given. Without a size every image must
    have the same size: a batch is one tensor."""
    from PIL import Image

    arrays = []
    for im in images:
        if image_size is not None:
            size = (image_size, image_size) if isinstance(image_size, int) else tuple(image_size)[::-1]
            im = im.resize(size, Image.BILINEAR)
        a = np.asarray(im, dtype=np.uint8)
        arrays.append(a[..., None] if a.ndim == 2 else a)
    shapes = sorted({a.shape[:2] for a in arrays})
    if len(shapes) > 1:
        raise UserError(
            f"the images come in {len(shapes)} sizes (e.g. {shapes[0]} and {shapes[-1]} H×W): set the "
            f"reader's image_size (benchmark.data.image_size=…) to resize them to one"
        )
    x = torch.from_numpy(np.stack(arrays)).permute(0, 3, 1, 2).contiguous()
    return x.float() / 255.0


def subset(n_total: int, n: int | None, seed: int) -> np.ndarray:
    """A fixed random subset of n of n_total indices (all of them, in order, when n is None)."""
    if n is None or n >= n_total:
        return np.arange(n_total)
    return np.sort(np.random.default_rng(seed).choice(n_total, size=n, replace=False))

"""Separable resampling operators shared by the image families.

Every operator here is linear along one axis, so it is a small (n_out, n_in) matrix (or an
index table) built once per image size in float64 and applied to the whole batch as
`rows @ x @ cols.T`: two batched matrix products, no loop over images or pixels. Each builder
reproduces one reference library's arithmetic exactly (kernel, support, border rule and
coordinate convention), so the families that use them match those libraries to float
rounding on the same input.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch


def separable(x: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor) -> torch.Tensor:
    """rows @ x @ cols.T for x (B, C, H, W), rows (H', H), cols (W', W), in x's dtype/device."""
    rows = rows.to(device=x.device, dtype=x.dtype)
    cols = cols.to(device=x.device, dtype=x.dtype)
    return rows @ x @ cols.T


def take(x: torch.Tensor, dim: int, index: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """x.index_select(dim, index) for dim 2 or 3 of a 4-D tensor (into `out`, contiguous, when
    given), as an index_select on a 2-D view: rows (dim 2) as whole rows of x viewed (B·C·H, W),
    at a row index over the whole batch; columns (dim 3) along dim 1 of x viewed (B·C·H, W),
    at an int32 index. On the CPU these are index_select's fast loops (whole-row copies; a
    contiguous inner loop, with int32 indices faster than int64): faster than index_select on
    dims 2 or 3 of the 4-D tensor, than advanced indexing and than gather, on every shape the
    image families use (zoom blur: 1.3–1.7× overall; docs/families.md). `index` is a CPU tensor
    (the size-keyed builders' output); its device copy comes from `batch_index`."""
    b, c, h, w = x.shape
    x2 = x.reshape(-1, w)
    key = tuple(index.tolist())
    if dim == 2:
        rows = batch_index(key, b * c, h, x.device, torch.int64)
        y = torch.index_select(x2, 0, rows, out=None if out is None else out.view(-1, w))
        return y.view(b, c, len(key), w)
    cols = batch_index(key, 1, 0, x.device, torch.int32)
    y = torch.index_select(x2, 1, cols, out=None if out is None else out.view(-1, len(key)))
    return y.view(b, c, h, len(key))


@lru_cache(maxsize=512)
def batch_index(index: tuple, n: int, stride: int, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """`index` offset by i·stride for i < n, concatenated (the rows of n stacked images of
    `stride` rows each; n = 1: the index itself), as `dtype` on `device`. Cached by value: every
    family call asks for the same few, and building one anew was a few small ops and a
    host-to-device copy per block (≈ 10 % of pixelate at 64 px)."""
    offsets = torch.arange(n, dtype=torch.int64)[:, None] * stride
    return (offsets + torch.tensor(index, dtype=torch.int64)).view(-1).to(device=device, dtype=dtype)


@lru_cache(maxsize=256)
def sparse_taps(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(n_out, n_in) matrix with few non-zeros per row → (index, weight), both (K, n_out), K the
    most non-zeros in a row (padding taps have weight 0)."""
    nz = m != 0
    k = int(nz.sum(1).max())
    order = torch.argsort((~nz).to(torch.int8), dim=1, stable=True)[:, :k]  # non-zero columns first
    weight = m.gather(1, order)
    return order.T.contiguous(), weight.T.contiguous()


def apply_taps(x: torch.Tensor, dim: int, m: torch.Tensor) -> torch.Tensor:
    """m applied along dim (2 = rows, 3 = columns) of x as Σ_k w_k · x[idx_k]: a few gathers
    instead of a dense product when m is sparse (Pillow's box filter: ⌈scale⌉ + 1 taps)."""
    index, weight = sparse_taps(m)
    shape = [1, 1, 1, 1]
    shape[dim] = -1
    out = None
    for idx, w in zip(index, weight.to(device=x.device, dtype=x.dtype)):
        term = take(x, dim, idx)
        if not bool((w == 1).all()):
            term = term * w.reshape(shape)
        out = term if out is None else out.add_(term)
    return out


@lru_cache(maxsize=256)
def pil_box_matrix(n_in: int, n_out: int) -> torch.Tensor:
    """Pillow's `Image.BOX` resampling along one axis (Resample.c `precompute_coeffs`).

    Pillow's box filter is 1 on (−½, ½] of the *scaled* coordinate, so output pixel j averages
    the input pixels whose centres fall in (centre_j − s/2, centre_j + s/2], s = n_in/n_out
    (clipped to ≥ 1 when upsampling). This is NOT area averaging for non-integer ratios (a pixel
    half inside the footprint counts fully or not at all); for integer ratios the two agree.
    Upsampling gives a one-hot row per output pixel (the source pixel under its centre).
    """
    scale = n_in / n_out
    fscale = max(scale, 1.0)
    support = 0.5 * fscale
    m = np.zeros((n_out, n_in))
    for j in range(n_out):  # once per size (cached), not per image
        centre = (j + 0.5) * scale
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), n_in)
        t = (np.arange(lo, hi) - centre + 0.5) / fscale
        w = ((t > -0.5) & (t <= 0.5)).astype(np.float64)
        if w.sum() > 0:
            m[j, lo:hi] = w / w.sum()
    return torch.from_numpy(m)


@lru_cache(maxsize=256)
def pil_nearest_index(n_in: int, n_out: int) -> torch.Tensor:
    """Pillow's `Image.NEAREST` resize along one axis (Geometry.c `ImagingScaleAffine`): the
    source coordinate starts at a/2 with a = n_in/n_out and is *accumulated* by a per output
    pixel in double precision, then floored. The accumulation (not (j+½)·a) decides ties at
    exact integers, so it is replayed with a sequential cumulative sum."""
    a = n_in / n_out
    steps = np.full(n_out, a)
    steps[0] = a * 0.5
    pos = np.cumsum(steps)  # sequential in numpy, like the C loop
    return torch.from_numpy(np.clip(np.floor(pos).astype(np.int64), 0, n_in - 1))


def cubic_weights(t: np.ndarray, a: float = -0.75) -> np.ndarray:
    """Keys cubic convolution kernel; OpenCV's INTER_CUBIC uses a = −0.75."""
    t = np.abs(t)
    return np.where(
        t <= 1, ((a + 2) * t - (a + 3)) * t * t + 1, np.where(t < 2, ((a * t - 5 * a) * t + 8 * a) * t - 4 * a, 0.0)
    )


@lru_cache(maxsize=256)
def cv2_cubic_zoom_matrix(n: int, scale: float) -> torch.Tensor:
    """`cv2.resize(fx=scale, INTER_CUBIC)` followed by a centre crop back to n pixels: output
    pixel j samples the input at (j + off + ½)/scale − ½ (half-pixel centres), off =
    (round(n·scale) − n)//2, with 4 cubic taps (a = −0.75) and replicated borders."""
    big = int(round(n * scale))
    off = (big - n) // 2
    src = (np.arange(n) + off + 0.5) / scale - 0.5
    base = np.floor(src).astype(int)
    frac = src - base
    m = np.zeros((n, n))
    for tap in range(-1, 3):  # four taps
        np.add.at(m, (np.arange(n), np.clip(base + tap, 0, n - 1)), cubic_weights(frac - tap))
    return torch.from_numpy(m)


@lru_cache(maxsize=256)
def translate_matrix(n: int, shift: float) -> torch.Tensor:
    """Shift content by `shift` pixels towards higher indices with bilinear weights and zeros
    outside (cv2.warpAffine INTER_LINEAR, BORDER_CONSTANT 0): output j samples input j − shift.
    Integer shifts are exact 0/1 matrices."""
    src = np.arange(n) - float(shift)
    base = np.floor(src).astype(int)
    frac = src - base
    m = np.zeros((n, n))
    for tap, w in ((0, 1 - frac), (1, frac)):
        idx = base + tap
        ok = (idx >= 0) & (idx < n) & (w != 0)
        m[np.arange(n)[ok], idx[ok]] += w[ok]
    return torch.from_numpy(m)


@lru_cache(maxsize=512)
def scipy_clipped_zoom_taps(n: int, zoom: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """imagecorruptions' `clipped_zoom` along one axis as linear-interpolation taps.

    Crop ch = ceil(n/z) pixels starting at (n − ch)//2, `scipy.ndimage.zoom(order=1)` to
    round(ch·z) pixels (scipy's default grid_mode=False maps output o to input
    o·(ch − 1)/(round(ch·z) − 1), corners aligned), keep the first n. Returns (lo, hi, w):
    output j = (1 − w)·x[lo] + w·x[hi], indices into the full (uncropped) axis.
    """
    ch = int(math.ceil(n / float(zoom)))
    top = (n - ch) // 2
    out = int(round(ch * zoom))
    ratio = (ch - 1) / (out - 1) if out > 1 else 0.0
    src = np.arange(n) * ratio
    lo = np.floor(src).astype(np.int64)
    w = src - lo
    hi = np.minimum(lo + 1, ch - 1)
    return torch.from_numpy(lo + top), torch.from_numpy(hi + top), torch.from_numpy(w)

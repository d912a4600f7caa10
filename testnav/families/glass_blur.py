"""ImageNet-C / CIFAR-10-C `glass_blur`: Gaussian blur, local pixel shuffling, Gaussian blur.

Parameters per level: (σ, δ = max_delta, iterations). Follows imagecorruptions 1.1.5
(`glass_blur` + the numba `_shuffle_pixels_njit_glass_blur`), which uses the real H and W:

1. x ← uint8(gaussian(x, σ)·255) / 255: blurred, then *truncated* to the uint8 grid (kept:
   it is part of the corruption, not of the dataset pipeline);
2. `iterations` times, scan h = H−δ … δ+1 (descending), and within each row w = W−δ … δ+1
   (descending); for each pixel draw (dx, dy) = randint(−δ, δ, size=2), i.e. each offset in
   [−δ, δ−1] (numpy's exclusive upper bound: biased up/left), and "swap" x[h, w] with
   x[h+dy, w+dx]. On an H×W×3 array the tuple swap assigns from views, so pixel (h, w)
   receives the neighbour's *current* value and the neighbour keeps its own: a copy, not a
   swap (checked against the numba kernel in tests);
3. clip(gaussian(x, σ)).

On the CPU the scan runs as written, compiled (`_scan`), on a map of source pixels that is then
gathered once per channel. Elsewhere it runs vectorised (`tensor_shuffle`), exact although the
scan is sequential: with copy semantics, pixel p reads its
source q = p + (dy, dx) either before q has been visited (then it gets q's value from the
start of the iteration) or after (then it gets whatever q received, recursively). Which case
holds depends only on the scan order, not on the data, so every pixel's value at the end of an
iteration is x[src(root(p))], where root follows the chain of already-visited sources. The
chains are resolved for the whole batch at once by pointer doubling (log₂ of the longest chain
gather steps, a handful). Given the same offsets the result equals the sequential loop exactly
(tests replay the numba kernel's own offsets); only the random stream differs (a `bit_stream`
seeded by the caller's generator, one (B, iterations, H−2δ, W−2δ, 2) draw, instead of numba's
Mersenne Twister), so
the family matches the reference in distribution, not sample by sample.

Not reproduced: MNIST-C's 2-D glass blur, where the same tuple swap on a 2-D array is a real
swap. imagecorruptions stacks gray images to 3 channels, so copy semantics is what it applies
to gray input too, and so does this family (C = 1 or 3).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numba import njit

from . import Family, bit_stream, blockwise, random_bytes
from .gaussian_blur import gaussian_blur


def shuffle_offsets(generator: torch.Generator, b: int, height: int, width: int, delta: int, iterations: int):
    """(B, iterations, H−2δ, W−2δ, 2) offsets (dx, dy) in [−δ, δ−1], laid out in scan order:
    [.., a, c, :] belongs to pixel (h, w) = (H−δ−a, W−δ−c).

    Where 2δ is a power of two (every δ of the 32 and 64 px tables) each offset is the top
    log₂(2δ) bits of one signed random byte of a `bit_stream`, exactly uniform, int8: 8 offsets
    per 64-bit draw instead of one `randint` call per offset (which was a third of the family's
    time at 64 px)."""
    shape = (b, iterations, height - 2 * delta, width - 2 * delta, 2)
    k = (2 * delta).bit_length() - 1
    if 2 * delta != 1 << k or k > 7:
        return torch.randint(-delta, delta, shape, generator=generator, dtype=torch.int32)
    signed = random_bytes(math.prod(shape), bit_stream(generator)).view(torch.int8)
    return signed.bitwise_right_shift_(8 - k).view(shape)  # arithmetic shift: the top k bits, −δ … δ−1


def shuffle(x: torch.Tensor, offsets: torch.Tensor, delta: int) -> torch.Tensor:
    """The sequential copy-scan of imagecorruptions' glass blur on x (B, C, H, W), with offsets
    as from `shuffle_offsets`: compiled on the CPU, vectorised elsewhere (the same result)."""
    if x.device.type != "cpu":
        return tensor_shuffle(x, offsets, delta)
    b, c, h, w = x.shape
    x = x.contiguous()
    out = torch.empty_like(x)
    _scan(x.view(b, c, h * w).numpy(), offsets.contiguous().numpy(), delta, out.view(b, c, h * w).numpy())
    return out


@njit(nogil=True, cache=True, error_model="numpy")
def _scan(x, offsets, delta, out):
    """x, out (B, C, H·W): per image, the scan on a map of source pixels (each scanned pixel takes
    its source's current entry: copy semantics), then one gather per channel."""
    b, channels, hw = x.shape
    iterations, nr, nc = offsets.shape[1:4]
    h, w = nr + 2 * delta, nc + 2 * delta
    src = np.empty(hw, np.int64)
    for i in range(b):
        for p in range(hw):
            src[p] = p
        for it in range(iterations):
            for a in range(nr):
                row = h - delta - a
                for c in range(nc):
                    col = w - delta - c
                    dx, dy = offsets[i, it, a, c, 0], offsets[i, it, a, c, 1]
                    src[row * w + col] = src[(row + dy) * w + col + dx]
        for ch in range(channels):
            xi, oi = x[i, ch], out[i, ch]
            for p in range(hw):
                oi[p] = xi[src[p]]
    return out


def tensor_shuffle(x: torch.Tensor, offsets: torch.Tensor, delta: int) -> torch.Tensor:
    """Apply the sequential copy-scan of imagecorruptions' glass blur, vectorised.

    x (B, C, H, W); offsets as from `shuffle_offsets` (any integer dtype, any device).
    Works in scan-index space: scanned pixel j (j-th visited) has source q_j; it is *chained*
    when q_j is a scanned pixel visited before j (rank(q_j) < j), and then takes q_j's final
    value; otherwise it takes x[q_j]. Pointer doubling finds each chain's end; the per-iteration
    pixel maps are composed and the image is gathered once at the end.
    """
    if delta == 1:  # no chains can form: a plain gather per iteration
        return _shuffle_delta1(x, offsets)
    b, c, h, w = x.shape
    dev = x.device
    nr, nc = h - 2 * delta, w - 2 * delta
    # int32 arithmetic (half the memory traffic); int64 only where gather needs it
    offsets = offsets.to(device=dev, dtype=torch.int32)
    j = torch.arange(nr * nc, device=dev, dtype=torch.int32)
    row = h - delta - j // nc  # pixel visited j-th: rows descending, columns descending
    col = w - delta - j % nc
    p = (row * w + col).long()
    total = None  # composed pixel map (identity before the first iteration)
    for it in range(offsets.shape[1]):  # a handful of iterations
        off = offsets[:, it].reshape(b, -1, 2)
        r = row + off[..., 1]
        q_col = col + off[..., 0]
        src = (r * w + q_col).long()  # (B, P) flat source pixel of each scanned pixel
        inside = (r > delta) & (r <= h - delta) & (q_col > delta) & (q_col <= w - delta)
        q_rank = (h - delta - r) * nc + (w - delta - q_col)
        link = torch.where(inside & (q_rank < j), q_rank, j).long()  # (B, P) in scan-index space
        while True:  # pointer doubling to the end of each chain (a few steps)
            nxt = link.gather(1, link)
            if torch.equal(nxt, link):
                break
            link = nxt
        src = src.gather(1, link)
        step = torch.arange(h * w, device=dev).expand(b, h * w).clone().index_copy_(1, p, src)
        total = step if total is None else total.gather(1, step)
    flat = x.reshape(b, c, h * w)
    return flat.gather(2, total[:, None, :].expand(b, c, h * w)).reshape(b, c, h, w)


def _shuffle_delta1(x: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """δ = 1: offsets in {−1, 0} point up or left, at pixels scanned later, so no source has
    been visited and each iteration is a plain gather, step = p + dx + W·dy on rows and columns
    2 … H−1 (the scan's). Built directly in image order (the scan-order offsets flipped): 2–3×
    faster than the chain resolution, which has nothing to resolve here. dx + W·dy comes from
    each (dx, dy) int8 pair read as one little-endian int16 (dx its sign-extended low byte, dy
    its high byte): contiguous shifts, twice as fast as arithmetic on the interleaved pairs."""
    b, c, h, w = x.shape
    pair = offsets.to(device=x.device, dtype=torch.int8).flip(2, 3).view(torch.int16)[..., 0]  # image order
    d = torch.bitwise_left_shift(pair, 8).bitwise_right_shift_(8).add_(pair.bitwise_right_shift(8), alpha=w)
    steps = torch.arange(h * w, device=x.device).view(1, 1, h, w).repeat(b, d.shape[1], 1, 1)
    steps[:, :, 2:h, 2:w].add_(d)
    steps = steps.view(b, -1, h * w)
    total = steps[:, 0]
    for it in range(1, steps.shape[1]):
        total = total.gather(1, steps[:, it])
    flat = x.reshape(b, c, h * w)
    return flat.gather(2, total[:, None, :].expand(b, c, h * w)).reshape(b, c, h, w)


class GlassBlur(Family):
    reference = "glass_blur"  # imagecorruptions' function this reproduces (tests, bench)
    name = "glass_blur"
    param_format = "σ {}, δ {}, {}×"
    random = True

    def apply(self, x, param, generator):
        sigma, delta, iterations = float(param[0]), int(param[1]), int(param[2])
        b, _, h, w = x.shape
        offsets = shuffle_offsets(generator, b, h, w, delta, iterations)

        def glass(xb, ob, out=None):
            # np.uint8 truncation of the first blur, in 255 units (the blur of [0, 1] values
            # stays below 256/255, so no clip); +1e-4 so that values that are mathematically
            # integers are not pushed down by float32 rounding. float32 batches keep it as
            # uint8: the shuffle's gather moves a quarter of the bytes (2× faster), and the
            # second blur reads uint8 as it reads float32 (same values, same result), its taps
            # carrying the ÷255. Other dtypes stay in their own (uint8 would come back float32).
            # float32 → int16 → uint8 is the same truncation (values in [0, 256)) but 3× faster
            # than float32 → uint8, whose CPU conversion is not vectorised.
            y = gaussian_blur(xb, sigma, scale=255.0).add_(1e-4)
            y = y.to(torch.int16).to(torch.uint8) if y.dtype == torch.float32 else y.floor_()
            return gaussian_blur(shuffle(y, ob, delta), sigma, scale=1 / 255, out=out).clamp_(0.0, 1.0)

        return blockwise(glass, x, offsets, into=True)

    def describe(self) -> dict:
        return {**super().describe(), "offsets": "bytes/sfc64"}  # randint, then torch's MT bytes (Dec 2026)

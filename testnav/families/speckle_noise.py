"""ImageNet-C / CIFAR-10-C `speckle_noise`: multiplicative Gaussian noise x + x·N(0, c²).

Follows Hendrycks' `make_imagenet_c.py` / imagecorruptions `speckle_noise`: one normal draw
per element (every channel of every pixel independently), then clip to [0, 1]. The noise comes
from the caller's CPU generator, so CPU and GPU give the same output; it matches numpy's stream
only in distribution.

The normal draws are 16-bit inverse-CDF lookups (`normal16`), not `torch.randn`: torch's CPU
sampler (Mersenne Twister + Box–Muller) dominates this family's time, while 16 random bits of
SFC64 (`bit_stream`) and a table lookup cost a small fraction of one such value (`make bench`
measures the family against imagecorruptions). Each table entry is the mean of the standard normal over one of 65,536
equally likely bins, so the draw has
mean 0 exactly (the table is antisymmetric), variance 1 − 1.5·10⁻⁶, and differs from a continuous
normal only inside bins of width ≤ 4·10⁻⁵ SD near the centre and in the outermost 2 × 2⁻¹⁶ of
probability (|z| > 4.3, drawn as ±4.39): far below one uint8 step of x·c·z for every table entry.
The bits come from one `bit_stream` per call, read in order, so drawing block by block (in
cache, `blockwise`) gives the same stream as one draw for the whole batch (tested).

On the CPU, for float32 images, each block's lookups, multiply-add and clip run as one compiled
loop (`_speckle`) instead of four tensor passes: the same bits as `torch.addcmul`, which fuses
x + (c·x)·z into one rounding in its AVX2 and AVX-512 kernels, as the loop does (`fma.fma32`;
tested against the tensor code).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
from numba import njit
from scipy.special import ndtri

from . import Family, bit_stream, blockwise, random_bytes
from .fma import fma32


@lru_cache(maxsize=1)
def normal_table() -> torch.Tensor:
    """65,536 float32 conditional means E[z | z in bin k], bins of probability 2⁻¹⁶, rounded to
    2⁻²⁰ so that a last-ulp difference between two machines' libm cannot change an entry."""
    n = 1 << 16
    edges = ndtri(np.arange(n // 2 + 1, dtype=np.float64) / n)  # −inf … 0: the lower half
    pdf = np.exp(-0.5 * edges**2) / np.sqrt(2 * np.pi)
    lower = (pdf[:-1] - pdf[1:]) * n  # (φ(a) − φ(b)) / P(bin): negative below 0
    lower = np.round(lower * 2.0**20) / 2.0**20
    return torch.from_numpy(np.concatenate([lower, -lower[::-1]]).astype(np.float32))


def normal16(n: int, bits, out: torch.Tensor | None = None) -> torch.Tensor:
    """The next n standard normal draws (n a multiple of 4) of a `bit_stream`, 16 bits each, on
    the CPU (into `out`, n float32 values, when given)."""
    words = random_bytes(2 * n, bits).view(torch.uint16)
    return torch.index_select(normal_table(), 0, words.to(torch.int32), out=out)


@njit(nogil=True, cache=True, error_model="numpy")
def _speckle(x, words, table, c, out):
    """out = clip(fma(c·x, table[word], x), 0, 1) over flat float32 x and uint16 words, 512 values
    at a time: the lookups first, then a plain vector loop over them."""
    zero, one = np.float32(0.0), np.float32(1.0)
    z = np.empty(512, np.float32)
    for s in range(0, len(x), 512):
        m = min(512, len(x) - s)
        for k in range(m):
            z[k] = table[np.int32(words[s + k])]
        xs, os = x[s : s + m], out[s : s + m]
        for k in range(m):
            y = fma32(c * xs[k], z[k], xs[k])
            y = y if y > zero else zero
            os[k] = y if y < one else one
    return out


class SpeckleNoise(Family):
    reference = "speckle_noise"  # imagecorruptions' function this reproduces (tests, bench)
    name = "speckle_noise"
    param_format = "σ {}"
    random = True
    compiled = True  # CPU float32 blocks through `_speckle` (False: the tensor passes, as on other devices)

    def apply(self, x, c, generator):
        c, bits = float(c), bit_stream(generator)

        def speckle(xb, nb=None, out=None):
            contiguous = xb.is_contiguous() and (out is None or out.is_contiguous())
            if nb is None and self.compiled and xb.dtype == torch.float32 and contiguous:  # one compiled loop
                out = torch.empty_like(xb) if out is None else out
                words = bits.random_raw(xb.numel() // 4).view(np.uint16)
                _speckle(xb.view(-1).numpy(), words, normal_table().numpy(), np.float32(c), out.view(-1).numpy())
                return out
            if nb is None:  # drawn into a float32 output block itself: one block-sized temporary fewer
                into = out is not None and out.dtype == torch.float32
                nb = normal16(xb.numel(), bits, out.view(-1) if into else None).view(xb.shape)
            return torch.addcmul(xb, xb, nb, value=c, out=out).clamp_(0.0, 1.0)

        if x.device.type == "cpu" and x[0].numel() % 4 == 0:
            return blockwise(speckle, x, into=True)  # drawn block by block, in cache
        noise = normal16(-(-x.numel() // 4) * 4, bits)[: x.numel()].view(x.shape).to(x.device)
        return blockwise(speckle, x, noise, into=True)

    def describe(self) -> dict:
        return {**super().describe(), "noise": "normal16/sfc64"}  # torch.randn, then torch's MT bits (Dec 2026)

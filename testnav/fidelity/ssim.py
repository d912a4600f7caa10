"""SSIM per perturbed image against its clean original, averaged over the set (TestNav §4.1).

The formula is torchmetrics' `structural_similarity_index_measure` (Gaussian window σ = 1.5,
11 taps, reflect padding, full-map mean since torchmetrics 1.5), with `data_range` fixed
rather than inferred per batch so values are comparable across configurations. The 2-D window
is an outer product of 1-D Gaussians, so it can be applied one axis at a time with the same
result to float rounding (tests check it against
torchmetrics). Each axis of the window, reflect padding included, is a small matrix, so
the whole filter is two matrix products (the second one flat, over every row of every image): several times faster on the ground-truth hot path than
torchmetrics' grouped 11×11 convolution (see `make bench`). The clean image's local mean and
variance are computed once in `prepare`, so each configuration filters only the three maps
that involve the perturbed image, a cache-sized block of images at a time.
"""

from __future__ import annotations

import functools

import torch

from ..sets import PerSet
from .base import Metric


@functools.lru_cache(maxsize=64)
def window_matrix(n: int, sigma: float, dtype, device) -> torch.Tensor:
    """(n, n) matrix W with (W @ v)[i] = Σ_k g[k] · v[reflect(i − pad + k)]: one axis of the
    Gaussian window with torchmetrics' reflect padding folded in. Cached: every block of every
    configuration uses the same few (never modified in place)."""
    size = int(3.5 * sigma + 0.5) * 2 + 1
    pad = (size - 1) // 2
    x = torch.arange(size, dtype=torch.float64) - pad
    g = torch.exp(-(x**2) / (2 * sigma**2))
    g = g / g.sum()
    src = torch.arange(n)[:, None] - pad + torch.arange(size)[None, :]  # (n, size) padded positions
    src = src.abs()  # reflect at 0 (no edge repeat)
    src = torch.where(src > n - 1, 2 * (n - 1) - src, src)
    w = torch.zeros(n, n, dtype=torch.float64)
    w.scatter_add_(1, src, g.expand(n, size).clone())
    return w.to(dtype=dtype, device=device)


def gaussian_filter(x: torch.Tensor, wh: torch.Tensor, ww: torch.Tensor) -> torch.Tensor:
    """wh @ x @ ww.T for every (h, w) slice of x: along h one small product per slice, along w
    one flat product over all rows at once (the same numbers as a product per slice)."""
    *lead, h, w = x.shape
    return ((wh @ x).reshape(-1, w) @ ww.T).reshape(*lead, h, w)


def clean_statistics(
    target: torch.Tensor, sigma: float = 1.5, data_range: float = 1.0, k1: float = 0.01, k2: float = 0.03
) -> tuple[torch.Tensor, ...]:
    """The target's terms of the SSIM map: its local mean μ_t, μ_t² + c1 and σ_t² + c2. They do
    not depend on the perturbed image, so the ground truth computes them once for D instead of
    once per configuration."""
    h, w = target.shape[-2:]
    wh = window_matrix(h, sigma, target.dtype, target.device)
    ww = window_matrix(w, sigma, target.dtype, target.device)
    mu_t, e_tt = gaussian_filter(torch.stack((target, target * target)), wh, ww)
    mu_tt = mu_t * mu_t
    var_t = (e_tt - mu_tt).clamp_min_(0.0)
    return mu_t, mu_tt.add_((k1 * data_range) ** 2), var_t.add_((k2 * data_range) ** 2)


def ssim_per_image(
    preds: torch.Tensor,
    target: torch.Tensor,
    data_range: float = 1.0,
    sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    clean: tuple[torch.Tensor, ...] | None = None,
) -> torch.Tensor:
    """(B,) SSIM of each image pair, (B, C, H, W) inputs, averaged over channels and the full map.
    `clean`: the target's `clean_statistics` (same σ, data range, k1, k2), when already computed.

    The map is built in place on the three filtered maps (one temporary besides), so on a block
    of images that fits in cache every step reads and writes cached memory."""
    h, w = preds.shape[-2:]
    wh = window_matrix(h, sigma, preds.dtype, preds.device)
    ww = window_matrix(w, sigma, preds.dtype, preds.device)
    mu_t, mu_tt_c1, var_t_c2 = clean_statistics(target, sigma, data_range, k1, k2) if clean is None else clean
    maps = torch.empty((3, *preds.shape), dtype=preds.dtype, device=preds.device)  # the three maps, written in place
    maps[0].copy_(preds)
    torch.mul(preds, preds, out=maps[1])
    torch.mul(preds, target, out=maps[2])
    mu_p, e_pp, e_pt = gaussian_filter(maps, wh, ww)
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    mu_pp = mu_p * mu_p
    mu_pt = mu_p.mul_(mu_t)
    den = e_pp.sub_(mu_pp).clamp_min_(0.0).add_(var_t_c2)  # σ_p² + σ_t² + c2
    den.mul_(mu_pp.add_(mu_tt_c1))  # × (μ_p² + μ_t² + c1)
    num = e_pt.sub_(mu_pt).mul_(2.0).add_(c2)  # 2σ_pt + c2
    num.mul_(mu_pt.mul_(2.0).add_(c1))  # × (2μ_pμ_t + c1)
    return num.div_(den).flatten(-3).mean(-1)


class SSIM(PerSet, Metric):
    """`batch_size` images are compared at a time: a block of 256 MNIST-sized images keeps the
    three filtered maps in cache (a block of 1,000 does not), while its steps are large enough
    to split over two threads; on two cores 256 and 384 took 12-15 % less than 128, on one core
    the same (measured on mnist5k's sibling stacks); larger images fit fewer per block but
    still gain from in-place steps."""

    higher_is_better = True
    column = "ssim"

    def __init__(self, data_range: float = 1.0, sigma: float = 1.5, batch_size: int = 256, name: str = "ssim"):
        super().__init__(name)
        self.require("data_range", data_range, data_range > 0, "the images' value range, > 0 (1.0 for [0, 1])")
        self.require("sigma", sigma, sigma > 0, "the Gaussian window's σ, > 0 (torchmetrics: 1.5)")
        self.require("batch_size", batch_size, int(batch_size) == batch_size and batch_size >= 1, "a whole number ≥ 1")
        self.data_range, self.sigma, self.batch_size = float(data_range), float(sigma), int(batch_size)

    def prepare(self, clean) -> None:
        self.clean = clean.images
        self._stats = [
            clean_statistics(self.clean[i : i + self.batch_size], self.sigma, self.data_range)
            for i in range(0, len(self.clean), self.batch_size)
        ]

    @torch.no_grad()
    def per_set(self, view) -> torch.Tensor:
        """Block by block of D, every stacked set's images of that block against the same
        clean block (its statistics read once per block, for all sets)."""
        n = len(self.clean)
        total = torch.zeros(view.sets, dtype=torch.float64, device=self.clean.device)
        for b, i in enumerate(range(0, n, self.batch_size)):
            clean = self.clean[i : i + self.batch_size]
            for s, perturbed in enumerate(view.parts):
                x = perturbed[i : i + self.batch_size]
                total[s] += ssim_per_image(x, clean, self.data_range, self.sigma, clean=self._stats[b]).double().sum()
        return total / n

    def describe(self) -> dict:
        return {"metric": "ssim", "data_range": self.data_range, "sigma": self.sigma}

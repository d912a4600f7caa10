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
that involve the perturbed image.
"""

from __future__ import annotations

import torch

from .base import Metric


def window_matrix(n: int, sigma: float, dtype, device) -> torch.Tensor:
    """(n, n) matrix W with (W @ v)[i] = Σ_k g[k] · v[reflect(i − pad + k)]: one axis of the
    Gaussian window with torchmetrics' reflect padding folded in."""
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


def clean_statistics(target: torch.Tensor, sigma: float = 1.5) -> tuple[torch.Tensor, ...]:
    """The target's local mean and variance: they do not depend on the perturbed image, so the
    ground truth computes them once for D instead of once per configuration."""
    h, w = target.shape[-2:]
    wh = window_matrix(h, sigma, target.dtype, target.device)
    ww = window_matrix(w, sigma, target.dtype, target.device)
    mu_t, e_tt = gaussian_filter(torch.stack((target, target * target)), wh, ww)
    return mu_t, (e_tt - mu_t * mu_t).clamp_min(0.0)


def ssim_per_image(
    preds: torch.Tensor,
    target: torch.Tensor,
    data_range: float = 1.0,
    sigma: float = 1.5,
    k1: float = 0.01,
    k2: float = 0.03,
    clean: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """(B,) SSIM of each image pair, (B, C, H, W) inputs, averaged over channels and the full map.
    `clean`: the target's `clean_statistics`, when already computed."""
    h, w = preds.shape[-2:]
    wh = window_matrix(h, sigma, preds.dtype, preds.device)
    ww = window_matrix(w, sigma, preds.dtype, preds.device)
    mu_t, var_t = clean_statistics(target, sigma) if clean is None else clean
    mu_p, e_pp, e_pt = gaussian_filter(torch.stack((preds, preds * preds, preds * target)), wh, ww)
    mu_pp, mu_tt, mu_pt = mu_p * mu_p, mu_t * mu_t, mu_p * mu_t
    var_p = (e_pp - mu_pp).clamp_min(0.0)
    cov = e_pt - mu_pt
    c1, c2 = (k1 * data_range) ** 2, (k2 * data_range) ** 2
    ssim_map = ((2 * mu_pt + c1) * (2 * cov + c2)) / ((mu_pp + mu_tt + c1) * (var_p + var_t + c2))
    return ssim_map.flatten(1).mean(1)


class SSIM(Metric):
    higher_is_better = True
    column = "ssim"

    def __init__(self, data_range: float = 1.0, sigma: float = 1.5, batch_size: int = 1024, name: str = "ssim"):
        super().__init__(name)
        self.require("data_range", data_range, data_range > 0, "the images' value range, > 0 (1.0 for [0, 1])")
        self.require("sigma", sigma, sigma > 0, "the Gaussian window's σ, > 0 (torchmetrics: 1.5)")
        self.require("batch_size", batch_size, int(batch_size) == batch_size and batch_size >= 1, "a whole number ≥ 1")
        self.data_range, self.sigma, self.batch_size = float(data_range), float(sigma), int(batch_size)

    def prepare(self, clean) -> None:
        self.clean = clean.images
        self._stats = [
            clean_statistics(self.clean[i : i + self.batch_size], self.sigma)
            for i in range(0, len(self.clean), self.batch_size)
        ]

    @torch.no_grad()
    def __call__(self, view) -> float:
        perturbed = view.images
        total = 0.0
        for b, i in enumerate(range(0, len(perturbed), self.batch_size)):
            s = ssim_per_image(
                perturbed[i : i + self.batch_size],
                self.clean[i : i + self.batch_size],
                self.data_range,
                self.sigma,
                clean=self._stats[b],
            )
            total += float(s.double().sum())
        return total / len(perturbed)

    def describe(self) -> dict:
        return {"metric": "ssim", "data_range": self.data_range, "sigma": self.sigma}

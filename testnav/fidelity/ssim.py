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

On the CPU, float32 blocks of images up to 64 × 64 (KERNEL_MAX_SIDE) go through one compiled
kernel (`_ssim_maps`) instead: the same filter as fused multiply-adds over TAPS = 11 taps per
output (the window's non-zero ones, 11 of 28 on MNIST, and zeros where a row has fewer), each
output summed in a register, with the images along the vector lanes, and the map in the torch
code's steps, so every value is the same to the bit (tests; the two products accumulate each
output in that order on the CPUs measured). On mnist5k's sets it takes about 70 % of the time of
the kernel that summed every output in memory, and that one about 80 % of the torch code's
(docs/reproducibility.md). Its blocks are split over numba's threads image by image (as many as
torch may use), so the split does not change a value.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
import torch
from numba import njit, prange

from ..core.sets import PerSet
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


# Every row of the window holds at most TAPS non-zero taps (11 for σ = 1.5, fewer for smaller σ).
# The kernel filters each output over exactly TAPS consecutive columns from a per-row start, so
# the tap loop is unrolled at compile time and each output is summed in a register; the taps it
# adds beyond a row's non-zero ones are zeros (see `_ssim_maps`).
TAPS = 11


def tap_starts(window: torch.Tensor) -> np.ndarray | None:
    """Per row of a window matrix, the first of TAPS consecutive columns that hold all its non-zero
    taps; None where a row's taps span more than TAPS columns or there are fewer columns."""
    nonzero = (window != 0).numpy()
    n = window.shape[1]
    first, last = nonzero.argmax(1), n - nonzero[:, ::-1].argmax(1)
    if n < TAPS or (last - first).max() > TAPS:
        return None
    return np.minimum(first, n - TAPS).astype(np.int64)


@njit(nogil=True, cache=True, error_model="numpy")
def _map_values(f, mu_t, mu_tt_c1, var_t_c2, c, b0, n, c1, c2, out):
    """ssim_per_image's map from the filtered maps f (3, H, W, ≥ n) into out (H, W, ≥ n), for images
    b0 … b0 + n of channel c of the clean terms (C, H, W, B): its float32 steps in its order
    (compiled without contraction, so that no multiply and add fuse into one rounding)."""
    two = np.float32(2.0)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            for b in range(n):
                mu_p = f[0, i, j, b]
                mu_pp = mu_p * mu_p
                mu_pt = mu_p * mu_t[c, i, j, b0 + b]
                den = f[1, i, j, b] - mu_pp
                if den < 0.0:
                    den = np.float32(0.0)
                den = (den + var_t_c2[c, i, j, b0 + b]) * (mu_pp + mu_tt_c1[c, i, j, b0 + b])
                num = ((f[2, i, j, b] - mu_pt) * two + c2) * (mu_pt * two + c1)
                out[i, j, b] = num / den


@njit(nogil=True, cache=True, error_model="numpy", fastmath={"contract"}, parallel=True)
def _ssim_maps(p, t, mu_t, mu_tt_c1, var_t_c2, wh, h_start, ww, w_start, c1, c2, threads, out) -> bool:
    """The SSIM map of perturbed images p (B, C, H, W) into `out` (B, C, H, W); the targets t and
    their clean terms in (C, H, W, B) layout. Each filtered value is a chain of fused multiply-adds
    over TAPS taps in column order from its row's start (`tap_starts`), as the products of
    `gaussian_filter` accumulate it: the taps beyond a row's non-zero ones add 0 · v, which changes
    nothing (at most a zero's sign, which no later step can see) unless an input is infinite or
    NaN, so such a block returns False (unscored) and goes to the torch code. The images are split
    into at most `threads` pieces, one per thread (a piece's values do not depend on the split)."""
    n_all, channels, h, w = p.shape
    pieces = max(1, min(threads, (n_all + 7) // 8))
    size = -(-n_all // pieces)
    ok = np.ones(pieces, np.bool_)
    for piece in prange(pieces):
        b0 = piece * size
        n = min(n_all, b0 + size) - b0
        lanes = (n + 7) // 8 * 8 + 8  # a row's images, padded off a power of two (cache sets)
        x = np.empty((3, h, w, lanes), np.float32)
        y = np.empty((3, h, w, lanes), np.float32)
        nonfinite = np.zeros(lanes, np.float32)  # 0 · v is NaN exactly where v is infinite or NaN
        for c in range(channels):
            for k in range(h):  # images innermost: each read line serves the next columns from cache
                for l in range(w):
                    for b in range(n):
                        x[0, k, l, b] = p[b0 + b, c, k, l]
            for k in range(h):
                for l in range(w):
                    for b in range(n):
                        v = x[0, k, l, b]
                        x[1, k, l, b] = v * v
                        x[2, k, l, b] = v * t[c, k, l, b0 + b]
                        nonfinite[b] += x[1, k, l, b] * np.float32(0.0) + x[2, k, l, b] * np.float32(0.0)
            for b in range(n):
                if nonfinite[b] != 0.0:
                    ok[piece] = False
            if not ok[piece]:
                break
            for m in range(3):  # along h: y = wh @ x per image
                for i in range(h):
                    k0 = h_start[i]
                    for l in range(w):
                        for b in range(n):
                            s = np.float32(0.0)
                            for q in range(TAPS):
                                s += wh[i, k0 + q] * x[m, k0 + q, l, b]
                            y[m, i, l, b] = s
            for m in range(3):  # along w: x = y @ ww.T per image
                for j in range(w):
                    l0 = w_start[j]
                    for i in range(h):
                        for b in range(n):
                            s = np.float32(0.0)
                            for q in range(TAPS):
                                s += ww[j, l0 + q] * y[m, i, l0 + q, b]
                            x[m, i, j, b] = s
            _map_values(x, mu_t, mu_tt_c1, var_t_c2, c, b0, n, c1, c2, y[0])
            for b in range(n):
                for i in range(h):
                    for j in range(w):
                        out[b0 + b, c, i, j] = y[0, i, j, b]
    return ok.all()


# the kernel scores images up to this side: its values were checked against MKL's products bit
# for bit at sides 11 to 96, and at 224 they differ in the last bit (docs/reproducibility.md)
KERNEL_MAX_SIDE = 64


class SSIM(PerSet, Metric):
    """`batch_size` images are compared at a time: a block of 256 MNIST-sized images keeps the
    three filtered maps in cache (a block of 1,000 does not), while its steps are large enough
    to split over two threads; on two cores 256 and 384 took 12-15 % less than 128, on one core
    the same (measured on mnist5k's sibling stacks); larger images fit fewer per block but
    still gain from in-place steps."""

    higher_is_better = True
    column = "ssim"
    spread = "per-input"

    def __init__(self, data_range: float, sigma: float, batch_size: int, name: str):
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
        # the compiled kernel's operands (module docstring): the windows, their taps, the clean
        # terms in its layout, and the constants as the torch code rounds them (to float32)
        self._kernel = None
        h, w = self.clean.shape[-2:]
        if self.clean.device.type == "cpu" and self.clean.dtype == torch.float32 and max(h, w) <= KERNEL_MAX_SIDE:
            wh, ww = (window_matrix(n, self.sigma, torch.float32, self.clean.device) for n in (h, w))
            c1, c2 = (np.float32((k * self.data_range) ** 2) for k in (0.01, 0.03))
            h_start, w_start = tap_starts(wh), tap_starts(ww)
            if h_start is not None and w_start is not None:
                self._kernel = (wh.numpy(), h_start, ww.numpy(), w_start, c1, c2)
        if self._kernel is not None:
            self._stats = [tuple(s.permute(1, 2, 3, 0).contiguous() for s in stats) for stats in self._stats]
            self._targets = [
                self.clean[i : i + self.batch_size].permute(1, 2, 3, 0).contiguous()
                for i in range(0, len(self.clean), self.batch_size)
            ]

    @torch.no_grad()
    def per_set(self, view) -> torch.Tensor:
        """Block by block of D, every stacked set's images of that block against the same
        clean block (its statistics read once per block, for all sets)."""
        n = len(self.clean)
        scored = self._kernel_scores(view)
        total = torch.zeros(view.sets, dtype=torch.float64, device=self.clean.device)
        for b, i in enumerate(range(0, n, self.batch_size)):
            clean = self.clean[i : i + self.batch_size]
            for s, perturbed in enumerate(view.parts):
                values = scored.get((s, b))
                if values is None:
                    x = perturbed[i : i + self.batch_size]
                    values = ssim_per_image(x, clean, self.data_range, self.sigma, clean=self._torch_stats(b))
                total[s] += values.double().sum()
        return total / n

    @torch.no_grad()
    def per_input(self, view) -> np.ndarray:
        """Each image's SSIM against its clean image (`per_set` is their mean)."""
        b = self.batch_size
        values = [
            ssim_per_image(view.images[i : i + b], self.clean[i : i + b], self.data_range, self.sigma)
            for i in range(0, len(self.clean), b)
        ]
        return torch.cat(values).double().cpu().numpy()

    def _kernel_scores(self, view) -> dict:
        """{(set, block): (len,) SSIM} of every block the compiled kernel scores. The kernel runs on
        all of them back to back, and the means follow: a torch step between two runs leaves
        torch's OpenMP workers spinning on the cores that numba's (another OpenMP runtime) want.
        Each image's mean is taken over its own contiguous map, as the torch code takes it."""
        if self._kernel is None:
            return {}
        wh, h_start, ww, w_start, c1, c2 = self._kernel
        threads = min(torch.get_num_threads(), numba.get_num_threads())
        maps = {}
        for b, i in enumerate(range(0, len(self.clean), self.batch_size)):
            target = self._targets[b]
            arrays = [a.numpy() for a in (target, *self._stats[b])]
            for s, perturbed in enumerate(view.parts):
                x = perturbed[i : i + self.batch_size]
                if x.device.type != "cpu" or x.dtype != torch.float32:
                    continue
                x = x.contiguous()
                out = torch.empty_like(x)
                if _ssim_maps(x.numpy(), *arrays, wh, h_start, ww, w_start, c1, c2, threads, out.numpy()):
                    maps[s, b] = out
        return {key: out.flatten(-3).mean(-1) for key, out in maps.items()}

    def _torch_stats(self, b: int) -> tuple[torch.Tensor, ...]:
        """Block b's clean terms in (B, C, H, W), as ssim_per_image takes them (views where the
        kernel keeps them in its layout)."""
        if self._kernel is None:
            return self._stats[b]
        return tuple(s.permute(3, 0, 1, 2) for s in self._stats[b])

    def describe(self) -> dict:
        return {"metric": "ssim", "data_range": self.data_range, "sigma": self.sigma}

"""Kernel Inception Distance between clean and perturbed sets, once per configuration.

torchmetrics' `KernelInceptionDistance` on one of two feature spaces:
* `feature: inception` — Inception-v3 pool features through torch-fidelity, as the paper;
  used only when torch-fidelity is installed *and* its weights file is already in the torch
  hub cache (nothing is downloaded); otherwise the named `fallback` is used, and said so;
* `feature: model` — the task model's penultimate layer, computed once per perturbed set and
  shared with the prediction (the extractor handed to torchmetrics is then the identity);
* `feature: pixels` — a fixed extractor that needs no model: each image area-averaged to
  16 × 16 per channel, flattened (what KID uses for a model given as a prediction function,
  which shows no features; testnav/models/function.py).
The resolved extractor is part of the cache key. Raw KID is a distance; the `kid` fidelity
config negates it so that higher ρ means higher fidelity, as the paper does.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import numpy as np
import torch
from numba import njit, prange

from ..core.sets import PerSet
from ..errors import UserError
from .base import Metric

log = logging.getLogger(__name__)
INCEPTION_WEIGHTS = "weights-inception-2015-12-05-6726825d.pth"  # torch-fidelity's FID Inception
BOOTSTRAP_RESAMPLES = 100  # ρ's half-width: resamples of the inputs
BOOTSTRAP_INPUTS = 1_000  # at most this many inputs resampled (its SE scaled by √(m / N) beyond: O(N²) kernels)


def inception_available() -> bool:
    try:
        import torch_fidelity  # noqa: F401
    except ImportError:
        return False
    return (Path(torch.hub.get_dir()) / "checkpoints" / INCEPTION_WEIGHTS).exists()


FEATURES = ("inception", "model", "pixels")
PIXELS = 16  # feature=pixels: images area-averaged to PIXELS × PIXELS per channel


def pixel_features(images: torch.Tensor) -> torch.Tensor:
    """(N, C·16·16) float32: each image area-averaged to 16 × 16 per channel (a fixed extractor)."""
    import torch.nn.functional as F

    return F.adaptive_avg_pool2d(images.float(), PIXELS).flatten(1)


def resolve_feature(feature: str, fallback: str | None) -> str:
    if feature not in FEATURES:
        raise UserError(f"kid feature={feature} (valid: {', '.join(FEATURES)})")
    if feature == "inception" and not inception_available():
        where = Path(torch.hub.get_dir()) / "checkpoints" / INCEPTION_WEIGHTS
        if fallback is None:
            raise UserError(
                f"KID with Inception features needs torch-fidelity and {where}; "
                f"put the weights there or set benchmark.metrics.kid.fallback=model"
            )
        log.warning("KID: Inception weights not available (%s); using fallback feature=%s", where, fallback)
        return resolve_feature(fallback, None)
    return feature


class KID(PerSet, Metric):
    """Subset size min(subset_size, N). When the subset is the whole set every subset holds
    the same samples and the unbiased MMD² is permutation-invariant, so one subset is exact
    and more would only repeat it; `subsets` is kept configurable for larger sets.

    In that whole-set case (one subset of all N clean and all N perturbed features) the value
    is torchmetrics' unbiased MMD² computed directly: the clean-vs-clean kernel sum does not
    depend on the perturbed set, so it is computed once in `prepare` instead of once per
    configuration, which saves a third of the kernel arithmetic of every call. The sums run
    block by block (`kernel_sum`): the Gram products and the polynomial in the features' own
    precision (a float32 model's features carry no more digits than float32 holds; its rounding
    errors average out over the N² terms), the sums in float64, each block still in cache, and the perturbed-vs-perturbed sum over the upper
    triangle only (the kernel is symmetric). Other cases go through torchmetrics' random
    subsets; tests check both against torchmetrics."""

    higher_is_better = False  # a distance between feature distributions
    column = "kid"
    spread = "bootstrap"  # a set-level statistic: no per-input values

    def __init__(
        self,
        subset_size: int,
        subsets: int,
        degree: int,
        coef: float,
        seed: int,
        feature: str,
        fallback: str | None,
        name: str,
    ):
        super().__init__(name)
        for key, value in (("subset_size", subset_size), ("subsets", subsets), ("degree", degree)):
            self.require(key, value, int(value) == value and value >= 1, "a whole number ≥ 1")
        self.subset_size, self.subsets = int(subset_size), int(subsets)
        self.degree, self.coef, self.seed = int(degree), float(coef), int(seed)
        self.feature = resolve_feature(feature, fallback)

    @property
    def needs_features(self) -> bool:
        """Whether it reads the tested model's features (a prediction function has none)."""
        return self.feature == "model"

    def features(self, view) -> torch.Tensor:
        if self.feature == "model":
            return view.features
        if self.feature == "pixels":
            return pixel_features(view.images)
        with torch.inference_mode():
            x = view.images.expand(-1, 3, -1, -1) if view.images.shape[1] == 1 else view.images
            x = (x * 255).round().to(torch.uint8)
            return torch.cat([self._inception(x[i : i + 256]) for i in range(0, len(x), 256)])

    def prepare(self, clean) -> None:
        if self.feature == "inception":
            from torchmetrics.image.fid import NoTrainInceptionV3

            self._inception = NoTrainInceptionV3(name="inception-v3-compat", features_list=["2048"]).to(
                clean.images.device
            )
        features = self.features(clean)
        self._real_features, self.metric = features, None
        self._real = features if self.subsets == 1 and self.subset_size >= len(features) else None
        if self._real is not None:
            self._real_sum = self._sum(self._real, self._real, symmetric=True)

    def half_width(self, view, confidence: float) -> float:
        """z · the standard error of KID over the inputs: (clean, perturbed) pairs resampled with
        replacement (scipy.stats.bootstrap, seeded), the unbiased MMD² of the polynomial kernel on each
        resample; on a seeded subset of BOOTSTRAP_INPUTS inputs beyond that many, its SE scaled by √(m / N)."""
        from scipy.stats import bootstrap, norm

        with torch.no_grad():
            fake = self.features(view).double()
        n = len(fake)
        keep = np.sort(np.random.default_rng(0).choice(n, min(n, BOOTSTRAP_INPUTS), replace=False))
        real, fake = self._real_features.double()[keep], fake[keep]
        gamma = 1.0 / real.shape[1]
        kernel = [
            ((x @ y.T) * gamma + self.coef).pow(self.degree).cpu().numpy()
            for x, y in ((real, real), (fake, fake), (real, fake))
        ]

        def kid(i):
            i = i.astype(np.int64)
            rr, ff, rf = (k[np.ix_(i, i)] for k in kernel)
            k = len(i)
            return (rr.sum() - np.trace(rr) + ff.sum() - np.trace(ff)) / (k * (k - 1)) - 2 * rf.sum() / k**2

        res = bootstrap(
            (np.arange(len(keep)),), kid, n_resamples=BOOTSTRAP_RESAMPLES, vectorized=False, method="percentile", rng=0
        )
        return float(norm.ppf(0.5 + confidence / 2) * res.standard_error * np.sqrt(len(keep) / n))

    def _torchmetrics(self):
        """torchmetrics' metric holding the clean features, built on first use: the whole-set
        case never needs it, and importing torchmetrics costs seconds per process."""
        if self.metric is None:
            from torchmetrics.image.kid import KernelInceptionDistance

            features = self._real_features
            with warnings.catch_warnings():  # "features kept in a buffer": we keep only N × d doubles
                warnings.simplefilter("ignore", UserWarning)
                self.metric = KernelInceptionDistance(
                    feature=torch.nn.Identity(),
                    subsets=self.subsets,
                    subset_size=min(self.subset_size, len(features)),
                    degree=self.degree,
                    coef=self.coef,
                    reset_real_features=False,
                ).to(features.device)
            self.metric.update(features.double(), real=True)
        return self.metric

    def _sum(self, f1: torch.Tensor, f2: torch.Tensor, symmetric: bool = False) -> torch.Tensor:
        return kernel_sum(f1, f2.to(f1.dtype), self.degree, 1.0 / f1.shape[1], self.coef, symmetric)

    @torch.no_grad()
    def per_set(self, view) -> torch.Tensor:
        features = self.features(view)
        sets = features.reshape(view.sets, -1, features.shape[1])
        return torch.tensor([self._one(f) for f in sets], dtype=torch.float64)

    def _one(self, fake: torch.Tensor) -> float:
        if self._real is not None and len(fake) == len(self._real):
            m = len(fake)
            value = (self._real_sum + self._sum(fake, fake, symmetric=True)) / (m * (m - 1))
            return float(value - 2 * self._sum(self._real, fake) / (m**2))
        metric = self._torchmetrics()
        metric.reset()
        metric.update(fake.double(), real=False)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            mean, _ = metric.compute()
        return float(mean)

    def describe(self) -> dict:
        return {
            "metric": "kid",
            "subset_size": self.subset_size,
            "subsets": self.subsets,
            "degree": self.degree,
            "coef": self.coef,
            "seed": self.seed,
            "feature": self.feature,
        }


BLOCK = 256  # rows per Gram block: a 256 × 1,000 float64 block stays in a core's L2 cache
LANES = 8  # partial sums per row, so that consecutive float64 additions do not wait on each other


@njit(nogil=True, cache=True, parallel=True, error_model="numpy")
def _poly_sum(k, gamma, coef, degree, upper) -> float:
    """Σ_rj (γ k_rj + c)^degree over a float32 Gram block k, each term in float32 as torch's
    mul_, add_ and pow_ make it (no contraction, the power by repeated products) and summed in
    float64; `upper`: only j > r. Each row's terms are made in one loop and summed by one thread
    into LANES partial sums (term j into lane j mod LANES from the row's first term), those in lane
    order, and the row sums in row order, so the value does not depend on the thread count.
    Float32 terms of similar magnitude sum exactly in float64 in any order, so on such features
    the lanes change no bit (the golden tables are identical)."""
    rows = np.zeros(k.shape[0])
    n = k.shape[1]
    for r in prange(k.shape[0]):
        start = r + 1 if upper else 0
        terms = np.zeros(-(-(n - start) // LANES) * LANES)  # the row's terms, padded with zeros
        for j in range(start, n):
            terms[j - start] = _term(k[r, j], gamma, coef, degree)
        lanes = np.zeros(LANES)
        for j0 in range(0, len(terms), LANES):
            for q in range(LANES):
                lanes[q] += terms[j0 + q]
        rows[r] = lanes.sum()
    total = 0.0
    for r in range(k.shape[0]):
        total += rows[r]
    return total


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _term(x, gamma, coef, degree) -> float:
    """One term in float32 (the power as repeated products), as float64; the default degree 3 is
    spelt out, the same products in the same order, so that the row loop vectorises."""
    v = x * gamma + coef
    if degree == 3:
        return np.float64(v * v * v)
    term = v
    for _ in range(degree - 1):
        term = term * v
    return np.float64(term)


def kernel_sum(
    f1: torch.Tensor, f2: torch.Tensor, degree: int, gamma: float, coef: float, symmetric: bool = False
) -> torch.Tensor:
    """Σ_ij (γ f1_i·f2_j + c)^degree (torchmetrics' `poly_kernel`), each term in the features'
    precision and the sum in float64; `symmetric` (f1 is f2): Σ over i ≠ j, from the blocks on
    and above the diagonal, those off it counted twice. Float32 blocks on the CPU are summed by
    `_poly_sum` (the same terms, their float64 sum in another order)."""
    total = torch.zeros((), dtype=torch.float64, device=f1.device)
    fused = f1.device.type == "cpu" and f1.dtype == torch.float32
    g32, c32, twice = np.float32(gamma), np.float32(coef), 2 if symmetric else 1
    for i in range(0, len(f1), BLOCK):
        rows = f1[i : i + BLOCK]
        cols = f2[i:] if symmetric else f2
        k = rows @ cols.T
        if fused:
            total += _poly_sum(k.numpy(), g32, c32, degree, symmetric) * twice
            continue
        k.mul_(gamma).add_(coef).pow_(degree)
        if not symmetric:
            total += k.sum(dtype=torch.float64)
            continue
        own = k[:, : len(rows)]  # the diagonal block: its upper triangle, without the diagonal
        total += (own.triu(1).sum(dtype=torch.float64) + k[:, len(rows) :].sum(dtype=torch.float64)) * twice
    return total

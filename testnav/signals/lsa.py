"""LSA, likelihood-based surprise adequacy (Kim et al. 2019), averaged over the perturbed set.

For an input x predicted as class c, LSA(x) = −log f̂_c(a(x)), where a is the last monitored
layer's activation and f̂_c a Gaussian KDE over the training activations of class c with
Scott's bandwidth (scipy.stats.gaussian_kde's default: the data covariance times
n^(−2/(d+4))). As in Kim et al., neurons whose training variance is ≤ `min_variance` are
dropped first (they make the covariance singular).
"""

from __future__ import annotations

import math

import torch

from . import Signal


class KDE:
    """Gaussian KDE equal to scipy's `gaussian_kde(data.T)` (Scott's rule), evaluated in torch."""

    def __init__(self, data: torch.Tensor):
        n, d = data.shape
        factor = n ** (-1.0 / (d + 4))
        cov = torch.cov(data.T).reshape(d, d) * factor**2
        chol, info = torch.linalg.cholesky_ex(cov)
        jitter = 1e-10 * cov.diagonal().mean()
        while info.any():  # numerically singular: the smallest ridge that makes it positive definite
            chol, info = torch.linalg.cholesky_ex(cov + jitter * torch.eye(d, dtype=cov.dtype, device=cov.device))
            jitter *= 10
        # whitening x ↦ L⁻¹x turns Mahalanobis distances into Euclidean ones; L⁻¹ is formed once
        # so that each call whitens with one matrix product
        eye = torch.eye(d, dtype=cov.dtype, device=cov.device)
        self.unwhite = torch.linalg.solve_triangular(chol, eye, upper=False).T  # (L⁻¹)ᵀ
        self.white = data @ self.unwhite
        self.half_norms = 0.5 * self.white.pow(2).sum(1)
        self.log_norm = math.log(n) + chol.diagonal().log().sum() + 0.5 * d * math.log(2 * math.pi)

    def logpdf(self, x: torch.Tensor) -> torch.Tensor:
        """log f̂(x) = log Σ_i exp(−½‖w − w_i‖²) − log norm, w = L⁻¹x, the square expanded as
        ½‖w‖² + ½‖w_i‖² − w·w_i (one matrix product, no pairwise roots)."""
        w = x @ self.unwhite
        neg_energy = torch.addmm(self.half_norms, w, self.white.T, beta=-1.0)  # w·w_i − ½‖w_i‖²
        return torch.logsumexp(neg_energy, dim=1) - 0.5 * w.pow(2).sum(1) - self.log_norm


class LSA(Signal):
    def __init__(self, min_variance: float):
        self.min_variance = float(min_variance)

    def prepare(self, train) -> None:
        a = train.features.double()
        self._keep = a.var(dim=0) > self.min_variance
        a = a[:, self._keep]
        self._kdes = {int(c): KDE(a[train.labels == c]) for c in train.labels.unique()}

    def per_set(self, view) -> torch.Tensor:
        a = view.features
        surprise = torch.zeros(len(a), dtype=torch.float64, device=a.device)  # 0 where the class has no KDE
        for c, (rows, x) in view.by_class.items():
            if c in self._kdes:
                surprise[rows] = -self._kdes[c].logpdf(x[:, self._keep])
        return view.set_means(surprise)

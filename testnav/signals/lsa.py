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
        self.data = data
        factor = n ** (-1.0 / (d + 4))
        cov = torch.cov(data.T).reshape(d, d) * factor**2
        chol, info = torch.linalg.cholesky_ex(cov)
        jitter = 1e-10 * cov.diagonal().mean()
        while info.any():  # numerically singular: the smallest ridge that makes it positive definite
            chol, info = torch.linalg.cholesky_ex(cov + jitter * torch.eye(d, dtype=cov.dtype, device=cov.device))
            jitter *= 10
        self.chol = chol
        self.white = self._whiten(data)  # Mahalanobis distances become Euclidean ones
        self.log_norm = math.log(n) + chol.diagonal().log().sum() + 0.5 * d * math.log(2 * math.pi)

    def _whiten(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.solve_triangular(self.chol, x.T, upper=False).T

    def logpdf(self, x: torch.Tensor) -> torch.Tensor:
        energy = 0.5 * torch.cdist(self._whiten(x), self.white).pow(2)  # (m, n)
        return torch.logsumexp(-energy, dim=1) - self.log_norm


class LSA(Signal):
    def __init__(self, min_variance: float = 1e-5):
        self.min_variance = float(min_variance)

    def prepare(self, train) -> None:
        a = train.features.double()
        self._keep = a.var(dim=0) > self.min_variance
        a = a[:, self._keep]
        self._kdes = {int(c): KDE(a[train.labels == c]) for c in train.labels.unique()}

    def __call__(self, view) -> float:
        a = view.features.double()[:, self._keep]
        pred = view.predictions
        total = 0.0
        for c, kde in self._kdes.items():
            mask = pred == c
            if mask.any():
                total += float((-kde.logpdf(a[mask])).sum())
        return total / len(a)

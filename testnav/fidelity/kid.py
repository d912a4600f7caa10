"""Kernel Inception Distance between clean and perturbed sets, once per configuration.

torchmetrics' `KernelInceptionDistance` with a custom feature extractor (the task model's
penultimate layer, computed once per perturbed set and shared with the prediction; the
extractor handed to torchmetrics is the identity on those features), so no Inception
weights are needed. Raw KID is a distance; the `kid`
fidelity config negates it so that higher ρ means higher fidelity, as the paper does.
"""

from __future__ import annotations

import warnings

import torch
from torchmetrics.image.kid import KernelInceptionDistance



class KID:
    """Subset size min(subset_size, N). When the subset is the whole set every subset holds
    the same samples and the unbiased MMD² is permutation-invariant, so one subset is exact
    and more would only repeat it; `subsets` is kept configurable for larger sets."""

    def __init__(self, subset_size: int = 1000, subsets: int = 1, degree: int = 3, coef: float = 1.0, seed: int = 0,
                 name: str = "kid"):
        self.name, self.subset_size, self.subsets = name, int(subset_size), int(subsets)
        self.degree, self.coef, self.seed = int(degree), float(coef), int(seed)

    def prepare(self, clean) -> None:
        features = clean.features.double()
        with warnings.catch_warnings():  # "features kept in a buffer": we keep only N×84 doubles
            warnings.simplefilter("ignore", UserWarning)
            self.metric = KernelInceptionDistance(
                feature=torch.nn.Identity(), subsets=self.subsets, subset_size=min(self.subset_size, len(features)),
                degree=self.degree, coef=self.coef, reset_real_features=False).to(features.device)
        self.metric.update(features, real=True)

    @torch.no_grad()
    def __call__(self, view) -> float:
        self.metric.reset()
        self.metric.update(view.features.double(), real=False)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            mean, _ = self.metric.compute()
        return float(mean)

    def describe(self) -> dict:
        return {"metric": "kid", "subset_size": self.subset_size, "subsets": self.subsets, "degree": self.degree,
                "coef": self.coef, "seed": self.seed}

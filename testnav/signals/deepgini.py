"""DeepGini (Feng et al. 2020): the Gini impurity 1 − Σ_c p_c² of the softmax output,
averaged over the perturbed set (high = the model is unsure)."""

from __future__ import annotations

import torch

from . import Signal


class DeepGini(Signal):
    needs_features = False

    def per_set(self, view) -> torch.Tensor:
        p = view.probabilities
        return view.set_means(1.0 - (p * p).sum(dim=1))

"""DeepGini (Feng et al. 2020): the Gini impurity 1 − Σ_c p_c² of the softmax output,
averaged over the perturbed set (high = the model is unsure)."""

from __future__ import annotations

from . import Signal


class DeepGini(Signal):
    def prepare(self, train) -> None:
        pass

    def __call__(self, view) -> float:
        p = view.probabilities
        return float((1.0 - (p * p).sum(dim=1)).mean())

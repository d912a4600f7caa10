"""NAC (DeepXplore, Pei et al. 2017): the fraction of neurons that some input activates above
a threshold, each layer's activations min–max scaled per input first."""

from __future__ import annotations

import torch

from . import Signal


class NAC(Signal):
    def __init__(self, threshold: float = 0.5):
        self.threshold = float(threshold)

    def prepare(self, train) -> None:
        pass  # NAC needs no training statistics

    def __call__(self, view) -> float:
        covered = []
        for layer in view.layers:
            a = layer.double()
            lo, hi = a.min(dim=1, keepdim=True).values, a.max(dim=1, keepdim=True).values
            scaled = (a - lo) / (hi - lo).clamp_min(1e-12)
            covered.append((scaled > self.threshold).any(dim=0))
        return float(torch.cat(covered).double().mean())

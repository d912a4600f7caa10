"""NAC (DeepXplore, Pei et al. 2017): the fraction of neurons that some input activates above
a threshold, each layer's activations min–max scaled per input first."""

from __future__ import annotations

import torch

from . import Signal


class NAC(Signal):
    def __init__(self, threshold: float = 0.5):
        self.threshold = float(threshold)

    def per_set(self, view) -> torch.Tensor:
        covered = []
        for layer in view.layers:
            a = layer.to(torch.float64, copy=True)  # its own copy (even of float64 layers): scaled in place
            lo, hi = torch.aminmax(a, dim=1, keepdim=True)
            scaled = a.sub_(lo).div_((hi - lo).clamp_min(1e-12))
            covered.append(view.set_any(scaled > self.threshold))
        return torch.cat(covered, dim=1).double().mean(1)

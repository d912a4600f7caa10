"""NAC (DeepXplore, Pei et al. 2017): the fraction of neurons that some input activates above
a threshold, each layer's activations min–max scaled per input first."""

from __future__ import annotations

import numpy as np
import torch
from numba import njit

from . import Coverage, cpu_layers


class NAC(Coverage):
    def __init__(self, threshold: float, precision: str):
        super().__init__(precision)
        self.threshold = float(threshold)

    def per_set(self, view) -> torch.Tensor:
        layers = cpu_layers(self.layers(view))
        if layers is not None:
            covered = [np.zeros((view.sets, a.shape[1]), dtype=np.bool_) for a in layers]
            for a, hit in zip(layers, covered):
                _covered(a, len(a) // view.sets, self.threshold, hit)
            return torch.from_numpy(np.concatenate(covered, axis=1)).double().mean(1)
        covered = []
        for layer in self.layers(view):
            a = layer.to(torch.float64, copy=True)  # its own copy (even of float64 layers): scaled in place
            lo, hi = torch.aminmax(a, dim=1, keepdim=True)
            scaled = a.sub_(lo).div_((hi - lo).clamp_min(1e-12))
            covered.append(view.set_any(scaled > self.threshold))
        return torch.cat(covered, dim=1).double().mean(1)


@njit(nogil=True, cache=True, error_model="numpy")
def _covered(a, rows, threshold, hit):
    """The torch code's float64 steps row by row, row r of set r // rows: a row holding a NaN
    scales to NaN (as aminmax makes it) and covers nothing."""
    n = a.shape[1]
    v = np.empty(n)
    for r in range(len(a)):
        lo, hi, nan = np.inf, -np.inf, False
        for j in range(n):
            v[j] = a[r, j]
            nan |= v[j] != v[j]
            lo = min(lo, v[j])
            hi = max(hi, v[j])
        if nan:
            continue
        den = max(hi - lo, 1e-12)
        s = r // rows
        for j in range(n):
            hit[s, j] |= (v[j] - lo) / den > threshold

"""TKNC (DeepGauge): the fraction of neurons that are among the k most active of their layer
for some input."""

from __future__ import annotations

import numpy as np
import torch
from numba import njit

from ..errors import UserError
from . import Coverage, cpu_layers


class TKNC(Coverage):
    def __init__(self, k: int, precision: str):
        super().__init__(precision)
        if int(k) != k or k < 1:
            raise UserError(f"tknc k={k} (valid: a whole number ≥ 1, the k most active neurons of a layer)")
        self.k = int(k)

    def per_set(self, view) -> torch.Tensor:
        source = self.layers(view)
        layers = cpu_layers(source)
        if layers is None:
            return self._per_set_torch(view)
        covered = []
        for a, layer in zip(layers, source):
            rows = len(a) // view.sets
            hit = np.zeros((view.sets, a.shape[1]), dtype=np.bool_)
            tied = np.zeros(len(a), dtype=np.bool_)
            _top_k(a, rows, self.k, hit, tied)
            # rows whose top k is not one set (a tie at the k-th value, a NaN): the order topk
            # itself picks there decides, so those rows are left to it
            if tied.any():
                index = np.flatnonzero(tied)
                top = layer[torch.from_numpy(index)].topk(self.k, dim=1).indices.numpy()
                hit[(index // rows)[:, None], top] = True
            covered.append(hit)
        return torch.from_numpy(np.concatenate(covered, axis=1)).double().mean(1)

    def _per_set_torch(self, view) -> torch.Tensor:
        covered = torch.zeros(view.sets, dtype=torch.float64)
        total = 0
        for layer in self.layers(view):
            n = layer.shape[1]
            top = layer.topk(min(self.k, n), dim=1).indices.reshape(view.sets, -1)
            # set s's hits land in row s of a (sets, n) table
            top = top + n * torch.arange(view.sets, device=top.device)[:, None]
            hit = torch.zeros(view.sets * n, dtype=torch.bool, device=layer.device)
            hit.index_fill_(0, top.flatten(), True)
            covered += hit.view(view.sets, n).sum(1).cpu()
            total += n
        return covered / total


@njit(nogil=True, cache=True, error_model="numpy")
def _top_k(a, rows, k, hit, tied):
    """Per row (of set r // rows), the k + 1 largest values (with repeats) by insertion: where the
    k-th is larger than the (k + 1)-th, the top k are exactly the entries ≥ the k-th, whatever
    order topk breaks ties in; otherwise (or with a NaN, which topk ranks first) the row is
    marked `tied`."""
    n = a.shape[1]
    top = np.empty(k + 1, dtype=a.dtype)
    for r in range(len(a)):
        s = r // rows
        if n <= k:
            hit[s, :] = True
            continue
        m, nan = 0, False
        for j in range(n):
            y = a[r, j]
            nan |= y != y
            if m <= k:
                i = m
                m += 1
            elif y > top[k]:
                i = k
            else:
                continue
            while i > 0 and top[i - 1] < y:
                top[i] = top[i - 1]
                i -= 1
            top[i] = y
        if nan or not top[k - 1] > top[k]:
            tied[r] = True
            continue
        for j in range(n):
            if a[r, j] >= top[k - 1]:
                hit[s, j] = True

"""TKNC (DeepGauge): the fraction of neurons that are among the k most active of their layer
for some input."""

from __future__ import annotations

import torch

from . import Signal


class TKNC(Signal):
    def __init__(self, k: int = 2):
        self.k = int(k)

    def per_set(self, view) -> torch.Tensor:
        covered = torch.zeros(view.sets, dtype=torch.float64)
        total = 0
        for layer in view.layers:
            n = layer.shape[1]
            top = layer.topk(min(self.k, n), dim=1).indices.reshape(view.sets, -1)
            # set s's hits land in row s of a (sets, n) table
            top = top + n * torch.arange(view.sets, device=top.device)[:, None]
            hit = torch.zeros(view.sets * n, dtype=torch.bool, device=layer.device)
            hit.index_fill_(0, top.flatten(), True)
            covered += hit.view(view.sets, n).sum(1).cpu()
            total += n
        return covered / total

"""TKNC (DeepGauge): the fraction of neurons that are among the k most active of their layer
for some input."""

from __future__ import annotations

import torch

from . import Signal


class TKNC(Signal):
    def __init__(self, k: int = 2):
        self.k = int(k)

    def prepare(self, train) -> None:
        pass

    def __call__(self, view) -> float:
        covered, total = 0, 0
        for layer in view.layers:
            top = layer.topk(min(self.k, layer.shape[1]), dim=1).indices
            hit = torch.zeros(layer.shape[1], dtype=torch.bool, device=layer.device)
            hit[top.flatten()] = True
            covered += int(hit.sum())
            total += layer.shape[1]
        return covered / total

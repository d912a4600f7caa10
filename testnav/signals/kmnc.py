"""KMNC (DeepGauge, Ma et al. 2018): each neuron's training range [low, high] is cut into k
equal sections; the fraction of (neuron, section) pairs that some input falls into."""

from __future__ import annotations

import torch

from . import Signal


class KMNC(Signal):
    def __init__(self, k: int = 1000):
        self.k = int(k)

    def prepare(self, train) -> None:
        a = train.neurons
        self._low, self._high = a.min(dim=0).values, a.max(dim=0).values
        self._span = (self._high - self._low).clamp_min(1e-12)
        n = a.shape[1]
        self._first = torch.arange(n, device=a.device) * self.k  # neuron j's sections start at j·k
        self._live = self._high > self._low  # a neuron constant on the training set has no sections

    def per_set(self, view) -> torch.Tensor:
        a = view.neurons
        n = a.shape[1]
        inside = (a >= self._low) & (a <= self._high) & self._live
        section = ((a - self._low) / self._span * self.k).floor().clamp(0, self.k - 1).long()
        # each set's (neuron, section) cells, and one extra cell per set for the inputs outside
        # the range (dropped below): a masked fill without gathering the inside ones first
        cells = n * self.k + 1
        cell = torch.where(inside, self._first + section, n * self.k).reshape(view.sets, -1)
        cell = cell + cells * torch.arange(view.sets, device=a.device)[:, None]
        hit = torch.zeros(view.sets * cells, dtype=torch.bool, device=a.device)
        hit.index_fill_(0, cell.flatten(), True)
        return hit.view(view.sets, cells)[:, :-1].double().sum(1) / (n * self.k)

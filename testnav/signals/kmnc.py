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
        # neuron j's sections are cells j·k … j·k + k − 1 (whole numbers, exact in float64)
        self._first = torch.arange(a.shape[1], device=a.device, dtype=torch.float64) * self.k
        self._live = self._high > self._low  # a neuron constant on the training set has no sections

    def per_set(self, view) -> torch.Tensor:
        """Each input's cell per neuron, set s's cells offset by s · cells and the inputs outside
        the range sent to one extra cell per set (dropped below), all in place on one float64
        array (whole numbers well below 2⁵³, so exact) and cast to indices once."""
        a = view.neurons
        n = a.shape[1]
        cells = n * self.k + 1
        outside = ~((a >= self._low) & (a <= self._high) & self._live)
        cell = (a - self._low).div_(self._span).mul_(self.k).floor_().clamp_(0, self.k - 1).add_(self._first)
        cell.masked_fill_(outside, n * self.k)
        offset = torch.arange(view.sets, device=a.device, dtype=torch.float64) * cells
        cell.view(view.sets, -1, n).add_(offset[:, None, None])
        hit = torch.zeros(view.sets * cells, dtype=torch.bool, device=a.device)
        hit.index_fill_(0, cell.long().flatten(), True)
        return hit.view(view.sets, cells)[:, :-1].sum(1).double() / (n * self.k)

"""KMNC (DeepGauge, Ma et al. 2018): each neuron's training range [low, high] is cut into k
equal sections; the fraction of (neuron, section) pairs that some input falls into."""

from __future__ import annotations

import torch

from . import Signal, neurons


class KMNC(Signal):
    def __init__(self, k: int = 1000):
        self.k = int(k)

    def prepare(self, train) -> None:
        a = neurons(train)
        self._low, self._high = a.min(dim=0).values, a.max(dim=0).values

    def __call__(self, view) -> float:
        a = neurons(view)
        span = (self._high - self._low).clamp_min(1e-12)
        inside = (a >= self._low) & (a <= self._high) & (self._high > self._low)
        section = ((a - self._low) / span * self.k).floor().clamp(0, self.k - 1).long()
        cell = torch.arange(a.shape[1], device=a.device) * self.k + section
        hit = torch.zeros(a.shape[1] * self.k, dtype=torch.bool, device=a.device)
        hit[cell[inside]] = True
        return float(hit.double().sum() / hit.numel())

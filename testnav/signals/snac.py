"""SNAC (DeepGauge): the fraction of neurons that some input drives above the largest value
seen on the training set (the upper corner region)."""

from __future__ import annotations

import torch

from . import Signal


class SNAC(Signal):
    def prepare(self, train) -> None:
        self._high = train.neurons.max(dim=0).values

    def per_set(self, view) -> torch.Tensor:
        return view.set_any(view.neurons > self._high).double().mean(1)

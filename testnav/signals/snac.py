"""SNAC (DeepGauge): the fraction of neurons that some input drives above the largest value
seen on the training set (the upper corner region)."""

from __future__ import annotations

import torch

from . import Coverage


class SNAC(Coverage):
    def prepare(self, train) -> None:
        self._high = [layer.max(dim=0).values for layer in self.layers(train)]

    def per_set(self, view) -> torch.Tensor:
        """Layer by layer in the activations' own precision: a comparison of two values a
        float32 holds exactly is the same in float64, without making the float64 copy."""
        over = [view.set_any(layer > high) for layer, high in zip(self.layers(view), self._high)]
        return torch.cat(over, dim=1).double().mean(1)

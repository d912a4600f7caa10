"""SNAC (DeepGauge): the fraction of neurons that some input drives above the largest value
seen on the training set (the upper corner region)."""

from __future__ import annotations

from . import Signal, neurons


class SNAC(Signal):
    def prepare(self, train) -> None:
        self._high = neurons(train).max(dim=0).values

    def __call__(self, view) -> float:
        return float((neurons(view) > self._high).any(dim=0).double().mean())

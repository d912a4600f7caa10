"""Several image sets scored in one pass: the contract of a metric or signal that can.

The ground truth scores every configuration θ on the same D, so the ℓ siblings of a prefix
(θ that differ in the last family only) are stacked into one view of ℓ·|D| images: one
inference pass over all of them and each metric once per stack instead of once per set. The
same arithmetic runs on bigger tensors (better use of both CPU cores, and of a GPU), and work
that depends only on D (the clean statistics, the training features) is read once per stack.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import torch


class PerSet(ABC):
    """Scores each of `view.sets` equal-size image sets stacked along the batch of one view."""

    @abstractmethod
    def per_set(self, view) -> torch.Tensor:
        """(view.sets,) float64: the value of each stacked set, as the set alone would give it."""

    def __call__(self, view) -> float:
        values = self.per_set(view)
        if len(values) != 1:
            raise ValueError(
                f"{type(self).__name__}: a view of {len(values)} stacked sets gives one value each: per_set"
            )
        return float(values[0])

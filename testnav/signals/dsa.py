"""DSA, distance-based surprise adequacy (Kim et al. 2019), averaged over the perturbed set.

For x predicted as class c with activation a(x) (last monitored layer): x_a is the nearest
training input of class c, dist_a = ‖a(x) − a(x_a)‖; dist_b is the distance from a(x_a) to the
nearest training input of any other class; DSA(x) = dist_a / dist_b.
"""

from __future__ import annotations

import torch

from . import Signal


class DSA(Signal):
    def prepare(self, train) -> None:
        self._train = train.features.double()
        self._labels = train.labels
        # dist_b depends only on the anchor x_a, a training input: tabulate it once
        d = torch.cdist(self._train, self._train)
        other = self._labels[None, :] != self._labels[:, None]
        self._dist_b = d.masked_fill(~other, float("inf")).min(dim=1).values

    def __call__(self, view) -> float:
        a = view.features.double()
        pred = view.predictions
        d = torch.cdist(a, self._train)  # (N, n_train)
        same = self._labels[None, :] == pred[:, None]
        dist_a, nearest = d.masked_fill(~same, float("inf")).min(dim=1)
        return float((dist_a / self._dist_b[nearest].clamp_min(1e-12)).mean())

"""DSA, distance-based surprise adequacy (Kim et al. 2019), averaged over the perturbed set.

For x predicted as class c with activation a(x) (last monitored layer): x_a is the nearest
training input of class c, dist_a = ‖a(x) − a(x_a)‖; dist_b is the distance from a(x_a) to the
nearest training input of any other class; DSA(x) = dist_a / dist_b.

Only training inputs of the predicted class can be x_a, so the nearest-neighbour search runs
class by class: the inputs predicted as c against the training inputs of c, one distance block
per class. That is the same minimum as over a full (N, n_train) distance matrix with the other
classes masked out, at about 1/classes of its arithmetic, which matters because the search runs
once per configuration of the ground truth. Distances are squared ones from one matrix product
(torch.cdist's own method for large sets), rooted only at each input's minimum.
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
        # per class: the global indices of its training inputs, their activations and squared norms
        self._by_class = {
            int(c): (idx, self._train[idx], self._train[idx].pow(2).sum(1))
            for c in self._labels.unique()
            for idx in [torch.nonzero(self._labels == c).flatten()]
        }

    def per_set(self, view) -> torch.Tensor:
        a = view.features
        # inf where the predicted class has no training input
        ratio = torch.full((len(a),), float("inf"), dtype=torch.float64, device=a.device)
        for c, (rows, x) in view.by_class.items():
            if c not in self._by_class:
                continue
            idx, train_c, norms = self._by_class[c]
            # squared distances ‖x‖² + ‖t‖² − 2x·t: ‖x‖² is added to the row minimum only (adding it
            # is monotone, so the minimum is the same to the bit; the neighbour is the same unless
            # two partial sums differ by less than the rounding of that addition, which no mnist5k
            # table met: byte-identical Parquet), and rooted there only
            partial_min, nearest = torch.addmm(norms, x, train_c.T, alpha=-2.0).min(dim=1)
            d2_min = partial_min.add_(x.pow(2).sum(1))
            ratio[rows] = d2_min.clamp_min_(0.0).sqrt_() / self._dist_b[idx[nearest]].clamp_min(1e-12)
        return view.set_means(ratio)

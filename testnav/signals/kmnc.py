"""KMNC (DeepGauge, Ma et al. 2018): each neuron's training range [low, high] is cut into k
equal sections; the fraction of (neuron, section) pairs that some input falls into."""

from __future__ import annotations

import numpy as np
import torch
from numba import njit

from ..errors import UserError
from . import Coverage, cpu_layers


class KMNC(Coverage):
    def __init__(self, k: int, precision: str):
        super().__init__(precision)
        if int(k) != k or k < 1:
            raise UserError(f"kmnc k={k} (valid: a whole number ≥ 1, sections of each neuron's training range)")
        self.k = int(k)

    def prepare(self, train) -> None:
        a = torch.cat([layer.double() for layer in self.layers(train)], dim=1)
        self._low, self._high = a.min(dim=0).values, a.max(dim=0).values
        self._span = (self._high - self._low).clamp_min(1e-12)
        # neuron j's sections are cells j·k … j·k + k − 1 (whole numbers, exact in float64)
        self._first = torch.arange(a.shape[1], device=a.device, dtype=torch.float64) * self.k
        self._live = self._high > self._low  # a neuron constant on the training set has no sections

    def per_set(self, view) -> torch.Tensor:
        layers = cpu_layers(self.layers(view))
        if layers is None:
            return self._per_set_torch(view)
        n = sum(a.shape[1] for a in layers)
        hit = np.zeros((view.sets, n * self.k), dtype=np.bool_)
        low, high, span, first, live = (t.numpy() for t in (self._low, self._high, self._span, self._first, self._live))
        offset = 0
        for a in layers:
            cut = slice(offset, offset + a.shape[1])
            _hit_cells(
                a, len(a) // view.sets, low[cut], high[cut], span[cut], first[cut], live[cut], float(self.k), hit
            )
            offset += a.shape[1]
        return torch.from_numpy(hit.sum(1)).double() / (n * self.k)

    def _per_set_torch(self, view) -> torch.Tensor:
        """Each input's cell per neuron, set s's cells offset by s · cells and the inputs outside
        the range sent to one extra cell per set (dropped below), all in place on one float64
        array (whole numbers well below 2⁵³, so exact) and cast to indices once."""
        a = torch.cat([layer.double() for layer in self.layers(view)], dim=1)
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


@njit(nogil=True, cache=True, error_model="numpy")
def _hit_cells(a, rows, low, high, span, first, live, k, hit):
    """The torch code's float64 steps input by input, row r of set r // rows (a NaN is outside
    every range there too); a row's cells are computed first, so that loop vectorises."""
    n = a.shape[1]
    cell = np.empty(n, dtype=np.int64)
    for r in range(len(a)):
        for j in range(n):
            v = np.float64(a[r, j])
            c = min(max(np.floor((v - low[j]) / span[j] * k), 0.0), k - 1.0) + first[j]
            cell[j] = np.int64(c) if live[j] and v >= low[j] and v <= high[j] else -1
        s = r // rows
        for j in range(n):
            if cell[j] >= 0:
                hit[s, cell[j]] = True

"""The configuration lattice Θ = {0..ℓ−1}^n.

Configurations are addressed by a flat index in row-major order (t1 slowest), so that
consecutive indices share the longest prefixes: the ground-truth pass walks indices in
order and reuses every prefix it has already perturbed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class Lattice:
    n: int  # number of perturbation families
    levels: int  # ℓ, levels per family including level 0 (identity)

    def __post_init__(self):
        if self.n < 1 or self.levels < 2:
            raise ValueError(f"lattice needs n >= 1 and levels >= 2, got n={self.n}, levels={self.levels}")

    @property
    def size(self) -> int:
        return self.levels**self.n

    @cached_property
    def tuples(self) -> np.ndarray:
        """All configurations as an (|Θ|, n) int array, row i = configuration with index i."""
        grids = np.meshgrid(*[np.arange(self.levels)] * self.n, indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)

    def index(self, theta) -> np.ndarray | int:
        """Flat index of one configuration (n,) or many (m, n)."""
        t = np.asarray(theta, dtype=np.int64)
        if t.shape[-1] != self.n:
            raise ValueError(f"configuration has {t.shape[-1]} levels, lattice has n={self.n}")
        if (t < 0).any() or (t >= self.levels).any():
            raise ValueError(f"level outside 0..{self.levels - 1}: {t.tolist()}")
        weights = self.levels ** np.arange(self.n - 1, -1, -1, dtype=np.int64)
        idx = t @ weights
        return int(idx) if idx.ndim == 0 else idx

    def theta(self, index) -> np.ndarray:
        """Levels of configuration(s) `index`, by arithmetic on the index (the same rows as
        `tuples`, which is never built here, so a lattice of millions costs nothing)."""
        idx = np.asarray(index, dtype=np.int64)
        weights = self.levels ** np.arange(self.n - 1, -1, -1, dtype=np.int64)
        return (idx[..., None] // weights) % self.levels

    def order_of(self, index) -> np.ndarray:
        """Order of configuration(s) `index` (as `orders`, without the Θ-sized array)."""
        return (self.theta(index) > 0).sum(axis=-1)

    @cached_property
    def orders(self) -> np.ndarray:
        """Order k of each configuration: how many families are active (level > 0)."""
        return (self.tuples > 0).sum(axis=1)

    def members_of_order(self, k: int) -> np.ndarray:
        """Indices of Θ_k."""
        return np.flatnonzero(self.orders == k)

    def order_counts(self, indices) -> list[int]:
        """How many of the given configurations lie in Θ_0..Θ_n."""
        return np.bincount(self.orders[np.asarray(indices, dtype=np.int64)], minlength=self.n + 1).tolist()

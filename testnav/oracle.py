"""The seam between searches and the thing they test.

A search only ever asks an Oracle for (δ, ρ) of configurations. In replay the Oracle is
a lookup into a ground-truth table (the paper's protocol); for live testing it will run
the model with a memo. Searches cannot tell the two apart, so every search works in both.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from .lattice import Lattice
from .table import Objectives


class Oracle(Protocol):
    lattice: Lattice

    def evaluate(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Normalised (δ, ρ) for the configurations with these lattice indices."""
        ...


class TableOracle:
    """Replay against a ground-truth table: every evaluation is a lookup."""

    def __init__(self, objectives: Objectives):
        self.lattice = objectives.lattice
        self._delta = objectives.delta
        self._rho = objectives.rho

    def evaluate(self, indices):
        i = np.asarray(indices, dtype=np.int64)
        return self._delta[i], self._rho[i]

"""The seam between searches and the thing they test.

A search only ever asks an Oracle for named per-configuration values: "delta", "rho",
or an extra signal such as "nac". In replay the Oracle is a lookup into a ground-truth
table (the paper's protocol); live, it perturbs the test set and runs the model, with a
memo. Searches cannot tell the two apart, so every search works in both.

A search ends by returning: when `stopped` turns true (the stopping certificate wrapped around
the oracle says the front is good enough), it returns the proposals made so far. Values of
configurations requested after the stop are NaN and were never evaluated.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..errors import UserError
from .lattice import Lattice
from .table import Objectives


class Oracle(ABC):
    lattice: Lattice

    @abstractmethod
    def evaluate(self, indices: np.ndarray, names=("delta", "rho")) -> np.ndarray:
        """(m, len(names)) values for the configurations with these lattice indices."""

    def table(self, names=("delta", "rho")) -> np.ndarray:
        """(|Θ|, len(names)) values for all of Θ; only a replay oracle has them up front."""
        raise UserError(f"{type(self).__name__} has no ground-truth table to read whole (a replay-only search asked)")

    @property
    def stopped(self) -> bool:
        """True once the run should end: the search returns what it has proposed."""
        return False


class TableOracle(Oracle):
    """Replay against a ground-truth table: every evaluation is a lookup."""

    def __init__(self, objectives: Objectives):
        self.lattice = objectives.lattice
        self.objectives = objectives
        self._tables: dict[tuple, np.ndarray] = {}

    def table(self, names=("delta", "rho")) -> np.ndarray:
        names = tuple(names)
        try:
            if names not in self._tables:
                self._tables[names] = np.column_stack([self.objectives.column(n) for n in names])
            return self._tables[names]
        except KeyError as e:
            raise UserError(
                f"the ground-truth table has no signal {e.args[0]!r} "
                f"(available: delta, rho, {', '.join(self.objectives.extra) or 'no others'})"
            ) from None

    def evaluate(self, indices, names=("delta", "rho")) -> np.ndarray:
        return self.table(names)[np.asarray(indices, dtype=np.int64)]

"""The scalar Genetic Algorithm baseline (§4.2): NSGA-II's operators, fitness s = min(δ, ρ)."""

from __future__ import annotations

import numpy as np
from pymoo.algorithms.soo.nonconvex.ga import GA

from ..errors import UserError
from .evolution import EvolutionSearch


def scalar_score(values: np.ndarray) -> np.ndarray:
    """s(θ) = min(δ, ρ): high only when both degradation and fidelity are high."""
    return values.min(axis=1, keepdims=True)


class GASearch(EvolutionSearch):
    """Same population size, SBX/PM/rounding and duplicate elimination as NSGA-II; selection
    by binary tournament on s and survival of the fittest μ (pymoo's GA)."""

    mode = "ga"

    def __init__(self, name: str, **params):
        super().__init__(name, **params)
        if self.objectives != ("delta", "rho"):
            raise UserError(
                f"search.objectives={list(self.objectives)}: the GA's fitness is min(δ, ρ), objectives [delta, rho]"
            )

    def fitness(self, values):
        return scalar_score(values)

    def pymoo_algorithm(self, lattice, **kwargs):
        return GA(**kwargs)

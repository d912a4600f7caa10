"""TestNav: NSGA-II over Θ with pymoo, as Algorithm 1 (§3.3)."""

from __future__ import annotations

import numpy as np
from pymoo.algorithms.moo.nsga2 import NSGA2

from .evolution import DistinctSampling, ask_tell, check_population, operators


class NSGA2Search:
    """Maximise (δ, ρ) by Pareto rank and crowding distance.

    `eliminate_duplicates` defaults to True, pymoo's own default and the reading under which
    the paper's GA shares "the same duplicate-elimination settings"; it filters offspring
    that repeat the current population or batch (not the run's history), so repeats of
    older configurations still consume budget as cache hits.
    """

    name = "nsga2"

    def __init__(self, pop_size=110, eta_c=1.0, eta_m=5.0, p_crossover=0.9, p_crossover_var=0.5,
                 p_mutation=0.9, p_mutation_var=None, eliminate_duplicates=True, name="nsga2"):
        self.name = name
        self.pop_size = int(pop_size)
        self.ops = dict(eta_c=float(eta_c), eta_m=float(eta_m), p_crossover=p_crossover, p_crossover_var=p_crossover_var,
                        p_mutation=p_mutation, p_mutation_var=p_mutation_var)
        self.eliminate_duplicates = bool(eliminate_duplicates)

    def run(self, oracle, budget: int, seed: int) -> np.ndarray:
        check_population(self.pop_size, oracle.lattice, budget)
        crossover, mutation = operators(**self.ops)
        algorithm = NSGA2(pop_size=self.pop_size, sampling=DistinctSampling(oracle.lattice), crossover=crossover,
                          mutation=mutation, eliminate_duplicates=self.eliminate_duplicates)
        return ask_tell(algorithm, oracle, budget, seed, fitness=lambda d, r: -np.column_stack([d, r]))

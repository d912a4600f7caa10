"""Algorithm 1's budgeted ask-and-tell loop around a pymoo algorithm, shared by every
evolutionary search (NSGA-II now; GA and the single-objective ablations reuse it).

Pitfalls handled here (../shared/reference/search-replay.md): pymoo's `n_eval` overshoots
the budget, so offspring are requested as m = min(μ, B − b) each generation; the initial
population is μ *distinct* configurations; SBX/PM work on floats and are rounded back to
levels; with duplicate elimination on, `ask()` may return fewer than m (or none).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from pymoo.core.evaluator import Evaluator
from pymoo.core.problem import Problem
from pymoo.problems.static import StaticProblem
from pymoo.core.sampling import Sampling
from pymoo.core.termination import NoTermination
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.operators.repair.rounding import RoundingRepair

from ..errors import UserError
from ..lattice import Lattice

# Consecutive generations that produce no offspring before the run is declared stalled
# (possible only with duplicate elimination on a tiny lattice).
MAX_EMPTY_GENERATIONS = 1000


class DistinctSampling(Sampling):
    """μ configurations drawn uniformly *without replacement* from Θ (Algorithm 1, line 3)."""

    def __init__(self, lattice: Lattice):
        super().__init__()
        self.lattice = lattice

    def _do(self, problem, n_samples, *args, random_state=None, **kwargs):
        idx = random_state.choice(self.lattice.size, size=n_samples, replace=False)
        return self.lattice.theta(idx).astype(float)


def lattice_problem(lattice: Lattice, n_obj: int) -> Problem:
    return Problem(n_var=lattice.n, n_obj=n_obj, xl=0.0, xu=float(lattice.levels - 1), vtype=float)


def operators(eta_c: float, eta_m: float, p_crossover: float, p_crossover_var: float, p_mutation: float, p_mutation_var):
    """SBX + polynomial mutation with rounding repair, probabilities explicit (pymoo defaults in YAML)."""
    rounding = RoundingRepair()
    crossover = SBX(eta=eta_c, prob=p_crossover, prob_var=p_crossover_var, vtype=float, repair=rounding)
    mutation = PM(eta=eta_m, prob=p_mutation, prob_var=p_mutation_var, vtype=float, repair=rounding)
    return crossover, mutation


def check_population(pop_size: int, lattice: Lattice, budget: int):
    if pop_size < 2:
        raise UserError(f"search.pop_size={pop_size}: the population needs at least 2 members")
    if pop_size > lattice.size:
        raise UserError(f"search.pop_size={pop_size} exceeds |Θ|={lattice.size}: μ distinct initial configurations cannot be drawn")
    if pop_size > budget:
        raise UserError(f"search.pop_size={pop_size} exceeds budget={budget}: the initial population alone would overspend")


def ask_tell(algorithm, oracle, budget: int, seed: int, fitness: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Run `algorithm` for exactly `budget` proposals (fewer only if it stalls).

    `fitness(delta, rho)` returns the (m, n_obj) array pymoo minimises.
    """
    lattice = oracle.lattice
    pop_size = algorithm.pop_size
    problem = lattice_problem(lattice, n_obj=fitness(np.zeros(1), np.zeros(1)).shape[1])
    algorithm.setup(problem, termination=NoTermination(), seed=seed, verbose=False)
    proposals: list[np.ndarray] = []
    b, empty = 0, 0
    while b < budget:
        if b > 0:
            algorithm.n_offsprings = min(pop_size, budget - b)
        pop = algorithm.ask()
        if pop is None or len(pop) == 0:
            empty += 1
            if empty >= MAX_EMPTY_GENERATIONS:
                break
            continue
        empty = 0
        pop = pop[: budget - b]
        idx = lattice.index(np.rint(pop.get("X")).astype(np.int64))
        delta, rho = oracle.evaluate(idx)
        Evaluator().eval(StaticProblem(problem, F=fitness(delta, rho)), pop)
        algorithm.tell(infills=pop)
        proposals.append(idx)
        b += len(idx)
    return np.concatenate(proposals) if proposals else np.zeros(0, dtype=np.int64)

"""What NSGA-II, the scalar GA and their ablations share: parameters, validation, and
two interchangeable engines.

* `engine: pymoo` (the reference): Algorithm 1's budgeted ask-and-tell loop around a pymoo
  algorithm. Pitfalls handled (../shared/reference/search-replay.md): pymoo's `n_eval`
  overshoots the budget, so offspring are requested as m = min(μ, B − b) per generation; the
  initial population is μ *distinct* configurations; SBX/PM work on floats and are rounded
  back to levels; with duplicate elimination on, `ask()` may return fewer than m (or none).
* `engine: fast`: the vectorised lock-step engine in `fast.py` (replay only: it reads the
  whole table up front), 10–50× cheaper per run, for sweeps and the hyperparameter grid.
"""

from __future__ import annotations

import logging
from abc import abstractmethod

import numpy as np
from pymoo.core.evaluator import Evaluator
from pymoo.core.population import Population
from pymoo.core.problem import Problem
from pymoo.core.sampling import Sampling
from pymoo.core.termination import NoTermination
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.problems.static import StaticProblem

from ..core.lattice import Lattice
from ..errors import UserError
from . import Search
from .fast import FastEvolution

log = logging.getLogger(__name__)

# Consecutive generations that produce no offspring (possible only with duplicate elimination on a
# small lattice, where the population's offspring are all copies of it) before unseen configurations,
# drawn uniformly, join the population as immigrants; with Θ all measured the run ends. Before, a
# 2-configuration lattice spun 45 s through 1,000 empty generations of 100 mating retries each.
MAX_EMPTY_GENERATIONS = 10
ENGINES = ("pymoo", "fast")


class DistinctSampling(Sampling):
    """μ configurations drawn uniformly *without replacement* from Θ (Algorithm 1, line 3)."""

    def __init__(self, lattice: Lattice):
        super().__init__()
        self.lattice = lattice

    def _do(self, problem, n_samples, *args, random_state=None, **kwargs):
        idx = random_state.choice(self.lattice.size, size=n_samples, replace=False)
        return self.lattice.theta(idx).astype(float)


def immigrants(lattice: Lattice, seen: set, m: int, rng: np.random.Generator) -> Population | None:
    """Up to m configurations not yet measured, drawn uniformly, as a population to tell the algorithm;
    None when every configuration is measured."""
    unseen = np.setdiff1d(np.arange(lattice.size), np.fromiter(seen, np.int64, len(seen)))
    if not len(unseen):
        return None
    return Population.new("X", lattice.theta(rng.choice(unseen, size=min(m, len(unseen)), replace=False)).astype(float))


class EvolutionSearch(Search):
    """Base of the evolutionary searches. `objectives` names what is read from the oracle;
    `fitness` maps those values (m, k) to what is maximised; subclasses set `mode`."""

    mode = "nsga2"

    def __init__(
        self,
        name: str,
        objectives,
        pop_size,
        eta_c,
        eta_m,
        p_crossover,
        p_crossover_var,
        p_mutation,
        p_mutation_var,
        eliminate_duplicates,
        engine,
        label: str | None = None,
        style: dict | None = None,
    ):
        super().__init__(name, label, style)
        self.objectives = tuple(objectives)
        if not self.objectives:
            raise UserError("search.objectives is empty (e.g. [delta, rho], [delta], [rho], [nac])")
        self.pop_size = int(pop_size)
        self.eta_c, self.eta_m = float(eta_c), float(eta_m)
        for key, value in (("eta_c", self.eta_c), ("eta_m", self.eta_m)):
            if not value > 0:
                raise UserError(f"search.{key}={value}: the distribution index must be > 0")
        for key, value in (
            ("p_crossover", p_crossover),
            ("p_crossover_var", p_crossover_var),
            ("p_mutation", p_mutation),
            ("p_mutation_var", p_mutation_var),
        ):
            if value is not None and not 0 <= value <= 1:
                raise UserError(f"search.{key}={value}: a probability must lie in [0, 1]")
        if engine not in ENGINES:
            raise UserError(f"search.engine={engine} (valid: {', '.join(ENGINES)})")
        self.probs = dict(
            p_crossover=p_crossover,
            p_crossover_var=p_crossover_var,
            p_mutation=p_mutation,
            p_mutation_var=p_mutation_var,
        )
        self.eliminate_duplicates = bool(eliminate_duplicates)
        self.engine = engine

    def fitness(self, values: np.ndarray) -> np.ndarray:
        return values

    @property
    def replay_only(self) -> bool:
        return self.engine == "fast"

    live_fix = "search.engine=pymoo"

    def fit(self, lattice: Lattice, budget: int) -> None:
        """Shrink a population too large for the lattice or the budget, with a note. The paper's μ = 110
        was chosen for 6⁴ = 1,296 configurations; on a small lattice μ = |Θ| would make the initial
        population all of Θ, after which every offspring is a duplicate that pymoo eliminates, so μ is
        capped at a third of |Θ| (27 of a 3⁴ = 81 lattice), and at the budget."""
        if self.pop_size <= lattice.size and self.pop_size <= budget:
            return
        fitted = max(2, min(self.pop_size, lattice.size // 3, budget))
        log.warning(
            "search.pop_size=%d does not fit |Θ|=%d and budget=%d: using μ=%d (set search.pop_size to choose another)",
            self.pop_size,
            lattice.size,
            budget,
            fitted,
        )
        self.pop_size = fitted

    def check(self, lattice: Lattice, budget: int):
        if self.pop_size < 2:
            raise UserError(f"search.pop_size={self.pop_size}: the population needs at least 2 members")
        if self.pop_size > lattice.size:
            raise UserError(
                f"search.pop_size={self.pop_size} exceeds |Θ|={lattice.size}: "
                f"μ distinct initial configurations cannot be drawn"
            )
        if self.pop_size > budget:
            raise UserError(
                f"search.pop_size={self.pop_size} exceeds budget={budget}: the initial population alone would overspend"
            )

    def run(self, oracle, budget: int, seed: int) -> np.ndarray:
        self.check(oracle.lattice, budget)
        if self.engine == "fast":
            return self.fast_engine(oracle.lattice).run_many(
                self.fitness(oracle.table(self.objectives))[None], budget, [seed], self.eta_c, self.eta_m
            )[0]
        return self.run_pymoo(oracle, budget, seed)

    def fast_engine(self, lattice: Lattice) -> FastEvolution:
        return FastEvolution(
            lattice, self.pop_size, self.mode, eliminate_duplicates=self.eliminate_duplicates, **self.probs
        )

    @abstractmethod
    def pymoo_algorithm(self, lattice: Lattice, **kwargs):
        """The pymoo algorithm (NSGA2, GA) that the budgeted ask-and-tell loop drives."""

    def run_pymoo(self, oracle, budget: int, seed: int) -> np.ndarray:
        lattice = oracle.lattice
        rounding = RoundingRepair()
        p = self.probs
        crossover = SBX(
            eta=self.eta_c, prob=p["p_crossover"], prob_var=p["p_crossover_var"], vtype=float, repair=rounding
        )
        mutation = PM(eta=self.eta_m, prob=p["p_mutation"], prob_var=p["p_mutation_var"], vtype=float, repair=rounding)
        algorithm = self.pymoo_algorithm(
            lattice,
            pop_size=self.pop_size,
            sampling=DistinctSampling(lattice),
            crossover=crossover,
            mutation=mutation,
            eliminate_duplicates=self.eliminate_duplicates,
        )
        # pymoo's mating retries up to 100 times a generation for offspring not yet in the population; on
        # a lattice smaller than that, the retries outnumber the configurations they could find
        algorithm.mating.n_max_iterations = min(algorithm.mating.n_max_iterations, lattice.size)
        n_obj = self.fitness(np.zeros((1, len(self.objectives)))).shape[1]
        problem = Problem(n_var=lattice.n, n_obj=n_obj, xl=0.0, xu=float(lattice.levels - 1), vtype=float)
        algorithm.setup(problem, termination=NoTermination(), seed=seed, verbose=False)
        proposals: list[np.ndarray] = []
        b, empty, seen = 0, 0, set()
        while b < budget and not oracle.stopped:
            if b > 0:
                algorithm.n_offsprings = min(self.pop_size, budget - b)
            pop = algorithm.ask()
            if pop is None or len(pop) == 0:
                empty += 1
                if empty < MAX_EMPTY_GENERATIONS and len(seen) < lattice.size:
                    continue
                pop = immigrants(lattice, seen, min(self.pop_size, budget - b), np.random.default_rng([seed, b]))
                if pop is None:
                    break  # every configuration measured: nothing is left to find
            empty = 0
            pop = pop[: budget - b]
            idx = lattice.index(np.rint(pop.get("X")).astype(np.int64))
            f = -self.fitness(oracle.evaluate(idx, self.objectives))  # pymoo minimises
            Evaluator().eval(StaticProblem(problem, F=f), pop)
            algorithm.tell(infills=pop)
            proposals.append(idx)
            seen.update(idx.tolist())
            b += len(idx)
        return np.concatenate(proposals) if proposals else np.zeros(0, dtype=np.int64)

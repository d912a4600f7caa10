"""TestNav: NSGA-II over Θ (Algorithm 1, §3.3), and its single-objective ablations (§4.3)
and input-level baselines (§4.4), which are the same algorithm with other objectives."""

from __future__ import annotations

from pymoo.algorithms.moo.nsga2 import NSGA2

from .evolution import EvolutionSearch


class NSGA2Search(EvolutionSearch):
    """Maximise the named objectives by Pareto rank and crowding distance.

    `objectives: [delta, rho]` is TestNav; `[delta]` / `[rho]` are the δ-only / ρ-only
    ablations; `[nac]`, `[lsa]`, … use an input-level signal from the ground-truth table
    as the sole objective. `eliminate_duplicates` is True in conf/search/nsga2.yaml, pymoo's own default and
    the reading under which the paper's GA shares "the same duplicate-elimination settings";
    it filters offspring that repeat the current population or batch (not the run's
    history), so repeats of older configurations still consume budget as cache hits.
    """

    mode = "nsga2"

    def pymoo_algorithm(self, lattice, **kwargs):
        return NSGA2(**kwargs)
